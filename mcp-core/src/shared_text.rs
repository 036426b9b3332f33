//! [`SharedText`]: a piece of a message's text that several readers keep without copying it.
//!
//! A request's params are read once into an `Arc<str>`; the `_meta` the engine carries, the
//! tool name and the arguments `tools/call` reads, and the params a 2026 round keeps in case it
//! seals a state are all pieces of that one text.

use std::ops::{Deref, Range};
use std::sync::Arc;

/// A range of a shared text (always on character boundaries).
#[derive(Clone)]
pub(crate) struct SharedText {
    whole: Arc<str>,
    range: Range<usize>,
}

impl SharedText {
    /// The whole of `text`.
    pub(crate) fn new(text: Arc<str>) -> Self {
        Self {
            range: 0..text.len(),
            whole: text,
        }
    }

    /// The piece of this text that `part` is, or `None` when `part` is not a slice of it.
    pub(crate) fn piece(&self, part: &str) -> Option<Self> {
        let this = self.as_str();
        let start = (part.as_ptr() as usize).checked_sub(this.as_ptr() as usize)?;
        let end = start.checked_add(part.len())?;
        this.get(start..end)?;
        Some(Self {
            whole: self.whole.clone(),
            range: self.range.start + start..self.range.start + end,
        })
    }

    /// The text itself.
    pub(crate) fn as_str(&self) -> &str {
        // Built only from ranges checked against `whole`.
        self.whole.get(self.range.clone()).unwrap_or_default()
    }
}

impl Deref for SharedText {
    type Target = str;

    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl From<String> for SharedText {
    fn from(text: String) -> Self {
        Self::new(text.into())
    }
}

impl From<&str> for SharedText {
    fn from(text: &str) -> Self {
        Self::new(text.into())
    }
}

impl std::fmt::Debug for SharedText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.as_str().fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_piece_is_the_slice_it_was_made_from_and_nothing_else() {
        let whole = SharedText::from(r#"{"name":"add","x":1}"#);
        let name = whole.piece(&whole[8..13]).unwrap();
        assert_eq!(&*name, "\"add\"");
        // A piece of a piece is measured from the whole.
        let inner = name.piece(&name[1..4]).unwrap();
        assert_eq!(&*inner, "add");
        // Text from elsewhere, even equal text, is not a piece.
        assert!(whole.piece("\"add\"").is_none());
        let other = String::from(&whole[..]);
        assert!(whole.piece(&other[..3]).is_none());
        // Past the end.
        assert!(name.piece(&whole[8..15]).is_none());
    }
}

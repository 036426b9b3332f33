//! The top-level members of a JSON object's text, walked without parsing: the text was
//! checked when its message was decoded, so a scan that skips strings and counts brackets
//! finds each member's name and value (`_meta` of a request's params, a tool's arguments).

use std::ops::Range;

/// Calls `each` with every top-level member of the object `params` (its name quoted, as
/// written, and its value's text); `None` when `params` is not an object the scan can walk.
pub(crate) fn members<'a>(params: &'a str, mut each: impl FnMut(&'a str, &'a str)) -> Option<()> {
    walk(params, |key, value| {
        if let (Some(key), Some(value)) = (params.get(key), params.get(value)) {
            each(key, value);
        }
    })
}

/// [`members`], by where each name and value is in `params`.
pub(crate) fn walk(params: &str, mut each: impl FnMut(Range<usize>, Range<usize>)) -> Option<()> {
    let bytes = params.as_bytes();
    let mut at = skip_space(bytes, 0);
    if bytes.get(at) != Some(&b'{') {
        return None;
    }
    at = skip_space(bytes, at + 1);
    while bytes.get(at) == Some(&b'"') {
        let key_end = string_end(bytes, at)?;
        let key = at..key_end;
        at = skip_space(bytes, key_end);
        if bytes.get(at) != Some(&b':') {
            return None;
        }
        let value_start = skip_space(bytes, at + 1);
        let value_end = value_end(bytes, value_start)?;
        each(key, value_start..value_end);
        at = skip_space(bytes, value_end);
        match bytes.get(at) {
            Some(b',') => at = skip_space(bytes, at + 1),
            _ => break,
        }
    }
    Some(())
}

/// Where the top-level members of an object's text are, as one [`walk`] found them, so the
/// next reader of the same text (the `_meta` scan first, then `tools/call`) walks nothing.
/// Holds at most `N` members (by default 4: a `tools/call` has two or three, `name`,
/// `arguments` and `_meta`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Spans<const N: usize = 4> {
    len: u8,
    /// Name start and end, value start and end.
    at: [[u16; 4]; N],
}

impl<const N: usize> Default for Spans<N> {
    fn default() -> Self {
        Self {
            len: 0,
            at: [[0; 4]; N],
        }
    }
}

impl<const N: usize> Spans<N> {
    /// Members recorded at most.
    #[cfg(test)]
    pub(crate) const CAPACITY: usize = N;

    /// Records a member; `false` when full (or the member ends past 64 KiB).
    pub(crate) fn push(&mut self, key: &Range<usize>, value: &Range<usize>) -> bool {
        let len = usize::from(self.len);
        let (Some(slot), Ok(end)) = (self.at.get_mut(len), u16::try_from(value.end)) else {
            return false;
        };
        // (Every other offset is below the value's end.)
        *slot = [key.start as u16, key.end as u16, value.start as u16, end];
        self.len += 1;
        true
    }

    /// The value of the member named `name` (unquoted, without escapes), in `text` (the text
    /// the members were found in).
    pub(crate) fn value_of<'a>(&self, text: &'a str, name: &str) -> Option<&'a str> {
        let bytes = text.as_bytes();
        let [_, _, vs, ve] = self.at[..usize::from(self.len)]
            .iter()
            .find(|[ks, ke, ..]| {
                bytes.get(usize::from(*ks) + 1..usize::from(*ke).saturating_sub(1))
                    == Some(name.as_bytes())
            })?;
        text.get(usize::from(*vs)..usize::from(*ve))
    }

    /// Calls `each` with every member recorded, as [`members`] would for `text` (the text they
    /// were found in).
    pub(crate) fn each<'a>(&self, text: &'a str, mut each: impl FnMut(&'a str, &'a str)) {
        for [ks, ke, vs, ve] in &self.at[..usize::from(self.len)] {
            let key = text.get(*ks as usize..*ke as usize);
            let value = text.get(*vs as usize..*ve as usize);
            if let (Some(key), Some(value)) = (key, value) {
                each(key, value);
            }
        }
    }
}

fn skip_space(bytes: &[u8], mut at: usize) -> usize {
    while bytes.get(at).is_some_and(|b| b.is_ascii_whitespace()) {
        at += 1;
    }
    at
}

/// The index just past the string whose opening quote is at `at`.
fn string_end(bytes: &[u8], mut at: usize) -> Option<usize> {
    at += 1;
    loop {
        at += memchr::memchr2(b'"', b'\\', bytes.get(at..)?)?;
        match bytes.get(at)? {
            b'"' => return Some(at + 1),
            _ => at += 2,
        }
    }
}

/// The index just past the (valid JSON) value starting at `at`.
fn value_end(bytes: &[u8], mut at: usize) -> Option<usize> {
    match bytes.get(at)? {
        b'"' => string_end(bytes, at),
        b'{' | b'[' => {
            let mut depth = 0usize;
            loop {
                match bytes.get(at)? {
                    b'"' => {
                        at = string_end(bytes, at)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth = depth.checked_sub(1)?;
                        if depth == 0 {
                            return Some(at + 1);
                        }
                    }
                    _ => {}
                }
                at += 1;
            }
        }
        _ => {
            while bytes
                .get(at)
                .is_some_and(|b| !matches!(b, b',' | b'}' | b']') && !b.is_ascii_whitespace())
            {
                at += 1;
            }
            Some(at)
        }
    }
}

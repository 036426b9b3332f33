//! [`RawMeta`]: a message's `params._meta` as the client wrote it, parsed only on demand.
//!
//! A 2026 client sends the same envelope (version, capabilities, client info) on every request,
//! so the engine compares its text with the last one it read (see `era::EnvelopeCache`) and
//! builds a [`Meta`] map only when something asks for one (a handler's `ctx.meta()`, a
//! progress token, a trace context, an envelope not seen before).

use std::sync::OnceLock;

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::types::Meta;

/// `params._meta` of one message: its text, and the map it parses to once someone asks.
#[derive(Clone)]
pub(crate) struct RawMeta {
    text: Box<RawValue>,
    parsed: OnceLock<Option<Meta>>,
}

impl std::fmt::Debug for RawMeta {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("RawMeta").field(&self.text.get()).finish()
    }
}

impl RawMeta {
    /// `_meta` written as `text`; `None` unless it is a JSON object (anything else counts as no
    /// `_meta`, as when it is read into a [`Meta`]).
    pub(crate) fn new(text: Box<RawValue>) -> Option<Self> {
        text.get().starts_with('{').then(|| Self {
            text,
            parsed: OnceLock::new(),
        })
    }

    /// A `_meta` given as a map already (params a middleware set as a value).
    pub(crate) fn from_map(meta: &Meta) -> Option<Self> {
        let text = serde_json::value::to_raw_value(meta).ok()?;
        let parsed = OnceLock::from(Some(meta.clone()));
        Some(Self { text, parsed })
    }

    /// The text as the client wrote it.
    pub(crate) fn text(&self) -> &str {
        self.text.get()
    }

    /// The map (parsed on the first call; `None` if the object does not parse as one, which
    /// cannot happen for text that came out of a valid message).
    pub(crate) fn parsed(&self) -> Option<&Meta> {
        self.parsed
            .get_or_init(|| serde_json::from_str(self.text.get()).ok())
            .as_ref()
    }
}

/// `_meta` of an object's params, read as text without building anything else: for
/// `#[serde(deserialize_with = "object_meta")]` on an `Option<RawMeta>` field.
pub(crate) fn object_meta<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<RawMeta>, D::Error> {
    Ok(Option::<Box<RawValue>>::deserialize(d)?.and_then(RawMeta::new))
}

/// Reads `params._meta` from the text of a message's params (`None` when the params are not an
/// object, have no `_meta`, or it is not an object).
pub(crate) fn read(params: &str) -> Option<RawMeta> {
    #[derive(Deserialize)]
    struct Peek {
        #[serde(rename = "_meta", default, deserialize_with = "object_meta")]
        meta: Option<RawMeta>,
    }
    serde_json::from_str::<Peek>(params).ok()?.meta
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_an_object_is_a_meta_and_it_parses_once() {
        assert!(read(r#"{"name":"x"}"#).is_none());
        assert!(read(r#"{"_meta":null}"#).is_none());
        assert!(read(r#"{"_meta":5}"#).is_none());
        assert!(read(r#"[1]"#).is_none());
        let meta = read(r#"{"a":[1,{"_meta":2}],"_meta":{"k":"v"},"b":"\"_meta\""}"#).unwrap();
        assert_eq!(meta.text(), r#"{"k":"v"}"#);
        let first = meta.parsed().unwrap() as *const Meta;
        assert_eq!(meta.parsed().unwrap()["k"], "v");
        assert_eq!(first, meta.parsed().unwrap() as *const Meta);
    }
}

//! [`Arguments`]: a `tools/call`'s arguments as a tool's handler takes them.

use serde_json::Value;

use crate::object_text::Spans;
use crate::shared_text::SharedText;
use crate::types::JsonObject;

/// The arguments of one `tools/call`, as a tool's handler ([`ToolHandler`](super::ToolHandler))
/// takes them.
///
/// A call to a `#[tool]` whose parameters are all plain numbers, booleans or strings without
/// constraints arrives as the text the client wrote, and each parameter is decoded straight
/// from its member into its Rust type, with no `serde_json::Value` in between. Every other call
/// arrives as an object already checked against the tool's input schema. A handler of your own
/// reads either with [`into_object`](Self::into_object).
///
/// ```
/// use modelctx_core::server::Arguments;
/// use serde_json::json;
///
/// let map = json!({"city": "Oslo"}).as_object().cloned().unwrap();
/// let args = Arguments::from(map.clone());
/// assert_eq!(args.into_object(), map);
/// ```
pub struct Arguments(Repr);

/// Arguments read straight from the client's text at most (more are checked against the
/// schema first).
const MEMBERS: usize = 8;

enum Repr {
    /// Checked against the tool's schema and read into a map.
    Object(JsonObject),
    /// The text of a JSON object whose members each name a parameter, once and without
    /// escapes (`None`: no `arguments` member), shared with the call that read it; `members`
    /// holds where each one is in `text` (a tool of more than [`MEMBERS`] parameters, or
    /// arguments past 64 KiB, are checked against the schema instead).
    Text {
        text: Option<SharedText>,
        members: Spans<MEMBERS>,
    },
}

/// Where one argument is, for the decoder of its parameter.
pub(crate) enum Slot<'a> {
    /// Taken out of the checked object (`None`: absent).
    Value(Option<Value>),
    /// Its text (`None`: absent).
    Text(Option<&'a str>),
}

impl Arguments {
    /// The arguments as the client wrote them (`None`: no `arguments` member), when every member
    /// is one of `parameters` (each at most once, its name without escapes): `None` otherwise,
    /// or when the text is not an object. Such a call is decoded straight from the text.
    pub(crate) fn text(written: Option<SharedText>, parameters: &[Box<str>]) -> Option<Self> {
        let mut members = Spans::default();
        let Some(text) = written else {
            return Some(Self(Repr::Text {
                text: None,
                members,
            }));
        };
        let bytes = text.as_bytes();
        let mut fits = parameters.len() <= MEMBERS;
        // Which parameters were seen (there are at most `MEMBERS`).
        let mut seen = 0u32;
        crate::object_text::walk(&text, |key, value| {
            let name = bytes.get(key.start + 1..key.end.saturating_sub(1));
            let index = name.and_then(|name| match name.contains(&b'\\') {
                true => None,
                false => parameters.iter().position(|p| p.as_bytes() == name),
            });
            let Some(bit) = index.and_then(|i| 1u32.checked_shl(i as u32)) else {
                fits = false;
                return;
            };
            fits &= seen & bit == 0 && members.push(&key, &value);
            seen |= bit;
        })?;
        fits.then(|| {
            Self(Repr::Text {
                text: Some(text),
                members,
            })
        })
    }

    /// Whether the arguments are the client's text (decoded straight into each parameter).
    pub(crate) fn is_text(&self) -> bool {
        matches!(self.0, Repr::Text { .. })
    }

    /// Takes the argument `name` out, for its parameter's decoder.
    pub(crate) fn slot(&mut self, name: &str) -> Slot<'_> {
        match &mut self.0 {
            Repr::Object(map) => Slot::Value(crate::members::take(map, name)),
            Repr::Text { text, members } => {
                Slot::Text(members.value_of(text.as_deref().unwrap_or_default(), name))
            }
        }
    }

    /// The arguments as a JSON object (the client's text is parsed now, if that is what they
    /// are).
    pub fn into_object(self) -> JsonObject {
        match self.0 {
            Repr::Object(map) => map,
            // The text is an object that was valid JSON: it parses.
            Repr::Text { text, .. } => text
                .and_then(|text| serde_json::from_str(&text).ok())
                .unwrap_or_default(),
        }
    }
}

impl From<JsonObject> for Arguments {
    /// Arguments already checked and read into a map.
    fn from(map: JsonObject) -> Self {
        Self(Repr::Object(map))
    }
}

impl std::fmt::Debug for Arguments {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.0 {
            Repr::Object(map) => f.debug_tuple("Arguments").field(map).finish(),
            Repr::Text { text, .. } => f
                .debug_tuple("Arguments")
                .field(&text.as_deref().unwrap_or("{}"))
                .finish(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &[&str]) -> Vec<Box<str>> {
        list.iter().map(|n| Box::from(*n)).collect()
    }

    #[test]
    fn only_members_that_name_parameters_each_once_are_read_as_text() {
        let params = names(&["a", "b"]);
        let text = |t: &str| Some(SharedText::from(t));
        let mut args = Arguments::text(text(r#"{ "a" : 1 , "b":"x,}" }"#), &params).unwrap();
        assert!(args.is_text());
        assert!(matches!(args.slot("b"), Slot::Text(Some(r#""x,}""#))));
        assert!(matches!(args.slot("a"), Slot::Text(Some("1"))));
        assert!(matches!(args.slot("c"), Slot::Text(None)));
        assert!(Arguments::text(None, &params).is_some_and(|a| a.is_text()));
        assert!(Arguments::text(text("{}"), &params).is_some());
        // An unknown member, a member twice, an escaped name, not an object: checked instead.
        assert!(Arguments::text(text(r#"{"a":1,"c":2}"#), &params).is_none());
        assert!(Arguments::text(text(r#"{"a":1,"a":2}"#), &params).is_none());
        assert!(Arguments::text(text(r#"{"\u0061":1}"#), &params).is_none());
        assert!(Arguments::text(text("[1]"), &params).is_none());
        assert!(Arguments::text(text("null"), &params).is_none());
    }

    #[test]
    fn text_arguments_read_as_the_object_they_are() {
        let text = Some(SharedText::from(r#"{"b":[1,{"c":2}],"a":"x"}"#));
        let args = Arguments::text(text, &names(&["a", "b"]));
        let object = args.map(Arguments::into_object).unwrap();
        assert_eq!(
            Value::Object(object),
            serde_json::json!({"b": [1, {"c": 2}], "a": "x"})
        );
    }
}

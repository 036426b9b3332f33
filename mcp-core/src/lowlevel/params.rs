//! [`Params`]: a request's `params`, kept as raw JSON until someone needs a typed view.

use serde::de::DeserializeOwned;
use serde_json::value::RawValue;
use serde_json::Value;

use crate::error::{echo_capped, restore_written_integers, McpError};
use crate::raw_meta::RawMeta;
use crate::types::Meta;

/// The `params` of an inbound message. Raw text until decoded; middleware may replace it.
#[derive(Debug, Default)]
pub struct Params {
    repr: Repr,
}

#[derive(Debug, Default)]
enum Repr {
    #[default]
    Absent,
    Raw(Box<RawValue>),
    Value(Value),
}

impl Params {
    pub(crate) fn from_raw(raw: Option<Box<RawValue>>) -> Self {
        Self {
            repr: raw.map_or(Repr::Absent, Repr::Raw),
        }
    }

    /// Params given as a JSON value (`Value::Null` means absent).
    pub fn from_value(value: Value) -> Self {
        match value {
            Value::Null => Self::default(),
            v => Self {
                repr: Repr::Value(v),
            },
        }
    }

    /// True when the message had no `params`.
    pub fn is_absent(&self) -> bool {
        matches!(self.repr, Repr::Absent)
    }

    /// Decodes the params into `T`. Absent params decode as `{}`. A mismatch is `-32602` with a
    /// short reason.
    ///
    /// ```
    /// use modelctx_core::lowlevel::Params;
    /// #[derive(Debug, serde::Deserialize)]
    /// struct P { full: bool }
    ///
    /// let p = Params::from_value(serde_json::json!({"full": "yes"}));
    /// let err = p.decode::<P>().unwrap_err();
    /// assert_eq!(err.code(), -32602);
    /// assert_eq!(err.message(), "Invalid params: invalid type: string \"yes\", expected a boolean");
    /// ```
    pub fn decode<T: DeserializeOwned>(&self) -> Result<T, McpError> {
        let result = match &self.repr {
            Repr::Absent => serde_json::from_str("{}"),
            Repr::Raw(raw) => serde_json::from_str(raw.get()),
            Repr::Value(v) => T::deserialize(v),
        };
        result.map_err(|e| {
            let source = match &self.repr {
                Repr::Raw(raw) => Some(raw.get()),
                _ => None,
            };
            invalid_params(&e, source)
        })
    }

    /// The params as a JSON value (`Value::Null` when absent).
    pub fn to_value(&self) -> Value {
        match &self.repr {
            Repr::Absent => Value::Null,
            Repr::Raw(raw) => serde_json::from_str(raw.get()).unwrap_or(Value::Null),
            Repr::Value(v) => v.clone(),
        }
    }

    /// True when the params may name any of `keys`: a key of the object, or (raw params, no
    /// parse) the text anywhere or any `\u` escape, so a false positive is possible but never
    /// a false negative.
    pub(crate) fn mentions(&self, keys: &[&str]) -> bool {
        match &self.repr {
            Repr::Absent => false,
            Repr::Raw(raw) => {
                // One pass over the quotes (a key, as written, follows one) and one over the
                // backslashes (`\u` may spell a key another way).
                let text = raw.get().as_bytes();
                let after = |at: usize| text.get(at + 1..).unwrap_or_default();
                memchr::memchr_iter(b'\\', text).any(|at| after(at).starts_with(b"u"))
                    || memchr::memchr_iter(b'"', text)
                        .any(|at| keys.iter().any(|k| after(at).starts_with(k.as_bytes())))
            }
            Repr::Value(v) => keys.iter().any(|k| v.get(k).is_some()),
        }
    }

    /// A copy of the params.
    pub(crate) fn duplicate(&self) -> Self {
        Self {
            repr: match &self.repr {
                Repr::Absent => Repr::Absent,
                Repr::Raw(raw) => Repr::Raw(raw.clone()),
                Repr::Value(v) => Repr::Value(v.clone()),
            },
        }
    }

    /// Replaces the params (what a rewriting middleware does).
    pub fn set(&mut self, value: Value) {
        *self = Self::from_value(value);
    }

    /// `params._meta` as text, parsed later only if someone asks (what the engine carries).
    pub(crate) fn raw_meta(&self) -> Option<RawMeta> {
        match &self.repr {
            Repr::Absent => None,
            Repr::Raw(raw) => crate::raw_meta::read(raw.get()),
            Repr::Value(v) => RawMeta::from_map(v.get("_meta")?.as_object()?),
        }
    }

    /// Reads `params._meta` (an object; anything else counts as none) without decoding the
    /// rest.
    pub fn meta(&self) -> Option<Meta> {
        match &self.repr {
            Repr::Absent => None,
            Repr::Raw(raw) => crate::raw_meta::read(raw.get())?.into_parsed(),
            Repr::Value(v) => v.get("_meta")?.as_object().cloned(),
        }
    }
}

/// `-32602 Invalid params: <serde's reason without the line/column suffix>`, with integers the
/// client wrote out of range quoted as written (when the raw `source` is at hand) and the reason
/// capped by [`echo_capped`] (serde quotes the offending string whole).
fn invalid_params(e: &serde_json::Error, source: Option<&str>) -> McpError {
    let text = e.to_string();
    let reason = match text.find(" at line ") {
        Some(i) => &text[..i],
        None => &text,
    };
    let reason = match source {
        Some(source) => restore_written_integers(reason, source),
        None => reason.to_owned(),
    };
    McpError::invalid_params(format!("Invalid params: {}", echo_capped(&reason)))
}

/// What the transports look at before dispatch (the envelope, the routed name, the arguments),
/// read in one pass over the raw params.
#[cfg(feature = "http")]
#[derive(Debug, Default, serde::Deserialize)]
pub(crate) struct Peeked {
    #[serde(
        rename = "_meta",
        default,
        deserialize_with = "crate::raw_meta::object_meta"
    )]
    pub(crate) meta: Option<RawMeta>,
    /// The 2026 envelope of `meta`, read by the routing (`None`: none, or not read).
    #[serde(skip)]
    pub(crate) envelope: Option<Result<crate::era::RequestEnvelope, McpError>>,
    #[serde(default)]
    pub(crate) name: Option<Value>,
    #[serde(default)]
    pub(crate) uri: Option<Value>,
    /// `tasks/get`, `tasks/update`, `tasks/cancel` (tasks extension): named by their task.
    #[serde(default, rename = "taskId")]
    pub(crate) task_id: Option<Value>,
    /// Kept as text: parsed only for a tool that mirrors arguments into headers.
    #[serde(default)]
    pub(crate) arguments: Option<Box<RawValue>>,
}

/// Reads [`Peeked`] from raw params (empty when absent or not an object).
#[cfg(feature = "http")]
pub(crate) fn peek(raw: Option<&RawValue>) -> Peeked {
    raw.and_then(|raw| serde_json::from_str(raw.get()).ok())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(text: &str) -> Params {
        Params::from_raw(Some(RawValue::from_string(text.to_owned()).unwrap()))
    }

    /// `mentions` may say yes wrongly, never no wrongly: a key as written, a key spelled with
    /// `\u` escapes, a key anywhere in the text.
    #[test]
    fn mentions_finds_every_way_a_key_can_be_written() {
        let keys = ["inputResponses", "requestState"];
        for yes in [
            r#"{"requestState":"s"}"#,
            r#"{"name":"t","inputResponses":{}}"#,
            r#"{"arguments":{"requestState":1}}"#,
            r#"{"\u0072equestState":"s"}"#,
            r#"{"a":"\u00e9"}"#,
            r#"{"a":"requestState"}"#,
        ] {
            assert!(raw(yes).mentions(&keys), "{yes}");
        }
        for no in [
            r#"{}"#,
            r#"{"name":"t","arguments":{"a":"line\nnext \"quoted\" \\"}}"#,
            r#"{"state":"requestStat","Responses":1}"#,
        ] {
            assert!(!raw(no).mentions(&keys), "{no}");
        }
        assert!(!Params::default().mentions(&keys));
        assert!(Params::from_value(serde_json::json!({"requestState": "s"})).mentions(&keys));
    }
}

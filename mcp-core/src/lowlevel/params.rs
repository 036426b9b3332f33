//! [`Params`]: a request's `params`, kept as raw JSON until someone needs a typed view.

use std::ops::Range;

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::error::{echo_capped, restore_written_integers, McpError};
use crate::message_scan::Found;
use crate::object_text::{members, Spans};
use crate::raw_meta::{RawMeta, Scan, RETRY_MEMBERS};
use crate::shared_text::SharedText;
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
    /// As written (valid JSON, an object), with what a scan of its members found (`None`: not
    /// scanned yet). Shared: what is read out of it (`_meta`, a tool's name and arguments) and
    /// a copy kept for sealing a state are pieces of this one text.
    Raw(SharedText, Option<Scanned>),
    Value(Value),
}

/// What a read of raw params found out, so no later reader reads them again.
#[derive(Debug, Clone)]
struct Scanned {
    /// Whether they may be a retry ([`Params::may_be_a_retry`]).
    retry: bool,
    /// Where each member is (`None`: not recorded).
    spans: Option<Spans>,
    /// Where `_meta` is (`None`: not looked for; `Some(None)`: there is none to carry).
    meta: Option<Option<Range<usize>>>,
}

impl From<Scan> for Scanned {
    fn from(scan: Scan) -> Self {
        Self {
            retry: scan.retry,
            spans: scan.spans,
            meta: Some(scan.meta),
        }
    }
}

impl Params {
    /// Params as a message carried them (a JSON object's text, or absent).
    #[cfg(any(feature = "fuzzing", test))]
    pub(crate) fn from_raw(raw: Option<&str>) -> Self {
        Self::scanned(raw, None)
    }

    /// Params as [`decode_borrowed`](crate::jsonrpc::decode_borrowed) found them: when the
    /// one pass over the message read them, what it found in them is kept, and nothing reads
    /// them again.
    pub(crate) fn from_found(found: Option<Found<'_>>) -> Self {
        match found {
            None => Self::default(),
            Some(Found { text, scan }) => Self::scanned(Some(text), scan.map(Scanned::from)),
        }
    }

    /// Raw params, with what a read of them already found.
    fn scanned(raw: Option<&str>, scanned: Option<Scanned>) -> Self {
        Self {
            repr: raw.map_or(Repr::Absent, |raw| {
                Repr::Raw(SharedText::from(raw), scanned)
            }),
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
            Repr::Raw(raw, _) => serde_json::from_str(raw.as_str()),
            Repr::Value(v) => T::deserialize(v),
        };
        result.map_err(|e| {
            let source = match &self.repr {
                Repr::Raw(raw, _) => Some(raw.as_str()),
                _ => None,
            };
            invalid_params(&e, source)
        })
    }

    /// Calls `each` with every top-level member of params as the client wrote them (its name
    /// quoted, as written, and its value's text), from where the `_meta` scan
    /// ([`raw_meta`](Self::raw_meta)) found them when it did, walking them otherwise. `None`
    /// when they are absent, set as a value, or not an object.
    pub(crate) fn members<'a>(&'a self, each: impl FnMut(&'a str, &'a str)) -> Option<()> {
        match &self.repr {
            Repr::Raw(
                raw,
                Some(Scanned {
                    spans: Some(spans), ..
                }),
            ) => {
                spans.each(raw.as_str(), each);
                Some(())
            }
            Repr::Raw(raw, _) => members(raw.as_str(), each),
            _ => None,
        }
    }

    /// The params as a JSON value (`Value::Null` when absent).
    pub fn to_value(&self) -> Value {
        match &self.repr {
            Repr::Absent => Value::Null,
            Repr::Raw(raw, _) => serde_json::from_str(raw.as_str()).unwrap_or(Value::Null),
            Repr::Value(v) => v.clone(),
        }
    }

    /// True when the params may carry `inputResponses` or `requestState` (a retry of a request
    /// that asked for input): a top-level member so named, or one whose name has escapes (it
    /// may spell one), so a false positive is possible but never a false negative. Raw params
    /// scanned for `_meta` already ([`raw_meta`](Self::raw_meta)) are not read again.
    pub(crate) fn may_be_a_retry(&self) -> bool {
        match &self.repr {
            Repr::Absent => false,
            Repr::Raw(_, Some(scanned)) => scanned.retry,
            Repr::Raw(raw, None) => crate::raw_meta::scan(raw).retry,
            Repr::Value(v) => RETRY_MEMBERS.iter().any(|name| v.get(name).is_some()),
        }
    }

    /// Raw params whose text is `text` (kept from a request; see `CallInfo::kept`).
    pub(crate) fn from_shared(text: SharedText) -> Self {
        Self {
            repr: Repr::Raw(text, None),
        }
    }

    /// The raw text of these params (`None` when they are absent or a value).
    #[cfg(feature = "http")]
    pub(crate) fn text(&self) -> Option<&str> {
        match &self.repr {
            Repr::Raw(raw, _) => Some(raw),
            _ => None,
        }
    }

    /// The raw text of these params, shared (`None` when they are absent or a value).
    pub(crate) fn shared_text(&self) -> Option<SharedText> {
        match &self.repr {
            Repr::Raw(raw, _) => Some(raw.clone()),
            _ => None,
        }
    }

    /// `part` (text read out of these params, by [`members`](Self::members)) kept: a piece of
    /// the raw text it is in, shared, or a copy when it is not in it.
    pub(crate) fn keep(&self, part: &str) -> SharedText {
        match &self.repr {
            Repr::Raw(raw, _) => raw.piece(part).unwrap_or_else(|| part.into()),
            _ => part.into(),
        }
    }

    /// The params again: raw params share their text.
    pub(crate) fn duplicate(&self) -> Self {
        Self {
            repr: match &self.repr {
                Repr::Absent => Repr::Absent,
                Repr::Raw(raw, scanned) => Repr::Raw(raw.clone(), scanned.clone()),
                Repr::Value(v) => Repr::Value(v.clone()),
            },
        }
    }

    /// Replaces the params (what a rewriting middleware does).
    pub fn set(&mut self, value: Value) {
        *self = Self::from_value(value);
    }

    /// `params._meta` as text, parsed later only if someone asks (what the engine carries).
    /// The same scan of raw params tells [`may_be_a_retry`](Self::may_be_a_retry), which then
    /// reads nothing again.
    pub(crate) fn raw_meta(&mut self) -> Option<RawMeta> {
        match &mut self.repr {
            Repr::Absent => None,
            Repr::Raw(raw, Some(Scanned { meta: Some(at), .. })) => RawMeta::at(raw, at.clone()?),
            Repr::Raw(raw, scanned) => {
                let scan = crate::raw_meta::scan(raw);
                let meta = scan.meta(raw);
                *scanned = Some(scan.into());
                meta
            }
            Repr::Value(v) => RawMeta::from_map(v.get("_meta")?.as_object()?),
        }
    }

    /// Reads `params._meta` (an object; anything else counts as none) without decoding the
    /// rest.
    pub fn meta(&self) -> Option<Meta> {
        match &self.repr {
            Repr::Absent => None,
            Repr::Raw(raw, _) => crate::raw_meta::scan(raw).meta(raw)?.into_parsed(),
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

/// What the HTTP transport checks against the headers before dispatch (the envelope, the
/// routed name), read in one pass over the raw params.
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
}

/// Reads [`Peeked`] from raw params (empty when absent or not an object).
#[cfg(feature = "http")]
pub(crate) fn peek(raw: Option<&str>) -> Peeked {
    raw.and_then(|raw| serde_json::from_str(raw).ok())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(text: &str) -> Params {
        Params::from_raw(Some(text))
    }

    /// `may_be_a_retry` may say yes wrongly, never no wrongly: a member as written, a member
    /// spelled with `\u` escapes; the same answer whether or not `_meta` was scanned first,
    /// and when the one pass over a whole message found the params (as both transports
    /// read them).
    #[test]
    fn a_retry_is_never_missed() {
        for (text, retry) in [
            (r#"{"requestState":"s"}"#, true),
            (r#"{"name":"t","inputResponses":{}}"#, true),
            (r#"{"\u0072equestState":"s"}"#, true),
            (r#"{"_meta":{"a":1},"requestState":null}"#, true),
            (r#"{"inputResponses":null}"#, true),
            (r#"{}"#, false),
            (r#"{"arguments":{"requestState":1}}"#, false),
            (r#"{"a":"requestState","b":"\u00e9"}"#, false),
            (
                r#"{"name":"t","arguments":{"a":"line\nnext \"quoted\" \\"}}"#,
                false,
            ),
            (r#"{"state":"requestStat","Responses":1}"#, false),
        ] {
            assert_eq!(raw(text).may_be_a_retry(), retry, "{text}");
            let mut scanned = raw(text);
            let _ = scanned.raw_meta();
            assert_eq!(scanned.may_be_a_retry(), retry, "{text} (scanned)");
            let message = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"m","params":{text}}}"#);
            let found = crate::message_scan::scan(&message).and_then(|e| e.params);
            assert!(found.as_ref().is_some_and(|f| f.scan.is_some()), "{text}");
            let passed = Params::from_found(found);
            assert_eq!(passed.may_be_a_retry(), retry, "{text} (one pass)");
        }
        assert!(!Params::default().may_be_a_retry());
        assert!(Params::from_value(serde_json::json!({"requestState": "s"})).may_be_a_retry());
        assert!(!Params::from_value(serde_json::json!({"name": "requestState"})).may_be_a_retry());
    }
}

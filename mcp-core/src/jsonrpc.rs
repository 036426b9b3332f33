//! The JSON-RPC 2.0 envelope: decoded once, `params` kept raw until a handler's type is known.
//!
//! Decoding maps every malformed input to the right error: bytes that are not JSON give
//! `-32700` with `id: null`; JSON that is not a single request object (arrays, batches, scalars,
//! a wrong `jsonrpc`, an invalid `id`) gives `-32600`.
//!
//! Batches are not supported (MCP removed them in 2025-06-18): a JSON array, even one holding
//! valid requests, is refused whole with one `-32600` and `id: null`; none of its members runs.
//!
//! `params`, when present, must be a JSON object, in both eras. JSON-RPC 2.0 (section 4.2)
//! requires a present `params` to be a structured value (an object or an array), so a `null`,
//! string, number or boolean makes the message an invalid Request object: `-32600`. An array is
//! a valid JSON-RPC request, but every MCP method takes its params by name (the schema declares
//! `params` as an object), so it is refused as the wrong params for the method: `-32602`.
//! Absent `params` reads as `{}`.

use std::borrow::Cow;

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::value::RawValue;

use crate::error::{codes, McpError};
use crate::message_scan::{self, Found};
pub use crate::request_id::RequestId;

use crate::error::ErrorObject;

/// One decoded inbound message.
#[derive(Debug)]
pub enum Message {
    /// A request: answered exactly once.
    Request {
        /// Its id.
        id: RequestId,
        /// The method.
        method: String,
        /// Raw params (an object), if any.
        params: Option<Box<RawValue>>,
    },
    /// A notification: never answered.
    Notification {
        /// The method.
        method: String,
        /// Raw params (an object), if any.
        params: Option<Box<RawValue>>,
    },
    /// A response to a request this side sent.
    Response {
        /// The id of our request.
        id: RequestId,
        /// The result, or the error.
        outcome: Result<Box<RawValue>, ErrorObject>,
    },
}

/// A message that could not be decoded, with the id to answer it under (null when unknown).
#[derive(Debug)]
pub struct DecodeError {
    /// The id, when it could be read.
    pub id: Option<RequestId>,
    /// The message was a notification (it has a method and no id): it is never answered.
    pub notification: bool,
    /// The error to send.
    pub error: McpError,
}

/// A field that distinguishes "absent" from "present, possibly `null`", borrowed from the
/// message's bytes (only what a message keeps is copied out).
#[derive(Default)]
struct RawField<'a>(Option<&'a RawValue>);

impl<'de: 'a, 'a> Deserialize<'de> for RawField<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        <&'a RawValue>::deserialize(d).map(|raw| RawField(Some(raw)))
    }
}

#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(default, borrow)]
    jsonrpc: RawField<'a>,
    #[serde(default, borrow)]
    id: RawField<'a>,
    #[serde(default, borrow)]
    method: RawField<'a>,
    #[serde(default, borrow)]
    params: RawField<'a>,
    #[serde(default, borrow)]
    result: RawField<'a>,
    #[serde(default, borrow)]
    error: RawField<'a>,
}

/// `-32700`: the message is not JSON.
fn not_json() -> DecodeError {
    DecodeError {
        id: None,
        notification: false,
        error: McpError::new(codes::PARSE_ERROR, "Parse error: invalid JSON"),
    }
}

fn invalid(id: Option<RequestId>, message: &'static str) -> DecodeError {
    DecodeError {
        id,
        notification: false,
        error: McpError::new(codes::INVALID_REQUEST, message),
    }
}

/// Decodes one message (one line of stdio, one HTTP body).
///
/// ```
/// use modelctx_core::jsonrpc::{decode, Message};
///
/// let msg = decode(br#"{"jsonrpc":"2.0","id":7,"method":"tools/list"}"#).unwrap();
/// assert!(matches!(msg, Message::Request { ref method, .. } if method == "tools/list"));
///
/// assert_eq!(decode(b"{oops").unwrap_err().error.code(), -32700);
/// assert_eq!(decode(b"[]").unwrap_err().error.code(), -32600);
/// // Never a request read by position out of an array.
/// assert_eq!(decode(br#"["2.0", 5, "tools/list"]"#).unwrap_err().error.code(), -32600);
/// // `params`: absent or an object.
/// let null = br#"{"jsonrpc":"2.0","id":1,"method":"ping","params":null}"#;
/// assert_eq!(decode(null).unwrap_err().error.code(), -32600);
/// let array = br#"{"jsonrpc":"2.0","id":1,"method":"ping","params":[1]}"#;
/// assert_eq!(decode(array).unwrap_err().error.code(), -32602);
/// ```
pub fn decode(bytes: &[u8]) -> Result<Message, DecodeError> {
    let text = message_text(bytes)?;
    let fields = by_serde(text)?.map_params(|raw| raw);
    Ok(match interpret(fields)? {
        Decoded::Request { id, method, params } => Message::Request {
            id,
            method: method.into_owned(),
            params: params.map(ToOwned::to_owned),
        },
        Decoded::Notification { method, params } => Message::Notification {
            method: method.into_owned(),
            params: params.map(ToOwned::to_owned),
        },
        Decoded::Response { id, outcome } => Message::Response { id, outcome },
    })
}

/// A message as [`decode_borrowed`] reads it: a request's or notification's params are still
/// a slice of the bytes read, with what the one pass over the message found in them.
pub(crate) type Borrowed<'a> = Decoded<Found<'a>>;

/// A message read, its params (`P`) as the reader left them.
#[derive(Debug)]
pub(crate) enum Decoded<P> {
    /// As [`Message::Request`].
    Request {
        id: RequestId,
        method: Method,
        params: Option<P>,
    },
    /// As [`Message::Notification`].
    Notification { method: Method, params: Option<P> },
    /// As [`Message::Response`].
    Response {
        id: RequestId,
        outcome: Result<Box<RawValue>, ErrorObject>,
    },
}

/// [`decode`], leaving the params in `bytes`. A plain message is read in one pass
/// (`message_scan`), which also finds what the engine reads in the params; any other is read
/// by serde, which gives the same answer, or the error.
pub(crate) fn decode_borrowed(bytes: &[u8]) -> Result<Borrowed<'_>, DecodeError> {
    let text = message_text(bytes)?;
    let fields = match message_scan::scan(text) {
        Some(env) => Fields {
            jsonrpc: env.jsonrpc,
            id: env.id,
            method: env.method,
            params: env.params,
            result: env.result.map(Written::Text),
            error: env.error,
        },
        None => by_serde(text)?.map_params(|raw| Found {
            text: raw.get(),
            scan: None,
        }),
    };
    interpret(fields)
}

/// A method's name: the names of the MCP methods a server is sent most are not copied.
pub(crate) type Method = Cow<'static, str>;

/// The methods read as [`Method::Borrowed`].
const KNOWN_METHODS: [&str; 14] = [
    "tools/call",
    "tools/list",
    "resources/read",
    "resources/list",
    "resources/templates/list",
    "prompts/get",
    "prompts/list",
    "completion/complete",
    "ping",
    "initialize",
    "notifications/initialized",
    "notifications/cancelled",
    "notifications/progress",
    "subscriptions/listen",
];

/// `name` as a [`Method`].
fn method_name(name: &str) -> Method {
    match KNOWN_METHODS.iter().find(|known| **known == name) {
        Some(known) => Cow::Borrowed(known),
        None => Cow::Owned(name.to_owned()),
    }
}

/// The envelope's members as written, whoever read them.
struct Fields<'a, P> {
    jsonrpc: Option<&'a str>,
    id: Option<&'a str>,
    method: Option<&'a str>,
    params: Option<P>,
    result: Option<Written<'a>>,
    error: Option<&'a str>,
}

/// A result as written: serde's raw value is copied as it is, plain text is checked again.
enum Written<'a> {
    Raw(&'a RawValue),
    Text(&'a str),
}

impl<'a> Fields<'a, &'a RawValue> {
    fn map_params<P>(self, f: impl FnOnce(&'a RawValue) -> P) -> Fields<'a, P> {
        Fields {
            jsonrpc: self.jsonrpc,
            id: self.id,
            method: self.method,
            params: self.params.map(f),
            result: self.result,
            error: self.error,
        }
    }
}

/// What the text of params is, for [`interpret`]'s checks.
trait ParamsText {
    fn text(&self) -> &str;
}

impl ParamsText for &RawValue {
    fn text(&self) -> &str {
        self.get()
    }
}

impl ParamsText for Found<'_> {
    fn text(&self) -> &str {
        self.text
    }
}

/// The bytes of a message as text, when they can be one message: an object (serde would read
/// a struct from an array by position, `["2.0", 5, "tools/list"]`), in UTF-8.
fn message_text(bytes: &[u8]) -> Result<&str, DecodeError> {
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
    if first != Some(&b'{') {
        if serde_json::from_slice::<serde::de::IgnoredAny>(bytes).is_err() {
            return Err(not_json());
        }
        return Err(invalid(
            None,
            match first {
                Some(b'[') => {
                    "Invalid request: batches are not supported; send one JSON-RPC object per \
                     message"
                }
                _ => "Invalid request: expected a single JSON-RPC object",
            },
        ));
    }
    // Checked as UTF-8 once, as a whole: the readers then read text, and check no piece again.
    // (Bytes that are not UTF-8 are not JSON: serde would call them a syntax error too.)
    std::str::from_utf8(bytes).map_err(|_| not_json())
}

/// The envelope as serde reads it.
fn by_serde(text: &str) -> Result<Fields<'_, &RawValue>, DecodeError> {
    let env: Envelope<'_> = serde_json::from_str(text).map_err(|e| {
        use serde_json::error::Category;
        match e.classify() {
            Category::Data => invalid(None, "Invalid request: expected a single JSON-RPC object"),
            _ => not_json(),
        }
    })?;
    Ok(Fields {
        jsonrpc: env.jsonrpc.0.map(RawValue::get),
        id: env.id.0.map(RawValue::get),
        method: env.method.0.map(RawValue::get),
        params: env.params.0,
        result: env.result.0.map(Written::Raw),
        error: env.error.0.map(RawValue::get),
    })
}

/// A request id as written: an integer read straight from its digits, anything else by serde.
fn read_id(raw: &str) -> Result<RequestId, DecodeError> {
    let digits = raw.strip_prefix('-').unwrap_or(raw);
    let plain = !digits.is_empty()
        && digits.len() <= 18
        && digits.bytes().all(|b| b.is_ascii_digit())
        && (digits == "0" || !digits.starts_with('0'));
    if plain {
        if let Ok(n) = raw.parse::<i64>() {
            return Ok(RequestId::Number(n));
        }
    }
    serde_json::from_str::<RequestId>(raw)
        .map_err(|_| invalid(None, "Invalid request: id must be a string or an integer"))
}

/// The JSON-RPC rules, on the members of an envelope.
fn interpret<P: ParamsText>(env: Fields<'_, P>) -> Result<Decoded<P>, DecodeError> {
    let id = env.id.map(read_id).transpose()?;
    if env.jsonrpc != Some("\"2.0\"") {
        // A message with a method and no id is a notification, even a malformed one: it is
        // never answered.
        let notification = id.is_none() && env.method.is_some();
        return Err(DecodeError {
            notification,
            ..invalid(id, "Invalid request: jsonrpc must be \"2.0\"")
        });
    }

    if let Some(raw_method) = env.method {
        let notification = id.is_none();
        // A method name without escapes is its text between the quotes.
        let plain = raw_method
            .strip_prefix('"')
            .and_then(|m| m.strip_suffix('"'))
            .filter(|m| !m.contains('\\'));
        let method: Method = match plain {
            Some(method) => method_name(method),
            None => Cow::Owned(serde_json::from_str(raw_method).map_err(|_| DecodeError {
                notification,
                ..invalid(id.clone(), "Invalid request: method must be a string")
            })?),
        };
        // See the module docs: absent or an object; an array is -32602, anything else -32600.
        let params = match env.params {
            None => None,
            Some(raw) if raw.text().starts_with('{') => Some(raw),
            Some(raw) if raw.text().starts_with('[') => {
                return Err(DecodeError {
                    id,
                    notification,
                    error: McpError::invalid_params(
                        "Invalid params: params must be an object (MCP params are named)",
                    ),
                })
            }
            Some(_) => {
                return Err(DecodeError {
                    notification,
                    ..invalid(
                        id,
                        "Invalid request: params must be an object when present (not null or \
                         a scalar)",
                    )
                })
            }
        };
        return Ok(match id {
            Some(id) => Decoded::Request { id, method, params },
            None => Decoded::Notification { method, params },
        });
    }

    let Some(id) = id else {
        return Err(invalid(None, "Invalid request: missing method"));
    };
    match (env.result, env.error) {
        (Some(Written::Raw(result)), None) => Ok(Decoded::Response {
            id,
            outcome: Ok(result.to_owned()),
        }),
        (Some(Written::Text(result)), None) => match RawValue::from_string(result.to_owned()) {
            Ok(result) => Ok(Decoded::Response {
                id,
                outcome: Ok(result),
            }),
            Err(_) => Err(invalid(Some(id), "Invalid response: malformed result")),
        },
        (None, Some(error)) => match serde_json::from_str::<ErrorObject>(error) {
            Ok(error) => Ok(Decoded::Response {
                id,
                outcome: Err(error),
            }),
            Err(_) => Err(invalid(
                Some(id),
                "Invalid response: malformed error object",
            )),
        },
        _ => Err(invalid(Some(id), "Invalid request: missing method")),
    }
}

#[derive(Serialize)]
struct OutResult<'a, R: Serialize + ?Sized> {
    jsonrpc: &'static str,
    id: &'a RequestId,
    result: &'a R,
}

#[derive(Serialize)]
struct OutError<'a> {
    jsonrpc: &'static str,
    id: Option<&'a RequestId>,
    error: &'a ErrorObject,
}

#[derive(Serialize)]
struct OutCall<'a, P: Serialize + ?Sized> {
    jsonrpc: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<&'a RequestId>,
    method: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    params: Option<&'a P>,
}

fn to_string<T: Serialize>(value: &T) -> String {
    // Serializing these envelopes cannot fail: every field is a string, an integer or an
    // already-valid JSON value, and no map has non-string keys.
    serde_json::to_string(value).unwrap_or_else(|e| {
        tracing::error!(error = %e, "failed to serialize an outbound JSON-RPC message");
        String::from(r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"Internal server error"}}"#)
    })
}

/// Encodes a result response.
pub fn encode_result<R: Serialize + ?Sized>(id: &RequestId, result: &R) -> String {
    to_string(&OutResult {
        jsonrpc: "2.0",
        id,
        result,
    })
}

/// Encodes a result response whose result is the compact JSON object written in the pieces
/// of `result`, with `members` (encoded `"key":value` pairs, comma-separated; empty for none)
/// written before its closing brace: the 2026 stamp around an encoded result, in one buffer,
/// nothing parsed.
pub(crate) fn encode_result_with_members(id: &RequestId, result: &[&str], members: &str) -> String {
    let (last, first) = result.split_last().unwrap_or((&"{}", &[]));
    let last = last.strip_suffix('}').unwrap_or(last);
    let body = first.iter().map(|p| p.len()).sum::<usize>() + last.len();
    let mut out = String::with_capacity(body + members.len() + 48);
    out.push_str(r#"{"jsonrpc":"2.0","id":"#);
    match id {
        RequestId::Number(n) => push_integer(&mut out, *n),
        RequestId::String(_) => out.push_str(&to_string(id)),
    }
    out.push_str(r#","result":"#);
    for piece in first {
        out.push_str(piece);
    }
    out.push_str(last);
    if !members.is_empty() {
        // `{` alone is an object without members.
        if body > 1 {
            out.push(',');
        }
        out.push_str(members);
    }
    out.push_str("}}");
    out
}

/// Appends `n` in decimal (without the formatting machinery, which costs more than the rest of
/// the envelope).
fn push_integer(out: &mut String, n: i64) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut rest = n.unsigned_abs();
    loop {
        at -= 1;
        digits[at] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    if n < 0 {
        out.push('-');
    }
    out.extend(digits[at..].iter().map(|&d| char::from(d)));
}

/// Encodes an error response (`id: null` when the id is unknown).
pub fn encode_error(id: Option<&RequestId>, error: &ErrorObject) -> String {
    to_string(&OutError {
        jsonrpc: "2.0",
        id,
        error,
    })
}

/// Encodes a notification.
pub fn encode_notification<P: Serialize + ?Sized>(method: &str, params: Option<&P>) -> String {
    to_string(&OutCall {
        jsonrpc: "2.0",
        id: None,
        method,
        params,
    })
}

/// Encodes a request.
pub fn encode_request<P: Serialize + ?Sized>(
    id: &RequestId,
    method: &str,
    params: Option<&P>,
) -> String {
    to_string(&OutCall {
        jsonrpc: "2.0",
        id: Some(id),
        method,
        params,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_ids_are_written_as_json_numbers() {
        for n in [0, 7, -1, 10, 1_000_000, i64::MAX, i64::MIN] {
            let line = encode_result_with_members(&RequestId::Number(n), &["{}"], "");
            assert_eq!(
                line,
                format!(r#"{{"jsonrpc":"2.0","id":{n},"result":{{}}}}"#)
            );
        }
    }

    #[test]
    fn members_are_written_into_empty_and_filled_results() {
        let n = RequestId::Number(-7);
        assert_eq!(
            encode_result_with_members(&n, &["{}"], r#""a":1"#),
            r#"{"jsonrpc":"2.0","id":-7,"result":{"a":1}}"#
        );
        let s = RequestId::String("q\"1".into());
        assert_eq!(
            encode_result_with_members(&s, &[r#"{"x":[]}"#], r#""a":1,"b":{}"#),
            r#"{"jsonrpc":"2.0","id":"q\"1","result":{"x":[],"a":1,"b":{}}}"#
        );
        assert_eq!(
            encode_result_with_members(&n, &[r#"{"x":"#, "[]", "}"], ""),
            r#"{"jsonrpc":"2.0","id":-7,"result":{"x":[]}}"#
        );
        // A result in pieces (a prebuilt member's value between them).
        assert_eq!(
            encode_result_with_members(&n, &[r#"{"x":"#, "[1]", "}"], r#""a":1"#),
            r#"{"jsonrpc":"2.0","id":-7,"result":{"x":[1],"a":1}}"#
        );
    }
}

//! [`McpError`]: the one error type handlers return and clients receive.
//!
//! An `McpError` is either a *protocol error* (a JSON-RPC error with a code, a message and
//! optional data, sent to the peer as written) or an *internal failure* (any other error, which
//! the engine logs and reports on the wire only as `-32603 Internal server error`).

use std::borrow::Cow;
use std::fmt;

use serde_json::Value;

/// JSON-RPC and MCP error codes used by this SDK.
pub mod codes {
    /// Invalid JSON was received.
    pub const PARSE_ERROR: i32 = -32700;
    /// The JSON sent is not a valid request object.
    pub const INVALID_REQUEST: i32 = -32600;
    /// The method does not exist or is not available.
    pub const METHOD_NOT_FOUND: i32 = -32601;
    /// Invalid method parameters.
    pub const INVALID_PARAMS: i32 = -32602;
    /// Internal error.
    pub const INTERNAL_ERROR: i32 = -32603;
    /// 2025-11-25: resource not found.
    pub const RESOURCE_NOT_FOUND: i32 = -32002;
    /// 2025-11-25: the request needs a URL-mode elicitation first (retired in 2026-07-28).
    pub const URL_ELICITATION_REQUIRED: i32 = -32042;
    /// 2026-07-28: an HTTP header does not match the body.
    pub const HEADER_MISMATCH: i32 = -32020;
    /// 2026-07-28: the request needs a client capability the client did not declare.
    pub const MISSING_REQUIRED_CLIENT_CAPABILITY: i32 = -32021;
    /// 2026-07-28: the protocol version in `_meta` is not supported.
    pub const UNSUPPORTED_PROTOCOL_VERSION: i32 = -32022;
}

/// The message sent on the wire for every internal failure.
pub const INTERNAL_ERROR_MESSAGE: &str = "Internal server error";

/// The most bytes of one client-sent value (a tool, prompt or method name, a URI, a serde or
/// schema complaint quoting the input) that an error text produced by this SDK quotes.
///
/// Default and only value: 256. A longer value is cut there (on a character boundary) and
/// followed by `…` and its full length in bytes (see [`echo_capped`]), so a 4 MB tool name
/// costs the answer about 280 bytes.
pub(crate) const MAX_ECHOED_BYTES: usize = 256;

/// `text` as an error text may quote it: unchanged when at most [`MAX_ECHOED_BYTES`] bytes,
/// else its first [`MAX_ECHOED_BYTES`] bytes (cut on a character boundary), `…` and the
/// original length, e.g. `xxxx… (100000 bytes)`.
///
/// Every error text the engine and the high-level server build from client input goes through
/// this (unknown tool, prompt and method names, resource URIs, `Invalid params` reasons).
pub(crate) fn echo_capped(text: &str) -> Cow<'_, str> {
    cut_to(text, MAX_ECHOED_BYTES)
}

/// `text` cut to at most `max` bytes (on a character boundary) followed by `…` and its length;
/// unchanged when it fits. [`echo_capped`] is this at [`MAX_ECHOED_BYTES`].
pub(crate) fn cut_to(text: &str, max: usize) -> Cow<'_, str> {
    if text.len() <= max {
        return Cow::Borrowed(text);
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    Cow::Owned(format!("{}… ({} bytes)", &text[..end], text.len()))
}

/// `message` with every out-of-range integer of `source` written back as the client wrote it.
///
/// Without serde_json's `arbitrary_precision`, an integer literal that fits neither `i64` nor
/// `u64` (`18446744073709551616`) is read as the nearest `f64`, and serde and the schema
/// validator then quote that float (`1.8446744073709552e+19`, `18446744073709552000.0`). Given
/// the JSON text the value came from, this puts the literal back (itself capped by
/// [`echo_capped`]); other text is left alone. Only the first 16 such literals are looked at.
pub(crate) fn restore_written_integers(message: &str, source: &str) -> String {
    let mut out = message.to_owned();
    for literal in out_of_range_integers(source).take(16) {
        let Ok(float) = literal.parse::<f64>() else {
            continue;
        };
        let written = echo_capped(literal);
        let unexpected = serde::de::Unexpected::Float(float).to_string();
        let serde_form = unexpected
            .strip_prefix("floating point `")
            .and_then(|s| s.strip_suffix('`'))
            .map(str::to_owned);
        let renderings = [
            Some(Value::from(float).to_string()),
            serde_form,
            Some(float.to_string()),
        ];
        for rendering in renderings.into_iter().flatten() {
            out = replace_number(&out, &rendering, &written);
        }
    }
    out
}

/// Replaces `number` in `text` where it stands alone (not inside a longer number).
fn replace_number(text: &str, number: &str, with: &str) -> String {
    let is_part = |c: char| c.is_ascii_digit() || c == '.';
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(number) {
        let before = rest[..at].chars().next_back();
        let after = rest[at + number.len()..].chars().next();
        let alone = !before.is_some_and(|c| is_part(c) || c == '-')
            && !after.is_some_and(|c| is_part(c) || c == 'e' || c == 'E');
        out.push_str(&rest[..at]);
        out.push_str(if alone { with } else { number });
        rest = &rest[at + number.len()..];
    }
    out.push_str(rest);
    out
}

/// The integer literals of the JSON text `source` (outside strings) that fit neither `i64`
/// nor `u64`.
fn out_of_range_integers(source: &str) -> impl Iterator<Item = &str> {
    let bytes = source.as_bytes();
    let mut i = 0;
    std::iter::from_fn(move || {
        while i < bytes.len() {
            match bytes[i] {
                b'"' => {
                    i += 1;
                    while i < bytes.len() && bytes[i] != b'"' {
                        i += if bytes[i] == b'\\' { 2 } else { 1 };
                    }
                    i += 1;
                }
                b'-' | b'0'..=b'9' => {
                    let start = i;
                    i += 1;
                    while i < bytes.len()
                        && matches!(bytes[i], b'0'..=b'9' | b'.' | b'e' | b'E' | b'+' | b'-')
                    {
                        i += 1;
                    }
                    let token = source.get(start..i).unwrap_or("");
                    let integer = !token.contains(['.', 'e', 'E']);
                    if integer && token.parse::<i64>().is_err() && token.parse::<u64>().is_err() {
                        return Some(token);
                    }
                }
                _ => i += 1,
            }
        }
        None
    })
}

/// The error of a handler, a middleware or a client call.
///
/// ```
/// use modelctx_core::McpError;
///
/// let e = McpError::invalid_params("limit must be positive");
/// assert_eq!(e.code(), -32602);
/// assert_eq!(e.message(), "limit must be positive");
///
/// // Any std error converts with `?` and becomes an internal failure (-32603 on the wire).
/// let e: McpError = "x".parse::<u32>().unwrap_err().into();
/// assert!(e.is_internal());
/// assert_eq!(e.code(), -32603);
/// ```
pub struct McpError {
    repr: Box<Repr>,
}

enum Repr {
    Rpc {
        code: i32,
        message: Cow<'static, str>,
        data: Option<Value>,
    },
    Internal(Box<dyn std::error::Error + Send + Sync + 'static>),
    /// Not a failure: the handler needs client input first (2026 multi-round-trip).
    InputRequired(crate::types::InputRequiredResult),
}

/// The convenient result alias of this SDK.
pub type Result<T, E = McpError> = std::result::Result<T, E>;

impl McpError {
    /// A protocol error with this JSON-RPC `code` and `message`.
    pub fn new(code: i32, message: impl Into<Cow<'static, str>>) -> Self {
        Self {
            repr: Box::new(Repr::Rpc {
                code,
                message: message.into(),
                data: None,
            }),
        }
    }

    /// Attaches `error.data` (protocol errors only; ignored on internal failures).
    pub fn with_data(mut self, value: Value) -> Self {
        if let Repr::Rpc { data, .. } = &mut *self.repr {
            *data = Some(value);
        }
        self
    }

    /// `-32600 Invalid Request`.
    pub fn invalid_request(message: impl Into<Cow<'static, str>>) -> Self {
        Self::new(codes::INVALID_REQUEST, message)
    }

    /// `-32601 Method not found`; the method name is quoted at most 256 bytes long (longer
    /// names are cut, with their length).
    pub fn method_not_found(method: &str) -> Self {
        Self::new(
            codes::METHOD_NOT_FOUND,
            format!("Method not found: {}", echo_capped(method)),
        )
    }

    /// `-32602 Invalid params`.
    pub fn invalid_params(message: impl Into<Cow<'static, str>>) -> Self {
        Self::new(codes::INVALID_PARAMS, message)
    }

    /// An internal failure described by `message`. The wire shows only
    /// `-32603 Internal server error`; the message goes to the log.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::other(InternalMessage(message.into()))
    }

    /// An internal failure caused by `error` (what `?` on any std error produces).
    pub fn other(error: impl std::error::Error + Send + Sync + 'static) -> Self {
        Self {
            repr: Box::new(Repr::Internal(Box::new(error))),
        }
    }

    /// Not an error but a pause: the handler asks the client for input first. On the 2026 wire
    /// the engine answers with this [`InputRequiredResult`](crate::types::InputRequiredResult)
    /// (sealing its `requestState` when the server seals); `?` carries it out of nested code.
    /// The input methods of [`RequestContext`](crate::lowlevel::RequestContext) return it.
    pub fn input_required(result: crate::types::InputRequiredResult) -> Self {
        Self {
            repr: Box::new(Repr::InputRequired(result)),
        }
    }

    /// The pending [`InputRequiredResult`](crate::types::InputRequiredResult), if this is one.
    pub fn as_input_required(&self) -> Option<&crate::types::InputRequiredResult> {
        match &*self.repr {
            Repr::InputRequired(r) => Some(r),
            _ => None,
        }
    }

    /// Takes the pending [`InputRequiredResult`](crate::types::InputRequiredResult) out, or
    /// gives the error back.
    pub fn into_input_required(self) -> Result<crate::types::InputRequiredResult, Self> {
        match *self.repr {
            Repr::InputRequired(r) => Ok(r),
            repr => Err(Self {
                repr: Box::new(repr),
            }),
        }
    }

    /// `-32042 URL elicitation required`: the request cannot go on until the user completes
    /// the URL-mode elicitations in `elicitations` (build each with
    /// [`ElicitRequestParams::url`](crate::types::ElicitRequestParams::url)); the client shows
    /// them and retries the request afterwards. `error.data` is `{"elicitations": [..]}`.
    ///
    /// The engine sends it as the client's era wants it: in a 2025 session as this error; on
    /// the 2026 wire, which retired `-32042`, as an `InputRequiredResult` asking each
    /// elicitation (keyed by its id, without the id) from `tools/call`, `prompts/get` or
    /// `resources/read`. A client that did not declare `elicitation.url` gets `-32021`
    /// instead.
    ///
    /// ```
    /// use modelctx_core::types::ElicitRequestParams;
    /// use modelctx_core::McpError;
    ///
    /// let e = McpError::url_elicitation_required([ElicitRequestParams::url(
    ///     "connect-42",
    ///     "Authorize access to your calendar",
    ///     "https://example.com/connect?id=connect-42",
    /// )]);
    /// assert_eq!(e.code(), -32042);
    /// assert_eq!(e.data().unwrap()["elicitations"][0]["elicitationId"], "connect-42");
    /// ```
    pub fn url_elicitation_required(
        elicitations: impl IntoIterator<Item = crate::types::ElicitRequestParams>,
    ) -> Self {
        let elicitations: Vec<_> = elicitations.into_iter().collect();
        let data = serde_json::json!({ "elicitations": elicitations });
        Self::new(
            codes::URL_ELICITATION_REQUIRED,
            "This request requires more information.",
        )
        .with_data(data)
    }

    /// The JSON-RPC code this error is sent with.
    pub fn code(&self) -> i32 {
        match &*self.repr {
            Repr::Rpc { code, .. } => *code,
            Repr::Internal(_) | Repr::InputRequired(_) => codes::INTERNAL_ERROR,
        }
    }

    /// The message: the protocol message, or for an internal failure its real description
    /// (which is *not* what the wire shows; see [`McpError::wire_message`]).
    pub fn message(&self) -> Cow<'_, str> {
        match &*self.repr {
            Repr::Rpc { message, .. } => Cow::Borrowed(message),
            Repr::Internal(e) => Cow::Owned(e.to_string()),
            Repr::InputRequired(_) => {
                Cow::Borrowed("input required where the era has no multi-round-trip requests")
            }
        }
    }

    /// `error.data`, if any.
    pub fn data(&self) -> Option<&Value> {
        match &*self.repr {
            Repr::Rpc { data, .. } => data.as_ref(),
            Repr::Internal(_) | Repr::InputRequired(_) => None,
        }
    }

    /// True for an internal failure (anything that is not a protocol error). A pending
    /// input request counts as one where it cannot be answered (a 2025 session).
    pub fn is_internal(&self) -> bool {
        matches!(*self.repr, Repr::Internal(_) | Repr::InputRequired(_))
    }

    /// The message the wire carries: internal failures are reduced to `Internal server error`
    /// unless `surface_internal` is set (a test switch).
    pub fn wire_message(&self, surface_internal: bool) -> Cow<'_, str> {
        match &*self.repr {
            Repr::Internal(_) if !surface_internal => Cow::Borrowed(INTERNAL_ERROR_MESSAGE),
            _ => self.message(),
        }
    }

    /// The wire object `{"code", "message", "data"?}` of this error.
    pub fn to_wire(&self, surface_internal: bool) -> ErrorObject {
        ErrorObject {
            code: self.code(),
            message: self.wire_message(surface_internal).into_owned(),
            data: self.data().cloned(),
        }
    }

    /// Rebuilds a protocol error from a wire object (what a client receives).
    pub fn from_wire(error: ErrorObject) -> Self {
        let mut e = Self::new(error.code, error.message);
        if let Some(data) = error.data {
            e = e.with_data(data);
        }
        e
    }
}

impl fmt::Debug for McpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &*self.repr {
            Repr::Rpc {
                code,
                message,
                data,
            } => f
                .debug_struct("McpError")
                .field("code", code)
                .field("message", message)
                .field("data", data)
                .finish(),
            Repr::Internal(e) => f.debug_tuple("McpError::Internal").field(e).finish(),
            Repr::InputRequired(r) => f.debug_tuple("McpError::InputRequired").field(r).finish(),
        }
    }
}

impl fmt::Display for McpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &*self.repr {
            Repr::Rpc { code, message, .. } => write!(f, "MCP error {code}: {message}"),
            Repr::Internal(e) => write!(f, "internal error: {e}"),
            Repr::InputRequired(r) => {
                let keys: Vec<&String> = r.input_requests.iter().flat_map(|m| m.keys()).collect();
                write!(f, "input required: {keys:?}")
            }
        }
    }
}

impl<E: std::error::Error + Send + Sync + 'static> From<E> for McpError {
    fn from(error: E) -> Self {
        Self::other(error)
    }
}

#[derive(Debug)]
struct InternalMessage(String);

impl fmt::Display for InternalMessage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for InternalMessage {}

/// The `error` member of a JSON-RPC error response: what an [`McpError`] becomes on the wire
/// ([`McpError::to_wire`]) and comes back from ([`McpError::from_wire`]).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ErrorObject {
    /// The JSON-RPC error code (`-32602`, `-32021`, ...).
    pub code: i32,
    /// A short sentence saying what went wrong.
    pub message: String,
    /// Extra data the code defines (e.g. `requiredCapabilities` for `-32021`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_values_are_cut_with_their_length() {
        assert_eq!(echo_capped("weather"), "weather");
        let exact = "x".repeat(MAX_ECHOED_BYTES);
        assert_eq!(echo_capped(&exact), exact);
        let long = "x".repeat(100_000);
        assert_eq!(
            echo_capped(&long),
            format!("{}… (100000 bytes)", "x".repeat(256))
        );
        let wide = "é".repeat(1000);
        let cut = echo_capped(&wide);
        assert!(cut.len() < MAX_ECHOED_BYTES + 32, "{cut}");
        assert!(cut.ends_with("… (2000 bytes)"), "{cut}");
    }

    #[test]
    fn integers_come_back_as_written() {
        let source = r#"{"s": "99999999999999999999", "limit": 18446744073709551616, "n": -18446744073709551617}"#;
        assert_eq!(
            restore_written_integers("limit: 1.8446744073709552e+19 is greater than 50", source),
            "limit: 18446744073709551616 is greater than 50"
        );
        assert_eq!(
            restore_written_integers(
                "invalid type: floating point `-1.8446744073709552e+19`, expected i64",
                source
            ),
            "invalid type: floating point `-18446744073709551617`, expected i64"
        );
        // Inside a string: not a number of the input.
        assert_eq!(restore_written_integers("1e20", source), "1e20");
        assert_eq!(restore_written_integers("x 12.5", "[12]"), "x 12.5");
    }
}

//! Reading MCP headers: case-insensitive names, `=?base64?...?=` values.

use axum::http::{HeaderMap, HeaderValue};

/// The headers the endpoint decides by, found in one walk over the request's headers (each
/// lookup by name would parse and hash the name again). Each holds the first value sent.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Known<'a> {
    pub(crate) host: Option<&'a HeaderValue>,
    pub(crate) origin: Option<&'a HeaderValue>,
    pub(crate) content_type: Option<&'a HeaderValue>,
    pub(crate) accept: Option<&'a HeaderValue>,
    pub(crate) session_id: Option<&'a HeaderValue>,
    pub(crate) protocol_version: Option<&'a HeaderValue>,
    pub(crate) method: Option<&'a HeaderValue>,
    pub(crate) name: Option<&'a HeaderValue>,
}

impl<'a> Known<'a> {
    /// Walks `headers` once (names arrive lowercase: `HeaderName` keeps them so).
    pub(crate) fn read(headers: &'a HeaderMap) -> Self {
        let mut known = Self::default();
        for (name, value) in headers {
            let slot = match name.as_str() {
                "host" => &mut known.host,
                "origin" => &mut known.origin,
                "content-type" => &mut known.content_type,
                "accept" => &mut known.accept,
                "mcp-session-id" => &mut known.session_id,
                "mcp-protocol-version" => &mut known.protocol_version,
                "mcp-method" => &mut known.method,
                "mcp-name" => &mut known.name,
                _ => continue,
            };
            slot.get_or_insert(value);
        }
        known
    }
}

/// Whether an `Accept` header takes one of `media` (matched without parameters, ignoring case).
/// No header takes anything, as in HTTP; a header that is not text takes nothing.
pub(crate) fn accepts(accept: Option<&HeaderValue>, media: &[&str]) -> bool {
    let Some(accept) = accept else {
        return true;
    };
    let Ok(accept) = accept.to_str() else {
        return false;
    };
    accept.split(',').any(|range| {
        let offered = range.split(';').next().unwrap_or("").trim();
        media.iter().any(|m| offered.eq_ignore_ascii_case(m))
    })
}

/// A header value as text (`None` when absent or not visible ASCII).
pub(crate) fn text(value: Option<&HeaderValue>) -> Option<&str> {
    value?.to_str().ok()
}

/// A header's value as text (`None` when absent or not visible ASCII).
pub(crate) fn get<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    text(headers.get(name))
}

/// Decodes a header value: `=?base64?...?=` is base64 of UTF-8 (an invalid encoding is `Err`),
/// anything else is taken literally, with surrounding whitespace trimmed.
/// A literal value is borrowed, not copied.
pub(crate) fn decode_value(raw: &str) -> Result<std::borrow::Cow<'_, str>, ()> {
    let raw = raw.trim();
    match raw
        .strip_prefix("=?base64?")
        .and_then(|r| r.strip_suffix("?="))
    {
        Some(encoded) => {
            let bytes = crate::base64::decode(encoded).ok_or(())?;
            String::from_utf8(bytes).map(Into::into).map_err(|_| ())
        }
        None => Ok(raw.into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_walk_finds_the_first_value_of_each_known_header() {
        let mut headers = HeaderMap::new();
        headers.insert("Mcp-Method", HeaderValue::from_static("tools/call"));
        headers.append("mcp-method", HeaderValue::from_static("second"));
        headers.insert("accept", HeaderValue::from_static("text/event-stream"));
        headers.insert("x-other", HeaderValue::from_static("ignored"));
        let known = Known::read(&headers);
        assert_eq!(text(known.method), Some("tools/call"));
        assert_eq!(text(known.accept), Some("text/event-stream"));
        assert!(known.name.is_none() && known.host.is_none());
        assert_eq!(get(&headers, "MCP-METHOD"), Some("tools/call"));
        assert!(accepts(known.accept, &["TEXT/event-stream"]));
        assert!(!accepts(known.accept, &["application/json"]));
        assert!(
            accepts(known.name, &["application/json"]),
            "no header takes anything"
        );
    }

    #[test]
    fn sentinel_values_decode_and_bad_ones_are_refused() {
        assert_eq!(decode_value("=?base64?SGVsbG8=?=").unwrap(), "Hello");
        assert_eq!(
            decode_value("=?base64?SGVsbG8sIOS4lueVjA==?=").unwrap(),
            "Hello, 世界"
        );
        assert!(decode_value("=?base64?SGVsbG8?=").is_err(), "bad padding");
        assert!(
            decode_value("=?base64?SGVs!!!bG8=?=").is_err(),
            "bad alphabet"
        );
        assert_eq!(decode_value("  plain  ").unwrap(), "plain");
    }
}

//! Reading MCP headers: case-insensitive names, `=?base64?...?=` values.

use axum::http::HeaderMap;

/// A header's value as text (`None` when absent or not visible ASCII).
pub(crate) fn get<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name)?.to_str().ok()
}

/// Decodes a header value: `=?base64?...?=` is base64 of UTF-8 (an invalid encoding is `Err`),
/// anything else is taken literally, with surrounding whitespace trimmed.
pub(crate) fn decode_value(raw: &str) -> Result<String, ()> {
    let raw = raw.trim();
    match raw
        .strip_prefix("=?base64?")
        .and_then(|r| r.strip_suffix("?="))
    {
        Some(encoded) => {
            let bytes = crate::base64::decode(encoded).ok_or(())?;
            String::from_utf8(bytes).map_err(|_| ())
        }
        None => Ok(raw.to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

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
            let bytes = base64_decode(encoded).ok_or(())?;
            String::from_utf8(bytes).map_err(|_| ())
        }
        None => Ok(raw.to_owned()),
    }
}

fn base64_decode(text: &str) -> Option<Vec<u8>> {
    if text.len() % 4 != 0 {
        return None;
    }
    let value = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    };
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(text.len() / 4 * 3);
    for (i, chunk) in bytes.chunks(4).enumerate() {
        let last = i == bytes.len() / 4 - 1;
        let pad = chunk.iter().rev().take_while(|&&c| c == b'=').count();
        if pad > 2 || (pad > 0 && !last) {
            return None;
        }
        let mut n = 0u32;
        for &c in &chunk[..4 - pad] {
            n = (n << 6) | value(c)?;
        }
        n <<= 6 * pad as u32;
        let decoded = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        out.extend_from_slice(&decoded[..3 - pad]);
    }
    Some(out)
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

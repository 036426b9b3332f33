//! Base64 (RFC 4648): the standard alphabet with padding (resource blobs, `=?base64?...?=`
//! header values) and the URL-safe alphabet without padding (sealed `requestState`).
//! Decoding is strict: a wrong length, a stray character or misplaced padding is refused.

const STANDARD: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const URL_SAFE: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// Encodes `bytes` with the standard alphabet and padding.
///
/// ```
/// assert_eq!(modelctx_core::base64::encode(b"hi!"), "aGkh");
/// assert_eq!(modelctx_core::base64::encode(b"hi"), "aGk=");
/// ```
pub fn encode(bytes: &[u8]) -> String {
    encode_with(bytes, STANDARD, true)
}

/// Encodes `bytes` with the URL-safe alphabet and no padding.
///
/// ```
/// assert_eq!(modelctx_core::base64::encode_url(&[0xfb, 0xff]), "-_8");
/// ```
pub fn encode_url(bytes: &[u8]) -> String {
    encode_with(bytes, URL_SAFE, false)
}

/// Decodes standard base64 with padding (`None` if `text` is not exactly that).
///
/// ```
/// assert_eq!(modelctx_core::base64::decode("aGk=").as_deref(), Some(&b"hi"[..]));
/// assert_eq!(modelctx_core::base64::decode("aGk"), None);
/// ```
pub fn decode(text: &str) -> Option<Vec<u8>> {
    if text.len() % 4 != 0 {
        return None;
    }
    let body = text.trim_end_matches('=');
    let pad = text.len() - body.len();
    if pad > 2 {
        return None;
    }
    let out = decode_with(body.as_bytes(), STANDARD)?;
    // The padding must be exactly what the body length implies.
    (body.len() % 4 == (4 - pad) % 4).then_some(out)
}

/// Decodes URL-safe base64 without padding (`None` if `text` is not exactly that).
pub fn decode_url(text: &str) -> Option<Vec<u8>> {
    decode_with(text.as_bytes(), URL_SAFE)
}

fn encode_with(bytes: &[u8], alphabet: &[u8; 64], pad: bool) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(alphabet[((n >> (18 - 6 * i)) & 63) as usize]));
            } else if pad {
                out.push('=');
            }
        }
    }
    out
}

/// Decodes unpadded `text`; a final group of one character, or leftover bits that are not
/// zero, make it invalid (so every byte string has exactly one encoding).
fn decode_with(text: &[u8], alphabet: &[u8; 64]) -> Option<Vec<u8>> {
    let value = |c: u8| alphabet.iter().position(|&a| a == c).map(|v| v as u32);
    let mut out = Vec::with_capacity(text.len() / 4 * 3 + 2);
    for chunk in text.chunks(4) {
        if chunk.len() == 1 {
            return None;
        }
        let mut n = 0u32;
        for &c in chunk {
            n = (n << 6) | value(c)?;
        }
        let missing = 4 - chunk.len();
        n <<= 6 * missing as u32;
        let bytes = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        let keep = 3 - missing;
        if bytes[keep..].iter().any(|&b| b != 0) {
            return None;
        }
        out.extend_from_slice(&bytes[..keep]);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_every_length_in_both_alphabets() {
        let data: Vec<u8> = (0..=255u8).collect();
        for len in 0..40 {
            let bytes = &data[200 - len..200];
            assert_eq!(decode(&encode(bytes)).as_deref(), Some(bytes));
            assert_eq!(decode_url(&encode_url(bytes)).as_deref(), Some(bytes));
        }
    }

    #[test]
    fn refuses_bad_padding_alphabet_and_trailing_bits() {
        assert_eq!(decode("SGVsbG8=").as_deref(), Some(&b"Hello"[..]));
        assert_eq!(decode("SGVsbG8"), None);
        assert_eq!(decode("SGVs!!!bG8="), None);
        assert_eq!(decode("SG=sbG8="), None);
        assert_eq!(decode("SGVsbG8==="), None);
        assert_eq!(decode("SGVsbG9="), None, "non-zero leftover bits");
        assert_eq!(decode_url("a"), None);
        assert_eq!(decode_url("ab+/"), None);
    }
}

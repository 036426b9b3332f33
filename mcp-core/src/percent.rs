//! Strict RFC 3986 percent-decoding, shared by the URI template matcher and JSON pointers in
//! `$ref`s (the lenient form-body decoder, which also reads `+`, is `fetch::percent_decode`).

/// Undoes `%XX` escapes; `None` for a broken escape or bytes that are not UTF-8.
pub(crate) fn decode(raw: &str) -> Option<String> {
    if !raw.contains('%') {
        return Some(raw.to_owned());
    }
    let bytes = raw.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = raw.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::decode;

    #[test]
    fn escapes_are_undone_and_broken_ones_refused() {
        assert_eq!(decode("a%2Fb%20c").as_deref(), Some("a/b c"));
        assert_eq!(decode("plain").as_deref(), Some("plain"));
        assert_eq!(decode("100%"), None);
        assert_eq!(decode("%zz"), None);
        assert_eq!(decode("%FF"), None, "not UTF-8");
    }
}

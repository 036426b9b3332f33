//! JSON strings, read and written: where the plain part of one ends (no quote, backslash or
//! control character), for the one pass that reads messages (`message_scan`) and for writing
//! a string that needs no escapes as it is.

/// How many bytes of `bytes` come before the first quote, backslash or control character (all
/// of them when there is none): eight at a time, as serde does it.
pub(crate) fn plain_run(bytes: &[u8]) -> usize {
    const ONES: u64 = u64::MAX / 255;
    const HIGH: u64 = ONES << 7;
    let mut at = 0;
    for chunk in bytes.chunks_exact(8) {
        let mut eight = [0u8; 8];
        eight.copy_from_slice(chunk);
        let v = u64::from_le_bytes(eight);
        let quote = v ^ (ONES * u64::from(b'"'));
        let backslash = v ^ (ONES * u64::from(b'\\'));
        // The highest bit of each byte that is below 0x20, or equal to either: exact for the
        // first such byte (a borrow only runs into the bytes above it).
        let found = (v.wrapping_sub(ONES * 0x20) & !v
            | quote.wrapping_sub(ONES) & !quote
            | backslash.wrapping_sub(ONES) & !backslash)
            & HIGH;
        if found != 0 {
            return at + (found.trailing_zeros() / 8) as usize;
        }
        at += 8;
    }
    at + bytes[at..]
        .iter()
        .position(|b| matches!(b, b'"' | b'\\' | 0..=0x1f))
        .unwrap_or(bytes.len() - at)
}

/// Writes `text` as a JSON string, as serde_json writes it: as it is between quotes when
/// nothing in it needs an escape, through serde_json otherwise.
pub(crate) fn write_quoted(out: &mut String, text: &str) {
    if plain_run(text.as_bytes()) == text.len() {
        out.reserve(text.len() + 2);
        out.push('"');
        out.push_str(text);
        out.push('"');
        return;
    }
    // A string always serializes.
    out.push_str(&serde_json::to_string(text).unwrap_or_default());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plain_run_stops_where_a_byte_by_byte_look_stops() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..50_000 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let len = (seed % 40) as usize;
            let bytes: Vec<u8> = (0..len)
                .map(|i| {
                    let r = (seed >> (i % 56)) as u8;
                    match r % 11 {
                        0 => b'"',
                        1 => b'\\',
                        2 => r % 0x20,
                        3 => 0x80 | r,
                        _ => b'a' + r % 26,
                    }
                })
                .collect();
            let naive = bytes
                .iter()
                .position(|b| *b == b'"' || *b == b'\\' || *b < 0x20)
                .unwrap_or(len);
            assert_eq!(plain_run(&bytes), naive, "{bytes:?}");
        }
    }

    #[test]
    fn strings_are_written_as_serde_json_writes_them() {
        for text in [
            "",
            "5",
            "plain text é ü 日本",
            "a\"b",
            "back\\slash",
            "line\nnext",
            "\u{1}\u{1f}\u{7f}",
            "tab\t",
        ] {
            let mut out = String::from("x");
            write_quoted(&mut out, text);
            assert_eq!(
                out,
                format!("x{}", serde_json::to_string(text).unwrap()),
                "{text:?}"
            );
        }
    }
}

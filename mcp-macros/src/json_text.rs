//! The JSON text the macros check or write at compile time: whether `meta = r#"{..}"#` is a
//! JSON object, a string quoted as JSON, a float written as JSON.
//!
//! Hand-written so that a user's build does not compile `serde_json` (and its dependencies) a
//! second time for the host. The runtime reads the same text with `serde_json`; the tests
//! below hold this reader to it, input for input.

/// serde_json's default nesting limit: the 128th nested array or object is refused.
const DEPTH: usize = 128;

/// True when `text` is one JSON object, as `serde_json::from_str::<Value>` reads it (an
/// object, whitespace around it, numbers that fit an `f64`, no unpaired surrogate escape).
pub(crate) fn is_object(text: &str) -> bool {
    let mut reader = Reader {
        bytes: text.as_bytes(),
        at: 0,
    };
    reader.skip_space();
    if reader.peek() != Some(b'{') {
        return false;
    }
    reader.value(DEPTH).is_some() && {
        reader.skip_space();
        reader.at == reader.bytes.len()
    }
}

/// `text` as a JSON string, quotes included (`"`, `\` and control characters escaped).
pub(crate) fn string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// `value` as a JSON number with a fraction or an exponent (`1000.0`, `1e-7`), or `None` when
/// it is not finite (JSON has no infinity).
pub(crate) fn float(value: f64) -> Option<String> {
    // `Debug` writes the shortest text that reads back as the same `f64`, always with a `.`
    // or an exponent: JSON's grammar for a float.
    value.is_finite().then(|| format!("{value:?}"))
}

/// A cursor over the text; each method returns `None` at the first byte that is not JSON.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn next(&mut self) -> Option<u8> {
        let b = self.peek()?;
        self.at += 1;
        Some(b)
    }

    fn skip_space(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    fn expect(&mut self, byte: u8) -> Option<()> {
        (self.next()? == byte).then_some(())
    }

    /// One value, at most `depth` arrays or objects deep (counting its own).
    fn value(&mut self, depth: usize) -> Option<()> {
        let inner = || depth.checked_sub(1).filter(|d| *d > 0);
        match self.peek()? {
            b'{' => {
                let depth = inner()?;
                self.items(b'{', b'}', |r| {
                    (r.peek()? == b'"').then_some(())?;
                    r.string()?;
                    r.skip_space();
                    r.expect(b':')?;
                    r.skip_space();
                    r.value(depth)
                })
            }
            b'[' => {
                let depth = inner()?;
                self.items(b'[', b']', |r| r.value(depth))
            }
            b'"' => self.string(),
            b't' => self.word(b"true"),
            b'f' => self.word(b"false"),
            b'n' => self.word(b"null"),
            b'-' | b'0'..=b'9' => self.number(),
            _ => None,
        }
    }

    /// `open`, then `item`s separated by commas (none at the end), then `close`: the shape an
    /// object (items `"key": value`) and an array (items values) share.
    fn items(
        &mut self,
        open: u8,
        close: u8,
        mut item: impl FnMut(&mut Self) -> Option<()>,
    ) -> Option<()> {
        self.expect(open)?;
        self.skip_space();
        if self.peek()? == close {
            self.at += 1;
            return Some(());
        }
        loop {
            self.skip_space();
            item(self)?;
            self.skip_space();
            match self.next()? {
                b',' => continue,
                b if b == close => return Some(()),
                _ => return None,
            }
        }
    }

    fn word(&mut self, word: &[u8]) -> Option<()> {
        let end = self.at + word.len();
        (self.bytes.get(self.at..end)? == word).then(|| self.at = end)
    }

    fn digits(&mut self) -> usize {
        let start = self.at;
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.at += 1;
        }
        self.at - start
    }

    /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`, whose value is a finite `f64`.
    fn number(&mut self) -> Option<()> {
        let start = self.at;
        if self.peek() == Some(b'-') {
            self.at += 1;
        }
        match self.peek()? {
            b'0' => self.at += 1,
            b'1'..=b'9' => {
                self.digits();
            }
            _ => return None,
        }
        if self.peek() == Some(b'.') {
            self.at += 1;
            (self.digits() > 0).then_some(())?;
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.at += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.at += 1;
            }
            (self.digits() > 0).then_some(())?;
        }
        let text = std::str::from_utf8(&self.bytes[start..self.at]).ok()?;
        text.parse::<f64>().ok()?.is_finite().then_some(())
    }

    fn string(&mut self) -> Option<()> {
        self.expect(b'"')?;
        loop {
            match self.next()? {
                b'"' => return Some(()),
                b'\\' => match self.next()? {
                    b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => {}
                    b'u' => match self.hex4()? {
                        0xD800..=0xDBFF => {
                            self.expect(b'\\')?;
                            self.expect(b'u')?;
                            if !(0xDC00..=0xDFFF).contains(&self.hex4()?) {
                                return None;
                            }
                        }
                        0xDC00..=0xDFFF => return None,
                        _ => {}
                    },
                    _ => return None,
                },
                0x00..=0x1F => return None,
                _ => {}
            }
        }
    }

    fn hex4(&mut self) -> Option<u32> {
        let digits = self.bytes.get(self.at..self.at + 4)?;
        let text = std::str::from_utf8(digits).ok()?;
        if !text.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        self.at += 4;
        u32::from_str_radix(text, 16).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::{float, is_object, string};

    fn serde_reads_an_object(text: &str) -> bool {
        matches!(
            serde_json::from_str::<serde_json::Value>(text),
            Ok(serde_json::Value::Object(_))
        )
    }

    #[test]
    fn objects_are_read_as_serde_json_reads_them() {
        let deep = |n: usize| format!("{}{}{}", "{\"a\":".repeat(n), 1, "}".repeat(n));
        let deep_arrays = |n: usize| format!("{{\"a\":{}{}}}", "[".repeat(n), "]".repeat(n));
        let mut cases: Vec<String> = [
            "{}",
            " { } ",
            "\t{\n}\r\n",
            r#"{"a":1}"#,
            r#"{"a":1,}"#,
            r#"{"a":1 "b":2}"#,
            r#"{"a" 1}"#,
            r#"{a:1}"#,
            r#"{"a":1}x"#,
            r#"{"a":1}{}"#,
            r#"[1]"#,
            r#""text""#,
            r#"1"#,
            r#"null"#,
            "",
            "{",
            "}",
            r#"{"a":[1,2,{"b":null}],"c":true,"d":false,"e":"x"}"#,
            r#"{"a":[1,]}"#,
            r#"{"a":[,1]}"#,
            r#"{"a":[]}"#,
            r#"{"a":tru}"#,
            r#"{"a":nul}"#,
            r#"{"a":True}"#,
            r#"{"a":-0}"#,
            r#"{"a":-}"#,
            r#"{"a":01}"#,
            r#"{"a":1.}"#,
            r#"{"a":.5}"#,
            r#"{"a":1.5e3}"#,
            r#"{"a":1E+3}"#,
            r#"{"a":1e-3}"#,
            r#"{"a":1e}"#,
            r#"{"a":1e+}"#,
            r#"{"a":+1}"#,
            r#"{"a":1e400}"#,
            r#"{"a":-1e400}"#,
            r#"{"a":1e-400}"#,
            r#"{"a":0e999999}"#,
            r#"{"a":123456789012345678901234567890}"#,
            r#"{"a":"\"\\\/\b\f\n\r\t"}"#,
            r#"{"a":"\x"}"#,
            r#"{"a":"\u00e9"}"#,
            r#"{"a":"\u00G9"}"#,
            r#"{"a":"\u00e"}"#,
            r#"{"a":"\ud83d\ude00"}"#,
            r#"{"a":"\ud83d"}"#,
            r#"{"a":"\ud83dx"}"#,
            r#"{"a":"\ud83d\u0041"}"#,
            r#"{"a":"\ude00"}"#,
            r#"{"a":"é ü 😀"}"#,
            "{\"a\":\"tab\there\"}",
            "{\"a\":\"nl\nhere\"}",
            "{\"a\":\"\u{7f}\"}",
            r#"{"a":"unterminated}"#,
            r#"{"a":1,"a":2}"#,
            "{\"a\":1}\u{a0}",
            "\u{feff}{}",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        for n in [1, 2, 126, 127, 128, 129, 200] {
            cases.push(deep(n));
            cases.push(deep_arrays(n));
        }
        for case in &cases {
            assert_eq!(is_object(case), serde_reads_an_object(case), "{case:?}");
        }
    }

    #[test]
    fn a_string_is_quoted_as_serde_json_quotes_it() {
        for text in [
            "",
            "plain",
            "^[a-z]+$",
            r"\d{3}",
            "quote \" and backslash \\",
            "\n\r\t\u{8}\u{c}\u{0}\u{1f}\u{7f}",
            "é 😀",
        ] {
            assert_eq!(
                string(text),
                serde_json::Value::String(text.into()).to_string()
            );
        }
    }

    #[test]
    fn a_float_reads_back_as_the_same_number() {
        for value in [
            0.5,
            -0.5,
            1000.0,
            1e20,
            1e-7,
            1.5e300,
            -2.25,
            0.1 + 0.2,
            0.0,
        ] {
            let text = float(value).unwrap();
            assert!(text.contains(['.', 'e']), "{text}");
            let read: serde_json::Value = serde_json::from_str(&text).unwrap();
            assert_eq!(read.as_f64(), Some(value), "{text}");
            assert!(read.is_f64(), "{text}");
        }
        assert_eq!(float(f64::INFINITY), None);
        assert_eq!(float(f64::NAN), None);
    }
}

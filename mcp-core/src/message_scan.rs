//! One pass over a message's text: it checks that the text is JSON, finds the members of the
//! JSON-RPC envelope, and finds the top-level members of `params` (`_meta`, the members of a
//! retry, where each member is) on the way, so nothing walks the params again.
//!
//! It takes only the plain case: an object whose envelope members are each written once,
//! with names without escapes, nested at most [`DEPTH`] deep. Anything else (including text
//! that is not JSON) is `None`, and serde reads the message instead, which gives the answer
//! (the right error, or the message). So this pass never accepts what serde refuses; the
//! tests below hold it to that, against serde, over many texts.

use std::ops::Range;

use crate::json_string::plain_run;
use crate::raw_meta::{Finder, Scan};

/// How deep values may nest before the pass leaves the message to serde (whose limit is 128).
const DEPTH: u32 = 64;

/// A value of the envelope as the pass found it: its text, and for `params` what was found in
/// its members.
#[derive(Debug, Clone)]
pub(crate) struct Found<'a> {
    pub(crate) text: &'a str,
    /// `params` only, when it is an object.
    pub(crate) scan: Option<Scan>,
}

/// The members of a JSON-RPC envelope, each as written (absent: `None`).
#[derive(Debug, Default)]
pub(crate) struct Envelope<'a> {
    pub(crate) jsonrpc: Option<&'a str>,
    pub(crate) id: Option<&'a str>,
    pub(crate) method: Option<&'a str>,
    pub(crate) params: Option<Found<'a>>,
    pub(crate) result: Option<&'a str>,
    pub(crate) error: Option<&'a str>,
}

/// Reads `text` in one pass: `None` unless it is plainly a JSON object (see the module docs).
pub(crate) fn scan(text: &str) -> Option<Envelope<'_>> {
    let mut s = Scanner {
        text,
        bytes: text.as_bytes(),
        at: 0,
    };
    let mut env = Envelope::default();
    s.space();
    s.object(|s, key| {
        if key.escaped {
            return None;
        }
        let start = s.at;
        let slot = match &s.bytes[key.range.start + 1..key.range.end - 1] {
            b"jsonrpc" => &mut env.jsonrpc,
            b"id" => &mut env.id,
            b"method" => &mut env.method,
            b"result" => &mut env.result,
            b"error" => &mut env.error,
            b"params" if env.params.is_none() => {
                let scan = match s.peek() {
                    Some(b'{') => Some(s.members(0)?),
                    _ => {
                        s.value(0)?;
                        None
                    }
                };
                let text = text.get(start..s.at)?;
                env.params = Some(Found { text, scan });
                return Some(());
            }
            // Written twice: serde says what is wrong.
            b"params" => return None,
            _ => return s.value(0),
        };
        if slot.is_some() {
            return None;
        }
        s.value(0)?;
        *slot = Some(text.get(start..s.at)?);
        Some(())
    })?;
    s.space();
    (s.at == s.bytes.len()).then_some(env)
}

/// The longest `_meta` text a thread keeps (longer ones are read each time): a bound on the
/// memory the cache holds.
const META_KEPT: usize = 2048;

thread_local! {
    /// The last `_meta` object the pass read on this thread, as written (see
    /// [`Scanner::meta_value`]); empty before the first.
    static LAST_META: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
}

struct Scanner<'a> {
    text: &'a str,
    bytes: &'a [u8],
    at: usize,
}

/// A string the scanner passed: where it is, quotes included, and whether it has escapes.
struct Str {
    range: Range<usize>,
    escaped: bool,
}

impl Scanner<'_> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    /// JSON's whitespace (serde's: space, tab, line feed, carriage return).
    fn space(&mut self) {
        while let Some(b' ' | b'\n' | b'\t' | b'\r') = self.peek() {
            self.at += 1;
        }
    }

    fn eat(&mut self, byte: u8) -> bool {
        let ate = self.peek() == Some(byte);
        self.at += usize::from(ate);
        ate
    }

    /// The object at the cursor: `member` is given each member's name and reads its value
    /// (the cursor is at the value).
    fn object(&mut self, mut member: impl FnMut(&mut Self, Str) -> Option<()>) -> Option<()> {
        if !self.eat(b'{') {
            return None;
        }
        self.space();
        if self.eat(b'}') {
            return Some(());
        }
        loop {
            let key = self.string()?;
            self.space();
            if !self.eat(b':') {
                return None;
            }
            self.space();
            member(self, key)?;
            self.space();
            if self.eat(b',') {
                self.space();
                continue;
            }
            return self.eat(b'}').then_some(());
        }
    }

    /// The object at the cursor, its members given to a [`Finder`] (offsets from its `{`).
    fn members(&mut self, depth: u32) -> Option<Scan> {
        let start = self.at;
        // From the `{` on: the offsets are from there.
        let params = self.text.get(start..)?;
        let mut finder = Finder::default();
        self.object(|s, key| {
            let value_start = s.at;
            let meta = !key.escaped
                && s.bytes.get(key.range.start + 1..key.range.end - 1) == Some(b"_meta");
            if meta {
                s.meta_value(depth + 1)?;
            } else {
                s.value(depth + 1)?;
            }
            finder.member(
                params,
                key.range.start - start..key.range.end - start,
                value_start - start..s.at - start,
            );
            Some(())
        })?;
        Some(finder.finish(true))
    }

    /// Passes the `_meta` value at the cursor. A client sends the same `_meta` with every
    /// request in the 2026 era (its version and capabilities), so the text of the last object
    /// this thread passed there is kept: when the value starts with exactly that text it is
    /// the same object, already known to be JSON (an object ends at its own `}`, and it sits at
    /// the same depth), and the pass steps over it.
    fn meta_value(&mut self, depth: u32) -> Option<()> {
        let rest = self.bytes.get(self.at..)?;
        let known = LAST_META.with_borrow(|last| {
            (!last.is_empty() && rest.starts_with(last.as_bytes())).then_some(last.len())
        });
        if let Some(len) = known {
            self.at += len;
            return Some(());
        }
        let start = self.at;
        self.value(depth)?;
        if self.bytes.get(start) == Some(&b'{') && self.at - start <= META_KEPT {
            let text = self.text.get(start..self.at)?;
            LAST_META.with_borrow_mut(|last| {
                last.clear();
                last.push_str(text);
            });
        }
        Some(())
    }

    /// Passes the value at the cursor.
    fn value(&mut self, depth: u32) -> Option<()> {
        match self.peek()? {
            b'"' => self.string().map(drop),
            b'{' | b'[' if depth >= DEPTH => None,
            b'{' => self.object(|s, _| s.value(depth + 1)),
            b'[' => {
                self.at += 1;
                self.space();
                if self.eat(b']') {
                    return Some(());
                }
                loop {
                    self.value(depth + 1)?;
                    self.space();
                    if self.eat(b',') {
                        self.space();
                        continue;
                    }
                    return self.eat(b']').then_some(());
                }
            }
            b't' => self.word(b"true"),
            b'f' => self.word(b"false"),
            b'n' => self.word(b"null"),
            _ => self.number(),
        }
    }

    fn word(&mut self, word: &[u8]) -> Option<()> {
        let end = self.at + word.len();
        (self.bytes.get(self.at..end)? == word).then(|| self.at = end)
    }

    /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`
    fn number(&mut self) -> Option<()> {
        self.eat(b'-');
        match self.peek()? {
            b'0' => self.at += 1,
            b'1'..=b'9' => self.digits(),
            _ => return None,
        }
        if self.eat(b'.') {
            self.some_digits()?;
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.at += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.at += 1;
            }
            self.some_digits()?;
        }
        Some(())
    }

    fn digits(&mut self) {
        while let Some(b'0'..=b'9') = self.peek() {
            self.at += 1;
        }
    }

    fn some_digits(&mut self) -> Option<()> {
        let start = self.at;
        self.digits();
        (self.at > start).then_some(())
    }

    /// Passes the string at the cursor: no raw control characters, only JSON's escapes.
    fn string(&mut self) -> Option<Str> {
        let start = self.at;
        if !self.eat(b'"') {
            return None;
        }
        let mut escaped = false;
        loop {
            self.at += plain_run(self.bytes.get(self.at..)?);
            if self.eat(b'"') {
                return Some(Str {
                    range: start..self.at,
                    escaped,
                });
            }
            if self.peek()? != b'\\' {
                // A raw control character, or the end.
                return None;
            }
            escaped = true;
            self.at += 1;
            match self.peek()? {
                b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => self.at += 1,
                b'u' => {
                    let hex = self.bytes.get(self.at + 1..self.at + 5)?;
                    if !hex.iter().all(u8::is_ascii_hexdigit) {
                        return None;
                    }
                    self.at += 5;
                }
                _ => return None,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::value::RawValue;

    /// The envelope as serde reads it (what `jsonrpc` does when this pass says `None`).
    #[derive(Deserialize)]
    struct BySerde<'a> {
        #[serde(default, borrow)]
        jsonrpc: Option<&'a RawValue>,
        #[serde(default, borrow)]
        id: Option<&'a RawValue>,
        #[serde(default, borrow)]
        method: Option<&'a RawValue>,
        #[serde(default, borrow)]
        params: Option<&'a RawValue>,
        #[serde(default, borrow)]
        result: Option<&'a RawValue>,
        #[serde(default, borrow)]
        error: Option<&'a RawValue>,
    }

    /// What serde reads, as text; `None` when it refuses the text.
    fn by_serde(text: &str) -> Option<[Option<String>; 6]> {
        // `Option<&RawValue>` reads `null` as absent; the pass keeps it. Compare both as text.
        let env: BySerde<'_> = serde_json::from_str(text).ok()?;
        let own = |r: Option<&RawValue>| r.map(|r| r.get().to_owned());
        Some([
            own(env.jsonrpc),
            own(env.id),
            own(env.method),
            own(env.params),
            own(env.result),
            own(env.error),
        ])
    }

    fn by_pass(text: &str) -> Option<[Option<String>; 6]> {
        let env = scan(text)?;
        let own = |r: Option<&str>| r.filter(|r| *r != "null").map(str::to_owned);
        Some([
            own(env.jsonrpc),
            own(env.id),
            own(env.method),
            own(env.params.as_ref().map(|p| p.text)),
            own(env.result),
            own(env.error),
        ])
    }

    /// Whenever the pass reads a text, serde reads it too, to the same members; and the scan
    /// of the params is the one the walk of them alone gives.
    fn agrees(text: &str) -> bool {
        let Some(pass) = by_pass(text) else {
            return false;
        };
        assert_eq!(Some(&pass), by_serde(text).as_ref(), "{text:?}");
        if let Some(Found {
            text: params,
            scan: Some(scan),
        }) = scan(text).and_then(|e| e.params)
        {
            let walked = crate::raw_meta::scan(params);
            assert_eq!(scan.meta, walked.meta, "{text:?}");
            assert_eq!(scan.retry, walked.retry, "{text:?}");
            let each = |s: Option<crate::object_text::Spans>| {
                let mut all = Vec::new();
                if let Some(s) = s {
                    s.each(params, |k, v| all.push((k.to_owned(), v.to_owned())));
                }
                all
            };
            assert_eq!(each(scan.spans), each(walked.spans), "{text:?}");
        }
        true
    }

    #[test]
    fn plain_messages_are_read_in_one_pass() {
        for text in [
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":3},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#,
            r#" { "jsonrpc" : "2.0" , "id" : "x\"y" , "method" : "ping" } "#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{"a":[1,-2.5e+3,true,false,null,"\u00e9\n"]}}"#,
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"no"}}"#,
            r#"{"extra":[[],{}],"jsonrpc":"2.0","id":0,"method":"m","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":null}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":[1,2]}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"\u005fmeta":{},"_meta":{"a":1}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"requestState":"s","a":1,"b":2,"c":3,"d":4}}"#,
            "{}",
        ] {
            assert!(agrees(text), "the pass left {text:?} to serde");
        }
    }

    #[test]
    fn what_is_not_plain_is_left_to_serde() {
        for text in [
            "",
            "{",
            "[]",
            r#"{"id":1,}"#,
            r#"{"id":01}"#,
            r#"{"id":1.}"#,
            r#"{"id":1e}"#,
            r#"{"id":-}"#,
            r#"{"id":tru}"#,
            r#"{"id":"a\qb"}"#,
            r#"{"id":"a\u12"}"#,
            "{\"id\":\"a\tb\"}",
            r#"{"id":1,"id":2}"#,
            r#"{"params":{},"params":{}}"#,
            r#"{"i\u0064":1}"#,
            r#"{"id":1} x"#,
            r#"{"id":[1,]}"#,
            r#"{"id":{"a":1,}}"#,
            r#"{"id":{"a" 1}}"#,
            "{\"id\":1}\u{c}",
        ] {
            assert!(by_pass(text).is_none(), "{text:?}");
        }
        let deep = format!(r#"{{"id":{}1{}}}"#, "[".repeat(70), "]".repeat(70));
        assert!(by_pass(&deep).is_none());
        let shallow = format!(r#"{{"id":{}1{}}}"#, "[".repeat(60), "]".repeat(60));
        assert!(agrees(&shallow));
    }

    /// A `_meta` written as the last one is stepped over, and gives what reading it gives;
    /// text after it that is not JSON is still refused.
    #[test]
    fn a_repeated_meta_is_stepped_over_and_still_checked_around() {
        let meta = r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","k":[1,{"x":null}]}"#;
        let call = |meta: &str, tail: &str| {
            format!(r#"{{"jsonrpc":"2.0","id":1,"method":"m","params":{{"_meta":{meta}{tail}}}}}"#)
        };
        for _ in 0..3 {
            let text = call(meta, r#","a":1"#);
            assert!(agrees(&text), "{text:?}");
            LAST_META.with_borrow(|last| assert_eq!(last, meta));
            let params = scan(&text).and_then(|e| e.params).expect("params");
            let at = params.scan.and_then(|s| s.meta).expect("a _meta");
            assert_eq!(&params.text[at], meta);
        }
        // The kept text is a prefix of these values, or of the text at `_meta`: each is
        // refused as serde refuses it.
        for text in [
            call(meta, "x"),
            call(&format!("{meta}1"), ""),
            call(meta, r#","a":}"#),
            call(&meta[..meta.len() - 1], ""),
        ] {
            assert!(by_pass(&text).is_none(), "{text:?}");
            assert!(by_serde(&text).is_none(), "{text:?}");
        }
        // Another `_meta` is read in full, and kept in its place.
        let other = r#"{"b":"\u00e9"}"#;
        assert!(agrees(&call(other, "")));
        LAST_META.with_borrow(|last| assert_eq!(last, other));
        let long = format!(r#"{{"pad":"{}"}}"#, "x".repeat(META_KEPT));
        assert!(agrees(&call(&long, "")));
        LAST_META.with_borrow(|last| assert_eq!(last, other));
    }

    /// Random texts near JSON: every one the pass reads, serde reads the same way.
    #[test]
    fn the_pass_never_reads_what_serde_refuses() {
        let pieces = [
            "{",
            "}",
            "[",
            "]",
            ",",
            ":",
            " ",
            "\"",
            "\\",
            "\\u00",
            "e9",
            "\\n",
            "\"jsonrpc\"",
            "\"id\"",
            "\"method\"",
            "\"params\"",
            "\"_meta\"",
            "\"requestState\"",
            "\"a\"",
            "1",
            "0",
            "-",
            ".5",
            "e3",
            "E-2",
            "true",
            "null",
            "fals",
            "\"2.0\"",
            "\t",
            "\u{1}",
            "é",
        ];
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let (mut read, mut left) = (0, 0);
        for _ in 0..200_000 {
            let mut text = String::from("{");
            let len = next() % 24;
            for _ in 0..len {
                text.push_str(pieces[(next() % pieces.len() as u64) as usize]);
            }
            if next() % 2 == 0 {
                text.push('}');
            }
            if by_pass(&text).is_some() {
                read += 1;
                assert!(agrees(&text));
            } else {
                left += 1;
            }
            // Valid messages with random params, too.
            let params = &text[1..];
            let message = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"m","params":{{{params}}}"#);
            if by_pass(&message).is_some() {
                read += 1;
                assert!(agrees(&message));
            } else {
                assert!(
                    serde_json::from_str::<serde::de::IgnoredAny>(&message).is_err(),
                    "{message:?} left to serde"
                );
            }
        }
        // The generator reaches both sides.
        assert!(
            read > 1_000 && left > 1_000,
            "{read} read, {left} left to serde"
        );
    }
}

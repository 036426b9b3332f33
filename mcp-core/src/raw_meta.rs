//! [`RawMeta`]: a message's `params._meta` as the client wrote it, parsed only on demand.
//!
//! A 2026 client sends the same envelope (version, capabilities, client info) on every request,
//! so the engine compares its text with the last one it read (see `era::EnvelopeCache`) and
//! builds a [`Meta`] map only when something asks for one (a handler's `ctx.meta()`, a
//! progress token, a trace context, an envelope not seen before).

use std::ops::Range;
use std::sync::OnceLock;

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::object_text::{walk, Spans};
use crate::shared_text::SharedText;
use crate::types::Meta;

/// `params._meta` of one message: its text, and the map it parses to once someone asks.
#[derive(Clone)]
pub(crate) struct RawMeta {
    /// Valid JSON: a piece of a message that was valid JSON, or what serde_json wrote.
    text: SharedText,
    parsed: OnceLock<Option<Meta>>,
}

impl std::fmt::Debug for RawMeta {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("RawMeta").field(&self.text).finish()
    }
}

impl RawMeta {
    /// `_meta` written as `text`; `None` unless it is a JSON object (anything else counts as no
    /// `_meta`, as when it is read into a [`Meta`]).
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn new(text: &RawValue) -> Option<Self> {
        Self::from_text(SharedText::from(text.get()))
    }

    /// `_meta` written as `text`, which must be valid JSON (see [`RawMeta::new`]).
    fn from_text(text: SharedText) -> Option<Self> {
        text.starts_with('{').then(|| Self {
            text,
            parsed: OnceLock::new(),
        })
    }

    /// The `_meta` at `range` of `params` (valid JSON), shared with them.
    pub(crate) fn at(params: &SharedText, range: Range<usize>) -> Option<Self> {
        Self::from_text(params.piece(params.get(range)?)?)
    }

    /// A `_meta` given as a map already (params a middleware set as a value).
    pub(crate) fn from_map(meta: &Meta) -> Option<Self> {
        let text = serde_json::to_string(meta).ok()?.into();
        let parsed = OnceLock::from(Some(meta.clone()));
        Some(Self { text, parsed })
    }

    /// The text as the client wrote it.
    pub(crate) fn text(&self) -> &str {
        &self.text
    }

    /// The map, owned (parsed now unless it was already).
    pub(crate) fn into_parsed(self) -> Option<Meta> {
        match self.parsed.into_inner() {
            Some(parsed) => parsed,
            None => serde_json::from_str(&self.text).ok(),
        }
    }

    /// Whether the text was parsed (for tests of who reads it).
    #[cfg(test)]
    pub(crate) fn is_parsed(&self) -> bool {
        self.parsed.get().is_some()
    }

    /// The map (parsed on the first call; `None` if the object does not parse as one, which
    /// cannot happen for text that came out of a valid message).
    pub(crate) fn parsed(&self) -> Option<&Meta> {
        self.parsed
            .get_or_init(|| serde_json::from_str(&self.text).ok())
            .as_ref()
    }
}

/// `_meta` of an object's params, read as text without building anything else: for
/// `#[serde(deserialize_with = "object_meta")]` on an `Option<RawMeta>` field.
#[cfg_attr(not(feature = "http"), allow(dead_code))]
pub(crate) fn object_meta<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<RawMeta>, D::Error> {
    Ok(Option::<&RawValue>::deserialize(d)?.and_then(RawMeta::new))
}

/// Reads `params._meta` from the text of a message's params, which must be valid JSON (`None`
/// when the params are not an object, have no `_meta` or two, or it is not an object).
///
/// A scan of the top-level members, not a parse: the text was checked when the message was
/// decoded, and only `_meta` is copied out.
#[cfg(test)]
pub(crate) fn read(params: &str) -> Option<RawMeta> {
    scan(params).meta(&params.into())
}

/// The members of a retry of a request that asked for input (`Params::may_be_a_retry`).
pub(crate) const RETRY_MEMBERS: [&str; 2] = ["inputResponses", "requestState"];

/// What one scan of a params object's top-level members finds.
#[derive(Debug, Clone)]
pub(crate) struct Scan {
    /// Where `_meta` is in the params (`None`: none, two, or not an object).
    pub(crate) meta: Option<Range<usize>>,
    /// A member may be `inputResponses` or `requestState`: one is so named, or a name has
    /// escapes, or the text could not be scanned (never a false "no").
    pub(crate) retry: bool,
    /// Where every member is, for the next reader (`None`: not walked, or too many members).
    pub(crate) spans: Option<Spans>,
}

impl Scan {
    /// The `_meta` found, as a piece of `params` (the text scanned), not a copy.
    pub(crate) fn meta(&self, params: &SharedText) -> Option<RawMeta> {
        RawMeta::at(params, self.meta.clone()?)
    }
}

/// Scans the top-level members of `params` (valid JSON) once, for `_meta` and for the members
/// of a retry, and records where each member is.
pub(crate) fn scan(params: &str) -> Scan {
    let mut finder = Finder::default();
    let walked = walk(params, |key, value| finder.member(params, key, value));
    finder.finish(walked.is_some())
}

/// What [`scan`] keeps while it walks the members, given one by one by whoever walks them
/// (the walk of params alone, or the one pass over a whole message in `message_scan`).
#[derive(Debug)]
pub(crate) struct Finder {
    meta: Option<Range<usize>>,
    metas: u32,
    retry: bool,
    spans: Spans,
    fits: bool,
}

impl Default for Finder {
    fn default() -> Self {
        Self {
            meta: None,
            metas: 0,
            retry: false,
            spans: Spans::default(),
            fits: true,
        }
    }
}

impl Finder {
    /// The member whose quoted name is at `key` and whose value is at `value` in `params`.
    pub(crate) fn member(&mut self, params: &str, key: Range<usize>, value: Range<usize>) {
        self.fits &= self.spans.push(&key, &value);
        // The name between its quotes, as bytes: most names are plain ASCII.
        let Some(name) = params
            .as_bytes()
            .get(key.start + 1..key.end.saturating_sub(1))
        else {
            return;
        };
        let escaped = name.contains(&b'\\');
        // (A name with escapes may spell one of them.)
        if escaped || RETRY_MEMBERS.iter().any(|m| m.as_bytes() == name) {
            self.retry = true;
        }
        let is_meta = match escaped {
            false => name == b"_meta",
            true => params.get(key).is_some_and(is_meta_key),
        };
        if is_meta {
            self.metas += 1;
            self.meta = Some(value);
        }
    }

    /// What was found; `walked`: every member was seen.
    pub(crate) fn finish(self, walked: bool) -> Scan {
        Scan {
            // Two `_meta` members: serde refuses such params (duplicate field).
            meta: self.meta.filter(|_| walked && self.metas == 1),
            retry: self.retry || !walked,
            spans: (walked && self.fits).then_some(self.spans),
        }
    }
}

/// Whether a key (quoted, as written) is `_meta`, escapes included.
fn is_meta_key(quoted: &str) -> bool {
    match quoted.contains('\\') {
        false => quoted == "\"_meta\"",
        true => serde_json::from_str::<String>(quoted).is_ok_and(|k| k == "_meta"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `read` must agree with: serde reading the params' `_meta` member.
    fn by_serde(params: &str) -> Option<String> {
        #[derive(Deserialize)]
        struct Peek {
            #[serde(rename = "_meta", default, deserialize_with = "object_meta")]
            meta: Option<RawMeta>,
        }
        let meta = serde_json::from_str::<Peek>(params).ok()?.meta?;
        Some(meta.text().to_owned())
    }

    #[test]
    fn the_scan_finds_what_serde_finds() {
        let cases = [
            r#"{}"#,
            r#" { } "#,
            r#"{"_meta":{}}"#,
            r#"{ "_meta" : { "a" : [ 1 , "}" ] } , "b" : 2 }"#,
            r#"{"a":"\"_meta\":{}","_meta":{"k":"v\\"}}"#,
            r#"{"a":{"_meta":{"x":1}},"b":[{"_meta":{}}]}"#,
            r#"{"\u005fmeta":{"escaped":true}}"#,
            r#"{"_meta":{"a":1},"_meta":{"b":2}}"#,
            r#"{"_meta":null,"name":"x"}"#,
            r#"{"_meta":"text"}"#,
            r#"{"_meta":[1]}"#,
            r#"{"n":-1.5e3,"t":true,"f":false,"z":null,"_meta":{"q":"\ud83d\ude00"}}"#,
            r#"{"_metadata":{},"meta":{},"_Meta":{}}"#,
            "{\n\t\"_meta\"\n:\n{\"a\":\n1}\n}",
            r#"{"a":[[],{},[{}]],"_meta":{"b":[[[]]]},"c":"]}"}"#,
            r#""_meta""#,
        ];
        // (serde also reads a struct out of an array, by position; params never are one.)
        for case in cases {
            assert!(
                serde_json::from_str::<serde_json::Value>(case).is_ok(),
                "{case}"
            );
            assert_eq!(
                read(case).map(|m| m.text().to_owned()),
                by_serde(case),
                "{case}"
            );
        }
    }

    /// Random params (nested values, escapes, spacing, `_meta` anywhere or twice or not an
    /// object): the scan and serde agree on every one.
    #[test]
    fn the_scan_agrees_with_serde_on_random_params() {
        let mut seed = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = move |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        fn value(next: &mut impl FnMut(u64) -> u64, depth: u32) -> String {
            match next(if depth > 3 { 5 } else { 8 }) {
                0 => "null".into(),
                1 => ["true", "false", "-0.5e-3", "12"][next(4) as usize].into(),
                2 | 3 => [
                    "\"a\"",
                    r#""}]\"{[""#,
                    r#""\\""#,
                    r#""\u005f\n""#,
                    r#""_meta""#,
                ][next(5) as usize]
                    .into(),
                4 => "{}".into(),
                5 => {
                    let items: Vec<String> = (0..next(4)).map(|_| value(next, depth + 1)).collect();
                    format!("[{}]", items.join(" , "))
                }
                _ => object(next, depth + 1),
            }
        }
        fn object(next: &mut impl FnMut(u64) -> u64, depth: u32) -> String {
            let keys = [
                "\"_meta\"",
                "\"a\"",
                r#""\u005fmeta""#,
                "\"_met\"",
                "\"name\"",
            ];
            let members: Vec<String> = (0..next(5))
                .map(|_| {
                    let key = keys[next(keys.len() as u64) as usize];
                    let space = ["", " ", "\n"][next(3) as usize];
                    format!("{space}{key}{space}:{space}{}", value(next, depth))
                })
                .collect();
            format!("{{{}}}", members.join(","))
        }
        let mut found = 0;
        let mut recorded_all = 0;
        for _ in 0..20_000 {
            let params = object(&mut next, 0);
            assert!(
                serde_json::from_str::<serde_json::Value>(&params).is_ok(),
                "{params}"
            );
            let scanned = read(&params).map(|m| m.text().to_owned());
            assert_eq!(scanned, by_serde(&params), "{params}");
            found += usize::from(scanned.is_some());
            // The members recorded are those a walk finds (when they fit).
            let mut walked = Vec::new();
            crate::object_text::members(&params, |k, v| walked.push((k, v)));
            if let Some(spans) = scan(&params).spans {
                let mut recorded = Vec::new();
                spans.each(&params, |k, v| recorded.push((k, v)));
                assert_eq!(recorded, walked, "{params}");
                recorded_all += 1;
            } else {
                assert!(walked.len() > Spans::<4>::CAPACITY, "{params}");
            }
        }
        assert!(found > 1_000, "only {found} params had a _meta object");
        assert!(
            recorded_all > 1_000,
            "only {recorded_all} params were recorded"
        );
    }

    #[test]
    fn only_an_object_is_a_meta_and_it_parses_once() {
        assert!(read(r#"{"name":"x"}"#).is_none());
        assert!(read(r#"{"_meta":null}"#).is_none());
        assert!(read(r#"{"_meta":5}"#).is_none());
        assert!(read(r#"[1]"#).is_none());
        let meta = read(r#"{"a":[1,{"_meta":2}],"_meta":{"k":"v"},"b":"\"_meta\""}"#).unwrap();
        assert_eq!(meta.text(), r#"{"k":"v"}"#);
        let first = meta.parsed().unwrap() as *const Meta;
        assert_eq!(meta.parsed().unwrap()["k"], "v");
        assert_eq!(first, meta.parsed().unwrap() as *const Meta);
    }
}

//! RFC 6570 URI templates, matched in reverse: which variables would expand to this URI.
//!
//! Supported expressions: `{var}` (simple: one segment, no `/`), `{+var}` (reserved: may span
//! `/`), `{/var}` (one path segment after a `/`), `{?a,b}` (query parameters, each optional),
//! `{#var}` (fragment). Variables are percent-decoded. A value that could walk out of its place
//! (`..` segments, a leading `/`, a backslash, a NUL) is refused.

use std::collections::{BTreeMap, HashSet};

/// The most end positions tried for one variable.
const MAX_CANDIDATES: usize = 64;

#[derive(Debug, Clone, PartialEq)]
enum Part {
    Literal(String),
    Simple(String),
    Reserved(String),
    Segment(String),
    Query(Vec<String>),
    Fragment(String),
}

/// A parsed URI template.
///
/// ```
/// use modelctx_core::server::UriTemplate;
///
/// let t = UriTemplate::parse("books://{id}/chapters/{n}").unwrap();
/// let vars = t.matches("books://dune/chapters/3").unwrap();
/// assert_eq!(vars["id"], "dune");
/// assert_eq!(vars["n"], "3");
/// assert!(t.matches("books://../chapters/3").is_none(), "path traversal is refused");
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct UriTemplate {
    text: String,
    parts: Vec<Part>,
}

impl UriTemplate {
    /// Parses `text`; `Err` names what is wrong.
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut parts = Vec::new();
        let mut rest = text;
        while let Some(open) = rest.find('{') {
            if open > 0 {
                parts.push(Part::Literal(rest[..open].to_owned()));
            }
            let close = rest[open..]
                .find('}')
                .map(|i| open + i)
                .ok_or_else(|| format!("unclosed `{{` in URI template `{text}`"))?;
            let expr = &rest[open + 1..close];
            let (op, names) = match expr.chars().next() {
                Some(c @ ('+' | '/' | '?' | '#')) => (Some(c), &expr[1..]),
                _ => (None, expr),
            };
            let names: Vec<String> = names.split(',').map(|n| n.trim().to_owned()).collect();
            if names
                .iter()
                .any(|n| n.is_empty() || !n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
            {
                return Err(format!(
                    "invalid variable in `{{{expr}}}` of URI template `{text}`"
                ));
            }
            let single = |names: &[String]| -> Result<String, String> {
                match names {
                    [one] => Ok(one.clone()),
                    _ => Err(format!(
                        "`{{{expr}}}` takes one variable in URI template `{text}`"
                    )),
                }
            };
            parts.push(match op {
                None => Part::Simple(single(&names)?),
                Some('+') => Part::Reserved(single(&names)?),
                Some('/') => Part::Segment(single(&names)?),
                Some('#') => Part::Fragment(single(&names)?),
                _ => Part::Query(names),
            });
            rest = &rest[close + 1..];
        }
        if !rest.is_empty() {
            parts.push(Part::Literal(rest.to_owned()));
        }
        Ok(Self {
            text: text.to_owned(),
            parts,
        })
    }

    /// The template as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The variable names, in order.
    pub fn variables(&self) -> Vec<&str> {
        self.parts
            .iter()
            .flat_map(|p| match p {
                Part::Literal(_) => Vec::new(),
                Part::Simple(n) | Part::Reserved(n) | Part::Segment(n) | Part::Fragment(n) => {
                    vec![n.as_str()]
                }
                Part::Query(ns) => ns.iter().map(String::as_str).collect(),
            })
            .collect()
    }

    /// True when the template has no variables (a plain URI).
    pub fn is_static(&self) -> bool {
        self.parts.iter().all(|p| matches!(p, Part::Literal(_)))
    }

    /// The variables that expand to `uri`, or `None` if it does not match (or a value is
    /// unsafe).
    pub fn matches(&self, uri: &str) -> Option<BTreeMap<String, String>> {
        let mut vars = BTreeMap::new();
        let mut failed = HashSet::new();
        if match_parts(&self.parts, uri, &mut vars, &mut failed) {
            Some(vars)
        } else {
            None
        }
    }
}

/// Matches `parts` against `input`. `failed` remembers the (parts left, input left) states
/// already known not to match, so a template with many variables stays polynomial on a
/// hostile URI instead of trying every combination of boundaries.
fn match_parts(
    parts: &[Part],
    input: &str,
    vars: &mut BTreeMap<String, String>,
    failed: &mut HashSet<(usize, usize)>,
) -> bool {
    let state = (parts.len(), input.len());
    if failed.contains(&state) {
        return false;
    }
    let matched = match_first(parts, input, vars, failed);
    if !matched {
        failed.insert(state);
    }
    matched
}

fn match_first(
    parts: &[Part],
    input: &str,
    vars: &mut BTreeMap<String, String>,
    failed: &mut HashSet<(usize, usize)>,
) -> bool {
    #[cfg(test)]
    tests::STEPS.with(|s| s.set(s.get() + 1));
    let Some((first, rest)) = parts.split_first() else {
        return input.is_empty();
    };
    match first {
        Part::Literal(lit) => input
            .strip_prefix(lit.as_str())
            .is_some_and(|tail| match_parts(rest, tail, vars, failed)),
        Part::Query(names) => {
            if !rest.is_empty() {
                return false;
            }
            let query = match input.strip_prefix('?') {
                Some(q) => q,
                None if input.is_empty() => return true,
                None => return false,
            };
            for pair in query.split('&').filter(|p| !p.is_empty()) {
                let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
                if !names.iter().any(|n| n == k) {
                    return false;
                }
                match crate::percent::decode(v) {
                    Some(v) if safe(&v) => {
                        vars.insert(k.to_owned(), v);
                    }
                    _ => return false,
                }
            }
            true
        }
        Part::Simple(name) | Part::Reserved(name) | Part::Segment(name) | Part::Fragment(name) => {
            let (input, allow_slash) = match first {
                Part::Segment(_) => match input.strip_prefix('/') {
                    Some(i) => (i, false),
                    None => return false,
                },
                Part::Fragment(_) => match input.strip_prefix('#') {
                    Some(i) => (i, true),
                    None => return false,
                },
                Part::Reserved(_) => (input, true),
                _ => (input, false),
            };
            // Where the value may end: only where what follows can start, longest first, and
            // never more than MAX_CANDIDATES places (a long hostile URI stays linear).
            let stop = input
                .char_indices()
                .find(|&(_, c)| (!allow_slash && c == '/') || c == '?' || c == '#')
                .map_or(input.len(), |(i, _)| i);
            let boundaries = |prefix: &str| -> Vec<usize> {
                input[..stop]
                    .match_indices(prefix)
                    .map(|(i, _)| i)
                    .chain((input[stop..].starts_with(prefix)).then_some(stop))
                    .filter(|&i| i > 0)
                    .collect()
            };
            let ends: Vec<usize> = match rest.first() {
                None | Some(Part::Query(_)) | Some(Part::Fragment(_)) => vec![stop],
                Some(Part::Literal(lit)) => boundaries(lit),
                Some(Part::Segment(_)) => boundaries("/"),
                Some(_) => input[..stop]
                    .char_indices()
                    .map(|(i, _)| i)
                    .skip(1)
                    .chain(std::iter::once(stop))
                    .collect(),
            };
            let ends: Vec<usize> = ends.into_iter().rev().take(MAX_CANDIDATES).collect();
            for end in ends {
                let raw = &input[..end];
                let Some(value) = crate::percent::decode(raw) else {
                    continue;
                };
                if !safe(&value) || (!allow_slash && value.contains('/')) {
                    continue;
                }
                let mut attempt = vars.clone();
                attempt.insert(name.clone(), value);
                if match_parts(rest, &input[end..], &mut attempt, failed) {
                    *vars = attempt;
                    return true;
                }
            }
            false
        }
    }
}

/// Refuses values that could escape their place in a path.
fn safe(value: &str) -> bool {
    !value.is_empty()
        && !value.starts_with('/')
        && !value.contains('\\')
        && !value.contains('\0')
        && !value.split('/').any(|seg| seg == ".." || seg == ".")
}

#[cfg(test)]
mod tests {
    thread_local! {
        /// Match steps taken on this thread (work, not time).
        pub(super) static STEPS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
    }

    #[test]
    fn many_variables_against_a_hostile_uri_take_polynomial_work() {
        // Found by fuzzing: adjacent variables used to try every combination of boundaries.
        let t = UriTemplate::parse("x://{a}.{b}.{c}.{d}.{e}.{f}{g}{h}!").unwrap();
        let uri = format!("x://{}", "a.".repeat(200));
        STEPS.with(|s| s.set(0));
        assert_eq!(t.matches(&uri), None);
        let steps = STEPS.with(|s| s.get());
        assert!(steps < 200_000, "{steps} steps");
        let ok = UriTemplate::parse("x://{a}.{b}/{c}").unwrap();
        let vars = ok.matches("x://1.2/3").unwrap();
        assert_eq!(vars["a"], "1");
        assert_eq!(vars["b"], "2");
        assert_eq!(vars["c"], "3");
    }

    use super::*;

    #[test]
    fn each_operator_matches_and_traversal_is_refused() {
        let t = UriTemplate::parse("file:///{+path}").unwrap();
        assert_eq!(t.matches("file:///docs/a.md").unwrap()["path"], "docs/a.md");
        assert!(t.matches("file:///docs/../etc/passwd").is_none());
        assert!(
            t.matches("file:///%2e%2e/etc").is_none(),
            "encoded traversal too"
        );
        let t = UriTemplate::parse("books://{id}").unwrap();
        assert!(
            t.matches("books://a/b").is_none(),
            "a simple variable is one segment"
        );
        assert_eq!(t.matches("books://caf%C3%A9").unwrap()["id"], "café");
        let t = UriTemplate::parse("search://books{?q,limit}").unwrap();
        let v = t.matches("search://books?q=dune&limit=5").unwrap();
        assert_eq!((v["q"].as_str(), v["limit"].as_str()), ("dune", "5"));
        assert!(t.matches("search://books?evil=1").is_none());
        let t = UriTemplate::parse("repo://x{/owner}{/name}").unwrap();
        let v = t.matches("repo://x/rust-lang/rust").unwrap();
        assert_eq!(
            (v["owner"].as_str(), v["name"].as_str()),
            ("rust-lang", "rust")
        );
        assert!(UriTemplate::parse("bad://{unclosed").is_err());
        assert_eq!(
            UriTemplate::parse("a://{x}/{y}").unwrap().variables(),
            ["x", "y"]
        );
    }

    #[test]
    fn literals_after_a_variable_and_hostile_uris() {
        let t = UriTemplate::parse("books://{id}/chapters/{n}").unwrap();
        let v = t.matches("books://dune/chapters/3").unwrap();
        assert_eq!((v["id"].as_str(), v["n"].as_str()), ("dune", "3"));
        let t = UriTemplate::parse("notes://{+path}.md").unwrap();
        assert_eq!(t.matches("notes://a/b.c.md").unwrap()["path"], "a/b.c");
        // A megabyte-long hostile value is refused after a bounded number of attempts.
        let t = UriTemplate::parse("books://{id}").unwrap();
        let uri = format!("books://{}\\", "a".repeat(1 << 20));
        assert!(t.matches(&uri).is_none(), "a backslash is refused");
        let t = UriTemplate::parse("books://{id}.json").unwrap();
        let uri = format!("books://{}", ".json".repeat(200_000));
        let id = &t
            .matches(&uri)
            .expect("the longest value that leaves `.json` matches")["id"];
        assert_eq!(id.len(), uri.len() - "books://".len() - ".json".len());
    }
}

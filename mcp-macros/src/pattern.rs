//! `#[arg(pattern = "...")]` is checked when the program compiles, not when the server starts.
//!
//! The built-in validator reads patterns with `regex-lite` (the `jsonschema` feature adds
//! `fancy-regex` for what it does not read, e.g. look-around). This check parses the syntax
//! with `regex-syntax` and reports only the mistakes that are mistakes in every dialect (an
//! unclosed class or group, a repetition of nothing, a reversed range or count); whatever the
//! dialects read differently is left to the validator, which refuses such a pattern when the
//! server is built, naming it.

use regex_syntax::ast::{parse::Parser, ErrorKind};

/// `Err(message)` when `pattern` is not a regular expression.
pub(crate) fn check(pattern: &str) -> Result<(), String> {
    let Err(e) = Parser::new().parse(pattern) else {
        return Ok(());
    };
    let what = match e.kind() {
        ErrorKind::ClassUnclosed => "a `[` is not closed (a literal `[` is written `\\[`)",
        ErrorKind::GroupUnclosed => "a `(` is not closed",
        ErrorKind::GroupUnopened => "a `)` has no `(`",
        ErrorKind::RepetitionMissing => "a repetition (`*`, `+`, `?`, `{n}`) has nothing to repeat",
        ErrorKind::RepetitionCountInvalid => "a repetition `{min,max}` has min above max",
        ErrorKind::ClassRangeInvalid => "a class range `[a-z]` has its start after its end",
        _ => return Ok(()),
    };
    let at = e.span().start.offset;
    Err(format!(
        "`pattern` is not a valid regular expression: {what}, at byte {at}"
    ))
}

#[cfg(test)]
mod tests {
    use super::check;

    #[test]
    fn mistakes_in_both_dialects_are_reported() {
        for bad in ["^[0-9X{10}$", "(ab", "ab)", "*a", "a{3,1}", "[z-a]"] {
            assert!(check(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn ecma_only_syntax_is_left_to_the_validator() {
        for ok in [
            r"^\/api$",
            r"(?=a)b",
            r"(a)\1",
            r"\p{L}+",
            r"[\w-]+",
            r"a{2,}",
            r"\u00e9",
            r"\cM",
            r"(?<year>\d{4})\k<year>",
            r"^[a-z ]+$",
        ] {
            assert!(check(ok).is_ok(), "{ok}");
        }
    }
}

//! `#[arg(pattern = "...")]` is checked when the program compiles, not when the server starts.
//!
//! The validator reads patterns as ECMA-262 regular expressions (the `jsonschema` crate, on
//! `fancy-regex`); this check parses the syntax with `regex-syntax` and lets through what only
//! the validator supports (look-around, back-references).

use regex_syntax::ast::{parse::Parser, ErrorKind};

/// `Err(message)` when `pattern` is not a regular expression.
pub(crate) fn check(pattern: &str) -> Result<(), String> {
    match Parser::new().parse(pattern) {
        Ok(_) => Ok(()),
        Err(e) => match e.kind() {
            ErrorKind::UnsupportedLookAround | ErrorKind::UnsupportedBackreference => Ok(()),
            kind => {
                let at = e.span().start.offset;
                Err(format!(
                    "`pattern` is not a valid regular expression: {kind} (at byte {at} of the pattern)"
                ))
            }
        },
    }
}

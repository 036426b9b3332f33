//! Where an attributed function sits: a macro sees only the function, so whether it is an
//! associated function of an impl block (or a trait) is read from the source file around it.
//!
//! A free `#[tool]` function declares a handle struct, a module and an impl next to it; inside
//! an impl block rustc refuses each of those with its own message about items the user never
//! wrote. Knowing the place, the macro says once what to do instead. When the source cannot be
//! read (a function written by another macro, a span without a file), the answer is "not in a
//! block", and expansion goes on as for a free function.

use proc_macro2::Span;

/// The block directly around a function.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Block {
    /// A module, a function body or anything else a free function may sit in.
    Free,
    /// `impl Type { .. }` or `impl Trait for Type { .. }`.
    Impl,
    /// `trait Name { .. }`.
    Trait,
}

/// The block around the function whose name is `ident`.
pub(crate) fn enclosing_block(ident: &syn::Ident) -> Block {
    source_around(ident.span(), &ident.to_string())
        .map_or(Block::Free, |(text, at)| block_at(&text, at))
}

/// The one error for a free-function attribute (`what`: `tool`, `resource`, `prompt`) on a
/// method (`&self`) or an associated function of an impl block without `#[tools]`, or in a
/// trait; the caller gives the function back after it, as written less its `#[arg]`s.
pub(crate) fn misplaced(sig: &syn::Signature, what: &str) -> Option<syn::Error> {
    if let Some(syn::FnArg::Receiver(receiver)) = sig.inputs.first() {
        return Some(syn::Error::new_spanned(
            receiver,
            format!("#[{what}] on a method needs #[tools] on its impl block"),
        ));
    }
    let name = &sig.ident;
    let message = match enclosing_block(name) {
        Block::Free => return None,
        Block::Impl => format!(
            "#[{what}] on `{name}` in an impl block needs #[tools] on the block (then `{name}` may take `&self` to share the block's value); or move `{name}` out of the impl block"
        ),
        Block::Trait => format!(
            "#[{what}] does not go in a trait: move `{name}` out of the trait, or into an impl block with #[tools]"
        ),
    };
    Some(syn::Error::new(name.span(), message))
}

/// The source file of `span` and the byte offset of `span` in it, when the text there is
/// `expected` (so a span from another macro's output is never misread).
fn source_around(span: Span, expected: &str) -> Option<(std::rc::Rc<str>, usize)> {
    // Compiled before Rust 1.88, the compiler gives no file (and the answer is "free").
    let path = span.local_file()?;
    let start = span.start();
    let (line, column) = (start.line, start.column + 1);
    let text = crate::source_files::read(&path)?;
    if line == 0 {
        return None;
    }
    let line_start = if line == 1 {
        0
    } else {
        text.match_indices('\n').nth(line - 2)?.0 + 1
    };
    let line_text = &text[line_start..];
    // The column counts characters; tried as bytes too.
    let by_chars = line_text
        .char_indices()
        .nth(column.checked_sub(1)?)
        .map(|(i, _)| line_start + i);
    let by_bytes = Some(line_start + column.checked_sub(1)?);
    let at = [by_chars, by_bytes].into_iter().flatten().find(|&at| {
        text.get(at..)
            .is_some_and(|rest| rest.starts_with(expected))
    })?;
    Some((text, at))
}

/// The kind of the innermost `{ .. }` open at byte `at` of `text`.
pub(crate) fn block_at(text: &str, at: usize) -> Block {
    let bytes = text.as_bytes();
    let end = at.min(bytes.len());
    // Per open brace: its kind, and the words of the item being read at that level.
    let mut frames: Vec<(Block, Header)> = vec![(Block::Free, Header::default())];
    let mut i = 0;
    while i < end {
        let c = bytes[i];
        let Some((_, header)) = frames.last_mut() else {
            break;
        };
        match c {
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                i = text[i..].find('\n').map_or(bytes.len(), |n| i + n);
                continue;
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                i = skip_block_comment(bytes, i);
                continue;
            }
            b'"' => {
                i = skip_string(bytes, i + 1);
                continue;
            }
            b'\'' => {
                i = skip_quote(text, i);
                continue;
            }
            b'{' => {
                let kind = header.kind();
                frames.push((kind, Header::default()));
            }
            b'}' => {
                if frames.len() > 1 {
                    frames.pop();
                }
                if let Some((_, parent)) = frames.last_mut() {
                    *parent = Header::default();
                }
            }
            b';' if header.nesting == 0 => *header = Header::default(),
            b'(' | b'[' => header.nesting += 1,
            b')' | b']' => header.nesting = header.nesting.saturating_sub(1),
            c if c.is_ascii_alphabetic() || c == b'_' => {
                let start = i;
                while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                    i += 1;
                }
                let word = &text[start..i];
                if let Some(next) = skip_prefixed_literal(bytes, word, i) {
                    i = next;
                } else if header.nesting == 0 && header.words.len() < 4 {
                    header.words.push(word.to_owned());
                }
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    frames.last().map_or(Block::Free, |(kind, _)| *kind)
}

/// The first words of an item, outside parentheses and brackets (attributes, visibility
/// paths): enough to tell `impl` and `trait` from the rest.
#[derive(Default)]
struct Header {
    words: Vec<String>,
    nesting: usize,
}

impl Header {
    fn kind(&self) -> Block {
        let first = self
            .words
            .iter()
            .find(|w| !matches!(w.as_str(), "pub" | "unsafe" | "default" | "auto"));
        match first.map(String::as_str) {
            Some("impl") => Block::Impl,
            Some("trait") => Block::Trait,
            _ => Block::Free,
        }
    }
}

fn skip_block_comment(bytes: &[u8], start: usize) -> usize {
    let (mut i, mut depth) = (start + 2, 1usize);
    while i < bytes.len() && depth > 0 {
        if bytes[i] == b'/' && bytes.get(i + 1) == Some(&b'*') {
            depth += 1;
            i += 2;
        } else if bytes[i] == b'*' && bytes.get(i + 1) == Some(&b'/') {
            depth -= 1;
            i += 2;
        } else {
            i += 1;
        }
    }
    i
}

/// Past the closing quote of a string whose text starts at `i`.
fn skip_string(bytes: &[u8], mut i: usize) -> usize {
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return i + 1,
            _ => i += 1,
        }
    }
    i
}

/// A char literal (`'a'`, `'\n'`, `'\''`) is skipped whole; a lifetime only its quote.
fn skip_quote(text: &str, i: usize) -> usize {
    let bytes = text.as_bytes();
    if bytes.get(i + 1) == Some(&b'\\') {
        let mut j = i + 3;
        while j < bytes.len() && bytes[j] != b'\'' {
            j += 1;
        }
        return j + 1;
    }
    match text[i + 1..].chars().next() {
        Some(c) if text[i + 1 + c.len_utf8()..].starts_with('\'') => i + 2 + c.len_utf8(),
        _ => i + 1,
    }
}

/// After a word that prefixes a literal (`b"..."`, `r#"..."#`, `br".."`, `c".."`, `b'x'`): past
/// the literal. `None` when the word is an identifier (`r#type` is one).
fn skip_prefixed_literal(bytes: &[u8], word: &str, i: usize) -> Option<usize> {
    let raw = matches!(word, "r" | "br" | "cr");
    match bytes.get(i) {
        Some(b'"') if raw => {
            let close = (i + 1..bytes.len()).find(|&j| bytes[j] == b'"')?;
            Some(close + 1)
        }
        Some(b'"') if matches!(word, "b" | "c") => Some(skip_string(bytes, i + 1)),
        Some(b'\'') if word == "b" => {
            // A few bytes from the quote on (a byte literal is short: `b'\x7f'`), not a pass
            // over the rest of the file per literal.
            let chunk = &bytes[i..(i + 16).min(bytes.len())];
            let text = match std::str::from_utf8(chunk) {
                Ok(text) => text,
                Err(e) => std::str::from_utf8(&chunk[..e.valid_up_to()]).ok()?,
            };
            Some(i + skip_quote(text, 0))
        }
        Some(b'#') if raw => {
            let hashes = bytes[i..].iter().take_while(|&&b| b == b'#').count();
            if bytes.get(i + hashes) != Some(&b'"') {
                return None;
            }
            let mut closing = vec![b'"'];
            closing.extend(std::iter::repeat_n(b'#', hashes));
            let body = i + hashes + 1;
            let close = bytes[body..]
                .windows(closing.len())
                .position(|w| w == closing.as_slice())?;
            Some(body + close + closing.len())
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::{block_at, Block};

    fn at_marker(text: &str) -> Block {
        block_at(text, text.find("HERE").unwrap())
    }

    #[test]
    fn tells_impls_and_traits_from_free_places() {
        assert_eq!(at_marker("fn HERE() {}"), Block::Free);
        assert_eq!(at_marker("impl Shop { fn HERE() {} }"), Block::Impl);
        assert_eq!(
            at_marker("impl<T: Into<u8>> Show for Vec<T> where T: Copy { fn HERE() {} }"),
            Block::Impl
        );
        assert_eq!(
            at_marker("pub(crate) trait Shop { fn HERE() {} }"),
            Block::Trait
        );
        assert_eq!(
            at_marker("impl Shop { fn f() { fn HERE() {} } }"),
            Block::Free
        );
        assert_eq!(
            at_marker("impl Shop { } mod m { fn HERE() {} }"),
            Block::Free
        );
        assert_eq!(at_marker("impl Shop { }\nfn HERE() {}"), Block::Free);
        assert_eq!(at_marker("#[a(x)] impl Shop { fn HERE() {} }"), Block::Impl);
        assert_eq!(
            at_marker("impl Foo for [u8; 4] { fn HERE() {} }"),
            Block::Impl
        );
    }

    #[test]
    fn braces_in_comments_strings_and_chars_do_not_count() {
        let text = "impl Shop {\n// }\n/* } /* } */ } */\nconst A: &str = \"}\\\"}\";\nconst B: char = '}';\nconst C: &str = r#\"}\"#;\nconst D: u8 = b'}';\nfn f<'a>(x: &'a str) {}\nfn HERE() {} }";
        assert_eq!(at_marker(text), Block::Impl);
        assert_eq!(at_marker("fn r#impl() {} fn HERE() {}"), Block::Free);
    }
}

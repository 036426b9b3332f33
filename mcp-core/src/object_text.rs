//! The top-level members of a JSON object's text, walked without parsing: the text was
//! checked when its message was decoded, so a scan that skips strings and counts brackets
//! finds each member's name and value (`_meta` of a request's params, a tool's arguments).

/// Calls `each` with every top-level member of the object `params` (its name quoted, as
/// written, and its value's text); `None` when `params` is not an object the scan can walk.
pub(crate) fn members<'a>(params: &'a str, mut each: impl FnMut(&'a str, &'a str)) -> Option<()> {
    let bytes = params.as_bytes();
    let mut at = skip_space(bytes, 0);
    if bytes.get(at) != Some(&b'{') {
        return None;
    }
    at = skip_space(bytes, at + 1);
    while bytes.get(at) == Some(&b'"') {
        let key_end = string_end(bytes, at)?;
        let key = params.get(at..key_end)?;
        at = skip_space(bytes, key_end);
        if bytes.get(at) != Some(&b':') {
            return None;
        }
        let value_start = skip_space(bytes, at + 1);
        let value_end = value_end(bytes, value_start)?;
        each(key, params.get(value_start..value_end)?);
        at = skip_space(bytes, value_end);
        match bytes.get(at) {
            Some(b',') => at = skip_space(bytes, at + 1),
            _ => break,
        }
    }
    Some(())
}

fn skip_space(bytes: &[u8], mut at: usize) -> usize {
    while bytes.get(at).is_some_and(|b| b.is_ascii_whitespace()) {
        at += 1;
    }
    at
}

/// The index just past the string whose opening quote is at `at`.
fn string_end(bytes: &[u8], mut at: usize) -> Option<usize> {
    at += 1;
    loop {
        at += memchr::memchr2(b'"', b'\\', bytes.get(at..)?)?;
        match bytes.get(at)? {
            b'"' => return Some(at + 1),
            _ => at += 2,
        }
    }
}

/// The index just past the (valid JSON) value starting at `at`.
fn value_end(bytes: &[u8], mut at: usize) -> Option<usize> {
    match bytes.get(at)? {
        b'"' => string_end(bytes, at),
        b'{' | b'[' => {
            let mut depth = 0usize;
            loop {
                match bytes.get(at)? {
                    b'"' => {
                        at = string_end(bytes, at)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth = depth.checked_sub(1)?;
                        if depth == 0 {
                            return Some(at + 1);
                        }
                    }
                    _ => {}
                }
                at += 1;
            }
        }
        _ => {
            while bytes
                .get(at)
                .is_some_and(|b| !matches!(b, b',' | b'}' | b']') && !b.is_ascii_whitespace())
            {
                at += 1;
            }
            Some(at)
        }
    }
}

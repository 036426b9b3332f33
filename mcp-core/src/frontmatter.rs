//! The YAML frontmatter at the head of a `SKILL.md` (the skills extension), read into JSON.
//!
//! The reader covers the YAML that skill frontmatter is written in: block mappings and
//! sequences nested by indentation, plain, single- and double-quoted scalars (a plain scalar may
//! continue on more-indented lines), literal (`|`) and folded (`>`) block scalars with their
//! chomping indicators, flow sequences and mappings of scalars (`[a, b]`, `{k: v}`), comments,
//! and the core-schema types (`null`, `~`, booleans, integers, floats). Anchors, aliases, tags,
//! multi-line flow collections, complex keys and nesting deeper than 64 levels are refused with
//! an error naming the line, never guessed at.

use serde_json::{Map, Number, Value};

use crate::types::JsonObject;

/// Why a `SKILL.md` has no usable frontmatter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrontmatterError(String);

impl std::fmt::Display for FrontmatterError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for FrontmatterError {}

fn err<T>(message: impl Into<String>) -> Result<T, FrontmatterError> {
    Err(FrontmatterError(message.into()))
}

/// The frontmatter of `text` (a `SKILL.md`): the YAML between a first line `---` and the next
/// line `---`, as a JSON object.
///
/// ```
/// let text = "---\nname: pdf-processing\ndescription: Fill PDF forms\nmetadata:\n  version: 2\n---\n# Body\n";
/// let fm = modelctx_core::frontmatter::parse(text).unwrap();
/// assert_eq!(fm["name"], "pdf-processing");
/// assert_eq!(fm["metadata"]["version"], 2);
/// ```
pub fn parse(text: &str) -> Result<JsonObject, FrontmatterError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l));
    if lines.next().map(str::trim_end) != Some("---") {
        return err("SKILL.md does not begin with a `---` frontmatter line");
    }
    let mut yaml = Vec::new();
    let mut closed = false;
    for line in lines {
        if line.trim_end() == "---" {
            closed = true;
            break;
        }
        yaml.push(line);
    }
    if !closed {
        return err("the frontmatter has no closing `---` line");
    }
    let mut reader = Reader::new(&yaml)?;
    if reader.peek().is_none() {
        return err("the frontmatter is empty");
    }
    match reader.block(0)? {
        Value::Object(map) => {
            if let Some((n, _, _)) = reader.peek() {
                return err(format!(
                    "frontmatter line {}: unexpected indentation",
                    n + 2
                ));
            }
            Ok(map)
        }
        _ => err("the frontmatter is not a mapping"),
    }
}

/// Lines with their indentation, blank and comment-only lines dropped (block scalars read
/// the raw lines themselves).
struct Reader<'a> {
    raw: &'a [&'a str],
    /// (line index, indent, content without the indent)
    lines: Vec<(usize, usize, String)>,
    at: usize,
    /// How many blocks are open (bounded by [`MAX_DEPTH`]).
    depth: usize,
}

/// The deepest nesting of blocks read; deeper frontmatter is refused.
const MAX_DEPTH: usize = 64;

impl<'a> Reader<'a> {
    fn new(raw: &'a [&'a str]) -> Result<Self, FrontmatterError> {
        let mut lines = Vec::new();
        for (n, line) in raw.iter().enumerate() {
            if line.contains('\t') && line.trim_start_matches(' ').starts_with('\t') {
                return err(format!("frontmatter line {}: tab indentation", n + 2));
            }
            let content = line.trim_start_matches(' ');
            if content.trim().is_empty() || content.starts_with('#') {
                continue;
            }
            lines.push((n, line.len() - content.len(), content.trim_end().to_owned()));
        }
        Ok(Self {
            raw,
            lines,
            at: 0,
            depth: 0,
        })
    }

    fn peek(&self) -> Option<(usize, usize, &str)> {
        self.lines
            .get(self.at)
            .map(|(n, i, c)| (*n, *i, c.as_str()))
    }

    /// The block (mapping or sequence) whose lines sit at `indent`.
    fn block(&mut self, indent: usize) -> Result<Value, FrontmatterError> {
        let Some((n, _, content)) = self.peek() else {
            return Ok(Value::Null);
        };
        if self.depth >= MAX_DEPTH {
            return err(format!(
                "frontmatter line {}: nested deeper than {MAX_DEPTH} levels",
                n + 2
            ));
        }
        let sequence = content == "-" || content.starts_with("- ");
        self.depth += 1;
        let value = if sequence {
            self.sequence(indent)
        } else {
            self.mapping(indent)
        };
        self.depth -= 1;
        value
    }

    fn mapping(&mut self, indent: usize) -> Result<Value, FrontmatterError> {
        let mut map = Map::new();
        while let Some((n, i, content)) = self.peek() {
            if i < indent {
                break;
            }
            if i > indent {
                return err(format!(
                    "frontmatter line {}: unexpected indentation",
                    n + 2
                ));
            }
            let content = content.to_owned();
            let (key, rest) = split_key(&content).ok_or_else(|| {
                FrontmatterError(format!("frontmatter line {}: expected `key: value`", n + 2))
            })?;
            if map.contains_key(&key) {
                return err(format!("frontmatter line {}: duplicate key `{key}`", n + 2));
            }
            self.at += 1;
            let value = self.value_after(n, indent, rest, true)?;
            map.insert(key, value);
        }
        Ok(Value::Object(map))
    }

    fn sequence(&mut self, indent: usize) -> Result<Value, FrontmatterError> {
        let mut items = Vec::new();
        while let Some((n, i, content)) = self.peek() {
            if i < indent || !(content == "-" || content.starts_with("- ")) {
                if i > indent {
                    return err(format!(
                        "frontmatter line {}: unexpected indentation",
                        n + 2
                    ));
                }
                break;
            }
            if i > indent {
                return err(format!(
                    "frontmatter line {}: unexpected indentation",
                    n + 2
                ));
            }
            let rest = content[1..].trim_start().to_owned();
            let column = i + (content.len() - content[1..].trim_start().len());
            if rest.is_empty() {
                self.at += 1;
                items.push(self.nested(indent)?);
            } else if split_key(&rest).is_some() && !starts_quoted_or_flow(&rest) {
                // `- key: value` opens a mapping whose keys sit at the item's column.
                self.lines[self.at] = (n, column, rest);
                items.push(self.block(column)?);
            } else {
                self.at += 1;
                items.push(self.value_after(n, indent, &rest, false)?);
            }
        }
        Ok(Value::Array(items))
    }

    /// A nested block under a line at `indent` (or null when nothing is nested).
    fn nested(&mut self, indent: usize) -> Result<Value, FrontmatterError> {
        match self.peek() {
            Some((_, i, _)) if i > indent => self.block(i),
            // A mapping's value may be a sequence at the key's own indent.
            Some((_, i, c)) if i == indent && (c == "-" || c.starts_with("- ")) => self.sequence(i),
            _ => Ok(Value::Null),
        }
    }

    /// The value written after `key:` (or `- `) on line `n`.
    fn value_after(
        &mut self,
        n: usize,
        indent: usize,
        rest: &str,
        in_mapping: bool,
    ) -> Result<Value, FrontmatterError> {
        let rest = strip_comment(rest);
        if rest.is_empty() {
            return if in_mapping {
                self.nested(indent)
            } else {
                Ok(Value::Null)
            };
        }
        if let Some(header) = rest
            .strip_prefix('|')
            .map(|h| (true, h))
            .or_else(|| rest.strip_prefix('>').map(|h| (false, h)))
        {
            return self.block_scalar(n, indent, header.0, header.1);
        }
        if rest.starts_with(['&', '*', '!']) {
            return err(format!(
                "frontmatter line {}: anchors, aliases and tags are not supported",
                n + 2
            ));
        }
        if rest.starts_with('"') || rest.starts_with('\'') {
            return quoted(rest).map(Value::String).ok_or_else(|| {
                FrontmatterError(format!(
                    "frontmatter line {}: unterminated or malformed quoted string",
                    n + 2
                ))
            });
        }
        if rest.starts_with('[') || rest.starts_with('{') {
            return flow(rest).ok_or_else(|| {
                FrontmatterError(format!(
                    "frontmatter line {}: unsupported flow collection",
                    n + 2
                ))
            });
        }
        // A plain scalar, possibly continued on more-indented lines.
        let mut text = rest.to_owned();
        while let Some((_, i, c)) = self.peek() {
            if i <= indent {
                break;
            }
            text.push(' ');
            text.push_str(strip_comment(c));
            self.at += 1;
        }
        Ok(plain(&text))
    }

    /// A `|` or `>` block scalar: the raw lines more indented than `indent`.
    fn block_scalar(
        &mut self,
        n: usize,
        indent: usize,
        literal: bool,
        header: &str,
    ) -> Result<Value, FrontmatterError> {
        let header = strip_comment(header);
        let chomp = match header {
            "" => ' ',
            "-" => '-',
            "+" => '+',
            _ => {
                return err(format!(
                    "frontmatter line {}: unsupported block scalar header",
                    n + 2
                ));
            }
        };
        let mut body: Vec<&str> = Vec::new();
        let mut end = n + 1;
        let mut block_indent = None;
        while end < self.raw.len() {
            let line = self.raw[end];
            let content = line.trim_start_matches(' ');
            let i = line.len() - content.len();
            if content.trim().is_empty() {
                body.push("");
                end += 1;
                continue;
            }
            if i <= indent {
                break;
            }
            let bi = *block_indent.get_or_insert(i);
            if i < bi {
                break;
            }
            body.push(&line[bi..]);
            end += 1;
        }
        while self.peek().is_some_and(|(ln, _, _)| ln < end) {
            self.at += 1;
        }
        let trailing = body.iter().rev().take_while(|l| l.is_empty()).count();
        let kept = &body[..body.len() - trailing];
        let mut text = if literal {
            kept.join("\n")
        } else {
            let mut out = String::new();
            let mut prev_blank = true;
            for line in kept {
                if line.is_empty() {
                    out.push('\n');
                    prev_blank = true;
                } else {
                    if !prev_blank && !out.ends_with('\n') {
                        out.push(' ');
                    }
                    out.push_str(line);
                    prev_blank = false;
                }
            }
            out
        };
        match chomp {
            '-' => {}
            '+' => {
                text.push('\n');
                for _ in 0..trailing {
                    text.push('\n');
                }
            }
            _ if !kept.is_empty() => text.push('\n'),
            _ => {}
        }
        Ok(Value::String(text))
    }
}

fn starts_quoted_or_flow(s: &str) -> bool {
    s.starts_with(['"', '\'', '[', '{'])
}

/// `key: rest` or `key:` (a plain or quoted key).
fn split_key(content: &str) -> Option<(String, &str)> {
    if content.starts_with('"') || content.starts_with('\'') {
        let close = quoted_len(content)?;
        let key = quoted(&content[..close])?;
        let rest = content[close..].strip_prefix(':')?;
        if !(rest.is_empty() || rest.starts_with(' ')) {
            return None;
        }
        return Some((key, rest.trim_start()));
    }
    let mut search = 0;
    while let Some(pos) = content[search..].find(':') {
        let at = search + pos;
        let after = &content[at + 1..];
        if after.is_empty() || after.starts_with(' ') {
            let key = content[..at].trim_end();
            if key.is_empty()
                || key.contains(" #")
                || key.starts_with(['-', '?', '[', '{', '&', '*', '!', '|', '>'])
            {
                return None;
            }
            return Some((key.to_owned(), after.trim_start()));
        }
        search = at + 1;
    }
    None
}

/// `rest` without a trailing ` # comment` (outside quotes).
fn strip_comment(rest: &str) -> &str {
    if rest.starts_with('"') || rest.starts_with('\'') {
        if let Some(len) = quoted_len(rest) {
            let tail = rest[len..].trim_start();
            if tail.is_empty() || tail.starts_with('#') {
                return &rest[..len];
            }
        }
        return rest.trim_end();
    }
    if rest.starts_with('#') {
        return "";
    }
    match rest.find(" #") {
        Some(at) => rest[..at].trim_end(),
        None => rest.trim_end(),
    }
}

/// The byte length of the quoted string that `s` begins with.
fn quoted_len(s: &str) -> Option<usize> {
    let quote = s.chars().next()?;
    let mut chars = s.char_indices().skip(1);
    while let Some((i, c)) = chars.next() {
        if quote == '"' && c == '\\' {
            chars.next();
        } else if c == quote {
            if quote == '\'' && s[i + 1..].starts_with('\'') {
                chars.next();
                continue;
            }
            return Some(i + 1);
        }
    }
    None
}

/// The text of a whole quoted scalar (`"..."` with escapes, or `'...'` with `''`).
fn quoted(s: &str) -> Option<String> {
    if quoted_len(s)? != s.len() {
        return None;
    }
    let inner = &s[1..s.len() - 1];
    if s.starts_with('\'') {
        return Some(inner.replace("''", "'"));
    }
    let mut out = String::new();
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next()? {
            'n' => out.push('\n'),
            't' => out.push('\t'),
            'r' => out.push('\r'),
            '0' => out.push('\0'),
            '"' => out.push('"'),
            '\\' => out.push('\\'),
            '/' => out.push('/'),
            ' ' => out.push(' '),
            'u' => {
                let hex: String = chars.by_ref().take(4).collect();
                out.push(char::from_u32(u32::from_str_radix(&hex, 16).ok()?)?);
            }
            _ => return None,
        }
    }
    Some(out)
}

/// `[a, b]` or `{k: v}` of scalars, on one line.
fn flow(s: &str) -> Option<Value> {
    let (open, close) = if s.starts_with('[') {
        ('[', ']')
    } else {
        ('{', '}')
    };
    let inner = s.strip_prefix(open)?.strip_suffix(close)?;
    if inner.contains(['[', '{', ']', '}']) {
        return None;
    }
    let parts = split_flow(inner)?;
    if open == '[' {
        parts
            .iter()
            .map(|p| scalar(p))
            .collect::<Option<Vec<_>>>()
            .map(Value::Array)
    } else {
        let mut map = Map::new();
        for part in parts {
            let (k, v) = split_key(&part)?;
            map.insert(
                k,
                if v.is_empty() {
                    Value::Null
                } else {
                    scalar(v)?
                },
            );
        }
        Some(Value::Object(map))
    }
}

fn split_flow(inner: &str) -> Option<Vec<String>> {
    let mut parts = Vec::new();
    let mut rest = inner.trim();
    while !rest.is_empty() {
        let len = if rest.starts_with(['"', '\'']) {
            quoted_len(rest)?
        } else {
            rest.find(',').unwrap_or(rest.len())
        };
        let item = rest[..len].trim();
        let after = rest[len..].trim_start();
        let after = match after.strip_prefix(',') {
            Some(a) => a.trim_start(),
            None if after.is_empty() => after,
            None => {
                // a quoted key followed by `: value`
                let end = after.find(',').unwrap_or(after.len());
                parts.push(format!("{}{}", item, &after[..end]).trim().to_owned());
                rest = after[end..].trim_start_matches(',').trim_start();
                continue;
            }
        };
        parts.push(item.to_owned());
        rest = after;
    }
    Some(parts)
}

fn scalar(s: &str) -> Option<Value> {
    let s = s.trim();
    if s.starts_with(['"', '\'']) {
        quoted(s).map(Value::String)
    } else {
        Some(plain(s))
    }
}

/// A plain scalar under the YAML 1.2 core schema.
fn plain(s: &str) -> Value {
    match s {
        "" | "~" | "null" | "Null" | "NULL" => return Value::Null,
        "true" | "True" | "TRUE" => return Value::Bool(true),
        "false" | "False" | "FALSE" => return Value::Bool(false),
        _ => {}
    }
    let digits = |t: &str, radix| !t.is_empty() && t.chars().all(|c| c.is_digit(radix));
    let unsigned = s.strip_prefix(['-', '+']).unwrap_or(s);
    if digits(unsigned, 10) {
        if let Ok(i) = s.parse::<i64>() {
            return Value::from(i);
        }
        if let Ok(u) = s.parse::<u64>() {
            return Value::from(u);
        }
    }
    if let Some(hex) = s.strip_prefix("0x").filter(|h| digits(h, 16)) {
        if let Ok(i) = i64::from_str_radix(hex, 16) {
            return Value::from(i);
        }
    }
    if let Some(oct) = s.strip_prefix("0o").filter(|o| digits(o, 8)) {
        if let Ok(i) = i64::from_str_radix(oct, 8) {
            return Value::from(i);
        }
    }
    let looks_float = {
        let t = unsigned;
        let (mantissa, exp) = match t.find(['e', 'E']) {
            Some(at) => (&t[..at], Some(&t[at + 1..])),
            None => (t, None),
        };
        let mut parts = mantissa.splitn(2, '.');
        let int = parts.next().unwrap_or("");
        let frac = parts.next();
        let mantissa_ok = (digits(int, 10)
            || (int.is_empty() && frac.is_some_and(|f| digits(f, 10))))
            && frac.is_none_or(|f| f.is_empty() || digits(f, 10))
            && (frac.is_some() || exp.is_some());
        let exp_ok = exp.is_none_or(|e| digits(e.strip_prefix(['-', '+']).unwrap_or(e), 10));
        mantissa_ok && exp_ok
    };
    if looks_float {
        if let Some(n) = s.parse::<f64>().ok().and_then(Number::from_f64) {
            return Value::Number(n);
        }
    }
    Value::String(s.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn fm(yaml: &str) -> Value {
        Value::Object(parse(&format!("---\n{yaml}\n---\nbody\n")).unwrap())
    }

    #[test]
    fn reads_the_yaml_skills_are_written_in() {
        let v = fm("name: pdf-processing\ndescription: Extract, fill, and assemble PDF documents\nlicense: 'Apache-2.0'\nmetadata:\n  version: \"2.1.0\"\n  level: 3\n  ratio: 0.5\n  on: true\n  none: ~\nallowed-tools:\n  - Read\n  - Bash(git:*)\ntags: [a, \"b c\"]\nlong: first\n  second   # comment\nblock: |\n  line one\n  line two\nfolded: >-\n  a\n  b\nlist_of_maps:\n- k: v\n  j: 2\n");
        assert_eq!(
            v,
            json!({
                "name": "pdf-processing",
                "description": "Extract, fill, and assemble PDF documents",
                "license": "Apache-2.0",
                "metadata": {"version": "2.1.0", "level": 3, "ratio": 0.5, "on": true, "none": null},
                "allowed-tools": ["Read", "Bash(git:*)"],
                "tags": ["a", "b c"],
                "long": "first second",
                "block": "line one\nline two\n",
                "folded": "a b",
                "list_of_maps": [{"k": "v", "j": 2}]
            })
        );
    }

    #[test]
    fn refuses_what_it_cannot_read() {
        assert!(parse("no frontmatter").is_err());
        assert!(parse("---\nname: x\n").is_err());
        assert!(parse("---\nname: &a x\n---\n").is_err());
        assert!(parse("---\nname: x\nname: y\n---\n").is_err());
        assert!(parse("---\n- a\n---\n").is_err());
        let deep: String = (0..100).map(|i| format!("{}k:\n", " ".repeat(i))).collect();
        assert!(parse(&format!("---\n{deep}---\n")).is_err());
    }
}

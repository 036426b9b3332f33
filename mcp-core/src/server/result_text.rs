//! A `tools/call` result written straight to text, for the shape most tools return: text
//! blocks alone.

use crate::json_string::write_quoted;
use crate::types::{CallToolResult, ContentBlock};

/// `result` as serde_json writes it, written by hand when it is text blocks alone (no
/// annotations, no `_meta`, no structured content): only the texts need escaping, and the
/// names around them are written as they are. `None` for any other result.
pub(crate) fn text_blocks(result: &CallToolResult) -> Option<String> {
    if result.structured_content.is_some() || result.meta.is_some() {
        return None;
    }
    let mut texts = 0;
    for block in &result.content {
        match block {
            ContentBlock::Text(t) if t.annotations.is_none() && t.meta.is_none() => {
                texts += t.text.len();
            }
            _ => return None,
        }
    }
    let mut out = String::with_capacity(40 + texts + 28 * result.content.len());
    out.push_str(r#"{"content":["#);
    for (i, block) in result.content.iter().enumerate() {
        if let ContentBlock::Text(t) = block {
            if i > 0 {
                out.push(',');
            }
            out.push_str(r#"{"type":"text","text":"#);
            write_quoted(&mut out, &t.text);
            out.push('}');
        }
    }
    out.push_str(match result.is_error {
        true => r#"],"isError":true}"#,
        false => r#"],"isError":false}"#,
    });
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::Annotations;
    use serde_json::json;

    #[test]
    fn text_blocks_are_written_as_serde_json_writes_them() {
        let mut results = vec![
            CallToolResult::text("5"),
            CallToolResult::error("Unknown tool: \"x\"\n"),
            CallToolResult::new(vec![]),
            CallToolResult::new(vec![
                ContentBlock::text("a"),
                ContentBlock::text("b\u{1}é"),
                ContentBlock::text(""),
            ]),
        ];
        results[0].is_error = true;
        for result in &results {
            assert_eq!(
                text_blocks(result).as_deref(),
                Some(serde_json::to_string(result).unwrap().as_str())
            );
        }
    }

    #[test]
    fn anything_else_is_left_to_serde() {
        let mut structured = CallToolResult::text("5");
        structured.structured_content = Some(json!({"n": 5}));
        let mut meta = CallToolResult::text("5");
        meta.meta = Some(json!({"k": 1}).as_object().cloned().unwrap());
        let ContentBlock::Text(mut annotated) = ContentBlock::text("5") else {
            unreachable!("a text block")
        };
        annotated.annotations = Some(Annotations::default());
        let image = ContentBlock::image("aGk=", "image/png");
        for result in [
            structured,
            meta,
            CallToolResult::new(vec![ContentBlock::Text(annotated)]),
            CallToolResult::new(vec![ContentBlock::text("a"), image]),
        ] {
            assert_eq!(text_blocks(&result), None);
        }
    }
}

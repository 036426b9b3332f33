//! Tools: definitions, `tools/list`, `tools/call`.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{ContentBlock, Icon, JsonObject, Meta};

/// A tool the model can call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Tool {
    /// Unique name.
    pub name: String,
    /// Display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the tool does (the model reads this).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// JSON Schema of the arguments (root `type: object`), sent exactly as given.
    pub input_schema: JsonObject,
    /// JSON Schema of `structuredContent`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<JsonObject>,
    /// Behaviour hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<ToolAnnotations>,
    /// Icons.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// 2025-11-25 only: task support.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution: Option<JsonObject>,
    /// `_meta` of this tool's definition (as listed, not of its calls): extension data clients
    /// may ignore; keys are `prefix/name` (MCP reserves `io.modelcontextprotocol/`).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl Tool {
    /// A tool with this name, description and input schema (which must be a JSON object;
    /// anything else is replaced by `{"type":"object"}`).
    ///
    /// ```
    /// use modelctx_core::types::Tool;
    /// use serde_json::json;
    ///
    /// let tool = Tool::new("echo", "Echo the text back.", json!({
    ///     "type": "object",
    ///     "properties": {"text": {"type": "string"}},
    ///     "required": ["text"]
    /// }));
    /// assert_eq!(tool.input_schema["required"], json!(["text"]));
    /// ```
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        input_schema: Value,
    ) -> Self {
        let input_schema = match input_schema {
            Value::Object(map) => map,
            _ => {
                let mut map = JsonObject::new();
                map.insert("type".into(), Value::String("object".into()));
                map
            }
        };
        Self {
            name: name.into(),
            title: None,
            description: Some(description.into()),
            input_schema,
            output_schema: None,
            annotations: None,
            icons: None,
            execution: None,
            meta: None,
        }
    }

    /// Sets the output schema (a non-object value is ignored).
    pub fn with_output_schema(mut self, schema: Value) -> Self {
        if let Value::Object(map) = schema {
            self.output_schema = Some(map);
        }
        self
    }
}

/// Hints about a tool's behaviour. Clients must not trust them from untrusted servers.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ToolAnnotations {
    /// Display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Does not modify its environment (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only_hint: Option<bool>,
    /// May destroy data (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destructive_hint: Option<bool>,
    /// Repeating a call has no further effect (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotent_hint: Option<bool>,
    /// Talks to the outside world (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_world_hint: Option<bool>,
}

/// The result of `tools/list`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ListToolsResult {
    /// The tools of this page.
    pub tools: Vec<Tool>,
    /// Cursor of the next page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    /// `_meta` of this `tools/list` result (keys are `prefix/name`). On 2026-07-28
    /// the engine adds `io.modelcontextprotocol/serverInfo` here unless the handler already set it.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// Params of `tools/call`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CallToolRequestParams {
    /// The tool's name.
    pub name: String,
    /// The arguments (not validated by the low-level server). Absent reads as
    /// `None`; when present it must be an object (`null` is an invalid-params error).
    #[serde(
        default,
        deserialize_with = "super::common::present",
        skip_serializing_if = "Option::is_none"
    )]
    pub arguments: Option<JsonObject>,
    /// 2025-11-25 task augmentation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<JsonObject>,
    /// 2026-07-28: answers to an earlier `input_required` result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_responses: Option<JsonObject>,
    /// 2026-07-28: the state echoed from an earlier `input_required` result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_state: Option<String>,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// The result of `tools/call`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CallToolResult {
    /// What the model reads.
    pub content: Vec<ContentBlock>,
    /// The same answer as typed data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    /// The call failed in a way the model should read (always serialized).
    #[serde(default)]
    pub is_error: bool,
    /// Data for the client application.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl CallToolResult {
    /// A successful result with these content blocks.
    pub fn new(content: Vec<ContentBlock>) -> Self {
        Self {
            content,
            ..Self::default()
        }
    }

    /// A successful result with one text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self::new(vec![ContentBlock::text(text)])
    }

    /// A tool error the model can read (`isError: true`).
    pub fn error(text: impl Into<String>) -> Self {
        Self {
            is_error: true,
            ..Self::text(text)
        }
    }

    /// Sets `structuredContent`.
    pub fn with_structured(mut self, value: Value) -> Self {
        self.structured_content = Some(value);
        self
    }

    /// Sets `_meta`.
    pub fn with_meta(mut self, meta: Meta) -> Self {
        self.meta = Some(meta);
        self
    }
}

page_result!(ListToolsResult, tools, Tool, "tools");

impl ToolAnnotations {
    /// No hints (every field absent); set the ones that apply with the `with_*` methods.
    ///
    /// ```
    /// use modelctx_core::types::ToolAnnotations;
    /// let hints = ToolAnnotations::new().with_read_only(true).with_open_world(false);
    /// assert_eq!(hints.read_only_hint, Some(true));
    /// ```
    pub fn new() -> Self {
        Self::default()
    }
}

impl CallToolRequestParams {
    /// A call of the tool `name` without arguments; add them with
    /// [`with_arguments`](Self::with_arguments).
    ///
    /// ```
    /// use modelctx_core::types::CallToolRequestParams;
    /// use serde_json::json;
    /// let call = CallToolRequestParams::new("add").with_arguments(json!({"a": 1, "b": 2}));
    /// assert_eq!(call.arguments.unwrap()["b"], 2);
    /// ```
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            ..Self::default()
        }
    }

    /// Sets the arguments (a value that is not a JSON object leaves them unset).
    pub fn with_arguments(mut self, arguments: Value) -> Self {
        if let Value::Object(map) = arguments {
            self.arguments = Some(map);
        }
        self
    }
}

option_setters!(ToolAnnotations {
    /// Sets the display title.
    with_title => title: String,
    /// Sets `readOnlyHint`.
    with_read_only => read_only_hint: bool,
    /// Sets `destructiveHint`.
    with_destructive => destructive_hint: bool,
    /// Sets `idempotentHint`.
    with_idempotent => idempotent_hint: bool,
    /// Sets `openWorldHint`.
    with_open_world => open_world_hint: bool,
});

//! Sampling: the server asks the client's model (`sampling/createMessage`).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{JsonObject, Meta, Role, Tool};

/// A message in a sampling conversation. `content` is one block or an array of blocks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SamplingMessage {
    /// Speaker.
    pub role: Role,
    /// A content block (`text`, `image`, `audio`, `tool_use`, `tool_result`) or an array of them.
    pub content: Value,
    /// `_meta` of this message in the conversation: extension data the receiver may ignore;
    /// keys are `prefix/name` (MCP reserves `io.modelcontextprotocol/`).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// Params of `sampling/createMessage`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CreateMessageRequestParams {
    /// The conversation.
    pub messages: Vec<SamplingMessage>,
    /// Model preferences.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_preferences: Option<JsonObject>,
    /// System prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    /// `"none"`, `"thisServer"`, `"allServers"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_context: Option<String>,
    /// Temperature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// Upper bound of generated tokens.
    pub max_tokens: u64,
    /// Stop sequences.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_sequences: Option<Vec<String>>,
    /// Provider metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<JsonObject>,
    /// Tools the model may use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<Tool>>,
    /// Tool choice.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<JsonObject>,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// The client's answer to `sampling/createMessage`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CreateMessageResult {
    /// Speaker (normally assistant).
    pub role: Role,
    /// The generated content.
    pub content: Value,
    /// The model that answered.
    pub model: String,
    /// Why generation stopped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
    /// `_meta` of the client's sampling answer: protocol or vendor metadata;
    /// keys are `prefix/name` (MCP reserves `io.modelcontextprotocol/`).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// One block of sampling content: the shared content kinds plus tool use and tool results.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
#[non_exhaustive]
pub enum SamplingContent {
    /// Text.
    #[serde(rename = "text")]
    Text(super::TextContent),
    /// An image.
    #[serde(rename = "image")]
    Image(super::ImageContent),
    /// Audio.
    #[serde(rename = "audio")]
    Audio(super::AudioContent),
    /// The model asks to call a tool.
    #[serde(rename = "tool_use")]
    ToolUse(ToolUseContent),
    /// The result of a tool call, fed back to the model.
    #[serde(rename = "tool_result")]
    ToolResult(ToolResultContent),
}

/// `{"type":"tool_use"}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ToolUseContent {
    /// Id matched by the tool result.
    pub id: String,
    /// The tool.
    pub name: String,
    /// Its arguments.
    pub input: JsonObject,
    /// `_meta` of this tool-use block: extension data the receiver may ignore;
    /// keys are `prefix/name` (MCP reserves `io.modelcontextprotocol/`).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// `{"type":"tool_result"}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ToolResultContent {
    /// The `tool_use` id this answers.
    pub tool_use_id: String,
    /// What the tool returned.
    pub content: Vec<super::ContentBlock>,
    /// Structured result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    /// The tool failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    /// `_meta` of this tool-result block: extension data the receiver may ignore;
    /// keys are `prefix/name` (MCP reserves `io.modelcontextprotocol/`).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// A `{"type":"text"}` content block.
fn text_block(text: impl Into<String>) -> Value {
    serde_json::json!({"type": "text", "text": text.into()})
}

impl SamplingMessage {
    /// A message from `role`; `content` is one block (`{"type":"text",..}`) or an array.
    pub fn new(role: Role, content: Value) -> Self {
        Self {
            role,
            content,
            meta: None,
        }
    }
}

impl CreateMessageRequestParams {
    /// A request to continue this conversation with at most `max_tokens` tokens.
    pub fn new(messages: Vec<SamplingMessage>, max_tokens: u64) -> Self {
        Self {
            messages,
            model_preferences: None,
            system_prompt: None,
            include_context: None,
            temperature: None,
            max_tokens,
            stop_sequences: None,
            metadata: None,
            tools: None,
            tool_choice: None,
            meta: None,
        }
    }

    /// One user message of plain text, at most `max_tokens` tokens back; every other field
    /// unset.
    ///
    /// ```
    /// use modelctx_core::types::CreateMessageRequestParams;
    /// let p = CreateMessageRequestParams::user_text("What is the capital of France?", 100);
    /// assert_eq!(p.max_tokens, 100);
    /// assert_eq!(p.messages[0].content["text"], "What is the capital of France?");
    /// ```
    pub fn user_text(text: impl Into<String>, max_tokens: u64) -> Self {
        Self::new(
            vec![SamplingMessage::new(Role::User, text_block(text))],
            max_tokens,
        )
    }
}

impl CreateMessageResult {
    /// An answer from `role` with this content (one block or an array) and model name.
    pub fn new(role: Role, content: Value, model: impl Into<String>) -> Self {
        Self {
            role,
            content,
            model: model.into(),
            stop_reason: None,
            meta: None,
        }
    }

    /// The assistant's plain-text answer from `model`.
    ///
    /// ```
    /// use modelctx_core::types::CreateMessageResult;
    /// let answer = CreateMessageResult::assistant_text("Paris.", "example-model");
    /// assert_eq!(answer.text(), Some("Paris."));
    /// ```
    pub fn assistant_text(text: impl Into<String>, model: impl Into<String>) -> Self {
        Self::new(Role::Assistant, text_block(text), model)
    }

    /// The text of the answer: `content.text` of a text block (or of the first text block of
    /// an array); `None` for other content.
    pub fn text(&self) -> Option<&str> {
        let block = match &self.content {
            Value::Array(blocks) => blocks.iter().find(|b| b["type"] == "text")?,
            block => block,
        };
        block.get("text")?.as_str()
    }
}

impl ToolUseContent {
    /// The model's request `id` to call the tool `name` with `input` (a JSON object; anything
    /// else reads as no arguments).
    pub fn new(id: impl Into<String>, name: impl Into<String>, input: Value) -> Self {
        Self {
            id: id.into(),
            name: name.into(),
            input: super::common::object(input).unwrap_or_default(),
            meta: None,
        }
    }
}

impl ToolResultContent {
    /// What the tool called by `tool_use_id` returned.
    pub fn new(tool_use_id: impl Into<String>, content: Vec<super::ContentBlock>) -> Self {
        Self {
            tool_use_id: tool_use_id.into(),
            content,
            structured_content: None,
            is_error: None,
            meta: None,
        }
    }
}

option_setters!(CreateMessageRequestParams {
    /// Sets the system prompt.
    with_system_prompt => system_prompt: String,
});

option_setters!(CreateMessageResult {
    /// Sets why generation stopped (`"endTurn"`, `"maxTokens"`, `"stopSequence"`, `"toolUse"`).
    with_stop_reason => stop_reason: String,
});

//! Prompts: `prompts/list`, `prompts/get`.

use serde::{Deserialize, Serialize};

use super::{ContentBlock, Icon, JsonObject, Meta, Role};

/// A prompt template.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Prompt {
    /// Unique name.
    pub name: String,
    /// Display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Arguments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Vec<PromptArgument>>,
    /// Icons.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// `_meta` of this prompt's definition (as listed): extension data clients may ignore;
    /// keys are `prefix/name` (MCP reserves `io.modelcontextprotocol/`).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// One argument of a prompt.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptArgument {
    /// Name.
    pub name: String,
    /// Display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Must be supplied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required: Option<bool>,
}

/// A message of a prompt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PromptMessage {
    /// Speaker.
    pub role: Role,
    /// Content.
    pub content: ContentBlock,
}

/// The result of `prompts/list`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListPromptsResult {
    /// The prompts of this page.
    pub prompts: Vec<Prompt>,
    /// Cursor of the next page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    /// `_meta` of this `prompts/list` result (keys are `prefix/name`). On 2026-07-28
    /// the engine adds `io.modelcontextprotocol/serverInfo` here unless the handler already set it.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// Params of `prompts/get`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GetPromptRequestParams {
    /// The prompt's name.
    pub name: String,
    /// Argument values (strings). Absent reads as `None`; when present it must be an object.
    #[serde(
        default,
        deserialize_with = "super::common::present",
        skip_serializing_if = "Option::is_none"
    )]
    pub arguments: Option<std::collections::BTreeMap<String, String>>,
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

/// The result of `prompts/get`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GetPromptResult {
    /// Description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The messages.
    pub messages: Vec<PromptMessage>,
    /// `_meta` of this `prompts/get` result (keys are `prefix/name`). On 2026-07-28
    /// the engine adds `io.modelcontextprotocol/serverInfo` here unless the handler already set it.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

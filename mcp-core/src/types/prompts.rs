//! Prompts: `prompts/list`, `prompts/get`.

use serde::{Deserialize, Serialize};

use super::{ContentBlock, Icon, JsonObject, Meta, Role};

/// A prompt template.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
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
#[non_exhaustive]
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
#[non_exhaustive]
pub struct PromptMessage {
    /// Speaker.
    pub role: Role,
    /// Content.
    pub content: ContentBlock,
}

/// The result of `prompts/list`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
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
#[non_exhaustive]
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
#[non_exhaustive]
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

page_result!(ListPromptsResult, prompts, Prompt, "prompts");

impl Prompt {
    /// A prompt with this name and nothing else; set the rest with the `with_*` methods or
    /// the public fields.
    ///
    /// ```
    /// use modelctx_core::types::{Prompt, PromptArgument};
    /// let prompt = Prompt::new("review")
    ///     .with_description("Review a change.")
    ///     .with_argument(PromptArgument::new("diff").with_required(true));
    /// assert_eq!(prompt.arguments.unwrap()[0].name, "diff");
    /// ```
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            ..Self::default()
        }
    }

    /// Appends an argument.
    pub fn with_argument(mut self, argument: PromptArgument) -> Self {
        self.arguments.get_or_insert_with(Vec::new).push(argument);
        self
    }
}

impl PromptArgument {
    /// An optional argument with this name.
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            ..Self::default()
        }
    }
}

impl PromptMessage {
    /// A message from `role` with this content.
    ///
    /// ```
    /// use modelctx_core::types::{ContentBlock, PromptMessage, Role};
    /// let message = PromptMessage::new(Role::User, ContentBlock::text("Review this."));
    /// assert_eq!(message.content.as_text(), Some("Review this."));
    /// ```
    pub fn new(role: Role, content: ContentBlock) -> Self {
        Self { role, content }
    }
}

impl GetPromptRequestParams {
    /// A `prompts/get` of `name` without arguments.
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            ..Self::default()
        }
    }

    /// Adds one argument value.
    pub fn with_argument(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.arguments
            .get_or_insert_with(Default::default)
            .insert(name.into(), value.into());
        self
    }
}

impl GetPromptResult {
    /// The rendered prompt: these messages, no description.
    pub fn new(messages: Vec<PromptMessage>) -> Self {
        Self {
            description: None,
            messages,
            meta: None,
        }
    }
}

option_setters!(Prompt {
    /// Sets the description.
    with_description => description: String,
    /// Sets the display title.
    with_title => title: String,
});

option_setters!(PromptArgument {
    /// Sets the description.
    with_description => description: String,
    /// Sets `required`.
    with_required => required: bool,
});

option_setters!(GetPromptResult {
    /// Sets the description.
    with_description => description: String,
});

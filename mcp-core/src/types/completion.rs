//! Argument completion: `completion/complete`.

use serde::{Deserialize, Serialize};

use super::Meta;

/// What is being completed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum CompletionReference {
    /// An argument of a prompt.
    #[serde(rename = "ref/prompt")]
    Prompt {
        /// The prompt's name.
        name: String,
        /// Display name.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        title: Option<String>,
    },
    /// A variable of a resource template.
    #[serde(rename = "ref/resource")]
    Resource {
        /// The URI or URI template.
        uri: String,
    },
}

impl CompletionReference {
    /// An argument of prompt `name`.
    pub fn prompt(name: impl Into<String>) -> Self {
        Self::Prompt {
            name: name.into(),
            title: None,
        }
    }

    /// A variable of the resource template (or resource) `uri`.
    pub fn resource(uri: impl Into<String>) -> Self {
        Self::Resource { uri: uri.into() }
    }
}

/// The argument being completed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct CompletionArgument {
    /// Its name.
    pub name: String,
    /// What the user typed so far.
    pub value: String,
}

/// Already-resolved arguments.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct CompletionContext {
    /// Values by name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<std::collections::BTreeMap<String, String>>,
}

/// Params of `completion/complete`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct CompleteRequestParams {
    /// What is being completed.
    #[serde(rename = "ref")]
    pub reference: CompletionReference,
    /// The argument.
    pub argument: CompletionArgument,
    /// Context.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<CompletionContext>,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// The completion values.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Completion {
    /// At most 100 values.
    pub values: Vec<String>,
    /// Total number of matches.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
    /// More values exist than were sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub has_more: Option<bool>,
}

/// The result of `completion/complete`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct CompleteResult {
    /// The values.
    pub completion: Completion,
    /// `_meta` of this `completion/complete` result (keys are `prefix/name`). On 2026-07-28
    /// the engine adds `io.modelcontextprotocol/serverInfo` here unless the handler already set it.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl CompletionArgument {
    /// The argument `name` with what the user typed so far.
    pub fn new(name: impl Into<String>, value: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            value: value.into(),
        }
    }
}

impl CompleteRequestParams {
    /// A completion request for `argument` of `reference`, without context.
    ///
    /// ```
    /// use modelctx_core::types::{CompleteRequestParams, CompletionArgument, CompletionReference};
    /// let p = CompleteRequestParams::new(
    ///     CompletionReference::prompt("review"),
    ///     CompletionArgument::new("language", "ru"),
    /// );
    /// assert_eq!(p.argument.value, "ru");
    /// ```
    pub fn new(reference: CompletionReference, argument: CompletionArgument) -> Self {
        Self {
            reference,
            argument,
            context: None,
            meta: None,
        }
    }
}

impl Completion {
    /// These values, with no total and no `hasMore`.
    pub fn new(values: Vec<String>) -> Self {
        Self {
            values,
            total: None,
            has_more: None,
        }
    }
}

impl CompleteResult {
    /// The result carrying these values.
    ///
    /// ```
    /// use modelctx_core::types::CompleteResult;
    /// let result = CompleteResult::new(vec!["rust".into(), "ruby".into()]);
    /// assert_eq!(result.completion.values.len(), 2);
    /// ```
    pub fn new(values: Vec<String>) -> Self {
        Self {
            completion: Completion::new(values),
            meta: None,
        }
    }
}

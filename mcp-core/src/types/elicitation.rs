//! Elicitation: the server asks the client's user (`elicitation/create`).

use serde::{Deserialize, Serialize};

use super::{JsonObject, Meta};

/// Params of `elicitation/create`: a form or a URL to open.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ElicitRequestParams {
    /// `"form"` (default when absent) or `"url"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    /// What to ask.
    pub message: String,
    /// Form mode: a flat object schema of primitives.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requested_schema: Option<JsonObject>,
    /// URL mode: the URL to open.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// URL mode, 2025-11-25 only: the elicitation's id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elicitation_id: Option<String>,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl ElicitRequestParams {
    /// A URL-mode elicitation with its (2025-11-25) `elicitationId`, as the entries of a
    /// URL-elicitation-required error (`-32042`) need.
    ///
    /// ```
    /// let p = modelctx_core::types::ElicitRequestParams::url("e-1", "Sign in", "https://example.com/login");
    /// assert_eq!(p.mode.as_deref(), Some("url"));
    /// ```
    pub fn url(
        elicitation_id: impl Into<String>,
        message: impl Into<String>,
        url: impl Into<String>,
    ) -> Self {
        Self {
            mode: Some("url".into()),
            message: message.into(),
            requested_schema: None,
            url: Some(url.into()),
            elicitation_id: Some(elicitation_id.into()),
            meta: None,
        }
    }
}

/// The user's answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ElicitResult {
    /// `"accept"`, `"decline"` or `"cancel"`.
    pub action: String,
    /// Form values when accepted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<JsonObject>,
    /// Metadata (2025 only).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// Params of `notifications/elicitation/complete` (2025-11-25 URL mode).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ElicitationCompleteParams {
    /// The finished elicitation.
    pub elicitation_id: String,
}

impl ElicitRequestParams {
    /// A form-mode elicitation: `message` and a flat object schema of primitives (a schema
    /// that is not a JSON object is left unset).
    ///
    /// ```
    /// use modelctx_core::types::ElicitRequestParams;
    /// use serde_json::json;
    /// let p = ElicitRequestParams::form("Your name?", json!({
    ///     "type": "object", "properties": {"name": {"type": "string"}}
    /// }));
    /// assert!(p.requested_schema.is_some());
    /// ```
    pub fn form(message: impl Into<String>, requested_schema: serde_json::Value) -> Self {
        Self {
            mode: None,
            message: message.into(),
            requested_schema: super::common::object(requested_schema),
            url: None,
            elicitation_id: None,
            meta: None,
        }
    }
}

impl ElicitResult {
    /// The user accepted and filled the form with `content` (a JSON object; anything else
    /// sends no content).
    ///
    /// ```
    /// use modelctx_core::types::ElicitResult;
    /// use serde_json::json;
    /// let answer = ElicitResult::accept(json!({"name": "Ada"}));
    /// assert_eq!(answer.action, "accept");
    /// assert_eq!(ElicitResult::decline().action, "decline");
    /// ```
    pub fn accept(content: serde_json::Value) -> Self {
        Self {
            action: "accept".into(),
            content: super::common::object(content),
            meta: None,
        }
    }

    /// The user agreed to a URL-mode request (URL mode carries no content back).
    pub fn accept_url() -> Self {
        Self::answer("accept")
    }

    /// The user said no.
    pub fn decline() -> Self {
        Self::answer("decline")
    }

    /// The user dismissed the request without choosing.
    pub fn cancel() -> Self {
        Self::answer("cancel")
    }

    fn answer(action: &str) -> Self {
        Self {
            action: action.into(),
            content: None,
            meta: None,
        }
    }
}

impl ElicitationCompleteParams {
    /// The notice that the URL-mode elicitation `elicitation_id` finished.
    pub fn new(elicitation_id: impl Into<String>) -> Self {
        Self {
            elicitation_id: elicitation_id.into(),
        }
    }
}

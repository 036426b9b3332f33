//! Elicitation: the server asks the client's user (`elicitation/create`).

use serde::{Deserialize, Serialize};

use super::{JsonObject, Meta};

/// Params of `elicitation/create`: a form or a URL to open.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
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
pub struct ElicitationCompleteParams {
    /// The finished elicitation.
    pub elicitation_id: String,
}

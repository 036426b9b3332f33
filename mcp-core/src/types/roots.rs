//! Roots: the client's file-system roots (`roots/list`).

use serde::{Deserialize, Serialize};

use super::Meta;

/// A root directory or file the client exposes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Root {
    /// A `file://` URI.
    pub uri: String,
    /// Display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// `_meta` of this root: extension data the server may ignore;
    /// keys are `prefix/name` (MCP reserves `io.modelcontextprotocol/`).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// The client's answer to `roots/list`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ListRootsResult {
    /// The roots.
    pub roots: Vec<Root>,
    /// Metadata (2025 only).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl Root {
    /// A root at this `file://` URI, without a display name.
    ///
    /// ```
    /// use modelctx_core::types::Root;
    /// let root = Root::new("file:///home/me/project").with_name("project");
    /// assert_eq!(root.name.as_deref(), Some("project"));
    /// ```
    pub fn new(uri: impl Into<String>) -> Self {
        Self {
            uri: uri.into(),
            name: None,
            meta: None,
        }
    }
}

impl ListRootsResult {
    /// The answer listing these roots.
    pub fn new(roots: Vec<Root>) -> Self {
        Self { roots, meta: None }
    }
}

option_setters!(Root {
    /// Sets the display name.
    with_name => name: String,
});

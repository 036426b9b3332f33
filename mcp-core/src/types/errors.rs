//! The `data` of the MCP-specific errors.

use serde::{Deserialize, Serialize};

use super::{ClientCapabilities, ElicitRequestParams};

/// `data` of `-32022` UnsupportedProtocolVersion (2026).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct UnsupportedProtocolVersionData {
    /// Versions the server serves.
    pub supported: Vec<String>,
    /// The version the client asked for.
    pub requested: String,
}

/// `data` of `-32021` MissingRequiredClientCapability (2026).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct MissingRequiredClientCapabilityData {
    /// The capabilities the request needs.
    pub required_capabilities: ClientCapabilities,
}

/// `data` of `-32042` URLElicitationRequired (2025-11-25 only).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct UrlElicitationRequiredData {
    /// URL-mode elicitations, each with its `elicitationId`.
    pub elicitations: Vec<ElicitRequestParams>,
}

/// `data` of a resource-not-found error (`-32602` on 2026, `-32002` on 2025).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ResourceNotFoundData {
    /// The URI that was asked for.
    pub uri: String,
}

impl MissingRequiredClientCapabilityData {
    /// The data of a `-32021` error: the capabilities the client must declare.
    pub fn new(required_capabilities: ClientCapabilities) -> Self {
        Self {
            required_capabilities,
        }
    }
}

impl UrlElicitationRequiredData {
    /// The data of a `-32042` error: the URL elicitations the user must finish first.
    pub fn new(elicitations: Vec<ElicitRequestParams>) -> Self {
        Self { elicitations }
    }
}

impl ResourceNotFoundData {
    /// The data of a resource-not-found error: the URI that was asked for.
    pub fn new(uri: impl Into<String>) -> Self {
        Self { uri: uri.into() }
    }
}

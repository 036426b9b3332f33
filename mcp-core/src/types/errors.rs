//! The `data` of the MCP-specific errors.

use serde::{Deserialize, Serialize};

use super::{ClientCapabilities, ElicitRequestParams};

/// `data` of `-32022` UnsupportedProtocolVersion (2026).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UnsupportedProtocolVersionData {
    /// Versions the server serves.
    pub supported: Vec<String>,
    /// The version the client asked for.
    pub requested: String,
}

/// `data` of `-32021` MissingRequiredClientCapability (2026).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MissingRequiredClientCapabilityData {
    /// The capabilities the request needs.
    pub required_capabilities: ClientCapabilities,
}

/// `data` of `-32042` URLElicitationRequired (2025-11-25 only).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UrlElicitationRequiredData {
    /// URL-mode elicitations, each with its `elicitationId`.
    pub elicitations: Vec<ElicitRequestParams>,
}

/// `data` of a resource-not-found error (`-32602` on 2026, `-32002` on 2025).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResourceNotFoundData {
    /// The URI that was asked for.
    pub uri: String,
}

//! [`ToolError`]: a tool's expected failure, sent as an `isError` result the model reads.

use std::fmt;

/// A failure the model should read and can act on (`isError: true` with this text).
///
/// ```
/// use mcp_core::server::ToolError;
///
/// fn check(limit: u32) -> Result<u32, ToolError> {
///     if limit == 0 {
///         return Err(ToolError::new("limit must be at least 1"));
///     }
///     Ok(limit)
/// }
/// assert_eq!(check(0).unwrap_err().to_string(), "limit must be at least 1");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolError {
    message: String,
}

impl ToolError {
    /// A tool error with this message.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
        }
    }

    /// The message the model reads.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The message, by value.
    pub fn into_message(self) -> String {
        self.message
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl From<String> for ToolError {
    fn from(message: String) -> Self {
        Self::new(message)
    }
}

impl From<&str> for ToolError {
    fn from(message: &str) -> Self {
        Self::new(message)
    }
}

//! Logging: levels, `logging/setLevel` (2025), `notifications/message`.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::Meta;

/// RFC 5424 severity, ordered from `Debug` (lowest) to `Emergency`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LoggingLevel {
    /// Debug.
    Debug,
    /// Info.
    Info,
    /// Notice.
    Notice,
    /// Warning.
    Warning,
    /// Error.
    Error,
    /// Critical.
    Critical,
    /// Alert.
    Alert,
    /// Emergency.
    Emergency,
}

/// Params of `logging/setLevel`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SetLevelRequestParams {
    /// The lowest level the client wants.
    pub level: LoggingLevel,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// Params of `notifications/message`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct LoggingMessageNotificationParams {
    /// Severity.
    pub level: LoggingLevel,
    /// Logger name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logger: Option<String>,
    /// Any JSON value.
    pub data: Value,
}

impl SetLevelRequestParams {
    /// Asks for messages at `level` and above.
    pub fn new(level: LoggingLevel) -> Self {
        Self { level, meta: None }
    }
}

impl LoggingMessageNotificationParams {
    /// A log message at `level` with this data and no logger name.
    pub fn new(level: LoggingLevel, data: Value) -> Self {
        Self {
            level,
            logger: None,
            data,
        }
    }
}

option_setters!(LoggingMessageNotificationParams {
    /// Sets the logger name.
    with_logger => logger: String,
});

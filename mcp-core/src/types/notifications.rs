//! Progress and cancellation notifications.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::Meta;
use crate::request_id::RequestId;

/// Params of `notifications/progress`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ProgressNotificationParams {
    /// The token from the request's `_meta.progressToken`.
    pub progress_token: Value,
    /// Progress so far; increases with every notification. Whole numbers are written as JSON
    /// integers (`3`, not `3.0`).
    #[serde(serialize_with = "whole_as_integer")]
    pub progress: f64,
    /// Total, if known (whole numbers written as integers).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "whole_as_integer_opt"
    )]
    pub total: Option<f64>,
    /// A human-readable message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// `_meta` of this progress notification (the token is `progress_token`, not here);
    /// keys are `prefix/name` (MCP reserves `io.modelcontextprotocol/`).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// Params of `notifications/cancelled`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CancelledNotificationParams {
    /// The request to cancel.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<RequestId>,
    /// Why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// `_meta` of this cancellation notice: protocol or vendor metadata;
    /// keys are `prefix/name` (MCP reserves `io.modelcontextprotocol/`).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// Params of a notification that carries only `_meta` (the list-changed family).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct NotificationParams {
    /// The notification's only member. Sent on a 2026 `subscriptions/listen` stream, it is
    /// tagged by the engine with `io.modelcontextprotocol/subscriptionId`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// Writes a whole number that an `i64` holds exactly as a JSON integer, anything else as a float.
fn whole_as_integer<S: serde::Serializer>(value: &f64, serializer: S) -> Result<S::Ok, S::Error> {
    const EXACT: f64 = 9_007_199_254_740_992.0; // 2^53: every whole f64 below is exact
    if value.fract() == 0.0 && value.abs() <= EXACT {
        serializer.serialize_i64(*value as i64)
    } else {
        serializer.serialize_f64(*value)
    }
}

fn whole_as_integer_opt<S: serde::Serializer>(
    value: &Option<f64>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    match value {
        Some(v) => whole_as_integer(v, serializer),
        None => serializer.serialize_none(),
    }
}

impl ProgressNotificationParams {
    /// Progress `progress` for the request whose `_meta.progressToken` was `progress_token`.
    pub fn new(progress_token: Value, progress: f64) -> Self {
        Self {
            progress_token,
            progress,
            total: None,
            message: None,
            meta: None,
        }
    }
}

impl CancelledNotificationParams {
    /// The notice that cancels the request `request_id`, without a reason.
    pub fn new(request_id: RequestId) -> Self {
        Self {
            request_id: Some(request_id),
            reason: None,
            meta: None,
        }
    }
}

option_setters!(CancelledNotificationParams {
    /// Sets the reason.
    with_reason => reason: String,
});

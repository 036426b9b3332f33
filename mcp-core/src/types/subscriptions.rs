//! 2026 `subscriptions/listen`.

use serde::{Deserialize, Serialize};

use super::Meta;

/// Which notifications a listen stream wants. Omitted means not subscribed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SubscriptionFilter {
    /// `notifications/tools/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools_list_changed: Option<bool>,
    /// `notifications/prompts/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompts_list_changed: Option<bool>,
    /// `notifications/resources/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources_list_changed: Option<bool>,
    /// `notifications/resources/updated` for exactly these URIs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_subscriptions: Option<Vec<String>>,
    /// Tasks extension: `notifications/tasks` for exactly these task ids (a client that did
    /// not declare `io.modelcontextprotocol/tasks` gets `-32021`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_ids: Option<Vec<String>>,
}

/// Params of `subscriptions/listen`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SubscriptionsListenRequestParams {
    /// The filter.
    pub notifications: SubscriptionFilter,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// The final result of a listen stream that the server ends gracefully (the engine adds the
/// subscription id to `_meta`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SubscriptionsListenResult {
    /// `_meta` of the final result: the 2026 engine sets `io.modelcontextprotocol/subscriptionId`
    /// here, and adds `io.modelcontextprotocol/serverInfo` unless the handler already set it.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// Params of `notifications/subscriptions/acknowledged`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SubscriptionsAcknowledgedParams {
    /// The honoured subset of the filter.
    pub notifications: SubscriptionFilter,
    /// Metadata (the engine adds the subscription id).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl SubscriptionsAcknowledgedParams {
    /// The acknowledgement of these notifications (what the server will actually send).
    pub fn new(notifications: SubscriptionFilter) -> Self {
        Self {
            notifications,
            meta: None,
        }
    }
}

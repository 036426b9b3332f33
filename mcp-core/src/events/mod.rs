//! Change events and the bus that carries them: what subscribers of both eras hear about.
//!
//! Publish an [`Event`] from a handler ([`RequestContext::publish`](crate::lowlevel::RequestContext::publish))
//! or from anywhere else ([`ServerHandle::publish`](crate::server::ServerHandle::publish));
//! [`McpServer`](crate::server::McpServer) delivers it to
//!
//! - 2025-11-25 sessions: `notifications/{tools,prompts,resources}/list_changed` to every session,
//!   `notifications/resources/updated` to the sessions that `resources/subscribe`d that URI;
//! - 2026-07-28 `subscriptions/listen` streams whose filter asked for that kind (resource
//!   updates only for exactly the URIs listed in `resourceSubscriptions`).
//!
//! The bus is pluggable: [`MemoryBus`] (the default) reaches this process; `RedisBus` (cargo
//! feature `redis`) reaches every process subscribed to the same Redis channel, so replicas
//! behind a load balancer deliver each other's events.

mod memory;
#[cfg(feature = "redis")]
pub(crate) mod redis;

use serde::{Deserialize, Serialize};
use tokio::sync::broadcast;

use crate::error::McpError;

pub use memory::MemoryBus;
#[cfg(feature = "redis")]
pub use redis::{RedisBus, DEFAULT_CHANNEL};

/// Something subscribers are told about.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    /// The tool list changed.
    ToolsChanged,
    /// The prompt list changed.
    PromptsChanged,
    /// The resource list changed.
    ResourcesChanged,
    /// One resource's contents changed.
    ResourceUpdated {
        /// Its URI (subscribers match it exactly).
        uri: String,
    },
    /// A task of the 2026 tasks extension changed status: `notifications/tasks` to the
    /// `subscriptions/listen` streams whose filter lists its id (`taskIds`).
    TaskStatus {
        /// The task.
        task_id: String,
        /// Its new status (`working`, `input_required`, `completed`, `failed`, `cancelled`).
        status: String,
    },
}

impl Event {
    /// The notification method this event becomes.
    pub fn method(&self) -> &'static str {
        match self {
            Self::ToolsChanged => "notifications/tools/list_changed",
            Self::PromptsChanged => "notifications/prompts/list_changed",
            Self::ResourcesChanged => "notifications/resources/list_changed",
            Self::ResourceUpdated { .. } => "notifications/resources/updated",
            Self::TaskStatus { .. } => "notifications/tasks",
        }
    }
}

/// Carries events from publishers to subscribers. Implementations must deliver every event
/// published anywhere on the bus (this process included) to every receiver from
/// [`subscribe`](Self::subscribe), in publication order per publisher.
pub trait EventBus: Send + Sync + 'static {
    /// Publishes `event` without waiting for delivery. Fails only when the event cannot even
    /// be queued (a backend far behind or gone).
    fn publish(&self, event: Event) -> Result<(), McpError>;

    /// A new receiver of every event published from now on. A receiver that falls behind gets
    /// `RecvError::Lagged` and should assume anything may have changed.
    fn subscribe(&self) -> broadcast::Receiver<Event>;
}

/// How many events a slow receiver may fall behind before it lags: 1024.
pub const RECEIVER_CAPACITY: usize = 1024;

/// The bus a server publishes on, shared by its low-level table and its high-level registry
/// (replacing it through either replaces it for both).
#[derive(Clone)]
pub(crate) struct BusCell(std::sync::Arc<std::sync::RwLock<std::sync::Arc<dyn EventBus>>>);

impl Default for BusCell {
    fn default() -> Self {
        Self(std::sync::Arc::new(std::sync::RwLock::new(
            std::sync::Arc::new(MemoryBus::new()),
        )))
    }
}

impl BusCell {
    pub(crate) fn get(&self) -> std::sync::Arc<dyn EventBus> {
        self.0.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    pub(crate) fn set(&self, bus: std::sync::Arc<dyn EventBus>) {
        *self.0.write().unwrap_or_else(|p| p.into_inner()) = bus;
    }

    /// Publishes, logging a refusal (publishers outside requests have nobody to tell).
    pub(crate) fn publish(&self, event: Event) -> Result<(), McpError> {
        let result = self.get().publish(event.clone());
        if let Err(e) = &result {
            tracing::warn!(?event, error = %e.message(), "event not published");
        }
        result
    }
}

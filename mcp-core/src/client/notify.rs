//! Server notifications on the client: the handlers registered on the builder, and the queue
//! behind [`Client::next_notification`](super::Client::next_notification).

use std::sync::Arc;

use serde_json::Value;

/// A notification the server sent.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ServerNotification {
    /// The method, e.g. `notifications/progress`.
    pub method: String,
    /// Its params (`Value::Null` when absent).
    pub params: Value,
}

pub(crate) type Handler = Arc<dyn Fn(&ServerNotification) + Send + Sync>;

/// Handlers by method (`None`: every method), in registration order.
#[derive(Clone, Default)]
pub(crate) struct NotificationHandlers {
    handlers: Vec<(Option<String>, Handler)>,
}

impl std::fmt::Debug for NotificationHandlers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(
                self.handlers
                    .iter()
                    .map(|(m, _)| m.as_deref().unwrap_or("*")),
            )
            .finish()
    }
}

impl NotificationHandlers {
    pub(crate) fn add(&mut self, method: Option<&str>, handler: Handler) {
        self.handlers.push((method.map(str::to_owned), handler));
    }

    /// Runs every handler of `note.method`; a handler that panics is logged, not fatal.
    pub(crate) fn dispatch(&self, note: &ServerNotification) {
        for (method, handler) in &self.handlers {
            if method.as_deref().is_none_or(|m| m == note.method) {
                let run = std::panic::AssertUnwindSafe(|| handler(note));
                if std::panic::catch_unwind(run).is_err() {
                    tracing::error!(method = %note.method, "a notification handler panicked");
                }
            }
        }
    }
}

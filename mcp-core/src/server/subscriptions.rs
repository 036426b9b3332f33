//! Who hears about changes: 2025 sessions (every list change; resource updates for the URIs a
//! session subscribed to) and 2026 `subscriptions/listen` streams (what their filter asked for).

use std::sync::{Arc, Mutex, Weak};

use serde_json::json;
use tokio::sync::broadcast::error::RecvError;
use tokio::sync::{broadcast, watch};

use crate::era::Era;
use crate::error::McpError;
use crate::events::{BusCell, Event};
use crate::lowlevel::{RequestContext, Session};
use crate::types::{
    SubscriptionFilter, SubscriptionsAcknowledgedParams, SubscriptionsListenResult,
};

/// The list-changed events, delivered all at once when a receiver lagged behind.
const EVERY_LIST: [Event; 3] = [
    Event::ToolsChanged,
    Event::PromptsChanged,
    Event::ResourcesChanged,
];

pub(crate) struct Subscribers {
    pub(crate) bus: BusCell,
    sessions: Mutex<Vec<Session>>,
    /// The task delivering bus events to 2025 sessions (started with the first session).
    fanout: Mutex<Option<tokio::task::AbortHandle>>,
    /// Bumped to end every open listen stream gracefully.
    closing: watch::Sender<u64>,
}

impl Drop for Subscribers {
    fn drop(&mut self) {
        if let Some(task) = self
            .fanout
            .get_mut()
            .unwrap_or_else(|p| p.into_inner())
            .take()
        {
            task.abort();
        }
    }
}

impl Subscribers {
    pub(crate) fn new(bus: BusCell) -> Self {
        Self {
            bus,
            sessions: Mutex::new(Vec::new()),
            fanout: Mutex::new(None),
            closing: watch::channel(0).0,
        }
    }

    pub(crate) fn session_opened(self: &Arc<Self>, session: Session) {
        // Only 2025 sessions are told about changes this way (2026 clients hear them through
        // subscriptions/listen).
        if session.era() != Some(Era::Legacy) {
            return;
        }
        self.sessions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(session.clone());
        self.start_fanout();
    }

    pub(crate) fn session_closed(&self, session: &Session) {
        if session.era() != Some(Era::Legacy) {
            return;
        }
        self.sessions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .retain(|s| s != session);
    }

    /// Ends every open `subscriptions/listen` stream with its final result.
    pub(crate) fn close_listeners(&self) {
        self.closing.send_modify(|generation| *generation += 1);
    }

    /// Starts (once, inside the runtime) the task that delivers events to 2025 sessions. The
    /// receiver is taken here, before the task runs, so no event published after the first
    /// session opened is missed.
    fn start_fanout(self: &Arc<Self>) {
        let mut fanout = self.fanout.lock().unwrap_or_else(|p| p.into_inner());
        if fanout.is_some() || tokio::runtime::Handle::try_current().is_err() {
            return;
        }
        let rx = self.bus.get().subscribe();
        let task = tokio::spawn(fan_out(Arc::downgrade(self), rx));
        *fanout = Some(task.abort_handle());
    }

    /// Sends `event` to the 2025 sessions that should hear it.
    fn deliver_legacy(&self, event: &Event) {
        let sessions: Vec<Session> = self
            .sessions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .filter(|s| s.era() == Some(Era::Legacy) && !s.is_closed())
            .cloned()
            .collect();
        let method = event.method();
        for session in sessions {
            let params = match event {
                Event::ResourceUpdated { uri } => {
                    if !session.is_subscribed(uri) {
                        continue;
                    }
                    json!({ "uri": uri })
                }
                // The tasks extension is 2026 only.
                Event::TaskStatus { .. } => continue,
                _ => json!({}),
            };
            if !session.try_notify(method, params) {
                tracing::warn!(session = session.id(), method, "notification not delivered");
            }
        }
    }
}

async fn fan_out(subscribers: Weak<Subscribers>, mut rx: broadcast::Receiver<Event>) {
    loop {
        let events = match rx.recv().await {
            Ok(event) => vec![event],
            Err(RecvError::Lagged(_)) => EVERY_LIST.to_vec(),
            Err(RecvError::Closed) => return,
        };
        let Some(subscribers) = subscribers.upgrade() else {
            return;
        };
        for event in &events {
            subscribers.deliver_legacy(event);
        }
    }
}

/// Serves one 2026 `subscriptions/listen` stream: the acknowledgement (the honoured filter),
/// then every matching event, until the client goes away or the server closes listeners.
pub(crate) async fn listen<S: Send + Sync + 'static>(
    subscribers: &Subscribers,
    ctx: RequestContext<S>,
    filter: SubscriptionFilter,
) -> Result<SubscriptionsListenResult, McpError> {
    let wants = |flag: Option<bool>| flag == Some(true);
    let honoured = SubscriptionFilter {
        tools_list_changed: wants(filter.tools_list_changed).then_some(true),
        prompts_list_changed: wants(filter.prompts_list_changed).then_some(true),
        resources_list_changed: wants(filter.resources_list_changed).then_some(true),
        resource_subscriptions: filter
            .resource_subscriptions
            .filter(|uris| !uris.is_empty()),
        task_ids: filter.task_ids.filter(|ids| !ids.is_empty()),
    };
    if honoured.task_ids.is_some() {
        super::tasks::support::require_extension(&ctx)?;
    }
    let mut events = subscribers.bus.get().subscribe();
    let mut closing = subscribers.closing.subscribe();
    ctx.notify(
        "notifications/subscriptions/acknowledged",
        SubscriptionsAcknowledgedParams::new(honoured.clone()),
    )
    .await?;
    loop {
        let batch = tokio::select! {
            received = events.recv() => match received {
                Ok(event) => vec![event],
                Err(RecvError::Lagged(_)) => EVERY_LIST.to_vec(),
                Err(RecvError::Closed) => break,
            },
            _ = closing.changed() => break,
        };
        for event in batch {
            let params = match &event {
                Event::ToolsChanged if honoured.tools_list_changed.is_some() => json!({}),
                Event::PromptsChanged if honoured.prompts_list_changed.is_some() => json!({}),
                Event::ResourcesChanged if honoured.resources_list_changed.is_some() => json!({}),
                Event::ResourceUpdated { uri }
                    if honoured
                        .resource_subscriptions
                        .as_ref()
                        .is_some_and(|uris| uris.contains(uri)) =>
                {
                    json!({ "uri": uri })
                }
                Event::TaskStatus { task_id, status }
                    if honoured
                        .task_ids
                        .as_ref()
                        .is_some_and(|ids| ids.contains(task_id)) =>
                {
                    json!({ "taskId": task_id, "status": status })
                }
                _ => continue,
            };
            ctx.notify(event.method(), params).await?;
        }
    }
    Ok(SubscriptionsListenResult::default())
}

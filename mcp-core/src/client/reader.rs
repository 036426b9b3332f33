//! The reader task: routes what the transport delivers. Answers go to their requests,
//! notifications to progress callbacks, the builder's handlers and the queue, the server's
//! requests (2025) to the input callbacks.

use std::sync::Arc;

use serde_json::value::RawValue;
use serde_json::{Map, Value};
use tokio::sync::mpsc;

use super::notify::ServerNotification;
use super::shared::Shared;
use crate::error::McpError;
use crate::jsonrpc::{self, Message, RequestId};
use crate::transport::{Incoming, Outgoing, OutgoingKind};

/// Routes what the transport delivers: answers to their requests, notifications to progress
/// callbacks, handlers and the queue, the server's requests (2025) to the input callbacks.
pub(super) async fn read_loop(
    shared: Arc<Shared>,
    mut incoming: mpsc::Receiver<Incoming>,
    notes: mpsc::Sender<ServerNotification>,
    out: mpsc::WeakSender<Outgoing>,
) {
    let mut reason = "the transport ended".to_owned();
    while let Some(item) = incoming.recv().await {
        match item {
            Incoming::Message(bytes) => {
                if let Err(why) = route(&shared, &bytes, &notes, &out).await {
                    // Not JSON-RPC: the stream can no longer be trusted to carry answers.
                    tracing::error!("{why}");
                    reason = why;
                    break;
                }
            }
            Incoming::Answer { id, message } => {
                if let Err(why) = route(&shared, &message, &notes, &out).await {
                    shared.pending.fail(&id, McpError::internal(why));
                }
            }
            Incoming::Failed { id, error } => {
                shared.pending.fail(&id, error);
            }
            Incoming::Closed(why) => {
                reason = why;
                break;
            }
        }
    }
    shared.pending.close(&reason);
}

async fn route(
    shared: &Arc<Shared>,
    bytes: &[u8],
    notes: &mpsc::Sender<ServerNotification>,
    out: &mpsc::WeakSender<Outgoing>,
) -> Result<(), String> {
    let message = match jsonrpc::decode(bytes) {
        Ok(message) => message,
        Err(e) if e.id.is_some() || serde_json::from_slice::<Value>(bytes).is_ok() => {
            tracing::warn!(error = %e.error, "the server sent an invalid JSON-RPC message; ignored");
            return Ok(());
        }
        Err(_) => {
            let text = String::from_utf8_lossy(&bytes[..bytes.len().min(200)]).into_owned();
            return Err(format!(
                "the server sent something that is not JSON-RPC: {text:?}"
            ));
        }
    };
    match message {
        Message::Response { id, outcome } => {
            shared.pending.resolve(&id, outcome);
        }
        Message::Notification { method, params } => {
            let params = params
                .and_then(|raw| serde_json::from_str(raw.get()).ok())
                .unwrap_or(Value::Null);
            let note = ServerNotification { method, params };
            if note.method == "notifications/progress" {
                progress(shared, &note);
            }
            if let Some(cache) = &shared.cache {
                cache.invalidate(&note.method, &note.params);
            }
            shared.handlers.dispatch(&note);
            if notes.try_send(note).is_err() {
                tracing::debug!("client notification queue full; notification dropped");
            }
        }
        Message::Request { id, method, params } => {
            answer_server_request(shared, id, method, params, out.clone());
        }
    }
    Ok(())
}

fn progress(shared: &Shared, note: &ServerNotification) {
    let token = match note.params.get("progressToken") {
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => return,
    };
    let entry = shared
        .progress
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .get(&token)
        .cloned();
    if let Some((callback, reset)) = entry {
        reset.notify_one();
        if let Ok(params) = serde_json::from_value(note.params.clone()) {
            callback(params);
        }
    }
}

/// A 2025 server-to-client request: `ping` at once, the input methods through the builder's
/// callbacks in their own task (a person may take a while to answer).
fn answer_server_request(
    shared: &Arc<Shared>,
    id: RequestId,
    method: String,
    params: Option<Box<RawValue>>,
    out: mpsc::WeakSender<Outgoing>,
) {
    let params = params
        .and_then(|raw| serde_json::from_str(raw.get()).ok())
        .unwrap_or(Value::Object(Map::new()));
    let shared = shared.clone();
    tokio::spawn(async move {
        let outcome = if method == "ping" {
            Ok(Value::Object(Map::new()))
        } else {
            shared.input.answer(&method, params).await
        };
        let body = match outcome {
            Ok(result) => jsonrpc::encode_result(&id, &result),
            Err(e) => jsonrpc::encode_error(Some(&id), &e.to_wire(false)),
        };
        let negotiated = shared
            .negotiated
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        let message = Outgoing {
            body,
            kind: OutgoingKind::Response,
            method: None,
            era: negotiated.era,
            protocol_version: Some(negotiated.version),
            name: None,
            headers: Vec::new(),
        };
        // A weak handle: a callback still running never keeps `close` waiting.
        if let Some(out) = out.upgrade() {
            let _ = out.send(message).await;
        }
    });
}

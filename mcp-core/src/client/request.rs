//! One request on the wire: the era's envelope added, the transport's hints filled in, the
//! answer awaited with its timeout, and cancellation on the wire when the caller gives up.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use serde_json::value::RawValue;
use serde_json::{Map, Value};
use tokio::sync::Notify;

use super::cache::ResultCache;
use super::shared::Negotiated;
use super::{Client, RequestOptions};
use crate::era::{Era, META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_PROTOCOL_VERSION};
use crate::error::McpError;
use crate::jsonrpc::{self, RequestId};
use crate::peer::Awaiting;
use crate::transport::{Outgoing, OutgoingKind};

impl Client {
    /// Sends request `method` (with the era's envelope) and returns at once; await
    /// [`PendingRequest::response`] for the answer, [`cancel`](Self::cancel) it, or drop it
    /// (which cancels it too).
    pub async fn start_request(
        &self,
        method: &str,
        params: Value,
    ) -> Result<PendingRequest<'_>, McpError> {
        let (awaiting, _token) = self
            .begin(method, &params, &RequestOptions::default(), Vec::new())
            .await?;
        Ok(PendingRequest {
            inflight: InFlight::new(self, awaiting, method),
        })
    }

    /// Cancels request `id` (from [`PendingRequest::id`]): `notifications/cancelled` (on 2026
    /// HTTP the response is closed instead); the server stops its handler and the pending
    /// request resolves to an error.
    pub async fn cancel(&self, id: &RequestId, reason: Option<&str>) -> Result<(), McpError> {
        self.shared.pending.fail(
            id,
            McpError::internal(format!("request {id} was cancelled")),
        );
        let message = self.cancel_message(id, reason);
        self.out.send(message).await.map_err(|_| self.closed())
    }

    pub(super) fn closed(&self) -> McpError {
        McpError::internal("the connection is closed")
    }

    pub(super) fn version_header(&self, negotiated: &Negotiated) -> Option<Arc<str>> {
        // A 2025 client announces the version only once `initialize` settled it.
        match negotiated.era {
            Era::Legacy if negotiated.initialize.is_none() => None,
            _ => Some(negotiated.version.clone()),
        }
    }

    fn cancel_message(&self, id: &RequestId, reason: Option<&str>) -> Outgoing {
        let negotiated = self.negotiated();
        let mut params = Map::new();
        params.insert("requestId".into(), id.to_value());
        if let Some(reason) = reason {
            params.insert("reason".into(), Value::from(reason));
        }
        Outgoing {
            body: jsonrpc::encode_notification(
                "notifications/cancelled",
                Some(&Value::Object(params)),
            ),
            kind: OutgoingKind::Cancel(id.clone()),
            method: Some("notifications/cancelled".into()),
            era: negotiated.era,
            protocol_version: self.version_header(&negotiated),
            name: None,
            headers: Vec::new(),
        }
    }

    /// One request, one answer (no input loop): from the cache when allowed, else through the
    /// transport, with the timeout and cancellation on drop.
    pub(crate) async fn send(
        &self,
        method: &str,
        params: &Value,
        options: &RequestOptions,
    ) -> Result<Box<RawValue>, McpError> {
        let cache_key = match &self.shared.cache {
            Some(cache) if self.era() == Era::Modern && params.get("inputResponses").is_none() => {
                ResultCache::key(method, params).map(|key| (cache, key))
            }
            _ => None,
        };
        if let Some((cache, key)) = &cache_key {
            if let Some(raw) = cache.get(key) {
                return Ok(raw);
            }
        }
        let mut headers = Vec::new();
        if method == "tools/call" && self.carries_headers && self.era() == Era::Modern {
            headers = self.mirrored_headers(params).await;
        }
        let (awaiting, token) = self.begin(method, params, options, headers).await?;
        let timeout = match options.timeout {
            Some(timeout) => timeout,
            None if method == "subscriptions/listen" => None,
            None => self.config.request_timeout,
        };
        let reset = token.as_ref().and_then(|t| self.progress_reset(t));
        let inflight = InFlight::new(self, awaiting, method);
        let result = inflight.wait(timeout, reset).await;
        if let Some(token) = token {
            self.shared
                .progress
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .remove(&token);
        }
        let raw = result?;
        if let Some((cache, key)) = cache_key {
            cache.put(key, &raw);
        }
        Ok(raw)
    }

    fn progress_reset(&self, token: &str) -> Option<Arc<Notify>> {
        self.shared
            .progress
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(token)
            .map(|(_, notify)| notify.clone())
    }

    /// Registers the request, adds the era's envelope and hands it to the transport.
    async fn begin(
        &self,
        method: &str,
        params: &Value,
        options: &RequestOptions,
        mut headers: Vec<(String, String)>,
    ) -> Result<(Awaiting, Option<String>), McpError> {
        let negotiated = self.negotiated();
        let empty = Value::Object(Map::new());
        let params = match params {
            Value::Object(_) => params,
            Value::Null => &empty,
            other => {
                return Err(McpError::invalid_params(format!(
                    "params must be an object, not {other}"
                )))
            }
        };
        let token = options.on_progress.as_ref().map(|callback| {
            let token = format!("p-{}", self.next_token.fetch_add(1, Ordering::Relaxed));
            self.shared
                .progress
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(token.clone(), (callback.clone(), Arc::new(Notify::new())));
            token
        });
        // The params are copied only when `_meta` must be added to (2026, progress, trace).
        let with_meta;
        let params = if negotiated.era == Era::Modern || token.is_some() || options.trace.is_some()
        {
            let mut map = params.as_object().cloned().unwrap_or_default();
            let meta = map
                .entry("_meta")
                .or_insert_with(|| Value::Object(Map::new()));
            if let Value::Object(meta) = meta {
                if negotiated.era == Era::Modern {
                    self.add_envelope(meta, &negotiated.version);
                }
                if let Some(token) = &token {
                    meta.insert("progressToken".into(), Value::from(token.as_str()));
                }
                if let Some(trace) = &options.trace {
                    trace.write_to(meta);
                }
            }
            with_meta = Value::Object(map);
            &with_meta
        } else {
            params
        };
        headers.extend(options.headers.iter().cloned());
        let name = match method {
            "tools/call" | "prompts/get" => params.get("name"),
            "resources/read" => params.get("uri"),
            "tasks/get" | "tasks/update" | "tasks/cancel" => params.get("taskId"),
            _ => None,
        }
        .and_then(Value::as_str)
        .map(str::to_owned);
        let awaiting = self.shared.pending.register()?;
        let message = Outgoing {
            body: jsonrpc::encode_request(awaiting.id(), method, Some(params)),
            kind: OutgoingKind::Request(awaiting.id().clone()),
            method: Some(method.into()),
            era: negotiated.era,
            protocol_version: self.version_header(&negotiated),
            name,
            headers,
        };
        self.out.send(message).await.map_err(|_| self.closed())?;
        Ok((awaiting, token))
    }

    /// True when the transport sends per-request headers (HTTP).
    pub(crate) fn carries_headers(&self) -> bool {
        self.carries_headers
    }

    /// The `Mcp-Param-*` headers of a `tools/call`, learning the tool's annotations from
    /// `tools/list` the first time a tool is called.
    async fn mirrored_headers(&self, params: &Value) -> Vec<(String, String)> {
        let Some(name) = params.get("name").and_then(Value::as_str) else {
            return Vec::new();
        };
        let known = |client: &Self| {
            client
                .param_headers
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .get(name)
                .cloned()
        };
        let mirrored = match known(self) {
            Some(found) => found,
            None => {
                if let Err(e) = self.learn_tools().await {
                    tracing::debug!(error = %e, "tools/list failed; no Mcp-Param headers");
                }
                let mut map = self.param_headers.lock().unwrap_or_else(|p| p.into_inner());
                map.entry(name.to_owned()).or_default().clone()
            }
        };
        let arguments = params.get("arguments").unwrap_or(&Value::Null);
        super::param_headers::headers_for(&mirrored, arguments)
    }

    /// Lists every tool to learn their annotations (straight through the transport, not
    /// through [`send`](Self::send), which calls this).
    async fn learn_tools(&self) -> Result<(), McpError> {
        super::verbs::all_pages(|cursor| async move {
            let params = match &cursor {
                Some(c) => serde_json::json!({ "cursor": c }),
                None => serde_json::json!({}),
            };
            let options = RequestOptions::default();
            let (awaiting, _) = self
                .begin("tools/list", &params, &options, Vec::new())
                .await?;
            let raw = InFlight::new(self, awaiting, "tools/list")
                .wait(self.config.request_timeout, None)
                .await?;
            let mut page: crate::types::ListToolsResult = serde_json::from_str(raw.get())?;
            self.remember_tools(&mut page);
            Ok((Vec::<()>::new(), page.next_cursor))
        })
        .await
        .map(drop)
    }

    fn add_envelope(&self, meta: &mut Map<String, Value>, version: &str) {
        meta.entry(META_PROTOCOL_VERSION)
            .or_insert_with(|| Value::from(version));
        meta.entry(META_CLIENT_CAPABILITIES)
            .or_insert_with(|| self.envelope.0.clone());
        meta.entry(META_CLIENT_INFO)
            .or_insert_with(|| self.envelope.1.clone());
    }
}

/// A request on the wire: cancelled (on the wire) if dropped before its answer.
struct InFlight<'a> {
    client: &'a Client,
    awaiting: Option<Awaiting>,
    id: RequestId,
    method: String,
}

impl<'a> InFlight<'a> {
    fn new(client: &'a Client, awaiting: Awaiting, method: &str) -> Self {
        Self {
            client,
            id: awaiting.id().clone(),
            awaiting: Some(awaiting),
            method: method.to_owned(),
        }
    }

    async fn wait(
        mut self,
        timeout: Option<Duration>,
        reset: Option<Arc<Notify>>,
    ) -> Result<Box<RawValue>, McpError> {
        let Some(awaiting) = self.awaiting.as_mut() else {
            return Err(McpError::internal("the request was already awaited"));
        };
        let Some(limit) = timeout else {
            return awaiting.wait().await;
        };
        let expired = {
            let answer = awaiting.wait();
            tokio::pin!(answer);
            loop {
                let progressed = async {
                    match &reset {
                        Some(notify) => notify.notified().await,
                        None => std::future::pending().await,
                    }
                };
                tokio::select! {
                    result = &mut answer => return result,
                    _ = progressed => continue,
                    _ = tokio::time::sleep(limit) => break limit,
                }
            }
        };
        let reason = format!("no answer within {} s", expired.as_secs_f64());
        if let Some(awaiting) = self.awaiting.take() {
            awaiting.abandon();
        }
        let message = self.client.cancel_message(&self.id, Some(&reason));
        let _ = self.client.out.try_send(message);
        Err(McpError::internal(format!(
            "{}: request timed out ({reason}); it was cancelled",
            self.method
        )))
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        let Some(awaiting) = self.awaiting.take() else {
            return;
        };
        if awaiting.is_waiting() && awaiting.abandon() {
            let message = self
                .client
                .cancel_message(&self.id, Some("the client gave up"));
            let _ = self.client.out.try_send(message);
        }
    }
}

/// A request sent by [`Client::start_request`], not answered yet. Dropping it cancels the
/// request on the wire.
pub struct PendingRequest<'a> {
    inflight: InFlight<'a>,
}

impl std::fmt::Debug for PendingRequest<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PendingRequest")
            .field("id", &self.inflight.id)
            .field("method", &self.inflight.method)
            .finish_non_exhaustive()
    }
}

impl PendingRequest<'_> {
    /// Its JSON-RPC id (what [`Client::cancel`] takes).
    pub fn id(&self) -> &RequestId {
        &self.inflight.id
    }

    /// The result (or the server's error). No timeout: the caller decides how long to wait.
    pub async fn response(self) -> Result<Value, McpError> {
        let raw = self.inflight.wait(None, None).await?;
        Ok(serde_json::from_str(raw.get())?)
    }
}

//! Serves any stdio MCP server over Streamable HTTP, both eras: a low-level server whose handlers
//! forward each request through a [`Client`] connected to the stdio program.
//!
//! ```text
//! cargo run --example bridge -- --port 8080 -- CMD ARGS
//! ```
//!
//! Prints `http://127.0.0.1:PORT/mcp` on its first line. What it forwards: the lists, calls,
//! reads, prompts and completions (with their progress, and with cancellation: a frontend that
//! gives up cancels the backend request); multi-round-trip input (a 2026 frontend gets the
//! backend's `input_required` as it is, `requestState` included, and its retry goes back
//! unchanged; a 2025 frontend is asked on its request's stream and the backend retried with the
//! answers); list-changed notifications (the backend's, from its 2025 session or a 2026
//! `subscriptions/listen` stream the bridge keeps open, become the bridge's, in both eras); the
//! frontend's client capabilities, so the backend asks only for what the frontend can answer.
//! Log messages are relayed to the requests in flight that asked for them (a 2026 backend's
//! messages on stdio name no request); the extensions the backend declares (tasks, skills), with
//! their methods. Not forwarded: resource-updated notifications, and task status notifications
//! (`subscriptions/listen {taskIds}`): a client of the bridge polls `tasks/get`.

use std::sync::{Arc, Mutex};

use modelctx::client::{Client, RequestOptions};
use modelctx::era::Era;
use modelctx::events::{Event, EventBus, MemoryBus};
use modelctx::lowlevel::{ParamHeaderTable, RequestContext};
use modelctx::server::McpServer;
use modelctx::transport::{ChildProcess, HttpConfig};
use modelctx::types::{EmptyResult, InputRequiredResult, LoggingMessageNotificationParams, Tool};
use modelctx::McpError;
use serde_json::{Map, Value};

/// The methods forwarded as they are.
const FORWARDED: &[&str] = &[
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "prompts/list",
    "prompts/get",
    "completion/complete",
];

/// The methods of the extensions (SEP-2663 tasks, SEP-2640 skills), forwarded when the backend
/// declares the extension (which the bridge then declares too).
const EXTENSION_METHODS: &[(&str, &str)] = &[
    ("tasks/get", modelctx::types::TASKS_EXTENSION),
    ("tasks/update", modelctx::types::TASKS_EXTENSION),
    ("tasks/cancel", modelctx::types::TASKS_EXTENSION),
    ("skills/list", modelctx::types::SKILLS_EXTENSION),
    ("skills/get", modelctx::types::SKILLS_EXTENSION),
    (
        "resources/directory/read",
        modelctx::types::SKILLS_EXTENSION,
    ),
];

/// The frontend's request params as the backend should see them: its `_meta` replaced by the
/// frontend's client capabilities and log level (the client adds the rest of its envelope).
fn backend_params(ctx: &RequestContext, mut params: Map<String, Value>) -> Value {
    let level = match ctx.era() {
        Era::Legacy => ctx
            .session()
            .and_then(|s| s.log_level())
            .and_then(|l| serde_json::to_value(l).ok()),
        Era::Modern => ctx
            .meta()
            .and_then(|m| m.get(modelctx::era::META_LOG_LEVEL))
            .cloned(),
    };
    params.remove("_meta");
    let capabilities = serde_json::to_value(ctx.client_capabilities())
        .unwrap_or_else(|_| Value::Object(Map::new()));
    let capabilities = match (ctx.era(), ctx.meta()) {
        (Era::Modern, Some(meta)) => meta
            .get(modelctx::era::META_CLIENT_CAPABILITIES)
            .cloned()
            .unwrap_or(capabilities),
        _ => capabilities,
    };
    let mut meta = Map::new();
    meta.insert(modelctx::era::META_CLIENT_CAPABILITIES.into(), capabilities);
    if let Some(level) = level {
        meta.insert(modelctx::era::META_LOG_LEVEL.into(), level);
    }
    params.insert("_meta".into(), Value::Object(meta));
    Value::Object(params)
}

/// The frontend requests waiting for the backend's log messages. A 2026 backend's log
/// messages on stdio name no request, so each goes to every request in flight that asked for
/// logs (exact when one request at a time logs, as is usual).
#[derive(Clone, Default)]
struct LogRelay {
    listeners: Arc<Mutex<Vec<(u64, LogSender)>>>,
    next: Arc<std::sync::atomic::AtomicU64>,
}

type LogSender = tokio::sync::mpsc::UnboundedSender<LoggingMessageNotificationParams>;

impl LogRelay {
    fn listen(
        &self,
    ) -> (
        LogGuard,
        tokio::sync::mpsc::UnboundedReceiver<LoggingMessageNotificationParams>,
    ) {
        let id = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        self.listeners
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push((id, tx));
        (LogGuard(self.clone(), id), rx)
    }

    fn relay(&self, message: LoggingMessageNotificationParams) {
        for (_, tx) in self
            .listeners
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
        {
            let _ = tx.send(message.clone());
        }
    }
}

/// Stops relaying logs to one request when it ends.
struct LogGuard(LogRelay, u64);

impl Drop for LogGuard {
    fn drop(&mut self) {
        let mut listeners = self.0.listeners.lock().unwrap_or_else(|p| p.into_inner());
        listeners.retain(|(id, _)| *id != self.1);
    }
}

/// One forwarded request: progress and log messages relayed to the frontend while the
/// backend works.
async fn forward_once(
    backend: &Client,
    logs: &LogRelay,
    ctx: &RequestContext,
    method: &str,
    params: Value,
) -> Result<Value, McpError> {
    let (_listening, mut log_rx) = logs.listen();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let mut options = RequestOptions::new().timeout(None);
    if ctx.progress_token().is_some() {
        options = options.on_progress(move |p| {
            let _ = tx.send(p);
        });
    }
    let answer = backend.request_once(method, params, &options);
    tokio::pin!(answer);
    loop {
        tokio::select! {
            result = &mut answer => return result,
            Some(p) = rx.recv() => {
                let mut report = ctx.progress(p.progress);
                if let Some(total) = p.total {
                    report = report.total(total);
                }
                if let Some(message) = p.message {
                    report = report.message(message);
                }
                report.await;
            }
            Some(m) = log_rx.recv() => {
                let _ = ctx.log_as(m.level, m.logger.as_deref(), m.data).await;
            }
        }
    }
}

async fn forward(
    backend: Arc<Client>,
    logs: LogRelay,
    // The `x-mcp-header` arguments of the backend's tools, learnt from the lists passing
    // through, so the bridge's HTTP transport checks the frontend's `Mcp-Param-*` headers.
    mirrored: ParamHeaderTable,
    ctx: RequestContext,
    method: &'static str,
    params: Map<String, Value>,
) -> Result<Value, McpError> {
    let mut params = backend_params(&ctx, params);
    loop {
        let result = forward_once(&backend, &logs, &ctx, method, params.clone()).await?;
        if method == "tools/list" {
            let tools = result.get("tools").cloned().unwrap_or(Value::Null);
            let tools: Vec<Tool> = serde_json::from_value(tools).unwrap_or_default();
            for tool in tools {
                mirrored.set(tool.name.clone(), tool.param_headers().unwrap_or_default());
            }
        }
        if result.get("resultType").and_then(Value::as_str) != Some("input_required") {
            return Ok(result);
        }
        let paused: InputRequiredResult = serde_json::from_value(result)?;
        if ctx.era() == Era::Modern {
            // The frontend answers and retries; its retry comes back through here unchanged.
            return Err(McpError::input_required(paused));
        }
        // A 2025 frontend: ask it on this request's stream, then retry the backend.
        let mut responses = Map::new();
        for (key, request) in paused.input_requests.iter().flatten() {
            let method = request.get("method").and_then(Value::as_str).unwrap_or("");
            let asked = request.get("params").cloned().unwrap_or(Value::Null);
            let answer: Value = ctx.request(method, asked).await?;
            responses.insert(key.clone(), answer);
        }
        if let Value::Object(map) = &mut params {
            map.insert("inputResponses".into(), Value::Object(responses));
            match &paused.request_state {
                Some(state) => map.insert("requestState".into(), Value::from(state.as_str())),
                None => map.remove("requestState"),
            };
        }
    }
}

/// The bridge's server: the high-level server (for its list-changed fan-out to 2025 sessions
/// and 2026 listen streams) with one forwarding handler per method the backend serves in place
/// of its own registries.
fn bridge(backend: Arc<Client>, bus: MemoryBus, logs: LogRelay) -> Result<McpServer, McpError> {
    let info = backend.server_info();
    let mut high = McpServer::new(info.as_ref().map_or("bridge", |i| i.name.as_str()));
    if let Some(info) = info {
        high = high.version(info.version);
    }
    if let Some(instructions) = backend.instructions() {
        high = high.instructions(instructions);
    }
    let mut high = high.event_bus(bus);
    let capabilities = backend.server_capabilities().unwrap_or_default();
    let server = high.lowlevel();
    // The backend's requestState passes through as it is: the backend seals its own.
    server.unsealed_request_state();
    let serves = |method: &str| match method.split('/').next() {
        Some("tools") => capabilities.tools.is_some(),
        Some("resources") => capabilities.resources.is_some(),
        Some("prompts") => capabilities.prompts.is_some(),
        Some("completion") => capabilities.completions.is_some(),
        _ => false,
    };
    if capabilities.tools.is_none() {
        server.remove_request_handler("tools/list");
        server.remove_request_handler("tools/call");
    }
    let extensions = capabilities.extensions.clone().unwrap_or_default();
    let extended = EXTENSION_METHODS
        .iter()
        .filter(|(_, extension)| extensions.contains_key(*extension))
        .map(|(method, _)| method);
    if !extensions.is_empty() {
        let mut capabilities = modelctx::types::ServerCapabilities::default();
        capabilities.extensions = Some(extensions.clone());
        server.extra_capabilities(capabilities);
    }
    let mirrored = server.param_headers().clone();
    for &method in FORWARDED.iter().filter(|m| serves(m)).chain(extended) {
        let (backend, mirrored, logs) = (backend.clone(), mirrored.clone(), logs.clone());
        server.add_request_handler(method, move |ctx, params: Map<String, Value>| {
            forward(
                backend.clone(),
                logs.clone(),
                mirrored.clone(),
                ctx,
                method,
                params,
            )
        })?;
    }
    if capabilities.logging.is_some() {
        // The engine keeps the level on the 2025 session; forwarded requests carry it.
        server.add_request_handler("logging/setLevel", |_, _: Value| async {
            Ok(EmptyResult::default())
        })?;
    }
    server
        .tools_list_changed(capabilities.tools.is_some())
        .prompts_list_changed(capabilities.prompts.is_some())
        .resources_list_changed(capabilities.resources.is_some());
    Ok(high)
}

/// Keeps a 2026 backend's `subscriptions/listen` stream open (reopened if it ends), so its list
/// changes reach the bridge.
fn listen_to(backend: Arc<Client>) {
    tokio::spawn(async move {
        let filter = serde_json::json!({"notifications": {
            "toolsListChanged": true, "promptsListChanged": true, "resourcesListChanged": true
        }});
        loop {
            let Ok(listen) = backend
                .start_request("subscriptions/listen", filter.clone())
                .await
            else {
                return;
            };
            if listen.response().await.is_err() {
                return;
            }
        }
    });
}

fn parse_args() -> Result<(u16, Vec<String>), String> {
    let mut args = std::env::args().skip(1);
    let mut port = 0u16;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--port" => {
                port = args
                    .next()
                    .and_then(|p| p.parse().ok())
                    .ok_or("--port takes a number")?
            }
            "--" => break,
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    let command: Vec<String> = args.collect();
    if command.is_empty() {
        return Err("usage: bridge [--port N] -- CMD ARGS".into());
    }
    Ok((port, command))
}

#[tokio::main]
async fn main() -> modelctx::Result<()> {
    let (port, command) = parse_args().map_err(McpError::invalid_params)?;
    let bus = MemoryBus::new();
    let relay = bus.clone();
    let logs = LogRelay::default();
    let log_relay = logs.clone();
    let backend = Client::builder()
        .on_log_message(move |m| log_relay.relay(m))
        .on_notification("notifications/tools/list_changed", {
            let relay = relay.clone();
            move |_| drop(relay.publish(Event::ToolsChanged))
        })
        .on_notification("notifications/prompts/list_changed", {
            let relay = relay.clone();
            move |_| drop(relay.publish(Event::PromptsChanged))
        })
        .on_notification("notifications/resources/list_changed", move |_| {
            drop(relay.publish(Event::ResourcesChanged))
        })
        .request_timeout(None)
        .connect(ChildProcess::new(&command[0]).args(&command[1..]))
        .await?;
    let backend = Arc::new(backend);
    if backend.era() == Era::Modern {
        listen_to(backend.clone());
    }
    let server = bridge(backend, bus, logs)?;
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
    println!("http://{}/mcp", listener.local_addr()?);
    // Serves until the process is stopped; the backend is killed with it.
    server
        .serve_http_on(listener, HttpConfig::default(), std::future::pending())
        .await
}

//! [`McpServer`]: the high-level server. Registries for tools, built on the low-level table.

use std::future::Future;
use std::sync::Arc;

use serde_json::{json, Value};

use super::output::ErrorRoute;
use super::prompts::{IntoPrompt, PromptDef};
use super::registry::{remove_where, upsert, Registry};
use super::resources::{IntoResource, ResourceDef};
use super::tool::{IntoTool, IntoTools, ToolSet};
use crate::engine::unwind::CatchUnwind;
use crate::era::Era;
use crate::error::{echo_capped, restore_written_integers, McpError};
use crate::events::{Event, EventBus};
use crate::lowlevel::{erase_request, RequestContext, Server};
use crate::serve::IntoServer;
use crate::types::*;

/// The high-level MCP server.
///
/// It owns a low-level [`Server`] and installs ordinary handlers into it (`tools/list`,
/// `tools/call`, `subscriptions/listen`); [`lowlevel`](Self::lowlevel) hands you that table to
/// replace one method and keep the rest.
///
/// ```
/// use mcp_core::server::{McpServer, ToolDef};
/// use mcp_core::types::CallToolResult;
/// use serde_json::json;
///
/// let hello = ToolDef::from_schema("hello", json!({"type": "object"}), |_, _| async {
///     Ok(CallToolResult::text("Hello!"))
/// }).unwrap();
/// let mut server = McpServer::new("greeter").version("1.0.0").tool(hello);
/// server.lowlevel().add_request_handler("greeter/ping", |_, _: serde_json::Value| async {
///     Ok(json!({"pong": true}))
/// }).unwrap();
/// ```
pub struct McpServer<S = ()> {
    lowlevel: Server<S>,
    registry: Arc<Registry<S>>,
}

impl McpServer<()> {
    /// A server named `name` without lifespan state.
    pub fn new(name: impl Into<String>) -> Self {
        Self::from_lowlevel(Server::new(name))
    }
}

impl<S: Send + Sync + 'static> McpServer<S> {
    /// A server whose tools can take `RequestContext<S>` and read the state `enter` builds.
    pub fn with_lifespan<F, Fut>(name: impl Into<String>, enter: F) -> Self
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<S, McpError>> + Send + 'static,
    {
        Self::from_lowlevel(Server::with_lifespan(name, enter))
    }

    fn from_lowlevel(mut lowlevel: Server<S>) -> Self {
        let registry = Arc::new(Registry::new(lowlevel.events.clone()));
        install_tools(&mut lowlevel, &registry);
        super::features::install(&mut lowlevel, &registry);
        let reg = registry.clone();
        lowlevel.param_headers(Arc::new(move |tool: &str| reg.param_headers(tool)));
        let reg = registry.clone();
        lowlevel.scopes.set_lookup(Arc::new(move |method, target| {
            reg.required_scopes(method, target)
        }));
        let (opened, closed) = (registry.subscribers.clone(), registry.subscribers.clone());
        let (subscribe, unsubscribe) = (registry.subscribers.clone(), registry.subscribers.clone());
        lowlevel
            .on_subscribe_resource(move |ctx, p| {
                subscribe.subscribe_uri(ctx.session(), p.uri);
                async { Ok(EmptyResult::default()) }
            })
            .on_unsubscribe_resource(move |ctx, p| {
                unsubscribe.unsubscribe_uri(ctx.session(), &p.uri);
                async { Ok(EmptyResult::default()) }
            })
            .enable_logging()
            .tools_list_changed(true)
            .prompts_list_changed(true)
            .resources_list_changed(true)
            .on_connect(move |s| opened.session_opened(s))
            .on_close(move |s| closed.session_closed(&s))
            .seal_request_state(crate::request_state::KeyRing::random());
        Self { lowlevel, registry }
    }

    /// Publishes change events on `bus` (default: a [`MemoryBus`](crate::events::MemoryBus) for
    /// this process). With a [`RedisBus`](crate::events) every replica's subscribers hear every
    /// replica's changes.
    pub fn event_bus(mut self, bus: impl EventBus) -> Self {
        self.lowlevel.event_bus(bus);
        self
    }

    /// Seals 2026 `requestState` with these keys instead of the per-process random key that is
    /// the default (which does not survive a restart and is not shared between replicas). Give
    /// every replica the same ring; see [`KeyRing`](crate::request_state::KeyRing).
    pub fn request_state_keys(mut self, sealer: impl Into<crate::request_state::Sealer>) -> Self {
        self.lowlevel.seal_request_state(sealer);
        self
    }

    /// Sets the version reported in `serverInfo`.
    pub fn version(mut self, version: impl Into<String>) -> Self {
        self.lowlevel = self.lowlevel.version(version);
        self
    }

    /// Sets the display title reported in `serverInfo`.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.lowlevel = self.lowlevel.title(title);
        self
    }

    /// Sets the instructions.
    pub fn instructions(mut self, instructions: impl Into<String>) -> Self {
        self.lowlevel = self.lowlevel.instructions(instructions);
        self
    }

    /// Serves `tools/list` in pages of `size` tools (default: one page with every tool).
    pub fn page_size(self, size: usize) -> Self {
        *self
            .registry
            .page_size
            .write()
            .unwrap_or_else(|p| p.into_inner()) = Some(size);
        self
    }

    /// Adds a tool (a `#[tool]` function or a [`ToolDef`](crate::server::ToolDef)). A tool with the same name replaces
    /// the earlier one.
    pub fn tool(self, tool: impl IntoTool<S>) -> Self {
        self.registry.insert(tool.into_tool());
        self
    }

    /// Adds every tool of a `#[tools]` impl block's value.
    pub fn tools(self, tools: impl IntoTools<S>) -> Self {
        for tool in tools.into_tools() {
            self.registry.insert(tool);
        }
        self
    }

    /// Adds a resource or resource template (a `#[resource]` function or a `ResourceDef`).
    /// One with the same URI (template) replaces the earlier one.
    pub fn resource(self, resource: impl IntoResource<S>) -> Self {
        let def = resource.into_resource();
        upsert(&self.registry.resources, def, same_uri);
        self
    }

    /// Adds a prompt (a `#[prompt]` function or a `PromptDef`). One with the same name replaces
    /// the earlier one.
    pub fn prompt(self, prompt: impl IntoPrompt<S>) -> Self {
        upsert(&self.registry.prompts, prompt.into_prompt(), same_name);
        self
    }

    /// Adds every tool of a `#[tools]` impl block whose value you keep an `Arc` of.
    pub fn tools_shared<T: ToolSet<S>>(self, tools: Arc<T>) -> Self {
        for tool in T::tool_defs(tools) {
            self.registry.insert(tool);
        }
        self
    }

    /// The low-level handler table, to replace one method by hand and keep the rest.
    pub fn lowlevel(&mut self) -> &mut Server<S> {
        &mut self.lowlevel
    }

    /// A handle that changes the tools while the server runs.
    pub fn handle(&self) -> ServerHandle<S> {
        ServerHandle {
            registry: self.registry.clone(),
        }
    }

    /// The names of the registered tools, in order.
    pub fn tool_names(&self) -> Vec<String> {
        self.registry.names()
    }

    /// Serves on stdin/stdout until stdin closes.
    pub async fn serve_stdio(self) -> crate::Result<()> {
        crate::transport::serve_stdio(self).await
    }
}

impl<S: Send + Sync + 'static> IntoServer for McpServer<S> {
    type State = S;

    fn into_server(self) -> Server<S> {
        self.lowlevel
    }
}

/// Changes a running server's tools; every change sends the list-changed notification the era
/// uses (2025: to every session; 2026: to every `subscriptions/listen` stream that asked).
pub struct ServerHandle<S> {
    registry: Arc<Registry<S>>,
}

impl<S> Clone for ServerHandle<S> {
    fn clone(&self) -> Self {
        Self {
            registry: self.registry.clone(),
        }
    }
}

impl<S: Send + Sync + 'static> ServerHandle<S> {
    /// Adds (or replaces) a tool.
    pub fn add_tool(&self, tool: impl IntoTool<S>) {
        self.registry.insert(tool.into_tool());
        self.registry.announce(Event::ToolsChanged);
    }

    /// Adds (or replaces) a resource or template.
    pub fn add_resource(&self, resource: impl IntoResource<S>) {
        upsert(&self.registry.resources, resource.into_resource(), same_uri);
        self.registry.announce(Event::ResourcesChanged);
    }

    /// Removes the resource or template with this URI (template); false if none.
    pub fn remove_resource(&self, uri: &str) -> bool {
        let removed = remove_where(&self.registry.resources, |r| r.template.as_str() == uri);
        if removed {
            self.registry.announce(Event::ResourcesChanged);
        }
        removed
    }

    /// Adds (or replaces) a prompt.
    pub fn add_prompt(&self, prompt: impl IntoPrompt<S>) {
        upsert(&self.registry.prompts, prompt.into_prompt(), same_name);
        self.registry.announce(Event::PromptsChanged);
    }

    /// Removes the prompt with this name; false if none.
    pub fn remove_prompt(&self, name: &str) -> bool {
        let removed = remove_where(&self.registry.prompts, |p| p.prompt.name == name);
        if removed {
            self.registry.announce(Event::PromptsChanged);
        }
        removed
    }

    /// Publishes `event` to every subscriber of both eras (on every replica, with a shared
    /// bus): e.g. `Event::ResourceUpdated { uri }` after a resource's contents changed, or a
    /// list change made outside this handle. Fails only when the bus cannot take it.
    pub fn publish(&self, event: Event) -> Result<(), McpError> {
        self.registry.subscribers.bus.publish(event)
    }

    /// Tells subscribers that resource `uri` changed (2025 sessions that subscribed to it,
    /// 2026 listen streams that list it).
    pub fn resource_updated(&self, uri: impl Into<String>) -> Result<(), McpError> {
        self.publish(Event::ResourceUpdated { uri: uri.into() })
    }

    /// Ends every open 2026 `subscriptions/listen` stream of this process gracefully: each
    /// gets its final result (for a shutdown or a deploy; clients reconnect).
    pub fn close_subscriptions(&self) {
        self.registry.subscribers.close_listeners();
    }

    /// Removes a tool; false if none had that name (nothing is announced then).
    pub fn remove_tool(&self, name: &str) -> bool {
        let removed = self.registry.remove(name);
        if removed {
            self.registry.announce(Event::ToolsChanged);
        }
        removed
    }
}

fn same_uri<S: Send + Sync + 'static>(a: &ResourceDef<S>, b: &ResourceDef<S>) -> bool {
    a.template.as_str() == b.template.as_str()
}

fn same_name<S: Send + Sync + 'static>(a: &PromptDef<S>, b: &PromptDef<S>) -> bool {
    a.prompt.name == b.prompt.name
}

fn install_tools<S: Send + Sync + 'static>(server: &mut Server<S>, registry: &Arc<Registry<S>>) {
    let reg = registry.clone();
    server.set_request_handler(
        "tools/list",
        erase_request(move |ctx: RequestContext<S>, p: PaginatedRequestParams| {
            let page = reg.list(ctx.era(), p.cursor.as_deref(), |raw| {
                ctx.splice("tools", raw)
            });
            async move { page }
        }),
    );
    let reg = registry.clone();
    server.set_request_handler(
        "tools/call",
        erase_request(move |ctx: RequestContext<S>, p: ToolCall| {
            let reg = reg.clone();
            async move { call_tool(&reg, ctx, p).await }
        }),
    );
    let reg = registry.clone();
    server.on_subscriptions_listen(move |ctx, p| {
        let reg = reg.clone();
        async move { super::subscriptions::listen(&reg.subscribers, ctx, p.notifications).await }
    });
}

/// `tools/call` params as the high-level server reads them: every field of
/// [`CallToolRequestParams`] checked as usual, and `arguments` kept as written, so that a present
/// `arguments` that is not an object (`null` included) is `-32602` like any other wrong params,
/// and error texts can quote numbers as the client wrote them.
#[derive(serde::Deserialize)]
struct ToolCall {
    #[serde(default, deserialize_with = "present")]
    arguments: Option<Box<serde_json::value::RawValue>>,
    #[serde(flatten)]
    params: CallToolRequestParams,
}

/// A field that is present, `null` included (an `Option` alone reads `null` as absent).
fn present<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<Box<serde_json::value::RawValue>>, D::Error> {
    serde::Deserialize::deserialize(d).map(Some)
}

async fn call_tool<S: Send + Sync + 'static>(
    registry: &Registry<S>,
    ctx: RequestContext<S>,
    call: ToolCall,
) -> Result<CallToolResult, McpError> {
    let name = call.params.name;
    let Some(def) = registry.get(&name) else {
        return Ok(CallToolResult::error(format!(
            "Unknown tool: {}",
            echo_capped(&name)
        )));
    };
    let source = call.arguments.as_deref().map(|raw| raw.get()).unwrap_or("");
    let mut args = match call.arguments.as_deref() {
        None => Value::Object(JsonObject::new()),
        Some(raw) => match serde_json::from_str::<JsonObject>(raw.get()) {
            Ok(map) => Value::Object(map),
            Err(e) => {
                let text = e.to_string();
                let reason = text.find(" at line ").map_or(&*text, |i| &text[..i]);
                return Err(McpError::invalid_params(format!(
                    "Invalid params: arguments: {}",
                    echo_capped(reason)
                )));
            }
        },
    };
    if let Some(validator) = &def.input {
        if let Err(reason) = validator.validate(&args) {
            return Ok(CallToolResult::error(restore_written_integers(
                &reason, source,
            )));
        }
    }
    let args = match args.take() {
        Value::Object(map) => map,
        _ => JsonObject::new(),
    };
    let era = ctx.era();
    let failed = || CallToolResult::error(format!("Error executing tool {name}"));
    let mut result = match CatchUnwind::new((def.handler)(ctx, args)).await {
        Ok(Ok(result)) => result,
        Ok(Err(ErrorRoute::Tool(message))) => return Ok(CallToolResult::error(message)),
        Ok(Err(ErrorRoute::Argument(message))) => {
            return Ok(CallToolResult::error(restore_written_integers(
                &message, source,
            )))
        }
        Ok(Err(ErrorRoute::Protocol(e))) => return Err(e),
        Ok(Err(ErrorRoute::Internal(detail))) => {
            tracing::error!(tool = %name, error = %detail, "tool failed");
            return Ok(failed());
        }
        Err(panic) => {
            tracing::error!(tool = %name, panic, "tool panicked");
            return Ok(failed());
        }
    };
    if let (Some(validator), false) = (&def.output, result.is_error) {
        let checked = match &result.structured_content {
            Some(value) => validator.validate(value),
            None => Err("no structuredContent was returned".to_owned()),
        };
        if let Err(reason) = checked {
            tracing::error!(tool = %name, reason, "tool output does not match its outputSchema");
            return Ok(failed());
        }
    }
    if era == Era::Legacy && def.legacy_output.is_some() {
        if let Some(value) = result.structured_content.take() {
            result.structured_content = Some(json!({ "result": value }));
        }
    }
    Ok(result)
}

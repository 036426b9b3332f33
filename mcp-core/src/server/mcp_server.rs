//! [`McpServer`]: the high-level server. Registries for tools, built on the low-level table.

use std::future::Future;
use std::sync::Arc;

use serde_json::Value;

use super::arguments::Arguments;
use super::execute::{execute, Ran};
use super::prompts::IntoPrompt;
use super::registration::RegistrationError;
use super::registry::{remove_where, Registry};
use super::resources::IntoResource;
use super::tool::{Features, IntoTool, IntoTools, ToolSet};
use super::tool_call::ToolCall;
use super::TaskSupport;
use crate::era::Era;
use crate::error::{echo_capped, restore_written_integers, McpError};
use crate::events::{Event, EventBus};
use crate::lowlevel::reply::{Encoded, Reply};
use crate::lowlevel::IntoServer;
use crate::lowlevel::{Params, RequestContext, Server};
use crate::types::*;

/// The high-level MCP server.
///
/// It owns a low-level [`Server`] and installs ordinary handlers into it (`tools/list`,
/// `tools/call`, `subscriptions/listen`); [`lowlevel`](Self::lowlevel) hands you that table to
/// replace one method and keep the rest.
///
/// ```
/// use modelctx_core::server::{McpServer, ToolDef};
/// use modelctx_core::types::CallToolResult;
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
    tasks: Arc<super::tasks::Tasks>,
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

    /// A server whose tools, resources, prompts and completers all share `state`: a
    /// [`State<S>`](super::State) parameter, `RequestContext<S>::state()`, or `&self` of a
    /// `#[tools]` value registered as well. Nothing runs at start or stop; see
    /// [`with_lifespan`](Self::with_lifespan) for state built when serving starts.
    ///
    /// ```
    /// use modelctx_core::server::{McpServer, State};
    ///
    /// struct Catalog { books: Vec<String> }
    ///
    /// /// Lists the books.
    /// #[modelctx::tool]
    /// async fn list_books(catalog: State<Catalog>) -> Vec<String> {
    ///     catalog.books.clone()
    /// }
    ///
    /// /// The catalog as text.
    /// #[modelctx::resource("books://all")]
    /// async fn all_books(catalog: State<Catalog>) -> String {
    ///     catalog.books.join("\n")
    /// }
    ///
    /// /// Asks for a recommendation.
    /// #[modelctx::prompt]
    /// async fn recommend(catalog: State<Catalog>) -> String {
    ///     format!("Recommend one of: {}", catalog.books.join(", "))
    /// }
    ///
    /// let catalog = Catalog { books: vec!["Dune".into()] };
    /// let server = McpServer::with_state("bookshop", catalog)
    ///     .tool(ListBooksTool)
    ///     .resource(AllBooksResource)
    ///     .prompt(RecommendPrompt);
    /// ```
    pub fn with_state(name: impl Into<String>, state: S) -> Self {
        Self::from_lowlevel(Server::with_state(name, state))
    }

    fn from_lowlevel(mut lowlevel: Server<S>) -> Self {
        let registry = Arc::new(Registry::new(
            lowlevel.events.clone(),
            lowlevel.param_headers().clone(),
        ));
        let tasks = Arc::new(super::tasks::Tasks::new(lowlevel.events.clone()));
        install_tools(&mut lowlevel, &registry, &tasks);
        super::features::install(&mut lowlevel, &registry);
        let reg = registry.clone();
        lowlevel.scopes.set_lookup(Arc::new(move |method, target| {
            reg.required_scopes(method, target)
        }));
        let (opened, closed) = (registry.subscribers.clone(), registry.subscribers.clone());
        // The session's subscriptions are the one record of who hears `resources/updated` (a
        // session store carries them to other replicas, which then deliver them too).
        lowlevel
            .on_subscribe_resource(|ctx, p| {
                if let Some(session) = ctx.session() {
                    session.set_subscribed(&p.uri, true);
                }
                async { Ok(EmptyResult::default()) }
            })
            .on_unsubscribe_resource(|ctx, p| {
                if let Some(session) = ctx.session() {
                    session.set_subscribed(&p.uri, false);
                }
                async { Ok(EmptyResult::default()) }
            })
            .enable_logging()
            .tools_list_changed(true)
            .prompts_list_changed(true)
            .resources_list_changed(true)
            .on_connect(move |s| opened.session_opened(s))
            .on_close(move |s| closed.session_closed(&s))
            .seal_request_state(crate::request_state::KeyRing::random());
        Self {
            lowlevel,
            registry,
            tasks,
        }
    }

    /// Keeps the tasks of the 2026 tasks extension in `store` instead of the default
    /// [`MemoryTaskStore`](super::MemoryTaskStore) (this process only; tasks kept one hour, at
    /// most 10,000). Give every replica the same shared store (with the `redis` feature,
    /// `RedisTaskStore`) so a task started on one is read on another.
    /// The tasks methods are served (and the extension advertised) when a tool has
    /// [`task_support`](super::ToolDef::task_support).
    pub fn task_store(self, store: impl super::TaskStore) -> Self {
        self.tasks.set_store(Arc::new(store));
        self
    }

    /// At most `max` unfinished tasks started by this server process at once (default
    /// 1,024): a task-augmented `tools/call` past it is refused (`-32603`, "Too many
    /// unfinished tasks on this server") until some end. A task counts from its creation
    /// until it completes, fails or is cancelled here, or expires; one waiting for input
    /// counts too. With a shared store, each replica counts the tasks it started.
    pub fn max_tasks(self, max: usize) -> Self {
        self.tasks.set_limits(Some(max), None);
        self
    }

    /// At most `max` unfinished tasks per client (default 64), counted like
    /// [`max_tasks`](Self::max_tasks). A client is an authenticated principal
    /// ([`Principal::identity`](crate::auth::Principal::identity)); without authentication
    /// clients cannot be told apart and only `max_tasks` applies. Tasks are bound to their
    /// principal either way: another one is told they do not exist.
    pub fn max_tasks_per_client(self, max: usize) -> Self {
        self.tasks.set_limits(None, Some(max));
        self
    }

    /// How long a task is kept after its creation (its `ttlMs`; default one hour, at least
    /// 1 ms, at most 30 days): `tasks/get` answers `-32602` for it afterwards, and a tool still
    /// running then is stopped.
    pub fn task_ttl(self, ttl: std::time::Duration) -> Self {
        self.tasks.set_ttl(ttl);
        self
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
    pub fn seal_request_state(mut self, sealer: impl Into<crate::request_state::Sealer>) -> Self {
        self.lowlevel.seal_request_state(sealer);
        self
    }

    /// Sets the version reported in `serverInfo`.
    pub fn version(mut self, version: impl Into<String>) -> Self {
        self.lowlevel.version(version);
        self
    }

    /// Sets the display title reported in `serverInfo`.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.lowlevel.title(title);
        self
    }

    /// Sets the instructions.
    pub fn instructions(mut self, instructions: impl Into<String>) -> Self {
        self.lowlevel.instructions(instructions);
        self
    }

    /// Serves `tools/list`, `resources/list`, `resources/templates/list` and `prompts/list` in
    /// pages of at most `size` entries (0 counts as 1). The default is one page with every
    /// entry. A page that is not the last carries `nextCursor`; a cursor this server did not
    /// hand out is refused with `-32602`.
    pub fn page_size(self, size: usize) -> Self {
        *self
            .registry
            .page_size
            .write()
            .unwrap_or_else(|p| p.into_inner()) = Some(size);
        self
    }

    /// Lists every tool's input and output schema self-contained, for clients that cannot
    /// follow `$ref` (default: off, schemas list named types once under `$defs` and refer to
    /// them). With it on, each `{"$ref": "#/$defs/Name"}` is replaced by the definition it names
    /// (keywords beside the reference, such as the argument's `description`, are kept) and
    /// `$defs` goes away. A recursive type (one that contains itself, like a tree) cannot be
    /// written out in full: references to it stay, and `$defs` keeps just its definition.
    /// Validation does not change: calls and results are checked against the same schemas,
    /// which accept exactly the same values either way.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// use modelctx_core::client::Client;
    /// use modelctx_core::server::{McpServer, ToolDef};
    /// use modelctx_core::types::CallToolResult;
    /// use serde_json::json;
    ///
    /// let schema = json!({
    ///     "type": "object",
    ///     "properties": {"at": {"$ref": "#/$defs/Point", "description": "Where."}},
    ///     "$defs": {"Point": {"type": "object", "properties": {"x": {"type": "number"}}}}
    /// });
    /// let mark = ToolDef::from_schema("mark", schema, |_, _| async {
    ///     Ok(CallToolResult::text("marked"))
    /// }).unwrap();
    /// let server = McpServer::new("flat").inline_schema_refs(true).tool(mark);
    ///
    /// let client = Client::connect(server).await.unwrap();
    /// let tools = client.list_tools().await.unwrap().tools;
    /// assert_eq!(
    ///     serde_json::Value::Object(tools[0].input_schema.clone()),
    ///     json!({
    ///         "type": "object",
    ///         "properties": {"at": {
    ///             "type": "object", "properties": {"x": {"type": "number"}}, "description": "Where."
    ///         }}
    ///     })
    /// );
    /// client.close().await;
    /// # });
    /// ```
    pub fn inline_schema_refs(self, on: bool) -> Self {
        self.registry.set_inline_refs(on);
        self
    }

    /// Adds a tool (a `#[tool]` function or a [`ToolDef`](crate::server::ToolDef)).
    ///
    /// # Panics
    ///
    /// If a tool with the same name is already registered (like axum's overlapping routes: a
    /// mistake found at start-up, not a silent "last one wins"). The message names the tool;
    /// use [`replace_tool`](Self::replace_tool) to replace one on purpose.
    ///
    /// ```should_panic
    /// # use modelctx_core::server::{McpServer, ToolDef};
    /// # use modelctx_core::types::CallToolResult;
    /// let ping = || ToolDef::<()>::from_schema("ping", serde_json::json!({"type": "object"}),
    ///     |_, _| async { Ok(CallToolResult::text("pong")) }).unwrap();
    /// // panics: "a tool named `ping` is already registered; use `replace_tool` to replace it"
    /// McpServer::new("demo").tool(ping()).tool(ping());
    /// ```
    #[track_caller]
    pub fn tool(self, tool: impl IntoTool<S>) -> Self {
        registered(self.registry.insert(tool.into_tool()));
        self
    }

    /// Adds `tool`, or replaces the tool with its name (which keeps its place in
    /// `tools/list`).
    pub fn replace_tool(self, tool: impl IntoTool<S>) -> Self {
        self.registry.replace(tool.into_tool());
        self
    }

    /// Adds every `#[tool]`, `#[resource]` and `#[prompt]` method of a `#[tools]` impl
    /// block's value (each sharing the value through one `Arc`), as if each were added with
    /// [`tool`](Self::tool), [`resource`](Self::resource) and [`prompt`](Self::prompt).
    ///
    /// # Panics
    ///
    /// If one of them has the name (or URI) of one already registered (see
    /// [`tool`](Self::tool)).
    #[track_caller]
    pub fn tools(self, tools: impl IntoTools<S>) -> Self {
        self.features(tools.into_features())
    }

    #[track_caller]
    fn features(mut self, features: Features<S>) -> Self {
        for tool in features.tools {
            self = self.tool(tool);
        }
        for resource in features.resources {
            self = self.resource(resource);
        }
        for prompt in features.prompts {
            self = self.prompt(prompt);
        }
        self
    }

    /// Adds a resource or resource template (a `#[resource]` function or a `ResourceDef`).
    ///
    /// # Panics
    ///
    /// If a resource with the same URI, or a template with the same template text, is already
    /// registered. The message names it; use [`replace_resource`](Self::replace_resource) to
    /// replace one on purpose.
    #[track_caller]
    pub fn resource(self, resource: impl IntoResource<S>) -> Self {
        registered(self.registry.insert_resource(resource.into_resource()));
        self
    }

    /// Adds `resource`, or replaces the one with the same URI (template).
    pub fn replace_resource(self, resource: impl IntoResource<S>) -> Self {
        self.registry.replace_resource(resource.into_resource());
        self
    }

    /// Adds a prompt (a `#[prompt]` function or a `PromptDef`).
    ///
    /// # Panics
    ///
    /// If a prompt with the same name is already registered. The message names it; use
    /// [`replace_prompt`](Self::replace_prompt) to replace one on purpose.
    #[track_caller]
    pub fn prompt(self, prompt: impl IntoPrompt<S>) -> Self {
        registered(self.registry.insert_prompt(prompt.into_prompt()));
        self
    }

    /// Adds `prompt`, or replaces the prompt with its name.
    pub fn replace_prompt(self, prompt: impl IntoPrompt<S>) -> Self {
        self.registry.replace_prompt(prompt.into_prompt());
        self
    }

    /// [`tools`](Self::tools) for a `#[tools]` value you keep an `Arc` of (to reach it from
    /// elsewhere too).
    ///
    /// # Panics
    ///
    /// As [`tools`](Self::tools) does.
    #[track_caller]
    pub fn tools_shared<T: ToolSet<S>>(self, tools: Arc<T>) -> Self {
        self.features(T::features(tools))
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

    /// Serves on this process's stdin and stdout until stdin closes (see
    /// [`Server::serve_stdio`]); `serve_http` and `serve_http_on` serve Streamable HTTP.
    pub async fn serve_stdio(self) -> crate::Result<()> {
        self.into_server().serve_stdio().await
    }
}

impl<S: Send + Sync + 'static> std::fmt::Debug for McpServer<S> {
    /// What is registered: tool and prompt names, resource URIs.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.registry.describe(f.debug_struct("McpServer"))
    }
}

impl<S: Send + Sync + 'static> IntoServer for McpServer<S> {
    type State = S;

    fn into_server(mut self) -> Server<S> {
        let tasks = self.registry.names().iter().any(|name| {
            self.registry
                .get(name)
                .is_some_and(|def| def.task_support != super::TaskSupport::Forbidden)
        });
        if tasks {
            super::tasks::install(&mut self.lowlevel, &self.tasks, &self.registry);
        }
        self.lowlevel
    }
}

/// Changes a running server's tools, resources and prompts; every change sends the
/// list-changed notification the era uses (2025: to every session; 2026: to every
/// `subscriptions/listen` stream that asked).
///
/// `add_*` refuses a name (or URI) already taken with a [`RegistrationError`] and changes
/// nothing; `replace_*` adds or replaces on purpose.
pub struct ServerHandle<S> {
    registry: Arc<Registry<S>>,
}

impl<S: Send + Sync + 'static> std::fmt::Debug for ServerHandle<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.registry.describe(f.debug_struct("ServerHandle"))
    }
}

impl<S> Clone for ServerHandle<S> {
    fn clone(&self) -> Self {
        Self {
            registry: self.registry.clone(),
        }
    }
}

impl<S: Send + Sync + 'static> ServerHandle<S> {
    /// Adds a tool and announces the change. A tool with the same name is an error (nothing
    /// changes, nothing is announced); use [`replace_tool`](Self::replace_tool) to replace it.
    pub fn add_tool(&self, tool: impl IntoTool<S>) -> Result<(), RegistrationError> {
        self.registry.insert(tool.into_tool())?;
        self.registry.announce(Event::ToolsChanged);
        Ok(())
    }

    /// Adds `tool`, or replaces the tool with its name (keeping its place in `tools/list`),
    /// and announces the change.
    pub fn replace_tool(&self, tool: impl IntoTool<S>) {
        self.registry.replace(tool.into_tool());
        self.registry.announce(Event::ToolsChanged);
    }

    /// Adds a resource or template and announces the change. One with the same URI (template)
    /// is an error (nothing changes); use [`replace_resource`](Self::replace_resource) to
    /// replace it.
    pub fn add_resource(&self, resource: impl IntoResource<S>) -> Result<(), RegistrationError> {
        self.registry.insert_resource(resource.into_resource())?;
        self.registry.announce(Event::ResourcesChanged);
        Ok(())
    }

    /// Adds `resource`, or replaces the one with the same URI (template), and announces the
    /// change.
    pub fn replace_resource(&self, resource: impl IntoResource<S>) {
        self.registry.replace_resource(resource.into_resource());
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

    /// Adds a prompt and announces the change. A prompt with the same name is an error
    /// (nothing changes); use [`replace_prompt`](Self::replace_prompt) to replace it.
    pub fn add_prompt(&self, prompt: impl IntoPrompt<S>) -> Result<(), RegistrationError> {
        self.registry.insert_prompt(prompt.into_prompt())?;
        self.registry.announce(Event::PromptsChanged);
        Ok(())
    }

    /// Adds `prompt`, or replaces the prompt with its name, and announces the change.
    pub fn replace_prompt(&self, prompt: impl IntoPrompt<S>) {
        self.registry.replace_prompt(prompt.into_prompt());
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

/// A builder registration: a clash is a programming mistake, reported where the builder was
/// called.
#[track_caller]
fn registered(result: Result<(), RegistrationError>) {
    if let Err(e) = result {
        panic!("McpServer: {e}");
    }
}

fn install_tools<S: Send + Sync + 'static>(
    server: &mut Server<S>,
    registry: &Arc<Registry<S>>,
    tasks: &Arc<super::tasks::Tasks>,
) {
    let reg = registry.clone();
    // Not `erase_request`: the whole list is answered with the page encoded when it changed.
    server.set_request_handler(
        "tools/list",
        Arc::new(move |ctx: RequestContext<S>, params: Params| {
            let page = params
                .decode::<PaginatedRequestParams>()
                .and_then(|p| reg.list(ctx.era(), p.cursor.as_deref(), ctx.unobserved()));
            Box::pin(std::future::ready(page))
        }),
    );
    let (reg, all_tasks) = (registry.clone(), tasks.clone());
    // Not `erase_request`: the tool's result is encoded once, straight from its type.
    server.set_request_handler(
        "tools/call",
        Arc::new(
            move |ctx: RequestContext<S>, params: Params| match ToolCall::read(&params) {
                Ok(call) => {
                    let (reg, tasks) = (reg.clone(), all_tasks.clone());
                    Box::pin(async move { call_tool(&reg, &tasks, ctx, call).await })
                }
                Err(e) => Box::pin(std::future::ready(Err(e))),
            },
        ),
    );
    let (reg, tasks) = (registry.clone(), tasks.clone());
    server.on_subscriptions_listen(move |ctx, p| {
        let (reg, tasks) = (reg.clone(), tasks.clone());
        async move {
            let mut filter = p.notifications;
            if let Some(ids) = filter.task_ids.take().filter(|ids| !ids.is_empty()) {
                super::tasks::support::require_extension(&ctx)?;
                // Only the caller's own tasks: another principal's task is as unknown here
                // as in tasks/get, so its status changes are not heard.
                filter.task_ids = Some(tasks.visible(&ctx, ids).await?);
            }
            super::subscriptions::listen(&reg.subscribers, ctx, filter).await
        }
    });
}

/// A tool's result, encoded once (a result with a `_meta` of its own stays a value, so the
/// 2026 serverInfo can be merged into it).
fn encoded(result: &CallToolResult) -> Result<Reply, McpError> {
    if result.meta.is_some() {
        return Ok(Reply::Value(serde_json::to_value(result)?));
    }
    let text = match super::result_text::text_blocks(result) {
        Some(text) => text,
        None => serde_json::to_string(result)?,
    };
    Ok(Reply::Encoded(Encoded {
        text,
        is_error: result.is_error,
    }))
}

async fn call_tool<S: Send + Sync + 'static>(
    registry: &Registry<S>,
    tasks: &Arc<super::tasks::Tasks>,
    ctx: RequestContext<S>,
    call: ToolCall,
) -> Result<Reply, McpError> {
    let name = call.name;
    let Some(def) = registry.get(&name) else {
        return encoded(&CallToolResult::error(format!(
            "Unknown tool: {}",
            echo_capped(&name)
        )));
    };
    let source = call.arguments.as_deref().unwrap_or("");
    // A tool of plain parameters (no tasks) decodes each straight from the client's text; if
    // one does not decode, the call is checked against the schema below, which says why.
    if let (Some(parameters), TaskSupport::Forbidden) = (&def.decoded_straight, def.task_support) {
        if let Some(args) = Arguments::text(call.arguments.clone(), parameters) {
            let ran = execute(&def, ctx.clone(), args, source).await;
            if !matches!(ran, Ran::Unread) {
                return finish(ran, &name);
            }
        }
    }
    let mut args = match call.arguments.as_deref() {
        None => Value::Object(JsonObject::new()),
        Some(raw) => match serde_json::from_str::<JsonObject>(raw) {
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
            return encoded(&CallToolResult::error(restore_written_integers(
                &reason, source,
            )));
        }
    }
    let args = match args.take() {
        Value::Object(map) => map,
        _ => JsonObject::new(),
    };
    if ctx.era() == Era::Modern {
        if let Some(start) = super::tasks::maybe_start(tasks, &def, &ctx, &args, source)? {
            if let Some(created) = start.await? {
                return Ok(Reply::Value(created));
            }
        }
    }
    finish(execute(&def, ctx, args.into(), source).await, &name)
}

/// The answer to a `tools/call` that ran.
fn finish(ran: Ran, name: &str) -> Result<Reply, McpError> {
    let result = match ran {
        Ran::Done(result) => result,
        Ran::Protocol(e) => return Err(e),
        // (`Unread` only comes of a call decoded straight, which is then checked instead.)
        Ran::Crashed | Ran::Unread => CallToolResult::error(format!("Error executing tool {name}")),
    };
    encoded(&result)
}

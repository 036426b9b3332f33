//! [`ToolDef`]: one tool of the high-level server: its definition exactly as `tools/list` shows
//! it, validators compiled once, and the handler.

use std::future::Future;
use std::sync::Arc;

use serde_json::{Map, Value};

use super::arguments::Arguments;
use super::output::ErrorRoute;
use super::prompts::PromptDef;
use super::resources::ResourceDef;
use super::schema::wrap_output_schema;
use crate::error::McpError;
use crate::lowlevel::{BoxFuture, RequestContext};
use crate::types::{CallToolResult, Icon, JsonObject, Meta, Tool, ToolAnnotations};
use crate::validator::SchemaValidator;

/// The erased handler of a tool: its [`Arguments`] in, a result (or a routed error) out.
pub type ToolHandler<S> = Arc<
    dyn Fn(RequestContext<S>, Arguments) -> BoxFuture<Result<CallToolResult, ErrorRoute>>
        + Send
        + Sync,
>;

/// One tool: what `tools/list` shows, and how `tools/call` runs it.
pub struct ToolDef<S> {
    pub(crate) tool: Tool,
    /// The 2025 form of the output schema when the 2026 one is not an object.
    pub(crate) legacy_output: Option<JsonObject>,
    pub(crate) input: Option<Arc<SchemaValidator>>,
    pub(crate) output: Option<Arc<SchemaValidator>>,
    pub(crate) handler: ToolHandler<S>,
    /// Scopes a caller's token must carry.
    pub(crate) scopes: Vec<String>,
    /// Whether a 2026 call runs as a task (tasks extension).
    pub(crate) task_support: super::tasks::support::TaskSupport,
    /// The task starts at the handler's first wait, after its questions (see
    /// [`ToolDef::input_before_task`]).
    pub(crate) input_first: bool,
    /// The parameters, when every argument of a call may be decoded straight from the client's
    /// text (a `#[tool]` of plain parameters; see [`Arguments`]).
    pub(crate) decoded_straight: Option<Box<[Box<str>]>>,
}

impl<S> std::fmt::Debug for ToolDef<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolDef")
            .field("name", &self.tool.name)
            .field("validated", &self.input.is_some())
            .field("decoded_straight", &self.decoded_straight.is_some())
            .field("output_checked", &self.output.is_some())
            .field("scopes", &self.scopes)
            .field("task_support", &self.task_support)
            .finish_non_exhaustive()
    }
}

impl<S> Clone for ToolDef<S> {
    fn clone(&self) -> Self {
        Self {
            tool: self.tool.clone(),
            legacy_output: self.legacy_output.clone(),
            input: self.input.clone(),
            output: self.output.clone(),
            handler: self.handler.clone(),
            scopes: self.scopes.clone(),
            task_support: self.task_support,
            input_first: self.input_first,
            decoded_straight: self.decoded_straight.clone(),
        }
    }
}

impl<S: Send + Sync + 'static> ToolDef<S> {
    /// A tool whose input schema comes from elsewhere (a file, a database): `tools/list` shows
    /// `input_schema` exactly as given (with its `$ref`s inlined if
    /// [`McpServer::inline_schema_refs`](super::McpServer::inline_schema_refs) is on) and every
    /// call is validated against it.
    ///
    /// ```
    /// use modelctx_core::server::ToolDef;
    /// use modelctx_core::types::CallToolResult;
    /// use serde_json::json;
    ///
    /// let tool = ToolDef::<()>::from_schema(
    ///     "echo",
    ///     json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
    ///     |_ctx, args| async move { Ok(CallToolResult::text(args["text"].to_string())) },
    /// ).unwrap().description("Echo the text back.");
    /// assert_eq!(tool.definition().name, "echo");
    /// ```
    pub fn from_schema<F, Fut>(
        name: impl Into<String>,
        input_schema: Value,
        handler: F,
    ) -> Result<Self, McpError>
    where
        F: Fn(RequestContext<S>, JsonObject) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<CallToolResult, McpError>> + Send + 'static,
    {
        let handler: ToolHandler<S> = Arc::new(move |ctx, args: Arguments| {
            let fut = handler(ctx, args.into_object());
            Box::pin(async move {
                fut.await.map_err(|e| {
                    if e.is_internal() {
                        ErrorRoute::Internal(e.message().into_owned())
                    } else {
                        ErrorRoute::Protocol(e)
                    }
                })
            })
        });
        Self::with_handler(name, input_schema, handler)
    }

    /// A tool with an erased handler (what `#[tool]` generates).
    pub fn with_handler(
        name: impl Into<String>,
        input_schema: Value,
        handler: ToolHandler<S>,
    ) -> Result<Self, McpError> {
        Self::listed_and_validated(name, input_schema, None, handler)
    }

    /// A tool that lists `input_schema` and checks calls against `validated` (the same schema
    /// when `None`): a `#[tool]` lists optional arguments without `null` and still accepts it.
    pub(crate) fn listed_and_validated(
        name: impl Into<String>,
        input_schema: Value,
        validated: Option<&Value>,
        handler: ToolHandler<S>,
    ) -> Result<Self, McpError> {
        let Value::Object(schema) = input_schema else {
            return Err(McpError::internal(
                "a tool's input schema must be a JSON object",
            ));
        };
        let validator = match validated {
            Some(validated) => SchemaValidator::compile(validated)?,
            None => SchemaValidator::compile(&Value::Object(schema.clone()))?,
        };
        let tool = Tool {
            name: name.into(),
            title: None,
            description: None,
            input_schema: schema,
            output_schema: None,
            annotations: None,
            icons: None,
            execution: None,
            meta: None,
        };
        Ok(Self {
            tool,
            legacy_output: None,
            input: Some(Arc::new(validator)),
            output: None,
            handler,
            scopes: Vec::new(),
            task_support: Default::default(),
            input_first: false,
            decoded_straight: None,
        })
    }

    /// Requires the caller's token to carry every scope in `scopes` (checked by a protected
    /// HTTP endpoint before the handler runs: a token without them gets 403
    /// `insufficient_scope` naming them). Without a resource server there is no check.
    pub fn scopes<I, T>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = T>,
        T: Into<String>,
    {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// Lets the tool run as a task of the 2026 tasks extension (default
    /// [`TaskSupport::Forbidden`](super::TaskSupport::Forbidden): never). Shown in `tools/list`
    /// as `execution.taskSupport`; see [`TaskSupport`](super::TaskSupport) and the
    /// [`McpServer::task_store`](super::McpServer::task_store) that keeps the tasks.
    pub fn task_support(mut self, support: super::TaskSupport) -> Self {
        self.task_support = support;
        let execution = self.tool.execution.get_or_insert_with(Map::new);
        execution.insert("taskSupport".into(), Value::from(support.as_str()));
        self
    }

    /// Asks this task-supporting tool's questions before its task starts: the call runs in the
    /// request until the handler first waits on something else, so the questions it asks on
    /// the way (`ctx.elicit`, `ctx.ask`, ...) go back as multi-round-trip `input_required`
    /// results, and the retry that brings the last answers gets the `CreateTaskResult` (the
    /// rest of the handler is the task). Without it (the default) the task starts at the call
    /// and its questions park it in `input_required` until `tasks/update`.
    pub fn input_before_task(mut self) -> Self {
        self.input_first = true;
        self
    }

    /// Lets calls decode `parameters` straight from the client's text (what a `#[tool]` of
    /// plain parameters sets; `None`: every call is checked against the schema as a value).
    pub(crate) fn decoded_straight(mut self, parameters: Option<Box<[Box<str>]>>) -> Self {
        self.decoded_straight = parameters;
        self
    }

    /// Sets the description (the model reads it).
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.tool.description = Some(description.into());
        self
    }

    /// Sets the display title.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.tool.title = Some(title.into());
        self
    }

    /// Sets the behaviour hints.
    pub fn annotations(mut self, annotations: ToolAnnotations) -> Self {
        self.tool.annotations = Some(annotations);
        self
    }

    /// Sets the icons.
    pub fn icons(mut self, icons: Vec<Icon>) -> Self {
        self.tool.icons = Some(icons);
        self
    }

    /// Sets the tool's `_meta`.
    pub fn meta(mut self, meta: Meta) -> Self {
        self.tool.meta = Some(meta);
        self
    }

    /// Declares the output schema. Results are checked against it before they leave. A schema
    /// that is not an object at the root is shown (and filled) as `{"result": ...}` to 2025
    /// clients, whose schema requires objects.
    pub fn output_schema(mut self, schema: Value, is_object: bool) -> Result<Self, McpError> {
        let validator = SchemaValidator::compile(&schema)?;
        self.legacy_output = match is_object {
            true => None,
            false => match wrap_output_schema(&schema) {
                Value::Object(map) => Some(map),
                _ => None,
            },
        };
        self.tool.output_schema = match schema {
            Value::Object(map) => Some(map),
            _ => Some(Map::new()),
        };
        self.output = Some(Arc::new(validator));
        Ok(self)
    }

    /// The definition as a 2026 client sees it.
    pub fn definition(&self) -> &Tool {
        &self.tool
    }

    /// The definition as a 2025 client sees it (non-object output schemas wrapped; no
    /// `execution.taskSupport`: 2025 sessions run every tool synchronously).
    pub(crate) fn legacy_definition(&self) -> Tool {
        let mut tool = self.tool.clone();
        if let Some(execution) = &mut tool.execution {
            execution.remove("taskSupport");
            if execution.is_empty() {
                tool.execution = None;
            }
        }
        if let Some(wrapped) = &self.legacy_output {
            tool.output_schema = Some(wrapped.clone());
        }
        tool
    }
}

/// Something that becomes one tool: a `#[tool]` function, or a [`ToolDef`].
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a tool that a server with state `{S}` can register",
    label = "not a tool for `McpServer<{S}>`",
    note = "`.tool(..)` takes the handle #[tool] generates: `.tool(SearchTool)` for `#[tool] fn search`; the value of a #[tools] impl block goes to `.tools(..)`",
    note = "a tool that takes `RequestContext<T>` or `State<T>` registers only on a server whose state is `T`",
    note = "a type of your own named like a handle (`SearchTool` next to `#[tool] fn search`) hides the handle: rename your type"
)]
pub trait IntoTool<S> {
    /// The tool.
    fn into_tool(self) -> ToolDef<S>;
}

impl<S> IntoTool<S> for ToolDef<S> {
    fn into_tool(self) -> ToolDef<S> {
        self
    }
}

/// Something that becomes several tools (and resources and prompts): a `#[tools]` impl
/// block's value, given to [`McpServer::tools`](super::McpServer::tools).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a #[tools] impl block's value that a server with state `{S}` can register",
    label = "`.tools(..)` takes the value of a type with a #[tools] impl block",
    note = "a single #[tool] function is registered with `.tool(SearchTool)` (its handle), not `.tools(..)`",
    note = "methods that take `RequestContext<T>` or `State<T>` register only on a server whose state is `T`"
)]
pub trait IntoTools<S> {
    /// The tools, resources and prompts, in declaration order.
    fn into_features(self) -> Features<S>;
}

/// What one `#[tools]` impl block registers: its `#[tool]`, `#[resource]` and `#[prompt]`
/// methods, each holding a clone of the shared value.
#[non_exhaustive]
pub struct Features<S> {
    /// The `#[tool]` methods.
    pub tools: Vec<ToolDef<S>>,
    /// The `#[resource]` methods.
    pub resources: Vec<ResourceDef<S>>,
    /// The `#[prompt]` methods.
    pub prompts: Vec<PromptDef<S>>,
}

impl<S> Features<S> {
    /// The tools, resources and prompts of one `#[tools]` value, in declaration order.
    pub fn new(
        tools: Vec<ToolDef<S>>,
        resources: Vec<ResourceDef<S>>,
        prompts: Vec<PromptDef<S>>,
    ) -> Self {
        Self {
            tools,
            resources,
            prompts,
        }
    }
}

impl<S> Default for Features<S> {
    fn default() -> Self {
        Self {
            tools: Vec::new(),
            resources: Vec::new(),
            prompts: Vec::new(),
        }
    }
}

impl<S> std::fmt::Debug for Features<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names = |it: &mut dyn Iterator<Item = String>| it.collect::<Vec<_>>();
        f.debug_struct("Features")
            .field(
                "tools",
                &names(&mut self.tools.iter().map(|t| t.tool.name.clone())),
            )
            .field(
                "resources",
                &names(
                    &mut self
                        .resources
                        .iter()
                        .map(|r| r.template.as_str().to_owned()),
                ),
            )
            .field(
                "prompts",
                &names(&mut self.prompts.iter().map(|p| p.prompt.name.clone())),
            )
            .finish()
    }
}

/// The tools, resources and prompts of a `#[tools]` impl block, sharing one `Arc` of the
/// value (what the macro implements).
pub trait ToolSet<S>: Send + Sync + 'static {
    /// Everything the block registers, in declaration order, each holding a clone of `this`.
    fn features(this: Arc<Self>) -> Features<S>;
}

#[diagnostic::do_not_recommend]
impl<S, T: ToolSet<S>> IntoTools<S> for T {
    fn into_features(self) -> Features<S> {
        T::features(Arc::new(self))
    }
}

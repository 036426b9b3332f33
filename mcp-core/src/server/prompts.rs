//! [`PromptDef`]: a prompt template with string arguments.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;

use super::completion::{Completer, IntoCompleter};
use crate::error::McpError;
use crate::lowlevel::{BoxFuture, RequestContext};
use crate::types::{
    ContentBlock, GetPromptResult, Icon, Meta, Prompt, PromptArgument, PromptMessage, Role,
};

/// The erased handler of a prompt: its arguments (required ones checked) in, messages out.
pub type PromptHandler<S> = Arc<
    dyn Fn(
            RequestContext<S>,
            BTreeMap<String, String>,
        ) -> BoxFuture<Result<GetPromptResult, McpError>>
        + Send
        + Sync,
>;

/// One prompt.
pub struct PromptDef<S> {
    pub(crate) prompt: Prompt,
    pub(crate) handler: PromptHandler<S>,
    pub(crate) completers: BTreeMap<String, Completer<S>>,
    /// Scopes a caller's token must carry.
    pub(crate) scopes: Vec<String>,
}

impl<S: Send + Sync + 'static> PromptDef<S> {
    /// A prompt named `name` whose handler gets the arguments by name.
    ///
    /// ```
    /// use modelctx_core::server::PromptDef;
    ///
    /// let greet = PromptDef::<()>::new("greet", |_ctx, args| async move {
    ///     Ok(format!("Say hello to {}.", args["who"]).into())
    /// })
    /// .argument("who", Some("Who to greet."), true);
    /// ```
    pub fn new<F, Fut>(name: impl Into<String>, handler: F) -> Self
    where
        F: Fn(RequestContext<S>, BTreeMap<String, String>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<GetPromptResult, McpError>> + Send + 'static,
    {
        let handler: PromptHandler<S> = Arc::new(move |ctx, args| Box::pin(handler(ctx, args)));
        Self::with_handler(name, handler)
    }

    /// A prompt with an erased handler (what `#[prompt]` generates).
    pub fn with_handler(name: impl Into<String>, handler: PromptHandler<S>) -> Self {
        Self {
            prompt: Prompt {
                name: name.into(),
                ..Prompt::default()
            },
            handler,
            completers: BTreeMap::new(),
            scopes: Vec::new(),
        }
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

    /// Sets the description.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.prompt.description = Some(description.into());
        self
    }

    /// Sets the display title.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.prompt.title = Some(title.into());
        self
    }

    /// Sets the icons a client may show for it in `prompts/list`.
    ///
    /// ```
    /// use modelctx_core::server::PromptDef;
    /// use modelctx_core::types::Icon;
    ///
    /// let greet = PromptDef::<()>::new("greet", |_, _| async { Ok(String::from("Hi!").into()) })
    ///     .icons(vec![Icon::new("https://example.com/wave.png")]);
    /// assert_eq!(greet.definition().icons.as_ref().unwrap()[0].src, "https://example.com/wave.png");
    /// ```
    pub fn icons(mut self, icons: Vec<Icon>) -> Self {
        self.prompt.icons = Some(icons);
        self
    }

    /// Sets the `_meta` shown with it in `prompts/list`.
    pub fn meta(mut self, meta: Meta) -> Self {
        self.prompt.meta = Some(meta);
        self
    }

    /// Declares an argument.
    pub fn argument(mut self, name: &str, description: Option<&str>, required: bool) -> Self {
        self.prompt
            .arguments
            .get_or_insert_with(Vec::new)
            .push(PromptArgument {
                name: name.to_owned(),
                title: None,
                description: description.map(str::to_owned),
                required: Some(required),
            });
        self
    }

    /// Completes argument `argument` with `completer`: a `fn(&str) -> Vec<String>`, or a
    /// function (plain or `async`) taking a [`CompletionRequest`](super::CompletionRequest)
    /// (see [`IntoCompleter`]).
    pub fn complete<M>(
        mut self,
        argument: impl Into<String>,
        completer: impl IntoCompleter<S, M>,
    ) -> Self {
        self.completers
            .insert(argument.into(), completer.into_completer());
        self
    }

    /// The definition `prompts/list` shows.
    pub fn definition(&self) -> &Prompt {
        &self.prompt
    }
}

impl<S> std::fmt::Debug for PromptDef<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PromptDef")
            .field("prompt", &self.prompt)
            .field("completers", &self.completers.keys().collect::<Vec<_>>())
            .field("scopes", &self.scopes)
            .finish_non_exhaustive()
    }
}

/// Something that becomes one prompt: a `#[prompt]` function or a [`PromptDef`].
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a prompt that a server with state `{S}` can register",
    label = "not a prompt for `McpServer<{S}>`",
    note = "`.prompt(..)` takes the handle #[prompt] generates: `.prompt(SummarizePrompt)` for `#[prompt] fn summarize`; #[prompt] methods of a #[tools] impl block are registered by `.tools(..)`",
    note = "a prompt that takes `RequestContext<T>` or `State<T>` registers only on a server whose state is `T`",
    note = "a type of your own named like a handle (`SummarizePrompt` next to `#[prompt] fn summarize`) hides the handle: rename your type"
)]
pub trait IntoPrompt<S> {
    /// The prompt.
    fn into_prompt(self) -> PromptDef<S>;
}

impl<S> IntoPrompt<S> for PromptDef<S> {
    fn into_prompt(self) -> PromptDef<S> {
        self
    }
}

/// What a prompt function may return.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from a prompt",
    label = "this return type cannot become prompt messages",
    note = "return a String (one user message), a PromptMessage, Vec<PromptMessage>, a GetPromptResult, or a Result of one of these"
)]
pub trait IntoPromptResult {
    /// The result.
    fn into_prompt_result(self) -> Result<GetPromptResult, McpError>;
}

impl From<String> for GetPromptResult {
    fn from(text: String) -> Self {
        Self::new(vec![PromptMessage::new(
            Role::User,
            ContentBlock::text(text),
        )])
    }
}

impl IntoPromptResult for String {
    fn into_prompt_result(self) -> Result<GetPromptResult, McpError> {
        Ok(self.into())
    }
}

impl IntoPromptResult for PromptMessage {
    fn into_prompt_result(self) -> Result<GetPromptResult, McpError> {
        vec![self].into_prompt_result()
    }
}

impl IntoPromptResult for Vec<PromptMessage> {
    fn into_prompt_result(self) -> Result<GetPromptResult, McpError> {
        Ok(GetPromptResult::new(self))
    }
}

impl IntoPromptResult for GetPromptResult {
    fn into_prompt_result(self) -> Result<GetPromptResult, McpError> {
        Ok(self)
    }
}

impl<T: IntoPromptResult, E: Into<McpError>> IntoPromptResult for Result<T, E> {
    fn into_prompt_result(self) -> Result<GetPromptResult, McpError> {
        self.map_err(Into::into)?.into_prompt_result()
    }
}

//! Argument completion for prompt arguments and resource template variables: what a completer
//! is asked ([`CompletionRequest`]), the functions that can be completers ([`IntoCompleter`]),
//! and the erased form a prompt or resource keeps ([`Completer`]).

use std::collections::BTreeMap;
use std::fmt;
use std::future::Future;
use std::sync::Arc;

use crate::lowlevel::{BoxFuture, RequestContext};

/// The most values one completion answer carries (the spec's limit). A completer may return
/// more: the answer carries the first 100, with `total` and `hasMore` set.
pub const MAX_COMPLETIONS: usize = 100;

/// What a completer is asked (one `completion/complete` request): the argument, what the user
/// typed so far, the other arguments already filled in, and the request itself (for the
/// server's state).
///
/// A completer takes this when the text typed so far is not enough; a plain
/// `fn(&str) -> Vec<String>` is still a completer too (see [`IntoCompleter`]).
///
/// ```
/// use modelctx_core::server::{CompletionRequest, McpServer, PromptDef};
///
/// struct Shop { titles: Vec<(&'static str, &'static str)> }
///
/// /// Titles by the author already chosen, read from the server's state.
/// async fn titles(req: CompletionRequest<Shop>) -> Vec<String> {
///     let author = req.arguments.get("author").map(String::as_str);
///     req.state()
///         .titles
///         .iter()
///         .filter(|(by, title)| Some(*by) == author && title.starts_with(req.value.as_str()))
///         .map(|(_, title)| title.to_string())
///         .collect()
/// }
///
/// let review = PromptDef::<Shop>::new("review", |_, args| async move {
///     Ok(format!("Review {}.", args["title"]).into())
/// })
/// .argument("author", None, true)
/// .argument("title", None, true)
/// .complete("title", titles);
/// let shop = Shop { titles: vec![("Herbert", "Dune"), ("Austen", "Emma")] };
/// let server = McpServer::with_state("shop", shop).prompt(review);
/// ```
#[non_exhaustive]
pub struct CompletionRequest<S = ()> {
    /// The name of the prompt argument or template variable being completed.
    pub argument: String,
    /// What the user typed so far.
    pub value: String,
    /// The other arguments (or variables) already filled in, by name: the request's
    /// `context.arguments`, empty when the client sent none.
    pub arguments: BTreeMap<String, String>,
    /// The request: the server's state, the session, cancellation.
    pub ctx: RequestContext<S>,
}

impl<S: Send + Sync + 'static> CompletionRequest<S> {
    /// The server's state (what [`RequestContext::state`] gives).
    pub fn state(&self) -> &S {
        self.ctx.state()
    }
}

impl<S> fmt::Debug for CompletionRequest<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CompletionRequest")
            .field("argument", &self.argument)
            .field("value", &self.value)
            .field("arguments", &self.arguments)
            .finish_non_exhaustive()
    }
}

type CompleteFn<S> = dyn Fn(CompletionRequest<S>) -> BoxFuture<Vec<String>> + Send + Sync;

/// A completer as a prompt or resource keeps it: any [`IntoCompleter`], erased (what
/// [`IntoCompleter::into_completer`] makes). Cheap to clone.
pub struct Completer<S = ()>(Arc<CompleteFn<S>>);

impl<S> Clone for Completer<S> {
    fn clone(&self) -> Self {
        Self(self.0.clone())
    }
}

impl<S> fmt::Debug for Completer<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Completer")
    }
}

impl<S: Send + Sync + 'static> Completer<S> {
    /// Asks for the values (all of them: the caller keeps the first [`MAX_COMPLETIONS`]).
    pub(crate) fn complete(&self, request: CompletionRequest<S>) -> BoxFuture<Vec<String>> {
        (self.0)(request)
    }
}

/// Something that can complete an argument: what `#[arg(complete = f)]` names and
/// [`PromptDef::complete`](super::PromptDef::complete) /
/// [`ResourceDef::complete`](super::ResourceDef::complete) take. Three shapes are accepted (the
/// `M` parameter only tells them apart, as with axum's handlers):
///
/// - `fn(&str) -> Vec<String>`: the values for what the user typed so far;
/// - `fn(CompletionRequest<S>) -> Vec<String>`: also sees the argument's name, the other
///   arguments already filled in, and the request (with the server's state);
/// - `async fn(CompletionRequest<S>) -> Vec<String>`: the same, awaiting (a database, a
///   service).
///
/// A plain function runs on the async executor, so keep it quick (or make it `async`). Only
/// the first [`MAX_COMPLETIONS`] values are sent, with the total.
///
/// A completer that takes `CompletionRequest<S>` for a state `S` completes the arguments of
/// prompts and resources of that state: with `#[prompt]` and `#[resource]`, the function names
/// its state with a `RequestContext<S>` (or `State<S>`) parameter.
///
/// ```
/// use modelctx_core::server::{CompletionRequest, PromptDef};
///
/// fn colours(typed: &str) -> Vec<String> {
///     ["red", "green", "blue"].iter().filter(|c| c.starts_with(typed)).map(|c| c.to_string()).collect()
/// }
///
/// async fn shades(req: CompletionRequest) -> Vec<String> {
///     let colour = req.arguments.get("colour").cloned().unwrap_or_default();
///     vec![format!("light {colour}"), format!("dark {colour}")]
/// }
///
/// let paint = PromptDef::<()>::new("paint", |_, args| async move {
///     Ok(format!("Paint it {} {}.", args["shade"], args["colour"]).into())
/// })
/// .complete("colour", colours)
/// .complete("shade", shades);
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot complete an argument",
    label = "not a completer",
    note = "a completer is `fn(&str) -> Vec<String>`, or a function (plain or `async`) that takes a `CompletionRequest<S>` and returns `Vec<String>`",
    note = "a completer taking `CompletionRequest<S>` needs a prompt or resource of the same state `S`: give the function a `RequestContext<S>` or `State<S>` parameter"
)]
pub trait IntoCompleter<S, M>: Send + Sync + 'static {
    /// The erased completer.
    fn into_completer(self) -> Completer<S>;
}

/// Tells the shapes of [`IntoCompleter`] apart; never named by users.
#[doc(hidden)]
pub(crate) mod shape {
    /// `fn(&str) -> Vec<String>`.
    #[derive(Debug)]
    pub struct Typed;
    /// `fn(CompletionRequest<S>) -> Vec<String>`.
    #[derive(Debug)]
    pub struct Plain;
    /// `async fn(CompletionRequest<S>) -> Vec<String>`.
    #[derive(Debug)]
    pub struct Async;
}

impl<S, F> IntoCompleter<S, shape::Typed> for F
where
    S: Send + Sync + 'static,
    F: Fn(&str) -> Vec<String> + Send + Sync + 'static,
{
    fn into_completer(self) -> Completer<S> {
        Completer(Arc::new(move |req: CompletionRequest<S>| {
            let values = self(&req.value);
            Box::pin(std::future::ready(values))
        }))
    }
}

impl<S, F> IntoCompleter<S, shape::Plain> for F
where
    S: Send + Sync + 'static,
    F: Fn(CompletionRequest<S>) -> Vec<String> + Send + Sync + 'static,
{
    fn into_completer(self) -> Completer<S> {
        Completer(Arc::new(move |req| {
            let values = self(req);
            Box::pin(std::future::ready(values))
        }))
    }
}

impl<S, F, Fut> IntoCompleter<S, shape::Async> for F
where
    S: Send + Sync + 'static,
    F: Fn(CompletionRequest<S>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Vec<String>> + Send + 'static,
{
    fn into_completer(self) -> Completer<S> {
        Completer(Arc::new(move |req| Box::pin(self(req))))
    }
}

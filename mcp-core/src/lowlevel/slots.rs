//! The typed slot of every spec method: `on_list_tools`, `on_call_tool`, ...
//!
//! Each is `add_request_handler` with the spec's params and result types filled in, so a
//! handler is `async (ctx, params) -> Result<R, McpError>` and cannot get the types wrong.

use std::future::Future;

use super::context::RequestContext;
use super::handler::erase_request;
use super::server::Server;
use crate::error::McpError;
use crate::types::*;

macro_rules! slot {
    ($(#[$doc:meta])* $name:ident, $method:literal, $params:ty => $result:ty) => {
        $(#[$doc])*
        pub fn $name<F, Fut>(&mut self, handler: F) -> &mut Self
        where
            F: Fn(RequestContext<S>, $params) -> Fut + Send + Sync + 'static,
            Fut: Future<Output = Result<$result, McpError>> + Send + 'static,
        {
            self.requests.insert($method.into(), erase_request(handler));
            self
        }
    };
    ($(#[$doc:meta])* $name:ident, $method:literal, $params:ty => outcome $result:ty) => {
        $(#[$doc])*
        ///
        /// The handler returns the result, or an [`InputRequiredResult`] (through
        /// [`Outcome`]) to ask the client for input first.
        pub fn $name<R, F, Fut>(&mut self, handler: F) -> &mut Self
        where
            R: Into<Outcome<$result>> + Send + 'static,
            F: Fn(RequestContext<S>, $params) -> Fut + Send + Sync + 'static,
            Fut: Future<Output = Result<R, McpError>> + Send + 'static,
        {
            let handler = move |ctx, params| {
                let fut = handler(ctx, params);
                async move { fut.await.map(Into::<Outcome<$result>>::into) }
            };
            self.requests.insert($method.into(), erase_request(handler));
            self
        }
    };
}

impl<S: Send + Sync + 'static> Server<S> {
    slot!(
        /// `tools/list`. Implies the `tools` capability.
        on_list_tools, "tools/list", PaginatedRequestParams => ListToolsResult
    );
    slot!(
        /// `tools/call`, one handler for every tool (route on `params.name`). Arguments are not
        /// validated. Implies the `tools` capability.
        on_call_tool, "tools/call", CallToolRequestParams => outcome CallToolResult
    );
    slot!(
        /// `resources/list`. Implies the `resources` capability.
        on_list_resources, "resources/list", PaginatedRequestParams => ListResourcesResult
    );
    slot!(
        /// `resources/templates/list`. Implies the `resources` capability.
        on_list_resource_templates, "resources/templates/list",
        PaginatedRequestParams => ListResourceTemplatesResult
    );
    slot!(
        /// `resources/read`. Implies the `resources` capability.
        on_read_resource, "resources/read", ReadResourceRequestParams => outcome ReadResourceResult
    );
    slot!(
        /// `resources/subscribe` (2025). Implies `resources.subscribe: true`.
        on_subscribe_resource, "resources/subscribe", SubscribeRequestParams => EmptyResult
    );
    slot!(
        /// `resources/unsubscribe` (2025).
        on_unsubscribe_resource, "resources/unsubscribe", SubscribeRequestParams => EmptyResult
    );
    slot!(
        /// `prompts/list`. Implies the `prompts` capability.
        on_list_prompts, "prompts/list", PaginatedRequestParams => ListPromptsResult
    );
    slot!(
        /// `prompts/get`. Implies the `prompts` capability.
        on_get_prompt, "prompts/get", GetPromptRequestParams => outcome GetPromptResult
    );
    slot!(
        /// `completion/complete`. Implies the `completions` capability.
        on_completion, "completion/complete", CompleteRequestParams => CompleteResult
    );
    slot!(
        /// `logging/setLevel` (2025). Implies the `logging` capability. The engine records the
        /// level on the session before the handler runs, so `ctx.log` filters by it.
        on_set_logging_level, "logging/setLevel", SetLevelRequestParams => EmptyResult
    );
    slot!(
        /// `subscriptions/listen` (2026): a long-lived request. Notifications sent through its
        /// context are tagged with the subscription id; its result, returned when the server
        /// ends the stream, is stamped with it.
        on_subscriptions_listen, "subscriptions/listen",
        SubscriptionsListenRequestParams => SubscriptionsListenResult
    );
    slot!(
        /// `ping` (2025). Built in (answers `{}`); replaceable.
        on_ping, "ping", RequestParams => EmptyResult
    );
    slot!(
        /// `server/discover` (2026). Built in (versions, derived capabilities, instructions);
        /// replaceable.
        on_discover, "server/discover", RequestParams => DiscoverResult
    );

    /// Turns on the `logging` capability with the built-in `logging/setLevel` (which records the
    /// level and answers `{}`), for servers that log through `ctx.log` without a handler of
    /// their own.
    pub fn enable_logging(&mut self) -> &mut Self {
        self.on_set_logging_level(|_, _| async { Ok(EmptyResult::default()) })
    }
}

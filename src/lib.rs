#![doc = include_str!("tour.md")]
#![warn(missing_docs)]
// On docs.rs (nightly, `--cfg docsrs`): every feature-gated item says which feature it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]

pub use modelctx_core::*;
pub use modelctx_macros::{prompt, resource, tool, tools};

/// The names most programs need: the server and its macros, the handler context, the client
/// (with the `client` feature), errors, and the protocol types a handler returns. Everything
/// else is reachable by module path (`modelctx::types::*` holds every protocol type, for
/// low-level handlers).
///
/// ```
/// use modelctx::prelude::*;
///
/// /// Say hello.
/// #[tool]
/// async fn hello(ctx: RequestContext) -> Result<CallToolResult> {
///     ctx.log(LoggingLevel::Info, "saying hello").await?;
///     Ok(CallToolResult::text("Hello!"))
/// }
///
/// let server = McpServer::new("greeter").tool(HelloTool);
/// ```
pub mod prelude {
    #[cfg(feature = "client")]
    pub use modelctx_core::client::{Client, RequestOptions};
    pub use modelctx_core::era::Era;
    pub use modelctx_core::input::{Answers, Elicited, Questions};
    pub use modelctx_core::lowlevel::{
        CacheHint, Incoming, IntoServer, Next, NotificationContext, RequestContext, Server, Session,
    };
    pub use modelctx_core::server::{CompletionRequest, McpServer, State, ToolError};
    pub use modelctx_core::types::{
        AudioContent, CallToolResult, ContentBlock, EmbeddedResource, GetPromptResult,
        ImageContent, LoggingLevel, PromptMessage, ReadResourceResult, ResourceContents, Role,
        TextContent,
    };
    pub use modelctx_core::{McpError, Result};
    pub use modelctx_macros::{prompt, resource, tool, tools};
}

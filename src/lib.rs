//! # mcp: a Rust SDK for the Model Context Protocol
//!
//! Two layers over one engine:
//!
//! - the **low-level** [`lowlevel::Server`]: a raw table from method name to handler, every
//!   handler `async (ctx, params) -> Result<R, McpError>`, nothing derived and nothing validated;
//! - the **high-level** macro layer (`#[tool]`, `#[resource]`, `#[prompt]`), built on that table.
//!
//! Both protocol eras are served by the same server: 2025-11-25 (the `initialize` handshake)
//! and 2026-07-28 (stateless, per-request `_meta`), over stdio, Streamable HTTP and in memory.
//! The [`client::Client`] connects to any server (a program over stdio, an HTTP endpoint, a
//! server of this process), negotiates the era and speaks either.
//!
//! ```
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! use modelctx::prelude::*;
//! use serde_json::json;
//!
//! let mut server = Server::new("hello").version("1.0.0");
//! server
//!     .on_list_tools(|_, _| async {
//!         Ok(ListToolsResult {
//!             tools: vec![Tool::new("hello", "Say hello.", json!({"type": "object"}))],
//!             ..Default::default()
//!         })
//!     })
//!     .on_call_tool(|_, _| async { Ok(CallToolResult::text("Hello!")) });
//!
//! let client = Client::connect(server).await.unwrap();
//! let result = client.call_tool("hello", json!({})).await.unwrap();
//! assert_eq!(result.content[0].as_text(), Some("Hello!"));
//! client.close().await;
//! # });
//! ```
#![warn(missing_docs)]
// On docs.rs (nightly, `--cfg docsrs`): every feature-gated item says which feature it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]

pub use modelctx_core::*;
pub use modelctx_macros::{prompt, resource, tool, tools};

/// The names most programs need.
pub mod prelude {
    pub use modelctx_core::client::{Client, RequestOptions};
    pub use modelctx_core::era::Era;
    pub use modelctx_core::input::{Answers, Elicited, Questions};
    pub use modelctx_core::lowlevel::{
        CacheHint, Incoming, IntoServer, Next, NotificationContext, RequestContext, Server, Session,
    };
    pub use modelctx_core::server::{CompletionRequest, McpServer, State, ToolError};
    pub use modelctx_core::types::*;
    pub use modelctx_core::{McpError, Result};
    pub use modelctx_macros::{prompt, resource, tool, tools};
}

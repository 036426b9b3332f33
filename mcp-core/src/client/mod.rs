//! The [`Client`]: connects to any MCP server (a program over stdio, an HTTP endpoint, a
//! server of this process, any [`Transport`](crate::transport::Transport)), negotiates the era,
//! and speaks either. Compiled with the `client` feature (off by default).
//!
//! ```
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! use modelctx_core::client::Client;
//! use modelctx_core::lowlevel::Server;
//!
//! let client = Client::connect(Server::new("empty")).await.unwrap();
//! let discover = client.discover().await.unwrap();
//! assert_eq!(discover.supported_versions[0], "2026-07-28");
//! client.close().await;
//! # });
//! ```

mod builder;
mod cache;
mod connection;
mod input;
mod negotiate;
mod notify;
#[cfg(feature = "http")]
pub mod oauth;
mod options;
mod param_headers;
mod reader;
mod request;
mod shared;
mod skills;
mod tasks;
mod transport;
mod verbs;

pub use builder::{ClientBuilder, EraChoice, DEFAULT_PROBE_TIMEOUT, DEFAULT_REQUEST_TIMEOUT};
pub use connection::Client;
pub use input::DEFAULT_MAX_INPUT_ROUNDS;
pub use notify::ServerNotification;
pub use options::RequestOptions;
pub use request::PendingRequest;
pub use skills::{LoadedSkill, SkillError};
pub use tasks::{TaskState, ToolCallOutcome, DEFAULT_TASK_POLL_INTERVAL};
pub use transport::IntoTransport;

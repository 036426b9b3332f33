//! The in-memory [`Client`]: connects to a server running in this process, exactly like the
//! seeds' `Client(server)`, and speaks either era.
//!
//! ```
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! use mcp_core::client::Client;
//! use mcp_core::lowlevel::Server;
//!
//! let client = Client::connect(Server::new("empty")).await.unwrap();
//! let discover = client.discover().await.unwrap();
//! assert_eq!(discover.supported_versions, vec!["2026-07-28"]);
//! client.close().await;
//! # });
//! ```

mod builder;
mod connection;
mod input;
mod verbs;

pub use builder::ClientBuilder;
pub use connection::{Client, PendingRequest, ServerNotification};
pub use input::DEFAULT_MAX_INPUT_ROUNDS;

//! The runtime of the `modelctx` SDK: protocol types, the JSON-RPC engine, the low-level handler
//! table, the server and client transports, and the client (with the `client` feature).
//!
//! Most users depend on the `modelctx` facade crate, which re-exports this one.
#![warn(missing_docs)]
// On docs.rs (nightly, `--cfg docsrs`): every feature-gated item says which feature it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]

#[doc(hidden)]
pub mod __private;
#[cfg(feature = "http")]
pub mod auth;
pub mod base64;
#[cfg(feature = "client")]
pub mod client;
pub mod era;
mod error;
pub mod events;
#[cfg(feature = "http")]
mod fetch;
pub mod frontmatter;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
pub mod input;
mod json_string;
pub mod jsonrpc;
mod lines;
pub mod lowlevel;
mod members;
mod message_scan;
mod name_map;
mod object_text;
mod peer;
mod percent;
mod random_id;
mod raw_meta;
mod request_id;
pub mod request_state;
pub mod server;
mod shared_text;
pub mod trace;
pub mod transport;
pub mod types;
mod validator;
mod write_timeout;

pub use error::{codes, ErrorObject, McpError, Result, INTERNAL_ERROR_MESSAGE};

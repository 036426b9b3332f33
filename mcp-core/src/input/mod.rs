//! Asking the client for input (elicitation, sampling, roots) with one API in both eras.
//!
//! A handler asks through its [`RequestContext`](crate::lowlevel::RequestContext):
//!
//! ```no_run
//! use modelctx_core::lowlevel::RequestContext;
//! use modelctx_core::input::Elicited;
//!
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct Signup {
//!     /// Your name
//!     name: String,
//!     newsletter: bool,
//! }
//!
//! async fn signup(ctx: RequestContext) -> modelctx_core::Result<String> {
//!     match ctx.elicit::<Signup>("signup", "Who are you?").await? {
//!         Elicited::Accepted(form) => Ok(format!("Welcome, {}!", form.name)),
//!         _ => Ok("Maybe next time.".into()),
//!     }
//! }
//! ```
//!
//! - **2025-11-25**: the server sends `elicitation/create` (or `sampling/createMessage`,
//!   `roots/list`) to the client on the request's own stream and waits for the answer, at most
//!   [`ServerOptions::input_timeout`](crate::lowlevel::ServerOptions::input_timeout).
//! - **2026-07-28**: the first call returns an `InputRequiredResult` (the `?` carries it out of
//!   the handler as an [`McpError::input_required`](crate::McpError::input_required)); the client
//!   retries with `inputResponses` and the echoed `requestState`, the handler runs again from the
//!   top, and this time `elicit` returns the answer. Answers of earlier rounds travel in the
//!   sealed `requestState` (see [`request_state`](crate::request_state)), so a handler that asks
//!   twice in a row simply asks twice. (A low-level server that does not seal carries no earlier
//!   answers: there a handler asking in several rounds keeps them in its own `requestState`.)
//!   Answers sent without a state count for their own round only.
//!
//! Either way a question is only sent when the client declared the capability it needs;
//! otherwise the call fails with `-32021` and `data.requiredCapabilities`. Several questions in
//! one round go through [`RequestContext::ask`](crate::lowlevel::RequestContext::ask) with
//! [`Questions`]. Malformed answers are refused with `-32602`.

mod answers;
mod ask;
mod form;
mod questions;

pub use answers::{Answers, Elicited};
pub use form::{form_schema, ElicitForm};
pub use questions::{Question, Questions};

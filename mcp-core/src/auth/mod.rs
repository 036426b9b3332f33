//! Identity and authorization for MCP over HTTP, after the MCP authorization specification
//! (OAuth 2.1; RFC 9728, 8414, 8707, 7591, 9207).
//!
//! - Server side: a [`Principal`] (who is calling) produced by a [`TokenVerifier`] and read in
//!   handlers with `ctx.principal()`; the resource server itself (Protected Resource Metadata,
//!   `401`/`403` challenges, audience binding, scopes per tool) is configured on the HTTP
//!   transport.
//! - Both sides: the discovery documents ([`ProtectedResourceMetadata`],
//!   [`AuthorizationServerMetadata`]) and the `WWW-Authenticate` challenge
//!   ([`BearerChallenge`]).

mod challenge;
mod metadata;
mod principal;
mod provider;
mod resource_server;
mod verifier;

pub use challenge::BearerChallenge;
pub use metadata::{AuthorizationServerMetadata, ProtectedResourceMetadata};
pub use principal::Principal;
pub use provider::{AuthFuture, AuthProvider, Refusal};
pub(crate) use resource_server::Protection;
pub use resource_server::{AuthLayer, RequireToken, ResourceServer, PROTECTED_RESOURCE_PATH};
pub use verifier::{TokenVerifier, VerifyError, VerifyFuture};

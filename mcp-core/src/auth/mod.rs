//! Identity and authorization for MCP over HTTP, after the MCP authorization specification
//! (OAuth 2.1; RFC 9728, 8414, 8707, 7591, 9207).
//!
//! - Server side: a [`Principal`] (who is calling) produced by a [`TokenVerifier`] and read in
//!   handlers with `ctx.principal()`; the resource server itself (Protected Resource Metadata,
//!   `401`/`403` challenges, audience binding, scopes per tool) is configured on the HTTP
//!   transport ([`ResourceServer`]). Two verifiers come with the crate: `JwtVerifier` (JWT
//!   access tokens checked against the issuer's key set; feature `jwt`) and [`Introspection`]
//!   (asking the authorization server, RFC 7662).
//! - Client side: [`AuthProvider`], which the HTTP client transport asks for credentials;
//!   `client::oauth::OAuth` implements it.
//! - Both sides: the discovery documents ([`ProtectedResourceMetadata`],
//!   [`AuthorizationServerMetadata`]) and the `WWW-Authenticate` challenge
//!   ([`BearerChallenge`]).

#[cfg(feature = "jwt")]
mod algorithm;
mod answer_cache;
mod challenge;
mod claims;
mod introspection;
#[cfg(feature = "jwt")]
mod jwks;
#[cfg(feature = "jwt")]
mod jwt;
mod metadata;
mod principal;
mod provider;
mod resource_server;
mod verifier;

#[cfg(feature = "jwt")]
pub use algorithm::JwsAlgorithm;
pub use challenge::BearerChallenge;
pub use introspection::Introspection;
#[cfg(feature = "jwt")]
pub use jwt::JwtVerifier;
pub use metadata::{AuthorizationServerMetadata, ProtectedResourceMetadata};
pub use principal::Principal;
pub use provider::{AuthFuture, AuthProvider, Refusal};
pub(crate) use resource_server::Protection;
pub use resource_server::{AuthLayer, RequireToken, ResourceServer, PROTECTED_RESOURCE_PATH};
pub use verifier::{TokenVerifier, VerifyError, VerifyFuture};
#[cfg(test)]
mod test_server;

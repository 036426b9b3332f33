//! [`TokenVerifier`]: turns a bearer token into a [`Principal`], or says why not.

use std::fmt;
use std::future::Future;
use std::pin::Pin;

use super::Principal;

/// A boxed future a [`TokenVerifier`] returns (so verifiers can be stored as trait objects).
pub type VerifyFuture<'a> =
    Pin<Box<dyn Future<Output = Result<Principal, VerifyError>> + Send + 'a>>;

/// Checks a bearer token: signature or introspection, expiry, issuer, audience. The resource
/// server calls it on every request that carries a token.
///
/// ```
/// use modelctx_core::auth::{Principal, TokenVerifier, VerifyError, VerifyFuture};
///
/// /// Accepts one fixed token (a development shortcut, never for production).
/// struct DevToken(String);
///
/// impl TokenVerifier for DevToken {
///     fn verify<'a>(&'a self, token: &'a str) -> VerifyFuture<'a> {
///         Box::pin(async move {
///             if token == self.0 {
///                 Ok(Principal::new("developer").audience(["http://127.0.0.1:8080/mcp"]))
///             } else {
///                 Err(VerifyError::invalid("unknown token"))
///             }
///         })
///     }
/// }
/// ```
pub trait TokenVerifier: Send + Sync + 'static {
    /// The principal `token` stands for, or why it stands for none.
    fn verify<'a>(&'a self, token: &'a str) -> VerifyFuture<'a>;
}

/// Why a token was not accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VerifyError {
    /// The token is malformed, forged, expired, not yet valid, revoked, or for someone else:
    /// the client gets 401 `error="invalid_token"`. The reason goes to the log at DEBUG, never
    /// to the client (it would help an attacker).
    Invalid(String),
    /// The token could not be checked now (the key set or introspection endpoint is down):
    /// the client gets 503 and may retry; the token is neither accepted nor called invalid.
    Unavailable(String),
}

impl VerifyError {
    /// A refused token, with the reason for the log.
    pub fn invalid(reason: impl Into<String>) -> Self {
        Self::Invalid(reason.into())
    }

    /// A verifier that cannot decide now, with the reason for the log.
    pub fn unavailable(reason: impl Into<String>) -> Self {
        Self::Unavailable(reason.into())
    }
}

impl fmt::Display for VerifyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Invalid(reason) => write!(f, "invalid token: {reason}"),
            Self::Unavailable(reason) => write!(f, "token verification unavailable: {reason}"),
        }
    }
}

impl std::error::Error for VerifyError {}

//! [`AuthProvider`]: how the client's HTTP transport gets credentials, and what it does when
//! the server refuses them.

use std::future::Future;
use std::pin::Pin;

use super::BearerChallenge;
use crate::error::McpError;

/// A boxed future an [`AuthProvider`] returns.
pub type AuthFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, McpError>> + Send + 'a>>;

/// A 401 or 403 from the MCP endpoint, as the transport hands it to its [`AuthProvider`].
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Refusal {
    /// 401 (no or bad credentials) or 403 (not enough scope).
    pub status: u16,
    /// The `Bearer` challenge of `WWW-Authenticate`, if the server sent one.
    pub challenge: Option<BearerChallenge>,
    /// The MCP endpoint that refused.
    pub endpoint: String,
    /// The `Authorization` value the refused request carried (`None`: it carried none). A
    /// provider compares it with its current credentials: if they changed meanwhile (another
    /// request already renewed them), resending is enough. Never shown by `Debug`.
    pub sent: Option<String>,
}

impl std::fmt::Debug for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Refusal")
            .field("status", &self.status)
            .field("challenge", &self.challenge)
            .field("endpoint", &self.endpoint)
            .field("sent", &self.sent.as_ref().map(|_| "<redacted>"))
            .finish()
    }
}

/// Credentials for the client's HTTP transport: the `Authorization` header of every request,
/// and a second chance when the server answers 401 or 403.
///
/// [`OAuth`](crate::client::oauth::OAuth) is the implementation most clients want; a fixed
/// API key is simpler as a header on the transport.
///
/// ```
/// use modelctx_core::auth::{AuthFuture, AuthProvider, Refusal};
///
/// /// A token read from the environment; a refusal is final.
/// struct EnvToken;
///
/// impl AuthProvider for EnvToken {
///     fn authorization<'a>(&'a self, _endpoint: &'a str) -> AuthFuture<'a, Option<String>> {
///         Box::pin(async { Ok(std::env::var("MCP_TOKEN").ok().map(|t| format!("Bearer {t}"))) })
///     }
///     fn refused<'a>(&'a self, _refusal: &'a Refusal) -> AuthFuture<'a, bool> {
///         Box::pin(async { Ok(false) })
///     }
/// }
/// ```
pub trait AuthProvider: Send + Sync + 'static {
    /// The `Authorization` header value for the next request to `endpoint` (`None`: send
    /// none). Called before every request, so a provider can refresh a token that is about to
    /// expire.
    fn authorization<'a>(&'a self, endpoint: &'a str) -> AuthFuture<'a, Option<String>>;

    /// The endpoint refused a request. `Ok(true)`: the credentials changed, send it again;
    /// `Ok(false)`: give up (the request fails with the refusal); `Err`: give up with this
    /// error. The transport asks at most 3 times for one request.
    fn refused<'a>(&'a self, refusal: &'a Refusal) -> AuthFuture<'a, bool>;
}

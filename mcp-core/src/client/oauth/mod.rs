//! OAuth 2.1 for the client's HTTP transport: the client half of MCP authorization.
//!
//! [`OAuth`] is an [`AuthProvider`]: give it to
//! [`HttpClientTransport::auth`](crate::transport::HttpClientTransport) and every request
//! carries `Authorization: Bearer ...`. When the server answers `401`, the provider
//!
//! 1. finds the server's Protected Resource Metadata (the challenge's `resource_metadata`, else
//!    the well-known URIs) and checks that its `resource` stands for the endpoint;
//! 2. finds the authorization server's metadata (RFC 8414 with path insertion, then OpenID
//!    Connect discovery) and checks its `issuer` and PKCE `S256` support; servers without
//!    metadata get the 2025-03-26 fallbacks;
//! 3. gets client credentials: pre-registered, kept from an earlier registration, a Client ID
//!    Metadata Document URL, or Dynamic Client Registration;
//! 4. runs the authorization code flow with PKCE, `state` and `resource` through its
//!    [`Login`] (the system browser by default), checks `state` and RFC 9207 `iss`, and
//!    exchanges the code;
//!
//! then the transport resends the request. An expired access token is refreshed before a
//! request when a refresh token allows it; a `403 insufficient_scope` asks again for the union
//! of the scopes held and the scopes challenged; a new authorization server (the metadata names
//! another issuer) means new credentials, never the old ones.
//!
//! ```no_run
//! # async fn run() -> modelctx_core::Result<()> {
//! use modelctx_core::client::oauth::OAuth;
//! use modelctx_core::client::Client;
//! use modelctx_core::transport::HttpClientTransport;
//!
//! let oauth = OAuth::builder().client_name("My agent").build()?;
//! let http = HttpClientTransport::new("https://mcp.example.com/mcp")?.auth(oauth);
//! let client = Client::builder().connect(http).await?;
//! # let _ = client; Ok(()) }
//! ```

mod discovery;
#[cfg(test)]
mod flow_tests;
mod login;
mod pkce;
mod registration;
mod scopes;
mod store;
mod token;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

pub use login::{
    AuthorizationResponse, BrowserLogin, HeadlessLogin, Login, CALLBACK_PATH,
    DEFAULT_BROWSER_TIMEOUT, DEFAULT_HEADLESS_TIMEOUT,
};
pub use store::{ClientCredentials, MemoryStore, TokenStore, Tokens};

use self::discovery::{AuthServer, Discovered};
use self::registration::Identity;
use crate::auth::{AuthFuture, AuthProvider, Refusal};
use crate::error::McpError;
use crate::fetch::Fetch;

/// The `client_name` sent in Dynamic Client Registration unless set (`MCP client`).
pub const DEFAULT_CLIENT_NAME: &str = "MCP client";
/// The `application_type` sent in Dynamic Client Registration unless set (`native`).
pub const DEFAULT_APPLICATION_TYPE: &str = "native";
/// How long one request to the authorization server (metadata, registration, token) may take
/// (30 s).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
/// How long before its expiry an access token is refreshed (60 s).
pub const DEFAULT_REFRESH_MARGIN: Duration = Duration::from_secs(60);

/// An OAuth 2.1 client for one or more MCP endpoints: an [`AuthProvider`] for the HTTP client
/// transport. Cheap to clone (clones share their state).
///
/// Defaults (see [`OAuthBuilder`]): the system browser logs in ([`BrowserLogin`]), tokens and
/// registrations live in memory ([`MemoryStore`]), Dynamic Client Registration as `MCP client`
/// with `application_type` `native`, no Client ID Metadata Document, `offline_access` asked for
/// where the authorization server lists it, 30 s per request to the authorization server,
/// tokens refreshed 60 s before they expire.
///
/// Nothing is sent before the server asks: the first request goes without credentials, and
/// its `401` starts discovery.
#[derive(Clone)]
pub struct OAuth {
    inner: Arc<Inner>,
}

struct Inner {
    fetch: Fetch,
    login: Arc<dyn Login>,
    store: Arc<dyn TokenStore>,
    identity: Identity,
    offline_access: bool,
    refresh_margin: Duration,
    /// What is known per MCP endpoint.
    sessions: tokio::sync::Mutex<HashMap<String, Session>>,
    /// The last failed login per endpoint: when, the credentials the refused request carried,
    /// and the error (code, message). The requests that waited behind it share its outcome
    /// instead of each opening another login.
    failed: std::sync::Mutex<HashMap<String, FailedLogin>>,
}

/// A login that failed: when, the credentials the refused request carried, the error.
struct FailedLogin {
    at: std::time::Instant,
    sent: Option<String>,
    code: i32,
    message: String,
}

/// How long a failed login answers the requests that were refused with the same credentials
/// (10 s): a person who clicked "Deny" sees one consent page, not one per waiting request.
const FAILED_LOGIN_HOLD: Duration = Duration::from_secs(10);

/// Where an endpoint's current token came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Origin {
    /// An authorization code flow.
    Login,
    /// A refresh.
    Refresh,
    /// The token store.
    Store,
}

/// What the provider knows about one MCP endpoint.
struct Session {
    discovered: Discovered,
    /// The current tokens, `None` before the first login or after they were refused.
    tokens: Option<Tokens>,
    origin: Origin,
    /// How many requests were given the current access token.
    handed_out: u32,
    /// The scopes asked for so far (without `offline_access`): the base of every later
    /// request, so that a step-up never loses what was granted before.
    scopes: Vec<String>,
}

impl std::fmt::Debug for OAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuth")
            .field("identity", &self.inner.identity)
            .field("offline_access", &self.inner.offline_access)
            .field("refresh_margin", &self.inner.refresh_margin)
            .finish_non_exhaustive()
    }
}

/// Builds an [`OAuth`] provider; every setting has a default (see [`OAuth`]).
pub struct OAuthBuilder {
    login: Option<Arc<dyn Login>>,
    store: Option<Arc<dyn TokenStore>>,
    identity: Identity,
    offline_access: bool,
    timeout: Duration,
    refresh_margin: Duration,
    tls: crate::fetch::Tls,
}

impl std::fmt::Debug for OAuthBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthBuilder")
            .field("identity", &self.identity)
            .field("offline_access", &self.offline_access)
            .field("timeout", &self.timeout)
            .field("refresh_margin", &self.refresh_margin)
            .finish_non_exhaustive()
    }
}

impl Default for OAuthBuilder {
    fn default() -> Self {
        Self {
            login: None,
            store: None,
            identity: Identity {
                client_name: DEFAULT_CLIENT_NAME.to_owned(),
                application_type: DEFAULT_APPLICATION_TYPE.to_owned(),
                metadata_url: None,
                preregistered: Vec::new(),
                pinned: Default::default(),
            },
            offline_access: true,
            timeout: DEFAULT_TIMEOUT,
            refresh_margin: DEFAULT_REFRESH_MARGIN,
            tls: None,
        }
    }
}

impl OAuthBuilder {
    /// How people log in (default: [`BrowserLogin`]).
    pub fn login(mut self, login: impl Login) -> Self {
        self.login = Some(Arc::new(login));
        self
    }

    /// Where registrations and tokens are kept (default: [`MemoryStore`]).
    pub fn store(mut self, store: impl TokenStore) -> Self {
        self.store = Some(Arc::new(store));
        self
    }

    /// The `client_name` of Dynamic Client Registration (default `MCP client`).
    pub fn client_name(mut self, name: impl Into<String>) -> Self {
        self.identity.client_name = name.into();
        self
    }

    /// The `application_type` of Dynamic Client Registration: `native` (the default: desktop,
    /// command-line and mobile clients with loopback or custom-scheme redirects) or `web`.
    pub fn application_type(mut self, kind: impl Into<String>) -> Self {
        self.identity.application_type = kind.into();
        self
    }

    /// The `https://` URL of this client's Client ID Metadata Document: used as the
    /// `client_id` at authorization servers that support such documents
    /// (`client_id_metadata_document_supported`), instead of registering. Default: none.
    pub fn client_metadata_url(mut self, url: impl Into<String>) -> Self {
        self.identity.metadata_url = Some(url.into());
        self
    }

    /// Pre-registered credentials, used at the authorization server that has none of its own
    /// (see [`client_for`](Self::client_for)). Default: none. A client secret given this way
    /// goes only to the first authorization server it is used with (another MCP server could
    /// name a server of its own to collect it); name the issuer with `client_for` when one
    /// provider serves several servers.
    pub fn client(mut self, credentials: ClientCredentials) -> Self {
        self.identity.preregistered.push((None, credentials));
        self
    }

    /// Pre-registered credentials for the authorization server whose issuer is `issuer`.
    pub fn client_for(mut self, issuer: impl Into<String>, credentials: ClientCredentials) -> Self {
        self.identity
            .preregistered
            .push((Some(issuer.into()), credentials));
        self
    }

    /// Whether to ask for `offline_access` (a refresh token) where the authorization server
    /// lists it in `scopes_supported` (default `true`; it is added only to a non-empty scope).
    pub fn offline_access(mut self, ask: bool) -> Self {
        self.offline_access = ask;
        self
    }

    /// How long one request to the authorization server may take (default 30 s).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// How long before its expiry an access token is refreshed (default 60 s).
    pub fn refresh_margin(mut self, margin: Duration) -> Self {
        self.refresh_margin = margin;
        self
    }

    /// The TLS settings for `https://` authorization servers (default: Mozilla's roots).
    #[cfg(feature = "https")]
    pub fn tls_config(mut self, config: Arc<rustls::ClientConfig>) -> Self {
        self.tls = Some(config);
        self
    }

    /// The provider. Fails only when the TLS settings cannot be used.
    pub fn build(self) -> Result<OAuth, McpError> {
        Ok(OAuth {
            inner: Arc::new(Inner {
                fetch: Fetch::new(self.timeout, &self.tls)?,
                login: self.login.unwrap_or_else(|| Arc::new(BrowserLogin::new())),
                store: self.store.unwrap_or_else(|| Arc::new(MemoryStore::new())),
                identity: self.identity,
                offline_access: self.offline_access,
                refresh_margin: self.refresh_margin,
                sessions: tokio::sync::Mutex::new(HashMap::new()),
                failed: std::sync::Mutex::new(HashMap::new()),
            }),
        })
    }
}

impl OAuth {
    /// A builder with the defaults.
    pub fn builder() -> OAuthBuilder {
        OAuthBuilder::default()
    }

    /// Logs in to `endpoint` now (discovery from its well-known metadata, then the store, a
    /// refresh or a login), instead of when its first request is refused. Call it before
    /// connecting when the person logs in interactively: a login inside the first request
    /// can outlast that request's timeout (60 s) or the era probe (10 s), which then fail
    /// while the login goes on.
    ///
    /// ```no_run
    /// # async fn run() -> modelctx_core::Result<()> {
    /// use modelctx_core::client::{oauth::OAuth, Client};
    /// use modelctx_core::transport::HttpClientTransport;
    ///
    /// let url = "https://mcp.example.com/mcp";
    /// let oauth = OAuth::builder().build()?;
    /// oauth.login(url).await?;
    /// let client = Client::connect(HttpClientTransport::new(url)?.auth(oauth)).await?;
    /// # Ok(()) }
    /// ```
    pub async fn login(&self, endpoint: &str) -> Result<(), McpError> {
        let refusal = Refusal {
            status: 401,
            challenge: None,
            endpoint: endpoint.to_owned(),
            sent: None,
        };
        let inner = self.inner.clone();
        // Asked for explicitly: a login that failed a moment ago is tried again.
        inner
            .failed
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(endpoint);
        match tokio::spawn(async move { inner.refused(&refusal).await }).await {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(e)) => Err(e),
            Err(e) => Err(McpError::internal(format!("the login task failed: {e}"))),
        }
    }

    /// Forgets the tokens of `endpoint` (in memory and in the store); the next request goes
    /// without credentials and its `401` starts a new login. Client registrations are kept.
    pub async fn logout(&self, endpoint: &str) -> Result<(), McpError> {
        let mut sessions = self.inner.sessions.lock().await;
        if let Some(session) = sessions.remove(endpoint) {
            let d = &session.discovered;
            self.inner
                .store
                .set_tokens(&d.server.issuer, &d.resource, None)
                .await?;
        }
        Ok(())
    }
}

impl AuthProvider for OAuth {
    fn authorization<'a>(&'a self, endpoint: &'a str) -> AuthFuture<'a, Option<String>> {
        Box::pin(self.inner.authorization(endpoint))
    }

    fn refused<'a>(&'a self, refusal: &'a Refusal) -> AuthFuture<'a, bool> {
        let inner = self.inner.clone();
        let refusal = refusal.clone();
        Box::pin(async move {
            // A login takes as long as the person takes: it runs on a task of its own, so a
            // request that gives up (its timeout, the era probe) does not cancel it, and the
            // requests after it find its tokens.
            match tokio::spawn(async move { inner.refused(&refusal).await }).await {
                Ok(outcome) => outcome,
                Err(e) => Err(McpError::internal(format!("the login task failed: {e}"))),
            }
        })
    }
}

impl Inner {
    async fn authorization(&self, endpoint: &str) -> Result<Option<String>, McpError> {
        let mut sessions = self.sessions.lock().await;
        let Some(session) = sessions.get_mut(endpoint) else {
            return Ok(None);
        };
        let Some(tokens) = &session.tokens else {
            return Ok(None);
        };
        if tokens.expires_within(self.refresh_margin) {
            let refreshed = if tokens.refresh_token.is_some() {
                match self.refresh(session).await {
                    Ok(()) => true,
                    Err(e) => {
                        tracing::info!(error = %e.message(), "token refresh failed");
                        false
                    }
                }
            } else {
                false
            };
            if !refreshed {
                // Send nothing: the 401 that follows starts a login.
                self.forget_tokens(session).await?;
                return Ok(None);
            }
        }
        let Some(tokens) = &session.tokens else {
            return Ok(None);
        };
        session.handed_out = session.handed_out.saturating_add(1);
        Ok(Some(format!("Bearer {}", tokens.access_token)))
    }

    async fn refused(&self, refusal: &Refusal) -> Result<bool, McpError> {
        let mut sessions = self.sessions.lock().await;
        let endpoint = refusal.endpoint.as_str();
        let current = sessions
            .get(endpoint)
            .and_then(|s| s.tokens.as_ref())
            .map(|t| format!("Bearer {}", t.access_token));
        if current.is_some() && refusal.sent != current {
            // The request carried older credentials (or none): the current ones are untried.
            return Ok(true);
        }
        if let Some(error) = self.recent_failure(endpoint, &refusal.sent) {
            return Err(error);
        }
        let outcome = match refusal.status {
            401 => self.unauthorized(&mut sessions, endpoint, refusal).await,
            403 => self.forbidden(&mut sessions, endpoint, refusal).await,
            _ => Ok(false),
        };
        let mut failed = self.failed.lock().unwrap_or_else(|p| p.into_inner());
        match &outcome {
            Err(e) => {
                let entry = FailedLogin {
                    at: std::time::Instant::now(),
                    sent: refusal.sent.clone(),
                    code: e.code(),
                    message: e.message().into_owned(),
                };
                failed.insert(endpoint.to_owned(), entry);
            }
            Ok(_) => {
                failed.remove(endpoint);
            }
        }
        outcome
    }

    /// The error of a login that failed for `endpoint` within [`FAILED_LOGIN_HOLD`], for a
    /// request refused with the same credentials (`sent`).
    fn recent_failure(&self, endpoint: &str, sent: &Option<String>) -> Option<McpError> {
        let failed = self.failed.lock().unwrap_or_else(|p| p.into_inner());
        let last = failed.get(endpoint)?;
        (last.at.elapsed() < FAILED_LOGIN_HOLD && last.sent == *sent)
            .then(|| McpError::new(last.code, last.message.clone()))
    }

    /// A `401`: discovery again (the authorization server may have moved), then the cheapest
    /// way to a token that was not refused: the store, a refresh, a login.
    async fn unauthorized(
        &self,
        sessions: &mut HashMap<String, Session>,
        endpoint: &str,
        refusal: &Refusal,
    ) -> Result<bool, McpError> {
        let challenge = refusal.challenge.as_ref();
        let discovered = discovery::discover(&self.fetch, endpoint, challenge).await?;
        let session = match sessions.remove(endpoint) {
            Some(mut session) => {
                let old = &session.discovered;
                if old.server.issuer != discovered.server.issuer
                    || old.resource != discovered.resource
                {
                    tracing::info!(
                        from = %old.server.issuer,
                        to = %discovered.server.issuer,
                        "the authorization server changed; the old credentials are not used"
                    );
                    self.forget_tokens(&mut session).await?;
                }
                session.discovered = discovered;
                session
            }
            None => Session {
                discovered,
                tokens: None,
                origin: Origin::Store,
                handed_out: 0,
                scopes: Vec::new(),
            },
        };
        let session = sessions.entry(endpoint.to_owned()).or_insert(session);

        if session.tokens.is_some() {
            // The current token was refused.
            if session.origin == Origin::Login && session.handed_out <= 1 {
                // Only the retry after its login carried it: another login would end the same.
                tracing::warn!(%endpoint, "the token just obtained was refused (401)");
                self.forget_tokens(session).await?;
                return Ok(false);
            }
            let refreshable = session
                .tokens
                .as_ref()
                .is_some_and(|t| t.refresh_token.is_some());
            if refreshable && session.origin != Origin::Refresh {
                match self.refresh(session).await {
                    Ok(()) => return Ok(true),
                    Err(e) => tracing::info!(error = %e.message(), "token refresh failed"),
                }
            }
            self.forget_tokens(session).await?;
        } else {
            let d = &session.discovered;
            let stored = self.store.tokens(&d.server.issuer, &d.resource).await?;
            if let Some(stored) = stored {
                session.tokens = Some(stored.clone());
                session.origin = Origin::Store;
                session.handed_out = 0;
                if !stored.expires_within(self.refresh_margin) {
                    return Ok(true);
                }
                if stored.refresh_token.is_some() && self.refresh(session).await.is_ok() {
                    return Ok(true);
                }
                self.forget_tokens(session).await?;
            }
        }

        let scopes = scopes::select(
            challenge.and_then(|c| c.scope.as_deref()),
            session.discovered.scopes_supported.as_deref(),
            &session.scopes,
        );
        self.authorize(session, scopes).await?;
        Ok(true)
    }

    /// A `403`: with `insufficient_scope` naming a scope not asked for yet, a new login for the
    /// union of the scopes held and challenged; anything else is final.
    async fn forbidden(
        &self,
        sessions: &mut HashMap<String, Session>,
        endpoint: &str,
        refusal: &Refusal,
    ) -> Result<bool, McpError> {
        let Some(challenge) = refusal.challenge.as_ref() else {
            return Ok(false);
        };
        if challenge.error.as_deref() != Some("insufficient_scope") {
            return Ok(false);
        }
        let Some(session) = sessions.get_mut(endpoint) else {
            return Ok(false);
        };
        if session.tokens.is_none() {
            return Ok(false);
        }
        let Some(union) = scopes::step_up(&session.scopes, challenge.scope.as_deref()) else {
            tracing::warn!(
                %endpoint,
                scope = challenge.scope.as_deref().unwrap_or(""),
                "refused for scopes already asked for; not asking again"
            );
            return Ok(false);
        };
        tracing::debug!(%endpoint, scope = %union.join(" "), "step-up authorization");
        self.authorize(session, union).await?;
        Ok(true)
    }

    /// The authorization code flow for `scopes`; the new tokens become the session's.
    async fn authorize(&self, session: &mut Session, scopes: Vec<String>) -> Result<(), McpError> {
        let server = &session.discovered.server;
        let resource = session.discovered.resource.clone();
        let (client, redirect_uri) = self.client_at(server).await?;
        let requested =
            scopes::with_offline_access(&scopes, server.scopes_supported(), self.offline_access);
        let scope = (!requested.is_empty()).then(|| requested.join(" "));
        let pkce = pkce::Pkce::new()?;
        let state = pkce::random_token()?;
        let url = authorization_url(
            &server.authorization_endpoint,
            &[
                ("response_type", "code"),
                ("client_id", &client.client_id),
                ("redirect_uri", &redirect_uri),
                ("scope", scope.as_deref().unwrap_or("")),
                ("state", &state),
                ("code_challenge", &pkce.challenge),
                ("code_challenge_method", "S256"),
                ("resource", &resource),
            ],
        );
        tracing::debug!(issuer = %server.issuer, scope = scope.as_deref().unwrap_or(""), "authorization request");
        let response = self.login.authorize(&url, &redirect_uri).await?;
        let code = check_response(&response, &state, server)?;
        let tokens = token::exchange_code(
            &self.fetch,
            server,
            &client,
            token::CodeGrant {
                code: &code,
                redirect_uri: &redirect_uri,
                code_verifier: &pkce.verifier,
                resource: &resource,
                requested_scope: scope,
            },
        )
        .await?;
        self.store
            .set_tokens(&server.issuer, &resource, Some(tokens.clone()))
            .await?;
        session.tokens = Some(tokens);
        session.origin = Origin::Login;
        session.handed_out = 0;
        session.scopes = scopes;
        Ok(())
    }

    /// Who this client is at `server` (pre-registered, stored, or registered now), and the
    /// redirect URI its registration names.
    async fn client_at(
        &self,
        server: &discovery::AuthServer,
    ) -> Result<(ClientCredentials, String), McpError> {
        let redirect_uri = self.login.redirect_uri().await?;
        let client = registration::client_for(
            &self.fetch,
            &*self.store,
            &self.identity,
            server,
            &redirect_uri,
        )
        .await?;
        Ok((client, redirect_uri))
    }

    /// The refresh grant for the session's tokens; the new tokens become the session's.
    async fn refresh(&self, session: &mut Session) -> Result<(), McpError> {
        let Some(tokens) = session.tokens.clone() else {
            return Err(McpError::internal("no tokens to refresh"));
        };
        let server = &session.discovered.server;
        let resource = &session.discovered.resource;
        let (client, _) = self.client_at(server).await?;
        let fresh = token::refresh(&self.fetch, server, &client, &tokens, resource).await?;
        self.store
            .set_tokens(&server.issuer, resource, Some(fresh.clone()))
            .await?;
        session.tokens = Some(fresh);
        session.origin = Origin::Refresh;
        session.handed_out = 0;
        Ok(())
    }

    /// Drops the session's tokens, in memory and in the store.
    async fn forget_tokens(&self, session: &mut Session) -> Result<(), McpError> {
        session.tokens = None;
        session.handed_out = 0;
        let d = &session.discovered;
        self.store
            .set_tokens(&d.server.issuer, &d.resource, None)
            .await
    }
}

/// `endpoint` with `params` added to its query (empty values left out).
fn authorization_url(endpoint: &str, params: &[(&str, &str)]) -> String {
    let present: Vec<(&str, &str)> = params
        .iter()
        .filter(|(_, v)| !v.is_empty())
        .copied()
        .collect();
    let base = endpoint.split('#').next().unwrap_or(endpoint);
    let separator = if base.contains('?') {
        if base.ends_with('?') || base.ends_with('&') {
            ""
        } else {
            "&"
        }
    } else {
        "?"
    };
    format!("{base}{separator}{}", crate::fetch::form_encode(&present))
}

/// The authorization code of `response`, after the checks that must pass before the code is
/// redeemed: RFC 9207 `iss` (required and equal to the issuer when the metadata advertises it;
/// equal when present anyway; compared as strings, never normalized), `state`, errors.
fn check_response(
    response: &AuthorizationResponse,
    state: &str,
    server: &AuthServer,
) -> Result<String, McpError> {
    match response.iss.as_deref() {
        Some(iss) if iss != server.issuer => {
            return Err(McpError::internal(format!(
                "the authorization response came from `{iss}`, not from `{}` (RFC 9207); \
                 the code is not redeemed",
                server.issuer
            )));
        }
        None if server.iss_advertised() => {
            return Err(McpError::internal(format!(
                "the authorization response has no `iss` although `{}` advertises it \
                 (RFC 9207); the code is not redeemed",
                server.issuer
            )));
        }
        _ => {}
    }
    if response.state.as_deref() != Some(state) {
        return Err(McpError::internal(
            "the authorization response does not carry the request's `state`; the code is not \
             redeemed",
        ));
    }
    if let Some(error) = &response.error {
        let description = response
            .error_description
            .as_deref()
            .map(|d| format!(" ({d})"))
            .unwrap_or_default();
        return Err(McpError::internal(format!(
            "the authorization server refused: {error}{description}"
        )));
    }
    response
        .code
        .clone()
        .filter(|c| !c.is_empty())
        .ok_or_else(|| McpError::internal("the authorization response carries no code"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::AuthorizationServerMetadata;

    fn server(advertised: Option<bool>) -> AuthServer {
        AuthServer {
            issuer: "http://localhost:9".into(),
            metadata: Some(AuthorizationServerMetadata {
                issuer: "http://localhost:9".into(),
                token_endpoint: "http://localhost:9/token".into(),
                authorization_response_iss_parameter_supported: advertised,
                ..Default::default()
            }),
            authorization_endpoint: "http://localhost:9/authorize".into(),
            token_endpoint: "http://localhost:9/token".into(),
            registration_endpoint: None,
        }
    }

    fn response(iss: Option<&str>) -> AuthorizationResponse {
        AuthorizationResponse {
            code: Some("c".into()),
            state: Some("s".into()),
            iss: iss.map(str::to_owned),
            ..Default::default()
        }
    }

    #[test]
    fn iss_checks() {
        let issuer = Some("http://localhost:9");
        // Advertised: required and exact.
        assert!(check_response(&response(issuer), "s", &server(Some(true))).is_ok());
        assert!(check_response(&response(None), "s", &server(Some(true))).is_err());
        let evil = Some("https://evil.example.com");
        assert!(check_response(&response(evil), "s", &server(Some(true))).is_err());
        let normalized = Some("http://localhost:9/");
        assert!(check_response(&response(normalized), "s", &server(Some(true))).is_err());
        // Not advertised: optional, but compared when present.
        assert!(check_response(&response(None), "s", &server(None)).is_ok());
        assert!(check_response(&response(issuer), "s", &server(Some(false))).is_ok());
        assert!(check_response(&response(evil), "s", &server(None)).is_err());
        // Without metadata (2025-03-26 defaults) the same rules apply to the origin.
        let mut legacy = server(None);
        legacy.metadata = None;
        assert!(check_response(&response(None), "s", &legacy).is_ok());
    }

    #[test]
    fn state_and_errors() {
        assert_eq!(
            check_response(&response(None), "s", &server(None)).unwrap(),
            "c"
        );
        assert!(check_response(&response(None), "other", &server(None)).is_err());
        let mut denied = response(None);
        denied.code = None;
        denied.error = Some("access_denied".into());
        let e = check_response(&denied, "s", &server(None)).unwrap_err();
        assert!(e.message().contains("access_denied"));
        let mut empty = response(None);
        empty.code = None;
        assert!(check_response(&empty, "s", &server(None)).is_err());
    }

    #[test]
    fn authorization_urls() {
        assert_eq!(
            authorization_url(
                "http://a/authorize",
                &[
                    ("response_type", "code"),
                    ("scope", ""),
                    ("resource", "http://r:1")
                ]
            ),
            "http://a/authorize?response_type=code&resource=http%3A%2F%2Fr%3A1"
        );
        assert_eq!(
            authorization_url("http://a/authorize?tenant=x", &[("state", "a b")]),
            "http://a/authorize?tenant=x&state=a%20b"
        );
    }

    #[test]
    fn debug_hides_secrets() {
        let oauth = OAuth::builder()
            .login(HeadlessLogin::new("http://localhost:3000/callback"))
            .client(ClientCredentials::confidential("id", "very-secret"))
            .build()
            .unwrap();
        let debug = format!("{oauth:?}");
        assert!(!debug.contains("very-secret"), "{debug}");
    }
}

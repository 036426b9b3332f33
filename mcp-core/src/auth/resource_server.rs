//! [`ResourceServer`]: an MCP endpoint as an OAuth 2.1 resource server: Protected Resource
//! Metadata, bearer tokens checked on every request, `401`/`403` challenges, audience binding.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::body::Body;
use axum::http::header::{AUTHORIZATION, CONTENT_TYPE, WWW_AUTHENTICATE};
use axum::http::{HeaderValue, Method, Request, Response, StatusCode, Uri};

use super::{BearerChallenge, Principal, ProtectedResourceMetadata, TokenVerifier, VerifyError};
use crate::error::McpError;

/// The well-known path of Protected Resource Metadata (RFC 9728 §3).
pub const PROTECTED_RESOURCE_PATH: &str = "/.well-known/oauth-protected-resource";

/// An MCP endpoint protected by OAuth 2.1 bearer tokens.
///
/// Configure it on the HTTP transport with [`HttpConfig::auth`](crate::transport::HttpConfig),
/// or put [`ResourceServer::layer`] in front of a router of your own. Either way:
///
/// - `GET /.well-known/oauth-protected-resource` and the path-suffixed form for the MCP path
///   (`/.well-known/oauth-protected-resource/mcp`) serve the Protected Resource Metadata,
///   without a token;
/// - a request without a bearer token gets `401` with `WWW-Authenticate: Bearer
///   resource_metadata="..."` (and `scope="..."` when scopes are required); a token the
///   verifier refuses, or one issued for another resource (audience), gets `401` with
///   `error="invalid_token"`; a verifier that cannot decide (key set or introspection endpoint
///   down) gives `503`, never an accepted token;
/// - a token without the [required scopes](Self::required_scopes), or without the scopes of the
///   tool, prompt or resource called, gets `403` with `error="insufficient_scope"` and the
///   scopes to ask for;
/// - the [`Principal`] is in the request's extensions: `ctx.principal()` in a handler.
///
/// Defaults: tokens accepted only in the `Authorization` header; the accepted audience is the
/// resource URL (trailing `/` ignored); no scope required beyond the ones handlers declare.
///
/// ```
/// use modelctx_core::auth::{Principal, ResourceServer, TokenVerifier, VerifyError, VerifyFuture};
///
/// struct Fixed;
/// impl TokenVerifier for Fixed {
///     fn verify<'a>(&'a self, token: &'a str) -> VerifyFuture<'a> {
///         Box::pin(async move { Err(VerifyError::invalid("no tokens are valid")) })
///     }
/// }
///
/// let auth = ResourceServer::new("https://mcp.example.com/mcp", Fixed)
///     .unwrap()
///     .authorization_server("https://auth.example.com")
///     .scopes_supported(["books:read", "books:write"]);
/// assert_eq!(
///     auth.metadata_url(),
///     "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
/// );
/// ```
#[derive(Clone)]
pub struct ResourceServer {
    inner: Arc<Inner>,
}

pub(crate) struct Inner {
    resource: String,
    metadata: ProtectedResourceMetadata,
    metadata_url: String,
    /// The path-suffixed well-known path for the resource's own path.
    suffixed_path: String,
    required: Vec<String>,
    audiences: Vec<String>,
    verifier: Arc<dyn TokenVerifier>,
}

impl std::fmt::Debug for ResourceServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResourceServer")
            .field("resource", &self.inner.resource)
            .field(
                "authorization_servers",
                &self.inner.metadata.authorization_servers,
            )
            .field("required_scopes", &self.inner.required)
            .field("audiences", &self.inner.audiences)
            .finish_non_exhaustive()
    }
}

fn trim_slash(url: &str) -> &str {
    url.strip_suffix('/').unwrap_or(url)
}

impl ResourceServer {
    /// The resource at `resource` (the MCP endpoint's canonical URL, `https://host/mcp`, the
    /// value clients send as the `resource` parameter and tokens carry as `aud`), whose tokens
    /// `verifier` checks. Fails on a URL without scheme and host, or with a fragment.
    pub fn new(resource: &str, verifier: impl TokenVerifier) -> Result<Self, McpError> {
        let uri: Uri = resource.parse().map_err(|e| {
            McpError::invalid_params(format!("invalid resource URL `{resource}`: {e}"))
        })?;
        if uri.scheme().is_none() || uri.host().is_none() || resource.contains('#') {
            return Err(McpError::invalid_params(format!(
                "`{resource}` is not an absolute http(s) URL without a fragment"
            )));
        }
        let path = trim_slash(uri.path());
        let suffixed_path = format!("{PROTECTED_RESOURCE_PATH}{path}");
        let origin = format!(
            "{}://{}",
            uri.scheme_str().unwrap_or("https"),
            uri.authority().map(|a| a.as_str()).unwrap_or_default()
        );
        let metadata = ProtectedResourceMetadata {
            resource: resource.to_owned(),
            bearer_methods_supported: vec!["header".to_owned()],
            ..Default::default()
        };
        Ok(Self {
            inner: Arc::new(Inner {
                resource: resource.to_owned(),
                metadata,
                metadata_url: format!("{origin}{suffixed_path}"),
                suffixed_path,
                required: Vec::new(),
                audiences: vec![trim_slash(resource).to_owned()],
                verifier: Arc::new(verifier),
            }),
        })
    }

    fn edit(mut self, change: impl FnOnce(&mut Inner)) -> Self {
        match Arc::get_mut(&mut self.inner) {
            Some(inner) => change(inner),
            None => {
                let mut inner = Inner::clone(&self.inner);
                change(&mut inner);
                self.inner = Arc::new(inner);
            }
        }
        self
    }

    /// Adds an authorization server (its issuer URL) to the metadata's
    /// `authorization_servers`; at least one is needed for clients to find where to log in.
    pub fn authorization_server(self, issuer: impl Into<String>) -> Self {
        let issuer = issuer.into();
        self.edit(|i| i.metadata.authorization_servers.push(issuer))
    }

    /// The scopes clients may ask for (`scopes_supported` in the metadata). Do not list
    /// `offline_access` here (the spec says so).
    pub fn scopes_supported<I, T>(self, scopes: I) -> Self
    where
        I: IntoIterator<Item = T>,
        T: Into<String>,
    {
        let scopes = scopes.into_iter().map(Into::into).collect();
        self.edit(|i| i.metadata.scopes_supported = Some(scopes))
    }

    /// Scopes every request needs (checked after the token; `403` without them). They are
    /// also the `scope` of the `401` challenge. Default: none.
    pub fn required_scopes<I, T>(self, scopes: I) -> Self
    where
        I: IntoIterator<Item = T>,
        T: Into<String>,
    {
        let scopes = scopes.into_iter().map(Into::into).collect();
        self.edit(|i| i.required = scopes)
    }

    /// Accepts tokens issued for `audience` as well as for the resource URL (a logical API
    /// identifier some providers put in `aud`, such as Auth0's API audience).
    pub fn accept_audience(self, audience: impl Into<String>) -> Self {
        let audience = audience.into();
        self.edit(|i| i.audiences.push(trim_slash(&audience).to_owned()))
    }

    /// The metadata's `resource_name`.
    pub fn resource_name(self, name: impl Into<String>) -> Self {
        let name = name.into();
        self.edit(|i| i.metadata.resource_name = Some(name))
    }

    /// The Protected Resource Metadata document this server publishes.
    pub fn metadata(&self) -> &ProtectedResourceMetadata {
        &self.inner.metadata
    }

    /// Where the metadata is published (the `resource_metadata` of every challenge): the
    /// well-known path with the resource's path appended (RFC 9728 §3.1).
    pub fn metadata_url(&self) -> &str {
        &self.inner.metadata_url
    }

    /// The resource URL.
    pub fn resource(&self) -> &str {
        &self.inner.resource
    }

    /// A tower layer that protects any router: serves the metadata, checks tokens, puts the
    /// [`Principal`] in the request's extensions. The MCP endpoint behind it also checks the
    /// scopes of each tool, prompt and resource.
    ///
    /// ```no_run
    /// # use modelctx_core::transport::axum;
    /// # fn run(auth: modelctx_core::auth::ResourceServer, mcp: axum::Router) {
    /// let app: axum::Router = axum::Router::new()
    ///     .merge(mcp)
    ///     .layer(auth.layer());
    /// # }
    /// ```
    pub fn layer(&self) -> AuthLayer {
        AuthLayer {
            inner: self.inner.clone(),
        }
    }
}

impl Clone for Inner {
    fn clone(&self) -> Self {
        Self {
            resource: self.resource.clone(),
            metadata: self.metadata.clone(),
            metadata_url: self.metadata_url.clone(),
            suffixed_path: self.suffixed_path.clone(),
            required: self.required.clone(),
            audiences: self.audiences.clone(),
            verifier: self.verifier.clone(),
        }
    }
}

/// The resource server that admitted a request, kept in its extensions so the MCP endpoint can
/// challenge for the scopes of the tool called.
#[derive(Clone)]
pub(crate) struct Protection(Arc<Inner>);

impl Protection {
    /// `403 insufficient_scope` when `principal` lacks any of `required` (with the server's
    /// own required scopes, the `scope` of the challenge).
    pub(crate) fn check_scopes(
        &self,
        principal: Option<&Principal>,
        required: &[String],
    ) -> Option<Response<Body>> {
        if required.is_empty() {
            return None;
        }
        let granted = principal.map(Principal::granted_scopes).unwrap_or(&[]);
        if required.iter().all(|s| granted.contains(s)) {
            return None;
        }
        let mut scopes: Vec<&str> = self.0.required.iter().map(String::as_str).collect();
        for s in required {
            if !scopes.contains(&s.as_str()) {
                scopes.push(s);
            }
        }
        Some(self.0.insufficient_scope(&scopes.join(" ")))
    }
}

impl Inner {
    fn challenge(&self) -> BearerChallenge {
        BearerChallenge::default().resource_metadata(self.metadata_url.clone())
    }

    fn refuse(
        &self,
        status: StatusCode,
        challenge: BearerChallenge,
        message: &str,
    ) -> Response<Body> {
        let e = McpError::invalid_request(message.to_owned());
        let body = crate::jsonrpc::encode_error(None, &e.to_wire(false));
        let mut response = Response::new(Body::from(body));
        *response.status_mut() = status;
        response
            .headers_mut()
            .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        if let Ok(value) = HeaderValue::try_from(challenge.to_string()) {
            response.headers_mut().insert(WWW_AUTHENTICATE, value);
        }
        response
    }

    fn unauthorized(&self, invalid: bool) -> Response<Body> {
        let mut challenge = self.challenge();
        if !self.required.is_empty() {
            challenge = challenge.scope(self.required.join(" "));
        }
        let message = if invalid {
            challenge = challenge.error("invalid_token").error_description(
                "The access token is invalid, expired, or not for this resource",
            );
            "Unauthorized: the access token is invalid, expired, or not for this resource"
        } else {
            "Unauthorized: send an access token (Authorization: Bearer ...)"
        };
        self.refuse(StatusCode::UNAUTHORIZED, challenge, message)
    }

    fn insufficient_scope(&self, scope: &str) -> Response<Body> {
        let challenge = self
            .challenge()
            .error("insufficient_scope")
            .scope(scope.to_owned())
            .error_description(format!("This request needs the scopes: {scope}"));
        self.refuse(
            StatusCode::FORBIDDEN,
            challenge,
            &format!("Forbidden: this request needs the scopes: {scope}"),
        )
    }

    fn unavailable(&self) -> Response<Body> {
        let e = McpError::internal(
            "Service Unavailable: the access token cannot be verified right now; try again later",
        );
        let body = crate::jsonrpc::encode_error(None, &e.to_wire(true));
        let mut response = Response::new(Body::from(body));
        *response.status_mut() = StatusCode::SERVICE_UNAVAILABLE;
        let headers = response.headers_mut();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        headers.insert("retry-after", HeaderValue::from_static("5"));
        response
    }

    fn metadata_response(&self) -> Response<Body> {
        let body = serde_json::to_vec(&self.metadata).unwrap_or_default();
        let mut response = Response::new(Body::from(body));
        let headers = response.headers_mut();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        // Browser-based clients read it cross-origin; it holds nothing secret.
        headers.insert("access-control-allow-origin", HeaderValue::from_static("*"));
        headers.insert("cache-control", HeaderValue::from_static("max-age=3600"));
        response
    }

    fn is_metadata_path(&self, path: &str) -> bool {
        path == PROTECTED_RESOURCE_PATH || path == self.suffixed_path
    }

    /// Admits a request (its principal put in its extensions) or answers it.
    async fn admit<B>(self: &Arc<Self>, request: &mut Request<B>) -> Result<(), Response<Body>> {
        let Some(token) = bearer_token(request) else {
            return Err(self.unauthorized(false));
        };
        let principal = match self.verifier.verify(token).await {
            Ok(principal) => principal,
            Err(VerifyError::Invalid(reason)) => {
                tracing::debug!(%reason, "refused an access token");
                return Err(self.unauthorized(true));
            }
            Err(VerifyError::Unavailable(reason)) => {
                tracing::warn!(%reason, "could not verify an access token");
                return Err(self.unavailable());
            }
        };
        let for_us = principal
            .audiences()
            .iter()
            .any(|aud| self.audiences.iter().any(|ours| ours == trim_slash(aud)));
        if !for_us {
            tracing::debug!(
                audience = ?principal.audiences(),
                "refused an access token issued for another resource"
            );
            return Err(self.unauthorized(true));
        }
        if !self.required.is_empty() && !self.required.iter().all(|s| principal.has_scope(s)) {
            return Err(self.insufficient_scope(&self.required.join(" ")));
        }
        request.extensions_mut().insert(principal);
        request.extensions_mut().insert(Protection(self.clone()));
        Ok(())
    }
}

/// The token of an `Authorization: Bearer <token>` header (scheme case-insensitive).
fn bearer_token<B>(request: &Request<B>) -> Option<&str> {
    let value = request.headers().get(AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.trim().split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

/// The tower layer of a [`ResourceServer`] (see [`ResourceServer::layer`]).
#[derive(Clone)]
pub struct AuthLayer {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for AuthLayer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuthLayer")
            .field("resource", &self.inner.resource)
            .finish_non_exhaustive()
    }
}

impl<S> tower_layer::Layer<S> for AuthLayer {
    type Service = RequireToken<S>;

    fn layer(&self, service: S) -> Self::Service {
        RequireToken {
            inner: self.inner.clone(),
            service,
        }
    }
}

/// A service behind an [`AuthLayer`]: only requests with an acceptable token reach it.
#[derive(Clone)]
pub struct RequireToken<S> {
    inner: Arc<Inner>,
    service: S,
}

impl<S> std::fmt::Debug for RequireToken<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RequireToken")
            .field("resource", &self.inner.resource)
            .finish_non_exhaustive()
    }
}

impl<S, B> tower_service::Service<Request<B>> for RequireToken<S>
where
    S: tower_service::Service<Request<B>, Response = Response<Body>> + Clone + Send + 'static,
    S::Future: Send + 'static,
    B: Send + 'static,
{
    type Response = Response<Body>;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Response<Body>, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.service.poll_ready(cx)
    }

    fn call(&mut self, mut request: Request<B>) -> Self::Future {
        // The clone that was polled ready serves this request; the fresh one waits its turn.
        let fresh = self.service.clone();
        let mut service = std::mem::replace(&mut self.service, fresh);
        let inner = self.inner.clone();
        Box::pin(async move {
            let path = request.uri().path();
            if inner.is_metadata_path(path) {
                if request.method() == Method::GET || request.method() == Method::HEAD {
                    return Ok(inner.metadata_response());
                }
                let mut response = Response::new(Body::empty());
                *response.status_mut() = StatusCode::METHOD_NOT_ALLOWED;
                return Ok(response);
            }
            let preflight = request.method() == Method::OPTIONS
                && request
                    .headers()
                    .contains_key("access-control-request-method");
            if preflight {
                // CORS preflights carry no credentials; any other OPTIONS needs a token.
                return service.call(request).await;
            }
            match inner.admit(&mut request).await {
                Ok(()) => service.call(request).await,
                Err(refusal) => Ok(refusal),
            }
        })
    }
}

//! The token endpoint: the `authorization_code` and `refresh_token` grants, and how the client
//! authenticates there (`client_secret_basic`, `client_secret_post` or `none`).

use std::time::{Duration, SystemTime};

use serde::Deserialize;
use serde_json::Value;

use super::discovery::AuthServer;
use super::store::{ClientCredentials, Tokens};
use crate::error::McpError;
use crate::fetch::{Fetch, Fetched};

/// How the client proves who it is at the token endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AuthMethod {
    /// `Authorization: Basic` with the id and secret.
    Basic,
    /// `client_id` and `client_secret` in the form.
    Post,
    /// `client_id` in the form, no secret (public clients).
    None,
}

impl AuthMethod {
    fn from_name(name: &str) -> Option<Self> {
        match name {
            "client_secret_basic" => Some(Self::Basic),
            "client_secret_post" => Some(Self::Post),
            "none" => Some(Self::None),
            _ => None,
        }
    }
}

/// What the server supports at its token endpoint; RFC 8414 §2: `client_secret_basic` when the
/// metadata says nothing.
fn supported_methods(server: &AuthServer) -> Vec<String> {
    server
        .metadata
        .as_ref()
        .and_then(|m| m.token_endpoint_auth_methods_supported.clone())
        .unwrap_or_else(|| vec!["client_secret_basic".to_owned()])
}

/// The method to ask for in Dynamic Client Registration: `none` (a public client using PKCE)
/// when the server accepts it, else `client_secret_basic`, else `client_secret_post`.
pub(crate) fn registration_method(server: &AuthServer) -> &'static str {
    let supported = supported_methods(server);
    ["none", "client_secret_basic", "client_secret_post"]
        .into_iter()
        .find(|m| supported.iter().any(|s| s == m))
        .unwrap_or("client_secret_basic")
}

/// The method for `client` at `server`: the one registered for the client when it is one of
/// the three; else, with a secret, `client_secret_basic` or `client_secret_post` (whichever the
/// server supports, basic first); else `none`. A method that needs a secret the client lacks
/// falls back to `none`.
pub(crate) fn auth_method(client: &ClientCredentials, server: &AuthServer) -> AuthMethod {
    let has_secret = client.client_secret.is_some();
    let registered = client
        .token_endpoint_auth_method
        .as_deref()
        .and_then(AuthMethod::from_name);
    match registered {
        Some(AuthMethod::None) => return AuthMethod::None,
        Some(method) if has_secret => return method,
        _ => {}
    }
    if !has_secret {
        return AuthMethod::None;
    }
    let supported = supported_methods(server);
    if supported.iter().any(|m| m == "client_secret_basic") {
        AuthMethod::Basic
    } else if supported.iter().any(|m| m == "client_secret_post") {
        AuthMethod::Post
    } else if supported.iter().any(|m| m == "none") {
        AuthMethod::None
    } else {
        AuthMethod::Basic
    }
}

/// `client_id:client_secret`, each form-encoded (RFC 6749 §2.3.1), in base64.
fn basic_header(client_id: &str, secret: &str) -> String {
    let mut pair = String::new();
    crate::fetch::percent_encode_into(client_id, &mut pair);
    pair.push(':');
    crate::fetch::percent_encode_into(secret, &mut pair);
    format!("Basic {}", crate::base64::encode(pair.as_bytes()))
}

/// Sends `form` to the token endpoint with the client's authentication.
async fn post(
    fetch: &Fetch,
    server: &AuthServer,
    client: &ClientCredentials,
    mut form: Vec<(&str, &str)>,
) -> Result<Fetched, McpError> {
    let method = auth_method(client, server);
    let mut authorization = None;
    match (method, client.client_secret.as_deref()) {
        (AuthMethod::Basic, Some(secret)) => {
            authorization = Some(basic_header(&client.client_id, secret));
        }
        (AuthMethod::Post, Some(secret)) => {
            form.push(("client_id", &client.client_id));
            form.push(("client_secret", secret));
        }
        _ => form.push(("client_id", &client.client_id)),
    }
    fetch
        .post_form(&server.token_endpoint, &form, authorization.as_deref())
        .await
}

/// A token response (RFC 6749 §5.1).
#[derive(Deserialize)]
struct TokenResponse {
    access_token: String,
    #[serde(default)]
    token_type: Option<String>,
    #[serde(default)]
    expires_in: Option<Value>,
    #[serde(default)]
    refresh_token: Option<String>,
    #[serde(default)]
    scope: Option<String>,
}

/// An error response of the token or registration endpoint (RFC 6749 §5.2).
#[derive(Deserialize)]
pub(crate) struct OAuthErrorBody {
    #[serde(default)]
    pub(crate) error: Option<String>,
    #[serde(default)]
    pub(crate) error_description: Option<String>,
}

/// The error for a refused request: the status, `error` and `error_description` (never the
/// body itself, which could echo a credential).
pub(crate) fn refusal(what: &str, fetched: &Fetched) -> McpError {
    let body: Option<OAuthErrorBody> = serde_json::from_slice(&fetched.body).ok();
    let mut message = format!("{what} answered {}", fetched.status);
    if let Some(error) = body.as_ref().and_then(|b| b.error.as_deref()) {
        message.push_str(&format!(": {error}"));
    }
    if let Some(description) = body.as_ref().and_then(|b| b.error_description.as_deref()) {
        message.push_str(&format!(" ({description})"));
    }
    McpError::internal(message)
}

/// Reads a token response; `requested_scope` is what was asked for, `previous_refresh` the
/// refresh token to keep when a refresh response carries none (RFC 6749 §6).
fn read_tokens(
    fetched: &Fetched,
    server: &AuthServer,
    requested_scope: Option<String>,
    previous_refresh: Option<&str>,
) -> Result<Tokens, McpError> {
    let what = format!("the token endpoint {}", server.token_endpoint);
    if !fetched.status.is_success() {
        return Err(refusal(&what, fetched));
    }
    let response: TokenResponse = serde_json::from_slice(&fetched.body)
        .map_err(|_| McpError::internal(format!("{what} sent no usable token response")))?;
    if let Some(kind) = response.token_type.as_deref() {
        if !kind.eq_ignore_ascii_case("bearer") {
            return Err(McpError::internal(format!(
                "{what} issued a `{kind}` token; only Bearer tokens are supported"
            )));
        }
    }
    if response.access_token.is_empty() {
        return Err(McpError::internal(format!("{what} issued an empty token")));
    }
    let expires_in = match &response.expires_in {
        Some(Value::Number(n)) => n.as_u64(),
        Some(Value::String(s)) => s.parse().ok(),
        _ => None,
    };
    Ok(Tokens {
        access_token: response.access_token,
        refresh_token: response
            .refresh_token
            .or_else(|| previous_refresh.map(str::to_owned)),
        // A lifetime too long to represent means "does not expire".
        expires_at: expires_in.and_then(|s| SystemTime::now().checked_add(Duration::from_secs(s))),
        requested_scope,
        granted_scope: response.scope,
    })
}

/// What the `authorization_code` grant needs besides the server and the client.
pub(crate) struct CodeGrant<'a> {
    pub(crate) code: &'a str,
    pub(crate) redirect_uri: &'a str,
    pub(crate) code_verifier: &'a str,
    pub(crate) resource: &'a str,
    pub(crate) requested_scope: Option<String>,
}

/// Exchanges an authorization code (with its PKCE verifier and the `resource`) for tokens.
pub(crate) async fn exchange_code(
    fetch: &Fetch,
    server: &AuthServer,
    client: &ClientCredentials,
    grant: CodeGrant<'_>,
) -> Result<Tokens, McpError> {
    let form = vec![
        ("grant_type", "authorization_code"),
        ("code", grant.code),
        ("redirect_uri", grant.redirect_uri),
        ("code_verifier", grant.code_verifier),
        ("resource", grant.resource),
    ];
    let fetched = post(fetch, server, client, form).await?;
    read_tokens(&fetched, server, grant.requested_scope, None)
}

/// New tokens for the refresh token of `tokens` (same `resource`).
pub(crate) async fn refresh(
    fetch: &Fetch,
    server: &AuthServer,
    client: &ClientCredentials,
    tokens: &Tokens,
    resource: &str,
) -> Result<Tokens, McpError> {
    let refresh_token = tokens
        .refresh_token
        .as_deref()
        .ok_or_else(|| McpError::internal("no refresh token"))?;
    let form = vec![
        ("grant_type", "refresh_token"),
        ("refresh_token", refresh_token),
        ("resource", resource),
    ];
    let fetched = post(fetch, server, client, form).await?;
    read_tokens(
        &fetched,
        server,
        tokens.requested_scope.clone(),
        Some(refresh_token),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::AuthorizationServerMetadata;

    fn server(methods: Option<&[&str]>) -> AuthServer {
        AuthServer {
            issuer: "http://a".into(),
            metadata: Some(AuthorizationServerMetadata {
                issuer: "http://a".into(),
                token_endpoint: "http://a/token".into(),
                token_endpoint_auth_methods_supported: methods
                    .map(|m| m.iter().map(|s| (*s).to_owned()).collect()),
                ..Default::default()
            }),
            authorization_endpoint: "http://a/authorize".into(),
            token_endpoint: "http://a/token".into(),
            registration_endpoint: None,
        }
    }

    #[test]
    fn methods() {
        let confidential = ClientCredentials::confidential("id", "secret");
        let public = ClientCredentials::public("id");
        assert_eq!(
            auth_method(&confidential, &server(Some(&["client_secret_basic"]))),
            AuthMethod::Basic
        );
        assert_eq!(
            auth_method(&confidential, &server(Some(&["client_secret_post"]))),
            AuthMethod::Post
        );
        assert_eq!(auth_method(&confidential, &server(None)), AuthMethod::Basic);
        assert_eq!(
            auth_method(&public, &server(Some(&["client_secret_basic"]))),
            AuthMethod::None
        );
        let registered = confidential.clone().auth_method("client_secret_post");
        assert_eq!(
            auth_method(&registered, &server(Some(&["client_secret_basic"]))),
            AuthMethod::Post
        );
        let none = confidential.auth_method("none");
        assert_eq!(auth_method(&none, &server(None)), AuthMethod::None);

        assert_eq!(registration_method(&server(Some(&["none"]))), "none");
        assert_eq!(
            registration_method(&server(Some(&["client_secret_post"]))),
            "client_secret_post"
        );
        assert_eq!(registration_method(&server(None)), "client_secret_basic");
        assert_eq!(
            registration_method(&server(Some(&[
                "client_secret_post",
                "client_secret_basic",
                "none"
            ]))),
            "none"
        );
    }

    #[test]
    fn basic_header_encodes_the_pair() {
        assert_eq!(
            basic_header("pre-registered-client", "pre-registered-secret"),
            format!(
                "Basic {}",
                crate::base64::encode(b"pre-registered-client:pre-registered-secret")
            )
        );
        assert_eq!(
            basic_header("a:b", "c d"),
            format!("Basic {}", crate::base64::encode(b"a%3Ab:c%20d"))
        );
    }
}

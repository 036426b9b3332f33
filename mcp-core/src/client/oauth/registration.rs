//! Who the client is at an authorization server, in the order of the MCP specification:
//! pre-registered credentials, a registration kept from before, a Client ID Metadata Document
//! URL (when the server supports them), then Dynamic Client Registration (RFC 7591).

use serde::Deserialize;
use serde_json::json;

use super::discovery::AuthServer;
use super::store::{ClientCredentials, TokenStore};
use super::token;
use crate::error::McpError;
use crate::fetch::Fetch;

/// How the client introduces itself (the builder's settings).
#[derive(Debug, Clone)]
pub(crate) struct Identity {
    /// `client_name` in Dynamic Client Registration.
    pub(crate) client_name: String,
    /// `application_type` in Dynamic Client Registration (`native` or `web`).
    pub(crate) application_type: String,
    /// The Client ID Metadata Document URL used as `client_id` where supported.
    pub(crate) metadata_url: Option<String>,
    /// Pre-registered credentials: for one issuer (`Some`) or for any (`None`).
    pub(crate) preregistered: Vec<(Option<String>, ClientCredentials)>,
    /// The issuer that credentials given for any issuer *with a secret* were first used with:
    /// the secret never goes to another one (another MCP server could name an authorization
    /// server of its own to collect it).
    pub(crate) pinned: std::sync::Arc<std::sync::Mutex<Option<String>>>,
}

impl Identity {
    /// The pre-registered credentials for `issuer`: those given for it, else those for any
    /// (a secret among them only for the first issuer they were used with).
    fn preregistered(&self, issuer: &str) -> Option<&ClientCredentials> {
        let exact = self
            .preregistered
            .iter()
            .find(|(i, _)| i.as_deref() == Some(issuer));
        if let Some((_, credentials)) = exact {
            return Some(credentials);
        }
        let (_, any) = self.preregistered.iter().find(|(i, _)| i.is_none())?;
        if any.client_secret.is_none() {
            return Some(any);
        }
        let mut pinned = self.pinned.lock().unwrap_or_else(|p| p.into_inner());
        match pinned.as_deref() {
            None => {
                *pinned = Some(issuer.to_owned());
                Some(any)
            }
            Some(first) if first == issuer => Some(any),
            Some(first) => {
                tracing::warn!(
                    first,
                    issuer,
                    "pre-registered client secret not sent to a second authorization server \
                     (give it with OAuthBuilder::client_for(issuer, ..))"
                );
                None
            }
        }
    }
}

/// The client's credentials at `server`, registering when nothing else applies (and keeping
/// the registration in `store`).
pub(crate) async fn client_for(
    fetch: &Fetch,
    store: &dyn TokenStore,
    identity: &Identity,
    server: &AuthServer,
    redirect_uri: &str,
) -> Result<ClientCredentials, McpError> {
    if let Some(client) = identity.preregistered(&server.issuer) {
        return Ok(client.clone());
    }
    if let Some(client) = store.client(&server.issuer).await? {
        return Ok(client);
    }
    let cimd = server
        .metadata
        .as_ref()
        .and_then(|m| m.client_id_metadata_document_supported)
        .unwrap_or(false);
    if let (true, Some(url)) = (cimd, identity.metadata_url.as_deref()) {
        tracing::debug!(issuer = %server.issuer, client_id = %url, "client ID metadata document");
        return Ok(ClientCredentials::public(url).auth_method("none"));
    }
    let Some(endpoint) = server.registration_endpoint.as_deref() else {
        return Err(McpError::internal(format!(
            "no client credentials for the authorization server `{}`: it offers neither \
             Dynamic Client Registration nor Client ID Metadata Documents; pre-register the \
             client and give its credentials to the OAuth builder",
            server.issuer
        )));
    };
    let client = register(fetch, endpoint, identity, server, redirect_uri).await?;
    store
        .set_client(&server.issuer, Some(client.clone()))
        .await?;
    Ok(client)
}

/// What Dynamic Client Registration answers (RFC 7591 §3.2.1).
#[derive(Deserialize)]
struct Registered {
    client_id: String,
    #[serde(default)]
    client_secret: Option<String>,
    #[serde(default)]
    token_endpoint_auth_method: Option<String>,
}

/// The registration request's body.
pub(crate) fn registration_body(
    identity: &Identity,
    redirect_uri: &str,
    auth_method: &str,
) -> serde_json::Value {
    json!({
        "client_name": identity.client_name,
        "redirect_uris": [redirect_uri],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": auth_method,
        "application_type": identity.application_type,
    })
}

/// Dynamic Client Registration at `endpoint`.
async fn register(
    fetch: &Fetch,
    endpoint: &str,
    identity: &Identity,
    server: &AuthServer,
    redirect_uri: &str,
) -> Result<ClientCredentials, McpError> {
    let method = token::registration_method(server);
    let body = registration_body(identity, redirect_uri, method);
    tracing::debug!(%endpoint, method, "dynamic client registration");
    let fetched = fetch.post_json(endpoint, &body).await?;
    let what = format!("client registration at {endpoint}");
    if !fetched.status.is_success() {
        return Err(token::refusal(&what, &fetched));
    }
    let registered: Registered = serde_json::from_slice(&fetched.body)
        .map_err(|_| McpError::internal(format!("{what} sent no usable answer")))?;
    Ok(ClientCredentials {
        client_id: registered.client_id,
        client_secret: registered.client_secret,
        token_endpoint_auth_method: registered
            .token_endpoint_auth_method
            .or_else(|| Some(method.to_owned())),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn preregistered_for_the_issuer_first() {
        let identity = Identity {
            client_name: "n".into(),
            application_type: "native".into(),
            metadata_url: None,
            preregistered: vec![
                (None, ClientCredentials::public("any")),
                (Some("http://a".into()), ClientCredentials::public("for-a")),
            ],
            pinned: Default::default(),
        };
        assert_eq!(
            identity.preregistered("http://a").unwrap().client_id,
            "for-a"
        );
        assert_eq!(identity.preregistered("http://b").unwrap().client_id, "any");
        // A secret given for any issuer goes to the first one only.
        let secret = Identity {
            preregistered: vec![(None, ClientCredentials::confidential("c", "s"))],
            pinned: Default::default(),
            ..identity.clone()
        };
        assert!(secret.preregistered("http://first").is_some());
        assert!(secret.preregistered("http://first").is_some());
        assert!(secret.preregistered("http://attacker").is_none());
        let body = registration_body(&identity, "http://localhost:3000/callback", "none");
        assert_eq!(body["application_type"], "native");
        assert_eq!(body["grant_types"][1], "refresh_token");
        assert_eq!(body["redirect_uris"][0], "http://localhost:3000/callback");
    }
}

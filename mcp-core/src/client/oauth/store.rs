//! Where the OAuth client keeps what it obtained: client registrations (per authorization
//! server) and tokens (per authorization server and resource).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use crate::auth::AuthFuture;

/// The credentials of this client at one authorization server: pre-registered, or obtained
/// by Dynamic Client Registration.
///
/// `Debug` shows the client id and hides the secret.
#[derive(Clone, PartialEq, Eq)]
pub struct ClientCredentials {
    /// The client identifier.
    pub client_id: String,
    /// The client secret, for confidential clients.
    pub client_secret: Option<String>,
    /// How the client authenticates at the token endpoint (`client_secret_basic`,
    /// `client_secret_post`, `none`); `None`: chosen from what the authorization server
    /// supports (`client_secret_basic` first when there is a secret, else `none`).
    pub token_endpoint_auth_method: Option<String>,
}

impl ClientCredentials {
    /// A public client (no secret).
    pub fn public(client_id: impl Into<String>) -> Self {
        Self {
            client_id: client_id.into(),
            client_secret: None,
            token_endpoint_auth_method: None,
        }
    }

    /// A confidential client with its secret.
    pub fn confidential(client_id: impl Into<String>, client_secret: impl Into<String>) -> Self {
        Self {
            client_id: client_id.into(),
            client_secret: Some(client_secret.into()),
            token_endpoint_auth_method: None,
        }
    }

    /// Sets the token endpoint authentication method.
    pub fn auth_method(mut self, method: impl Into<String>) -> Self {
        self.token_endpoint_auth_method = Some(method.into());
        self
    }
}

impl std::fmt::Debug for ClientCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientCredentials")
            .field("client_id", &self.client_id)
            .field(
                "client_secret",
                &self.client_secret.as_ref().map(|_| "<redacted>"),
            )
            .field(
                "token_endpoint_auth_method",
                &self.token_endpoint_auth_method,
            )
            .finish()
    }
}

/// Tokens from one authorization server for one resource.
///
/// `Debug` hides both tokens.
#[derive(Clone, PartialEq, Eq)]
pub struct Tokens {
    /// The access token sent as `Authorization: Bearer ...`.
    pub access_token: String,
    /// The refresh token, when the authorization server issued one.
    pub refresh_token: Option<String>,
    /// When the access token expires (from `expires_in`); `None`: not said.
    pub expires_at: Option<SystemTime>,
    /// The scopes asked for, space-separated (`None`: no `scope` was sent).
    pub requested_scope: Option<String>,
    /// The scopes granted, when the token response said (`scope`).
    pub granted_scope: Option<String>,
}

impl Tokens {
    /// Whether the access token expires within `margin` from now.
    pub fn expires_within(&self, margin: Duration) -> bool {
        match self.expires_at {
            Some(at) => at <= SystemTime::now() + margin,
            None => false,
        }
    }
}

impl std::fmt::Debug for Tokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tokens")
            .field("access_token", &"<redacted>")
            .field(
                "refresh_token",
                &self.refresh_token.as_ref().map(|_| "<redacted>"),
            )
            .field("expires_at", &self.expires_at)
            .field("requested_scope", &self.requested_scope)
            .field("granted_scope", &self.granted_scope)
            .finish()
    }
}

/// Where [`OAuth`](super::OAuth) keeps client registrations (keyed by the authorization
/// server's issuer) and tokens (keyed by issuer and resource), so that credentials obtained from
/// one authorization server are never sent to another.
///
/// The default, [`MemoryStore`], forgets everything when the process ends; implement this trait
/// over a keychain or an encrypted file to keep logins across runs. Errors of a store fail the
/// request that needed it.
pub trait TokenStore: Send + Sync + 'static {
    /// The client registered at `issuer`, if any.
    fn client<'a>(&'a self, issuer: &'a str) -> AuthFuture<'a, Option<ClientCredentials>>;

    /// Keeps (`Some`) or forgets (`None`) the client registered at `issuer`.
    fn set_client<'a>(
        &'a self,
        issuer: &'a str,
        client: Option<ClientCredentials>,
    ) -> AuthFuture<'a, ()>;

    /// The tokens `issuer` issued for `resource`, if any.
    fn tokens<'a>(&'a self, issuer: &'a str, resource: &'a str) -> AuthFuture<'a, Option<Tokens>>;

    /// Keeps (`Some`) or forgets (`None`) the tokens `issuer` issued for `resource`.
    fn set_tokens<'a>(
        &'a self,
        issuer: &'a str,
        resource: &'a str,
        tokens: Option<Tokens>,
    ) -> AuthFuture<'a, ()>;
}

/// A [`TokenStore`] in memory (the default): nothing outlives the process.
#[derive(Default)]
pub struct MemoryStore {
    clients: Mutex<HashMap<String, ClientCredentials>>,
    tokens: Mutex<HashMap<(String, String), Tokens>>,
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }
}

impl std::fmt::Debug for MemoryStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let clients = self.clients.lock().map(|c| c.len()).unwrap_or(0);
        let tokens = self.tokens.lock().map(|t| t.len()).unwrap_or(0);
        f.debug_struct("MemoryStore")
            .field("clients", &clients)
            .field("tokens", &tokens)
            .finish()
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

impl TokenStore for MemoryStore {
    fn client<'a>(&'a self, issuer: &'a str) -> AuthFuture<'a, Option<ClientCredentials>> {
        let found = lock(&self.clients).get(issuer).cloned();
        Box::pin(async move { Ok(found) })
    }

    fn set_client<'a>(
        &'a self,
        issuer: &'a str,
        client: Option<ClientCredentials>,
    ) -> AuthFuture<'a, ()> {
        let mut clients = lock(&self.clients);
        match client {
            Some(client) => clients.insert(issuer.to_owned(), client),
            None => clients.remove(issuer),
        };
        Box::pin(async { Ok(()) })
    }

    fn tokens<'a>(&'a self, issuer: &'a str, resource: &'a str) -> AuthFuture<'a, Option<Tokens>> {
        let key = (issuer.to_owned(), resource.to_owned());
        let found = lock(&self.tokens).get(&key).cloned();
        Box::pin(async move { Ok(found) })
    }

    fn set_tokens<'a>(
        &'a self,
        issuer: &'a str,
        resource: &'a str,
        tokens: Option<Tokens>,
    ) -> AuthFuture<'a, ()> {
        let key = (issuer.to_owned(), resource.to_owned());
        let mut all = lock(&self.tokens);
        match tokens {
            Some(tokens) => all.insert(key, tokens),
            None => all.remove(&key),
        };
        Box::pin(async { Ok(()) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn keyed_by_issuer_and_resource() {
        let store = MemoryStore::new();
        let tokens = Tokens {
            access_token: "secret-access".into(),
            refresh_token: Some("secret-refresh".into()),
            expires_at: None,
            requested_scope: None,
            granted_scope: None,
        };
        store
            .set_tokens("http://as1", "http://r/mcp", Some(tokens.clone()))
            .await
            .unwrap();
        assert_eq!(
            store.tokens("http://as1", "http://r/mcp").await.unwrap(),
            Some(tokens.clone())
        );
        assert_eq!(
            store.tokens("http://as2", "http://r/mcp").await.unwrap(),
            None
        );
        assert_eq!(
            store.tokens("http://as1", "http://r/other").await.unwrap(),
            None
        );
        store
            .set_tokens("http://as1", "http://r/mcp", None)
            .await
            .unwrap();
        assert_eq!(
            store.tokens("http://as1", "http://r/mcp").await.unwrap(),
            None
        );

        let debug = format!(
            "{tokens:?} {:?}",
            ClientCredentials::confidential("id", "hush")
        );
        assert!(
            !debug.contains("secret-") && !debug.contains("hush"),
            "{debug}"
        );
    }
}

//! [`Principal`]: who an authenticated request comes from.

use std::time::SystemTime;

use serde_json::{Map, Value};

/// Who a request comes from, as the token verifier established it: the subject, the OAuth
/// client, the granted scopes, when the grant expires, and every verified claim.
///
/// A [`TokenVerifier`](super::TokenVerifier) builds one; handlers and middleware read it with
/// `ctx.principal()`.
///
/// ```
/// use modelctx_core::auth::Principal;
///
/// let who = Principal::new("alice")
///     .issuer("https://auth.example.com")
///     .scopes(["books:read", "books:write"]);
/// assert!(who.has_scope("books:write"));
/// assert_eq!(who.subject(), Some("alice"));
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Principal {
    subject: Option<String>,
    issuer: Option<String>,
    client_id: Option<String>,
    scopes: Vec<String>,
    audience: Vec<String>,
    expires_at: Option<SystemTime>,
    claims: Map<String, Value>,
}

impl Principal {
    /// A principal for `subject` (the token's `sub`), with no scopes yet.
    pub fn new(subject: impl Into<String>) -> Self {
        Self {
            subject: Some(subject.into()),
            ..Self::default()
        }
    }

    /// A principal without a subject (a client acting for itself, identified by its client id).
    pub fn anonymous() -> Self {
        Self::default()
    }

    /// Sets the issuer (`iss`).
    pub fn issuer(mut self, issuer: impl Into<String>) -> Self {
        self.issuer = Some(issuer.into());
        self
    }

    /// Sets the OAuth client the token was issued to (`client_id`, `azp`).
    pub fn client_id(mut self, client_id: impl Into<String>) -> Self {
        self.client_id = Some(client_id.into());
        self
    }

    /// Sets the granted scopes.
    pub fn scopes<I, T>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = T>,
        T: Into<String>,
    {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// Sets the audiences the token was issued for (`aud`).
    pub fn audience<I, T>(mut self, audience: I) -> Self
    where
        I: IntoIterator<Item = T>,
        T: Into<String>,
    {
        self.audience = audience.into_iter().map(Into::into).collect();
        self
    }

    /// Sets when the grant ends (`exp`).
    pub fn expires_at(mut self, at: SystemTime) -> Self {
        self.expires_at = Some(at);
        self
    }

    /// Sets the verified claims (the JWT payload, or the introspection answer).
    pub fn claims(mut self, claims: Map<String, Value>) -> Self {
        self.claims = claims;
        self
    }

    /// The subject (`sub`), when the token names one.
    pub fn subject(&self) -> Option<&str> {
        self.subject.as_deref()
    }

    /// The issuer (`iss`).
    pub fn issuer_name(&self) -> Option<&str> {
        self.issuer.as_deref()
    }

    /// The OAuth client the token was issued to.
    pub fn client(&self) -> Option<&str> {
        self.client_id.as_deref()
    }

    /// The granted scopes.
    pub fn granted_scopes(&self) -> &[String] {
        &self.scopes
    }

    /// The audiences the token was issued for.
    pub fn audiences(&self) -> &[String] {
        &self.audience
    }

    /// When the grant ends, if the token says.
    pub fn expiry(&self) -> Option<SystemTime> {
        self.expires_at
    }

    /// Every verified claim.
    pub fn verified_claims(&self) -> &Map<String, Value> {
        &self.claims
    }

    /// One verified claim.
    pub fn claim(&self, name: &str) -> Option<&Value> {
        self.claims.get(name)
    }

    /// True when `scope` was granted.
    pub fn has_scope(&self, scope: &str) -> bool {
        self.scopes.iter().any(|s| s == scope)
    }

    /// The scopes of `required` that were not granted (empty: all were).
    pub fn missing_scopes<'a>(&self, required: &'a [String]) -> Vec<&'a str> {
        required
            .iter()
            .filter(|s| !self.has_scope(s))
            .map(String::as_str)
            .collect()
    }

    /// A stable name for "the same caller": issuer, subject and client. Two requests with the
    /// same identity may share a session; any difference means another caller.
    pub fn identity(&self) -> String {
        format!(
            "{}\u{1f}{}\u{1f}{}",
            self.issuer.as_deref().unwrap_or(""),
            self.subject.as_deref().unwrap_or(""),
            self.client_id.as_deref().unwrap_or("")
        )
    }
}

//! [`Introspection`]: bearer tokens checked by asking the authorization server (OAuth 2.0 Token
//! Introspection, RFC 7662), with the answers cached briefly.

use std::fmt;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant, SystemTime};

use serde_json::{Map, Value};

use super::answer_cache::{AnswerCache, Entry, MAX_ENTRIES};
use super::claims::{self, quoted};
use super::{AuthorizationServerMetadata, Principal, TokenVerifier, VerifyError, VerifyFuture};
use crate::error::McpError;
use crate::fetch::{percent_encode_into, Fetch};

/// How the verifier authenticates to the introspection endpoint.
#[derive(Clone, PartialEq, Eq)]
enum Credentials {
    None,
    /// `client_id` (for the log) and the whole `Authorization: Basic ...` value.
    Client {
        id: String,
        header: String,
    },
    /// The whole `Authorization: Bearer ...` value.
    Bearer(String),
}

impl Credentials {
    fn header(&self) -> Option<&str> {
        match self {
            Self::None => None,
            Self::Client { header, .. } | Self::Bearer(header) => Some(header),
        }
    }
}

impl fmt::Debug for Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::None => f.write_str("None"),
            Self::Client { id, .. } => write!(f, "ClientCredentials({id:?}, <secret>)"),
            Self::Bearer(_) => f.write_str("Bearer(<token>)"),
        }
    }
}

/// A [`TokenVerifier`] that asks the authorization server about each token (RFC 7662): for
/// opaque tokens, or to see revocations at once.
///
/// The verifier POSTs `token=...&token_type_hint=access_token` to the endpoint, authenticated
/// with [`client_credentials`](Self::client_credentials) (HTTP Basic) or a
/// [`bearer`](Self::bearer) token when the endpoint wants either. A token is accepted when
/// the answer says `"active": true` and:
/// - `exp`, when present, is not past;
/// - `aud` (a string or an array) names one of the accepted audiences. **An answer without
///   `aud` is refused by default**: a token the server issued for another resource would
///   otherwise pass. Call [`audience_optional`](Self::audience_optional) for servers that
///   never say;
/// - `iss`, when an [`issuer`](Self::issuer) is configured and the answer names one, is that
///   issuer.
///
/// The [`Principal`] gets `sub`, `client_id`, the scopes (`scope`), `aud`, `iss`, `exp` and
/// every member of the answer as claims.
///
/// Answers are cached for 30 s, positive and negative alike, keyed by a SHA-256 of the token
/// (the token is not kept), never beyond the token's `exp`, at most 10,000 of them. An
/// endpoint that cannot be reached, answers with an error status or with something that is not
/// an introspection answer makes the verification [`VerifyError::Unavailable`] (not cached).
///
/// An `https://` endpoint needs this crate's `https` feature.
///
/// ```no_run
/// use std::time::Duration;
/// use modelctx_core::auth::{Introspection, TokenVerifier};
///
/// # async fn demo(token: &str) -> Result<(), modelctx_core::McpError> {
/// let verifier = Introspection::new(
///     "https://auth.example.com/oauth2/introspect",
///     "https://mcp.example.com/mcp",
/// )?
/// .client_credentials("mcp-server", "s3cr3t")
/// .issuer("https://auth.example.com")
/// .cache_for(Duration::from_secs(10));
///
/// if let Ok(who) = verifier.verify(token).await {
///     println!("{:?} may read: {}", who.subject(), who.has_scope("books:read"));
/// }
/// # Ok(())
/// # }
/// ```
pub struct Introspection {
    endpoint: String,
    audiences: Vec<String>,
    audience_optional: bool,
    issuer: Option<String>,
    credentials: Credentials,
    cache_for: Duration,
    timeout: Duration,
    max_entries: usize,
    /// TLS settings for an `https://` endpoint (`None`: Mozilla's roots).
    tls: crate::fetch::Tls,
    fetch: OnceLock<Result<Fetch, String>>,
    cache: Mutex<AnswerCache>,
}

impl fmt::Debug for Introspection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Introspection")
            .field("endpoint", &self.endpoint)
            .field("audiences", &self.audiences)
            .field("audience_optional", &self.audience_optional)
            .field("issuer", &self.issuer)
            .field("credentials", &self.credentials)
            .field("cache_for", &self.cache_for)
            .field("timeout", &self.timeout)
            .field("cached_answers", &self.lock().entries.len())
            .finish()
    }
}

impl Introspection {
    /// A verifier asking `endpoint_url` about tokens, accepting those for `audience` (this
    /// resource server's identifier, usually its canonical URL).
    ///
    /// Errors when `endpoint_url` is not an `http://` or (with the `https` feature) `https://`
    /// URL, or `audience` is empty.
    pub fn new(endpoint_url: &str, audience: impl Into<String>) -> Result<Self, McpError> {
        crate::fetch::parse_url(endpoint_url)?;
        let audience = audience.into();
        if audience.is_empty() {
            return Err(McpError::invalid_params(
                "the introspection audience is empty",
            ));
        }
        Ok(Self {
            endpoint: endpoint_url.to_owned(),
            audiences: vec![audience],
            audience_optional: false,
            issuer: None,
            credentials: Credentials::None,
            cache_for: Duration::from_secs(30),
            timeout: Duration::from_secs(5),
            max_entries: MAX_ENTRIES,
            tls: None,
            fetch: OnceLock::new(),
            cache: Mutex::new(AnswerCache::default()),
        })
    }

    /// A verifier for the `introspection_endpoint` of authorization server metadata (RFC
    /// 8414), expecting its `issuer` in answers that name one. Errors when the metadata has no
    /// introspection endpoint.
    pub fn from_metadata(
        metadata: &AuthorizationServerMetadata,
        audience: impl Into<String>,
    ) -> Result<Self, McpError> {
        let endpoint = metadata.introspection_endpoint.as_deref().ok_or_else(|| {
            McpError::invalid_params(format!(
                "the metadata of {} has no `introspection_endpoint`",
                metadata.issuer
            ))
        })?;
        Ok(Self::new(endpoint, audience)?.issuer(metadata.issuer.clone()))
    }

    /// Authenticates to the endpoint as an OAuth client with HTTP Basic: `id` and `secret`
    /// form-urlencoded, then joined by `:` and base64-encoded (RFC 6749 §2.3.1).
    pub fn client_credentials(mut self, id: impl Into<String>, secret: impl AsRef<str>) -> Self {
        let id = id.into();
        let mut pair = String::new();
        percent_encode_into(&id, &mut pair);
        pair.push(':');
        percent_encode_into(secret.as_ref(), &mut pair);
        let header = format!("Basic {}", crate::base64::encode(pair.as_bytes()));
        self.credentials = Credentials::Client { id, header };
        self
    }

    /// Authenticates to the endpoint with `Authorization: Bearer <token>` instead (for
    /// endpoints protected by a token of their own).
    pub fn bearer(mut self, token: impl AsRef<str>) -> Self {
        self.credentials = Credentials::Bearer(format!("Bearer {}", token.as_ref()));
        self
    }

    /// Accepts tokens for `audience` too. Behind a [`ResourceServer`](super::ResourceServer),
    /// give it [`accept_audience`](super::ResourceServer::accept_audience) as well: it checks
    /// the audience again.
    pub fn audience(mut self, audience: impl Into<String>) -> Self {
        self.audiences.push(audience.into());
        self
    }

    /// Accepts answers that carry no `aud` at all (some servers never send one): the principal
    /// then carries this verifier's audiences, so a [`ResourceServer`](super::ResourceServer)
    /// in front accepts it. An `aud` that is present must still name an accepted audience. Off
    /// by default.
    pub fn audience_optional(mut self) -> Self {
        self.audience_optional = true;
        self
    }

    /// Refuses answers whose `iss` is not `issuer` (answers without `iss` still pass: the
    /// endpoint speaks for its server).
    pub fn issuer(mut self, issuer: impl Into<String>) -> Self {
        self.issuer = Some(issuer.into());
        self
    }

    /// How long an answer is remembered (default 30 s; never beyond the token's `exp`). A
    /// revoked token keeps passing for up to this long; `Duration::ZERO` asks every time.
    pub fn cache_for(mut self, lifetime: Duration) -> Self {
        self.cache_for = lifetime;
        self
    }

    /// How long a call to the endpoint may take, connection included (default 5 s).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self.fetch = OnceLock::new();
        self
    }

    /// The TLS settings for an `https://` endpoint (a private CA, a client certificate)
    /// instead of the default: Mozilla's root certificates.
    #[cfg(feature = "https")]
    pub fn tls_config(mut self, config: std::sync::Arc<rustls::ClientConfig>) -> Self {
        self.tls = Some(config);
        self.fetch = OnceLock::new();
        self
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, AnswerCache> {
        self.cache.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Checks `token` (see the type's documentation).
    async fn check(&self, token: &str) -> Result<Principal, VerifyError> {
        if token.is_empty() {
            return Err(VerifyError::invalid("the token is empty"));
        }
        if token.len() > claims::MAX_TOKEN {
            return Err(VerifyError::invalid("the token is longer than 64 KiB"));
        }
        let key = super::answer_cache::key(token);
        if let Some(answer) = self.lock().get(&key, Instant::now()) {
            return answer;
        }
        let outcome = self.introspect(token).await;
        self.remember(key, &outcome);
        outcome
    }

    /// Caches a positive or negative answer (not an unavailable endpoint).
    fn remember(&self, key: [u8; 32], outcome: &Result<Principal, VerifyError>) {
        if self.cache_for.is_zero() {
            return;
        }
        let mut lifetime = self.cache_for;
        let kept = match outcome {
            Ok(principal) => {
                if let Some(exp) = principal.expiry() {
                    let left = exp.duration_since(SystemTime::now()).unwrap_or_default();
                    lifetime = lifetime.min(left);
                }
                Ok(principal.clone())
            }
            Err(VerifyError::Invalid(why)) => Err(why.clone()),
            Err(VerifyError::Unavailable(_)) => return,
        };
        if lifetime.is_zero() {
            return;
        }
        let now = Instant::now();
        let entry = Entry {
            outcome: kept,
            until: now + lifetime,
        };
        self.lock().insert(key, entry, now, self.max_entries);
    }

    /// Asks the endpoint and reads the answer.
    async fn introspect(&self, token: &str) -> Result<Principal, VerifyError> {
        let fetch = self
            .fetch
            .get_or_init(|| {
                Fetch::new(self.timeout, &self.tls).map_err(|e| e.message().into_owned())
            })
            .as_ref()
            .map_err(|why| VerifyError::unavailable(why.clone()))?;
        let form = [("token", token), ("token_type_hint", "access_token")];
        let answer = fetch
            .post_form(&self.endpoint, &form, self.credentials.header())
            .await
            .map_err(|e| VerifyError::unavailable(e.message().into_owned()))?;
        if !answer.status.is_success() {
            return Err(VerifyError::unavailable(format!(
                "the introspection endpoint {} answered {}",
                self.endpoint, answer.status
            )));
        }
        let answer: Map<String, Value> = answer
            .json("the introspection answer", &self.endpoint)
            .map_err(|e| VerifyError::unavailable(e.message().into_owned()))?;
        self.read_answer(answer, claims::now_secs())
    }

    /// Checks an introspection answer at `now` (seconds since the epoch).
    fn read_answer(&self, answer: Map<String, Value>, now: f64) -> Result<Principal, VerifyError> {
        match answer.get("active") {
            Some(Value::Bool(true)) => {}
            Some(Value::Bool(false)) => {
                return Err(VerifyError::invalid(
                    "the authorization server says the token is not active",
                ))
            }
            _ => {
                return Err(VerifyError::unavailable(format!(
                    "the answer of {} has no boolean `active`",
                    self.endpoint
                )))
            }
        }
        let exp = claims::numeric_date(&answer, "exp")?;
        if let Some(exp) = exp {
            if now >= exp {
                return Err(VerifyError::invalid(format!(
                    "the token expired {:.0} s ago",
                    now - exp
                )));
            }
        }
        if let (Some(expected), Some(iss)) = (&self.issuer, claims::string(&answer, "iss")?) {
            if &iss != expected {
                return Err(VerifyError::invalid(format!(
                    "the token's issuer {} is not {}",
                    quoted(&iss),
                    quoted(expected)
                )));
            }
        }
        let audiences = claims::string_or_list(&answer, "aud")?;
        claims::check_audience(
            audiences.as_deref(),
            &self.audiences,
            self.audience_optional,
        )?;
        // An answer without `aud` (accepted with `audience_optional`) vouches for the
        // audiences this verifier serves: the resource server in front sees those.
        let audiences = audiences.or_else(|| Some(self.audiences.clone()));
        claims::principal(answer, audiences, exp)
    }
}

impl TokenVerifier for Introspection {
    fn verify<'a>(&'a self, token: &'a str) -> VerifyFuture<'a> {
        Box::pin(self.check(token))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::auth::test_server::TestServer;

    const AUDIENCE: &str = "https://mcp.example.com/mcp";

    fn now() -> i64 {
        claims::now_secs() as i64
    }

    fn active(extra: Value) -> String {
        let mut answer = json!({
            "active": true, "sub": "alice", "client_id": "app", "scope": "read write",
            "aud": AUDIENCE, "iss": "https://auth.example.com", "exp": now() + 300,
        });
        if let (Some(answer), Some(extra)) = (answer.as_object_mut(), extra.as_object()) {
            for (k, v) in extra {
                if v.is_null() {
                    answer.remove(k);
                } else {
                    answer.insert(k.clone(), v.clone());
                }
            }
        }
        answer.to_string()
    }

    fn refused(result: Result<Principal, VerifyError>, reason: &str) {
        match result {
            Err(VerifyError::Invalid(why)) => {
                assert!(
                    why.contains(reason),
                    "refused for {why:?}, expected {reason:?}"
                )
            }
            other => panic!("expected Invalid({reason:?}), got {other:?}"),
        }
    }

    fn unavailable(result: Result<Principal, VerifyError>) {
        assert!(
            matches!(result, Err(VerifyError::Unavailable(_))),
            "{result:?}"
        );
    }

    #[tokio::test]
    async fn an_active_token_makes_a_principal() {
        let server = TestServer::start(200, &active(json!({"aud": ["x", AUDIENCE]}))).await;
        let v = Introspection::new(&server.url, AUDIENCE)
            .unwrap()
            .client_credentials("my client", "p@ss:w rd");
        let who = v.verify("tok-123").await.unwrap();
        assert_eq!(who.subject(), Some("alice"));
        assert_eq!(who.client(), Some("app"));
        assert_eq!(who.issuer_name(), Some("https://auth.example.com"));
        assert_eq!(who.granted_scopes(), ["read", "write"]);
        assert_eq!(who.audiences(), ["x", AUDIENCE]);
        assert!(who.expiry().is_some());
        assert_eq!(who.claim("active"), Some(&json!(true)));

        let request = server.last_request();
        assert!(request.starts_with("POST / HTTP/1.1"), "{request}");
        assert!(
            request.ends_with("\r\n\r\ntoken=tok-123&token_type_hint=access_token"),
            "{request}"
        );
        let basic = crate::base64::encode(b"my%20client:p%40ss%3Aw%20rd");
        assert!(
            request.contains(&format!("authorization: Basic {basic}\r\n")),
            "{request}"
        );
        let debug = format!("{v:?}");
        assert!(
            debug.contains("\"my client\"") && !debug.contains(&basic),
            "{debug}"
        );
    }

    #[tokio::test]
    async fn a_bearer_protected_endpoint() {
        let server = TestServer::start(200, &active(json!({}))).await;
        let v = Introspection::new(&server.url, AUDIENCE)
            .unwrap()
            .bearer("endpoint-secret");
        v.verify("tok").await.unwrap();
        assert!(server
            .last_request()
            .contains("authorization: Bearer endpoint-secret\r\n"));
        assert!(!format!("{v:?}").contains("endpoint-secret"));
    }

    #[tokio::test]
    async fn answers_are_cached_both_ways() {
        let server = TestServer::start(200, &active(json!({}))).await;
        let v = Introspection::new(&server.url, AUDIENCE).unwrap();
        v.verify("good").await.unwrap();
        v.verify("good").await.unwrap();
        assert_eq!(server.hits(), 1);
        server.set(200, r#"{"active": false}"#);
        refused(v.verify("revoked").await, "not active");
        refused(v.verify("revoked").await, "not active");
        assert_eq!(server.hits(), 2);
        // Still the cached positive answer (revocation shows after `cache_for`).
        v.verify("good").await.unwrap();
        assert_eq!(server.hits(), 2);

        let uncached = Introspection::new(&server.url, AUDIENCE)
            .unwrap()
            .cache_for(Duration::ZERO);
        refused(uncached.verify("revoked").await, "not active");
        refused(uncached.verify("revoked").await, "not active");
        assert_eq!(server.hits(), 4);
    }

    #[tokio::test]
    async fn a_positive_answer_is_not_kept_beyond_exp() {
        let server = TestServer::start(200, &active(json!({"exp": now() + 2}))).await;
        let v = Introspection::new(&server.url, AUDIENCE)
            .unwrap()
            .cache_for(Duration::from_secs(600));
        v.verify("short-lived").await.unwrap();
        let cache = v.lock();
        let entry = cache.entries.values().next().unwrap();
        assert!(entry.until <= Instant::now() + Duration::from_secs(3));
        // The key is a digest, not the token.
        let key = super::super::answer_cache::key("short-lived");
        assert!(cache.entries.contains_key(&key));
    }

    #[tokio::test]
    async fn claims_of_the_answer_are_checked() {
        let server = TestServer::start(200, "{}").await;
        let v = Introspection::new(&server.url, AUDIENCE)
            .unwrap()
            .issuer("https://auth.example.com")
            .cache_for(Duration::ZERO);
        let answer = |extra: Value| {
            server.set(200, &active(extra));
            v.verify("tok")
        };
        refused(answer(json!({"exp": now() - 5})).await, "expired");
        refused(
            answer(json!({"aud": "https://other"})).await,
            "not for this resource",
        );
        refused(answer(json!({"aud": null})).await, "no audience");
        refused(answer(json!({"iss": "https://evil"})).await, "issuer");
        answer(json!({"iss": null, "exp": null})).await.unwrap();
        refused(answer(json!({"scope": 7})).await, "`scope`");

        let lenient = Introspection::new(&server.url, AUDIENCE)
            .unwrap()
            .audience_optional()
            .audience("https://other")
            .cache_for(Duration::ZERO);
        server.set(200, &active(json!({"aud": null})));
        lenient.verify("tok").await.unwrap();
        server.set(200, &active(json!({"aud": "https://other"})));
        lenient.verify("tok").await.unwrap();
        server.set(200, &active(json!({"aud": "https://third"})));
        refused(lenient.verify("tok").await, "not for this resource");
    }

    #[tokio::test]
    async fn a_failing_endpoint_is_unavailable_and_not_cached() {
        let server = TestServer::start(500, "boom").await;
        let v = Introspection::new(&server.url, AUDIENCE).unwrap();
        unavailable(v.verify("tok").await);
        unavailable(v.verify("tok").await);
        assert_eq!(server.hits(), 2);
        server.set(401, r#"{"error": "invalid_client"}"#);
        unavailable(v.verify("tok").await);
        server.set(200, "not json");
        unavailable(v.verify("tok").await);
        server.set(200, r#"{"sub": "alice"}"#);
        unavailable(v.verify("tok").await);
        server.set(200, r#"{"active": "true"}"#);
        unavailable(v.verify("tok").await);
        let closed = Introspection::new("http://127.0.0.1:1/introspect", AUDIENCE).unwrap();
        match closed.verify("secret-token-text").await {
            Err(VerifyError::Unavailable(why)) => assert!(!why.contains("secret-token-text")),
            other => panic!("{other:?}"),
        }
        server.set(200, &active(json!({})));
        server.delay(Duration::from_secs(2));
        let slow = Introspection::new(&server.url, AUDIENCE)
            .unwrap()
            .timeout(Duration::from_millis(200));
        unavailable(slow.verify("tok").await);
    }

    #[tokio::test]
    async fn bad_configuration_and_tokens_are_refused_early() {
        assert!(Introspection::new("not a url", AUDIENCE).is_err());
        assert!(Introspection::new("http://127.0.0.1:1/", "").is_err());
        let v = Introspection::new("http://127.0.0.1:1/", AUDIENCE).unwrap();
        refused(v.verify("").await, "empty");
        refused(v.verify(&"a".repeat(70_000)).await, "64 KiB");
        let metadata = AuthorizationServerMetadata {
            issuer: "https://auth.example.com".into(),
            introspection_endpoint: Some("http://127.0.0.1:1/introspect".into()),
            ..Default::default()
        };
        let from = Introspection::from_metadata(&metadata, AUDIENCE).unwrap();
        assert_eq!(from.issuer.as_deref(), Some("https://auth.example.com"));
        let none = AuthorizationServerMetadata::default();
        assert!(Introspection::from_metadata(&none, AUDIENCE).is_err());
    }

    #[test]
    fn the_cache_stays_bounded() {
        let mut cache = AnswerCache::default();
        let now = Instant::now();
        for i in 0..25u8 {
            let entry = Entry {
                outcome: Err("no".into()),
                until: now + Duration::from_secs(60 + u64::from(i)),
            };
            cache.insert([i; 32], entry, now, 10);
            assert!(cache.entries.len() <= 10);
        }
        // The newest answers stay; the ones closest to expiring went.
        assert!(cache.entries.contains_key(&[24; 32]));
        assert!(!cache.entries.contains_key(&[0; 32]));
        // Expired answers go first.
        let mut cache = AnswerCache::default();
        for i in 0..10u8 {
            let until = if i == 5 {
                now
            } else {
                now + Duration::from_secs(60)
            };
            let entry = Entry {
                outcome: Err("no".into()),
                until,
            };
            cache.insert([i; 32], entry, now, 10);
        }
        let entry = Entry {
            outcome: Err("no".into()),
            until: now + Duration::from_secs(1),
        };
        cache.insert([99; 32], entry, now, 10);
        assert_eq!(cache.entries.len(), 10);
        assert!(!cache.entries.contains_key(&[5; 32]));
        assert!(cache.get(&[99; 32], now).is_some());
        assert!(cache.get(&[99; 32], now + Duration::from_secs(2)).is_none());
    }
}

//! [`JwtVerifier`]: bearer tokens that are JWTs (RFC 7519, compact JWS of RFC 7515) signed by
//! the authorization server, checked against its published key set (JWKS) with `ring`.

use std::fmt;
use std::time::{Duration, Instant, SystemTime};

use serde_json::{Map, Value};

use super::algorithm::JwsAlgorithm;
use super::answer_cache::{self, AnswerCache, Entry, MAX_ENTRIES};
use super::claims::{self, quoted};
use super::jwks::{Jwks, KeySet};
use super::{AuthorizationServerMetadata, Principal, TokenVerifier, VerifyError, VerifyFuture};
use crate::base64;
use crate::error::McpError;

/// A [`TokenVerifier`] for JWT access tokens signed by the authorization server.
///
/// A token is accepted when:
/// - it is a compact JWS whose header `alg` is one of the accepted algorithms (by default
///   RS256 and ES256; `none` and `HS*` never are) and lists no `crit` extension;
/// - its key is found in the issuer's key set: by `kid`, or, without a `kid`, the only key
///   that fits the algorithm. The key's type, curve and pinned `alg` must match the token's
///   algorithm (an EC key never verifies RS256, an RSA key never HS256). Keys a token carries
///   or points at (`jwk`, `jku`, `x5u`, `x5c` headers) are ignored;
/// - the signature verifies;
/// - `exp` is present and not past, `nbf` and `iat` (when present) are not in the future,
///   each with the clock leeway (60 s by default);
/// - `iss` equals the configured issuer exactly;
/// - `aud` (a string or an array) names one of the accepted audiences.
///
/// The [`Principal`] gets `sub`, `iss`, the client (`client_id`, else `azp`), the scopes
/// (`scope`, space-separated, else `scp`), `aud`, `exp` and every claim of the payload.
///
/// The key set is fetched from the JWKS URL on first use and cached for 10 minutes. A token
/// naming a `kid` not in the cache fetches the set again (keys rotate), but at most once per
/// 30 s however many such tokens arrive; concurrent callers share one fetch. When a fetch
/// fails, the keys fetched before keep serving; with none, verification answers
/// [`VerifyError::Unavailable`] (the client gets 503, not 401). Failed fetches are logged at
/// WARN; after one, the next is not tried for 5 s (or the refetch interval, if shorter).
///
/// Fetching an `https://` key set needs this crate's `https` feature.
///
/// ```no_run
/// use std::time::Duration;
/// use modelctx_core::auth::{JwsAlgorithm, JwtVerifier, TokenVerifier, VerifyError};
///
/// # async fn demo(token: &str) -> Result<(), modelctx_core::McpError> {
/// let verifier = JwtVerifier::new(
///     "https://auth.example.com/",
///     "https://auth.example.com/.well-known/jwks.json",
///     "https://mcp.example.com/mcp",
/// )?
/// .leeway(Duration::from_secs(30))
/// .algorithms([JwsAlgorithm::RS256, JwsAlgorithm::PS256]);
///
/// match verifier.verify(token).await {
///     Ok(who) => println!("{:?} with scopes {:?}", who.subject(), who.granted_scopes()),
///     Err(VerifyError::Invalid(why)) => println!("401: {why}"),
///     Err(VerifyError::Unavailable(why)) => println!("503: {why}"),
/// }
/// # Ok(())
/// # }
/// ```
///
/// With a fixed key set, nothing is fetched (tests, offline deployments):
///
/// ```
/// use modelctx_core::auth::JwtVerifier;
///
/// let jwks = r#"{"keys": [{"kty": "EC", "crv": "P-256", "kid": "k1", "alg": "ES256",
///     "x": "MKBCTNIcKUSDii11ySs3526iDZ8AiTo7Tu6KPAqv7D4",
///     "y": "4Etl6SRW2YiLUrN5vfvVHuhp7x8PxltmWWlbbM4IFyM"}]}"#;
/// let verifier = JwtVerifier::new("https://auth.example.com", "https://auth.example.com/jwks", "api")
///     .unwrap()
///     .with_keys(jwks)
///     .unwrap();
/// ```
pub struct JwtVerifier {
    issuer: String,
    audiences: Vec<String>,
    leeway: Duration,
    algorithms: Vec<JwsAlgorithm>,
    keys: Jwks,
    /// How long a verified token's principal is remembered.
    remember_for: Duration,
    verified: std::sync::Mutex<AnswerCache>,
}

impl fmt::Debug for JwtVerifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JwtVerifier")
            .field("issuer", &self.issuer)
            .field("audiences", &self.audiences)
            .field("leeway", &self.leeway)
            .field("algorithms", &self.algorithms)
            .field("keys", &self.keys)
            .field("remember_for", &self.remember_for)
            .finish_non_exhaustive()
    }
}

impl JwtVerifier {
    /// A verifier for tokens that `issuer` signs with the keys published at `jwks_url`, for
    /// `audience` (this resource server's identifier, usually its canonical URL; RFC 8707).
    ///
    /// Errors when `issuer` or `audience` is empty, or `jwks_url` is not an `http://` or (with
    /// the `https` feature) `https://` URL. Nothing is fetched before the first token.
    pub fn new(
        issuer: &str,
        jwks_url: &str,
        audience: impl Into<String>,
    ) -> Result<Self, McpError> {
        let audience = audience.into();
        if issuer.is_empty() {
            return Err(McpError::invalid_params("the JWT issuer is empty"));
        }
        if audience.is_empty() {
            return Err(McpError::invalid_params("the JWT audience is empty"));
        }
        Ok(Self {
            issuer: issuer.to_owned(),
            audiences: vec![audience],
            leeway: Duration::from_secs(60),
            algorithms: vec![JwsAlgorithm::RS256, JwsAlgorithm::ES256],
            keys: Jwks::remote(jwks_url)?,
            remember_for: Duration::from_secs(300),
            verified: std::sync::Mutex::new(AnswerCache::default()),
        })
    }

    /// A verifier for the issuer and `jwks_uri` of authorization server metadata (RFC 8414).
    /// Errors when the metadata has no `jwks_uri`.
    pub fn from_metadata(
        metadata: &AuthorizationServerMetadata,
        audience: impl Into<String>,
    ) -> Result<Self, McpError> {
        let jwks = metadata.jwks_uri.as_deref().ok_or_else(|| {
            McpError::invalid_params(format!(
                "the metadata of {} has no `jwks_uri`",
                metadata.issuer
            ))
        })?;
        Self::new(&metadata.issuer, jwks, audience)
    }

    /// Accepts tokens for `audience` too (a resource known by several names). Behind a
    /// [`ResourceServer`](super::ResourceServer), give it
    /// [`accept_audience`](super::ResourceServer::accept_audience) as well: it checks the
    /// audience again.
    pub fn audience(mut self, audience: impl Into<String>) -> Self {
        self.audiences.push(audience.into());
        self
    }

    /// How far clocks may disagree when checking `exp`, `nbf` and `iat` (default 60 s).
    pub fn leeway(mut self, leeway: Duration) -> Self {
        self.leeway = leeway;
        self
    }

    /// How long a fetched key set is used before it is fetched again (default 10 minutes).
    pub fn cache_for(mut self, lifetime: Duration) -> Self {
        self.keys.cache_for = lifetime;
        self
    }

    /// The least time between two fetches caused by tokens naming an unknown `kid` (default
    /// 30 s): forged `kid`s cannot make the verifier hammer the issuer.
    pub fn refetch_interval(mut self, interval: Duration) -> Self {
        self.keys.refetch_interval = interval;
        self
    }

    /// How long a verified token is remembered (default 5 minutes, never past its `exp`;
    /// `Duration::ZERO` checks every signature). The same token again then costs a SHA-256
    /// instead of a signature check (RS256 about 23 us, ES256 about 54 us on the benchmark
    /// machine). A remembered token stays accepted until it expires even if its key leaves the
    /// key set meanwhile; shorten this for faster key revocation.
    pub fn remember_tokens(mut self, lifetime: Duration) -> Self {
        self.remember_for = lifetime;
        self
    }

    /// How long fetching the key set may take, connection included (default 5 s).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.keys.set_timeout(timeout);
        self
    }

    /// The TLS settings for an `https://` key set (a private CA, a client certificate) instead
    /// of the default: Mozilla's root certificates.
    #[cfg(feature = "https")]
    pub fn tls_config(mut self, config: std::sync::Arc<rustls::ClientConfig>) -> Self {
        self.keys.set_tls(Some(config));
        self
    }

    /// The algorithms accepted (replacing the default RS256 and ES256). Listing none refuses
    /// every token.
    pub fn algorithms(mut self, algorithms: impl IntoIterator<Item = JwsAlgorithm>) -> Self {
        self.algorithms = algorithms.into_iter().collect();
        self
    }

    /// Uses the key set `jwks_json` (a JWK Set document, `{"keys": [...]}`) and never fetches
    /// the JWKS URL. Errors when it is not a key set or holds no key that can verify
    /// signatures (RSA of 2048 bits or more, EC on P-256 or P-384).
    pub fn with_keys(mut self, jwks_json: &str) -> Result<Self, McpError> {
        let set = KeySet::parse(jwks_json.as_bytes()).map_err(McpError::invalid_params)?;
        if set.len() == 0 {
            return Err(McpError::invalid_params(
                "the key set holds no key that can verify signatures",
            ));
        }
        self.keys.fix(set);
        Ok(self)
    }

    fn verified(&self) -> std::sync::MutexGuard<'_, AnswerCache> {
        self.verified.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A remembered verdict on `token`, else a full check whose success is remembered.
    async fn check_remembered(&self, token: &str) -> Result<Principal, VerifyError> {
        if self.remember_for.is_zero() {
            return self.check(token).await;
        }
        let key = answer_cache::key(token);
        let now = Instant::now();
        if let Some(verdict) = self.verified().get(&key, now) {
            return verdict;
        }
        let outcome = self.check(token).await;
        if let Ok(principal) = &outcome {
            let left = principal
                .expiry()
                .and_then(|exp| exp.duration_since(SystemTime::now()).ok())
                .unwrap_or_default();
            let lifetime = self.remember_for.min(left);
            if !lifetime.is_zero() {
                let entry = Entry {
                    outcome: Ok(principal.clone()),
                    until: now + lifetime,
                };
                self.verified().insert(key, entry, now, MAX_ENTRIES);
            }
        }
        outcome
    }

    /// Checks `token` (see the type's documentation).
    async fn check(&self, token: &str) -> Result<Principal, VerifyError> {
        if token.len() > claims::MAX_TOKEN {
            return Err(VerifyError::invalid("the token is longer than 64 KiB"));
        }
        let mut parts = token.split('.');
        let (Some(header_b64), Some(payload_b64), Some(signature_b64), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(VerifyError::invalid(
                "not a compact JWS (three base64url parts separated by dots)",
            ));
        };
        let header = decode_object(header_b64, "header")?;
        let alg = self.algorithm(&header)?;
        if header.contains_key("crit") {
            return Err(VerifyError::invalid(
                "the header lists critical extensions (`crit`); none is supported",
            ));
        }
        let kid = match header.get("kid") {
            None => None,
            Some(Value::String(kid)) => Some(kid.as_str()),
            Some(_) => return Err(VerifyError::invalid("the header's `kid` is not a string")),
        };

        let key = self.keys.key_for(kid, alg).await?;
        let signature = base64::decode_url(signature_b64)
            .ok_or_else(|| VerifyError::invalid("the signature is not base64url"))?;
        let signed = &token.as_bytes()[..header_b64.len() + 1 + payload_b64.len()];
        if !key.verify(alg, signed, &signature) {
            return Err(VerifyError::invalid(format!(
                "the {alg} signature does not verify"
            )));
        }

        let claims = decode_object(payload_b64, "payload")?;
        self.check_claims(claims, claims::now_secs())
    }

    /// The header's `alg`, when accepted.
    fn algorithm(&self, header: &Map<String, Value>) -> Result<JwsAlgorithm, VerifyError> {
        let name = match header.get("alg") {
            Some(Value::String(name)) => name.as_str(),
            Some(_) => return Err(VerifyError::invalid("the header's `alg` is not a string")),
            None => return Err(VerifyError::invalid("the header has no `alg`")),
        };
        if name.eq_ignore_ascii_case("none") {
            return Err(VerifyError::invalid(
                "unsigned tokens (`alg: none`) are refused",
            ));
        }
        if name.len() >= 2 && name.as_bytes()[..2].eq_ignore_ascii_case(b"HS") {
            return Err(VerifyError::invalid(
                "HMAC-signed tokens (`HS*`) are refused: a resource server holds no shared secret",
            ));
        }
        match JwsAlgorithm::from_name(name) {
            Some(alg) if self.algorithms.contains(&alg) => Ok(alg),
            Some(alg) => Err(VerifyError::invalid(format!(
                "{alg} is not an accepted algorithm"
            ))),
            None => Err(VerifyError::invalid(format!(
                "the algorithm {} is not supported",
                quoted(name)
            ))),
        }
    }

    /// Checks the registered claims at `now` (seconds since the epoch) and builds the
    /// principal.
    fn check_claims(&self, claims: Map<String, Value>, now: f64) -> Result<Principal, VerifyError> {
        let leeway = self.leeway.as_secs_f64();
        let Some(exp) = claims::numeric_date(&claims, "exp")? else {
            return Err(VerifyError::invalid("the token has no expiry (`exp`)"));
        };
        if now >= exp + leeway {
            return Err(VerifyError::invalid(format!(
                "the token expired {:.0} s ago",
                now - exp
            )));
        }
        if let Some(nbf) = claims::numeric_date(&claims, "nbf")? {
            if nbf > now + leeway {
                return Err(VerifyError::invalid(format!(
                    "the token is not valid for another {:.0} s (`nbf`)",
                    nbf - now
                )));
            }
        }
        if let Some(iat) = claims::numeric_date(&claims, "iat")? {
            if iat > now + leeway {
                return Err(VerifyError::invalid(format!(
                    "the token was issued {:.0} s in the future (`iat`)",
                    iat - now
                )));
            }
        }
        match claims::string(&claims, "iss")? {
            Some(iss) if iss == self.issuer => {}
            Some(iss) => {
                return Err(VerifyError::invalid(format!(
                    "the token's issuer {} is not {}",
                    quoted(&iss),
                    quoted(&self.issuer)
                )))
            }
            None => return Err(VerifyError::invalid("the token names no issuer (`iss`)")),
        }
        let audiences = claims::string_or_list(&claims, "aud")?;
        claims::check_audience(audiences.as_deref(), &self.audiences, false)?;
        claims::principal(claims, audiences, Some(exp))
    }
}

impl TokenVerifier for JwtVerifier {
    fn verify<'a>(&'a self, token: &'a str) -> VerifyFuture<'a> {
        Box::pin(self.check_remembered(token))
    }
}

/// A base64url part of the token holding a JSON object.
fn decode_object(part: &str, what: &str) -> Result<Map<String, Value>, VerifyError> {
    let bytes = base64::decode_url(part)
        .ok_or_else(|| VerifyError::invalid(format!("the {what} is not base64url")))?;
    match serde_json::from_slice(&bytes) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(VerifyError::invalid(format!(
            "the {what} is not a JSON object"
        ))),
        Err(_) => Err(VerifyError::invalid(format!("the {what} is not JSON"))),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use ring::rand::SystemRandom;
    use ring::signature::{
        EcdsaKeyPair, KeyPair, RsaKeyPair, RsaPublicKeyComponents, ECDSA_P256_SHA256_FIXED_SIGNING,
        ECDSA_P384_SHA384_FIXED_SIGNING,
    };
    use serde_json::{json, Value};

    use super::*;
    use crate::auth::test_server::TestServer;

    const ISSUER: &str = "https://auth.example.com";
    const AUDIENCE: &str = "https://mcp.example.com/mcp";
    const RSA_PKCS8: &[u8] = include_bytes!("../../tests-data/rsa-test-key.pk8");

    /// A key that signs test tokens.
    enum Signer {
        Rsa(RsaKeyPair),
        Ec(EcdsaKeyPair),
    }

    impl Signer {
        fn rsa() -> Self {
            Self::Rsa(RsaKeyPair::from_pkcs8(RSA_PKCS8).unwrap())
        }

        fn ec(alg: &'static ring::signature::EcdsaSigningAlgorithm) -> Self {
            let rng = SystemRandom::new();
            let pkcs8 = EcdsaKeyPair::generate_pkcs8(alg, &rng).unwrap();
            Self::Ec(EcdsaKeyPair::from_pkcs8(alg, pkcs8.as_ref(), &rng).unwrap())
        }

        fn p256() -> Self {
            Self::ec(&ECDSA_P256_SHA256_FIXED_SIGNING)
        }

        /// The public JWK, with `kid` and (when given) a pinned `alg`.
        fn jwk(&self, kid: &str, alg: Option<&str>) -> Value {
            let mut jwk = match self {
                Self::Rsa(key) => {
                    let parts = RsaPublicKeyComponents::<Vec<u8>>::from(key.public());
                    json!({"kty": "RSA", "n": base64::encode_url(&parts.n), "e": base64::encode_url(&parts.e)})
                }
                Self::Ec(key) => {
                    let point = key.public_key().as_ref();
                    let size = (point.len() - 1) / 2;
                    let crv = if size == 32 { "P-256" } else { "P-384" };
                    json!({
                        "kty": "EC", "crv": crv,
                        "x": base64::encode_url(&point[1..1 + size]),
                        "y": base64::encode_url(&point[1 + size..]),
                    })
                }
            };
            jwk["kid"] = json!(kid);
            jwk["use"] = json!("sig");
            if let Some(alg) = alg {
                jwk["alg"] = json!(alg);
            }
            jwk
        }

        /// The signature of `message` with `alg` (the algorithm the key computes, whatever
        /// the header says).
        fn sign(&self, alg: &str, message: &[u8]) -> Vec<u8> {
            let rng = SystemRandom::new();
            match self {
                Self::Rsa(key) => {
                    let padding: &'static dyn ring::signature::RsaEncoding = match alg {
                        "RS384" => &ring::signature::RSA_PKCS1_SHA384,
                        "RS512" => &ring::signature::RSA_PKCS1_SHA512,
                        "PS256" => &ring::signature::RSA_PSS_SHA256,
                        _ => &ring::signature::RSA_PKCS1_SHA256,
                    };
                    let mut signature = vec![0; key.public().modulus_len()];
                    key.sign(padding, &rng, message, &mut signature).unwrap();
                    signature
                }
                Self::Ec(key) => key.sign(&rng, message).unwrap().as_ref().to_vec(),
            }
        }
    }

    /// A compact JWS of `header` and `claims`, signed by `signer` with the header's `alg`.
    fn token(signer: &Signer, header: Value, claims: Value) -> String {
        let alg = header["alg"].as_str().unwrap_or("RS256").to_owned();
        let input = format!(
            "{}.{}",
            base64::encode_url(header.to_string().as_bytes()),
            base64::encode_url(claims.to_string().as_bytes())
        );
        let signature = signer.sign(&alg, input.as_bytes());
        format!("{input}.{}", base64::encode_url(&signature))
    }

    fn now() -> i64 {
        claims::now_secs() as i64
    }

    /// Claims that pass, with `changes` merged in (`null` removes a claim).
    fn claims_with(changes: Value) -> Value {
        let mut claims = json!({
            "iss": ISSUER, "aud": AUDIENCE, "sub": "alice", "client_id": "app",
            "scope": "books:read books:write", "iat": now(), "exp": now() + 300,
        });
        if let (Some(claims), Some(changes)) = (claims.as_object_mut(), changes.as_object()) {
            for (k, v) in changes {
                if v.is_null() {
                    claims.remove(k);
                } else {
                    claims.insert(k.clone(), v.clone());
                }
            }
        }
        claims
    }

    fn header(alg: &str, kid: &str) -> Value {
        json!({"alg": alg, "typ": "JWT", "kid": kid})
    }

    struct Keys {
        rsa: Signer,
        ec: Signer,
        jwks: String,
    }

    fn keys() -> Keys {
        let (rsa, ec) = (Signer::rsa(), Signer::p256());
        let jwks =
            json!({"keys": [rsa.jwk("rsa1", None), ec.jwk("ec1", Some("ES256"))]}).to_string();
        Keys { rsa, ec, jwks }
    }

    fn verifier(jwks: &str) -> JwtVerifier {
        JwtVerifier::new(ISSUER, "http://127.0.0.1:1/jwks", AUDIENCE)
            .unwrap()
            .with_keys(jwks)
            .unwrap()
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

    #[tokio::test]
    async fn valid_rs256_and_es256_tokens_make_principals() {
        let k = keys();
        let v = verifier(&k.jwks);
        let rs = token(&k.rsa, header("RS256", "rsa1"), claims_with(json!({})));
        let who = v.verify(&rs).await.unwrap();
        assert_eq!(who.subject(), Some("alice"));
        assert_eq!(who.issuer_name(), Some(ISSUER));
        assert_eq!(who.client(), Some("app"));
        assert_eq!(who.granted_scopes(), ["books:read", "books:write"]);
        assert_eq!(who.audiences(), [AUDIENCE]);
        assert!(who.expiry().is_some());
        assert_eq!(who.claim("sub"), Some(&json!("alice")));

        let claims = claims_with(
            json!({"aud": ["other", AUDIENCE], "client_id": null, "azp": "web",
            "scope": null, "scp": ["a", "b"]}),
        );
        let es = token(&k.ec, header("ES256", "ec1"), claims);
        let who = v.verify(&es).await.unwrap();
        assert_eq!(who.client(), Some("web"));
        assert_eq!(who.granted_scopes(), ["a", "b"]);
        assert_eq!(who.audiences(), ["other", AUDIENCE]);
    }

    #[tokio::test]
    async fn other_algorithms_only_when_accepted() {
        let rsa = Signer::rsa();
        let p384 = Signer::ec(&ECDSA_P384_SHA384_FIXED_SIGNING);
        let jwks = json!({"keys": [rsa.jwk("rsa1", None), p384.jwk("p384", None)]}).to_string();
        let claims = claims_with(json!({}));
        let tokens = [
            token(&rsa, header("RS384", "rsa1"), claims.clone()),
            token(&rsa, header("RS512", "rsa1"), claims.clone()),
            token(&rsa, header("PS256", "rsa1"), claims.clone()),
            token(&p384, header("ES384", "p384"), claims.clone()),
        ];
        let default = verifier(&jwks);
        for t in &tokens {
            refused(default.verify(t).await, "is not an accepted algorithm");
        }
        let all = verifier(&jwks).algorithms(JwsAlgorithm::ALL);
        for t in &tokens {
            all.verify(t).await.unwrap();
        }
        // A P-384 key never verifies ES256, whatever the signature.
        let es256 = token(&p384, header("ES256", "p384"), claims);
        refused(all.verify(&es256).await, "cannot verify ES256");
    }

    #[tokio::test]
    async fn time_claims_are_checked_with_leeway() {
        let k = keys();
        let v = verifier(&k.jwks);
        let sign = |changes| token(&k.rsa, header("RS256", "rsa1"), claims_with(changes));
        refused(
            v.verify(&sign(json!({"exp": now() - 120}))).await,
            "expired",
        );
        v.verify(&sign(json!({"exp": now() - 30}))).await.unwrap();
        refused(v.verify(&sign(json!({"exp": null}))).await, "no expiry");
        refused(
            v.verify(&sign(json!({"exp": "tomorrow"}))).await,
            "not a number",
        );
        refused(v.verify(&sign(json!({"nbf": now() + 120}))).await, "nbf");
        v.verify(&sign(json!({"nbf": now() + 30}))).await.unwrap();
        refused(v.verify(&sign(json!({"iat": now() + 120}))).await, "iat");
        let strict = verifier(&k.jwks).leeway(Duration::ZERO);
        refused(
            strict.verify(&sign(json!({"exp": now() - 30}))).await,
            "expired",
        );
    }

    #[tokio::test]
    async fn issuer_and_audience_must_match() {
        let k = keys();
        let v = verifier(&k.jwks);
        let sign = |changes| token(&k.ec, header("ES256", "ec1"), claims_with(changes));
        refused(
            v.verify(&sign(json!({"iss": "https://evil.example.com"})))
                .await,
            "issuer",
        );
        refused(
            v.verify(&sign(json!({"iss": format!("{ISSUER}/")}))).await,
            "issuer",
        );
        refused(v.verify(&sign(json!({"iss": null}))).await, "no issuer");
        refused(
            v.verify(&sign(json!({"aud": "https://other.example.com"})))
                .await,
            "not for this resource",
        );
        refused(
            v.verify(&sign(json!({"aud": []}))).await,
            "not for this resource",
        );
        refused(v.verify(&sign(json!({"aud": null}))).await, "no audience");
        let also = verifier(&k.jwks).audience("https://other.example.com");
        also.verify(&sign(json!({"aud": "https://other.example.com"})))
            .await
            .unwrap();
    }

    #[tokio::test]
    async fn unsigned_hmac_and_confused_tokens_are_refused() {
        let k = keys();
        let v = verifier(&k.jwks);
        let claims = claims_with(json!({}));
        let body = |header: Value| {
            format!(
                "{}.{}",
                base64::encode_url(header.to_string().as_bytes()),
                base64::encode_url(claims.to_string().as_bytes())
            )
        };
        refused(
            v.verify(&format!("{}.", body(json!({"alg": "none"}))))
                .await,
            "alg: none",
        );
        refused(
            v.verify(&format!("{}.", body(json!({"alg": "None", "kid": "rsa1"}))))
                .await,
            "alg: none",
        );

        // HS256 "signed" with the RSA public key as the HMAC secret (the classic confusion).
        let Signer::Rsa(rsa) = &k.rsa else {
            unreachable!()
        };
        let secret = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, rsa.public().as_ref());
        let input = body(header("HS256", "rsa1"));
        let mac = ring::hmac::sign(&secret, input.as_bytes());
        let forged = format!("{input}.{}", base64::encode_url(mac.as_ref()));
        refused(v.verify(&forged).await, "HMAC");
        // Refused before any key is looked up: a fetching verifier fetches nothing.
        let server = TestServer::start(200, &k.jwks).await;
        let remote = JwtVerifier::new(ISSUER, &server.url, AUDIENCE).unwrap();
        refused(remote.verify(&forged).await, "HMAC");
        assert_eq!(server.hits(), 0);

        // A kid naming the EC key, with alg RS256 (and a valid RSA signature).
        let confused = token(&k.rsa, header("RS256", "ec1"), claims.clone());
        refused(v.verify(&confused).await, "cannot verify RS256");
        // An RSA key pinned to RS256 does not verify PS256.
        let pinned = json!({"keys": [k.rsa.jwk("rsa1", Some("RS256"))]}).to_string();
        let ps = token(&k.rsa, header("PS256", "rsa1"), claims.clone());
        let all = verifier(&pinned).algorithms(JwsAlgorithm::ALL);
        refused(all.verify(&ps).await, "cannot verify PS256");
        // An unsupported algorithm, and critical extensions.
        refused(
            v.verify(&format!("{}.AA", body(json!({"alg": "EdDSA"}))))
                .await,
            "not supported",
        );
        let crit = token(
            &k.rsa,
            json!({"alg": "RS256", "kid": "rsa1", "crit": ["exp"]}),
            claims,
        );
        refused(v.verify(&crit).await, "crit");
    }

    #[tokio::test]
    async fn tampered_and_malformed_tokens_are_refused() {
        let k = keys();
        let v = verifier(&k.jwks);
        let good = token(&k.rsa, header("RS256", "rsa1"), claims_with(json!({})));
        let parts: Vec<&str> = good.split('.').collect();
        let other = base64::encode_url(claims_with(json!({"sub": "admin"})).to_string().as_bytes());
        let tampered = format!("{}.{other}.{}", parts[0], parts[2]);
        refused(v.verify(&tampered).await, "does not verify");
        let es = token(&k.ec, header("ES256", "ec1"), claims_with(json!({})));
        let es_parts: Vec<&str> = es.split('.').collect();
        let swapped = format!("{}.{other}.{}", es_parts[0], es_parts[2]);
        refused(v.verify(&swapped).await, "does not verify");
        let mut flipped = base64::decode_url(parts[2]).unwrap();
        flipped[10] ^= 1;
        let flipped = format!("{}.{}.{}", parts[0], parts[1], base64::encode_url(&flipped));
        refused(v.verify(&flipped).await, "does not verify");

        refused(v.verify("abc").await, "compact JWS");
        refused(v.verify("a.b.c.d.e").await, "compact JWS");
        refused(
            v.verify(&format!("{}.{}.{}=", parts[0], parts[1], parts[2]))
                .await,
            "base64url",
        );
        refused(v.verify("!!.e30.AA").await, "header is not base64url");
        refused(
            v.verify(&format!("{}.e30.AA", base64::encode_url(b"[1]")))
                .await,
            "not a JSON object",
        );
        refused(v.verify(&"a".repeat(70_000)).await, "64 KiB");
        let no_kid_typed = token(
            &k.rsa,
            json!({"alg": "RS256", "kid": 7}),
            claims_with(json!({})),
        );
        refused(v.verify(&no_kid_typed).await, "`kid` is not a string");
    }

    #[tokio::test]
    async fn keys_are_found_by_kid_or_by_being_the_only_fit() {
        let k = keys();
        let v = verifier(&k.jwks);
        let unknown = token(&k.rsa, header("RS256", "rotated"), claims_with(json!({})));
        refused(v.verify(&unknown).await, "no key of the issuer");
        // Without kid: the one RSA key of the set.
        let no_kid = token(&k.rsa, json!({"alg": "RS256"}), claims_with(json!({})));
        v.verify(&no_kid).await.unwrap();
        // Two RSA keys and no kid: ambiguous.
        let other = Signer::rsa();
        let two = json!({"keys": [k.rsa.jwk("a", None), other.jwk("b", None)]}).to_string();
        refused(verifier(&two).verify(&no_kid).await, "several keys");
        // Symmetric and encryption keys are not usable keys.
        let unusable = json!({"keys": [
            {"kty": "oct", "k": "c2VjcmV0", "kid": "h"},
            {"kty": "RSA", "use": "enc", "n": "AQAB", "e": "AQAB"}
        ]})
        .to_string();
        let base = JwtVerifier::new(ISSUER, "http://127.0.0.1:1/", AUDIENCE).unwrap();
        assert!(base.with_keys(&unusable).is_err());
        assert!(JwtVerifier::new(ISSUER, "ftp://x/", AUDIENCE).is_err());
        assert!(JwtVerifier::new("", "http://x/", AUDIENCE).is_err());
        assert!(JwtVerifier::new(ISSUER, "http://x/", "").is_err());
        let debug = format!("{v:?}");
        assert!(debug.contains("fixed_keys: 2"), "{debug}");
    }

    #[tokio::test]
    async fn the_key_set_is_fetched_once_and_cached() {
        let k = keys();
        let server = TestServer::start(200, &k.jwks).await;
        let v = JwtVerifier::new(ISSUER, &server.url, AUDIENCE).unwrap();
        let t = token(&k.ec, header("ES256", "ec1"), claims_with(json!({})));
        v.verify(&t).await.unwrap();
        v.verify(&t).await.unwrap();
        assert_eq!(server.hits(), 1);
        assert!(server.last_request().starts_with("GET / HTTP/1.1"));
    }

    #[tokio::test]
    async fn unknown_kids_refetch_at_most_once_per_interval() {
        let k = keys();
        let server = TestServer::start(200, &k.jwks).await;
        let v = JwtVerifier::new(ISSUER, &server.url, AUDIENCE)
            .unwrap()
            .refetch_interval(Duration::from_secs(1));
        let new_key = Signer::p256();
        let rotated = token(&new_key, header("ES256", "ec2"), claims_with(json!({})));
        // First use fetches; the kid is unknown and the set was read just now: refused.
        refused(v.verify(&rotated).await, "no key of the issuer");
        assert_eq!(server.hits(), 1);
        // The issuer rotates; within the interval no token makes the verifier fetch again.
        let jwks = json!({"keys": [k.rsa.jwk("rsa1", None), new_key.jwk("ec2", None)]});
        server.set(200, &jwks.to_string());
        for _ in 0..5 {
            refused(v.verify(&rotated).await, "no key of the issuer");
        }
        assert_eq!(server.hits(), 1);
        tokio::time::sleep(Duration::from_millis(1100)).await;
        v.verify(&rotated).await.unwrap();
        assert_eq!(server.hits(), 2);
        // Known keys never fetch.
        let old = token(&k.rsa, header("RS256", "rsa1"), claims_with(json!({})));
        v.verify(&old).await.unwrap();
        assert_eq!(server.hits(), 2);
    }

    #[tokio::test]
    async fn concurrent_misses_share_one_fetch() {
        let k = keys();
        let server = TestServer::start(200, &k.jwks).await;
        server.delay(Duration::from_millis(200));
        let v = Arc::new(JwtVerifier::new(ISSUER, &server.url, AUDIENCE).unwrap());
        let t = Arc::new(token(
            &k.rsa,
            header("RS256", "rsa1"),
            claims_with(json!({})),
        ));
        let tasks: Vec<_> = (0..10)
            .map(|_| {
                let (v, t) = (v.clone(), t.clone());
                tokio::spawn(async move { v.verify(&t).await })
            })
            .collect();
        for task in tasks {
            task.await.unwrap().unwrap();
        }
        assert_eq!(server.hits(), 1);
    }

    #[tokio::test]
    async fn an_unreachable_key_set_is_unavailable_not_invalid() {
        let k = keys();
        let t = token(&k.rsa, header("RS256", "rsa1"), claims_with(json!({})));
        let unavailable = |r: Result<Principal, VerifyError>| {
            assert!(matches!(r, Err(VerifyError::Unavailable(_))), "{r:?}")
        };
        let closed = JwtVerifier::new(ISSUER, "http://127.0.0.1:1/jwks", AUDIENCE).unwrap();
        unavailable(closed.verify(&t).await);
        let server = TestServer::start(500, "oops").await;
        let v = JwtVerifier::new(ISSUER, &server.url, AUDIENCE)
            .unwrap()
            .refetch_interval(Duration::ZERO);
        unavailable(v.verify(&t).await);
        server.set(200, "not json");
        unavailable(v.verify(&t).await);
        server.set(200, r#"{"no": "keys"}"#);
        unavailable(v.verify(&t).await);
        let slow = TestServer::start(200, &k.jwks).await;
        slow.delay(Duration::from_secs(2));
        let v = JwtVerifier::new(ISSUER, &slow.url, AUDIENCE)
            .unwrap()
            .timeout(Duration::from_millis(200));
        match v.verify(&t).await {
            Err(VerifyError::Unavailable(why)) => assert!(why.contains("did not answer"), "{why}"),
            other => panic!("{other:?}"),
        }
    }

    #[tokio::test]
    async fn a_verified_token_is_remembered_until_it_expires() {
        let k = keys();
        let server = TestServer::start(200, &k.jwks).await;
        // The key set is never reused, so every signature check would fetch it.
        let v = JwtVerifier::new(ISSUER, &server.url, AUDIENCE)
            .unwrap()
            .cache_for(Duration::ZERO);
        let t = token(&k.rsa, header("RS256", "rsa1"), claims_with(json!({})));
        let first = v.verify(&t).await.unwrap();
        server.set(503, "down");
        // Remembered: no signature check, no fetch, the same principal.
        assert_eq!(v.verify(&t).await.unwrap(), first);
        assert_eq!(server.hits(), 1);
        // A token that is not remembered goes to the keys (a fetch is tried; the keys fetched
        // before serve while the set is down).
        let other = token(
            &k.rsa,
            header("RS256", "rsa1"),
            claims_with(json!({"sub": "other"})),
        );
        assert_eq!(v.verify(&other).await.unwrap().subject(), Some("other"));
        assert_eq!(server.hits(), 2);
        // An expired token is never remembered past its exp (leeway aside, it fails anyway).
        let expired = token(
            &k.rsa,
            header("RS256", "rsa1"),
            claims_with(json!({"exp": now() - 3600})),
        );
        assert!(v.verify(&expired).await.is_err());
    }

    #[tokio::test]
    async fn keys_fetched_before_serve_while_the_set_is_down() {
        let k = keys();
        let server = TestServer::start(200, &k.jwks).await;
        let v = JwtVerifier::new(ISSUER, &server.url, AUDIENCE)
            .unwrap()
            .cache_for(Duration::ZERO)
            .remember_tokens(Duration::ZERO);
        let t = token(&k.rsa, header("RS256", "rsa1"), claims_with(json!({})));
        v.verify(&t).await.unwrap();
        server.set(503, "down");
        v.verify(&t).await.unwrap();
        assert_eq!(server.hits(), 2);
        // Within the backoff after a failure, nothing is fetched.
        v.verify(&t).await.unwrap();
        assert_eq!(server.hits(), 2);
        // A kid not known cannot be decided while the set is down.
        let rotated = token(&k.ec, header("ES256", "ec9"), claims_with(json!({})));
        assert!(matches!(
            v.verify(&rotated).await,
            Err(VerifyError::Unavailable(_))
        ));
    }

    #[tokio::test]
    async fn reasons_never_quote_the_token() {
        let k = keys();
        let v = verifier(&k.jwks);
        let cases = [
            token(
                &k.rsa,
                header("RS256", "rsa1"),
                claims_with(json!({"exp": 1})),
            ),
            token(&k.rsa, header("RS256", "nope"), claims_with(json!({}))),
            token(
                &k.rsa,
                header("RS256", "rsa1"),
                claims_with(json!({"aud": "x"})),
            ),
            "gArBaGe1.tOkEn22.hErE333".to_owned(),
        ];
        for t in &cases {
            let Err(e) = v.verify(t).await else { panic!() };
            let text = e.to_string();
            for part in t.split('.').filter(|p| p.len() > 3) {
                assert!(!text.contains(part), "{text}");
            }
        }
    }
}

//! [`JwtVerifier`]: bearer tokens that are JWTs (RFC 7519, compact JWS of RFC 7515) signed by
//! the authorization server, checked against its published key set (JWKS) with `ring`.

use std::fmt;
use std::time::Duration;

use serde_json::{Map, Value};

use super::claims::{self, quoted};
use super::jwks::{Jwks, KeySet};
use super::{AuthorizationServerMetadata, TokenVerifier, VerifyError, VerifyFuture};
use crate::base64;
use crate::error::McpError;
use crate::Principal;

/// A JWS signature algorithm [`JwtVerifier`] can check (RFC 7518 §3).
///
/// There is deliberately no `none` and no `HS*`: an unsigned token, or one "signed" with the
/// issuer's public key used as an HMAC secret, is always refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum JwsAlgorithm {
    /// RSASSA-PKCS1-v1_5 with SHA-256 (RSA keys of 2048 to 8192 bits).
    RS256,
    /// RSASSA-PKCS1-v1_5 with SHA-384.
    RS384,
    /// RSASSA-PKCS1-v1_5 with SHA-512.
    RS512,
    /// RSASSA-PSS with SHA-256 and MGF1 with SHA-256.
    PS256,
    /// RSASSA-PSS with SHA-384.
    PS384,
    /// RSASSA-PSS with SHA-512.
    PS512,
    /// ECDSA on P-256 with SHA-256.
    ES256,
    /// ECDSA on P-384 with SHA-384.
    ES384,
}

impl JwsAlgorithm {
    /// Every algorithm supported.
    pub const ALL: [Self; 8] = [
        Self::RS256,
        Self::RS384,
        Self::RS512,
        Self::PS256,
        Self::PS384,
        Self::PS512,
        Self::ES256,
        Self::ES384,
    ];

    /// The `alg` name (`"RS256"`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Self::RS256 => "RS256",
            Self::RS384 => "RS384",
            Self::RS512 => "RS512",
            Self::PS256 => "PS256",
            Self::PS384 => "PS384",
            Self::PS512 => "PS512",
            Self::ES256 => "ES256",
            Self::ES384 => "ES384",
        }
    }

    /// The algorithm called `name` (exact, case-sensitive as in JOSE), if supported.
    ///
    /// ```
    /// use mcp_core::auth::JwsAlgorithm;
    ///
    /// assert_eq!(JwsAlgorithm::from_name("ES256"), Some(JwsAlgorithm::ES256));
    /// assert_eq!(JwsAlgorithm::from_name("HS256"), None);
    /// assert_eq!(JwsAlgorithm::from_name("none"), None);
    /// ```
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|alg| alg.name() == name)
    }

    /// True for the RSA algorithms (`RS*`, `PS*`).
    pub(super) fn is_rsa(self) -> bool {
        !matches!(self, Self::ES256 | Self::ES384)
    }
}

impl fmt::Display for JwsAlgorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A [`TokenVerifier`] for JWT access tokens signed by the authorization server.
///
/// A token is accepted when:
/// - it is a compact JWS whose header `alg` is one of the accepted algorithms (by default
///   RS256 and ES256; `none` and `HS*` never are) and lists no `crit` extension;
/// - its key is found in the issuer's key set: by `kid`, or, without a `kid`, the only key
///   that fits the algorithm. The key's type, curve and pinned `alg` must match the token's
///   algorithm (an EC key never verifies RS256, an RSA key never HS256);
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
/// [`VerifyError::Unavailable`] (the client gets 503, not 401).
///
/// Fetching an `https://` key set needs this crate's `https` feature.
///
/// ```no_run
/// use std::time::Duration;
/// use mcp_core::auth::{JwsAlgorithm, JwtVerifier, TokenVerifier};
///
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// let verifier = JwtVerifier::new(
///     "https://auth.example.com/",
///     "https://auth.example.com/.well-known/jwks.json",
///     "https://mcp.example.com/mcp",
/// )?
/// .leeway(Duration::from_secs(30))
/// .algorithms([JwsAlgorithm::RS256, JwsAlgorithm::PS256]);
///
/// let who = verifier.verify("eyJhbGciOi...").await?;
/// println!("{:?} with scopes {:?}", who.subject(), who.granted_scopes());
/// # Ok(())
/// # }
/// ```
///
/// With a fixed key set, nothing is fetched (tests, offline deployments):
///
/// ```
/// use mcp_core::auth::JwtVerifier;
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
}

impl fmt::Debug for JwtVerifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JwtVerifier")
            .field("issuer", &self.issuer)
            .field("audiences", &self.audiences)
            .field("leeway", &self.leeway)
            .field("algorithms", &self.algorithms)
            .field("keys", &self.keys)
            .finish()
    }
}

impl JwtVerifier {
    /// A verifier for tokens that `issuer` signs with the keys published at `jwks_url`, for
    /// `audience` (this resource server's identifier, usually its canonical URL; RFC 8707).
    ///
    /// Errors when `issuer` or `audience` is empty, or `jwks_url` is not an `http://` or (with
    /// the `https` feature) `https://` URL. Nothing is fetched before the first token.
    pub fn new(issuer: &str, jwks_url: &str, audience: impl Into<String>) -> Result<Self, McpError> {
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

    /// Accepts tokens for `audience` too (a resource known by several names).
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

    /// How long fetching the key set may take, connection included (default 5 s).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.keys.set_timeout(timeout);
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
            return Err(VerifyError::invalid(format!("the {alg} signature does not verify")));
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
            return Err(VerifyError::invalid("unsigned tokens (`alg: none`) are refused"));
        }
        if name.len() >= 2 && name[..2].eq_ignore_ascii_case("HS") {
            return Err(VerifyError::invalid(
                "HMAC-signed tokens (`HS*`) are refused: a resource server holds no shared secret",
            ));
        }
        match JwsAlgorithm::from_name(name) {
            Some(alg) if self.algorithms.contains(&alg) => Ok(alg),
            Some(alg) => Err(VerifyError::invalid(format!("{alg} is not an accepted algorithm"))),
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
        Box::pin(self.check(token))
    }
}

/// A base64url part of the token holding a JSON object.
fn decode_object(part: &str, what: &str) -> Result<Map<String, Value>, VerifyError> {
    let bytes = base64::decode_url(part)
        .ok_or_else(|| VerifyError::invalid(format!("the {what} is not base64url")))?;
    match serde_json::from_slice(&bytes) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(VerifyError::invalid(format!("the {what} is not a JSON object"))),
        Err(_) => Err(VerifyError::invalid(format!("the {what} is not JSON"))),
    }
}

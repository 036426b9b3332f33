//! The issuer's signing keys: a JWK Set (RFC 7517) read into public keys `ring` verifies with,
//! cached, and fetched again when the cache expires or a token names a key not seen yet.
//!
//! Only public signature keys are kept: RSA (`kty: RSA`) and ECDSA on P-256 / P-384
//! (`kty: EC`). Symmetric keys (`kty: oct`), encryption keys (`use: enc`) and anything else are
//! skipped, so no HMAC key can ever come out of a key set.

use std::fmt;
use std::sync::{Arc, OnceLock, RwLock};
use std::time::{Duration, Instant};

use ring::signature::{self, RsaPublicKeyComponents, UnparsedPublicKey};
use serde_json::Value;

use super::algorithm::JwsAlgorithm;
use super::VerifyError;
use crate::base64;
use crate::error::McpError;
use crate::fetch::Fetch;

/// The longest a failed fetch keeps the next one from being tried (when the refetch interval
/// is shorter, that interval).
const FAILURE_BACKOFF: Duration = Duration::from_secs(5);

/// The curve of an EC key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Curve {
    P256,
    P384,
}

/// The public numbers of a key.
#[derive(Clone, PartialEq, Eq)]
enum Material {
    /// Modulus and exponent, big-endian without leading zeros.
    Rsa { n: Vec<u8>, e: Vec<u8> },
    /// The uncompressed point `0x04 || x || y`.
    Ec { curve: Curve, point: Vec<u8> },
}

/// One usable key of a key set.
#[derive(Clone, PartialEq, Eq)]
pub(super) struct Jwk {
    kid: Option<String>,
    /// The key's `alg`, when the set pins one.
    alg: Option<String>,
    material: Material,
}

impl fmt::Debug for Jwk {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match &self.material {
            Material::Rsa { n, .. } => format!("RSA-{}", n.len() * 8),
            Material::Ec { curve, .. } => format!("EC {curve:?}"),
        };
        f.debug_struct("Jwk")
            .field("kid", &self.kid)
            .field("alg", &self.alg)
            .field("kind", &kind)
            .finish()
    }
}

/// `bytes` without leading zero bytes (some encoders keep a sign byte; ring wants none).
fn unsigned(bytes: Vec<u8>) -> Vec<u8> {
    match bytes.iter().position(|&b| b != 0) {
        Some(0) => bytes,
        Some(first) => bytes[first..].to_vec(),
        None => Vec::new(),
    }
}

impl Jwk {
    /// Reads one key of a set; `Err` says why it cannot verify signatures.
    fn parse(value: &Value) -> Result<Self, String> {
        let field = |name: &str| value.get(name).and_then(Value::as_str);
        let bytes = |name: &str| {
            field(name)
                .and_then(base64::decode_url)
                .ok_or_else(|| format!("`{name}` is missing or not base64url"))
        };
        let kty = field("kty").ok_or("no `kty`")?;
        if let Some(usage) = value.get("use") {
            if usage.as_str() != Some("sig") {
                return Err("not a signature key (`use`)".into());
            }
        }
        if let Some(ops) = value.get("key_ops") {
            let verifies = ops
                .as_array()
                .is_some_and(|ops| ops.iter().any(|op| op.as_str() == Some("verify")));
            if !verifies {
                return Err("`key_ops` does not allow `verify`".into());
            }
        }
        let material = match kty {
            "RSA" => {
                let n = unsigned(bytes("n")?);
                let e = unsigned(bytes("e")?);
                if n.len() < 2048 / 8 {
                    return Err("RSA modulus shorter than 2048 bits".into());
                }
                if e.is_empty() {
                    return Err("RSA exponent is zero".into());
                }
                Material::Rsa { n, e }
            }
            "EC" => {
                let (curve, size) = match field("crv") {
                    Some("P-256") => (Curve::P256, 32),
                    Some("P-384") => (Curve::P384, 48),
                    _ => return Err("EC curve is not P-256 or P-384".into()),
                };
                let (x, y) = (bytes("x")?, bytes("y")?);
                if x.len() != size || y.len() != size {
                    return Err("EC coordinates have the wrong length".into());
                }
                let mut point = Vec::with_capacity(1 + 2 * size);
                point.push(0x04);
                point.extend_from_slice(&x);
                point.extend_from_slice(&y);
                Material::Ec { curve, point }
            }
            _ => return Err("key type is not RSA or EC".into()),
        };
        let kid = match value.get("kid") {
            None | Some(Value::Null) => None,
            Some(Value::String(kid)) => Some(kid.clone()),
            Some(_) => return Err("`kid` is not a string".into()),
        };
        let alg = match value.get("alg") {
            None | Some(Value::Null) => None,
            Some(Value::String(alg)) => Some(alg.clone()),
            Some(_) => return Err("`alg` is not a string".into()),
        };
        Ok(Self { kid, alg, material })
    }

    /// True when this key may verify `alg`: the key type and curve match the algorithm, and a
    /// key that pins its `alg` pins this one. This is what stops key confusion: an RSA key is
    /// never used for ES256, a P-256 key never for ES384, and no key ever for HMAC.
    pub(super) fn fits(&self, alg: JwsAlgorithm) -> bool {
        if self
            .alg
            .as_deref()
            .is_some_and(|pinned| pinned != alg.name())
        {
            return false;
        }
        match (&self.material, alg) {
            (Material::Rsa { .. }, alg) => alg.is_rsa(),
            (Material::Ec { curve, .. }, JwsAlgorithm::ES256) => *curve == Curve::P256,
            (Material::Ec { curve, .. }, JwsAlgorithm::ES384) => *curve == Curve::P384,
            (Material::Ec { .. }, _) => false,
        }
    }

    /// A short description for reasons: `RSA`, `EC P-256`, with the pinned `alg`.
    fn describe(&self) -> String {
        let kind = match &self.material {
            Material::Rsa { .. } => "an RSA key",
            Material::Ec {
                curve: Curve::P256, ..
            } => "an EC P-256 key",
            Material::Ec {
                curve: Curve::P384, ..
            } => "an EC P-384 key",
        };
        match &self.alg {
            Some(alg) => format!("{kind} for {}", super::claims::quoted(alg)),
            None => kind.to_owned(),
        }
    }

    /// Checks `signature` over `message` with `alg` (which must [`fit`](Self::fits)).
    pub(super) fn verify(&self, alg: JwsAlgorithm, message: &[u8], signature: &[u8]) -> bool {
        if !self.fits(alg) {
            return false;
        }
        match &self.material {
            Material::Rsa { n, e } => {
                let params: &signature::RsaParameters = match alg {
                    JwsAlgorithm::RS256 => &signature::RSA_PKCS1_2048_8192_SHA256,
                    JwsAlgorithm::RS384 => &signature::RSA_PKCS1_2048_8192_SHA384,
                    JwsAlgorithm::RS512 => &signature::RSA_PKCS1_2048_8192_SHA512,
                    JwsAlgorithm::PS256 => &signature::RSA_PSS_2048_8192_SHA256,
                    JwsAlgorithm::PS384 => &signature::RSA_PSS_2048_8192_SHA384,
                    JwsAlgorithm::PS512 => &signature::RSA_PSS_2048_8192_SHA512,
                    JwsAlgorithm::ES256 | JwsAlgorithm::ES384 => return false,
                };
                RsaPublicKeyComponents { n, e }
                    .verify(params, message, signature)
                    .is_ok()
            }
            Material::Ec { point, .. } => {
                let algorithm: &'static signature::EcdsaVerificationAlgorithm = match alg {
                    JwsAlgorithm::ES256 => &signature::ECDSA_P256_SHA256_FIXED,
                    JwsAlgorithm::ES384 => &signature::ECDSA_P384_SHA384_FIXED,
                    _ => return false,
                };
                UnparsedPublicKey::new(algorithm, point)
                    .verify(message, signature)
                    .is_ok()
            }
        }
    }
}

/// What a key set holds for a token's `kid` and `alg`.
pub(super) enum Selection {
    /// The key to verify with.
    Found(Arc<Jwk>),
    /// No key with this `kid` (or, without a `kid`, none that fits): maybe a new key.
    Unknown,
    /// The key exists but cannot verify this algorithm, or the choice is ambiguous.
    Refused(String),
}

/// The usable keys of a JWK Set.
#[derive(Debug, Default)]
pub(super) struct KeySet {
    keys: Vec<Arc<Jwk>>,
}

impl KeySet {
    /// Reads a JWK Set document. `Err` when it is not JSON with a `keys` array; keys that
    /// cannot verify signatures are skipped (and logged at DEBUG).
    pub(super) fn parse(json: &[u8]) -> Result<Self, String> {
        let document: Value =
            serde_json::from_slice(json).map_err(|e| format!("the key set is not JSON: {e}"))?;
        let keys = document
            .get("keys")
            .and_then(Value::as_array)
            .ok_or("the key set has no `keys` array")?;
        let mut usable = Vec::with_capacity(keys.len());
        for (i, key) in keys.iter().enumerate() {
            match Jwk::parse(key) {
                Ok(key) => usable.push(Arc::new(key)),
                Err(why) => tracing::debug!(index = i, reason = %why, "JWKS key skipped"),
            }
        }
        Ok(Self { keys: usable })
    }

    /// How many keys can verify signatures.
    pub(super) fn len(&self) -> usize {
        self.keys.len()
    }

    /// The key for a token with `kid` (if any) signed with `alg`. Without a `kid`, the one key
    /// that fits `alg`, when there is exactly one.
    pub(super) fn select(&self, kid: Option<&str>, alg: JwsAlgorithm) -> Selection {
        match kid {
            Some(kid) => {
                let mut named = self
                    .keys
                    .iter()
                    .filter(|k| k.kid.as_deref() == Some(kid))
                    .peekable();
                let Some(first) = named.peek().cloned() else {
                    return Selection::Unknown;
                };
                match named.find(|k| k.fits(alg)) {
                    Some(key) => Selection::Found(key.clone()),
                    None => Selection::Refused(format!(
                        "the token's key is {}, which cannot verify {alg}",
                        first.describe()
                    )),
                }
            }
            None => {
                let mut fitting = self.keys.iter().filter(|k| k.fits(alg));
                match (fitting.next(), fitting.next()) {
                    (Some(key), None) => Selection::Found(key.clone()),
                    (None, _) => Selection::Unknown,
                    (Some(_), Some(_)) => Selection::Refused(format!(
                        "the token names no key (`kid`) and several keys fit {alg}"
                    )),
                }
            }
        }
    }
}

/// What the cache knows.
#[derive(Debug, Default)]
struct State {
    /// The last key set fetched, and when.
    keys: Option<(Arc<KeySet>, Instant)>,
    /// When the last fetch ended (whatever came of it).
    last_attempt: Option<Instant>,
    /// Why the last fetch failed; `None` when it succeeded.
    last_error: Option<String>,
    /// How many fetches ended: lets a caller that waited see that another one fetched.
    attempts: u64,
}

/// The key set of an issuer: a fixed one, or one fetched from `url` and cached.
pub(super) struct Jwks {
    url: String,
    fixed: Option<Arc<KeySet>>,
    pub(super) cache_for: Duration,
    pub(super) refetch_interval: Duration,
    timeout: Duration,
    /// TLS settings for an `https://` key set (`None`: Mozilla's roots).
    tls: crate::fetch::Tls,
    fetch: OnceLock<Result<Fetch, String>>,
    state: RwLock<State>,
    /// Held while fetching, so that concurrent misses share one fetch.
    refetching: tokio::sync::Mutex<()>,
}

impl fmt::Debug for Jwks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = f.debug_struct("Jwks");
        match &self.fixed {
            Some(set) => s.field("fixed_keys", &set.len()),
            None => {
                let cached = self.read().keys.as_ref().map(|(set, _)| set.len());
                s.field("url", &self.url)
                    .field("cache_for", &self.cache_for)
                    .field("refetch_interval", &self.refetch_interval)
                    .field("timeout", &self.timeout)
                    .field("cached_keys", &cached)
            }
        };
        s.finish()
    }
}

impl Jwks {
    /// Keys fetched from `url` (checked to be an http(s) URL).
    pub(super) fn remote(url: &str) -> Result<Self, McpError> {
        crate::fetch::parse_url(url)?;
        Ok(Self {
            url: url.to_owned(),
            fixed: None,
            cache_for: Duration::from_secs(600),
            refetch_interval: Duration::from_secs(30),
            timeout: Duration::from_secs(5),
            tls: None,
            fetch: OnceLock::new(),
            state: RwLock::new(State::default()),
            refetching: tokio::sync::Mutex::new(()),
        })
    }

    /// Uses `set` and never fetches.
    pub(super) fn fix(&mut self, set: KeySet) {
        self.fixed = Some(Arc::new(set));
    }

    /// Sets the fetch timeout (a client made before is dropped).
    pub(super) fn set_timeout(&mut self, timeout: Duration) {
        self.timeout = timeout;
        self.fetch = OnceLock::new();
    }

    #[cfg(feature = "https")]
    pub(super) fn set_tls(&mut self, tls: crate::fetch::Tls) {
        self.tls = tls;
        self.fetch = OnceLock::new();
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, State> {
        self.state.read().unwrap_or_else(|e| e.into_inner())
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, State> {
        self.state.write().unwrap_or_else(|e| e.into_inner())
    }

    /// The key that verifies a token with `kid` and `alg`.
    ///
    /// From a fresh cache when it has the key; otherwise after one fetch shared by every caller
    /// waiting (an unknown `kid` fetches at most once per refetch interval; an expired or empty
    /// cache fetches at once, but not sooner than a short backoff after a failed fetch). When
    /// the fetch fails, the keys fetched before keep serving; with none, the answer is
    /// [`VerifyError::Unavailable`].
    pub(super) async fn key_for(
        &self,
        kid: Option<&str>,
        alg: JwsAlgorithm,
    ) -> Result<Arc<Jwk>, VerifyError> {
        if let Some(set) = &self.fixed {
            return match set.select(kid, alg) {
                Selection::Found(key) => Ok(key),
                Selection::Unknown => Err(unknown_key(kid)),
                Selection::Refused(why) => Err(VerifyError::Invalid(why)),
            };
        }
        let seen = {
            let state = self.read();
            if let Some(set) = self.fresh(&state, Instant::now()) {
                match set.select(kid, alg) {
                    Selection::Found(key) => return Ok(key),
                    Selection::Refused(why) => return Err(VerifyError::Invalid(why)),
                    Selection::Unknown => {}
                }
            }
            state.attempts
        };

        let guard = self.refetching.lock().await;
        let fetch_now = {
            let state = self.read();
            // Another caller fetched while this one waited: its answer is as new as any.
            state.attempts == seen && self.may_fetch(&state, Instant::now())
        };
        if fetch_now {
            let outcome = self.download().await;
            let mut state = self.write();
            let now = Instant::now();
            state.attempts += 1;
            state.last_attempt = Some(now);
            match outcome {
                Ok(set) => {
                    if set.len() == 0 {
                        tracing::warn!(url = %self.url, "the JWKS holds no key that can verify signatures");
                    }
                    state.keys = Some((Arc::new(set), now));
                    state.last_error = None;
                }
                Err(why) => {
                    tracing::warn!(url = %self.url, error = %why, "JWKS fetch failed");
                    state.last_error = Some(why);
                }
            }
        }
        drop(guard);

        let state = self.read();
        let Some((set, _)) = &state.keys else {
            let why = state.last_error.as_deref().unwrap_or("not fetched yet");
            return Err(VerifyError::unavailable(format!(
                "no signing keys from {}: {why}",
                self.url
            )));
        };
        match set.select(kid, alg) {
            Selection::Found(key) => Ok(key),
            Selection::Refused(why) => Err(VerifyError::Invalid(why)),
            Selection::Unknown => match &state.last_error {
                // The key may be new, and the set could not be read to know.
                Some(why) => Err(VerifyError::unavailable(format!(
                    "the token's key is not among the keys known, and {} could not be read: {why}",
                    self.url
                ))),
                None => Err(unknown_key(kid)),
            },
        }
    }

    /// The cached set when it is younger than the cache lifetime.
    fn fresh<'s>(&self, state: &'s State, now: Instant) -> Option<&'s Arc<KeySet>> {
        state
            .keys
            .as_ref()
            .filter(|(_, at)| now.saturating_duration_since(*at) < self.cache_for)
            .map(|(set, _)| set)
    }

    /// Whether a fetch may start now: the rate limit for unknown keys (fresh cache), the
    /// backoff after a failure (empty or expired cache).
    fn may_fetch(&self, state: &State, now: Instant) -> bool {
        let Some(last) = state.last_attempt else {
            return true;
        };
        let since = now.saturating_duration_since(last);
        if self.fresh(state, now).is_some() {
            since >= self.refetch_interval
        } else if state.last_error.is_some() {
            since >= self.refetch_interval.min(FAILURE_BACKOFF)
        } else {
            true
        }
    }

    /// GETs and reads the key set.
    async fn download(&self) -> Result<KeySet, String> {
        let fetch = self
            .fetch
            .get_or_init(|| {
                Fetch::new(self.timeout, &self.tls).map_err(|e| e.message().into_owned())
            })
            .as_ref()
            .map_err(Clone::clone)?;
        let answer = fetch
            .get(&self.url)
            .await
            .map_err(|e| e.message().into_owned())?;
        if !answer.status.is_success() {
            return Err(format!("the key set endpoint answered {}", answer.status));
        }
        KeySet::parse(&answer.body)
    }
}

fn unknown_key(kid: Option<&str>) -> VerifyError {
    VerifyError::invalid(match kid {
        Some(_) => "no key of the issuer has the token's `kid`",
        None => "the token names no key (`kid`) and no single key fits its algorithm",
    })
}

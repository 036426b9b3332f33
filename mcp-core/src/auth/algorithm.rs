//! [`JwsAlgorithm`]: the signature algorithms a JWT may be checked with.

use std::fmt;

/// A JWS signature algorithm [`JwtVerifier`](super::JwtVerifier) can check (RFC 7518 §3).
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
    /// use modelctx_core::auth::JwsAlgorithm;
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

//! PKCE (RFC 7636) with the `S256` method, and the random `state` of an authorization request.

use sha2::{Digest, Sha256};

use crate::error::McpError;

/// A code verifier and its `S256` challenge.
pub(crate) struct Pkce {
    /// The secret sent to the token endpoint (43 characters of base64url).
    pub(crate) verifier: String,
    /// `BASE64URL(SHA256(verifier))`, sent to the authorization endpoint.
    pub(crate) challenge: String,
}

impl std::fmt::Debug for Pkce {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pkce")
            .field("verifier", &"<redacted>")
            .field("challenge", &self.challenge)
            .finish()
    }
}

impl Pkce {
    /// A fresh verifier of 32 random bytes (RFC 7636 §4.1 recommends exactly this).
    pub(crate) fn new() -> Result<Self, McpError> {
        Ok(Self::from_verifier(random_token()?))
    }

    /// The pair for a given verifier.
    pub(crate) fn from_verifier(verifier: String) -> Self {
        let challenge = s256(&verifier);
        Self {
            verifier,
            challenge,
        }
    }
}

/// `BASE64URL-NOPAD(SHA256(ASCII(verifier)))` (RFC 7636 §4.2).
pub(crate) fn s256(verifier: &str) -> String {
    crate::base64::encode_url(&Sha256::digest(verifier.as_bytes()))
}

/// 32 random bytes as base64url without padding (43 characters): PKCE verifiers and `state`.
pub(crate) fn random_token() -> Result<String, McpError> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| McpError::internal(format!("no randomness: {e}")))?;
    Ok(crate::base64::encode_url(&bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc7636_appendix_b() {
        let pkce = Pkce::from_verifier("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk".to_owned());
        assert_eq!(
            pkce.challenge,
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
        assert!(!format!("{pkce:?}").contains("dBjf"));
    }

    #[test]
    fn fresh_verifiers_are_43_characters_and_differ() {
        let a = Pkce::new().unwrap();
        let b = Pkce::new().unwrap();
        assert_eq!(a.verifier.len(), 43);
        assert_ne!(a.verifier, b.verifier);
        assert_eq!(a.challenge, s256(&a.verifier));
    }
}

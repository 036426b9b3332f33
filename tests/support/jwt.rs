//! Signing keys for tests: an RSA key (RS256) and a fresh P-256 key (ES256), their JWKS, and
//! compact JWTs signed with them.

use std::time::{SystemTime, UNIX_EPOCH};

use modelctx::base64::encode_url;
use ring::rand::SystemRandom;
use ring::signature::{
    EcdsaKeyPair, KeyPair, RsaKeyPair, RsaPublicKeyComponents, ECDSA_P256_SHA256_FIXED_SIGNING,
    RSA_PKCS1_SHA256,
};
use serde_json::{json, Value};

/// A 2048-bit RSA key made for these tests (PKCS#8 DER); never used anywhere else.
const RSA_KEY: &[u8] = include_bytes!("../../mcp-core/tests-data/rsa-test-key.pk8");

/// Seconds since the Unix epoch.
pub fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// The test's keys.
pub struct Keys {
    rsa: RsaKeyPair,
    ec: EcdsaKeyPair,
    rng: SystemRandom,
}

impl Keys {
    pub fn new() -> Self {
        let rng = SystemRandom::new();
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).unwrap();
        let ec = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref(), &rng)
            .unwrap();
        Self {
            rsa: RsaKeyPair::from_pkcs8(RSA_KEY).unwrap(),
            ec,
            rng,
        }
    }

    /// The RSA key as a JWK (`kid` `rsa-1`).
    pub fn rsa_jwk(&self) -> Value {
        let public = RsaPublicKeyComponents::<Vec<u8>>::from(self.rsa.public());
        json!({"kty": "RSA", "kid": "rsa-1", "use": "sig", "alg": "RS256",
               "n": encode_url(&public.n), "e": encode_url(&public.e)})
    }

    /// The EC key as a JWK (`kid` `ec-1`).
    pub fn ec_jwk(&self) -> Value {
        let point = self.ec.public_key().as_ref();
        json!({"kty": "EC", "kid": "ec-1", "use": "sig", "alg": "ES256", "crv": "P-256",
               "x": encode_url(&point[1..33]), "y": encode_url(&point[33..65])})
    }

    /// Both keys as a key set.
    pub fn jwks(&self) -> Value {
        json!({"keys": [self.rsa_jwk(), self.ec_jwk()]})
    }

    /// `claims` signed with RS256 under `kid` `rsa-1`.
    pub fn rs256(&self, claims: &Value) -> String {
        self.sign(
            &json!({"alg": "RS256", "typ": "JWT", "kid": "rsa-1"}),
            claims,
        )
    }

    /// `claims` signed with ES256 under `kid` `ec-1`.
    pub fn es256(&self, claims: &Value) -> String {
        self.sign(
            &json!({"alg": "ES256", "typ": "JWT", "kid": "ec-1"}),
            claims,
        )
    }

    /// `claims` under `header`, signed with the key its `alg` names (RS256 or ES256); any other
    /// `alg` gets an empty signature.
    pub fn sign(&self, header: &Value, claims: &Value) -> String {
        let input = format!(
            "{}.{}",
            encode_url(header.to_string().as_bytes()),
            encode_url(claims.to_string().as_bytes())
        );
        let signature = match header["alg"].as_str() {
            Some("RS256") => {
                let mut out = vec![0; self.rsa.public().modulus_len()];
                self.rsa
                    .sign(&RSA_PKCS1_SHA256, &self.rng, input.as_bytes(), &mut out)
                    .unwrap();
                out
            }
            Some("ES256") => self
                .ec
                .sign(&self.rng, input.as_bytes())
                .unwrap()
                .as_ref()
                .to_vec(),
            _ => Vec::new(),
        };
        format!("{input}.{}", encode_url(&signature))
    }
}

impl Default for Keys {
    fn default() -> Self {
        Self::new()
    }
}

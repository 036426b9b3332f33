//! What checking a bearer token costs: `auth-verify <iterations>` verifies one RS256 and one
//! ES256 JWT with `JwtVerifier` (a fixed key set: no network) `iterations` times each, with
//! every signature checked and with verified tokens remembered (the default), and prints one
//! JSON line with the microseconds per verification.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use modelctx::auth::{JwtVerifier, TokenVerifier};
use modelctx::base64::encode_url;
use ring::rand::SystemRandom;
use ring::signature::{
    EcdsaKeyPair, KeyPair, RsaKeyPair, RsaPublicKeyComponents, ECDSA_P256_SHA256_FIXED_SIGNING,
    RSA_PKCS1_SHA256,
};
use serde_json::json;

const RSA_KEY: &[u8] = include_bytes!("../../../mcp-core/tests-data/rsa-test-key.pk8");

fn jws(
    header: serde_json::Value,
    claims: &serde_json::Value,
    sign: impl Fn(&[u8]) -> Vec<u8>,
) -> String {
    let input = format!(
        "{}.{}",
        encode_url(header.to_string().as_bytes()),
        encode_url(claims.to_string().as_bytes())
    );
    let signature = sign(input.as_bytes());
    format!("{input}.{}", encode_url(&signature))
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let n: u32 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(20_000);
    let rng = SystemRandom::new();
    let rsa = RsaKeyPair::from_pkcs8(RSA_KEY).expect("the test RSA key");
    let pkcs8 =
        EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).expect("EC key");
    let ec = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref(), &rng)
        .expect("EC key");
    let public = RsaPublicKeyComponents::<Vec<u8>>::from(rsa.public());
    let point = ec.public_key().as_ref();
    let jwks = json!({"keys": [
        {"kty": "RSA", "kid": "r", "alg": "RS256", "n": encode_url(&public.n), "e": encode_url(&public.e)},
        {"kty": "EC", "kid": "e", "alg": "ES256", "crv": "P-256",
         "x": encode_url(&point[1..33]), "y": encode_url(&point[33..65])}
    ]});
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let claims = json!({"iss": "https://issuer", "sub": "bench", "aud": "https://mcp/mcp",
                        "exp": now + 3600, "scope": "a b c"});
    let rs256 = jws(json!({"alg": "RS256", "kid": "r"}), &claims, |m| {
        let mut out = vec![0; rsa.public().modulus_len()];
        rsa.sign(&RSA_PKCS1_SHA256, &rng, m, &mut out)
            .expect("sign");
        out
    });
    let es256 = jws(json!({"alg": "ES256", "kid": "e"}), &claims, |m| {
        ec.sign(&rng, m).expect("sign").as_ref().to_vec()
    });
    let verifier = |remember: Duration| {
        JwtVerifier::new(
            "https://issuer",
            "http://127.0.0.1:1/jwks",
            "https://mcp/mcp",
        )
        .expect("verifier")
        .remember_tokens(remember)
        .with_keys(&jwks.to_string())
        .expect("keys")
    };
    let checking = verifier(Duration::ZERO);
    let remembering = verifier(Duration::from_secs(300));
    let mut figures = serde_json::Map::new();
    for (name, verifier, token) in [
        ("rs256_us", &checking, &rs256),
        ("es256_us", &checking, &es256),
        ("rs256_remembered_us", &remembering, &rs256),
        ("es256_remembered_us", &remembering, &es256),
    ] {
        verifier.verify(token).await.expect("valid");
        let start = Instant::now();
        for _ in 0..n {
            verifier.verify(token).await.expect("valid");
        }
        let us = start.elapsed().as_secs_f64() * 1e6 / f64::from(n);
        figures.insert(name.into(), json!((us * 100.0).round() / 100.0));
    }
    println!("{}", serde_json::Value::Object(figures));
}

//! [`KeyRing`]: the keys that seal and open `requestState`.

use std::fmt;
use std::sync::Arc;

use chacha20poly1305::aead::{Aead, KeyInit};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};
use sha2::{Digest, Sha256};

use super::envelope::OpenError;
use crate::error::McpError;

/// The prefix of every sealed state (format version 1).
const PREFIX: &str = "s1.";
const ID_LEN: usize = 4;
const NONCE_LEN: usize = 24;
const TAG_LEN: usize = 16;

/// Keys for sealing `requestState`: the first key seals, every key opens. Replicas behind a
/// load balancer share one ring; to rotate, put a new key first and drop the old one once the
/// state TTL has passed.
///
/// Keys are 32 random bytes, written as base64 (standard or URL-safe, padding optional).
///
/// ```
/// use modelctx_core::request_state::KeyRing;
///
/// let ring = KeyRing::random();
/// assert_eq!(ring.len(), 1);
/// assert!(KeyRing::from_base64("not a key").is_err());
/// ```
#[derive(Clone)]
pub struct KeyRing {
    keys: Arc<[RingKey]>,
}

struct RingKey {
    id: [u8; ID_LEN],
    cipher: XChaCha20Poly1305,
}

impl fmt::Debug for KeyRing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Key ids only: never the keys.
        let ids: Vec<String> = self.keys.iter().map(|k| hex(&k.id)).collect();
        f.debug_struct("KeyRing").field("key_ids", &ids).finish()
    }
}

impl KeyRing {
    /// A ring of one fresh random key (what a single process needs; states do not survive a
    /// restart).
    pub fn random() -> Self {
        Self::from_keys([random_key()]).unwrap_or_else(|_| unreachable!("one key is never empty"))
    }

    /// A ring of these 32-byte keys, the first one sealing. Fails when `keys` is empty.
    pub fn from_keys(keys: impl IntoIterator<Item = [u8; 32]>) -> Result<Self, McpError> {
        let keys: Vec<RingKey> = keys
            .into_iter()
            .map(|key| {
                let hash = Sha256::digest(key);
                let mut id = [0u8; ID_LEN];
                id.copy_from_slice(&hash[..ID_LEN]);
                RingKey {
                    id,
                    cipher: XChaCha20Poly1305::new(&key.into()),
                }
            })
            .collect();
        if keys.is_empty() {
            return Err(McpError::internal("a requestState key ring needs a key"));
        }
        Ok(Self { keys: keys.into() })
    }

    /// A ring from comma-separated base64 keys (e.g. an environment variable), the first one
    /// sealing.
    pub fn from_base64(list: &str) -> Result<Self, McpError> {
        let mut keys = Vec::new();
        for (i, text) in list.split(',').map(str::trim).enumerate() {
            let unpadded = text.trim_end_matches('=');
            let bytes = crate::base64::decode_url(unpadded)
                .or_else(|| {
                    crate::base64::decode_url(&unpadded.replace('+', "-").replace('/', "_"))
                })
                .ok_or_else(|| McpError::internal(format!("requestState key {i} is not base64")))?;
            let key: [u8; 32] = bytes.try_into().map_err(|b: Vec<u8>| {
                McpError::internal(format!(
                    "requestState key {i} has {} bytes; keys are 32 bytes",
                    b.len()
                ))
            })?;
            keys.push(key);
        }
        Self::from_keys(keys)
    }

    /// A fresh random key as URL-safe base64, for configuration.
    pub fn generate_key() -> String {
        crate::base64::encode_url(&random_key())
    }

    /// How many keys the ring holds.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Always false: a ring holds at least one key.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Seals `plain` with the first key: `s1.` + base64url(key id, nonce, ciphertext and tag).
    pub(crate) fn seal(&self, plain: &[u8]) -> Result<String, McpError> {
        let key = &self.keys[0];
        let mut nonce = [0u8; NONCE_LEN];
        getrandom::fill(&mut nonce)
            .map_err(|e| McpError::internal(format!("no randomness: {e}")))?;
        let sealed = key
            .cipher
            .encrypt(XNonce::from_slice(&nonce), plain)
            .map_err(|_| McpError::internal("requestState could not be sealed"))?;
        let mut out = Vec::with_capacity(ID_LEN + NONCE_LEN + sealed.len());
        out.extend_from_slice(&key.id);
        out.extend_from_slice(&nonce);
        out.extend_from_slice(&sealed);
        Ok(format!("{PREFIX}{}", crate::base64::encode_url(&out)))
    }

    /// Opens a sealed state with whichever key sealed it.
    pub(crate) fn open(&self, sealed: &str) -> Result<Vec<u8>, OpenError> {
        let body = sealed.strip_prefix(PREFIX).ok_or(OpenError::Malformed)?;
        let bytes = crate::base64::decode_url(body).ok_or(OpenError::Malformed)?;
        if bytes.len() < ID_LEN + NONCE_LEN + TAG_LEN {
            return Err(OpenError::Malformed);
        }
        let (id, rest) = bytes.split_at(ID_LEN);
        let (nonce, ciphertext) = rest.split_at(NONCE_LEN);
        let key = self
            .keys
            .iter()
            .find(|k| k.id == id)
            .ok_or_else(|| OpenError::UnknownKey(hex(id)))?;
        key.cipher
            .decrypt(XNonce::from_slice(nonce), ciphertext)
            .map_err(|_| OpenError::Tampered)
    }
}

fn random_key() -> [u8; 32] {
    let mut key = [0u8; 32];
    if let Err(e) = getrandom::fill(&mut key) {
        // Without an OS random source no key is safe; refuse to run rather than seal weakly.
        panic!("no OS randomness for a requestState key: {e}");
    }
    key
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

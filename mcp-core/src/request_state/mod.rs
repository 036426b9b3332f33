//! Sealed `requestState` for 2026 multi-round-trip requests.
//!
//! When a handler pauses for client input, the server hands the client an opaque
//! `requestState` that comes back on the retry. Sealed (the default of
//! [`McpServer`](crate::server::McpServer); one line on a low-level
//! [`Server`](crate::lowlevel::Server): [`seal_request_state`](crate::lowlevel::Server::seal_request_state)),
//! that state is encrypted and authenticated with XChaCha20-Poly1305 (the RustCrypto
//! `chacha20poly1305` crate) under the first key of a [`KeyRing`], and carries:
//!
//! - the method, the tool or prompt name (or resource URI) and a SHA-256 digest of the
//!   arguments it was issued for,
//! - a digest of every question asked in that round, so an answer is only taken for the
//!   question it answers,
//! - the answers of earlier rounds (a handler runs again from the top on every round),
//! - the handler's own state string, if it set one,
//! - an expiry (default [`DEFAULT_TTL`], 30 minutes).
//!
//! Every way opening can fail (not ours, tampered, expired, issued for another request, sealed
//! with a key no longer in the ring) answers `-32602 Invalid or expired requestState`; the real
//! reason goes to the log (`tracing`, warn level).
//!
//! ```
//! use modelctx_core::request_state::KeyRing;
//!
//! // One key per deployment, shared by every replica; rotate by putting the new key first
//! // and keeping the old one until the TTL has passed.
//! let new = KeyRing::generate_key();
//! let old = KeyRing::generate_key();
//! let ring = KeyRing::from_base64(&format!("{new},{old}")).unwrap();
//! assert_eq!(ring.len(), 2);
//! ```

mod digest;
mod envelope;
mod keyring;

use std::time::Duration;

pub(crate) use digest::digest_json;
pub(crate) use envelope::{Answer, Binding, Envelope, OpenError};
pub use keyring::KeyRing;

/// How long a sealed `requestState` stays valid by default: 30 minutes (a person may take a
/// while to fill in a form).
pub const DEFAULT_TTL: Duration = Duration::from_secs(30 * 60);

impl From<KeyRing> for Sealer {
    fn from(ring: KeyRing) -> Self {
        Self::new(ring)
    }
}

/// The sealing configuration of a server: its key ring and the state's lifetime.
#[derive(Clone, Debug)]
pub struct Sealer {
    pub(crate) ring: KeyRing,
    pub(crate) ttl: Duration,
}

impl Sealer {
    /// Seals with `ring` and the default TTL ([`DEFAULT_TTL`]).
    pub fn new(ring: KeyRing) -> Self {
        Self {
            ring,
            ttl: DEFAULT_TTL,
        }
    }

    /// Sets how long a state stays valid.
    pub fn ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl;
        self
    }

    /// Seals `envelope` (its expiry is set from the TTL).
    pub(crate) fn seal(&self, mut envelope: Envelope) -> Result<String, crate::McpError> {
        envelope.expires = envelope::now_secs().saturating_add(self.ttl.as_secs());
        self.ring.seal(&serde_json::to_vec(&envelope)?)
    }

    /// Opens a state issued for `binding`.
    pub(crate) fn open(&self, sealed: &str, binding: &Binding) -> Result<Envelope, OpenError> {
        let plain = self.ring.open(sealed)?;
        let envelope: Envelope =
            serde_json::from_slice(&plain).map_err(|_| OpenError::Malformed)?;
        envelope.check(binding, envelope::now_secs())?;
        Ok(envelope)
    }

    /// Opens arbitrary sealed bytes (for fuzzing the unsealer; no binding check).
    #[doc(hidden)]
    pub fn open_bytes(&self, sealed: &str) -> bool {
        self.ring.open(sealed).is_ok()
    }
}

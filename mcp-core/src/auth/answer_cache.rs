//! [`AnswerCache`]: verdicts on tokens remembered for a while, keyed by a SHA-256 of the token
//! (the token itself is never kept), bounded in size. Introspection answers and verified JWTs
//! use it.

use std::collections::HashMap;
use std::time::Instant;

use super::{Principal, VerifyError};

/// The most verdicts kept.
pub(super) const MAX_ENTRIES: usize = 10_000;

/// The key of `token` in the cache.
pub(super) fn key(token: &str) -> [u8; 32] {
    use sha2::{Digest, Sha256};
    Sha256::digest(token.as_bytes()).into()
}

/// One remembered answer: the principal, or why the token was refused.
pub(super) struct Entry {
    pub(super) outcome: Result<Principal, String>,
    pub(super) until: Instant,
}

/// Answers by SHA-256 of the token (the token itself is never kept).
#[derive(Default)]
pub(super) struct AnswerCache {
    pub(super) entries: HashMap<[u8; 32], Entry>,
}

impl AnswerCache {
    /// The answer for `key`, while it lasts.
    pub(super) fn get(
        &mut self,
        key: &[u8; 32],
        now: Instant,
    ) -> Option<Result<Principal, VerifyError>> {
        let entry = self.entries.get(key)?;
        if entry.until <= now {
            self.entries.remove(key);
            return None;
        }
        Some(entry.outcome.clone().map_err(VerifyError::Invalid))
    }

    /// Keeps `entry`, making room first: expired answers go, then (still full) the tenth of
    /// the answers closest to expiring.
    pub(super) fn insert(&mut self, key: [u8; 32], entry: Entry, now: Instant, max: usize) {
        if self.entries.len() >= max && !self.entries.contains_key(&key) {
            self.entries.retain(|_, e| e.until > now);
            if self.entries.len() >= max {
                let mut by_expiry: Vec<([u8; 32], Instant)> =
                    self.entries.iter().map(|(k, e)| (*k, e.until)).collect();
                by_expiry.sort_unstable_by_key(|(_, until)| *until);
                let drop = (max / 10).max(1).max(self.entries.len() + 1 - max);
                for (k, _) in by_expiry.into_iter().take(drop) {
                    self.entries.remove(&k);
                }
            }
        }
        self.entries.insert(key, entry);
    }
}

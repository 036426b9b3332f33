//! Cache hints (`ttlMs`, `cacheScope`) stamped on cacheable 2026 results.

use serde::{Deserialize, Serialize};

pub use crate::era::CACHEABLE_METHODS;

/// Who may reuse a cached result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CacheScope {
    /// Shareable across users (no user-specific data).
    Public,
    /// Reusable only within the same authorization context.
    Private,
}

/// How long, and for whom, a result stays fresh.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct CacheHint {
    /// Milliseconds the result stays fresh (0: immediately stale).
    pub ttl_ms: u64,
    /// Who may reuse it.
    pub scope: CacheScope,
}

impl Default for CacheHint {
    /// `ttlMs: 0`, `cacheScope: "private"`: never reuse, never share. Safe for any server.
    fn default() -> Self {
        Self {
            ttl_ms: 0,
            scope: CacheScope::Private,
        }
    }
}

impl CacheHint {
    /// Shareable across users for `ttl_ms`.
    pub fn public(ttl_ms: u64) -> Self {
        Self {
            ttl_ms,
            scope: CacheScope::Public,
        }
    }

    /// Reusable within one authorization context for `ttl_ms`.
    pub fn private(ttl_ms: u64) -> Self {
        Self {
            ttl_ms,
            scope: CacheScope::Private,
        }
    }
}

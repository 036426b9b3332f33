//! The scopes each method (or each tool, prompt, resource) requires of a caller's token.

use std::collections::HashMap;
use std::sync::Arc;

/// Finds the scopes of a named target (tool, prompt, resource URI) in a registry that changes
/// at run time (the high-level server's).
pub(crate) type ScopeLookup = Arc<dyn Fn(&str, &str) -> Vec<String> + Send + Sync>;

/// Required scopes: fixed rules from [`Server::require_scopes`](super::Server::require_scopes)
/// plus the high-level registry's.
#[derive(Clone, Default)]
pub(crate) struct ScopeRules {
    /// (method, target or `None` for every call of the method) -> scopes.
    fixed: HashMap<(String, Option<String>), Vec<String>>,
    lookup: Option<ScopeLookup>,
}

impl ScopeRules {
    pub(crate) fn insert(&mut self, method: &str, target: Option<&str>, scopes: Vec<String>) {
        self.fixed
            .insert((method.to_owned(), target.map(str::to_owned)), scopes);
    }

    pub(crate) fn set_lookup(&mut self, lookup: ScopeLookup) {
        self.lookup = Some(lookup);
    }

    /// Every scope a call of `method` on `target` needs: the method's own, the target's fixed
    /// ones and the registry's, without repeats.
    pub(crate) fn required(&self, method: &str, target: Option<&str>) -> Vec<String> {
        let mut all: Vec<String> = Vec::new();
        let mut add = |scopes: &[String]| {
            for s in scopes {
                if !all.contains(s) {
                    all.push(s.clone());
                }
            }
        };
        if let Some(scopes) = self.fixed.get(&(method.to_owned(), None)) {
            add(scopes);
        }
        if let Some(target) = target {
            if let Some(scopes) = self
                .fixed
                .get(&(method.to_owned(), Some(target.to_owned())))
            {
                add(scopes);
            }
            if let Some(lookup) = &self.lookup {
                add(&lookup(method, target));
            }
        }
        all
    }
}

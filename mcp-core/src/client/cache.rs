//! The optional cache of cacheable 2026 results (`ttlMs`, `cacheScope`), keyed by method and
//! the params that affect the result (everything but `_meta`).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;

use crate::era::CACHEABLE_METHODS;

/// The largest `ttlMs` honoured (one day): a server's typo never pins a result for ever.
const MAX_TTL: Duration = Duration::from_secs(24 * 3600);

#[derive(Default)]
pub(crate) struct ResultCache {
    entries: Mutex<HashMap<String, (Instant, Box<RawValue>)>>,
}

#[derive(Deserialize)]
struct Hints {
    #[serde(rename = "ttlMs")]
    ttl_ms: Option<f64>,
    #[serde(rename = "cacheScope")]
    cache_scope: Option<String>,
    #[serde(rename = "resultType")]
    result_type: Option<String>,
}

impl ResultCache {
    /// The key of a request, when its method is cacheable.
    pub(crate) fn key(method: &str, params: &Value) -> Option<String> {
        if !CACHEABLE_METHODS.contains(&method) {
            return None;
        }
        let mut params = params.clone();
        if let Value::Object(map) = &mut params {
            map.remove("_meta");
        }
        Some(format!("{method} {params}"))
    }

    pub(crate) fn get(&self, key: &str) -> Option<Box<RawValue>> {
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        match entries.get(key) {
            Some((until, raw)) if *until > Instant::now() => Some(raw.clone()),
            Some(_) => {
                entries.remove(key);
                None
            }
            None => None,
        }
    }

    /// Keeps `raw` when it is a complete result with a positive `ttlMs` and a `cacheScope`.
    pub(crate) fn put(&self, key: String, raw: &RawValue) {
        let Ok(hints) = serde_json::from_str::<Hints>(raw.get()) else {
            return;
        };
        let complete = hints.result_type.as_deref().is_none_or(|t| t == "complete");
        let Some(ttl) = hints.ttl_ms.filter(|t| *t > 0.0 && t.is_finite()) else {
            return;
        };
        if !complete || hints.cache_scope.is_none() {
            return;
        }
        let ttl = Duration::from_secs_f64(ttl / 1000.0).min(MAX_TTL);
        self.entries
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(key, (Instant::now() + ttl, raw.to_owned()));
    }

    /// Drops what a server notification makes stale.
    pub(crate) fn invalidate(&self, method: &str, params: &Value) {
        let stale: &[&str] = match method {
            "notifications/tools/list_changed" => &["tools/list "],
            "notifications/prompts/list_changed" => &["prompts/list "],
            "notifications/resources/list_changed" => {
                &["resources/list ", "resources/templates/list "]
            }
            "notifications/resources/updated" => &["resources/read "],
            _ => return,
        };
        // A resource update drops the reads of its URI only (all reads when it names none).
        let uri = params
            .get("uri")
            .and_then(Value::as_str)
            .map(|uri| Value::from(uri).to_string());
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        entries.retain(|key, _| {
            let hit = stale.iter().any(|prefix| key.starts_with(prefix));
            let this_uri = match (&uri, method) {
                (Some(uri), "notifications/resources/updated") => key.contains(uri.as_str()),
                _ => true,
            };
            !(hit && this_uri)
        });
    }
}

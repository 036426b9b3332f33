//! Stamping 2026 results: `resultType`, the serverInfo `_meta`, cache hints, subscription id.

use serde_json::{Map, Value};

use crate::era::{META_SERVER_INFO, META_SUBSCRIPTION_ID};
use crate::jsonrpc::RequestId;
use crate::lowlevel::{CacheHint, Server, CACHEABLE_METHODS};

/// Adds the 2026 envelope to a result. Fields the handler set itself are left alone.
pub(crate) fn stamp_modern<S>(
    server: &Server<S>,
    method: &str,
    id: &RequestId,
    result: &mut Value,
) {
    let Value::Object(map) = result else {
        return;
    };
    let result_type = map
        .entry("resultType")
        .or_insert_with(|| Value::from("complete"));
    let complete = result_type == "complete";
    if complete && CACHEABLE_METHODS.contains(&method) {
        let hint = server.cache_hints.get(method).copied().unwrap_or_default();
        stamp_cache(map, hint);
    }
    let meta = map
        .entry("_meta")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Value::Object(meta) = meta {
        if !meta.contains_key(META_SERVER_INFO) {
            let mut info = Map::new();
            info.insert("name".into(), Value::from(server.info.name.as_str()));
            info.insert("version".into(), Value::from(server.info.version.as_str()));
            meta.insert(META_SERVER_INFO.into(), Value::Object(info));
        }
        if method == "subscriptions/listen" {
            meta.insert(META_SUBSCRIPTION_ID.into(), id.to_value());
        }
    }
}

fn stamp_cache(map: &mut Map<String, Value>, hint: CacheHint) {
    map.entry("ttlMs")
        .or_insert_with(|| Value::from(hint.ttl_ms));
    map.entry("cacheScope")
        .or_insert_with(|| serde_json::to_value(hint.scope).unwrap_or(Value::Null));
}

//! Protocol versions and the two eras: the 2025 handshake and the 2026 per-request envelope.

use std::sync::Arc;

use serde::Deserialize as _;
use serde_json::Value;

use crate::error::{codes, echo_capped, McpError};
use crate::raw_meta::RawMeta;
use crate::types::{ClientCapabilities, Implementation, LoggingLevel, Meta};

/// The newest revision, served statelessly (per-request `_meta`).
pub const LATEST_PROTOCOL_VERSION: &str = "2026-07-28";

/// The newest revision that uses the `initialize` handshake.
pub const LATEST_LEGACY_VERSION: &str = "2025-11-25";

/// Revisions served statelessly: a request whose `_meta` names one of these is served per request.
pub const MODERN_VERSIONS: &[&str] = &["2026-07-28"];

/// Revisions accepted in `initialize` negotiation, newest first.
pub const LEGACY_VERSIONS: &[&str] = &["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// The `_meta` key naming the protocol version of a 2026 request.
pub const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// The `_meta` key carrying the client's capabilities on a 2026 request.
pub const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// The `_meta` key carrying the client's identity on a 2026 request.
pub const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
/// The `_meta` key asking for log messages on a 2026 request.
pub const META_LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
/// The `_meta` key of the server's identity on 2026 results.
pub const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
/// The `_meta` key tagging notifications of a `subscriptions/listen` stream.
pub const META_SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

/// Which generation of the protocol a message belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Era {
    /// 2025-11-25 and older: `initialize` handshake, sessions, server-to-client requests.
    Legacy,
    /// 2026-07-28 and newer: stateless, every request carries its own `_meta` envelope.
    Modern,
}

/// Methods that do not exist on the 2026 wire (answered `-32601` there).
pub const REMOVED_IN_MODERN: &[&str] = &[
    "initialize",
    "notifications/initialized",
    "ping",
    "logging/setLevel",
    "resources/subscribe",
    "resources/unsubscribe",
    "notifications/roots/list_changed",
    "notifications/elicitation/complete",
];

/// Methods whose complete 2026 results carry `ttlMs` and `cacheScope` (the server stamps them,
/// a client may cache by them).
pub const CACHEABLE_METHODS: &[&str] = &[
    "server/discover",
    "tools/list",
    "prompts/list",
    "resources/list",
    "resources/templates/list",
    "resources/read",
];

/// Methods that exist only on the 2026 wire (answered `-32601` in a 2025 session).
pub const MODERN_ONLY: &[&str] = &["server/discover", "subscriptions/listen"];

/// The version a server answers `initialize` with: the client's when supported, else the newest.
///
/// ```
/// use modelctx_core::era::negotiate_legacy_version;
/// assert_eq!(negotiate_legacy_version("2025-06-18"), "2025-06-18");
/// assert_eq!(negotiate_legacy_version("1999-01-01"), "2025-11-25");
/// ```
pub fn negotiate_legacy_version(requested: &str) -> &'static str {
    LEGACY_VERSIONS
        .iter()
        .find(|v| **v == requested)
        .copied()
        .unwrap_or(LATEST_LEGACY_VERSION)
}

/// The validated envelope of a 2026 request (`params._meta`).
#[derive(Debug, Clone)]
pub struct RequestEnvelope {
    /// The protocol version of this request.
    pub protocol_version: Arc<str>,
    /// What the client declared it can do, for this request only.
    pub client_capabilities: Arc<ClientCapabilities>,
    /// Who the client says it is.
    pub client_info: Option<Arc<Implementation>>,
    /// The lowest log level the client wants for this request, if it wants logs.
    pub log_level: Option<LoggingLevel>,
}

/// Reads `params._meta` of a request: `None` when it has no protocol-version key (not a 2026
/// request), else the validated envelope or the error to answer with, in the order of the spec
/// (missing fields `-32602`, then unsupported version `-32022`).
pub fn modern_envelope(meta: Option<&Meta>) -> Option<Result<RequestEnvelope, McpError>> {
    let meta = meta?;
    let version = meta.get(META_PROTOCOL_VERSION)?;
    Some(validate_envelope(meta, version))
}

/// The last envelope a server read, reused while the next requests carry the same client
/// capabilities, client info and version (a client sends the same ones on every request), so
/// they are deserialized once rather than per request. A `_meta` written exactly as the one
/// cached is not even parsed. One entry per server: a different client replaces it.
#[derive(Default)]
pub(crate) struct EnvelopeCache(std::sync::Mutex<Option<Cached>>);

struct Cached {
    /// The `_meta` text the envelope was read from (log level included).
    text: Box<str>,
    capabilities: Value,
    client_info: Option<Value>,
    envelope: RequestEnvelope,
}

impl std::fmt::Debug for EnvelopeCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("EnvelopeCache")
    }
}

impl EnvelopeCache {
    /// [`modern_envelope`], answered from the cache when `_meta` is written exactly as the last
    /// envelope read (nothing parsed), or its capabilities, client info and version are that
    /// envelope's (its log level read from this `_meta`).
    pub(crate) fn read(&self, meta: Option<&RawMeta>) -> Option<Result<RequestEnvelope, McpError>> {
        let raw = meta?;
        {
            let cached = self.0.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(c) = cached.as_ref().filter(|c| *c.text == *raw.text()) {
                return Some(Ok(c.envelope.clone()));
            }
        }
        let meta = raw.parsed()?;
        let version = meta.get(META_PROTOCOL_VERSION)?;
        let (Value::String(v), Some(caps)) = (version, meta.get(META_CLIENT_CAPABILITIES)) else {
            return Some(validate_envelope(meta, version));
        };
        let info = meta.get(META_CLIENT_INFO);
        let hit = {
            let cached = self.0.lock().unwrap_or_else(|p| p.into_inner());
            cached
                .as_ref()
                .filter(|c| {
                    *c.envelope.protocol_version == *v.as_str()
                        && c.capabilities == *caps
                        && c.client_info.as_ref() == info
                })
                .map(|c| c.envelope.clone())
        };
        let Some(mut envelope) = hit else {
            let read = validate_envelope(meta, version);
            if let Ok(envelope) = &read {
                *self.0.lock().unwrap_or_else(|p| p.into_inner()) = Some(Cached {
                    text: raw.text().into(),
                    capabilities: caps.clone(),
                    client_info: info.cloned(),
                    envelope: envelope.clone(),
                });
            }
            return Some(read);
        };
        // The log level is per request and cheap to read.
        envelope.log_level = match log_level(meta) {
            Ok(level) => level,
            Err(e) => return Some(Err(e)),
        };
        Some(Ok(envelope))
    }
}

/// True when `params._meta` names a protocol version (a 2026 request's envelope), valid or not.
pub(crate) fn carries_modern_envelope(meta: Option<&RawMeta>) -> bool {
    meta.and_then(RawMeta::parsed)
        .is_some_and(|m| m.contains_key(META_PROTOCOL_VERSION))
}

fn validate_envelope(meta: &Meta, version: &Value) -> Result<RequestEnvelope, McpError> {
    let Some(version) = version.as_str() else {
        return Err(McpError::invalid_params(format!(
            "Invalid _meta: {META_PROTOCOL_VERSION} must be a string"
        )));
    };
    let caps = match meta.get(META_CLIENT_CAPABILITIES) {
        Some(v @ Value::Object(_)) => ClientCapabilities::deserialize_lenient(v),
        Some(_) => {
            return Err(McpError::invalid_params(format!(
                "Invalid _meta: {META_CLIENT_CAPABILITIES} must be an object"
            )))
        }
        None => {
            return Err(McpError::invalid_params(format!(
                "Invalid _meta: missing required {META_CLIENT_CAPABILITIES}"
            )))
        }
    };
    if !MODERN_VERSIONS.contains(&version) {
        return Err(unsupported_version(version));
    }
    let client_info = meta
        .get(META_CLIENT_INFO)
        .and_then(|v| Implementation::deserialize(v).ok())
        .map(Arc::new);
    let log_level = log_level(meta)?;
    Ok(RequestEnvelope {
        protocol_version: version.into(),
        client_capabilities: Arc::new(caps),
        client_info,
        log_level,
    })
}

/// The envelope's log level: absent or null is none, an unknown level `-32602`.
fn log_level(meta: &Meta) -> Result<Option<LoggingLevel>, McpError> {
    match meta.get(META_LOG_LEVEL) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => LoggingLevel::deserialize(v).map(Some).map_err(|_| {
            McpError::invalid_params(format!(
                "Invalid _meta: unknown {META_LOG_LEVEL} {}",
                echo_capped(&v.to_string())
            ))
        }),
    }
}

/// The `-32022` error for a version this server does not serve statelessly.
pub fn unsupported_version(requested: &str) -> McpError {
    McpError::new(
        codes::UNSUPPORTED_PROTOCOL_VERSION,
        format!("Unsupported protocol version: {}", echo_capped(requested)),
    )
    .with_data(
        serde_json::to_value(crate::types::UnsupportedProtocolVersionData {
            supported: MODERN_VERSIONS.iter().map(|v| (*v).to_owned()).collect(),
            requested: echo_capped(requested).into_owned(),
        })
        .unwrap_or(Value::Null),
    )
}

impl ClientCapabilities {
    /// Reads capabilities, ignoring members of the wrong shape instead of failing.
    pub(crate) fn deserialize_lenient(value: &Value) -> Self {
        // Read through the reference: no copy of the value.
        ClientCapabilities::deserialize(value).unwrap_or_else(|_| {
            let mut caps = ClientCapabilities::default();
            if let Value::Object(map) = value {
                let obj = |k: &str| map.get(k).and_then(Value::as_object).cloned();
                caps.experimental = obj("experimental");
                caps.sampling = obj("sampling");
                caps.elicitation = obj("elicitation");
                caps.tasks = obj("tasks");
                caps.extensions = obj("extensions");
                caps.roots = map.get("roots").map(|_| Default::default());
            }
            caps
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(caps: Value, level: Option<&str>) -> Meta {
        let mut meta = serde_json::json!({
            META_PROTOCOL_VERSION: LATEST_PROTOCOL_VERSION,
            META_CLIENT_CAPABILITIES: caps,
            META_CLIENT_INFO: {"name": "c", "version": "1"},
        });
        if let Some(level) = level {
            meta[META_LOG_LEVEL] = Value::from(level);
        }
        meta.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn the_envelope_cache_answers_each_request_with_its_own_envelope() {
        let cache = EnvelopeCache::default();
        let read = |m: &Meta| {
            let raw = RawMeta::from_map(m);
            cache.read(raw.as_ref()).expect("a 2026 envelope")
        };
        let plain = meta(serde_json::json!({}), None);
        let first = read(&plain).expect("valid");
        let again = read(&plain).expect("valid");
        assert!(
            Arc::ptr_eq(&first.client_capabilities, &again.client_capabilities),
            "the same capabilities are deserialized once"
        );
        // Other capabilities, then a log level, then a bad level: each read as sent.
        let url = meta(serde_json::json!({"elicitation": {"url": {}}}), None);
        let with_url = read(&url).expect("valid");
        assert!(with_url.client_capabilities.elicitation.is_some());
        let logged = read(&meta(
            serde_json::json!({"elicitation": {"url": {}}}),
            Some("debug"),
        ))
        .expect("valid");
        assert_eq!(logged.log_level, Some(LoggingLevel::Debug));
        let bad = read(&meta(
            serde_json::json!({"elicitation": {"url": {}}}),
            Some("loud"),
        ));
        assert_eq!(bad.map(|_| ()).unwrap_err().code(), codes::INVALID_PARAMS);
        let back = read(&plain).expect("valid");
        assert!(back.client_capabilities.elicitation.is_none());
        assert_eq!(back.log_level, None);
        // A `_meta` written exactly as the one cached is answered without being parsed, with
        // its own log level; the same capabilities written otherwise are parsed.
        let warned = meta(serde_json::json!({"roots": {}}), Some("warning"));
        let text = serde_json::to_string(&warned).unwrap();
        let params = format!(r#"{{"_meta":{text}}}"#);
        let unparsed = |text: &str| crate::raw_meta::read(text).expect("a _meta");
        let stored = read(&warned).expect("valid");
        for _ in 0..2 {
            let raw = unparsed(&params);
            let again = cache
                .read(Some(&raw))
                .expect("a 2026 envelope")
                .expect("valid");
            assert!(!raw.is_parsed(), "answered from the text");
            assert_eq!(again.log_level, Some(LoggingLevel::Warning));
            assert!(Arc::ptr_eq(
                &again.client_capabilities,
                &stored.client_capabilities
            ));
        }
        let spaced = unparsed(&params.replace(':', ": "));
        let quiet = cache
            .read(Some(&spaced))
            .expect("a 2026 envelope")
            .expect("valid");
        assert!(spaced.is_parsed());
        assert!(Arc::ptr_eq(
            &quiet.client_capabilities,
            &stored.client_capabilities
        ));
        assert_eq!(read(&plain).expect("valid").log_level, None);
        // An unsupported version is never served from the cache.
        let mut old = plain.clone();
        old.insert(META_PROTOCOL_VERSION.into(), Value::from("2099-01-01"));
        let refused = read(&old).map(|_| ()).unwrap_err();
        assert_eq!(refused.code(), codes::UNSUPPORTED_PROTOCOL_VERSION);
    }
}

//! [`TraceContext`]: W3C Trace Context carried in a request's `params._meta` (SEP-414).
//!
//! A server reads `traceparent` and `tracestate` from each inbound request's `_meta`: they are
//! recorded on the request's `tracing` span (fields `traceparent`, `tracestate`) and returned
//! by [`RequestContext::trace_context`](crate::lowlevel::RequestContext::trace_context), so an
//! OpenTelemetry layer can make the remote span the parent. A client sends them with
//! [`RequestOptions::trace_context`](crate::client::RequestOptions::trace_context). The SDK
//! itself does not depend on OpenTelemetry.

use serde_json::{Map, Value};

/// The `_meta` key of the W3C `traceparent`.
pub const META_TRACEPARENT: &str = "traceparent";
/// The `_meta` key of the W3C `tracestate`.
pub const META_TRACESTATE: &str = "tracestate";

/// A W3C Trace Context: a valid `traceparent` (`00-<trace id>-<parent id>-<flags>`) and the
/// vendor `tracestate` that goes with it, if any.
///
/// ```
/// use modelctx_core::trace::TraceContext;
///
/// let tc = TraceContext::parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
///     .unwrap()
///     .with_tracestate("congo=t61rcWkgMzE");
/// assert_eq!(tc.trace_id(), "4bf92f3577b34da6a3ce929d0e0e4736");
/// assert_eq!(tc.parent_id(), "00f067aa0ba902b7");
/// assert!(tc.sampled());
/// assert_eq!(tc.tracestate(), Some("congo=t61rcWkgMzE"));
/// assert!(TraceContext::parse("00-00000000000000000000000000000000-00f067aa0ba902b7-01").is_none());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceContext {
    traceparent: String,
    tracestate: Option<String>,
}

impl TraceContext {
    /// A trace context from a `traceparent` header value; `None` when it is not a valid W3C
    /// `traceparent` (such a value is ignored, as the W3C spec asks).
    pub fn parse(traceparent: &str) -> Option<Self> {
        let mut parts = traceparent.split('-');
        let version = parts.next()?;
        let trace_id = parts.next()?;
        let parent_id = parts.next()?;
        let flags = parts.next()?;
        let hex = |s: &str, len: usize| {
            s.len() == len && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
        };
        let zero = |s: &str| s.bytes().all(|b| b == b'0');
        let valid = hex(version, 2)
            && version != "ff"
            && hex(trace_id, 32)
            && !zero(trace_id)
            && hex(parent_id, 16)
            && !zero(parent_id)
            && hex(flags, 2)
            // Version 00 has exactly four parts; later versions may append more.
            && (version != "00" || parts.next().is_none());
        valid.then(|| Self {
            traceparent: traceparent.to_owned(),
            tracestate: None,
        })
    }

    /// The same context with `tracestate` (vendor entries, passed on as they are).
    pub fn with_tracestate(mut self, tracestate: impl Into<String>) -> Self {
        self.tracestate = Some(tracestate.into());
        self
    }

    /// The whole `traceparent` value.
    pub fn traceparent(&self) -> &str {
        &self.traceparent
    }

    /// The `tracestate` value, if one came with it.
    pub fn tracestate(&self) -> Option<&str> {
        self.tracestate.as_deref()
    }

    /// The trace id: 32 lowercase hex digits.
    pub fn trace_id(&self) -> &str {
        &self.traceparent[3..35]
    }

    /// The id of the caller's span (the remote parent): 16 lowercase hex digits.
    pub fn parent_id(&self) -> &str {
        &self.traceparent[36..52]
    }

    /// The trace flags byte (`01`: sampled).
    pub fn flags(&self) -> u8 {
        u8::from_str_radix(&self.traceparent[53..55], 16).unwrap_or(0)
    }

    /// True when the caller sampled this trace.
    pub fn sampled(&self) -> bool {
        self.flags() & 1 == 1
    }

    /// The context in a `_meta` object, if its `traceparent` is valid.
    pub(crate) fn from_meta(meta: &Map<String, Value>) -> Option<Self> {
        let parsed = Self::parse(meta.get(META_TRACEPARENT)?.as_str()?)?;
        // W3C bounds `tracestate` (32 members, 512 characters are what a receiver must keep);
        // a longer one is dropped rather than copied into every span.
        Some(match meta.get(META_TRACESTATE).and_then(Value::as_str) {
            Some(state) if state.len() <= 512 && state.split(',').count() <= 32 => {
                parsed.with_tracestate(state)
            }
            _ => parsed,
        })
    }

    #[cfg(feature = "client")]
    /// Writes `traceparent` (and `tracestate`) into a `_meta` object.
    pub(crate) fn write_to(&self, meta: &mut Map<String, Value>) {
        meta.insert(
            META_TRACEPARENT.into(),
            Value::from(self.traceparent.as_str()),
        );
        if let Some(state) = &self.tracestate {
            meta.insert(META_TRACESTATE.into(), Value::from(state.as_str()));
        }
    }
}

//! The OpenTelemetry wiring of the example, shared by its binary and its tests: the
//! `tracing-opentelemetry` layer and a middleware that makes the caller's W3C trace context
//! (`traceparent` / `tracestate` in `params._meta`) the remote parent of each message's span.

use std::collections::HashMap;

use modelctx::prelude::*;
use opentelemetry::propagation::TextMapPropagator;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::SdkTracer;
use tracing_opentelemetry::{OpenTelemetryLayer, OpenTelemetrySpanExt as _, SetParentError};
use tracing_subscriber::registry::LookupSpan;

/// The layer turning the SDK's `tracing` spans into OpenTelemetry spans of `tracer`.
///
/// Context activation on span entry is off: the SDK enters a message's span before the
/// middleware runs, and an OpenTelemetry span activated (started) on entry can no longer take
/// the remote parent [`adopt_remote_parent`] gives it. Spans still nest through the `tracing`
/// span tree.
pub fn layer<S>(tracer: SdkTracer) -> OpenTelemetryLayer<S, SdkTracer>
where
    S: tracing::Subscriber + for<'a> LookupSpan<'a>,
{
    tracing_opentelemetry::layer()
        .with_context_activation(false)
        .with_tracer(tracer)
}

/// Middleware: the message's span (the current span inside middleware) gets the caller's
/// trace as its remote parent, then the message is served. Install it with
/// `server.lowlevel().middleware(adopt_remote_parent)` before other middleware.
pub async fn adopt_remote_parent<S: Send + Sync + 'static>(
    msg: Incoming<S>,
    next: Next<S>,
) -> modelctx::Result<serde_json::Value> {
    set_remote_parent(&msg);
    next.run(msg).await
}

fn set_remote_parent<S: Send + Sync + 'static>(msg: &Incoming<S>) {
    let Some(tc) = msg.trace_context() else {
        return;
    };
    let mut carrier = HashMap::new();
    carrier.insert("traceparent".to_owned(), tc.traceparent().to_owned());
    if let Some(state) = tc.tracestate() {
        carrier.insert("tracestate".to_owned(), state.to_owned());
    }
    let parent = TraceContextPropagator::new().extract(&carrier);
    // Without an OpenTelemetry layer (or with the span filtered out) there is nothing to do;
    // a span already started is a wiring mistake worth a warning.
    if let Err(e @ SetParentError::AlreadyStarted) = tracing::Span::current().set_parent(parent) {
        tracing::warn!(error = %e, "the caller's trace context was not adopted");
    }
}

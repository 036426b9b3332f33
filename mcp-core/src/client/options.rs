//! [`RequestOptions`]: what one request may set beyond its params.

use std::sync::Arc;
use std::time::Duration;

use crate::trace::TraceContext;
use crate::types::ProgressNotificationParams;

pub(crate) type ProgressCallback = Arc<dyn Fn(ProgressNotificationParams) + Send + Sync>;

/// Per-request settings: a timeout other than the client's, a progress callback, extra HTTP
/// headers.
///
/// ```
/// use std::time::Duration;
/// use modelctx_core::client::RequestOptions;
///
/// let options = RequestOptions::new()
///     .timeout(Some(Duration::from_secs(300)))
///     .on_progress(|p| println!("{} of {:?}", p.progress, p.total))
///     .header("x-trace", "abc");
/// ```
#[derive(Clone, Default)]
pub struct RequestOptions {
    pub(crate) timeout: Option<Option<Duration>>,
    pub(crate) on_progress: Option<ProgressCallback>,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) trace: Option<TraceContext>,
}

impl std::fmt::Debug for RequestOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RequestOptions")
            .field("timeout", &self.timeout)
            .field("on_progress", &self.on_progress.is_some())
            .field("headers", &self.headers)
            .field("trace", &self.trace)
            .finish()
    }
}

impl RequestOptions {
    /// The client's defaults.
    pub fn new() -> Self {
        Self::default()
    }

    /// This request's timeout (`None`: wait forever), instead of the client's.
    pub fn timeout(mut self, timeout: Option<Duration>) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Asks the server for progress (a `progressToken` in `_meta`) and calls `f` with each
    /// `notifications/progress` for this request. Progress restarts the timeout.
    pub fn on_progress<F>(mut self, f: F) -> Self
    where
        F: Fn(ProgressNotificationParams) + Send + Sync + 'static,
    {
        self.on_progress = Some(Arc::new(f));
        self
    }

    /// A header sent with this request over HTTP (ignored by other transports).
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Sends the caller's W3C Trace Context (`traceparent`, `tracestate`) in the request's
    /// `params._meta` (SEP-414), so the server's span joins the caller's trace. Take it from
    /// your OpenTelemetry context (the SDK does not depend on OpenTelemetry).
    ///
    /// ```
    /// use modelctx_core::client::RequestOptions;
    /// use modelctx_core::trace::TraceContext;
    ///
    /// let tc = TraceContext::parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
    ///     .expect("a valid traceparent");
    /// let options = RequestOptions::new().trace_context(tc);
    /// ```
    pub fn trace_context(mut self, trace: TraceContext) -> Self {
        self.trace = Some(trace);
        self
    }
}

//! Progress reports: [`RequestContext::progress`] and its [`Progress`] builder.

use std::fmt;
use std::future::{Future, IntoFuture};
use std::pin::Pin;

use super::RequestContext;
use crate::types::ProgressNotificationParams;

/// A progress amount or total: any integer or float (`3`, `3u64`, `0.5`). Whole numbers go on
/// the wire as JSON integers (`3`, not `3.0`).
///
/// ```
/// use modelctx_core::lowlevel::ProgressValue;
/// assert_eq!(ProgressValue::from(3usize).get(), 3.0);
/// assert_eq!(ProgressValue::from(0.5f32).get(), 0.5);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd)]
pub struct ProgressValue(f64);

impl ProgressValue {
    /// The amount as a float (integers above 2^53 lose precision).
    pub fn get(self) -> f64 {
        self.0
    }
}

macro_rules! progress_from {
    ($($t:ty),*) => {$(
        impl From<$t> for ProgressValue {
            fn from(value: $t) -> Self {
                #[allow(clippy::cast_precision_loss, clippy::cast_lossless)]
                Self(value as f64)
            }
        }
    )*};
}

progress_from!(u8, u16, u32, u64, usize, i8, i16, i32, i64, isize, f32, f64);

/// One progress report, sent when awaited: `ctx.progress(3).total(10).message("indexing").await`.
/// Built by [`RequestContext::progress`].
///
/// Sending never fails from the handler's point of view: a request without a `progressToken`
/// sends nothing, and a report that could not be sent (the client is gone, the request was
/// cancelled) is logged at `DEBUG` and dropped. The spec requires each report of a request to
/// be larger than the one before: a report whose amount is not larger than the last one sent
/// (or is not a finite number) is dropped, logged at `DEBUG`.
#[must_use = "a progress report is sent only when awaited"]
pub struct Progress<'a, S> {
    ctx: &'a RequestContext<S>,
    progress: f64,
    total: Option<f64>,
    message: Option<String>,
}

impl<S> fmt::Debug for Progress<'_, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Progress")
            .field("progress", &self.progress)
            .field("total", &self.total)
            .field("message", &self.message)
            .finish_non_exhaustive()
    }
}

impl<S: Send + Sync + 'static> Progress<'_, S> {
    /// The total the amount counts towards, if known.
    pub fn total(mut self, total: impl Into<ProgressValue>) -> Self {
        self.total = Some(total.into().0);
        self
    }

    /// A human-readable message about the current step.
    pub fn message(mut self, message: impl Into<String>) -> Self {
        self.message = Some(message.into());
        self
    }

    async fn send(self) {
        let ctx = self.ctx;
        let Some(token) = ctx.progress_token() else {
            return;
        };
        let id = ctx.request_id();
        if !self.progress.is_finite() || self.total.is_some_and(|t| !t.is_finite()) {
            tracing::debug!(%id, "progress report with a non-finite number dropped");
            return;
        }
        // Held until the report is on its way: a larger value checked later is sent later.
        let mut last = ctx.info.last_progress.lock().await;
        if let Some(last) = *last {
            if self.progress <= last {
                tracing::debug!(
                    %id,
                    progress = self.progress,
                    last,
                    "progress report not larger than the last one dropped (progress must increase)"
                );
                return;
            }
        }
        *last = Some(self.progress);
        let mut params = ProgressNotificationParams::new(token.clone(), self.progress);
        params.total = self.total;
        params.message = self.message;
        if let Err(e) = ctx.notify("notifications/progress", params).await {
            tracing::debug!(%id, error = %e, "progress report not sent");
        }
    }
}

impl<'a, S: Send + Sync + 'static> IntoFuture for Progress<'a, S> {
    type Output = ();
    type IntoFuture = Pin<Box<dyn Future<Output = ()> + Send + 'a>>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(self.send())
    }
}

impl<S: Send + Sync + 'static> RequestContext<S> {
    /// Reports progress on this request, if the client asked for it (sent a `progressToken`);
    /// otherwise does nothing. Takes any integer or float; chain
    /// [`total`](Progress::total) and [`message`](Progress::message), then `.await`. There is
    /// no result to handle: see [`Progress`] for what is dropped and why.
    ///
    /// ```no_run
    /// # use modelctx_core::lowlevel::RequestContext;
    /// async fn index(ctx: RequestContext, files: Vec<String>) {
    ///     for (done, file) in files.iter().enumerate() {
    ///         ctx.progress(done + 1).total(files.len()).message(format!("indexing {file}")).await;
    ///     }
    /// }
    /// ```
    pub fn progress(&self, progress: impl Into<ProgressValue>) -> Progress<'_, S> {
        Progress {
            ctx: self,
            progress: progress.into().0,
            total: None,
            message: None,
        }
    }
}

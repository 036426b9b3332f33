//! Turning a panic inside a handler into an ordinary internal failure.

use std::any::Any;
use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::task::{Context, Poll};

use crate::lowlevel::BoxFuture;

/// Polls a boxed future, catching a panic raised while polling it.
pub(crate) struct CatchUnwind<T> {
    inner: BoxFuture<T>,
}

impl<T> CatchUnwind<T> {
    pub(crate) fn new(inner: BoxFuture<T>) -> Self {
        Self { inner }
    }
}

impl<T> Future for CatchUnwind<T> {
    type Output = Result<T, String>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        // AssertUnwindSafe: after a panic the future is never polled again (we return Ready),
        // so no broken invariant inside it can be observed.
        match catch_unwind(AssertUnwindSafe(|| self.inner.as_mut().poll(cx))) {
            Ok(poll) => poll.map(Ok),
            Err(payload) => Poll::Ready(Err(panic_message(payload))),
        }
    }
}

pub(crate) fn panic_message(payload: Box<dyn Any + Send>) -> String {
    match payload.downcast::<String>() {
        Ok(s) => *s,
        Err(payload) => match payload.downcast::<&'static str>() {
            Ok(s) => (*s).to_owned(),
            Err(_) => "panic with a non-string payload".to_owned(),
        },
    }
}

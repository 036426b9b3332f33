//! [`timeout`]: `tokio::time::timeout` whose clock starts only when the future first has to
//! wait. Most requests are read and answered within their first poll; they read no clock and
//! arm no timer. The deadline is `limit` after that first wait, which is at most one poll later
//! than tokio's (taken when the future is made).

use std::future::{poll_fn, Future};
use std::pin::pin;
use std::task::Poll;
use std::time::Duration;

/// Runs `fut` for at most `limit` from its first `Pending`; `None` when the time ran out (the
/// future is dropped then).
pub(crate) async fn timeout<F: Future>(limit: Duration, fut: F) -> Option<F::Output> {
    let mut fut = pin!(fut);
    let mut sleep = pin!(None::<tokio::time::Sleep>);
    poll_fn(|cx| {
        if let Poll::Ready(out) = fut.as_mut().poll(cx) {
            return Poll::Ready(Some(out));
        }
        if sleep.is_none() {
            sleep.set(Some(tokio::time::sleep(limit)));
        }
        match sleep.as_mut().as_pin_mut().map(|s| s.poll(cx)) {
            Some(Poll::Ready(())) => Poll::Ready(None),
            _ => Poll::Pending,
        }
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_ready_future_is_answered_and_a_slow_one_runs_out() {
        assert_eq!(timeout(Duration::from_secs(1), async { 7 }).await, Some(7));
        let slow = tokio::time::sleep(Duration::from_secs(60));
        assert_eq!(timeout(Duration::from_millis(20), slow).await, None);
        let in_time = async {
            tokio::time::sleep(Duration::from_millis(10)).await;
            3
        };
        assert_eq!(timeout(Duration::from_secs(60), in_time).await, Some(3));
    }
}

//! The client benchmarks' measurement: `n` calls of `add` through a client, `in_flight` at a
//! time (workers each calling in a loop), timed, with this process's CPU per call (the
//! client's own cost: the server is another process).

use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use serde_json::{json, Value};

/// The client binaries' arguments: `<in_flight> <calls> -- <server command...>`.
pub fn args() -> (u64, u64, Vec<String>) {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let in_flight = args
        .first()
        .and_then(|a| a.parse().ok())
        .expect("in_flight");
    let n = args.get(1).and_then(|a| a.parse().ok()).expect("calls");
    let cmd = args
        .iter()
        .skip_while(|a| *a != "--")
        .skip(1)
        .cloned()
        .collect();
    (in_flight, n, cmd)
}

/// user+sys CPU time of this process, in microseconds.
pub fn own_cpu_us() -> u64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let rest = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks: u64 = fields.get(11).and_then(|f| f.parse().ok()).unwrap_or(0)
        + fields.get(12).and_then(|f| f.parse().ok()).unwrap_or(0);
    ticks * 10_000 // 100 ticks per second on Linux
}

/// Runs `n` calls, `in_flight` at a time; `call(i)` must return the sum it got for
/// `add(i, 1)`, which is checked.
pub async fn measure<C, F, Fut>(client: C, call: F, n: u64, in_flight: u64) -> Value
where
    C: Clone + Send + Sync + 'static,
    F: Fn(C, u64) -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = i64> + Send,
{
    // Warm up.
    for i in 0..2_000 {
        assert_eq!(call(client.clone(), i).await, i as i64 + 1);
    }
    let next = Arc::new(AtomicU64::new(0));
    let cpu0 = own_cpu_us();
    let start = Instant::now();
    let mut workers = tokio::task::JoinSet::new();
    for _ in 0..in_flight {
        let (client, call, next) = (client.clone(), call.clone(), next.clone());
        workers.spawn(async move {
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= n {
                    break;
                }
                assert_eq!(call(client.clone(), i).await, i as i64 + 1);
            }
        });
    }
    while let Some(done) = workers.join_next().await {
        done.expect("a worker failed");
    }
    let elapsed = start.elapsed().as_secs_f64();
    let cpu = own_cpu_us() - cpu0;
    json!({
        "calls": n,
        "in_flight": in_flight,
        "calls_per_s": n as f64 / elapsed,
        "rate": n as f64 / elapsed,
        "client_cpu_us_per_call": cpu as f64 / n as f64,
    })
}

/// The sum in a text result.
pub fn sum_of(text: Option<&str>) -> i64 {
    text.and_then(|t| t.parse().ok()).unwrap_or(i64::MIN)
}

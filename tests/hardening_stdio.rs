//! Hostile stdio clients against a real child server (`examples/torture.rs`): one that closes
//! the server's stdout and keeps writing, one that closes stdin while a handler hangs, one that
//! never reads its answers, one that stalls its reading for good. Each asserts how the server
//! ends (or that it stays within a stated memory bound) and that a fresh server still serves.
//! The same bounds hold on any byte stream served by the connection engine (a Unix socket here).

mod support;

use std::process::Stdio;
use std::time::Duration;

use serde_json::{json, Value};
use support::{example, modern};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command};

#[allow(unreachable_pub)] // the example program's items are `pub` for this test to reach
#[path = "../examples/torture.rs"]
#[allow(dead_code)]
mod torture;

/// A torture server on stdio with the given `TORTURE_*` limits.
fn spawn(env: &[(&str, &str)]) -> (Child, ChildStdin, ChildStdout, ChildStderr) {
    let mut child = Command::new(example("torture"))
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("the example starts");
    let stdin = child.stdin.take().expect("stdin");
    let stdout = child.stdout.take().expect("stdout");
    let stderr = child.stderr.take().expect("stderr");
    (child, stdin, stdout, stderr)
}

fn call(id: i64, tool: &str, arguments: Value) -> String {
    let line = modern(
        id,
        "tools/call",
        json!({"name": tool, "arguments": arguments}),
    );
    format!("{line}\n")
}

async fn next_json(lines: &mut tokio::io::Lines<BufReader<ChildStdout>>) -> Value {
    let line = tokio::time::timeout(Duration::from_secs(10), lines.next_line())
        .await
        .expect("an answer within 10 s")
        .unwrap()
        .expect("a line");
    serde_json::from_str(&line).unwrap()
}

/// Waits (at most 10 s) for the child to exit.
async fn exits(child: &mut Child) -> std::process::ExitStatus {
    tokio::time::timeout(Duration::from_secs(10), child.wait())
        .await
        .expect("the server exits within 10 s")
        .unwrap()
}

async fn all_of(mut stderr: ChildStderr) -> String {
    let mut text = String::new();
    let _ = stderr.read_to_string(&mut text).await;
    text
}

/// A `/proc/<pid>/status` field in KiB (`VmRSS`, `VmHWM`).
fn proc_kib(pid: u32, field: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// A fresh server answers `echo`, then exits cleanly at end of stdin.
async fn a_fresh_server_serves() {
    let (mut child, mut stdin, stdout, _stderr) = spawn(&[]);
    let mut lines = BufReader::new(stdout).lines();
    stdin
        .write_all(call(1, "echo", json!({"text": "still here"})).as_bytes())
        .await
        .unwrap();
    let answer = next_json(&mut lines).await;
    assert_eq!(answer["id"], 1);
    assert_eq!(answer["result"]["content"][0]["text"], "still here");
    drop(stdin);
    assert!(exits(&mut child).await.success());
}

/// Starts `hang` (id 1), which never returns, and waits for `echo` (id 2) to be answered: a
/// handler is running and the server is serving.
async fn hang_then_echo(
    stdin: &mut tokio::process::ChildStdin,
    lines: &mut tokio::io::Lines<BufReader<tokio::process::ChildStdout>>,
) {
    stdin
        .write_all(call(1, "hang", json!({})).as_bytes())
        .await
        .unwrap();
    stdin
        .write_all(call(2, "echo", json!({"text": "hi"})).as_bytes())
        .await
        .unwrap();
    assert_eq!(next_json(lines).await["id"], 2);
}

#[tokio::test]
async fn a_client_that_closes_stdout_ends_the_server_and_its_running_handlers() {
    let (mut child, mut stdin, stdout, stderr) = spawn(&[]);
    let mut lines = BufReader::new(stdout).lines();
    // A handler that never returns is running, and the server answers.
    hang_then_echo(&mut stdin, &mut lines).await;

    // The client closes the server's stdout and keeps sending requests.
    drop(lines);
    let mut id = 3;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(
            id < 500,
            "the server still runs after {id} requests on a closed stdout"
        );
        let line = call(id, "echo", json!({"text": "anyone?"}));
        if stdin.write_all(line.as_bytes()).await.is_err() {
            // The server closed its stdin: it has stopped; wait for its exit.
            break exits(&mut child).await;
        }
        id += 1;
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    // It stopped without waiting for the hanging handler, and said why.
    assert!(!status.success(), "a write error is an error: {status}");
    let log = all_of(stderr).await;
    assert!(
        log.contains("could not write to the peer") && log.to_lowercase().contains("broken pipe"),
        "stderr: {log}"
    );
    a_fresh_server_serves().await;
}

#[tokio::test]
async fn end_of_stdin_waits_for_a_hanging_handler_only_for_the_shutdown_grace() {
    let (mut child, mut stdin, stdout, _stderr) = spawn(&[("TORTURE_SHUTDOWN_GRACE_MS", "300")]);
    let mut lines = BufReader::new(stdout).lines();
    hang_then_echo(&mut stdin, &mut lines).await;

    drop(stdin);
    // The hanging call is cancelled (no answer), stdout ends, and the process exits cleanly.
    let rest = tokio::time::timeout(Duration::from_secs(10), lines.next_line())
        .await
        .expect("stdout ends within 10 s")
        .unwrap();
    assert_eq!(rest, None, "a cancelled call gets no answer");
    assert!(exits(&mut child).await.success());
    a_fresh_server_serves().await;
}

/// The answers read back, checked by id and size without parsing 8 MiB lines.
async fn read_huge_answers(lines: &mut tokio::io::Lines<BufReader<ChildStdout>>, count: i64) {
    let mut seen = Vec::new();
    for _ in 0..count {
        let line = tokio::time::timeout(Duration::from_secs(10), lines.next_line())
            .await
            .expect("an answer within 10 s")
            .unwrap()
            .expect("a line");
        assert!(
            line.len() > 8 * 1024 * 1024,
            "{}",
            &line[..200.min(line.len())]
        );
        let head = &line[..64];
        let id = (0..count)
            .find(|id| head.contains(&format!("\"id\":{id},")))
            .unwrap_or_else(|| panic!("an answer to a request: {head}"));
        seen.push(id);
    }
    seen.sort();
    assert_eq!(seen, (0..count).collect::<Vec<_>>(), "each answered once");
}

/// The outbound queue is bounded in bytes: 24 calls of `huge` (8 MiB each, 192 MiB of answers)
/// from a client that reads nothing keep the server's peak memory under 80 MiB, with one
/// request in flight and the default 1 MiB queue: the process itself and one handler's copies
/// of its result (about 40 MiB for one call alone), the queue plus the one answer that crossed
/// it, and one answer waiting in its slot. (With the queue unbounded, as before, the peak is
/// over 200 MiB.) Then every answer is read and the server still serves.
#[tokio::test]
async fn answers_a_client_does_not_read_are_bounded_in_bytes() {
    const CALLS: i64 = 24;
    const BOUND_KIB: u64 = 80 * 1024;
    let (mut child, mut stdin, stdout, _stderr) = spawn(&[("TORTURE_MAX_IN_FLIGHT", "1")]);
    let pid = child.id().expect("a pid");
    for id in 0..CALLS {
        stdin
            .write_all(call(id, "huge", json!({})).as_bytes())
            .await
            .unwrap();
    }
    stdin.flush().await.unwrap();
    // Read nothing until the server's memory stops growing (it has stopped reading).
    let mut last = 0;
    for _ in 0..20 {
        tokio::time::sleep(Duration::from_millis(300)).await;
        let now = proc_kib(pid, "VmRSS").expect("VmRSS");
        if now == last {
            break;
        }
        last = now;
    }
    let peak = proc_kib(pid, "VmHWM").expect("VmHWM");
    assert!(
        peak < BOUND_KIB,
        "peak {peak} KiB with a client that reads nothing"
    );

    let mut lines = BufReader::with_capacity(1 << 20, stdout).lines();
    read_huge_answers(&mut lines, CALLS).await;
    stdin
        .write_all(call(100, "echo", json!({"text": "after"})).as_bytes())
        .await
        .unwrap();
    assert_eq!(
        next_json(&mut lines).await["result"]["content"][0]["text"],
        "after"
    );
    // Reading 192 MiB back moves memory through the allocator; that peak is reported only.
    let after = proc_kib(pid, "VmHWM").expect("VmHWM");
    drop(stdin);
    assert!(exits(&mut child).await.success());
    eprintln!(
        "huge answers unread: server peak {peak} KiB (bound {BOUND_KIB} KiB); {after} KiB after reading them"
    );
}

#[tokio::test]
async fn a_client_that_stops_reading_is_cut_off_after_the_write_timeout() {
    let (mut child, mut stdin, stdout, stderr) = spawn(&[
        ("TORTURE_WRITE_TIMEOUT_MS", "500"),
        ("TORTURE_MAX_IN_FLIGHT", "2"),
    ]);
    // More than the pipe holds, never read; stdout stays open.
    for id in 0..2 {
        stdin
            .write_all(call(id, "huge", json!({})).as_bytes())
            .await
            .unwrap();
    }
    stdin
        .write_all(call(2, "hang", json!({})).as_bytes())
        .await
        .unwrap();
    let status = exits(&mut child).await;
    assert!(!status.success(), "a stalled write is an error: {status}");
    let log = all_of(stderr).await;
    assert!(log.contains("read nothing for 500 ms"), "stderr: {log}");
    drop(stdout);
    a_fresh_server_serves().await;
}

/// The engine's bounds hold on any byte stream: over a Unix socket, a client that reads
/// nothing is cut off after the write timeout, and a running handler is cancelled.
#[cfg(unix)]
#[tokio::test]
async fn a_socket_connection_has_the_same_write_timeout() {
    use modelctx::lowlevel::{IntoServer, RunningServer};
    use modelctx::transport::serve_connection;
    use tokio::net::UnixStream;

    let mut server = torture::server().into_server();
    server.options_mut().write_timeout = Duration::from_millis(300);
    let running = RunningServer::start(server).await.unwrap();

    // A client that reads nothing.
    let (client, served) = UnixStream::pair().unwrap();
    let (read, write) = served.into_split();
    let connection = tokio::spawn(serve_connection(running.clone(), read, write));
    let (_client_read, mut client_write) = client.into_split();
    stall_until_the_write_times_out(&mut client_write, connection).await;

    // A new connection to the same server is served.
    let (client, served) = UnixStream::pair().unwrap();
    let (read, write) = served.into_split();
    let connection = tokio::spawn(serve_connection(running.clone(), read, write));
    let (client_read, mut client_write) = client.into_split();
    client_write
        .write_all(call(7, "echo", json!({"text": "next"})).as_bytes())
        .await
        .unwrap();
    let mut lines = BufReader::new(client_read).lines();
    let line = tokio::time::timeout(Duration::from_secs(10), lines.next_line())
        .await
        .expect("an answer")
        .unwrap()
        .expect("a line");
    let answer: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(answer["result"]["content"][0]["text"], "next");
    drop(client_write);
    connection.await.unwrap().unwrap();
    running.stop().await;
}

/// Answers the stream takes only in part stay whole and in order. A client sends requests one
/// at a time and reads nothing until the end, so the socket's buffer fills in the middle of an
/// answer: the answers written straight to the stream (one request at a time needs no writer
/// task) and those queued behind what the stream did not take all arrive whole, each request's
/// progress before its answer.
#[cfg(unix)]
#[tokio::test]
async fn answers_written_in_part_arrive_whole_and_in_order() {
    use modelctx::lowlevel::{IntoServer, RunningServer};
    use modelctx::transport::serve_connection;
    use tokio::net::UnixStream;

    let running = RunningServer::start(torture::server().into_server())
        .await
        .unwrap();
    let (client, served) = UnixStream::pair().unwrap();
    let (read, write) = served.into_split();
    let connection = tokio::spawn(serve_connection(running.clone(), read, write));
    let (client_read, mut client_write) = client.into_split();

    // 48 KiB answers: more than the socket's buffer holds after a few of them.
    let text = "y".repeat(48 * 1024);
    let rounds = 24;
    for id in 0..rounds {
        let line = if id % 3 == 2 {
            let mut line = modern(
                id,
                "tools/call",
                json!({"name": "steps", "arguments": {"steps": 2}}),
            );
            line["params"]["_meta"]["progressToken"] = json!(id);
            format!("{line}\n")
        } else {
            call(id, "echo", json!({"text": text}))
        };
        client_write.write_all(line.as_bytes()).await.unwrap();
        // Give each request the time to be answered alone, so most answers go straight to the
        // stream (the assertions below hold however they are interleaved).
        tokio::time::sleep(Duration::from_millis(5)).await;
    }

    let mut lines = BufReader::new(client_read).lines();
    let mut answered = Vec::new();
    let mut progress: Vec<(i64, f64)> = Vec::new();
    while answered.len() < rounds as usize {
        let line = tokio::time::timeout(Duration::from_secs(10), lines.next_line())
            .await
            .expect("a line within 10 s")
            .unwrap()
            .expect("a line");
        let message: Value = serde_json::from_str(&line).expect("every line is whole JSON");
        if message["method"] == "notifications/progress" {
            let token = message["params"]["progressToken"].as_i64().unwrap();
            assert!(
                !answered.contains(&token),
                "progress after its answer: {line}"
            );
            progress.push((token, message["params"]["progress"].as_f64().unwrap()));
            continue;
        }
        let id = message["id"].as_i64().expect("an answer");
        let content = &message["result"]["content"][0]["text"];
        if id % 3 == 2 {
            assert_eq!(content, "2 steps");
            let seen: Vec<f64> = progress
                .iter()
                .filter(|(t, _)| *t == id)
                .map(|(_, p)| *p)
                .collect();
            assert_eq!(
                seen,
                [1.0, 2.0],
                "request {id}'s progress, before its answer"
            );
        } else {
            assert_eq!(
                content.as_str().map(str::len),
                Some(text.len()),
                "request {id}"
            );
        }
        answered.push(id);
    }
    answered.sort_unstable();
    assert_eq!(answered, (0..rounds).collect::<Vec<_>>());

    drop(client_write);
    tokio::time::timeout(Duration::from_secs(10), connection)
        .await
        .expect("the connection ends")
        .unwrap()
        .unwrap();
    running.stop().await;
}

/// A connection that ends closes its stream at once, even while a notification's handler
/// still runs (and so still holds the connection): here the peer stops reading, the write
/// timeout ends the connection, and the peer, reading again, gets what was written and then
/// the end of the stream.
#[cfg(unix)]
#[tokio::test]
async fn an_ended_connection_closes_its_stream_while_a_notification_hangs() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;

    use modelctx::lowlevel::{IntoServer, RunningServer};
    use modelctx::transport::serve_connection;
    use tokio::net::UnixStream;

    let started = Arc::new(AtomicBool::new(false));
    let mut server = torture::server().into_server();
    server.options_mut().write_timeout = Duration::from_millis(300);
    let flag = started.clone();
    server.add_notification_handler("notifications/hang", move |_ctx, _: Value| {
        flag.store(true, Ordering::SeqCst);
        async {
            std::future::pending::<()>().await;
            Ok(())
        }
    });
    let running = RunningServer::start(server).await.unwrap();
    let (client, served) = UnixStream::pair().unwrap();
    let (read, write) = served.into_split();
    let connection = tokio::spawn(serve_connection(running.clone(), read, write));
    let (mut client_read, mut client_write) = client.into_split();

    let hang = json!({"jsonrpc": "2.0", "method": "notifications/hang",
                      "params": {"_meta": support::modern_meta()}});
    client_write
        .write_all(format!("{hang}\n").as_bytes())
        .await
        .unwrap();
    for _ in 0..500 {
        if started.load(Ordering::SeqCst) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(
        started.load(Ordering::SeqCst),
        "the notification's handler runs"
    );

    // Answers nobody reads: the write timeout ends the connection.
    stall_until_the_write_times_out(&mut client_write, connection).await;

    // The handler still runs, and the stream is closed all the same.
    let mut written = Vec::new();
    tokio::time::timeout(
        Duration::from_secs(10),
        client_read.read_to_end(&mut written),
    )
    .await
    .expect("the end of the stream within 10 s")
    .unwrap();
    assert!(written.starts_with(b"{"), "what was written arrives first");
    drop(client_write);
    let _ = tokio::time::timeout(Duration::from_secs(5), running.stop()).await;
}

/// Asks for two 8 MiB answers and reads neither: the connection ends (within 10 s) when its
/// write makes no progress for the server's write timeout.
#[cfg(unix)]
async fn stall_until_the_write_times_out(
    client_write: &mut tokio::net::unix::OwnedWriteHalf,
    connection: tokio::task::JoinHandle<std::io::Result<()>>,
) {
    for id in 0..2 {
        client_write
            .write_all(call(id, "huge", json!({})).as_bytes())
            .await
            .unwrap();
    }
    let ended = tokio::time::timeout(Duration::from_secs(10), connection)
        .await
        .expect("the connection ends within 10 s")
        .unwrap();
    let error = ended.expect_err("a stalled peer is an error");
    assert_eq!(error.kind(), std::io::ErrorKind::TimedOut, "{error}");
}

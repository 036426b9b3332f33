//! Floods: 100,000 pipelined `tools/call` over stdio, written without reading any answer until
//! the writer is stuck (the server stops reading once its queue of unread answers reaches
//! `ServerOptions::max_outbound_bytes`, or its in-flight bound is reached), then all
//! read back; and 256 concurrent keep-alive connections over HTTP. Every request is answered,
//! none lost, none twice (counts, never times). Peak memory figures go in BENCHMARKS.md.

use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader, BufWriter};
use tokio::net::TcpStream;
use tokio::process::Command;

mod support;

use support::example;

#[allow(unreachable_pub)] // the example program's items are `pub` for this test to reach
#[path = "../examples/torture.rs"]
#[allow(dead_code)]
mod torture;

const CALLS: usize = 100_000;

fn call_line(id: usize) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"add","arguments":{{"a":{id},"b":1}},"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{}}}}}}}}"#
    ) + "\n"
}

/// A `/proc/<pid>/status` field in KiB (`VmRSS`, `VmHWM`).
fn proc_kib(pid: u32, field: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hundred_thousand_pipelined_calls_over_stdio_are_all_answered() {
    let mut child = Command::new(example("torture"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("the example starts");
    let pid = child.id().expect("a pid");
    let stdin = child.stdin.take().expect("stdin");
    let stdout = child.stdout.take().expect("stdout");

    let written = Arc::new(AtomicUsize::new(0));
    let progress = written.clone();
    let writer = tokio::spawn(async move {
        let mut out = BufWriter::with_capacity(64 * 1024, stdin);
        for id in 0..CALLS {
            out.write_all(call_line(id).as_bytes()).await.unwrap();
            progress.fetch_add(1, Ordering::Relaxed);
        }
        out.flush().await.unwrap();
        // Kept open until every answer is read (closing it ends the server).
        out
    });

    // Read nothing until the writer is stuck: the server must have stopped reading.
    let mut last = usize::MAX;
    loop {
        tokio::time::sleep(Duration::from_millis(300)).await;
        let now = written.load(Ordering::Relaxed);
        if now == last {
            break;
        }
        last = now;
    }
    let stuck_at = written.load(Ordering::Relaxed);
    assert!(
        stuck_at < CALLS,
        "the server kept reading without answering ({stuck_at} written)"
    );
    let rss_stuck = proc_kib(pid, "VmRSS").expect("VmRSS");

    // Now read every answer.
    let mut lines = BufReader::with_capacity(1 << 20, stdout).lines();
    let mut seen = HashSet::with_capacity(CALLS);
    let mut peak = None;
    while seen.len() < CALLS {
        let line = tokio::time::timeout(Duration::from_secs(60), lines.next_line())
            .await
            .expect("answers keep coming")
            .unwrap()
            .expect("the server is still there");
        let msg: Value = serde_json::from_str(&line).unwrap();
        let id = msg["id"].as_u64().expect("an answer to a request") as usize;
        assert_eq!(msg["result"]["structuredContent"], json!(id + 1), "{line}");
        assert!(seen.insert(id), "answered twice: {id}");
        if seen.len() == CALLS {
            peak = proc_kib(pid, "VmHWM");
        }
    }
    let stdin = writer.await.unwrap();
    drop(stdin);
    assert_eq!(lines.next_line().await.unwrap(), None, "nothing more");
    let status = child.wait().await.unwrap();
    assert!(status.success());
    assert_eq!(seen.len(), CALLS, "every request answered, none lost");
    // Bounded memory: what the server holds while the writer is stuck is a few in-flight
    // requests and pipe buffers, not the backlog (a generous bound for a debug build).
    assert!(
        rss_stuck < 64 * 1024,
        "{rss_stuck} KiB resident while stuck"
    );
    let peak = peak.expect("VmHWM read before the server exited");
    assert!(peak < 64 * 1024, "peak {peak} KiB");
    eprintln!(
        "stdio flood: writer stuck after {stuck_at} requests; server RSS then {rss_stuck} KiB, peak {peak} KiB"
    );
}

/// Sends `count` keep-alive requests on one connection; returns how many were answered right.
async fn keep_alive_client(port: u16, first_id: usize, count: usize) -> usize {
    let stream = TcpStream::connect(("127.0.0.1", port))
        .await
        .expect("connection accepted");
    let (read, mut write) = stream.into_split();
    let mut read = BufReader::new(read);
    let mut answered = 0;
    for id in first_id..first_id + count {
        let body = call_line(id);
        let body = body.trim_end();
        let request = format!(
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: add\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        write.write_all(request.as_bytes()).await.unwrap();
        let mut length = None;
        let mut status = String::new();
        read.read_line(&mut status).await.unwrap();
        loop {
            let mut header = String::new();
            read.read_line(&mut header).await.unwrap();
            if header == "\r\n" {
                break;
            }
            if let Some((k, v)) = header.split_once(':') {
                if k.eq_ignore_ascii_case("content-length") {
                    length = v.trim().parse::<usize>().ok();
                }
            }
        }
        assert!(status.starts_with("HTTP/1.1 200"), "{status}");
        let mut body = vec![0u8; length.expect("a JSON answer with a length")];
        read.read_exact(&mut body).await.unwrap();
        let msg: Value = serde_json::from_slice(&body).unwrap();
        if msg["id"] == json!(id) && msg["result"]["structuredContent"] == json!(id + 1) {
            answered += 1;
        }
    }
    answered
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_hundred_fifty_six_connections_over_http_are_all_served() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let config = modelctx::transport::HttpConfig::default();
    tokio::spawn(torture::server().serve_http_on(listener, config, std::future::pending()));
    const CONNECTIONS: usize = 256;
    const PER_CONNECTION: usize = 40;
    let clients: Vec<_> = (0..CONNECTIONS)
        .map(|c| tokio::spawn(keep_alive_client(port, c * PER_CONNECTION, PER_CONNECTION)))
        .collect();
    let mut answered = 0;
    for client in clients {
        answered += client.await.expect("no connection refused or dropped");
    }
    assert_eq!(
        answered,
        CONNECTIONS * PER_CONNECTION,
        "every request answered, none lost"
    );
}

//! A hostile HTTP client for `scripts/http-probe.sh`: opens `--connections N` connections to
//! `--port P` on 127.0.0.1 that trickle a request head one byte a second, and meanwhile checks
//! that a normal 2026 `tools/call hello` is still answered within `--within S` seconds. With
//! `--pid` it also reports the server's open file descriptors and peak memory.
//!
//! Exits 0 when the normal call was answered, 1 otherwise. Bounded: at most `N` connections,
//! at most `--seconds` (default 20) of trickling.

use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

struct Args {
    port: u16,
    connections: usize,
    within: u64,
    seconds: u64,
    pid: Option<u32>,
}

fn args() -> Args {
    let mut args = Args {
        port: 0,
        connections: 1100,
        within: 10,
        seconds: 20,
        pid: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let value = it.next().unwrap_or_default();
        match flag.as_str() {
            "--port" => args.port = value.parse().unwrap_or(0),
            "--connections" => args.connections = value.parse().unwrap_or(1100),
            "--within" => args.within = value.parse().unwrap_or(10),
            "--seconds" => args.seconds = value.parse().unwrap_or(20),
            "--pid" => args.pid = value.parse().ok(),
            _ => eprintln!("unknown flag {flag}"),
        }
    }
    args
}

/// One connection that sends `POST /mcp HTTP/1.1\r\n...` a byte a second until `deadline`.
async fn trickle(port: u16, deadline: Instant) -> bool {
    let Ok(Ok(mut stream)) = tokio::time::timeout(
        Duration::from_secs(2),
        TcpStream::connect(("127.0.0.1", port)),
    )
    .await
    else {
        return false;
    };
    let head = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ";
    let mut i = 0;
    while Instant::now() < deadline {
        let byte = head.get(i).copied().unwrap_or(b'a');
        if stream.write_all(&[byte]).await.is_err() {
            // Closed by the server (the header-read timeout): as it should be.
            return true;
        }
        i += 1;
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    true
}

/// A normal call; its status line.
async fn hello(port: u16) -> std::io::Result<String> {
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"hello","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
    let mut stream = TcpStream::connect(("127.0.0.1", port)).await?;
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: hello\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).await?;
    let mut answer = String::new();
    stream.read_to_string(&mut answer).await?;
    Ok(answer.lines().next().unwrap_or_default().to_owned())
}

fn proc_status(pid: u32) -> String {
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|d| d.count())
        .unwrap_or(0);
    let hwm = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM"))
                .map(|l| l.split_whitespace().nth(1).unwrap_or("?").to_owned())
        })
        .unwrap_or_else(|| "?".into());
    format!("server: {fds} open fds, peak {hwm} KiB")
}

#[tokio::main]
async fn main() {
    let args = args();
    let deadline = Instant::now() + Duration::from_secs(args.seconds);
    let mut attackers = Vec::with_capacity(args.connections);
    for _ in 0..args.connections {
        attackers.push(tokio::spawn(trickle(args.port, deadline)));
    }
    // Let the trickle take hold, then ask for service.
    tokio::time::sleep(Duration::from_secs(2)).await;
    if let Some(pid) = args.pid {
        println!("under attack: {}", proc_status(pid));
    }
    let started = Instant::now();
    let answered = tokio::time::timeout(Duration::from_secs(args.within), hello(args.port)).await;
    let ok = matches!(&answered, Ok(Ok(status)) if status.contains(" 200 "));
    println!(
        "{} trickling connections: normal call {} after {:.1} s",
        args.connections,
        match &answered {
            Ok(Ok(status)) => status.clone(),
            Ok(Err(e)) => format!("failed: {e}"),
            Err(_) => format!("not answered within {} s", args.within),
        },
        started.elapsed().as_secs_f64()
    );
    if let Some(pid) = args.pid {
        println!("{}", proc_status(pid));
    }
    for attacker in attackers {
        attacker.abort();
    }
    std::process::exit(if ok { 0 } else { 1 });
}

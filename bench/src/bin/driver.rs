//! The load driver: one scenario per run, one JSON line of figures on stdout.
//!
//! ```text
//! driver stdio <sequential|pipelined|flood> <legacy|modern> -- <server command...>
//! driver http <url> <connections> <seconds> <modern|session|plain> [server pid]
//! ```
//!
//! stdio: the server is started as a child (pinned to CPU 0 with `taskset` when present, or to
//! the CPU `SERVER_CPU` names; run the driver itself pinned to CPU 1), the 2025 handshake is
//! done when `legacy`, then: `sequential` = one call in flight, per-call latency
//! (`SEQUENTIAL_CALLS` calls, 20,000 by default); `pipelined` = 64 in flight, calls/s;
//! `flood` = 100,000 calls written without reading until the writer is stuck (or done), then
//! all read, peak RSS. Server CPU (user+sys) per call and peak RSS come from /proc.
//!
//! http: keep-alive connections, each sending calls one after another for `seconds`:
//! `modern` = 2026 requests with routing headers; `session` = a 2025 session per connection
//! (initialize, then `Mcp-Session-Id`); `plain` = bare POSTs (hyper, rmcp stateless).

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mcp_bench::{call_line, INITIALIZE, INITIALIZED};
use serde_json::{json, Value};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let figures = match args.first().map(String::as_str) {
        Some("stdio") => stdio(&args[1..]),
        Some("http") => http(&args[1..]),
        _ => {
            eprintln!("usage: driver stdio <sequential|pipelined|flood> <legacy|modern> -- <cmd...> | driver http <url> <conns> <secs> <modern|session|plain> [pid]");
            std::process::exit(2);
        }
    };
    println!("{figures}");
}

// ------------------------------------------------------------------ /proc

/// user+sys CPU time of `pid`, in microseconds.
fn cpu_us(pid: u32) -> u64 {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return 0;
    };
    // Fields after the command name (which may contain spaces) start after the last ')'.
    let rest = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks: u64 = fields.get(11).and_then(|f| f.parse().ok()).unwrap_or(0)
        + fields.get(12).and_then(|f| f.parse().ok()).unwrap_or(0);
    ticks * 1_000_000 / clock_ticks()
}

fn clock_ticks() -> u64 {
    // sysconf(_SC_CLK_TCK) is 100 on every Linux this runs on.
    100
}

/// Peak resident set of `pid` in KiB.
fn peak_rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM"))
                .and_then(|l| l.split_whitespace().nth(1).and_then(|v| v.parse().ok()))
        })
        .unwrap_or(0)
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i].as_secs_f64() * 1e6
}

// ------------------------------------------------------------------ stdio

fn spawn(cmd: &[String]) -> Child {
    let pinned = Command::new("taskset").arg("--version").output().is_ok();
    let mut command = if pinned {
        // The server on core 0 (the driver is pinned to core 1 by the script), or on the
        // core `SERVER_CPU` names: `SERVER_CPU=1` puts both on one core.
        let cpu = std::env::var("SERVER_CPU").unwrap_or_else(|_| "0".to_owned());
        let mut c = Command::new("taskset");
        c.arg("-c").arg(cpu).args(cmd);
        c
    } else {
        let mut c = Command::new(&cmd[0]);
        c.args(&cmd[1..]);
        c
    };
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {cmd:?}: {e}"))
}

fn stdio(args: &[String]) -> Value {
    let mode = args[0].as_str();
    let modern = args[1] == "modern";
    let cmd: Vec<String> = args
        .iter()
        .skip_while(|a| *a != "--")
        .skip(1)
        .cloned()
        .collect();
    let mut child = spawn(&cmd);
    let pid = child.id();
    let mut input = child.stdin.take().expect("stdin");
    let mut output = BufReader::with_capacity(1 << 20, child.stdout.take().expect("stdout"));
    let mut line = String::new();
    if !modern {
        writeln!(input, "{INITIALIZE}").unwrap();
        input.flush().unwrap();
        output.read_line(&mut line).unwrap();
        writeln!(input, "{INITIALIZED}").unwrap();
        input.flush().unwrap();
    }
    // Warm up.
    for id in 1..=2_000u64 {
        writeln!(input, "{}", call_line(id, modern)).unwrap();
        input.flush().unwrap();
        line.clear();
        output.read_line(&mut line).unwrap();
    }
    let figures = match mode {
        "sequential" => {
            // `SEQUENTIAL_CALLS` lengthens the run for a profiler.
            let n: u64 = std::env::var("SEQUENTIAL_CALLS")
                .ok()
                .and_then(|n| n.parse().ok())
                .unwrap_or(20_000);
            let mut latencies = Vec::with_capacity(n as usize);
            let cpu0 = cpu_us(pid);
            let start = Instant::now();
            for id in 10_000..10_000 + n {
                let t = Instant::now();
                writeln!(input, "{}", call_line(id, modern)).unwrap();
                input.flush().unwrap();
                line.clear();
                output.read_line(&mut line).unwrap();
                latencies.push(t.elapsed());
                assert!(line.contains("\"result\""), "unexpected answer: {line}");
            }
            let elapsed = start.elapsed().as_secs_f64();
            let cpu = cpu_us(pid) - cpu0;
            latencies.sort();
            json!({
                "calls": n,
                "calls_per_s": n as f64 / elapsed,
                "rate": n as f64 / elapsed,
                "median_us": percentile(&latencies, 0.5),
                "p99_us": percentile(&latencies, 0.99),
                "cpu_us_per_call": cpu as f64 / n as f64,
            })
        }
        "pipelined" | "flood" => {
            let flood = mode == "flood";
            let n: u64 = if flood { 100_000 } else { 200_000 };
            let depth = if flood { u64::MAX } else { 64 };
            let answered = Arc::new(AtomicU64::new(0));
            let written = Arc::new(AtomicU64::new(0));
            let stuck = Arc::new(AtomicBool::new(false));
            let cpu0 = cpu_us(pid);
            let start = Instant::now();
            let writer = {
                let (answered, written, stuck) = (answered.clone(), written.clone(), stuck.clone());
                std::thread::spawn(move || {
                    let mut out = std::io::BufWriter::with_capacity(64 * 1024, input);
                    for id in 100_000..100_000 + n {
                        while written.load(Ordering::Acquire) - answered.load(Ordering::Acquire)
                            >= depth
                        {
                            out.flush().unwrap();
                            std::hint::spin_loop();
                            std::thread::yield_now();
                        }
                        writeln!(out, "{}", call_line(id, modern)).unwrap();
                        written.fetch_add(1, Ordering::Release);
                        if depth != u64::MAX && written.load(Ordering::Acquire) % 16 == 0 {
                            out.flush().unwrap();
                        }
                    }
                    out.flush().unwrap();
                    stuck.store(true, Ordering::Release);
                    out
                })
            };
            let mut rss_while_stuck = 0;
            let mut written_before_reading = 0;
            if flood {
                // Read nothing until the writer is done or stuck for a while.
                let mut last = u64::MAX;
                loop {
                    std::thread::sleep(Duration::from_millis(500));
                    let now = written.load(Ordering::Acquire);
                    if stuck.load(Ordering::Acquire) || now == last {
                        break;
                    }
                    last = now;
                }
                rss_while_stuck = peak_rss_kib(pid);
                written_before_reading = written.load(Ordering::Acquire);
            }
            let mut count = 0;
            while count < n {
                line.clear();
                if output.read_line(&mut line).unwrap() == 0 {
                    break;
                }
                count += 1;
                answered.fetch_add(1, Ordering::Release);
            }
            let elapsed = start.elapsed().as_secs_f64();
            let cpu = cpu_us(pid) - cpu0;
            let input = writer.join().unwrap();
            drop(input);
            let mut fig = json!({
                "calls": n,
                "answered": count,
                "calls_per_s": n as f64 / elapsed,
                "rate": n as f64 / elapsed,
                "cpu_us_per_call": cpu as f64 / n as f64,
            });
            if flood {
                fig["written_before_reading"] = json!(written_before_reading);
                fig["rss_kib_while_unread"] = json!(rss_while_stuck);
            }
            let peak = peak_rss_kib(pid);
            fig["peak_rss_kib"] = json!(peak);
            let _ = child.wait();
            return fig;
        }
        other => panic!("unknown mode {other}"),
    };
    let mut figures = figures;
    figures["peak_rss_kib"] = json!(peak_rss_kib(pid));
    drop(input);
    let _ = child.wait();
    figures
}

// ------------------------------------------------------------------ http

struct Conn {
    stream: BufReader<std::net::TcpStream>,
    host: String,
    path: String,
    session: Option<String>,
}

impl Conn {
    fn open(url: &str) -> Self {
        let rest = url.strip_prefix("http://").expect("an http:// URL");
        let (host, path) = rest.split_once('/').unwrap_or((rest, ""));
        let stream = std::net::TcpStream::connect(host).expect("connect");
        stream.set_nodelay(true).unwrap();
        Self {
            stream: BufReader::with_capacity(64 * 1024, stream),
            host: host.to_owned(),
            path: format!("/{path}"),
            session: None,
        }
    }

    /// POSTs `body` and returns the JSON-RPC message of the answer (None for 202).
    fn post(&mut self, body: &str, headers: &[(&str, String)]) -> Option<Value> {
        let mut request = format!(
            "POST {} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n",
            self.path, self.host, body.len()
        );
        for (k, v) in headers {
            request.push_str(&format!("{k}: {v}\r\n"));
        }
        if let Some(s) = &self.session {
            request.push_str(&format!("Mcp-Session-Id: {s}\r\n"));
        }
        request.push_str("\r\n");
        request.push_str(body);
        self.stream.get_mut().write_all(request.as_bytes()).unwrap();
        let mut status = String::new();
        self.stream.read_line(&mut status).unwrap();
        let (mut length, mut chunked) = (None, false);
        loop {
            let mut header = String::new();
            self.stream.read_line(&mut header).unwrap();
            if header == "\r\n" || header.is_empty() {
                break;
            }
            let (k, v) = header.split_once(':').unwrap_or((&header, ""));
            let (k, v) = (k.trim().to_ascii_lowercase(), v.trim());
            match k.as_str() {
                "content-length" => length = v.parse::<usize>().ok(),
                "transfer-encoding" => chunked = v.contains("chunked"),
                "mcp-session-id" => self.session = Some(v.to_owned()),
                _ => {}
            }
        }
        let body = if chunked {
            let mut body = Vec::new();
            loop {
                let mut size = String::new();
                self.stream.read_line(&mut size).unwrap();
                let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
                let mut chunk = vec![0u8; n + 2];
                std::io::Read::read_exact(&mut self.stream, &mut chunk).unwrap();
                if n == 0 {
                    break;
                }
                body.extend_from_slice(&chunk[..n]);
            }
            body
        } else {
            let mut body = vec![0u8; length.unwrap_or(0)];
            std::io::Read::read_exact(&mut self.stream, &mut body).unwrap();
            body
        };
        assert!(
            status.contains(" 200") || status.contains(" 202"),
            "{status}: {}",
            String::from_utf8_lossy(&body)
        );
        let text = String::from_utf8_lossy(&body);
        serde_json::from_str(text.trim()).ok().or_else(|| {
            text.lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
                .find(|m| m.get("result").is_some() || m.get("error").is_some())
        })
    }
}

fn http(args: &[String]) -> Value {
    let url = args[0].clone();
    let connections: usize = args[1].parse().unwrap();
    let seconds: f64 = args[2].parse().unwrap();
    let mode = args[3].clone();
    let pid: Option<u32> = args.get(4).and_then(|p| p.parse().ok());
    let cpu0 = pid.map(cpu_us);
    let start = Instant::now() + Duration::from_millis(500);
    let deadline = start + Duration::from_secs_f64(seconds);
    let threads: Vec<_> = (0..connections)
        .map(|c| {
            let (url, mode) = (url.clone(), mode.clone());
            std::thread::spawn(move || {
                let mut conn = Conn::open(&url);
                let mut headers: Vec<(&str, String)> = Vec::new();
                match mode.as_str() {
                    "modern" => {
                        headers.push(("MCP-Protocol-Version", "2026-07-28".into()));
                        headers.push(("Mcp-Method", "tools/call".into()));
                        headers.push(("Mcp-Name", "add".into()));
                    }
                    "session" => {
                        conn.post(INITIALIZE, &[]);
                        headers.push(("MCP-Protocol-Version", "2025-11-25".into()));
                        conn.post(INITIALIZED, &headers);
                    }
                    _ => {}
                }
                let modern = mode == "modern";
                let mut latencies = Vec::new();
                let mut total = 0u64;
                let mut id = (c as u64) << 32;
                loop {
                    let now = Instant::now();
                    if now >= deadline {
                        break;
                    }
                    id += 1;
                    let answer = conn.post(&call_line(id, modern), &headers);
                    let ok = answer.is_some_and(|m| m["result"]["content"][0]["text"].is_string());
                    assert!(ok, "a wrong answer");
                    total += 1;
                    if now >= start {
                        latencies.push(now.elapsed());
                    }
                }
                (latencies, total)
            })
        })
        .collect();
    let mut latencies: Vec<Duration> = Vec::new();
    let mut total = 0u64;
    for thread in threads {
        let (l, t) = thread.join().unwrap();
        latencies.extend(l);
        total += t;
    }
    let cpu = match (pid, cpu0) {
        (Some(pid), Some(c0)) => Some(cpu_us(pid) - c0),
        _ => None,
    };
    latencies.sort();
    let n = latencies.len() as f64;
    json!({
        "connections": connections,
        "requests": latencies.len(),
        "requests_per_s": n / seconds,
        "rate": n / seconds,
        "median_us": percentile(&latencies, 0.5),
        "p99_us": percentile(&latencies, 0.99),
        "cpu_us_per_call": cpu.map(|c| c as f64 / total as f64),
        "peak_rss_kib": pid.map(peak_rss_kib),
    })
}

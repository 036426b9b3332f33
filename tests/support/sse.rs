//! A streaming HTTP client for tests: one request whose SSE response is read event by event.

use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// An open response stream.
pub struct SseStream {
    stream: TcpStream,
    buf: Vec<u8>,
    /// The response status.
    pub status: u16,
    /// The response head, as text.
    pub head: String,
}

impl SseStream {
    /// Sends `method /mcp` with `headers` and `body` to 127.0.0.1:`port` and reads the head.
    pub async fn open(port: u16, method: &str, headers: &[(&str, &str)], body: &str) -> Self {
        let mut stream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
        let mut request = format!(
            "{method} /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAccept: application/json, text/event-stream\r\nContent-Type: application/json\r\nContent-Length: {}\r\n",
            body.len()
        );
        for (k, v) in headers {
            request.push_str(&format!("{k}: {v}\r\n"));
        }
        request.push_str("\r\n");
        request.push_str(body);
        stream.write_all(request.as_bytes()).await.unwrap();
        let mut this = Self {
            stream,
            buf: Vec::new(),
            status: 0,
            head: String::new(),
        };
        let end = loop {
            if let Some(i) = this.buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break i;
            }
            this.fill().await.expect("a response head");
        };
        this.head = String::from_utf8_lossy(&this.buf[..end]).into_owned();
        this.buf.drain(..end + 4);
        this.status = this
            .head
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        this
    }

    /// A response header's value.
    pub fn header(&self, name: &str) -> Option<String> {
        self.head.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.trim()
                .eq_ignore_ascii_case(name)
                .then(|| v.trim().to_owned())
        })
    }

    async fn fill(&mut self) -> Option<()> {
        let mut chunk = [0u8; 8192];
        let n = tokio::time::timeout(Duration::from_secs(10), self.stream.read(&mut chunk))
            .await
            .ok()?
            .ok()?;
        (n > 0).then(|| self.buf.extend_from_slice(&chunk[..n]))
    }

    /// The JSON of the next `data:` line (chunked framing and other SSE fields skipped), or
    /// `None` when the stream ends or nothing arrives within `wait`.
    pub async fn next_json_within(&mut self, wait: Duration) -> Option<Value> {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            while let Some(i) = self.buf.iter().position(|&b| b == b'\n') {
                let line: Vec<u8> = self.buf.drain(..=i).collect();
                let line = String::from_utf8_lossy(&line);
                if let Some(data) = line.trim_end().strip_prefix("data:") {
                    if let Ok(value) = serde_json::from_str(data.trim()) {
                        return Some(value);
                    }
                }
            }
            let left = deadline.checked_duration_since(tokio::time::Instant::now())?;
            let mut chunk = [0u8; 8192];
            let n = tokio::time::timeout(left, self.stream.read(&mut chunk))
                .await
                .ok()?
                .ok()?;
            if n == 0 {
                return None;
            }
            self.buf.extend_from_slice(&chunk[..n]);
        }
    }

    /// The next event's JSON within 5 s.
    pub async fn next_json(&mut self) -> Value {
        self.next_json_within(Duration::from_secs(5))
            .await
            .expect("an event within 5 s")
    }

    /// The whole body as JSON: a plain JSON body (by Content-Length) or the first SSE event.
    pub async fn json(&mut self) -> Value {
        if let Some(len) = self
            .header("content-length")
            .and_then(|l| l.parse::<usize>().ok())
        {
            while self.buf.len() < len {
                self.fill().await.expect("the whole body");
            }
            return serde_json::from_slice(&self.buf[..len]).expect("a JSON body");
        }
        self.next_json().await
    }
}

/// Serves `server` over HTTP on a free loopback port; returns the port and a stop switch.
pub async fn serve(server: modelctx::server::McpServer) -> (u16, tokio::sync::oneshot::Sender<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        let config = modelctx::transport::HttpConfig::default();
        let _ = server
            .serve_http_on(listener, config, async move {
                let _ = stopped.await;
            })
            .await;
    });
    (port, stop)
}

/// Opens a 2025 session declaring `capabilities`; returns its id.
pub async fn open_session(port: u16, capabilities: Value) -> String {
    let body = serde_json::json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": capabilities,
        "clientInfo": {"name": "t", "version": "1"}}});
    let mut reply = SseStream::open(port, "POST", &[], &body.to_string()).await;
    let sid = reply.header("mcp-session-id").expect("a session id");
    let _ = reply.json().await;
    let note = serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let headers = [
        ("Mcp-Session-Id", sid.as_str()),
        ("MCP-Protocol-Version", "2025-11-25"),
    ];
    SseStream::open(port, "POST", &headers, &note.to_string()).await;
    sid
}

/// Sends one request in session `sid` and returns its response.
pub async fn session_call(port: u16, sid: &str, body: &Value) -> Value {
    let headers = [
        ("Mcp-Session-Id", sid),
        ("MCP-Protocol-Version", "2025-11-25"),
    ];
    SseStream::open(port, "POST", &headers, &body.to_string())
        .await
        .json()
        .await
}

/// Sends one 2026 request (with the routing headers) and opens its response stream.
pub async fn modern_post(port: u16, body: &Value) -> SseStream {
    let method = body["method"].as_str().unwrap_or("").to_owned();
    let name = body["params"]["name"].as_str().map(str::to_owned);
    let mut headers = vec![
        ("MCP-Protocol-Version", "2026-07-28".to_owned()),
        ("Mcp-Method", method),
    ];
    if let Some(name) = name {
        headers.push(("Mcp-Name", name));
    }
    let headers: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
    SseStream::open(port, "POST", &headers, &body.to_string()).await
}

/// Calls tool `name` without arguments over the 2026 wire and returns the answer's JSON.
pub async fn call_tool(port: u16, id: i64, name: &str) -> Value {
    let mut meta = serde_json::Map::new();
    meta.insert(
        "io.modelcontextprotocol/protocolVersion".into(),
        "2026-07-28".into(),
    );
    meta.insert(
        "io.modelcontextprotocol/clientCapabilities".into(),
        serde_json::json!({}),
    );
    let body = serde_json::json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": name, "arguments": {}, "_meta": meta}});
    modern_post(port, &body).await.json().await
}

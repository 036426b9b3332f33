//! A tiny HTTP server for the verifiers' tests: answers every request with the status and body
//! set last, counts requests and keeps what they said.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

#[derive(Default)]
struct Shared {
    status: u16,
    body: String,
    delay: Duration,
    requests: Vec<String>,
}

/// The server; it stops with the test's runtime.
#[derive(Clone)]
pub(super) struct TestServer {
    pub(super) url: String,
    hits: Arc<AtomicUsize>,
    shared: Arc<Mutex<Shared>>,
}

impl TestServer {
    /// Starts answering `status` with `body` at `http://127.0.0.1:<port>/`.
    pub(super) async fn start(status: u16, body: &str) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/", listener.local_addr().unwrap());
        let server = Self {
            url,
            hits: Arc::default(),
            shared: Arc::new(Mutex::new(Shared {
                status,
                body: body.to_owned(),
                ..Shared::default()
            })),
        };
        let running = server.clone();
        tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                tokio::spawn(running.clone().answer(socket));
            }
        });
        server
    }

    async fn answer(self, mut socket: tokio::net::TcpStream) {
        let mut request = Vec::new();
        let mut buf = [0u8; 4096];
        loop {
            let Ok(n) = socket.read(&mut buf).await else {
                return;
            };
            if n == 0 {
                return;
            }
            request.extend_from_slice(&buf[..n]);
            let text = String::from_utf8_lossy(&request);
            if let Some(end) = text.find("\r\n\r\n") {
                let length = text[..end]
                    .lines()
                    .find_map(|l| {
                        let (name, value) = l.split_once(':')?;
                        name.eq_ignore_ascii_case("content-length")
                            .then(|| value.trim().parse::<usize>().ok())
                            .flatten()
                    })
                    .unwrap_or(0);
                if request.len() >= end + 4 + length {
                    break;
                }
            }
        }
        self.hits.fetch_add(1, Ordering::SeqCst);
        let (status, body, delay) = {
            let mut shared = self.shared.lock().unwrap();
            shared
                .requests
                .push(String::from_utf8_lossy(&request).into_owned());
            (shared.status, shared.body.clone(), shared.delay)
        };
        tokio::time::sleep(delay).await;
        let response = format!(
            "HTTP/1.1 {status} Test\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        let _ = socket.write_all(response.as_bytes()).await;
        let _ = socket.shutdown().await;
    }

    /// Answers `status` with `body` from now on.
    pub(super) fn set(&self, status: u16, body: &str) {
        let mut shared = self.shared.lock().unwrap();
        shared.status = status;
        shared.body = body.to_owned();
    }

    /// Waits `delay` before each answer.
    pub(super) fn delay(&self, delay: Duration) {
        self.shared.lock().unwrap().delay = delay;
    }

    /// How many requests came.
    pub(super) fn hits(&self) -> usize {
        self.hits.load(Ordering::SeqCst)
    }

    /// The last request, head and body.
    pub(super) fn last_request(&self) -> String {
        let shared = self.shared.lock().unwrap();
        shared.requests.last().cloned().unwrap_or_default()
    }
}

//! The part of the authorization code flow where a person logs in: the client sends them to
//! the authorization URL and gets back the redirect's query (`code`, `state`, `iss`).
//!
//! [`BrowserLogin`] opens the system browser and catches the redirect on a loopback port;
//! [`HeadlessLogin`] follows the authorization URL itself, for authorization servers that
//! redirect at once (tests, the conformance suite).

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use crate::auth::AuthFuture;
use crate::error::McpError;
use crate::fetch::{parse_query, Fetch};

/// The authorization response (RFC 6749 §4.1.2, RFC 9207): the query of the redirect.
///
/// `Debug` hides the code.
#[derive(Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct AuthorizationResponse {
    /// The authorization code.
    pub code: Option<String>,
    /// The `state` sent in the authorization request, echoed.
    pub state: Option<String>,
    /// The issuer that answered (RFC 9207).
    pub iss: Option<String>,
    /// An error code (`access_denied`, ...) instead of a code.
    pub error: Option<String>,
    /// A human-readable reason for `error`.
    pub error_description: Option<String>,
}

impl AuthorizationResponse {
    /// Reads a query string (`code=...&state=...`, without the `?`).
    pub fn from_query(query: &str) -> Self {
        let mut response = Self::default();
        for (name, value) in parse_query(query) {
            let slot = match name.as_str() {
                "code" => &mut response.code,
                "state" => &mut response.state,
                "iss" => &mut response.iss,
                "error" => &mut response.error,
                "error_description" => &mut response.error_description,
                _ => continue,
            };
            slot.get_or_insert(value);
        }
        response
    }

    /// Reads the query of a redirect URL (absolute or not); a URL without a query gives an
    /// empty response.
    pub fn from_redirect(url: &str) -> Self {
        let without_fragment = url.split('#').next().unwrap_or(url);
        match without_fragment.split_once('?') {
            Some((_, query)) => Self::from_query(query),
            None => Self::default(),
        }
    }
}

impl std::fmt::Debug for AuthorizationResponse {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuthorizationResponse")
            .field("code", &self.code.as_ref().map(|_| "<redacted>"))
            .field("state", &self.state)
            .field("iss", &self.iss)
            .field("error", &self.error)
            .field("error_description", &self.error_description)
            .finish()
    }
}

/// How a person logs in: the redirect URI to register and send, and the round trip through
/// the authorization endpoint.
pub trait Login: Send + Sync + 'static {
    /// The redirect URI: registered with the authorization server and sent with every
    /// authorization request. Must stay the same for the life of the login.
    fn redirect_uri(&self) -> AuthFuture<'_, String>;

    /// Sends the person to `authorization_url` and returns the query of the redirect to
    /// `redirect_uri`. Checking it (`state`, `iss`, errors) is the caller's job.
    fn authorize<'a>(
        &'a self,
        authorization_url: &'a str,
        redirect_uri: &'a str,
    ) -> AuthFuture<'a, AuthorizationResponse>;
}

/// How long [`HeadlessLogin`] waits for the authorization endpoint (30 s).
pub const DEFAULT_HEADLESS_TIMEOUT: Duration = Duration::from_secs(30);

/// A login without a person: `GET` the authorization URL, do not follow the redirect, read the
/// response from its `Location`. Works with authorization servers that redirect at once (test
/// servers, the conformance suite's); nothing listens on the redirect URI.
///
/// Defaults: the endpoint has 30 s to answer.
#[derive(Debug, Clone)]
pub struct HeadlessLogin {
    redirect_uri: String,
    timeout: Duration,
    tls: crate::fetch::Tls,
}

impl HeadlessLogin {
    /// A login that claims `redirect_uri` (any absolute URL; nothing is served there).
    pub fn new(redirect_uri: impl Into<String>) -> Self {
        Self {
            redirect_uri: redirect_uri.into(),
            timeout: DEFAULT_HEADLESS_TIMEOUT,
            tls: None,
        }
    }

    /// How long the authorization endpoint has to answer (default 30 s).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The TLS settings for an `https://` authorization endpoint.
    #[cfg(feature = "https")]
    pub fn tls_config(mut self, config: std::sync::Arc<rustls::ClientConfig>) -> Self {
        self.tls = Some(config);
        self
    }
}

impl Login for HeadlessLogin {
    fn redirect_uri(&self) -> AuthFuture<'_, String> {
        Box::pin(async { Ok(self.redirect_uri.clone()) })
    }

    fn authorize<'a>(
        &'a self,
        authorization_url: &'a str,
        _redirect_uri: &'a str,
    ) -> AuthFuture<'a, AuthorizationResponse> {
        Box::pin(async move {
            let fetch = Fetch::new(self.timeout, &self.tls)?;
            let fetched = fetch.get_page(authorization_url).await?;
            let location = fetched
                .headers
                .get(axum::http::header::LOCATION)
                .and_then(|v| v.to_str().ok())
                .filter(|_| fetched.status.is_redirection());
            match location {
                Some(location) => Ok(AuthorizationResponse::from_redirect(location)),
                None => Err(McpError::internal(format!(
                    "the authorization endpoint answered {} without a redirect",
                    fetched.status
                ))),
            }
        })
    }
}

/// How long [`BrowserLogin`] waits for the person to finish (5 minutes).
pub const DEFAULT_BROWSER_TIMEOUT: Duration = Duration::from_secs(300);

/// The path of [`BrowserLogin`]'s redirect URI (`/callback`).
pub const CALLBACK_PATH: &str = "/callback";

/// A login in the system browser: opens the authorization URL (`xdg-open` on Linux and the
/// BSDs, `open` on macOS, `rundll32 url.dll,FileProtocolHandler` on Windows, which unlike
/// `start` leaves the `&`s of the URL alone) and waits for the redirect on a loopback port
/// (RFC 8252 §7.3), answering the browser with a short page. When no browser can be started,
/// the URL is printed on standard error for the person to open.
///
/// Defaults: redirect URI `http://127.0.0.1:<port>/callback` with a port the system picks
/// (bound on first use and kept for the life of the login, so that the URI registered with
/// the authorization server stays valid); 5 minutes to finish. Give a fixed port with
/// [`port`](Self::port) when the registration outlives the process (a persistent
/// [`TokenStore`](super::TokenStore)) or the authorization server wants exact URIs.
#[derive(Debug)]
pub struct BrowserLogin {
    port: u16,
    timeout: Duration,
    listener: tokio::sync::Mutex<Option<TcpListener>>,
    /// Starts the browser (replaced in tests).
    opener: fn(&str) -> bool,
}

impl Default for BrowserLogin {
    fn default() -> Self {
        Self::new()
    }
}

impl BrowserLogin {
    /// A browser login on a port the system picks.
    pub fn new() -> Self {
        Self {
            port: 0,
            timeout: DEFAULT_BROWSER_TIMEOUT,
            listener: tokio::sync::Mutex::new(None),
            opener: open_browser,
        }
    }

    /// Listens on this loopback port (default: one the system picks).
    pub fn port(mut self, port: u16) -> Self {
        self.port = port;
        self
    }

    /// How long the person has to log in (default 5 minutes).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The bound listener's port, binding it first if needed.
    async fn bound_port(&self, slot: &mut Option<TcpListener>) -> Result<u16, McpError> {
        if slot.is_none() {
            let listener = TcpListener::bind(("127.0.0.1", self.port))
                .await
                .map_err(|e| {
                    McpError::internal(format!(
                        "cannot listen for the login redirect on 127.0.0.1:{}: {e}",
                        self.port
                    ))
                })?;
            *slot = Some(listener);
        }
        let listener = slot
            .as_ref()
            .ok_or_else(|| McpError::internal("no redirect listener"))?;
        listener
            .local_addr()
            .map(|a| a.port())
            .map_err(|e| McpError::internal(format!("redirect listener: {e}")))
    }
}

/// Starts the system's browser on `url`; `false` when none could be started.
fn open_browser(url: &str) -> bool {
    // Only web URLs reach the system's URL opener (discovery already refuses others; this
    // keeps a custom `Login` caller from handing it a `file:` or custom-scheme URL).
    if super::discovery::check_secure_url(url, "authorization URL").is_err() {
        tracing::warn!("refused to open a URL that is not https (or http on this machine)");
        return false;
    }
    let mut command = if cfg!(target_os = "macos") {
        std::process::Command::new("open")
    } else if cfg!(windows) {
        let mut c = std::process::Command::new("rundll32");
        c.arg("url.dll,FileProtocolHandler");
        c
    } else {
        std::process::Command::new("xdg-open")
    };
    command
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    match command.spawn() {
        Ok(mut child) => {
            // Reap it without holding anyone up.
            std::thread::spawn(move || child.wait());
            true
        }
        Err(e) => {
            tracing::debug!(error = %e, "could not start a browser");
            false
        }
    }
}

/// The request target of an HTTP request head (`GET /callback?x HTTP/1.1` -> `/callback?x`).
fn request_target(head: &str) -> Option<&str> {
    let line = head.lines().next()?;
    let mut parts = line.split(' ');
    let method = parts.next()?;
    let target = parts.next()?;
    (method == "GET").then_some(target)
}

/// How long one connection to the redirect listener may take to send its request head.
const HEAD_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

const DONE_PAGE: &str = "<!doctype html><html><head><meta charset=\"utf-8\"><title>Login \
    complete</title></head><body><p>Login complete. You can close this window and return to \
    the application.</p></body></html>";

impl Login for BrowserLogin {
    fn redirect_uri(&self) -> AuthFuture<'_, String> {
        Box::pin(async move {
            let mut slot = self.listener.lock().await;
            let port = self.bound_port(&mut slot).await?;
            Ok(format!("http://127.0.0.1:{port}{CALLBACK_PATH}"))
        })
    }

    fn authorize<'a>(
        &'a self,
        authorization_url: &'a str,
        _redirect_uri: &'a str,
    ) -> AuthFuture<'a, AuthorizationResponse> {
        Box::pin(async move {
            let mut slot = self.listener.lock().await;
            self.bound_port(&mut slot).await?;
            let listener = slot
                .as_ref()
                .ok_or_else(|| McpError::internal("no redirect listener"))?;
            tracing::info!(url = %authorization_url, "opening the browser to log in");
            if !(self.opener)(authorization_url) {
                // Control characters could rewrite the terminal: shown escaped.
                let shown: String = authorization_url
                    .chars()
                    .filter(|c| !c.is_control())
                    .collect();
                eprintln!("Open this URL in a browser to log in:\n{shown}");
            }
            // Only the redirect of this login ends it: one carrying its `state` (a stale tab or
            // another local program calling the port is answered and ignored).
            let expected =
                crate::fetch::parse_query(authorization_url.split_once('?').map_or("", |(_, q)| q))
                    .into_iter()
                    .find(|(k, _)| k == "state")
                    .map(|(_, v)| v);
            let wait = async {
                loop {
                    let (mut stream, _) = listener
                        .accept()
                        .await
                        .map_err(|e| McpError::internal(format!("login redirect listener: {e}")))?;
                    let mut head = Vec::with_capacity(1024);
                    let mut buf = [0u8; 1024];
                    // Read the request head (at most 16 KiB, within 5 s; the body, if any, is
                    // ignored): an idle connection cannot hold the login up.
                    let read_head = async {
                        while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 16 * 1024 {
                            match stream.read(&mut buf).await {
                                Ok(0) | Err(_) => break,
                                Ok(n) => head.extend_from_slice(&buf[..n]),
                            }
                        }
                    };
                    if tokio::time::timeout(HEAD_TIMEOUT, read_head).await.is_err() {
                        continue;
                    }
                    let head = String::from_utf8_lossy(&head);
                    let target = request_target(&head).unwrap_or("");
                    let path = target.split('?').next().unwrap_or("");
                    if path != CALLBACK_PATH {
                        let _ = stream
                            .write_all(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
                            .await;
                        continue;
                    }
                    let response = AuthorizationResponse::from_redirect(target);
                    if expected.is_some() && response.state != expected {
                        let _ = stream
                            .write_all(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
                            .await;
                        continue;
                    }
                    let reply = format!(
                        "HTTP/1.1 200 OK\r\ncontent-type: text/html; charset=utf-8\r\n\
                         content-length: {}\r\ncache-control: no-store\r\nconnection: close\r\n\r\n{DONE_PAGE}",
                        DONE_PAGE.len()
                    );
                    let _ = stream.write_all(reply.as_bytes()).await;
                    let _ = stream.shutdown().await;
                    return Ok(response);
                }
            };
            match tokio::time::timeout(self.timeout, wait).await {
                Ok(result) => result,
                Err(_) => Err(McpError::internal(format!(
                    "the login did not finish within {} s",
                    self.timeout.as_secs()
                ))),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_redirect() {
        let r = AuthorizationResponse::from_redirect(
            "http://localhost:3000/callback?code=test-auth-code&state=s%20t&iss=http%3A%2F%2Flocalhost%3A1#x",
        );
        assert_eq!(r.code.as_deref(), Some("test-auth-code"));
        assert_eq!(r.state.as_deref(), Some("s t"));
        assert_eq!(r.iss.as_deref(), Some("http://localhost:1"));
        assert!(!format!("{r:?}").contains("test-auth-code"));
        assert_eq!(
            AuthorizationResponse::from_redirect("/cb"),
            AuthorizationResponse::default()
        );
        assert_eq!(
            request_target("GET /callback?a=b HTTP/1.1\r\n"),
            Some("/callback?a=b")
        );
        assert_eq!(request_target("POST /callback HTTP/1.1\r\n"), None);
    }

    #[tokio::test]
    async fn browser_login_catches_the_redirect() {
        let mut login = BrowserLogin::new().timeout(Duration::from_secs(5));
        login.opener = |_| true;
        let redirect = login.redirect_uri().await.unwrap();
        assert!(redirect.starts_with("http://127.0.0.1:") && redirect.ends_with("/callback"));
        // Stand in for the browser: hit the redirect URI once the login listens.
        let hit = format!("{redirect}?code=c1&state=s1");
        let browser = tokio::spawn(async move {
            let fetch = Fetch::new(Duration::from_secs(5), &None).unwrap();
            tokio::time::sleep(Duration::from_millis(50)).await;
            let other = hit.replace("/callback", "/favicon.ico");
            assert_eq!(fetch.get_page(&other).await.unwrap().status.as_u16(), 404);
            fetch.get_page(&hit).await.unwrap().status.as_u16()
        });
        let response = login
            .authorize("http://127.0.0.1:1/authorize", &redirect)
            .await
            .unwrap();
        assert_eq!(response.code.as_deref(), Some("c1"));
        assert_eq!(response.state.as_deref(), Some("s1"));
        assert_eq!(browser.await.unwrap(), 200);
    }
}

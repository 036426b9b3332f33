//! Plain HTTP requests (GET a JSON document, POST a form): what the OAuth client, the JWKS
//! cache and token introspection need, on the same hyper client and TLS settings as the
//! Streamable HTTP client transport.

use std::sync::Arc;
use std::time::Duration;

use axum::http::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE};
use axum::http::{HeaderMap, Method, Request, StatusCode, Uri};
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client as Hyper;
use hyper_util::rt::TokioExecutor;

use crate::error::McpError;

#[cfg(feature = "https")]
pub(crate) type Connector = hyper_rustls::HttpsConnector<HttpConnector>;
#[cfg(not(feature = "https"))]
pub(crate) type Connector = HttpConnector;

/// TLS settings for `https://` (`None`: Mozilla's roots, no client certificate).
#[cfg(feature = "https")]
pub(crate) type Tls = Option<Arc<rustls::ClientConfig>>;
/// Without the `https` feature there are no TLS settings.
#[cfg(not(feature = "https"))]
pub(crate) type Tls = Option<Arc<()>>;

/// A connector with `connect_timeout`, `TCP_NODELAY`, and TLS when the `https` feature is on.
pub(crate) fn connector(connect_timeout: Duration, tls: &Tls) -> Result<Connector, McpError> {
    let mut http = HttpConnector::new();
    http.set_connect_timeout(Some(connect_timeout));
    http.set_nodelay(true);
    #[cfg(feature = "https")]
    {
        http.enforce_http(false);
        let config = match tls {
            Some(config) => rustls::ClientConfig::clone(config),
            None => default_tls()?,
        };
        Ok(hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config(config)
            .https_or_http()
            .enable_http1()
            .wrap_connector(http))
    }
    #[cfg(not(feature = "https"))]
    {
        let _ = tls;
        Ok(http)
    }
}

/// Mozilla's root certificates, the ring provider, TLS 1.2 and 1.3.
#[cfg(feature = "https")]
fn default_tls() -> Result<rustls::ClientConfig, McpError> {
    let roots = rustls::RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    };
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map(|builder| builder.with_root_certificates(roots).with_no_client_auth())
        .map_err(|e| McpError::internal(format!("TLS configuration: {e}")))
}

/// Checks that `url` is `http://` or (with the `https` feature) `https://` with a host.
pub(crate) fn parse_url(url: &str) -> Result<Uri, McpError> {
    let uri: Uri = url
        .parse()
        .map_err(|e| McpError::invalid_params(format!("invalid URL `{url}`: {e}")))?;
    match uri.scheme_str() {
        Some("http") if uri.host().is_some() => Ok(uri),
        Some("https") if uri.host().is_some() && cfg!(feature = "https") => Ok(uri),
        Some("https") => Err(McpError::invalid_params(format!(
            "`{url}`: https needs the `https` feature of this crate"
        ))),
        _ => Err(McpError::invalid_params(format!(
            "`{url}` is not an http:// or https:// URL with a host"
        ))),
    }
}

/// The joined chain of an error and its sources (hyper's top-level text alone says little).
pub(crate) fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(inner) = source {
        text = format!("{text}: {inner}");
        source = inner.source();
    }
    text
}

/// What came back: status, headers and the whole body.
#[derive(Debug)]
pub(crate) struct Fetched {
    pub(crate) status: StatusCode,
    #[cfg_attr(not(feature = "client"), allow(dead_code))]
    pub(crate) headers: HeaderMap,
    pub(crate) body: Bytes,
}

impl Fetched {
    /// The body as JSON of type `T`; the error names `what` and the URL.
    pub(crate) fn json<T: serde::de::DeserializeOwned>(
        &self,
        what: &str,
        url: &str,
    ) -> Result<T, McpError> {
        serde_json::from_slice(&self.body).map_err(|e| {
            McpError::internal(format!("{what} at {url} is not the JSON expected: {e}"))
        })
    }
}

/// A small HTTP client for documents and forms (not for MCP messages).
#[derive(Clone)]
pub(crate) struct Fetch {
    hyper: Hyper<Connector, Full<Bytes>>,
    timeout: Duration,
    max_body: usize,
}

impl std::fmt::Debug for Fetch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Fetch")
            .field("timeout", &self.timeout)
            .field("max_body", &self.max_body)
            .finish_non_exhaustive()
    }
}

/// The largest document read (1 MiB): metadata, key sets and token answers are small.
pub(crate) const MAX_DOCUMENT: usize = 1024 * 1024;

impl Fetch {
    /// A client whose requests (connect, send, read) end after `timeout`.
    pub(crate) fn new(timeout: Duration, tls: &Tls) -> Result<Self, McpError> {
        let connector = connector(timeout, tls)?;
        Ok(Self {
            hyper: Hyper::builder(TokioExecutor::new()).build(connector),
            timeout,
            max_body: MAX_DOCUMENT,
        })
    }

    /// Sends `request` and reads the whole answer (at most 1 MiB), all within the timeout.
    pub(crate) async fn send(&self, request: Request<Full<Bytes>>) -> Result<Fetched, McpError> {
        let uri = request.uri().clone();
        let exchange = async {
            let response = self.hyper.request(request).await.map_err(|e| {
                McpError::internal(format!("could not reach {uri}: {}", error_chain(&e)))
            })?;
            let (parts, body) = response.into_parts();
            let limited = http_body_util::Limited::new(body, self.max_body);
            let body = limited
                .collect()
                .await
                .map_err(|e| McpError::internal(format!("could not read {uri}: {e}")))?
                .to_bytes();
            Ok(Fetched {
                status: parts.status,
                headers: parts.headers,
                body,
            })
        };
        match tokio::time::timeout(self.timeout, exchange).await {
            Ok(result) => result,
            Err(_) => Err(McpError::internal(format!(
                "{uri} did not answer within {} s",
                self.timeout.as_secs_f32()
            ))),
        }
    }

    #[cfg(any(feature = "client", feature = "jwt"))]
    /// `GET url` accepting JSON.
    pub(crate) async fn get(&self, url: &str) -> Result<Fetched, McpError> {
        let uri = parse_url(url)?;
        let request = Request::builder()
            .method(Method::GET)
            .uri(uri)
            .header(ACCEPT, "application/json")
            .body(Full::new(Bytes::new()))
            .map_err(|e| McpError::internal(format!("GET {url}: {e}")))?;
        self.send(request).await
    }

    #[cfg(feature = "client")]
    /// `GET url` as a browser would (accepting HTML). Redirects are not followed: a `3xx` comes
    /// back as it is, with its `Location` header (the OAuth client's headless login reads the
    /// authorization response there).
    pub(crate) async fn get_page(&self, url: &str) -> Result<Fetched, McpError> {
        let uri = parse_url(url)?;
        let request = Request::builder()
            .method(Method::GET)
            .uri(uri)
            .header(ACCEPT, "text/html, */*")
            .body(Full::new(Bytes::new()))
            .map_err(|e| McpError::internal(format!("GET {url}: {e}")))?;
        self.send(request).await
    }

    /// `POST url` with a form body (`application/x-www-form-urlencoded`) and, when given, an
    /// `Authorization` header value.
    pub(crate) async fn post_form(
        &self,
        url: &str,
        form: &[(&str, &str)],
        authorization: Option<&str>,
    ) -> Result<Fetched, McpError> {
        let uri = parse_url(url)?;
        let mut builder = Request::builder()
            .method(Method::POST)
            .uri(uri)
            .header(ACCEPT, "application/json")
            .header(CONTENT_TYPE, "application/x-www-form-urlencoded");
        if let Some(value) = authorization {
            builder = builder.header(AUTHORIZATION, value);
        }
        let request = builder
            .body(Full::new(Bytes::from(form_encode(form))))
            .map_err(|e| McpError::internal(format!("POST {url}: {e}")))?;
        self.send(request).await
    }

    #[cfg(feature = "client")]
    /// `POST url` with a JSON body.
    pub(crate) async fn post_json(
        &self,
        url: &str,
        body: &serde_json::Value,
    ) -> Result<Fetched, McpError> {
        let uri = parse_url(url)?;
        let request = Request::builder()
            .method(Method::POST)
            .uri(uri)
            .header(ACCEPT, "application/json")
            .header(CONTENT_TYPE, "application/json")
            .body(Full::new(Bytes::from(body.to_string())))
            .map_err(|e| McpError::internal(format!("POST {url}: {e}")))?;
        self.send(request).await
    }
}

/// `application/x-www-form-urlencoded` of `pairs` (RFC 3986 unreserved characters kept, space
/// as `%20`, which every server reads).
pub(crate) fn form_encode(pairs: &[(&str, &str)]) -> String {
    let mut out = String::new();
    for (i, (k, v)) in pairs.iter().enumerate() {
        if i > 0 {
            out.push('&');
        }
        percent_encode_into(k, &mut out);
        out.push('=');
        percent_encode_into(v, &mut out);
    }
    out
}

/// Percent-encodes everything but RFC 3986's unreserved characters.
pub(crate) fn percent_encode_into(text: &str, out: &mut String) {
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
}

#[cfg(feature = "client")]
/// Decodes `%XX` escapes and `+` (as a space) of a form or query component.
pub(crate) fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok();
                match hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                    Some(b) => {
                        out.push(b);
                        i += 2;
                    }
                    None => out.push(b'%'),
                }
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(feature = "client")]
/// The `key=value` pairs of a query string or form body, decoded.
pub(crate) fn parse_query(query: &str) -> Vec<(String, String)> {
    query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|pair| {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            (percent_decode(k), percent_decode(v))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms_round_trip() {
        let encoded = form_encode(&[("a b", "x=y&z"), ("scope", "read write")]);
        assert_eq!(encoded, "a%20b=x%3Dy%26z&scope=read%20write");
        assert_eq!(
            parse_query(&encoded),
            vec![
                ("a b".to_owned(), "x=y&z".to_owned()),
                ("scope".to_owned(), "read write".to_owned())
            ]
        );
        assert_eq!(percent_decode("100%"), "100%");
        assert_eq!(percent_decode("%4"), "%4");
        assert_eq!(percent_decode("a+b%2Fc"), "a b/c");
    }
}

//! [`McpHttp`] as a tower `Service`: the endpoint at [`HttpConfig::path`](super::HttpConfig::path),
//! delegated to the router built once in [`McpHttp::new`].

use std::convert::Infallible;
use std::task::{Context, Poll};

use axum::body::{Body, Bytes, HttpBody};
use axum::http::{Request, Response};
use axum::routing::future::RouteFuture;
use axum::BoxError;
use tower_service::Service;

use super::McpHttp;

/// The endpoint at [`HttpConfig::path`](super::HttpConfig::path) (`/mcp` by default) as a
/// tower `Service`, for any request body axum's `Router` takes. Always ready; never fails (every
/// refusal is an HTTP answer): `404` off the path, `405` with `Allow` for a method the endpoint
/// does not serve, and with [`HttpConfig::auth`](super::HttpConfig::auth) the Protected
/// Resource Metadata at its well-known paths and `401`/`403` for a missing or insufficient
/// token. Each call runs on the router built once in [`McpHttp::new`]; clones share it and
/// every session.
///
/// Served this way, the request's peer address (by which
/// [`max_sessions_per_client`](super::HttpConfig::max_sessions_per_client) counts a client
/// without a token) is the `axum::extract::ConnectInfo<SocketAddr>` extension when your server
/// inserts one (`axum::serve` with `into_make_service_with_connect_info` does); without it such
/// a client has no share of its own and only `max_sessions` bounds it. The connection limits of
/// [`serve_http_on`](crate::lowlevel::Server::serve_http_on) are the server's business:
/// configure them on the server you run this under.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// use modelctx_core::server::McpServer;
/// use modelctx_core::transport::axum::body::{to_bytes, Body};
/// use modelctx_core::transport::axum::http::{HeaderValue, Request, StatusCode};
/// use modelctx_core::transport::{HttpConfig, McpHttp};
/// use tower::{ServiceBuilder, ServiceExt};
///
/// let http = McpHttp::new(McpServer::new("demo"), HttpConfig::default()).await.unwrap();
/// assert_eq!(http.path(), "/mcp");
///
/// // Under any tower layer: here one that stamps every answer.
/// let service = ServiceBuilder::new()
///     .map_response(|mut response: modelctx_core::transport::axum::response::Response| {
///         response.headers_mut().insert("x-served-by", HeaderValue::from_static("demo"));
///         response
///     })
///     .service(http.clone());
///
/// let discover = r#"{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{
///     "io.modelcontextprotocol/protocolVersion":"2026-07-28",
///     "io.modelcontextprotocol/clientCapabilities":{}}}}"#;
/// let request = Request::post("/mcp")
///     .header("host", "localhost")
///     .header("content-type", "application/json")
///     .header("accept", "application/json")
///     .header("mcp-protocol-version", "2026-07-28")
///     .header("mcp-method", "server/discover")
///     .body(Body::from(discover))
///     .unwrap();
/// let response = service.clone().oneshot(request).await.unwrap();
/// assert_eq!(response.status(), StatusCode::OK);
/// assert_eq!(response.headers()["x-served-by"], "demo");
/// let body = to_bytes(response.into_body(), 1 << 20).await.unwrap();
/// let answer: serde_json::Value = serde_json::from_slice(&body).unwrap();
/// let info = &answer["result"]["_meta"]["io.modelcontextprotocol/serverInfo"];
/// assert_eq!(info["name"], "demo");
///
/// // Anywhere but its path: 404.
/// let elsewhere = Request::get("/other").body(Body::empty()).unwrap();
/// assert_eq!(service.oneshot(elsewhere).await.unwrap().status(), StatusCode::NOT_FOUND);
/// http.stop().await;
/// # });
/// ```
///
/// To serve it on a socket without axum, hand it to hyper-util
/// (`hyper_util::service::TowerToHyperService::new(http)`) or any tower-based server; to
/// serve it next to routes of your own, `axum::Router::new().route(..).fallback_service(http)`.
impl<S, B> Service<Request<B>> for McpHttp<S>
where
    S: Send + Sync + 'static,
    B: HttpBody<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    type Response = Response<Body>;
    type Error = Infallible;
    type Future = RouteFuture<Infallible>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        self.service.call(request)
    }
}

//! `McpHttp` as a tower `Service`: called directly (hyper-util's tower adapter, which runs it
//! with `oneshot`), under a tower layer served over a real socket on 127.0.0.1, and served by
//! hyper itself. It serves `HttpConfig::path`, as `McpHttp::axum_router()` does.

mod support;

use modelctx::auth::{ResourceServer, TokenVerifier, VerifyError, VerifyFuture};
use modelctx::prelude::*;
use modelctx::transport::axum::body::{to_bytes, Body};
use modelctx::transport::axum::http::{HeaderMap, HeaderValue, Request, StatusCode};
use modelctx::transport::axum::response::Response;
use modelctx::transport::{axum, HttpConfig, McpHttp};
use serde_json::{json, Value};
use support::raw_http::send_to;
use tokio::net::TcpListener;

/// Say hello.
#[tool]
async fn hello() -> String {
    "hello".into()
}

fn server() -> McpServer {
    McpServer::new("service-test")
        .version("1.2.3")
        .tool(HelloTool)
}

/// One request through `service` as hyper would run it (`TowerToHyperService` clones the
/// service and calls it with `oneshot`); the status, headers and body as JSON (`Null` if not).
async fn oneshot<T>(service: T, request: Request<Body>) -> (StatusCode, HeaderMap, Value)
where
    hyper_util::service::TowerToHyperService<T>: hyper::service::Service<
        Request<Body>,
        Response = Response,
        Error = std::convert::Infallible,
    >,
{
    use hyper::service::Service as _;
    let adapter = hyper_util::service::TowerToHyperService::new(service);
    let response = match adapter.call(request).await {
        Ok(response) => response,
        Err(never) => match never {},
    };
    let (parts, body) = response.into_parts();
    let bytes = to_bytes(body, 1 << 20).await.unwrap();
    let json = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    (parts.status, parts.headers, json)
}

/// A 2026 POST of `body` to `path` (JSON answers only).
fn modern_post(path: &str, body: &Value) -> Request<Body> {
    let mut builder = Request::post(path)
        .header("host", "localhost")
        .header("content-type", "application/json")
        .header("accept", "application/json")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", body["method"].as_str().unwrap());
    if let Some(name) = body["params"]["name"].as_str() {
        builder = builder.header("mcp-name", name);
    }
    builder.body(Body::from(body.to_string())).unwrap()
}

fn assert_service_traits<T: Clone + Send + Sync + std::fmt::Debug + 'static>(_: &T) {}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2026_tools_call_and_discover_through_the_service() {
    let http = McpHttp::new(server(), HttpConfig::default()).await.unwrap();
    assert_service_traits(&http);
    assert_eq!(http.path(), "/mcp");

    let call = support::modern(1, "tools/call", json!({"name": "hello", "arguments": {}}));
    let (status, _, answer) = oneshot(http.clone(), modern_post("/mcp", &call)).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer["id"], 1);
    assert_eq!(answer["result"]["content"][0]["text"], "hello");
    assert_eq!(answer["result"]["resultType"], "complete");

    let discover = support::modern(2, "server/discover", json!({}));
    let (status, _, answer) = oneshot(http.clone(), modern_post("/mcp", &discover)).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(
        answer["result"]["_meta"]["io.modelcontextprotocol/serverInfo"],
        json!({"name": "service-test", "version": "1.2.3"})
    );
    http.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_configured_path_is_the_one_served() {
    let mut config = HttpConfig::default();
    config.path = "/api/mcp".into();
    let http = McpHttp::new(server(), config).await.unwrap();
    let call = support::modern(1, "tools/call", json!({"name": "hello", "arguments": {}}));
    let (status, _, answer) = oneshot(http.clone(), modern_post("/api/mcp", &call)).await;
    assert_eq!(
        (status, answer["result"]["content"][0]["text"].clone()),
        (StatusCode::OK, json!("hello"))
    );
    let (status, _, _) = oneshot(http.clone(), modern_post("/mcp", &call)).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    http.stop().await;

    let mut bad = HttpConfig::default();
    bad.path = "mcp".into();
    let err = McpHttp::new(server(), bad).await.unwrap_err();
    assert!(err.to_string().contains("must start with `/`"), "{err}");
    // Route patterns are refused too (axum would take them for parameters, or panic).
    for path in ["/a/{id}", "/a/:id", "/a/*rest"] {
        let mut bad = HttpConfig::default();
        bad.path = path.into();
        let err = McpHttp::new(server(), bad).await.unwrap_err();
        assert!(
            err.to_string().contains("nor a segment starting"),
            "{path}: {err}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn under_a_tower_layer_over_real_http_a_2025_session_round_trip() {
    let http = McpHttp::new(server(), HttpConfig::default()).await.unwrap();
    let stamp = |mut response: Response| async move {
        response
            .headers_mut()
            .insert("x-layered", HeaderValue::from_static("yes"));
        response
    };
    let app = axum::Router::new()
        .fallback_service(http.clone())
        .layer(axum::middleware::map_response(stamp));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    let host = format!("127.0.0.1:{port}");
    let post = |headers: Vec<(&'static str, String)>, body: Value| {
        let host = host.clone();
        async move {
            let headers: Vec<(&str, &str)> =
                headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
            send_to(port, &host, "POST", "/mcp", &headers, &body.to_string()).await
        }
    };

    let init = post(
        vec![],
        support::request(
            0,
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "layered", "version": "0.0.1"}}),
        ),
    )
    .await;
    assert_eq!(init.status, 200, "{}", init.body);
    assert_eq!(init.header("x-layered"), Some("yes"));
    assert_eq!(init.message()["result"]["protocolVersion"], "2025-11-25");
    assert_eq!(
        init.message()["result"]["serverInfo"]["name"],
        "service-test"
    );
    let sid = init.header("mcp-session-id").expect("a session").to_owned();
    let session = vec![
        ("Mcp-Session-Id", sid.clone()),
        ("MCP-Protocol-Version", "2025-11-25".to_owned()),
    ];

    let initialized = post(
        session.clone(),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    )
    .await;
    assert_eq!(initialized.status, 202);
    assert_eq!(initialized.header("x-layered"), Some("yes"));

    let call = post(
        session,
        support::request(1, "tools/call", json!({"name": "hello", "arguments": {}})),
    )
    .await;
    assert_eq!(call.status, 200, "{}", call.body);
    assert_eq!(call.header("x-layered"), Some("yes"));
    assert_eq!(call.message()["id"], 1);
    assert_eq!(call.message()["result"]["content"][0]["text"], "hello");

    // Off the path, the service's own 404 still goes through the layer.
    let elsewhere = send_to(port, &host, "POST", "/other", &[], "{}").await;
    assert_eq!(elsewhere.status, 404);
    assert_eq!(elsewhere.header("x-layered"), Some("yes"));
    task.abort();
    http.stop().await;
}

/// Serves `http` with hyper's HTTP/1.1 server, one task per connection.
async fn serve_with_hyper(http: McpHttp<()>) -> (u16, tokio::task::JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let task = tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let service = hyper_util::service::TowerToHyperService::new(http.clone());
            tokio::spawn(async move {
                let io = hyper_util::rt::TokioIo::new(tcp);
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(io, service)
                    .await;
            });
        }
    });
    (port, task)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wrong_path_404_and_bad_method_405_as_the_router_answers() {
    let http = McpHttp::new(server(), HttpConfig::default()).await.unwrap();
    let request = |method: &str, path: &str| {
        Request::builder()
            .method(method)
            .uri(path)
            .header("host", "localhost")
            .body(Body::empty())
            .unwrap()
    };
    for (method, path, status) in [
        ("POST", "/", StatusCode::NOT_FOUND),
        ("POST", "/mcp/extra", StatusCode::NOT_FOUND),
        ("GET", "/other", StatusCode::NOT_FOUND),
        ("PUT", "/mcp", StatusCode::METHOD_NOT_ALLOWED),
        ("PATCH", "/mcp", StatusCode::METHOD_NOT_ALLOWED),
        // GET and DELETE need a 2025 session.
        ("GET", "/mcp", StatusCode::METHOD_NOT_ALLOWED),
    ] {
        let (got, headers, _) = oneshot(http.clone(), request(method, path)).await;
        let (want, router_headers, _) = oneshot(http.axum_router(), request(method, path)).await;
        assert_eq!((method, path, got), (method, path, status));
        assert_eq!(
            want, status,
            "axum_router() answers {method} {path} the same"
        );
        if status == StatusCode::METHOD_NOT_ALLOWED {
            assert_eq!(headers["allow"], "GET, POST, DELETE");
            assert_eq!(router_headers["allow"], "GET, POST, DELETE");
        }
    }

    // The same over a socket, served by hyper with no axum server in between.
    let (port, task) = serve_with_hyper(http.clone()).await;
    let host = format!("127.0.0.1:{port}");
    let put = send_to(port, &host, "PUT", "/mcp", &[], "{}").await;
    assert_eq!(put.status, 405);
    assert_eq!(put.header("allow"), Some("GET, POST, DELETE"));
    let elsewhere = send_to(port, &host, "POST", "/nope", &[], "{}").await;
    assert_eq!(elsewhere.status, 404);
    let call = support::modern(3, "tools/call", json!({"name": "hello", "arguments": {}}));
    let headers = [
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "hello"),
        ("Accept", "application/json"),
    ];
    let reply = send_to(port, &host, "POST", "/mcp", &headers, &call.to_string()).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(reply.json()["result"]["content"][0]["text"], "hello");
    task.abort();
    http.stop().await;
}

/// Accepts no token.
struct NoTokens;

impl TokenVerifier for NoTokens {
    fn verify<'a>(&'a self, _token: &'a str) -> VerifyFuture<'a> {
        Box::pin(async { Err(VerifyError::invalid("no tokens are valid")) })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_a_resource_server_the_metadata_routes_and_the_token_check_are_served() {
    let auth = ResourceServer::new("http://localhost/mcp", NoTokens)
        .unwrap()
        .authorization_server("http://localhost:9/issuer");
    let http = McpHttp::new(server(), HttpConfig::default().auth(auth))
        .await
        .unwrap();
    for path in [
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource",
    ] {
        let get = Request::get(path)
            .header("host", "localhost")
            .body(Body::empty())
            .unwrap();
        let (status, _, metadata) = oneshot(http.clone(), get).await;
        assert_eq!(status, StatusCode::OK, "{path}");
        assert_eq!(metadata["resource"], "http://localhost/mcp", "{path}");
        assert_eq!(
            metadata["authorization_servers"],
            json!(["http://localhost:9/issuer"])
        );
    }
    let call = support::modern(1, "tools/call", json!({"name": "hello", "arguments": {}}));
    let (status, headers, _) = oneshot(http.clone(), modern_post("/mcp", &call)).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let challenge = headers["www-authenticate"].to_str().unwrap();
    assert!(
        challenge.contains("/.well-known/oauth-protected-resource/mcp"),
        "{challenge}"
    );
    http.stop().await;
}

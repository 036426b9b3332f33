//! The resource server through real HTTP on 127.0.0.1: `examples/auth_server.rs` (the bookshop
//! behind JWT bearer tokens) with a JWKS server started here, signed with real keys; token
//! introspection against an endpoint started here; the layer in front of a router of one's own.
//! Every case asserts the exact status and challenge.

mod support;

#[allow(unreachable_pub)] // the example program's items are `pub` for this test to reach
#[path = "../examples/auth_server.rs"]
mod auth_server;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use modelctx::auth::{Introspection, ResourceServer};
use modelctx::prelude::*;
use modelctx::transport::axum::{self, routing::get, routing::post, Router};
use modelctx::transport::HttpConfig;
use serde_json::{json, Value};
use support::jwt::{now, Keys};
use support::raw_http::{send_to, Reply};
use tokio::net::TcpListener;

const ISSUER: &str = "https://issuer.test";

/// Who is calling, as the handler sees it.
#[tool]
async fn whoami(ctx: RequestContext) -> Value {
    let who = ctx.principal();
    let http = ctx.http();
    json!({
        "subject": who.and_then(|p| p.subject()),
        "client": who.and_then(|p| p.client()),
        "scopes": who.map(|p| p.granted_scopes().to_vec()),
        "tenant": http.and_then(|h| h.headers().get("x-tenant")).and_then(|v| v.to_str().ok()),
        "peer_is_loopback": http.and_then(|h| h.peer_addr()).map(|a| a.ip().is_loopback()),
    })
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Name {
    name: String,
}

/// Asks the caller's name, then two questions later answers.
#[tool]
async fn two_steps(ctx: RequestContext) -> modelctx::Result<String> {
    let first = ctx
        .elicit::<Name>("first", "Name?")
        .await?
        .accepted()
        .map_or("?".into(), |f| f.name);
    let second = ctx
        .elicit::<Name>("second", "Again?")
        .await?
        .accepted()
        .map_or("?".into(), |f| f.name);
    Ok(format!("{first} then {second}"))
}

/// The shop's ledger, for administrators.
#[resource("shop://ledger", mime_type = "text/plain", scopes = ["books:admin"])]
async fn ledger() -> String {
    "all accounts".into()
}

/// A prompt for administrators.
#[prompt(scopes = ["books:admin"])]
async fn audit() -> String {
    "Audit the shop.".into()
}

/// A key set server: `/jwks` answers the keys (500 while `down`), counting fetches.
struct JwksServer {
    port: u16,
    fetches: Arc<AtomicUsize>,
    down: Arc<AtomicBool>,
    _stop: tokio::sync::oneshot::Sender<()>,
}

async fn jwks_server(keys: &Keys) -> JwksServer {
    let body = keys.jwks().to_string();
    let fetches = Arc::new(AtomicUsize::new(0));
    let down = Arc::new(AtomicBool::new(false));
    let (f, d) = (fetches.clone(), down.clone());
    let app = Router::new().route(
        "/jwks",
        get(move || {
            let (f, d, body) = (f.clone(), d.clone(), body.clone());
            async move {
                f.fetch_add(1, Ordering::SeqCst);
                if d.load(Ordering::SeqCst) {
                    return (axum::http::StatusCode::INTERNAL_SERVER_ERROR, String::new());
                }
                (axum::http::StatusCode::OK, body)
            }
        }),
    );
    let (port, stop) = serve_router(app).await;
    JwksServer {
        port,
        fetches,
        down,
        _stop: stop,
    }
}

async fn serve_router(app: Router) -> (u16, tokio::sync::oneshot::Sender<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        let _ = axum::serve(listener, app)
            .with_graceful_shutdown(async move {
                let _ = stopped.await;
            })
            .await;
    });
    (port, stop)
}

/// The protected bookshop (plus `whoami`) on a free port.
struct Shop {
    port: u16,
    _stop: tokio::sync::oneshot::Sender<()>,
}

impl Shop {
    fn resource(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }

    fn metadata_url(&self) -> String {
        format!(
            "http://127.0.0.1:{}/.well-known/oauth-protected-resource/mcp",
            self.port
        )
    }
}

async fn shop_with(jwks_url: String) -> Shop {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let options = auth_server::Options {
        port,
        issuer: ISSUER.to_owned(),
        jwks_url,
        audience: None,
    };
    let config = auth_server::protected(&options).unwrap();
    let mut server = auth_server::bookshop::server()
        .tool(WhoamiTool)
        .tool(TwoStepsTool)
        .resource(LedgerResource)
        .prompt(AuditPrompt);
    // A middleware sees the principal too.
    server
        .lowlevel()
        .middleware(|msg: Incoming, next: Next| async move {
            if msg.principal().and_then(|p| p.subject()) == Some("banned") {
                return Err(McpError::invalid_request(
                    "Banned: this account may not call the shop",
                ));
            }
            next.run(msg).await
        });
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        let _ = server
            .serve_http_on(listener, config, async move {
                let _ = stopped.await;
            })
            .await;
    });
    Shop { port, _stop: stop }
}

async fn shop(jwks: &JwksServer) -> Shop {
    shop_with(format!("http://127.0.0.1:{}/jwks", jwks.port)).await
}

/// Claims of a valid token for `shop`, for `sub` with `scope`.
fn claims(shop: &Shop, sub: &str, scope: &str) -> Value {
    json!({"iss": ISSUER, "sub": sub, "aud": shop.resource(), "exp": now() + 600,
           "iat": now(), "scope": scope, "client_id": "bookshop-app"})
}

fn meta() -> Value {
    json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
           "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}}})
}

/// A 2026 request `method` naming `name` (the `Mcp-Name` header) with `params` (its `_meta`
/// added), carrying `token` (if any) and `extra` headers.
async fn request_2026(
    port: u16,
    token: Option<&str>,
    method: &str,
    name: &str,
    params: Value,
    extra: &[(&str, &str)],
) -> Reply {
    let mut params = params;
    params["_meta"] = meta();
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string();
    let auth = token.map(|t| format!("Bearer {t}"));
    let mut headers = vec![
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", method),
        ("Mcp-Name", name),
    ];
    if let Some(auth) = &auth {
        headers.push(("Authorization", auth.as_str()));
    }
    headers.extend_from_slice(extra);
    send_to(
        port,
        &format!("127.0.0.1:{port}"),
        "POST",
        "/mcp",
        &headers,
        &body,
    )
    .await
}

/// A 2026 `tools/call` of `tool` with `arguments`, carrying `token` (if any).
async fn call(port: u16, token: Option<&str>, tool: &str, arguments: Value) -> Reply {
    let params = json!({"name": tool, "arguments": arguments});
    request_2026(port, token, "tools/call", tool, params, &[]).await
}

fn search() -> Value {
    json!({"query": "dune"})
}

fn new_book(title: &str) -> Value {
    json!({"title": title, "author": "A. Writer", "year": 2001})
}

/// The text of a successful tool result.
fn text(reply: &Reply) -> String {
    let message = reply.message();
    assert!(
        message.get("result").is_some(),
        "not a result: {}",
        reply.body
    );
    message["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

fn challenge_401(shop: &Shop) -> String {
    format!(
        "Bearer resource_metadata=\"{}\", scope=\"books:read\"",
        shop.metadata_url()
    )
}

fn challenge_invalid(shop: &Shop) -> String {
    format!(
        "Bearer resource_metadata=\"{}\", error=\"invalid_token\", scope=\"books:read\", error_description=\"The access token is invalid, expired, or not for this resource\"",
        shop.metadata_url()
    )
}

async fn assert_refused(shop: &Shop, token: &str, why: &str) {
    let reply = call(shop.port, Some(token), "search_books", search()).await;
    assert_eq!(reply.status, 401, "{why}: {}", reply.body);
    assert_eq!(
        reply.header("www-authenticate"),
        Some(challenge_invalid(shop).as_str()),
        "{why}"
    );
    assert!(!reply.body.contains(token), "{why}: the token was echoed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn protected_resource_metadata_is_served_at_both_well_known_paths() {
    let keys = Keys::new();
    let jwks = jwks_server(&keys).await;
    let shop = shop(&jwks).await;
    let host = format!("127.0.0.1:{}", shop.port);
    let expected = json!({
        "resource": shop.resource(),
        "authorization_servers": [ISSUER],
        "scopes_supported": ["books:read", "books:write"],
        "bearer_methods_supported": ["header"],
        "resource_name": "Bookshop",
    });
    for path in [
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource",
    ] {
        let reply = send_to(shop.port, &host, "GET", path, &[], "").await;
        assert_eq!(reply.status, 200, "{path}");
        assert_eq!(reply.header("content-type"), Some("application/json"));
        assert_eq!(reply.json(), expected, "{path}");
    }
    let post = send_to(
        shop.port,
        &host,
        "POST",
        "/.well-known/oauth-protected-resource",
        &[],
        "{}",
    )
    .await;
    assert_eq!(post.status, 405);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_without_a_token_is_challenged() {
    let keys = Keys::new();
    let jwks = jwks_server(&keys).await;
    let shop = shop(&jwks).await;

    let reply = call(shop.port, None, "search_books", search()).await;
    assert_eq!(reply.status, 401);
    assert_eq!(
        reply.header("www-authenticate"),
        Some(challenge_401(&shop).as_str())
    );

    // Another scheme, or a token in the query string, is no bearer token.
    let host = format!("127.0.0.1:{}", shop.port);
    let basic = send_to(
        shop.port,
        &host,
        "POST",
        "/mcp",
        &[("Authorization", "Basic dXNlcjpwYXNz")],
        "{}",
    )
    .await;
    assert_eq!(basic.status, 401);
    assert_eq!(
        basic.header("www-authenticate"),
        Some(challenge_401(&shop).as_str())
    );
    let token = keys.rs256(&claims(&shop, "alice", "books:read"));
    let query = send_to(
        shop.port,
        &host,
        "POST",
        &format!("/mcp?access_token={token}"),
        &[],
        "{}",
    )
    .await;
    assert_eq!(query.status, 401);
    assert_eq!(
        query.header("www-authenticate"),
        Some(challenge_401(&shop).as_str())
    );
    // No key set was fetched for requests without a token.
    assert_eq!(jwks.fetches.load(Ordering::SeqCst), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn valid_rs256_and_es256_tokens_reach_the_tools_with_the_principal() {
    let keys = Keys::new();
    let jwks = jwks_server(&keys).await;
    let shop = shop(&jwks).await;

    let rs = keys.rs256(&claims(&shop, "alice", "books:read"));
    let reply = call(shop.port, Some(&rs), "search_books", search()).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert!(text(&reply).contains("Dune Messiah"), "{}", reply.body);

    let es = keys.es256(&claims(&shop, "bob", "books:read books:write"));
    let reply = call(shop.port, Some(&es), "whoami", json!({})).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let who: Value = serde_json::from_str(&text(&reply)).unwrap();
    assert_eq!(
        who,
        json!({"subject": "bob", "client": "bookshop-app",
               "scopes": ["books:read", "books:write"], "tenant": null, "peer_is_loopback": true})
    );
    // The key set was fetched once and cached.
    assert_eq!(jwks.fetches.load(Ordering::SeqCst), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn handlers_see_the_request_headers() {
    let keys = Keys::new();
    let jwks = jwks_server(&keys).await;
    let shop = shop(&jwks).await;
    let token = keys.rs256(&claims(&shop, "alice", "books:read"));
    let params = json!({"name": "whoami", "arguments": {}});
    let tenant = [("X-Tenant", "north")];
    let reply = request_2026(
        shop.port,
        Some(&token),
        "tools/call",
        "whoami",
        params,
        &tenant,
    )
    .await;
    let who: Value = serde_json::from_str(&text(&reply)).unwrap();
    assert_eq!(who["tenant"], "north");
    assert_eq!(who["subject"], "alice");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_tokens_are_refused_with_invalid_token() {
    let keys = Keys::new();
    let jwks = jwks_server(&keys).await;
    let shop = shop(&jwks).await;
    let good = claims(&shop, "alice", "books:read");
    let with = |field: &str, value: Value| {
        let mut c = good.clone();
        c[field] = value;
        c
    };

    assert_refused(
        &shop,
        &keys.rs256(&with("exp", json!(now() - 3600))),
        "expired",
    )
    .await;
    assert_refused(
        &shop,
        &keys.rs256(&with("nbf", json!(now() + 3600))),
        "not yet valid",
    )
    .await;
    assert_refused(
        &shop,
        &keys.rs256(&with("iss", json!("https://evil.test"))),
        "wrong issuer",
    )
    .await;
    assert_refused(
        &shop,
        &keys.rs256(&with("aud", json!("http://127.0.0.1:1/mcp"))),
        "issued for another resource",
    )
    .await;
    let none = keys.sign(&json!({"alg": "none", "typ": "JWT"}), &good);
    assert_refused(&shop, &none, "alg none").await;
    let unknown_kid = keys.sign(&json!({"alg": "RS256", "kid": "rotated-away"}), &good);
    assert_refused(&shop, &unknown_kid, "unknown kid").await;
    assert_refused(&shop, "not-a-jwt", "garbage").await;

    // Tampered: a valid token whose payload was swapped for one with more scopes.
    let valid = keys.rs256(&good);
    let parts: Vec<&str> = valid.split('.').collect();
    let richer = modelctx::base64::encode_url(
        with("scope", json!("books:read books:write"))
            .to_string()
            .as_bytes(),
    );
    let tampered = format!("{}.{}.{}", parts[0], richer, parts[2]);
    assert_refused(&shop, &tampered, "tampered payload").await;

    // HS256 signed with the RSA public key as the secret (key confusion).
    let jwk = keys.rsa_jwk();
    let header = modelctx::base64::encode_url(
        json!({"alg": "HS256", "kid": "rsa-1"})
            .to_string()
            .as_bytes(),
    );
    let payload = modelctx::base64::encode_url(good.to_string().as_bytes());
    let input = format!("{header}.{payload}");
    let key = ring::hmac::Key::new(
        ring::hmac::HMAC_SHA256,
        jwk["n"].as_str().unwrap().as_bytes(),
    );
    let tag = ring::hmac::sign(&key, input.as_bytes());
    let confused = format!("{input}.{}", modelctx::base64::encode_url(tag.as_ref()));
    assert_refused(&shop, &confused, "HMAC with the public key").await;

    // The unknown kid triggered one refetch; the rate limit held back the second.
    let fetches = jwks.fetches.load(Ordering::SeqCst);
    assert!((1..=2).contains(&fetches), "{fetches} key set fetches");
    let again = keys.sign(&json!({"alg": "RS256", "kid": "another-unknown"}), &good);
    assert_refused(&shop, &again, "second unknown kid").await;
    assert_eq!(
        jwks.fetches.load(Ordering::SeqCst),
        fetches,
        "refetch not rate limited"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_scope_gets_403_with_the_scope_to_ask_for_on_both_eras() {
    let keys = Keys::new();
    let jwks = jwks_server(&keys).await;
    let shop = shop(&jwks).await;
    let step_up = format!(
        "Bearer resource_metadata=\"{}\", error=\"insufficient_scope\", scope=\"books:read books:write\", error_description=\"This request needs the scopes: books:read books:write\"",
        shop.metadata_url()
    );
    let reader = keys.rs256(&claims(&shop, "alice", "books:read"));

    // 2026: refused from the headers, before the body is read (even a body that is not JSON).
    let reply = call(shop.port, Some(&reader), "add_book", new_book("Step Up")).await;
    assert_eq!(reply.status, 403, "{}", reply.body);
    assert_eq!(reply.header("www-authenticate"), Some(step_up.as_str()));
    let auth = format!("Bearer {reader}");
    let host = format!("127.0.0.1:{}", shop.port);
    let early = send_to(
        shop.port,
        &host,
        "POST",
        "/mcp",
        &[
            ("Authorization", &auth),
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", "add_book"),
        ],
        "not json at all",
    )
    .await;
    assert_eq!(early.status, 403);

    // 2025: the tool is named in the body.
    let sid = open_session(&shop, &reader).await;
    let add = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                     "params": {"name": "add_book", "arguments": new_book("Step Up")}})
    .to_string();
    let legacy = send_to(
        shop.port,
        &host,
        "POST",
        "/mcp",
        &[
            ("Authorization", &auth),
            ("Mcp-Session-Id", &sid),
            ("MCP-Protocol-Version", "2025-11-25"),
        ],
        &add,
    )
    .await;
    assert_eq!(legacy.status, 403, "{}", legacy.body);
    assert_eq!(legacy.header("www-authenticate"), Some(step_up.as_str()));

    // With the scope, the same call succeeds (both eras).
    let writer = keys.es256(&claims(&shop, "alice", "books:read books:write"));
    let reply = call(shop.port, Some(&writer), "add_book", new_book("Step Up")).await;
    assert_eq!(reply.status, 200);
    assert_eq!(text(&reply), "Added 'Step Up' by A. Writer (2001).");
}

/// `initialize` + `notifications/initialized` with `token`; the session id.
async fn open_session(shop: &Shop, token: &str) -> String {
    let host = format!("127.0.0.1:{}", shop.port);
    let auth = format!("Bearer {token}");
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
    .to_string();
    let reply = send_to(
        shop.port,
        &host,
        "POST",
        "/mcp",
        &[("Authorization", &auth)],
        &init,
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let sid = reply
        .header("mcp-session-id")
        .expect("a session id")
        .to_owned();
    let done = json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string();
    let reply = send_to(
        shop.port,
        &host,
        "POST",
        "/mcp",
        &[
            ("Authorization", &auth),
            ("Mcp-Session-Id", &sid),
            ("MCP-Protocol-Version", "2025-11-25"),
        ],
        &done,
    )
    .await;
    assert_eq!(reply.status, 202);
    sid
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_answers_only_the_principal_that_opened_it() {
    let keys = Keys::new();
    let jwks = jwks_server(&keys).await;
    let shop = shop(&jwks).await;
    let alice = keys.rs256(&claims(&shop, "alice", "books:read"));
    let mallory = keys.rs256(&claims(&shop, "mallory", "books:read books:write"));
    let sid = open_session(&shop, &alice).await;
    let host = format!("127.0.0.1:{}", shop.port);
    let list = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"}).to_string();
    let as_who = |token: &str| format!("Bearer {token}");

    for (method, body) in [("POST", list.as_str()), ("GET", ""), ("DELETE", "")] {
        let auth = as_who(&mallory);
        let reply = send_to(
            shop.port,
            &host,
            method,
            "/mcp",
            &[
                ("Authorization", &auth),
                ("Mcp-Session-Id", &sid),
                ("MCP-Protocol-Version", "2025-11-25"),
                ("Accept", "application/json, text/event-stream"),
            ],
            body,
        )
        .await;
        assert_eq!(reply.status, 404, "{method} with another principal's token");
        assert!(
            !reply.body.contains("tools"),
            "{method} served another principal"
        );
    }
    // Its owner still uses it (the hijack attempt did not end it).
    let auth = as_who(&alice);
    let reply = send_to(
        shop.port,
        &host,
        "POST",
        "/mcp",
        &[
            ("Authorization", &auth),
            ("Mcp-Session-Id", &sid),
            ("MCP-Protocol-Version", "2025-11-25"),
        ],
        &list,
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert!(
        reply.message()["result"]["tools"].is_array(),
        "{}",
        reply.body
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_key_set_gives_503_never_an_accepted_token() {
    let keys = Keys::new();
    // Nothing listens on port 1.
    let closed = shop_with(format!("http://127.0.0.1:{}/jwks", support::CLOSED_PORT)).await;
    let token = keys.rs256(&claims(&closed, "alice", "books:read"));
    let reply = call(closed.port, Some(&token), "search_books", search()).await;
    assert_eq!(reply.status, 503, "{}", reply.body);
    assert_eq!(reply.header("retry-after"), Some("5"));
    assert_eq!(reply.header("www-authenticate"), None);
    assert!(reply.message()["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .contains("cannot be verified right now"));

    // A key set server that fails (HTTP 500) is the same.
    let jwks = jwks_server(&keys).await;
    jwks.down.store(true, Ordering::SeqCst);
    let failing = shop(&jwks).await;
    let token = keys.rs256(&claims(&failing, "alice", "books:read"));
    let reply = call(failing.port, Some(&token), "search_books", search()).await;
    assert_eq!(reply.status, 503);
    // Back up: within the 5 s backoff after a failed fetch the key set is not asked again
    // (a down issuer is not hammered); after it, the request is served.
    jwks.down.store(false, Ordering::SeqCst);
    let fetches = jwks.fetches.load(Ordering::SeqCst);
    let reply = call(failing.port, Some(&token), "search_books", search()).await;
    assert_eq!(reply.status, 503);
    assert_eq!(jwks.fetches.load(Ordering::SeqCst), fetches);
    tokio::time::sleep(std::time::Duration::from_millis(5100)).await;
    let reply = call(failing.port, Some(&token), "search_books", search()).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
}

/// An introspection endpoint: `active-*` tokens are active for `resource`, others are not;
/// callers must authenticate as `rs:secret`. `/down` fails.
async fn introspection_server(
    resource: String,
) -> (u16, Arc<AtomicUsize>, tokio::sync::oneshot::Sender<()>) {
    let calls = Arc::new(AtomicUsize::new(0));
    let counter = calls.clone();
    let app = Router::new()
        .route(
            "/introspect",
            post(move |headers: axum::http::HeaderMap, body: String| {
                let (resource, counter) = (resource.clone(), counter.clone());
                async move {
                    counter.fetch_add(1, Ordering::SeqCst);
                    let basic = headers.get("authorization").and_then(|v| v.to_str().ok());
                    // "rs:secret"
                    if basic != Some("Basic cnM6c2VjcmV0") {
                        return (axum::http::StatusCode::UNAUTHORIZED, String::new());
                    }
                    let answer = if body.contains("token=active-") {
                        json!({"active": true, "sub": "carol", "client_id": "cli", "scope": "books:read",
                               "aud": resource, "iss": ISSUER, "exp": now() + 600})
                    } else {
                        json!({"active": false})
                    };
                    (axum::http::StatusCode::OK, answer.to_string())
                }
            }),
        )
        .route("/down", post(|| async { axum::http::StatusCode::BAD_GATEWAY }));
    let (port, stop) = serve_router(app).await;
    (port, calls, stop)
}

async fn introspected_shop(
    path: &str,
) -> (Shop, Arc<AtomicUsize>, tokio::sync::oneshot::Sender<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let resource = format!("http://127.0.0.1:{port}/mcp");
    let (ip, calls, stop_ip) = introspection_server(resource.clone()).await;
    let verifier = Introspection::new(&format!("http://127.0.0.1:{ip}{path}"), resource.clone())
        .unwrap()
        .client_credentials("rs", "secret");
    let auth = ResourceServer::new(&resource, verifier)
        .unwrap()
        .authorization_server(ISSUER)
        .required_scopes(["books:read"]);
    let server = auth_server::bookshop::server().tool(WhoamiTool);
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        let _ = server
            .serve_http_on(listener, HttpConfig::default().auth(auth), async move {
                let _ = stopped.await;
            })
            .await;
    });
    (Shop { port, _stop: stop }, calls, stop_ip)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn introspection_accepts_active_tokens_and_refuses_inactive_ones() {
    let (shop, calls, _ip) = introspected_shop("/introspect").await;

    let reply = call(shop.port, Some("active-token-1"), "whoami", json!({})).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let who: Value = serde_json::from_str(&text(&reply)).unwrap();
    assert_eq!(who["subject"], "carol");
    assert_eq!(who["client"], "cli");
    assert_eq!(who["scopes"], json!(["books:read"]));
    // Cached: a second request with the same token asks the endpoint no more.
    let reply = call(shop.port, Some("active-token-1"), "search_books", search()).await;
    assert_eq!(reply.status, 200);
    assert_eq!(calls.load(Ordering::SeqCst), 1);

    assert_refused(&shop, "revoked-token", "inactive").await;
    // The scope check applies to introspected tokens too.
    let reply = call(
        shop.port,
        Some("active-token-1"),
        "add_book",
        new_book("Nope"),
    )
    .await;
    assert_eq!(reply.status, 403);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_introspection_endpoint_that_fails_gives_503() {
    let (shop, _calls, _ip) = introspected_shop("/down").await;
    let reply = call(shop.port, Some("active-token-1"), "whoami", json!({})).await;
    assert_eq!(reply.status, 503, "{}", reply.body);
    assert_eq!(reply.header("retry-after"), Some("5"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_layer_protects_a_router_of_ones_own() {
    let keys = Keys::new();
    let jwks = jwks_server(&keys).await;
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let resource = format!("http://127.0.0.1:{port}/api");
    let verifier = modelctx::auth::JwtVerifier::new(
        ISSUER,
        &format!("http://127.0.0.1:{}/jwks", jwks.port),
        resource.clone(),
    )
    .unwrap();
    let auth = ResourceServer::new(&resource, verifier)
        .unwrap()
        .authorization_server(ISSUER)
        .required_scopes(["api"]);
    let app = Router::new()
        .route("/api", get(|| async { "inside" }))
        .route(
            "/.well-known/oauth-protected-resource/api",
            get(|| async { "unreachable" }),
        )
        .layer(auth.layer());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        let _ = axum::serve(listener, app)
            .with_graceful_shutdown(async move {
                let _ = stopped.await;
            })
            .await;
    });
    let host = format!("127.0.0.1:{port}");
    let metadata = format!("http://127.0.0.1:{port}/.well-known/oauth-protected-resource/api");

    let reply = send_to(port, &host, "GET", "/api", &[], "").await;
    assert_eq!(reply.status, 401);
    assert_eq!(
        reply.header("www-authenticate"),
        Some(format!("Bearer resource_metadata=\"{metadata}\", scope=\"api\"").as_str())
    );
    let prm = send_to(
        port,
        &host,
        "GET",
        "/.well-known/oauth-protected-resource/api",
        &[],
        "",
    )
    .await;
    assert_eq!(prm.status, 200);
    assert_eq!(prm.json()["resource"], resource.as_str());

    let good =
        json!({"iss": ISSUER, "sub": "dave", "aud": resource, "exp": now() + 60, "scope": "api"});
    let auth_header = format!("Bearer {}", keys.rs256(&good));
    let reply = send_to(
        port,
        &host,
        "GET",
        "/api",
        &[("Authorization", &auth_header)],
        "",
    )
    .await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.body, "inside");

    let mut narrow = good.clone();
    narrow["scope"] = json!("other");
    let auth_header = format!("Bearer {}", keys.rs256(&narrow));
    let reply = send_to(
        port,
        &host,
        "GET",
        "/api",
        &[("Authorization", &auth_header)],
        "",
    )
    .await;
    assert_eq!(reply.status, 403);
    assert_eq!(
        reply.header("www-authenticate"),
        Some(format!("Bearer resource_metadata=\"{metadata}\", error=\"insufficient_scope\", scope=\"api\", error_description=\"This request needs the scopes: api\"").as_str())
    );
    let _ = stop.send(());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sealed_request_state_works_only_for_the_principal_it_was_issued_to() {
    let keys = Keys::new();
    let jwks = jwks_server(&keys).await;
    let shop = shop(&jwks).await;
    let alice = keys.rs256(&claims(&shop, "alice", "books:read"));
    let mallory = keys.rs256(&claims(&shop, "mallory", "books:read"));

    let first = call(shop.port, Some(&alice), "two_steps", json!({})).await;
    let result = &first.message()["result"];
    assert_eq!(result["resultType"], "input_required", "{}", first.body);
    let state = result["requestState"].as_str().unwrap().to_owned();
    let retry = |token: String| {
        let state = state.clone();
        let port = shop.port;
        async move {
            let params = json!({"name": "two_steps", "arguments": {}, "requestState": state,
                "inputResponses": {"first": {"action": "accept", "content": {"name": "Ann"}}}});
            request_2026(port, Some(&token), "tools/call", "two_steps", params, &[]).await
        }
    };
    // Another principal replaying alice's state is refused as an invalid state.
    let stolen = retry(mallory).await;
    assert_eq!(stolen.message()["error"]["code"], -32602, "{}", stolen.body);
    assert_eq!(
        stolen.message()["error"]["message"],
        "Invalid or expired requestState"
    );
    // Alice's own retry goes on to the next question.
    let own = retry(alice).await;
    let result = &own.message()["result"];
    assert_eq!(result["resultType"], "input_required", "{}", own.body);
    assert!(
        result["inputRequests"]["second"].is_object(),
        "{}",
        own.body
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_middleware_sees_the_principal() {
    let keys = Keys::new();
    let jwks = jwks_server(&keys).await;
    let shop = shop(&jwks).await;
    let banned = keys.rs256(&claims(&shop, "banned", "books:read"));
    let reply = call(shop.port, Some(&banned), "search_books", search()).await;
    assert_eq!(reply.message()["error"]["code"], -32600, "{}", reply.body);
    assert_eq!(
        reply.message()["error"]["message"],
        "Banned: this account may not call the shop"
    );
    let fine = keys.rs256(&claims(&shop, "erin", "books:read"));
    let reply = call(shop.port, Some(&fine), "search_books", search()).await;
    assert!(text(&reply).contains("Dune"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resources_and_prompts_declare_scopes_too() {
    let keys = Keys::new();
    let jwks = jwks_server(&keys).await;
    let shop = shop(&jwks).await;
    let admin_challenge = format!(
        "Bearer resource_metadata=\"{}\", error=\"insufficient_scope\", scope=\"books:read books:admin\", error_description=\"This request needs the scopes: books:read books:admin\"",
        shop.metadata_url()
    );
    let ask = |token: String, method: &'static str, name: &'static str, params: Value| {
        let port = shop.port;
        async move { request_2026(port, Some(&token), method, name, params, &[]).await }
    };
    let reader = keys.rs256(&claims(&shop, "alice", "books:read"));
    let admin = keys.rs256(&claims(&shop, "root", "books:read books:admin"));

    let read = ask(
        reader.clone(),
        "resources/read",
        "shop://ledger",
        json!({"uri": "shop://ledger"}),
    )
    .await;
    assert_eq!(read.status, 403, "{}", read.body);
    assert_eq!(
        read.header("www-authenticate"),
        Some(admin_challenge.as_str())
    );
    let read = ask(
        admin.clone(),
        "resources/read",
        "shop://ledger",
        json!({"uri": "shop://ledger"}),
    )
    .await;
    assert_eq!(read.status, 200, "{}", read.body);
    assert_eq!(
        read.message()["result"]["contents"][0]["text"],
        "all accounts"
    );

    let prompt = ask(reader, "prompts/get", "audit", json!({"name": "audit"})).await;
    assert_eq!(prompt.status, 403, "{}", prompt.body);
    assert_eq!(
        prompt.header("www-authenticate"),
        Some(admin_challenge.as_str())
    );
    let prompt = ask(admin, "prompts/get", "audit", json!({"name": "audit"})).await;
    assert_eq!(prompt.status, 200, "{}", prompt.body);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2025_session_sees_each_posts_headers_and_the_principal() {
    let keys = Keys::new();
    let jwks = jwks_server(&keys).await;
    let shop = shop(&jwks).await;
    let alice = keys.es256(&claims(&shop, "alice", "books:read"));
    let sid = open_session(&shop, &alice).await;
    let host = format!("127.0.0.1:{}", shop.port);
    let auth = format!("Bearer {alice}");
    let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                      "params": {"name": "whoami", "arguments": {}}})
    .to_string();
    for tenant in ["north", "south"] {
        let reply = send_to(
            shop.port,
            &host,
            "POST",
            "/mcp",
            &[
                ("Authorization", &auth),
                ("Mcp-Session-Id", &sid),
                ("MCP-Protocol-Version", "2025-11-25"),
                ("X-Tenant", tenant),
            ],
            &call,
        )
        .await;
        let who: Value = serde_json::from_str(&text(&reply)).unwrap();
        assert_eq!(
            who,
            json!({"subject": "alice", "client": "bookshop-app", "scopes": ["books:read"],
                   "tenant": tenant, "peer_is_loopback": true})
        );
    }
}

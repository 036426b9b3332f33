//! Our client with the OAuth provider against `examples/auth_server.rs`, end to end over
//! 127.0.0.1, with a small authorization server started here (metadata, Dynamic Client
//! Registration, authorization code + PKCE with a headless login, JWTs signed by the test key,
//! refresh tokens): discovery from the 401, the first login, step-up on 403, refresh.

mod support;

#[allow(unreachable_pub)] // the example program's items are `pub` for this test to reach
#[path = "../examples/auth_server.rs"]
mod auth_server;

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use modelctx::client::oauth::{HeadlessLogin, OAuth};
use modelctx::prelude::*;
use modelctx::transport::axum::{self, routing::get, routing::post, Router};
use modelctx::transport::HttpClientTransport;
use serde_json::{json, Value};
use support::jwt::{now, Keys};
use tokio::net::TcpListener;

/// A small OAuth 2.1 authorization server for tests: RFC 8414 metadata, Dynamic Client
/// Registration, the authorization endpoint (redirects at once: the "person" always consents),
/// the token endpoint (authorization code with PKCE S256, refresh tokens) issuing RS256 JWTs
/// signed with the test key, and the key set.
///
/// It grants what was asked; access tokens live `expires_in` seconds.
struct AuthorizationServer {
    port: u16,
    state: Arc<AsState>,
    _stop: tokio::sync::oneshot::Sender<()>,
}

/// An issued code: (code_challenge, redirect_uri, scope granted, resource, client_id).
type Pending = (String, String, String, String, String);

#[derive(Default)]
struct AsState {
    keys: Keys,
    expires_in: u64,
    /// code -> what the authorization request asked.
    codes: Mutex<HashMap<String, Pending>>,
    /// refresh token -> (scope, resource, client_id)
    refresh: Mutex<HashMap<String, (String, String, String)>>,
    /// Every authorization request's query, decoded.
    authorizations: Mutex<Vec<HashMap<String, String>>>,
    registrations: AtomicUsize,
    code_grants: AtomicUsize,
    refresh_grants: AtomicUsize,
    counter: AtomicUsize,
}

impl AuthorizationServer {
    fn issuer(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }
}

fn form(text: &str) -> HashMap<String, String> {
    text.split('&')
        .filter_map(|pair| pair.split_once('='))
        .map(|(k, v)| (decode(k), decode(v)))
        .collect()
}

fn decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or("");
                out.push(u8::from_str_radix(hex, 16).unwrap_or(b'?'));
                i += 2;
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn json_reply(status: u16, body: Value) -> axum::response::Response {
    axum::response::Response::builder()
        .status(status)
        .header("content-type", "application/json")
        .body(axum::body::Body::from(body.to_string()))
        .unwrap()
}

async fn authorization_server(expires_in: u64) -> AuthorizationServer {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let issuer = format!("http://127.0.0.1:{port}");
    let state = Arc::new(AsState {
        expires_in,
        ..AsState::default()
    });
    let metadata = json!({
        "issuer": issuer,
        "authorization_endpoint": format!("{issuer}/authorize"),
        "token_endpoint": format!("{issuer}/token"),
        "registration_endpoint": format!("{issuer}/register"),
        "jwks_uri": format!("{issuer}/jwks"),
        "response_types_supported": ["code"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["none"],
        "scopes_supported": ["books:read", "books:write"],
        "authorization_response_iss_parameter_supported": true,
    });
    let jwks = state.keys.jwks();
    let (s1, s2, s3) = (state.clone(), state.clone(), state.clone());
    let iss = issuer.clone();
    let iss2 = issuer.clone();
    let app = Router::new()
        .route(
            "/.well-known/oauth-authorization-server",
            get(move || {
                let metadata = metadata.clone();
                async move { json_reply(200, metadata) }
            }),
        )
        .route(
            "/jwks",
            get(move || {
                let jwks = jwks.clone();
                async move { json_reply(200, jwks) }
            }),
        )
        .route(
            "/register",
            post(move |body: String| {
                let state = s1.clone();
                async move {
                    let request: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
                    let n = state.registrations.fetch_add(1, Ordering::SeqCst) + 1;
                    let mut answer = request.clone();
                    answer["client_id"] = json!(format!("client-{n}"));
                    json_reply(201, answer)
                }
            }),
        )
        .route(
            "/authorize",
            get(move |uri: axum::http::Uri| {
                let state = s2.clone();
                let iss = iss.clone();
                async move {
                    let query = form(uri.query().unwrap_or(""));
                    state.authorizations.lock().unwrap().push(query.clone());
                    let granted = query.get("scope").cloned().unwrap_or_default();
                    let n = state.counter.fetch_add(1, Ordering::SeqCst);
                    let code = format!("code-{n}");
                    state.codes.lock().unwrap().insert(
                        code.clone(),
                        (
                            query.get("code_challenge").cloned().unwrap_or_default(),
                            query.get("redirect_uri").cloned().unwrap_or_default(),
                            granted,
                            query.get("resource").cloned().unwrap_or_default(),
                            query.get("client_id").cloned().unwrap_or_default(),
                        ),
                    );
                    let redirect = format!(
                        "{}?code={code}&state={}&iss={}",
                        query.get("redirect_uri").cloned().unwrap_or_default(),
                        query.get("state").cloned().unwrap_or_default(),
                        iss
                    );
                    axum::response::Response::builder()
                        .status(302)
                        .header("location", redirect)
                        .body(axum::body::Body::empty())
                        .unwrap()
                }
            }),
        )
        .route(
            "/token",
            post(move |body: String| {
                let state = s3.clone();
                let iss = iss2.clone();
                async move { token(&state, &iss, &form(&body)) }
            }),
        );
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        let _ = axum::serve(listener, app)
            .with_graceful_shutdown(async move {
                let _ = stopped.await;
            })
            .await;
    });
    AuthorizationServer {
        port,
        state,
        _stop: stop,
    }
}

fn token(
    state: &AsState,
    issuer: &str,
    form: &HashMap<String, String>,
) -> axum::response::Response {
    let refuse = |error: &str| json_reply(400, json!({"error": error}));
    let (scope, resource, client_id) = match form.get("grant_type").map(String::as_str) {
        Some("authorization_code") => {
            let code = form.get("code").cloned().unwrap_or_default();
            let Some((challenge, redirect_uri, scope, resource, client_id)) =
                state.codes.lock().unwrap().remove(&code)
            else {
                return refuse("invalid_grant");
            };
            let verifier = form.get("code_verifier").cloned().unwrap_or_default();
            let digest = ring::digest::digest(&ring::digest::SHA256, verifier.as_bytes());
            if modelctx::base64::encode_url(digest.as_ref()) != challenge {
                return refuse("invalid_grant");
            }
            if form.get("redirect_uri") != Some(&redirect_uri)
                || form.get("resource") != Some(&resource)
                || form.get("client_id") != Some(&client_id)
            {
                return refuse("invalid_request");
            }
            state.code_grants.fetch_add(1, Ordering::SeqCst);
            (scope, resource, client_id)
        }
        Some("refresh_token") => {
            let presented = form.get("refresh_token").cloned().unwrap_or_default();
            let Some(grant) = state.refresh.lock().unwrap().remove(&presented) else {
                return refuse("invalid_grant");
            };
            state.refresh_grants.fetch_add(1, Ordering::SeqCst);
            grant
        }
        _ => return refuse("unsupported_grant_type"),
    };
    let n = state.counter.fetch_add(1, Ordering::SeqCst);
    let refresh_token = format!("refresh-{n}");
    state.refresh.lock().unwrap().insert(
        refresh_token.clone(),
        (scope.clone(), resource.clone(), client_id.clone()),
    );
    let access = state.keys.rs256(&json!({
        "iss": issuer, "sub": "e2e-user", "aud": resource, "scope": scope,
        "client_id": client_id, "iat": now(), "exp": now() + state.expires_in,
    }));
    json_reply(
        200,
        json!({"access_token": access, "token_type": "Bearer", "expires_in": state.expires_in,
               "refresh_token": refresh_token, "scope": scope}),
    )
}

/// The protected bookshop trusting `issuer`, on a free port.
async fn bookshop(issuer: &str) -> (String, tokio::sync::oneshot::Sender<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let options = auth_server::Options {
        port,
        issuer: issuer.to_owned(),
        jwks_url: format!("{issuer}/jwks"),
        audience: None,
    };
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let resource = options.resource();
    tokio::spawn(async move {
        let _ = auth_server::serve(&options, listener, async move {
            let _ = stopped.await;
        })
        .await;
    });
    (resource, stop)
}

fn headless() -> HeadlessLogin {
    HeadlessLogin::new("http://127.0.0.1:1/callback")
}

fn text(result: &CallToolResult) -> String {
    result.content[0].as_text().unwrap_or_default().to_owned()
}

async fn run_the_flow(version: &str) {
    let authz = authorization_server(3).await;
    let (resource, _stop) = bookshop(&authz.issuer()).await;
    let oauth = OAuth::builder()
        .login(headless())
        .refresh_margin(Duration::from_secs(1))
        .build()
        .unwrap();
    let transport = HttpClientTransport::new(&resource).unwrap().auth(oauth);
    let client = Client::builder()
        .protocol_version(version)
        .connect(transport)
        .await
        .unwrap();

    // The first request met a 401; the provider discovered the authorization server from the
    // resource metadata, registered, logged in with the scope of the challenge, and retried.
    let found = client
        .call_tool("search_books", json!({"query": "dune"}))
        .await
        .unwrap();
    assert!(text(&found).contains("Dune Messiah"), "{found:?}");
    {
        let authorizations = authz.state.authorizations.lock().unwrap();
        assert_eq!(authorizations.len(), 1);
        let first = &authorizations[0];
        assert_eq!(first.get("response_type").map(String::as_str), Some("code"));
        assert_eq!(
            first.get("code_challenge_method").map(String::as_str),
            Some("S256")
        );
        assert_eq!(first.get("resource"), Some(&resource));
        assert_eq!(first.get("scope").map(String::as_str), Some("books:read"));
        assert_eq!(first.get("client_id").map(String::as_str), Some("client-1"));
    }
    assert_eq!(authz.state.registrations.load(Ordering::SeqCst), 1);

    // add_book needs books:write: 403 insufficient_scope, a second login for the union of the
    // scopes, and the call goes through.
    let added = client
        .call_tool(
            "add_book",
            json!({"title": "Kindred", "author": "Octavia E. Butler", "year": 1979}),
        )
        .await
        .unwrap();
    assert_eq!(text(&added), "Added 'Kindred' by Octavia E. Butler (1979).");
    {
        let authorizations = authz.state.authorizations.lock().unwrap();
        assert_eq!(authorizations.len(), 2);
        let scope = authorizations[1].get("scope").cloned().unwrap_or_default();
        let mut scopes: Vec<&str> = scope.split(' ').collect();
        scopes.sort_unstable();
        assert_eq!(scopes, ["books:read", "books:write"]);
    }
    assert_eq!(authz.state.code_grants.load(Ordering::SeqCst), 2);
    assert_eq!(
        authz.state.registrations.load(Ordering::SeqCst),
        1,
        "registered once"
    );

    // The access token lives 3 s and is renewed 1 s before: after 2.5 s the next request is
    // preceded by a refresh, with no new login.
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let again = client
        .call_tool("search_books", json!({"query": "kindred"}))
        .await
        .unwrap();
    assert!(text(&again).contains("Kindred"), "{again:?}");
    assert_eq!(authz.state.refresh_grants.load(Ordering::SeqCst), 1);
    assert_eq!(authz.state.authorizations.lock().unwrap().len(), 2);
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_oauth_dance_on_the_2026_wire() {
    run_the_flow("2026-07-28").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_oauth_dance_on_a_2025_session() {
    run_the_flow("2025-11-25").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_without_credentials_gets_a_clear_error() {
    let authz = authorization_server(60).await;
    let (resource, _stop) = bookshop(&authz.issuer()).await;
    let transport = HttpClientTransport::new(&resource).unwrap();
    let client = Client::builder()
        .protocol_version("2026-07-28")
        .connect(transport)
        .await
        .unwrap();
    let error = client
        .call_tool("search_books", json!({"query": "dune"}))
        .await
        .expect_err("refused without a token");
    assert!(error.message().contains("401"), "{}", error.message());
    assert!(
        error.message().contains("Unauthorized"),
        "{}",
        error.message()
    );
    client.close().await;
}

/// A person who always clicks "Deny", counting how often they were asked.
struct Denying {
    asked: Arc<AtomicUsize>,
    issuer: String,
}

impl modelctx::client::oauth::Login for Denying {
    fn redirect_uri(&self) -> modelctx::auth::AuthFuture<'_, String> {
        Box::pin(async { Ok("http://127.0.0.1:1/callback".to_owned()) })
    }

    fn authorize<'a>(
        &'a self,
        authorization_url: &'a str,
        _redirect_uri: &'a str,
    ) -> modelctx::auth::AuthFuture<'a, modelctx::client::oauth::AuthorizationResponse> {
        self.asked.fetch_add(1, Ordering::SeqCst);
        let state = authorization_url
            .split(['?', '&'])
            .find_map(|p| p.strip_prefix("state="))
            .unwrap_or_default()
            .to_owned();
        let issuer = self.issuer.clone();
        Box::pin(async move {
            Ok(modelctx::client::oauth::AuthorizationResponse::from_query(
                &format!("error=access_denied&state={state}&iss={issuer}"),
            ))
        })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_login_is_asked_once_for_the_requests_waiting_on_it() {
    let authz = authorization_server(60).await;
    let (resource, _stop) = bookshop(&authz.issuer()).await;
    let asked = Arc::new(AtomicUsize::new(0));
    let oauth = OAuth::builder()
        .login(Denying {
            asked: asked.clone(),
            issuer: authz.issuer(),
        })
        .build()
        .unwrap();
    let transport = HttpClientTransport::new(&resource).unwrap().auth(oauth);
    let client = Arc::new(
        Client::builder()
            .protocol_version("2026-07-28")
            .connect(transport)
            .await
            .unwrap(),
    );
    let mut calls = tokio::task::JoinSet::new();
    for _ in 0..5 {
        let client = client.clone();
        calls.spawn(async move {
            client
                .call_tool("search_books", json!({"query": "dune"}))
                .await
        });
    }
    while let Some(done) = calls.join_next().await {
        let error = done.unwrap().expect_err("the person said no");
        assert!(
            error.message().contains("access_denied"),
            "{}",
            error.message()
        );
    }
    assert_eq!(
        asked.load(Ordering::SeqCst),
        1,
        "one consent page, not one per request"
    );
}

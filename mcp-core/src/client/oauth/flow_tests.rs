//! The provider against a small authorization server of its own: login, refresh before a
//! request, step-up, the retry limit, `iss` refusal, logout.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use axum::extract::State;
use axum::http::{header, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use serde_json::json;

use super::*;
use crate::auth::BearerChallenge;
use crate::fetch::parse_query;

#[derive(Default)]
struct Mock {
    base: Mutex<String>,
    /// The `iss` the authorization endpoint sends (`None`: the issuer).
    iss: Mutex<Option<String>>,
    /// Codes buy tokens valid for an hour (else already expired).
    lasting: AtomicBool,
    authorizations: AtomicUsize,
    tokens: AtomicUsize,
    registrations: AtomicUsize,
    /// The query of the last authorization request.
    last_authorization: Mutex<Vec<(String, String)>>,
}

impl Mock {
    fn base(&self) -> String {
        self.base.lock().unwrap().clone()
    }
}

type Shared = State<Arc<Mock>>;

async fn prm(State(mock): Shared) -> Json {
    let base = mock.base();
    Json(json!({"resource": format!("{base}/mcp"), "authorization_servers": [base]}))
}

async fn metadata(State(mock): Shared) -> Json {
    let base = mock.base();
    Json(json!({
        "issuer": base,
        "authorization_endpoint": format!("{base}/authorize"),
        "token_endpoint": format!("{base}/token"),
        "registration_endpoint": format!("{base}/register"),
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["none"],
        "authorization_response_iss_parameter_supported": true,
        "scopes_supported": ["read", "write", "offline_access"],
    }))
}

async fn authorize(State(mock): Shared, uri: Uri) -> Response {
    mock.authorizations.fetch_add(1, Ordering::SeqCst);
    let query = parse_query(uri.query().unwrap_or(""));
    let find = |k: &str| {
        query
            .iter()
            .find(|(n, _)| n == k)
            .map(|(_, v)| v.clone())
            .unwrap_or_default()
    };
    let iss = mock
        .iss
        .lock()
        .unwrap()
        .clone()
        .unwrap_or_else(|| mock.base());
    let location = format!(
        "{}?code=the-code&state={}&iss={}",
        find("redirect_uri"),
        find("state"),
        iss
    );
    *mock.last_authorization.lock().unwrap() = query;
    (StatusCode::FOUND, [(header::LOCATION, location)]).into_response()
}

async fn token(State(mock): Shared, body: String) -> Json {
    let n = mock.tokens.fetch_add(1, Ordering::SeqCst) + 1;
    let form = parse_query(&body);
    let grant = form
        .iter()
        .find(|(k, _)| k == "grant_type")
        .map(|(_, v)| v.as_str());
    match grant {
        // Already expired unless `lasting`: the next request refreshes first.
        Some("authorization_code") => Json(json!({
            "access_token": format!("at-{n}"), "token_type": "Bearer",
            "expires_in": if mock.lasting.load(Ordering::SeqCst) { 3600 } else { 0 },
            "refresh_token": "rt"
        })),
        _ => Json(
            json!({"access_token": format!("at-{n}"), "token_type": "bearer", "expires_in": 3600}),
        ),
    }
}

async fn register(State(mock): Shared) -> (StatusCode, Json) {
    mock.registrations.fetch_add(1, Ordering::SeqCst);
    (
        StatusCode::CREATED,
        Json(json!({"client_id": "registered"})),
    )
}

async fn start() -> (Arc<Mock>, String) {
    let mock = Arc::new(Mock::default());
    let app = Router::new()
        .route("/.well-known/oauth-protected-resource/mcp", get(prm))
        .route("/.well-known/oauth-authorization-server", get(metadata))
        .route("/authorize", get(authorize))
        .route("/token", post(token))
        .route("/register", post(register))
        .with_state(mock.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    *mock.base.lock().unwrap() = base.clone();
    tokio::spawn(async move { axum::serve(listener, app).await });
    (mock, format!("{base}/mcp"))
}

fn provider() -> OAuth {
    OAuth::builder()
        .login(HeadlessLogin::new("http://localhost:3000/callback"))
        .build()
        .unwrap()
}

/// A JSON answer (the crate's axum has no `json` feature).
struct Json(serde_json::Value);

impl IntoResponse for Json {
    fn into_response(self) -> Response {
        (
            [(header::CONTENT_TYPE, "application/json")],
            self.0.to_string(),
        )
            .into_response()
    }
}

fn refusal(status: u16, endpoint: &str, challenge: BearerChallenge, sent: Option<&str>) -> Refusal {
    Refusal {
        status,
        challenge: Some(challenge),
        endpoint: endpoint.to_owned(),
        sent: sent.map(str::to_owned),
    }
}

#[tokio::test]
async fn login_refresh_step_up_and_logout() {
    let (mock, endpoint) = start().await;
    let oauth = provider();
    assert_eq!(oauth.authorization(&endpoint).await.unwrap(), None);

    // 401 without any hint: well-known discovery, registration, login.
    let challenge = BearerChallenge::default().scope("read");
    assert!(oauth
        .refused(&refusal(401, &endpoint, challenge, None))
        .await
        .unwrap());
    assert_eq!(mock.registrations.load(Ordering::SeqCst), 1);
    assert_eq!(mock.authorizations.load(Ordering::SeqCst), 1);
    let query = mock.last_authorization.lock().unwrap().clone();
    let param = |k: &str| query.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
    assert_eq!(param("scope").as_deref(), Some("read offline_access"));
    assert_eq!(param("resource"), Some(endpoint.clone()));
    assert_eq!(param("code_challenge_method").as_deref(), Some("S256"));
    assert_eq!(param("client_id").as_deref(), Some("registered"));

    // A refusal of a request sent before the login: resending is enough.
    let late = BearerChallenge::default();
    assert!(oauth
        .refused(&refusal(401, &endpoint, late, None))
        .await
        .unwrap());
    assert_eq!(mock.authorizations.load(Ordering::SeqCst), 1);

    // The token came back expired: it is refreshed before it is sent.
    let sent = oauth.authorization(&endpoint).await.unwrap();
    assert_eq!(sent.as_deref(), Some("Bearer at-2"));
    assert_eq!(mock.tokens.load(Ordering::SeqCst), 2);

    // Step-up: a new scope means a new login with the union.
    let more = BearerChallenge::default()
        .error("insufficient_scope")
        .scope("write");
    let step_up = refusal(403, &endpoint, more.clone(), sent.as_deref());
    assert!(oauth.refused(&step_up).await.unwrap());
    assert_eq!(mock.authorizations.load(Ordering::SeqCst), 2);
    let query = mock.last_authorization.lock().unwrap().clone();
    let scope = query
        .iter()
        .find(|(n, _)| n == "scope")
        .map(|(_, v)| v.as_str());
    assert_eq!(scope, Some("read write offline_access"));
    let sent = oauth.authorization(&endpoint).await.unwrap();
    assert!(sent.is_some());
    // The same challenge again: nothing new to ask for, so no new login.
    let again = refusal(403, &endpoint, more, sent.as_deref());
    assert!(!oauth.refused(&again).await.unwrap());
    assert_eq!(mock.authorizations.load(Ordering::SeqCst), 2);

    oauth.logout(&endpoint).await.unwrap();
    assert_eq!(oauth.authorization(&endpoint).await.unwrap(), None);
    // The registration is kept: the next login does not register again.
    let challenge = BearerChallenge::default();
    assert!(oauth
        .refused(&refusal(401, &endpoint, challenge, None))
        .await
        .unwrap());
    assert_eq!(mock.registrations.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_wrong_iss_stops_before_the_token_endpoint() {
    let (mock, endpoint) = start().await;
    *mock.iss.lock().unwrap() = Some("https://evil.example.com".into());
    let oauth = provider();
    let error = oauth
        .refused(&refusal(401, &endpoint, BearerChallenge::default(), None))
        .await
        .unwrap_err();
    assert!(error.message().contains("RFC 9207"), "{}", error.message());
    assert_eq!(mock.authorizations.load(Ordering::SeqCst), 1);
    assert_eq!(mock.tokens.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a_fresh_token_refused_again_ends_the_attempt() {
    let (mock, endpoint) = start().await;
    mock.lasting.store(true, Ordering::SeqCst);
    let oauth = provider();
    let challenge = BearerChallenge::default();
    let first = refusal(401, &endpoint, challenge.clone(), None);
    assert!(oauth.refused(&first).await.unwrap());
    // The retry carries the new token and is refused as well: another login would not help.
    let sent = oauth.authorization(&endpoint).await.unwrap();
    assert_eq!(sent.as_deref(), Some("Bearer at-1"));
    let second = refusal(401, &endpoint, challenge, sent.as_deref());
    assert!(!oauth.refused(&second).await.unwrap());
    assert_eq!(mock.authorizations.load(Ordering::SeqCst), 1);
    assert_eq!(mock.tokens.load(Ordering::SeqCst), 1);
}

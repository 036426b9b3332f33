//! The client over `https://` (the `https` feature): a Streamable HTTP server behind TLS on
//! 127.0.0.1 with a certificate made for the test, trusted through `tls_config`; the default
//! roots refuse it with a clear error. The token verifier's key set over `https://` likewise.

mod support;

use std::sync::Arc;

use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use modelctx::client::Client;
use modelctx::server::McpServer;
use modelctx::transport::rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use modelctx::transport::rustls::{self, RootCertStore};
use modelctx::transport::{HttpClientTransport, HttpConfig, McpHttp};
use serde_json::json;

/// Echoes the text.
#[modelctx::tool]
async fn echo(text: String) -> String {
    text
}

/// Serves the echo server over TLS on 127.0.0.1; returns the URL (host `localhost`) and the
/// certificate to trust.
async fn tls_server() -> (String, CertificateDer<'static>, tokio::task::JoinHandle<()>) {
    let http = McpHttp::new(McpServer::new("tls").tool(EchoTool), HttpConfig::default())
        .await
        .unwrap();
    let (port, cert, task) = serve_tls(http.axum_router()).await;
    (format!("https://localhost:{port}/mcp"), cert, task)
}

/// A client TLS configuration that trusts `cert` only.
fn trusting(cert: CertificateDer<'static>) -> Arc<rustls::ClientConfig> {
    let mut roots = RootCertStore::empty();
    roots.add(cert).unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    Arc::new(
        rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(roots)
            .with_no_client_auth(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_set_behind_a_private_ca_is_read_with_tls_config() {
    use modelctx::auth::{JwtVerifier, TokenVerifier, VerifyError};
    use modelctx::transport::axum::routing::get;
    use support::jwt::{now, Keys};

    let keys = Keys::new();
    let jwks = keys.jwks().to_string();
    let router = modelctx::transport::axum::Router::new().route(
        "/jwks",
        get(move || {
            let jwks = jwks.clone();
            async move { jwks }
        }),
    );
    let (port, cert, server) = serve_tls(router).await;
    let url = format!("https://localhost:{port}/jwks");
    let token = keys.rs256(
        &json!({"iss": "https://issuer.test", "sub": "tls", "aud": "api",
                                   "exp": now() + 60}),
    );

    // Mozilla's roots do not know the test's certificate: the key set cannot be read.
    let default_roots = JwtVerifier::new("https://issuer.test", &url, "api").unwrap();
    assert!(matches!(
        default_roots.verify(&token).await,
        Err(VerifyError::Unavailable(_))
    ));
    // Trusting it through tls_config, the token is verified.
    let trusted = JwtVerifier::new("https://issuer.test", &url, "api")
        .unwrap()
        .tls_config(trusting(cert));
    let who = trusted.verify(&token).await.unwrap();
    assert_eq!(who.subject(), Some("tls"));
    server.abort();
}

/// Serves `router` over TLS on 127.0.0.1 with a certificate for `localhost` made here; returns
/// the port and the certificate to trust.
async fn serve_tls(
    router: modelctx::transport::axum::Router,
) -> (u16, CertificateDer<'static>, tokio::task::JoinHandle<()>) {
    let made = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).unwrap();
    let cert = CertificateDer::from(made.cert.der().to_vec());
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(made.key_pair.serialize_der()));
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![cert.clone()], key)
        .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let task = tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let (acceptor, router) = (acceptor.clone(), router.clone());
            tokio::spawn(async move {
                // A client that refuses the certificate ends the handshake: nothing to serve.
                let Ok(tls) = acceptor.accept(tcp).await else {
                    return;
                };
                let service = TowerToHyperService::new(router);
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(tls), service)
                    .await;
            });
        }
    });
    (port, cert, task)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn https_with_a_trusted_certificate_in_both_eras() {
    let (url, cert, server) = tls_server().await;
    let tls = trusting(cert);
    for legacy in [false, true] {
        let transport = HttpClientTransport::new(&url)
            .unwrap()
            .tls_config(tls.clone());
        let builder = if legacy {
            Client::builder().legacy()
        } else {
            Client::builder()
        };
        let client = builder.connect(transport).await.unwrap();
        let echoed = client
            .call_tool("echo", json!({"text": "over TLS"}))
            .await
            .unwrap();
        assert_eq!(echoed.content[0].as_text(), Some("over TLS"));
        client.close().await;
    }
    server.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_untrusted_certificate_is_a_clear_error() {
    let (url, _cert, server) = tls_server().await;
    let err = Client::connect(HttpClientTransport::new(&url).unwrap())
        .await
        .unwrap_err();
    assert!(
        err.message().contains("could not reach") && err.message().contains("certificate"),
        "{err}"
    );
    server.abort();
}

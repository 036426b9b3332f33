//! The bookshop behind OAuth 2.1: every request needs a JWT bearer token issued by `--issuer`
//! (verified against its JWKS) for this server (`aud`) with the scope `books:read`, and
//! `add_book` needs `books:write` too. The Protected Resource Metadata tells clients where to get tokens.
//!
//! Run:
//! `cargo run --example auth_server --features jwt -- --port 8080 --issuer https://auth.example.com/realms/shop --jwks-url https://auth.example.com/realms/shop/protocol/openid-connect/certs`
//! (`--audience` defaults to the server's own URL, `http://127.0.0.1:PORT/mcp`; `https://`
//! key sets need the `https` feature too).

#[path = "bookshop.rs"]
pub mod bookshop;

use modelctx::auth::{JwtVerifier, ResourceServer};
use modelctx::prelude::*;
use modelctx::transport::HttpConfig;

/// What the command line gives.
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    /// The port to listen on (127.0.0.1).
    pub port: u16,
    /// The authorization server's issuer identifier (`iss` of its tokens).
    pub issuer: String,
    /// Where its signing keys are published.
    pub jwks_url: String,
    /// The audience tokens must carry; default the server's own URL.
    pub audience: Option<String>,
}

impl Options {
    /// Reads `--port N --issuer ISS --jwks-url URL [--audience AUD]`.
    pub fn parse(args: impl IntoIterator<Item = String>) -> Result<Self> {
        let mut args = args.into_iter();
        let (mut port, mut issuer, mut jwks_url, mut audience) = (None, None, None, None);
        while let Some(flag) = args.next() {
            let value = args
                .next()
                .ok_or_else(|| McpError::invalid_params(format!("{flag} needs a value")))?;
            match flag.as_str() {
                "--port" => {
                    port =
                        Some(value.parse().map_err(|e| {
                            McpError::invalid_params(format!("--port {value}: {e}"))
                        })?)
                }
                "--issuer" => issuer = Some(value),
                "--jwks-url" => jwks_url = Some(value),
                "--audience" => audience = Some(value),
                other => return Err(McpError::invalid_params(format!("unknown option {other}"))),
            }
        }
        let missing = |name: &str| McpError::invalid_params(format!("{name} is required"));
        Ok(Self {
            port: port.ok_or_else(|| missing("--port"))?,
            issuer: issuer.ok_or_else(|| missing("--issuer"))?,
            jwks_url: jwks_url.ok_or_else(|| missing("--jwks-url"))?,
            audience,
        })
    }

    /// The server's canonical URL (the resource identifier).
    pub fn resource(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }
}

/// The HTTP settings that protect the bookshop.
pub fn protected(options: &Options) -> Result<HttpConfig> {
    let resource = options.resource();
    let audience = options.audience.clone().unwrap_or_else(|| resource.clone());
    let verifier = JwtVerifier::new(&options.issuer, &options.jwks_url, audience.clone())?;
    let mut auth = ResourceServer::new(&resource, verifier)?
        .authorization_server(options.issuer.clone())
        .scopes_supported(["books:read", "books:write"])
        .required_scopes(["books:read"])
        .resource_name("Bookshop");
    if audience != resource {
        auth = auth.accept_audience(audience);
    }
    Ok(HttpConfig::default().auth(auth))
}

/// Serves the protected bookshop on `listener` until `shutdown` completes.
pub async fn serve(
    options: &Options,
    listener: tokio::net::TcpListener,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<()> {
    let config = protected(options)?;
    bookshop::server()
        .serve_http_on(listener, config, shutdown)
        .await
}

#[allow(dead_code)]
#[tokio::main]
async fn main() -> Result<()> {
    let options = match Options::parse(std::env::args().skip(1)) {
        Ok(options) => options,
        Err(e) => {
            eprintln!("{}", e.message());
            eprintln!("usage: auth_server --port N --issuer ISS --jwks-url URL [--audience AUD]");
            std::process::exit(64);
        }
    };
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", options.port)).await?;
    eprintln!(
        "bookshop at {} (tokens from {}; metadata at http://127.0.0.1:{}/.well-known/oauth-protected-resource/mcp)",
        options.resource(),
        options.issuer,
        options.port
    );
    serve(&options, listener, std::future::pending()).await
}

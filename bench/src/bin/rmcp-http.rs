//! The same one-tool server with rmcp 3 over Streamable HTTP on 127.0.0.1, as its README
//! writes it: sessions by default, `--stateless` for its stateless JSON mode. Prints its URL.

use mcp_bench::rmcp_adder::Adder;
use rmcp::transport::streamable_http_server::{
    session::local::LocalSessionManager, StreamableHttpServerConfig, StreamableHttpService,
};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let stateless = std::env::args().any(|a| a == "--stateless");
    // Not in rmcp's docs: without TCP_NODELAY its multi-write SSE answers meet delayed ACKs
    // (about 40 ms per request on loopback). The bench runs both ways.
    let nodelay = std::env::args().any(|a| a == "--nodelay");
    let port: u16 = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(0);
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(!stateless)
        .with_json_response(stateless);
    let service = StreamableHttpService::new(
        || Ok(Adder::new()),
        LocalSessionManager::default().into(),
        config,
    );
    let router = axum::Router::new().nest_service("/mcp", service);
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
    println!("http://{}/mcp", listener.local_addr()?);
    if nodelay {
        use axum::serve::ListenerExt;
        let listener = listener.tap_io(|tcp| {
            let _ = tcp.set_nodelay(true);
        });
        axum::serve(listener, router).await?;
    } else {
        axum::serve(listener, router).await?;
    }
    Ok(())
}

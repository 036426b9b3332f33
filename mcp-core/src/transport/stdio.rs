//! stdio: newline-delimited JSON-RPC on stdin/stdout. stdout carries protocol messages only;
//! logs go to stderr. End of stdin ends the connection once in-flight requests have finished.

use crate::engine::connection::{serve_lines, ConnectionConfig};
use crate::engine::RunningServer;
use crate::error::McpError;
use crate::serve::IntoServer;

/// Serves `server` (a low-level [`Server`](crate::lowlevel::Server) or anything that converts
/// into one) on this process's stdin and stdout until stdin closes.
///
/// ```no_run
/// # async fn run() -> mcp_core::Result<()> {
/// let server = mcp_core::lowlevel::Server::new("demo");
/// mcp_core::transport::serve_stdio(server).await
/// # }
/// ```
pub async fn serve_stdio(server: impl IntoServer) -> Result<(), McpError> {
    let running = RunningServer::start(server.into_server()).await?;
    let config = ConnectionConfig {
        kind: "stdio",
        surface_internal: running.server.options.surface_internal_errors,
    };
    let result = serve_lines(
        running.clone(),
        tokio::io::stdin(),
        tokio::io::stdout(),
        config,
    )
    .await;
    running.stop().await;
    result.map_err(McpError::from)
}

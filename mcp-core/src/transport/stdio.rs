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
    let result = match pipes() {
        // Pipes (how an MCP client runs a server): read and written by the runtime itself,
        // without a blocking thread per read and write. The connection runs as a task, so on a
        // multi-thread runtime its reader, handlers and writer share a worker's local queue
        // instead of waking a worker for every request from the `block_on` thread.
        Some((input, output)) => {
            let connection = serve_lines(running.clone(), input, output, config);
            match tokio::spawn(connection).await {
                Ok(result) => result,
                Err(e) => Err(std::io::Error::other(e)),
            }
        }
        // A terminal, a file or a socket: tokio's blocking stdin and stdout.
        None => {
            serve_lines(
                running.clone(),
                tokio::io::stdin(),
                tokio::io::stdout(),
                config,
            )
            .await
        }
    };
    running.stop().await;
    result.map_err(McpError::from)
}

/// stdin and stdout as non-blocking pipes registered with the runtime, when both are pipes.
///
/// The descriptors are duplicated, so the pipes' shared file descriptions become non-blocking
/// (tokio sets `O_NONBLOCK`); nothing else in this process should read stdin or write stdout
/// while serving, which serving on stdio already requires.
#[cfg(unix)]
fn pipes() -> Option<(
    tokio::net::unix::pipe::Receiver,
    tokio::net::unix::pipe::Sender,
)> {
    use std::os::fd::AsFd;
    use tokio::net::unix::pipe;

    let input = std::io::stdin().as_fd().try_clone_to_owned().ok()?;
    let output = std::io::stdout().as_fd().try_clone_to_owned().ok()?;
    // `from_owned_fd` refuses anything that is not a FIFO of the right direction.
    let input = pipe::Receiver::from_owned_fd(input).ok()?;
    let output = pipe::Sender::from_owned_fd(output).ok()?;
    Some((input, output))
}

#[cfg(not(unix))]
fn pipes() -> Option<(tokio::io::Stdin, tokio::io::Stdout)> {
    None
}

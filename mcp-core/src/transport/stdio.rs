//! stdio: newline-delimited JSON-RPC on stdin/stdout. stdout carries protocol messages only;
//! logs go to stderr.
//!
//! End of stdin ends the connection once in-flight requests have finished, or after
//! [`ServerOptions::shutdown_grace`](crate::lowlevel::ServerOptions::shutdown_grace) (10 s by
//! default), when those still running are cancelled. A client that closes the server's stdout
//! (a broken pipe), or reads nothing from it for
//! [`ServerOptions::write_timeout`](crate::lowlevel::ServerOptions::write_timeout) (30 s), ends
//! the connection at once: running requests are cancelled and [`serve_stdio`] returns the write
//! error. Answers a client has not read yet are queued up to
//! [`ServerOptions::max_outbound_bytes`](crate::lowlevel::ServerOptions::max_outbound_bytes)
//! (1 MiB); past that the server reads no more requests until the client reads.

use crate::error::McpError;
use crate::lowlevel::IntoServer;
use crate::lowlevel::RunningServer;
use crate::lowlevel::Server;
use crate::transport::connection::{serve_lines, ConnectionConfig};

/// Serves `server` on this process's stdin and stdout (what the `serve_stdio` methods of
/// [`Server`] and [`McpServer`](crate::server::McpServer) do).
pub(crate) async fn serve_stdio(server: impl IntoServer) -> Result<(), McpError> {
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
        Some((input, output, restore)) => {
            let connection = serve_lines(running.clone(), input, output, config);
            let mut task = AbortOnDrop(tokio::spawn(connection));
            let result = match (&mut task.0).await {
                Ok(result) => result,
                Err(e) => Err(std::io::Error::other(e)),
            };
            restore.blocking();
            result
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

/// stdin and stdout as non-blocking pipes registered with the runtime, when both are pipes and
/// stderr is not the stdout pipe (a `2>&1` would make logging see `EAGAIN`).
///
/// The descriptors are duplicated, so the pipes' shared file descriptions become non-blocking
/// (tokio sets `O_NONBLOCK`); nothing else in this process should read stdin or write stdout
/// while serving, which serving on stdio already requires. [`Restore`] sets them back to
/// blocking afterwards.
#[cfg(unix)]
fn pipes() -> Option<(
    tokio::net::unix::pipe::Receiver,
    tokio::net::unix::pipe::Sender,
    Restore,
)> {
    use std::os::fd::AsFd;
    use std::os::unix::fs::MetadataExt;
    use tokio::net::unix::pipe;

    let dup = |fd: std::os::fd::BorrowedFd<'_>| fd.try_clone_to_owned().ok();
    let input = dup(std::io::stdin().as_fd())?;
    let output = dup(std::io::stdout().as_fd())?;
    let identity = |fd: &std::os::fd::OwnedFd| {
        let file = std::fs::File::from(fd.try_clone().ok()?);
        let meta = file.metadata().ok()?;
        Some((meta.dev(), meta.ino()))
    };
    let errors = dup(std::io::stderr().as_fd());
    if errors.is_some_and(|e| identity(&e).is_some() && identity(&e) == identity(&output)) {
        return None;
    }
    let restore = Restore {
        input: input.try_clone().ok()?,
        output: output.try_clone().ok()?,
    };
    // `from_owned_fd` refuses anything that is not a FIFO of the right direction.
    let input = pipe::Receiver::from_owned_fd(input).ok()?;
    let output = pipe::Sender::from_owned_fd(output).ok()?;
    Some((input, output, restore))
}

/// Duplicates of stdin and stdout, to put their pipes back in blocking mode after serving.
#[cfg(unix)]
struct Restore {
    input: std::os::fd::OwnedFd,
    output: std::os::fd::OwnedFd,
}

#[cfg(unix)]
impl Restore {
    fn blocking(self) {
        use tokio::net::unix::pipe;
        // The duplicates share the pipes' file descriptions, so clearing O_NONBLOCK through
        // them clears it for fds 0 and 1 too.
        if let Ok(rx) = pipe::Receiver::from_owned_fd_unchecked(self.input) {
            let _ = rx.into_blocking_fd();
        }
        if let Ok(tx) = pipe::Sender::from_owned_fd_unchecked(self.output) {
            let _ = tx.into_blocking_fd();
        }
    }
}

/// Aborts the connection task if `serve_stdio` is dropped (e.g. a `select!` on ctrl-c).
struct AbortOnDrop<T>(tokio::task::JoinHandle<T>);

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

#[cfg(not(unix))]
fn pipes() -> Option<(tokio::io::Stdin, tokio::io::Stdout, Restore)> {
    None
}

#[cfg(not(unix))]
struct Restore;

#[cfg(not(unix))]
impl Restore {
    fn blocking(self) {}
}

impl<S: Send + Sync + 'static> Server<S> {
    /// Serves this server on this process's stdin and stdout until stdin closes (then `Ok`),
    /// or until stdout cannot be written (then the write error: `BrokenPipe` when the client
    /// closed it, `TimedOut` when it read nothing for the write timeout). The bounds are
    /// [`ServerOptions`](crate::lowlevel::ServerOptions) fields.
    ///
    /// ```no_run
    /// # async fn run() -> modelctx_core::Result<()> {
    /// modelctx_core::lowlevel::Server::new("demo").serve_stdio().await
    /// # }
    /// ```
    pub async fn serve_stdio(self) -> crate::Result<()> {
        serve_stdio(self).await
    }
}

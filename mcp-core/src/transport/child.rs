//! The client's stdio transport: spawn a server program, speak newline-delimited JSON-RPC on
//! its stdin and stdout, forward its stderr, and shut it down in the order the spec gives.

use std::ffi::OsStr;
use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};
use tokio::process::{Child, Command};

use super::wire::{run_lines, Incoming, Transport, Wire, DEFAULT_CLIENT_MAX_MESSAGE_BYTES};

/// How long [`ChildProcess`] waits for the server to exit after closing its stdin (5 s).
pub const DEFAULT_CLOSE_TIMEOUT: Duration = Duration::from_secs(5);
/// How long it waits after `SIGTERM` before `SIGKILL` (2 s).
pub const DEFAULT_TERMINATE_TIMEOUT: Duration = Duration::from_secs(2);

/// Where the server process's stderr goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Stderr {
    /// Each line becomes a `tracing` event at `INFO`, target `modelctx::server_stderr`, with the
    /// program's name in the `server` field (default).
    #[default]
    Log,
    /// The server writes straight to this process's stderr.
    Inherit,
    /// Discarded.
    Discard,
}

/// A server program run as a child process, spoken to over its stdin and stdout.
///
/// Defaults: stderr forwarded to `tracing` ([`Stderr::Log`]); messages up to 64 MiB; on close,
/// stdin is closed, the process gets 5 s to exit, then `SIGTERM` and 2 s more, then `SIGKILL`.
/// The process is killed if the runtime drops the transport without closing. A process that
/// exits fails every waiting request with its exit status.
///
/// ```no_run
/// # async fn run() -> modelctx_core::Result<()> {
/// use modelctx_core::client::Client;
/// use modelctx_core::transport::ChildProcess;
///
/// let server = ChildProcess::new("npx").args(["-y", "@modelcontextprotocol/server-everything"]);
/// let client = Client::builder().connect(server).await?;
/// for tool in client.list_all_tools().await? {
///     println!("{}", tool.name);
/// }
/// client.close().await;
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct ChildProcess {
    command: Command,
    name: String,
    stderr: Stderr,
    close_timeout: Duration,
    terminate_timeout: Duration,
    max_message_bytes: usize,
}

impl ChildProcess {
    /// Runs `program` (looked up on `PATH` like [`std::process::Command`]).
    pub fn new(program: impl AsRef<OsStr>) -> Self {
        Self::from_command(std::process::Command::new(program))
    }

    /// Runs a command configured by hand (arguments, environment, working directory). Its
    /// stdin, stdout and stderr settings are replaced.
    pub fn from_command(command: std::process::Command) -> Self {
        let name = Path::new(command.get_program())
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        Self {
            command: Command::from(command),
            name,
            stderr: Stderr::default(),
            close_timeout: DEFAULT_CLOSE_TIMEOUT,
            terminate_timeout: DEFAULT_TERMINATE_TIMEOUT,
            max_message_bytes: DEFAULT_CLIENT_MAX_MESSAGE_BYTES,
        }
    }

    /// Adds an argument.
    pub fn arg(mut self, arg: impl AsRef<OsStr>) -> Self {
        self.command.arg(arg);
        self
    }

    /// Adds arguments.
    pub fn args<I, A>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = A>,
        A: AsRef<OsStr>,
    {
        self.command.args(args);
        self
    }

    /// Sets an environment variable of the server process.
    pub fn env(mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Self {
        self.command.env(key, value);
        self
    }

    /// The server's working directory.
    pub fn current_dir(mut self, dir: impl AsRef<Path>) -> Self {
        self.command.current_dir(dir);
        self
    }

    /// Where the server's stderr goes (default [`Stderr::Log`]).
    pub fn stderr(mut self, stderr: Stderr) -> Self {
        self.stderr = stderr;
        self
    }

    /// How long to wait for the server to exit after closing its stdin (default 5 s).
    pub fn close_timeout(mut self, timeout: Duration) -> Self {
        self.close_timeout = timeout;
        self
    }

    /// How long to wait after `SIGTERM` before `SIGKILL` (default 2 s).
    pub fn terminate_timeout(mut self, timeout: Duration) -> Self {
        self.terminate_timeout = timeout;
        self
    }

    /// The largest message read from the server (default 64 MiB); longer ones are skipped and
    /// logged.
    pub fn max_message_bytes(mut self, bytes: usize) -> Self {
        self.max_message_bytes = bytes;
        self
    }
}

impl Transport for ChildProcess {
    async fn run(mut self, wire: Wire) {
        let incoming = wire.incoming.clone();
        self.command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(match self.stderr {
                Stderr::Log => Stdio::piped(),
                Stderr::Inherit => Stdio::inherit(),
                Stderr::Discard => Stdio::null(),
            })
            .kill_on_drop(true);
        let mut child = match self.command.spawn() {
            Ok(child) => child,
            Err(e) => {
                let reason = format!("could not start the server `{}`: {e}", self.name);
                let _ = incoming.send(Incoming::Closed(reason)).await;
                return;
            }
        };
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            let _ = incoming
                .send(Incoming::Closed(
                    "the server's pipes were not opened".into(),
                ))
                .await;
            return;
        };
        let stderr_task = child
            .stderr
            .take()
            .map(|stderr| tokio::spawn(forward_stderr(stderr, self.name.clone())));
        let peer = format!("the server `{}`", self.name);
        let ended = run_lines(stdout, stdin, self.max_message_bytes, wire, &peer).await;
        match ended {
            // The server's side ended: say why, with its exit status when it has one.
            Some(reason) => {
                let status = tokio::time::timeout(Duration::from_secs(1), child.wait()).await;
                let reason = match status {
                    Ok(Ok(status)) => format!("{peer} exited ({})", describe(status)),
                    _ => reason,
                };
                tracing::warn!("{reason}");
                let _ = incoming.send(Incoming::Closed(reason)).await;
                self.shut_down(&mut child).await;
            }
            // The client closed: stdin is closed (the writer was dropped); let it exit.
            None => self.shut_down(&mut child).await,
        }
        if let Some(task) = stderr_task {
            let _ = tokio::time::timeout(Duration::from_secs(1), task).await;
        }
    }
}

impl ChildProcess {
    /// Waits for the process to exit after its stdin closed, then terminates, then kills it.
    async fn shut_down(&self, child: &mut Child) {
        if let Ok(Ok(status)) = tokio::time::timeout(self.close_timeout, child.wait()).await {
            tracing::debug!(server = %self.name, "server exited ({})", describe(status));
            return;
        }
        if terminate(child) {
            if let Ok(Ok(_)) = tokio::time::timeout(self.terminate_timeout, child.wait()).await {
                tracing::debug!(server = %self.name, "server exited after SIGTERM");
                return;
            }
        }
        tracing::warn!(server = %self.name, "server did not exit; killing it");
        let _ = child.kill().await;
    }
}

/// Sends `SIGTERM`; false where there is no such signal (then the caller kills).
#[cfg(unix)]
fn terminate(child: &Child) -> bool {
    let pid = child
        .id()
        .and_then(|id| i32::try_from(id).ok())
        .and_then(rustix::process::Pid::from_raw);
    match pid {
        Some(pid) => rustix::process::kill_process(pid, rustix::process::Signal::TERM).is_ok(),
        None => false,
    }
}

#[cfg(not(unix))]
fn terminate(_child: &Child) -> bool {
    false
}

fn describe(status: ExitStatus) -> String {
    match status.code() {
        Some(code) => format!("exit status {code}"),
        None => format!("{status}"),
    }
}

async fn forward_stderr(stderr: impl AsyncRead + Unpin, server: String) {
    let mut lines = BufReader::new(stderr).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        tracing::info!(target: "modelctx::server_stderr", server = %server, "{line}");
    }
}

//! The accept loop of [`Server::serve_http_on`](crate::lowlevel::Server::serve_http_on):
//! hyper's HTTP/1.1 server with the limits a hostile client meets first. A connection cap
//! ([`HttpConfig::max_connections`]: at the cap no connection is accepted until one closes), a
//! header-read timeout that is also the keep-alive idle timeout
//! ([`HttpConfig::header_read_timeout`]), and a write timeout on the socket
//! ([`HttpConfig::write_timeout`]: a client that reads nothing for that long loses its
//! connection). Shutdown stops accepting, lets every connection finish the request it serves,
//! then returns.

use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::net::{IpAddr, Ipv6Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tokio::sync::{watch, Semaphore};

use super::config::HttpConfig;
use crate::write_timeout::WriteTimeout;

/// Serves `answer` (each request with its peer's address) on `listener` until `shutdown`
/// completes; then runs `on_shutdown`, stops accepting and waits for every connection to finish
/// what it serves.
pub(crate) async fn serve<A, Fut>(
    listener: TcpListener,
    answer: A,
    config: &HttpConfig,
    shutdown: impl Future<Output = ()>,
    on_shutdown: impl FnOnce(),
) where
    A: Fn(hyper::Request<Incoming>, SocketAddr) -> Fut + Clone + Send + 'static,
    Fut: Future<Output = Result<axum::response::Response, std::convert::Infallible>>
        + Send
        + 'static,
{
    let cap = config.max_connections.clamp(1, Semaphore::MAX_PERMITS);
    let cap = u32::try_from(cap).unwrap_or(u32::MAX);
    let connections = Arc::new(Semaphore::new(cap as usize));
    let (stop, stopping) = watch::channel(false);
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(config.header_read_timeout)
        .keep_alive(true);
    let write_timeout = config.write_timeout;
    let share = match config.max_connections_per_client {
        0 => (cap as usize / 2).max(1),
        n => n,
    };
    let clients = Arc::new(std::sync::Mutex::new(HashMap::<IpAddr, usize>::new()));
    tokio::pin!(shutdown);
    loop {
        // At the cap, wait for a connection to close before accepting another.
        let permit = tokio::select! {
            biased;
            () = &mut shutdown => break,
            permit = connections.clone().acquire_owned() => match permit {
                Ok(permit) => permit,
                Err(_) => break,
            },
        };
        let (tcp, peer) = tokio::select! {
            biased;
            () = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    accept_error(e).await;
                    continue;
                }
            },
        };
        let Some(slot) = ClientSlot::take(&clients, peer.ip(), share) else {
            tracing::debug!(peer = %peer.ip(), "a client over its share of connections: closed");
            drop(tcp);
            continue;
        };
        let _ = tcp.set_nodelay(true);
        let io = TokioIo::new(WriteTimeout::new(tcp, write_timeout));
        let answer = answer.clone();
        let service = hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
            answer(request, peer)
        });
        let connection = builder.serve_connection(io, service);
        let mut stopping = stopping.clone();
        tokio::spawn(async move {
            let _permit = permit;
            let _slot = slot;
            tokio::pin!(connection);
            tokio::select! {
                result = connection.as_mut() => log_end(result),
                _ = stop_requested(&mut stopping) => {
                    connection.as_mut().graceful_shutdown();
                    log_end(connection.await);
                }
            }
        });
    }
    on_shutdown();
    let _ = stop.send(true);
    // Every connection gives its permit back when it has finished.
    let _all = connections.acquire_many(cap).await;
}

/// The key of a client's share: its IPv4 address, or the /64 of an IPv6 one (one host
/// usually holds a whole /64).
fn client_key(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V4(v4) => IpAddr::V4(v4),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => IpAddr::V6(Ipv6Addr::from(u128::from(v6) & !((1u128 << 64) - 1))),
        },
    }
}

/// One connection of a client, counted while it lives.
struct ClientSlot {
    clients: Arc<std::sync::Mutex<HashMap<IpAddr, usize>>>,
    key: IpAddr,
}

impl ClientSlot {
    /// A slot for `ip`, unless its client already holds `share` connections.
    fn take(
        clients: &Arc<std::sync::Mutex<HashMap<IpAddr, usize>>>,
        ip: IpAddr,
        share: usize,
    ) -> Option<Self> {
        let key = client_key(ip);
        let mut counts = clients.lock().unwrap_or_else(|p| p.into_inner());
        let held = counts.entry(key).or_insert(0);
        if *held >= share {
            return None;
        }
        *held += 1;
        Some(Self {
            clients: clients.clone(),
            key,
        })
    }
}

impl Drop for ClientSlot {
    fn drop(&mut self) {
        let mut counts = self.clients.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(held) = counts.get_mut(&self.key) {
            *held -= 1;
            if *held == 0 {
                counts.remove(&self.key);
            }
        }
    }
}

/// Resolves once shutdown is asked for (or the loop is gone).
async fn stop_requested(stopping: &mut watch::Receiver<bool>) {
    let _ = stopping.wait_for(|stop| *stop).await;
}

fn log_end(result: Result<(), hyper::Error>) {
    if let Err(e) = result {
        tracing::debug!(error = %e, "connection ended");
    }
}

/// Errors of one connection (it is gone) pass; others (out of file descriptors) are waited
/// out for a moment, as hyper's and axum's loops do.
async fn accept_error(e: io::Error) {
    let per_connection = matches!(
        e.kind(),
        io::ErrorKind::ConnectionRefused
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
    );
    if !per_connection {
        tracing::warn!(error = %e, "accept failed; retrying in 1 s");
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

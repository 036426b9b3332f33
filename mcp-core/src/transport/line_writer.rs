//! The writing half of a newline-delimited connection: a task that writes queued messages in
//! batches, and a way for a request answered in place to write its answer straight to the
//! stream when the task has nothing to write (one request at a time needs no task hop).
//!
//! Order is kept by one count: every message sent through the connection's
//! [`Sink`](crate::lowlevel::Sink) is counted before it enters the channel and uncounted once
//! its bytes are written. An answer goes straight to the stream only while that count is zero
//! (nothing sent before it waits to be written), under the lock that every write takes.

use std::collections::VecDeque;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::{oneshot, watch, Notify, Semaphore};

use crate::lowlevel::{Outbound, Outbox, Unwritten};
use crate::write_timeout::WriteTimeout;

/// Bytes gathered before one write to the stream.
const WRITE_BATCH: usize = 64 * 1024;

/// The writer's bounds (from [`ServerOptions`](crate::lowlevel::ServerOptions)).
pub(crate) struct WriteLimits {
    /// Bytes queued before the writer stops taking messages.
    pub(crate) max_bytes: usize,
    /// How long a write may make no progress.
    pub(crate) timeout: Duration,
    /// Whether any request or notification is still running.
    pub(crate) running: Running,
}

/// The connection's slots (a semaphore of `slots` permits), counted as the requests and
/// notifications that hold one. The reader answers a request in place when it is the only one;
/// the writer writes at once when none runs (no handler is about to answer).
#[derive(Clone)]
pub(crate) struct Running {
    pub(crate) permits: Arc<Semaphore>,
    pub(crate) slots: usize,
}

impl Running {
    pub(crate) fn count(&self) -> usize {
        self.slots.saturating_sub(self.permits.available_permits())
    }
}

/// The output stream, shared by the writer task and [`InPlace`] writes.
pub(crate) struct Stream<W> {
    held: Mutex<Held<W>>,
    /// Messages sent and not yet written (see the module docs). Once the writer has failed it
    /// stays above zero, which only turns writes in place off.
    unwritten: Arc<Unwritten>,
    /// Wakes the writer when an in-place write left bytes (or a flush) for it to finish.
    handed: Notify,
}

struct Held<W> {
    io: WriteTimeout<W>,
    /// The rest of an answer written in place that the stream did not take at once: written
    /// before anything else.
    carry: Vec<u8>,
}

impl<W> Stream<W> {
    /// The stream over `io`; writes that make no progress for `timeout` fail.
    pub(crate) fn new(io: W, timeout: Duration, unwritten: Arc<Unwritten>) -> Arc<Self> {
        Arc::new(Self {
            held: Mutex::new(Held {
                io: WriteTimeout::new(io, timeout),
                carry: Vec::new(),
            }),
            unwritten,
            handed: Notify::new(),
        })
    }

    fn held(&self) -> MutexGuard<'_, Held<W>> {
        self.held.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Writes an answer straight to the stream when nothing sent before it waits to be written.
pub(crate) trait InPlace: Send + Sync {
    /// Writes `line` and its newline now, or gives it back (the writer is busy, or the stream
    /// takes nothing now): the caller then sends it the usual way. Bytes the stream did not
    /// take at once are left to the writer task, ahead of anything else.
    fn write_now(&self, line: String) -> Result<(), String>;
}

impl<W: AsyncWrite + Unpin + Send> InPlace for Stream<W> {
    fn write_now(&self, mut line: String) -> Result<(), String> {
        // A large answer goes to the writer, which writes it without a copy. (The writer in
        // the middle of a write has something to write.)
        if line.len() >= WRITE_BATCH {
            return Err(line);
        }
        let Ok(mut held) = self.held.try_lock() else {
            return Err(line);
        };
        if !self.unwritten.none() {
            return Err(line);
        }
        let held = &mut *held;
        line.push('\n');
        // Nobody waits on this poll: what it cannot do now, the writer task does. So every way
        // out below that leaves something undone (bytes, a flush) wakes the writer, whose own
        // poll also takes over a write timeout this one may have started.
        let mut cx = Context::from_waker(Waker::noop());
        let mut done = 0;
        while done < line.len() {
            match Pin::new(&mut held.io).poll_write(&mut cx, &line.as_bytes()[done..]) {
                Poll::Ready(Ok(n)) if n > 0 => done += n,
                // Full, failed or closed: the writer task meets it (and reports a failure).
                _ => break,
            }
        }
        if done == 0 {
            line.pop();
            return Err(line);
        }
        let flushed = done == line.len()
            && matches!(
                Pin::new(&mut held.io).poll_flush(&mut cx),
                Poll::Ready(Ok(()))
            );
        if !flushed {
            if done < line.len() {
                held.carry.extend_from_slice(&line.as_bytes()[done..]);
                self.unwritten.add();
            }
            self.handed.notify_one();
        }
        Ok(())
    }
}

/// The writer task's handle on the stream: every poll takes the lock, and finishes a carried
/// answer first.
struct Writing<W>(Arc<Stream<W>>);

impl<W: AsyncWrite + Unpin> Writing<W> {
    /// Writes what an in-place write left, if anything; `Ready(Ok)` once it is all written.
    fn poll_carry(&self, held: &mut Held<W>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while !held.carry.is_empty() {
            match Pin::new(&mut held.io).poll_write(cx, &held.carry) {
                Poll::Ready(Ok(0)) => return Poll::Ready(Err(io::ErrorKind::WriteZero.into())),
                Poll::Ready(Ok(n)) => {
                    held.carry.drain(..n);
                    if held.carry.is_empty() {
                        self.0.unwritten.done(1);
                    }
                }
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Pending => return Poll::Pending,
            }
        }
        Poll::Ready(Ok(()))
    }
}

impl<W: AsyncWrite + Unpin> AsyncWrite for Writing<W> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let mut held = self.0.held();
        std::task::ready!(self.poll_carry(&mut held, cx))?;
        Pin::new(&mut held.io).poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let mut held = self.0.held();
        std::task::ready!(self.poll_carry(&mut held, cx))?;
        Pin::new(&mut held.io).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let mut held = self.0.held();
        std::task::ready!(self.poll_carry(&mut held, cx))?;
        Pin::new(&mut held.io).poll_shutdown(cx)
    }
}

/// Writes queued messages to the stream in batches until told to stop, then writes what is
/// left, flushes and shuts the stream down.
///
/// It takes messages from `rx` into its own queue while that holds fewer than
/// `limits.max_bytes` bytes (`room` says `true` when it is full, for the reader to stop
/// reading). A write that makes no progress for `limits.timeout` fails with `TimedOut`.
pub(crate) async fn write_lines<W: AsyncWrite + Unpin>(
    mut rx: Outbox,
    stream: Arc<Stream<W>>,
    mut stop: oneshot::Receiver<()>,
    limits: WriteLimits,
    room: watch::Sender<bool>,
) -> io::Result<()> {
    let unwritten = stream.unwritten.clone();
    let mut writer = Writing(stream.clone());
    let mut queue = WriteQueue::new(unwritten.clone());
    let mut batch: Vec<u8> = Vec::with_capacity(WRITE_BATCH);
    // Messages in `batch`: uncounted once it is all written.
    let mut in_batch = 0;
    let mut written = 0;
    let mut unflushed = false;
    let mut stopping = false;
    // What `room` says, so it is only written when that changes (a write takes its lock).
    let mut over = false;
    loop {
        if stopping {
            while queue.bytes < limits.max_bytes {
                let Ok(line) = rx.try_recv() else { break };
                queue.push(line);
            }
        }
        if written == batch.len() && !queue.lines.is_empty() {
            if batch.capacity() > 2 * WRITE_BATCH {
                // A large message went out: give its memory back.
                batch = Vec::with_capacity(WRITE_BATCH);
            }
            batch.clear();
            written = 0;
            in_batch = queue.fill(&mut batch);
        }
        let pending = queue.bytes + (batch.len() - written);
        if (pending >= limits.max_bytes) != over {
            over = !over;
            room.send_replace(over);
        }
        let writing = written < batch.len();
        if stopping && !writing && queue.lines.is_empty() && rx.is_empty() {
            let close = async {
                writer.flush().await?;
                writer.shutdown().await
            };
            return match tokio::time::timeout(limits.timeout, close).await {
                Ok(closed) => closed,
                Err(_) => Err(stalled(limits.timeout)),
            };
        }
        let accepting = !stopping && pending < limits.max_bytes;
        tokio::select! {
            biased;
            line = rx.recv(), if accepting => {
                let Some(line) = line else {
                    stopping = true;
                    continue;
                };
                let idle = !writing && queue.lines.is_empty();
                queue.push(line);
                queue.take(&mut rx, limits.max_bytes);
                if idle && queue.bytes < WRITE_BATCH && rx.is_empty() && limits.running.count() > 0 {
                    // Let handlers that are about to answer run first, then write their
                    // answers in the same system call (a yield costs far less than a write).
                    // With none running (one request at a time) there is nothing to wait for.
                    tokio::task::yield_now().await;
                    queue.take(&mut rx, limits.max_bytes);
                }
            }
            _ = &mut stop, if !stopping => stopping = true,
            // Cancel-safe: when another branch wins, nothing was written.
            done = write_or_flush(&mut writer, &batch[written..]), if writing || unflushed => {
                match done? {
                    Some(0) => return Err(io::ErrorKind::WriteZero.into()),
                    Some(n) => {
                        written += n;
                        if written == batch.len() {
                            unwritten.done(in_batch);
                            in_batch = 0;
                        }
                        // The last of the queue written: a stream that flushes at once (a pipe
                        // always does) is flushed now, not on another turn of the loop; one
                        // that would wait is flushed there.
                        unflushed = written < batch.len()
                            || !queue.lines.is_empty()
                            || !flushed_at_once(&mut writer).await?;
                    }
                    None => unflushed = false,
                }
            }
            // An answer written in place left bytes or a flush: the flush writes them first.
            () = stream.handed.notified(), if !stopping => unflushed = true,
            // Stopping, nothing to write, but a message arrived after the drain above: take it
            // on the next turn (without this branch `select!` would panic here).
            else => {}
        }
    }
}

/// The error of a write that made no progress for `timeout`.
fn stalled(timeout: Duration) -> io::Error {
    io::Error::new(
        io::ErrorKind::TimedOut,
        format!("the peer read nothing for {} ms", timeout.as_millis()),
    )
}

/// Whether `writer` flushed on its first poll (a stream that would wait is flushed later, by
/// [`write_or_flush`]).
async fn flushed_at_once<W: AsyncWrite + Unpin>(writer: &mut W) -> io::Result<bool> {
    std::future::poll_fn(|cx| {
        Poll::Ready(match Pin::new(&mut *writer).poll_flush(cx) {
            Poll::Ready(Ok(())) => Ok(true),
            Poll::Ready(Err(e)) => Err(e),
            Poll::Pending => Ok(false),
        })
    })
    .await
}

/// Writes some of `rest`, or flushes when it is empty; `None` after a flush.
async fn write_or_flush<W: AsyncWrite + Unpin>(
    writer: &mut W,
    rest: &[u8],
) -> io::Result<Option<usize>> {
    if rest.is_empty() {
        writer.flush().await.map(|()| None)
    } else {
        writer.write(rest).await.map(Some)
    }
}

/// The writer's queue of whole messages, with their size in bytes (newlines included).
struct WriteQueue {
    lines: VecDeque<String>,
    bytes: usize,
    unwritten: Arc<Unwritten>,
}

impl WriteQueue {
    fn new(unwritten: Arc<Unwritten>) -> Self {
        Self {
            lines: VecDeque::new(),
            bytes: 0,
            unwritten,
        }
    }

    /// Queues one message; [`Outbound::Close`] (from `RequestContext::close_stream`) means
    /// nothing on a byte stream and is skipped.
    fn push(&mut self, item: Outbound) {
        match item.into_message() {
            Some(line) => {
                self.bytes += line.len() + 1;
                self.lines.push_back(line);
            }
            None => self.unwritten.done(1),
        }
    }

    /// Takes what is already waiting in `rx`, while under `max` bytes.
    fn take(&mut self, rx: &mut Outbox, max: usize) {
        while self.bytes < max {
            match rx.try_recv() {
                Ok(line) => self.push(line),
                Err(_) => break,
            }
        }
    }

    /// Moves whole messages into the empty `batch` (at least one), up to the batch size, and
    /// says how many. A message of a batch or more goes alone and becomes the batch itself,
    /// without a copy.
    fn fill(&mut self, batch: &mut Vec<u8>) -> usize {
        let mut moved = 0;
        while let Some(line) = self.lines.pop_front() {
            let big = line.len() >= WRITE_BATCH;
            if big && !batch.is_empty() {
                self.lines.push_front(line);
                return moved;
            }
            self.bytes -= line.len() + 1;
            moved += 1;
            if big {
                *batch = line.into_bytes();
                batch.push(b'\n');
                return moved;
            }
            batch.extend_from_slice(line.as_bytes());
            batch.push(b'\n');
            if batch.len() >= WRITE_BATCH {
                return moved;
            }
        }
        moved
    }
}

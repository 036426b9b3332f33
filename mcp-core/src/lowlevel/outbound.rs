//! What travels from a handler to the transport on a request's (or a session's) stream, and the
//! sending end it travels through.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
#[cfg(feature = "http")]
use std::sync::Mutex;
#[cfg(feature = "http")]
use std::task::{Context, Poll, Waker};

use tokio::sync::mpsc;

/// One item of an outbound stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Outbound {
    /// An encoded JSON-RPC message: a notification, or a request to the client.
    Message(String),
    /// Close the stream now, the request going on (2025 HTTP: the client reconnects with
    /// `Last-Event-ID`; the standalone `GET` stream of a session that ended). Transports
    /// without such streams ignore it.
    Close,
}

impl Outbound {
    /// The message, unless this is [`Close`](Self::Close).
    pub(crate) fn into_message(self) -> Option<String> {
        match self {
            Self::Message(line) => Some(line),
            Self::Close => None,
        }
    }
}

/// The receiving end of an outbound stream.
pub(crate) type Outbox = mpsc::Receiver<Outbound>;

/// The stream's reader is gone: nothing sent now reaches the client.
#[derive(Debug)]
pub(crate) struct Closed;

/// The sending end of an outbound stream. Cloning is cheap; every clone feeds the same stream.
#[derive(Debug, Clone)]
pub(crate) struct Sink(Kind);

#[derive(Debug, Clone)]
enum Kind {
    /// A stream whose reader exists from the start: a connection's, a session's, a 2025
    /// request's resumable stream. A connection's counts what it sends (see [`Unwritten`]).
    Channel(mpsc::Sender<Outbound>, Option<Arc<Unwritten>>),
    /// A stream opened by its first item (a 2026 HTTP request's: its answer becomes an event
    /// stream only then), so a request that sends nothing costs no channel.
    #[cfg(feature = "http")]
    OnDemand(Arc<OnDemand>),
    /// A stream nobody reads (a notification's; a client that takes no event stream): what is
    /// sent is dropped.
    Discard,
}

impl Sink {
    /// A stream with its reader, holding at most `capacity` items before a sender waits.
    #[cfg_attr(not(feature = "http"), allow(dead_code))] // (a connection's is `counted`)
    pub(crate) fn channel(capacity: usize) -> (Self, Outbox) {
        let (tx, rx) = mpsc::channel(capacity.max(1));
        (Self(Kind::Channel(tx, None)), rx)
    }

    /// A stream with its reader, like [`channel`](Self::channel), that counts each item into
    /// `unwritten` as it enters the channel (the reader counts it out once written).
    pub(crate) fn counted(capacity: usize, unwritten: Arc<Unwritten>) -> (Self, Outbox) {
        let (tx, rx) = mpsc::channel(capacity.max(1));
        (Self(Kind::Channel(tx, Some(unwritten))), rx)
    }

    /// A stream whose channel (of `capacity` items) is made when the first item is sent; the
    /// reader learns of it through the [`Opening`].
    #[cfg(feature = "http")]
    pub(crate) fn on_demand(capacity: usize) -> (Self, Opening) {
        let shared = Arc::new(OnDemand {
            capacity: capacity.max(1),
            state: Mutex::new(State::Unopened(None)),
        });
        (Self(Kind::OnDemand(shared.clone())), Opening(shared))
    }

    /// A stream nobody reads: every send succeeds and drops its item.
    pub(crate) fn discard() -> Self {
        Self(Kind::Discard)
    }

    /// Sends `item`, waiting for room; `Err` when the reader is gone.
    pub(crate) async fn send(&self, item: Outbound) -> Result<(), Closed> {
        match &self.0 {
            Kind::Channel(tx, unwritten) => {
                let room = tx.reserve().await.map_err(|_| Closed)?;
                send_counted(room, unwritten.as_deref(), item);
                Ok(())
            }
            // "Close the stream" means nothing on the 2026 wire: it opens nothing.
            #[cfg(feature = "http")]
            Kind::OnDemand(_) if item == Outbound::Close => Ok(()),
            #[cfg(feature = "http")]
            Kind::OnDemand(shared) => shared.sender()?.send(item).await.map_err(|_| Closed),
            Kind::Discard => {
                dropped(&item);
                Ok(())
            }
        }
    }

    /// Sends `item` if there is room now; `Err` when there is none or the reader is gone.
    pub(crate) fn try_send(&self, item: Outbound) -> Result<(), Closed> {
        match &self.0 {
            Kind::Channel(tx, unwritten) => {
                let room = tx.try_reserve().map_err(|_| Closed)?;
                send_counted(room, unwritten.as_deref(), item);
                Ok(())
            }
            #[cfg(feature = "http")]
            Kind::OnDemand(_) if item == Outbound::Close => Ok(()),
            #[cfg(feature = "http")]
            Kind::OnDemand(shared) => shared.sender()?.try_send(item).map_err(|_| Closed),
            Kind::Discard => {
                dropped(&item);
                Ok(())
            }
        }
    }
}

/// How many items sent through a counted [`Sink`] are not yet written out: counted in as they
/// enter the channel, out once their bytes are written. Zero means nothing sent waits, so an
/// answer may be written straight to the stream without overtaking anything.
#[derive(Debug, Default)]
pub(crate) struct Unwritten(AtomicUsize);

impl Unwritten {
    /// One more item waits.
    pub(crate) fn add(&self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }

    /// `n` items were written (or skipped).
    pub(crate) fn done(&self, n: usize) {
        if n > 0 {
            self.0.fetch_sub(n, Ordering::SeqCst);
        }
    }

    /// Whether nothing waits.
    pub(crate) fn none(&self) -> bool {
        self.0.load(Ordering::SeqCst) == 0
    }
}

/// Sends `item` into the room taken for it, counting it first when the stream counts: nothing
/// can cancel between the two, so the count never misses an item in the channel.
fn send_counted(room: mpsc::Permit<'_, Outbound>, unwritten: Option<&Unwritten>, item: Outbound) {
    if let Some(unwritten) = unwritten {
        unwritten.add();
    }
    room.send(item);
}

fn dropped(item: &Outbound) {
    if let Outbound::Message(_) = item {
        tracing::debug!("message dropped: nobody reads this stream (a notification's, or a client that takes no event stream)");
    }
}

/// The shared state of an on-demand stream.
#[cfg(feature = "http")]
#[derive(Debug)]
struct OnDemand {
    capacity: usize,
    state: Mutex<State>,
}

#[cfg(feature = "http")]
#[derive(Debug)]
enum State {
    /// Nothing sent yet; the reader's waker, once it waits.
    Unopened(Option<Waker>),
    /// Opened by a first item: the sending end, and the receiving end until the reader takes it.
    Open(mpsc::Sender<Outbound>, Option<Outbox>),
    /// The reader went away before anything was sent.
    Gone,
}

#[cfg(feature = "http")]
impl OnDemand {
    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The channel's sending end, made (and the reader woken) on first use.
    fn sender(&self) -> Result<mpsc::Sender<Outbound>, Closed> {
        let mut state = self.state();
        match &mut *state {
            State::Open(tx, _) => Ok(tx.clone()),
            State::Gone => Err(Closed),
            State::Unopened(waker) => {
                let waker = waker.take();
                let (tx, rx) = mpsc::channel(self.capacity);
                *state = State::Open(tx.clone(), Some(rx));
                drop(state);
                if let Some(waker) = waker {
                    waker.wake();
                }
                Ok(tx)
            }
        }
    }
}

/// The reader's side of an on-demand stream: learns when the first item was sent and takes
/// the receiving end. Dropping it before then makes every send fail ([`Closed`]).
#[cfg(feature = "http")]
#[derive(Debug)]
pub(crate) struct Opening(Arc<OnDemand>);

#[cfg(feature = "http")]
impl Opening {
    /// Waits for the first item; then the receiving end (once: afterwards it never resolves).
    pub(crate) async fn opened(&self) -> Outbox {
        std::future::poll_fn(|cx| self.poll_opened(cx)).await
    }

    fn poll_opened(&self, cx: &mut Context<'_>) -> Poll<Outbox> {
        let mut state = self.0.state();
        match &mut *state {
            State::Open(_, rx) => match rx.take() {
                Some(rx) => Poll::Ready(rx),
                None => Poll::Pending,
            },
            State::Unopened(waker) => {
                *waker = Some(cx.waker().clone());
                Poll::Pending
            }
            State::Gone => Poll::Pending,
        }
    }

    /// The receiving end if something was sent (and it was not taken yet).
    pub(crate) fn take(&self) -> Option<Outbox> {
        match &mut *self.0.state() {
            State::Open(_, rx) => rx.take(),
            _ => None,
        }
    }
}

#[cfg(feature = "http")]
impl Drop for Opening {
    fn drop(&mut self) {
        let mut state = self.0.state();
        match &mut *state {
            State::Unopened(_) => *state = State::Gone,
            // A receiving end nobody took is dropped with the reader: sends fail from now on.
            State::Open(_, rx) => drop(rx.take()),
            State::Gone => {}
        }
    }
}

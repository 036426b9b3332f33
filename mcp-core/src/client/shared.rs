//! What the reader task and the request paths share: what era negotiation settled, the
//! pending requests, progress callbacks, notification handlers, input callbacks, the cache.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};

use tokio::sync::Notify;

use super::cache::ResultCache;
use super::input::InputHandlers;
use super::notify::NotificationHandlers;
use super::options::ProgressCallback;
use crate::era::Era;
use crate::peer::PendingRequests;
use crate::types::{DiscoverResult, InitializeResult};

/// What era negotiation settled.
#[derive(Debug, Clone)]
pub(crate) struct Negotiated {
    pub(crate) era: Era,
    pub(crate) version: Arc<str>,
    pub(crate) initialize: Option<Arc<InitializeResult>>,
    pub(crate) discover: Option<Arc<DiscoverResult>>,
}

/// What the reader task and the request paths share.
pub(crate) struct Shared {
    pub(crate) pending: Arc<PendingRequests>,
    pub(crate) negotiated: RwLock<Negotiated>,
    pub(super) progress: Mutex<HashMap<String, (ProgressCallback, Arc<Notify>)>>,
    pub(super) handlers: NotificationHandlers,
    pub(super) input: InputHandlers,
    pub(super) cache: Option<ResultCache>,
}

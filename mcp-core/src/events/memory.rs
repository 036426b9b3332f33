//! [`MemoryBus`]: events within one process.

use tokio::sync::broadcast;

use super::{Event, EventBus, RECEIVER_CAPACITY};
use crate::error::McpError;

/// The default bus: a broadcast channel inside this process.
///
/// ```
/// use modelctx_core::events::{Event, EventBus, MemoryBus};
///
/// let bus = MemoryBus::new();
/// let mut rx = bus.subscribe();
/// bus.publish(Event::ToolsChanged).unwrap();
/// assert_eq!(rx.try_recv().unwrap(), Event::ToolsChanged);
/// ```
#[derive(Debug, Clone)]
pub struct MemoryBus {
    tx: broadcast::Sender<Event>,
}

impl Default for MemoryBus {
    fn default() -> Self {
        Self::new()
    }
}

impl MemoryBus {
    /// A bus with no subscribers yet.
    pub fn new() -> Self {
        Self {
            tx: broadcast::channel(RECEIVER_CAPACITY).0,
        }
    }
}

impl EventBus for MemoryBus {
    fn publish(&self, event: Event) -> Result<(), McpError> {
        // No receiver is not an error: nobody is listening yet.
        let _ = self.tx.send(event);
        Ok(())
    }

    fn subscribe(&self) -> broadcast::Receiver<Event> {
        self.tx.subscribe()
    }
}

//! Notification fan-out with bounded per-connection queues: the slow-client policy, once for
//! every transport. A connection that stops reading is dropped (with a logged reason) rather
//! than allowed to block anyone else.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};

use planhost_protocol::ServerNotification;
use tokio::sync::mpsc::{self, error::TrySendError};
use tokio_util::sync::CancellationToken;

/// Notifications a connection may have queued before it counts as not reading.
pub const CONNECTION_QUEUE: usize = 4096;

struct Subscriber {
    queue: mpsc::Sender<ServerNotification>,
    kill: CancellationToken,
    /// Whether it asked for `tools.activity`.
    tool_activity: bool,
}

/// The connected clients.
#[derive(Default)]
pub(crate) struct Fanout {
    subscribers: Mutex<HashMap<u64, Subscriber>>,
}

impl Fanout {
    fn lock(&self) -> MutexGuard<'_, HashMap<u64, Subscriber>> {
        self.subscribers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Registers a connection for broadcasts.
    pub(crate) fn add(
        &self,
        id: u64,
        queue: mpsc::Sender<ServerNotification>,
        kill: CancellationToken,
        tool_activity: bool,
    ) {
        self.lock().insert(
            id,
            Subscriber {
                queue,
                kill,
                tool_activity,
            },
        );
    }

    /// Forgets a connection.
    pub(crate) fn remove(&self, id: u64) {
        self.lock().remove(&id);
    }

    /// Sends `note` to every connection, dropping any whose queue is full.
    pub(crate) fn send_all(&self, note: &ServerNotification) {
        self.send_where(note, |_| true);
    }

    /// Sends `note` to the connections that asked for tool activity.
    pub(crate) fn send_tool_activity(&self, note: &ServerNotification) {
        self.send_where(note, |sub| sub.tool_activity);
    }

    fn send_where(&self, note: &ServerNotification, wants: impl Fn(&Subscriber) -> bool) {
        self.lock().retain(|id, sub| {
            if !wants(sub) {
                return true;
            }
            match sub.queue.try_send(note.clone()) {
                Ok(()) => true,
                Err(TrySendError::Full(_)) => {
                    tracing::warn!(
                        connection = id,
                        queue = CONNECTION_QUEUE,
                        "dropping a connection that stopped reading"
                    );
                    sub.kill.cancel();
                    false
                }
                Err(TrySendError::Closed(_)) => false,
            }
        });
    }
}

//! Notification fan-out with bounded per-client queues. A client that stops reading is dropped
//! (with a logged reason) rather than allowed to block anyone else.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::mpsc::{self, error::TrySendError};
use tokio_util::sync::CancellationToken;

/// Lines a client may have queued before it counts as not reading.
pub const CLIENT_QUEUE: usize = 4096;

struct Client {
    outbound: mpsc::Sender<Arc<str>>,
    kill: CancellationToken,
}

/// The connected clients.
#[derive(Default)]
pub struct Broadcaster {
    clients: Mutex<HashMap<u64, Client>>,
}

impl Broadcaster {
    /// Registers a connection for notifications.
    pub fn add(&self, id: u64, outbound: mpsc::Sender<Arc<str>>, kill: CancellationToken) {
        self.lock().insert(id, Client { outbound, kill });
    }

    /// Forgets a connection.
    pub fn remove(&self, id: u64) {
        self.lock().remove(&id);
    }

    /// Sends `line` to every client, dropping any whose queue is full.
    pub fn send_all(&self, line: &Arc<str>) {
        let mut clients = self.lock();
        clients.retain(
            |id, client| match client.outbound.try_send(Arc::clone(line)) {
                Ok(()) => true,
                Err(TrySendError::Full(_)) => {
                    tracing::warn!(
                        client = id,
                        queue = CLIENT_QUEUE,
                        "dropping a client that stopped reading"
                    );
                    client.kill.cancel();
                    false
                }
                Err(TrySendError::Closed(_)) => false,
            },
        );
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Client>> {
        self.clients.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

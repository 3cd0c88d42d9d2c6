//! Notification fan-out with bounded per-connection queues: the slow-client policy, once for
//! every transport. A connection that stops reading is dropped (with a logged reason) rather
//! than allowed to block anyone else.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
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
    /// How many of them asked for `tools.activity`: with none, a tool call builds nothing.
    tool_watchers: AtomicUsize,
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
        let mut subscribers = self.lock();
        if tool_activity {
            self.tool_watchers.fetch_add(1, Ordering::Relaxed);
        }
        let old = subscribers.insert(
            id,
            Subscriber {
                queue,
                kill,
                tool_activity,
            },
        );
        self.forget(old.as_ref());
    }

    /// Forgets a connection.
    pub(crate) fn remove(&self, id: u64) {
        let old = self.lock().remove(&id);
        self.forget(old.as_ref());
    }

    fn forget(&self, gone: Option<&Subscriber>) {
        if gone.is_some_and(|s| s.tool_activity) {
            self.tool_watchers.fetch_sub(1, Ordering::Relaxed);
        }
    }

    /// Whether any connection asked for `tools.activity`.
    pub(crate) fn has_tool_watchers(&self) -> bool {
        self.tool_watchers.load(Ordering::Relaxed) > 0
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
            let keep = match sub.queue.try_send(note.clone()) {
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
            };
            if !keep {
                self.forget(Some(sub));
            }
            keep
        });
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn the_tool_watcher_count_follows_the_connections_that_asked() {
        let fanout = Fanout::default();
        let (plain, _plain_rx) = mpsc::channel(4);
        fanout.add(1, plain, CancellationToken::new(), false);
        assert!(!fanout.has_tool_watchers());
        let (watcher, watcher_rx) = mpsc::channel(4);
        fanout.add(2, watcher, CancellationToken::new(), true);
        assert!(fanout.has_tool_watchers());
        fanout.remove(2);
        assert!(!fanout.has_tool_watchers());
        // One that went away unannounced is forgotten at the next send.
        drop(watcher_rx);
        let (again, again_rx) = mpsc::channel(4);
        fanout.add(3, again, CancellationToken::new(), true);
        drop(again_rx);
        assert!(fanout.has_tool_watchers());
        let note = ServerNotification::ToolActivity(planhost_protocol::ToolActivity {
            session_id: "s".into(),
            turn_id: "t".into(),
            tool_call_id: "c".into(),
            tool_name: "Read".into(),
            state: None,
            at: planhost_core::Timestamp(0),
        });
        fanout.send_tool_activity(&note);
        assert!(!fanout.has_tool_watchers());
    }
}

//! Notification fan-out with bounded per-connection queues: the slow-client policy, once for
//! every transport. A connection that stops reading is dropped (with a logged reason) rather
//! than allowed to block anyone else.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use planhost_core::SessionId;
use planhost_protocol::{EventScope, ServerNotification};
use tokio::sync::mpsc::{self, error::TrySendError};
use tokio_util::sync::CancellationToken;

/// Notifications a connection may have queued before it counts as not reading.
pub const CONNECTION_QUEUE: usize = 4096;

struct Subscriber {
    queue: mpsc::Sender<ServerNotification>,
    kill: CancellationToken,
    /// Whether it asked for `tools.activity`.
    tool_activity: bool,
    /// `own`: the sessions it opened (its entries in `Subscribers::watching`).
    own: Option<HashSet<SessionId>>,
}

#[derive(Default)]
struct Subscribers {
    by_id: HashMap<u64, Subscriber>,
    /// The connections that get every session's notifications.
    all: HashSet<u64>,
    /// For each session, the `own` connections that opened it.
    watching: HashMap<SessionId, HashSet<u64>>,
}

impl Subscribers {
    /// Removes `id` everywhere; whether it was a tool watcher.
    fn remove(&mut self, id: u64) -> Option<Subscriber> {
        let gone = self.by_id.remove(&id)?;
        self.all.remove(&id);
        for session in gone.own.iter().flatten() {
            if let Some(ids) = self.watching.get_mut(session) {
                ids.remove(&id);
                if ids.is_empty() {
                    self.watching.remove(session);
                }
            }
        }
        Some(gone)
    }
}

/// The connected clients. A session's notification reaches the `all` connections and the `own`
/// connections that opened that session, and costs nothing for the others (no clone, no queue,
/// no wake-up of their writers).
#[derive(Default)]
pub(crate) struct Fanout {
    subscribers: Mutex<Subscribers>,
    /// How many of them asked for `tools.activity`: with none, a tool call builds nothing.
    tool_watchers: AtomicUsize,
}

impl Fanout {
    fn lock(&self) -> MutexGuard<'_, Subscribers> {
        self.subscribers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Registers a connection.
    pub(crate) fn add(
        &self,
        id: u64,
        queue: mpsc::Sender<ServerNotification>,
        kill: CancellationToken,
        tool_activity: bool,
        scope: EventScope,
    ) {
        let mut subscribers = self.lock();
        let old = subscribers.remove(id);
        self.forget(old.as_ref());
        if tool_activity {
            self.tool_watchers.fetch_add(1, Ordering::Relaxed);
        }
        let own = match scope {
            EventScope::All => {
                subscribers.all.insert(id);
                None
            }
            EventScope::Own => Some(HashSet::new()),
        };
        subscribers.by_id.insert(
            id,
            Subscriber {
                queue,
                kill,
                tool_activity,
                own,
            },
        );
    }

    /// The connection `id` opened `session`: an `own` connection watches it from now on.
    pub(crate) fn opened(&self, id: u64, session: &SessionId) {
        let mut subscribers = self.lock();
        let Some(sub) = subscribers.by_id.get_mut(&id) else {
            return;
        };
        let Some(own) = sub.own.as_mut() else {
            return;
        };
        if own.insert(session.clone()) {
            subscribers
                .watching
                .entry(session.clone())
                .or_default()
                .insert(id);
        }
    }

    /// Forgets a connection.
    pub(crate) fn remove(&self, id: u64) {
        let old = self.lock().remove(id);
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
        let mut subscribers = self.lock();
        let ids: Vec<u64> = subscribers.by_id.keys().copied().collect();
        self.send_to(&mut subscribers, note, ids, |_| true);
    }

    /// Sends a notification about `session` to the connections that watch it.
    pub(crate) fn send_session(&self, session: &SessionId, note: &ServerNotification) {
        let mut subscribers = self.lock();
        let ids = watchers(&subscribers, session);
        self.send_to(&mut subscribers, note, ids, |_| true);
    }

    /// Sends `note` (about `session`) to the connections that asked for tool activity and
    /// watch that session.
    pub(crate) fn send_tool_activity(&self, session: &SessionId, note: &ServerNotification) {
        let mut subscribers = self.lock();
        let ids = watchers(&subscribers, session);
        self.send_to(&mut subscribers, note, ids, |sub| sub.tool_activity);
    }

    fn send_to(
        &self,
        subscribers: &mut Subscribers,
        note: &ServerNotification,
        ids: Vec<u64>,
        wants: impl Fn(&Subscriber) -> bool,
    ) {
        let mut dead = Vec::new();
        for id in ids {
            let Some(sub) = subscribers.by_id.get(&id) else {
                continue;
            };
            if !wants(sub) {
                continue;
            }
            match sub.queue.try_send(note.clone()) {
                Ok(()) => {}
                Err(TrySendError::Full(_)) => {
                    tracing::warn!(
                        connection = id,
                        queue = CONNECTION_QUEUE,
                        "dropping a connection that stopped reading"
                    );
                    sub.kill.cancel();
                    dead.push(id);
                }
                Err(TrySendError::Closed(_)) => dead.push(id),
            }
        }
        for id in dead {
            let gone = subscribers.remove(id);
            self.forget(gone.as_ref());
        }
    }
}

/// The `all` connections and the `own` ones that opened `session`.
fn watchers(subscribers: &Subscribers, session: &SessionId) -> Vec<u64> {
    let mut ids: Vec<u64> = subscribers.all.iter().copied().collect();
    if let Some(own) = subscribers.watching.get(session) {
        ids.extend(own.iter().copied());
    }
    ids
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn the_tool_watcher_count_follows_the_connections_that_asked() {
        let fanout = Fanout::default();
        let (plain, _plain_rx) = mpsc::channel(4);
        fanout.add(1, plain, CancellationToken::new(), false, EventScope::All);
        assert!(!fanout.has_tool_watchers());
        let (watcher, watcher_rx) = mpsc::channel(4);
        fanout.add(2, watcher, CancellationToken::new(), true, EventScope::All);
        assert!(fanout.has_tool_watchers());
        fanout.remove(2);
        assert!(!fanout.has_tool_watchers());
        // One that went away unannounced is forgotten at the next send.
        drop(watcher_rx);
        let (again, again_rx) = mpsc::channel(4);
        fanout.add(3, again, CancellationToken::new(), true, EventScope::All);
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
        fanout.send_tool_activity(&"s".into(), &note);
        assert!(!fanout.has_tool_watchers());
    }
}

//! The policy view of each session, cached between state changes so `tools.authorize` does not
//! wait on the host thread. Correctness rests on two rules:
//!
//! - every committed change that can alter a decision (mode, permission mode, preset, turns,
//!   settings) invalidates the session's entry on the host thread *before* the change's caller
//!   gets its reply (the actor publishes events before replying);
//! - an entry read from the store is inserted only if no invalidation happened since it was
//!   read (a generation check), so a read racing a change can never resurrect stale state.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};

use planhost_core::{PolicyView, SessionId, TurnId};

/// A cached entry: the view a tool call is held to, and the session's running turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    pub(crate) view: PolicyView,
    /// The agent the session serves: whose catalog names its tools.
    pub(crate) agent: planhost_core::Agent,
    pub(crate) active_turn: Option<TurnId>,
    /// The dialect a shell command of the running turn is written in: its pinned shell's, else
    /// this platform's first shell's.
    pub(crate) dialect: planhost_core::Dialect,
    /// The session's workspace root.
    pub(crate) workspace_root: std::sync::Arc<str>,
}

impl Entry {
    /// The view of the running turn: its pin, never looser than the durable mode (core's rule).
    pub(crate) fn from_snapshot(snap: planhost_store::PolicySnapshot) -> Self {
        Entry {
            view: planhost_core::turn_policy(snap.live, snap.turn_pin),
            agent: snap.agent,
            workspace_root: snap.workspace_root.into(),
            active_turn: snap.active_turn,
            dialect: snap.turn_dialect.unwrap_or_else(|| {
                planhost_core::Platform::current()
                    .shell_ids()
                    .first()
                    .map_or(planhost_core::Dialect::Posix, |id| id.dialect())
            }),
        }
    }
}

#[derive(Default)]
struct Inner {
    generation: u64,
    entries: HashMap<SessionId, Entry>,
}

/// The cache.
#[derive(Default)]
pub(crate) struct PolicyCache {
    inner: Mutex<Inner>,
}

impl PolicyCache {
    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The cached entry, if still valid.
    pub(crate) fn get(&self, session_id: &SessionId) -> Option<Entry> {
        self.lock().entries.get(session_id).cloned()
    }

    /// The current generation; read it on the host thread together with the store.
    pub(crate) fn generation(&self) -> u64 {
        self.lock().generation
    }

    /// Inserts an entry read at `generation`, unless something was invalidated since.
    pub(crate) fn insert_if_current(&self, session_id: &SessionId, entry: Entry, generation: u64) {
        let mut inner = self.lock();
        if inner.generation == generation {
            inner.entries.insert(session_id.clone(), entry);
        }
    }

    /// A session changed.
    pub(crate) fn invalidate(&self, session_id: &SessionId) {
        let mut inner = self.lock();
        inner.generation += 1;
        inner.entries.remove(session_id);
    }

    /// Host-wide defaults changed.
    pub(crate) fn clear(&self) {
        let mut inner = self.lock();
        inner.generation += 1;
        inner.entries.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use planhost_core::{EffectivePermission, Mode, PolicyPreset};

    fn entry(mode: Mode) -> Entry {
        Entry {
            view: PolicyView {
                preset: PolicyPreset::Host,
                mode,
                permission: EffectivePermission::Ask,
            },
            agent: planhost_core::Agent::Pi,
            active_turn: Some("t".into()),
            dialect: planhost_core::Dialect::Posix,
            workspace_root: "/w".into(),
        }
    }

    #[test]
    fn a_read_that_raced_an_invalidation_is_not_cached() {
        let cache = PolicyCache::default();
        let s = SessionId::from("s");
        let read_at = cache.generation();
        cache.invalidate(&s);
        cache.insert_if_current(&s, entry(Mode::Agent), read_at);
        assert_eq!(cache.get(&s), None);
        let now = cache.generation();
        cache.insert_if_current(&s, entry(Mode::Plan), now);
        assert_eq!(cache.get(&s), Some(entry(Mode::Plan)));
        cache.clear();
        assert_eq!(cache.get(&s), None);
    }
}

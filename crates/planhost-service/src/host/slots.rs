//! Who holds the host's connection slots. Every transport's connections count against one cap;
//! a process's against its own bound; and the last slots below the cap go only to a process's
//! first connection. One process cannot reach the cap, and while any number of processes that
//! already hold connections flood the socket, a new client (pi's extension, a hook, the CLI:
//! each a process with no connection yet) still gets a slot.
//!
//! A process is its pid and its start time (`SO_PEERCRED` names the pid at `connect(2)`, procfs
//! its start), so a pid the kernel hands to a new process is a new process here too.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use planhost_core::ErrorCode;

use super::Limits;
use crate::Peer;

/// How often refusals are logged at most (with the count since the last line): a flood is
/// refused thousands of times a second and must not fill the log.
const REFUSAL_LOG_EVERY: Duration = Duration::from_secs(10);

/// A process, as the host tells processes apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct ProcessKey {
    pid: i32,
    /// Its start time in clock ticks since boot; 0 where it could not be read (the process is
    /// gone already, the host had no descriptor left to read procfs with, or this is not
    /// Linux): then the pid alone names it, apart from its connections counted with a start.
    start: u64,
}

impl ProcessKey {
    /// The process running as `pid` now.
    fn of(pid: i32) -> Self {
        #[cfg(target_os = "linux")]
        let start = planhost_exec::lineage::ProcessIdentity::of(pid).map_or(0, |p| p.start);
        #[cfg(not(target_os = "linux"))]
        let start = 0;
        Self { pid, start }
    }

    #[cfg(test)]
    pub(crate) fn test(pid: i32) -> Self {
        Self { pid, start: 1 }
    }
}

/// Whom a connection is charged to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Owner {
    /// A process the kernel named.
    Process(ProcessKey),
    /// No process to charge: the embedding app's own stream or its stdio client, or a socket
    /// peer the kernel did not name. Such a connection cannot be told to be a new client, so it
    /// never takes the reserve.
    Unnamed,
}

impl Owner {
    /// Whom a connection from `peer` is charged to (reads procfs for a process's start time).
    pub(crate) fn of(peer: Peer) -> Self {
        match peer {
            Peer::Embedded | Peer::Process(None) => Owner::Unnamed,
            Peer::Process(Some(pid)) | Peer::WebClient(pid) => Owner::Process(ProcessKey::of(pid)),
        }
    }
}

/// Why a connection was not given a slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// Every slot is taken.
    Full,
    /// Only the reserve is left, and this owner already holds connections (or is unnamed).
    Reserved {
        /// The owner's pid, when it is a process.
        pid: Option<i32>,
        /// What it holds.
        held: usize,
    },
    /// The process holds its bound.
    ProcessFull {
        /// Its pid.
        pid: i32,
    },
}

impl Refusal {
    /// The stable code the refused client is told.
    pub(crate) fn code(self) -> ErrorCode {
        match self {
            Refusal::Full | Refusal::Reserved { .. } => ErrorCode::TooManyConnections,
            Refusal::ProcessFull { .. } => ErrorCode::TooManyProcessConnections,
        }
    }

    /// What happened and what to do, with the limits that applied.
    pub(crate) fn message(self, limits: &Limits) -> String {
        match self {
            Refusal::Full => format!(
                "planhost serves {} connections, its limit; this one is closed: close another \
                 client, or try again shortly",
                limits.max_connections
            ),
            Refusal::Reserved { pid, held } => {
                let who = pid.map_or_else(
                    || "this connection's peer is not a process planhost can name".to_owned(),
                    |pid| format!("this process (pid {pid}) already holds {held}"),
                );
                format!(
                    "planhost serves all but the last {} of its {} connections, which it keeps \
                     for processes that hold none yet, and {who}; this one is closed: close \
                     another client, or try again shortly",
                    limits.max_connections - shared(limits),
                    limits.max_connections
                )
            }
            Refusal::ProcessFull { pid } => format!(
                "this process (pid {pid}) already holds {} connections to planhost, the limit \
                 for one process; this one is closed and the others go on: close one of them \
                 (a client needs one, or a few; a process that opens connections and never \
                 closes them leaks them)",
                limits.max_connections_per_process
            ),
        }
    }
}

/// The slots of one host.
#[derive(Debug)]
pub(crate) struct Slots {
    limits: Limits,
    held: Mutex<Held>,
}

#[derive(Debug, Default)]
struct Held {
    total: usize,
    /// What each process holds; a process that holds none has no entry.
    by_process: HashMap<ProcessKey, usize>,
    /// Refusals since the last log line, and when that was.
    unlogged: u64,
    logged_at: Option<Instant>,
}

impl Slots {
    pub(crate) fn new(limits: Limits) -> Arc<Self> {
        Arc::new(Self {
            limits,
            held: Mutex::new(Held::default()),
        })
    }

    /// A slot for `owner`, or why not.
    pub(crate) fn admit(self: &Arc<Self>, owner: Owner) -> Result<Slot, Refusal> {
        let mut held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        let decided = decide(&self.limits, &held, owner);
        match decided {
            Ok(()) => {
                held.total += 1;
                if let Owner::Process(key) = owner {
                    *held.by_process.entry(key).or_default() += 1;
                }
                Ok(Slot {
                    slots: Arc::clone(self),
                    owner,
                })
            }
            Err(refusal) => {
                held.unlogged += 1;
                let now = Instant::now();
                if held
                    .logged_at
                    .is_none_or(|at| now.duration_since(at) >= REFUSAL_LOG_EVERY)
                {
                    tracing::warn!(
                        code = %refusal.code(),
                        ?owner,
                        refused = held.unlogged,
                        connections = held.total,
                        "connection refused (the count is of refusals since the last such line)"
                    );
                    held.unlogged = 0;
                    held.logged_at = Some(now);
                }
                Err(refusal)
            }
        }
    }

    fn release(&self, owner: Owner) {
        let mut held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        held.total = held.total.saturating_sub(1);
        if let Owner::Process(key) = owner
            && let Some(count) = held.by_process.get_mut(&key)
        {
            *count -= 1;
            if *count == 0 {
                held.by_process.remove(&key);
            }
        }
    }

    /// Connections held, in all and by `owner`.
    #[cfg(test)]
    pub(crate) fn held(&self, owner: Owner) -> (usize, usize) {
        let held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        let mine = match owner {
            Owner::Process(key) => held.by_process.get(&key).copied().unwrap_or(0),
            Owner::Unnamed => 0,
        };
        (held.total, mine)
    }
}

/// The rule: never past the cap; never a process past its bound; and into the last
/// `reserved_connections` slots only a process's first connection.
fn decide(limits: &Limits, held: &Held, owner: Owner) -> Result<(), Refusal> {
    if held.total >= limits.max_connections {
        return Err(Refusal::Full);
    }
    let shared = shared(limits);
    match owner {
        Owner::Process(key) => {
            let mine = held.by_process.get(&key).copied().unwrap_or(0);
            if mine >= limits.max_connections_per_process {
                return Err(Refusal::ProcessFull { pid: key.pid });
            }
            if mine > 0 && held.total >= shared {
                return Err(Refusal::Reserved {
                    pid: Some(key.pid),
                    held: mine,
                });
            }
        }
        Owner::Unnamed => {
            if held.total >= shared {
                return Err(Refusal::Reserved { pid: None, held: 0 });
            }
        }
    }
    Ok(())
}

/// The slots below the reserve. The reserve is at most half the cap, so that a host configured
/// with few connections still serves the streams its embedder cannot name.
fn shared(limits: &Limits) -> usize {
    let reserved = limits.reserved_connections.min(limits.max_connections / 2);
    limits.max_connections - reserved
}

/// One served connection's slot; given back when dropped.
#[derive(Debug)]
pub(crate) struct Slot {
    slots: Arc<Slots>,
    owner: Owner,
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.slots.release(self.owner);
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn limits() -> Limits {
        Limits {
            max_connections: 12,
            reserved_connections: 4,
            max_connections_per_process: 5,
            ..Limits::default()
        }
    }

    fn process(pid: i32) -> Owner {
        Owner::Process(ProcessKey::test(pid))
    }

    #[test]
    fn one_process_stops_at_its_bound_and_others_go_on() {
        let slots = Slots::new(limits());
        let mine: Vec<Slot> = (0..5).map(|_| slots.admit(process(1)).unwrap()).collect();
        assert_eq!(
            slots.admit(process(1)).unwrap_err(),
            Refusal::ProcessFull { pid: 1 }
        );
        let other = slots.admit(process(2)).unwrap();
        drop(mine);
        assert_eq!(slots.held(process(1)), (1, 0));
        drop(other);
        assert_eq!(slots.held(process(2)), (0, 0));
        // The same pid, started again, is another process.
        let again = Owner::Process(ProcessKey { pid: 1, start: 2 });
        let _first: Vec<Slot> = (0..5).map(|_| slots.admit(process(1)).unwrap()).collect();
        assert!(slots.admit(again).is_ok());
    }

    #[test]
    fn the_reserve_goes_only_to_a_processs_first_connection() {
        let slots = Slots::new(limits());
        // Two floods fill what is shared (8 of 12).
        let _a: Vec<Slot> = (0..5).map(|_| slots.admit(process(1)).unwrap()).collect();
        let _b: Vec<Slot> = (0..3).map(|_| slots.admit(process(2)).unwrap()).collect();
        assert_eq!(
            slots.admit(process(2)).unwrap_err(),
            Refusal::Reserved {
                pid: Some(2),
                held: 3
            }
        );
        assert_eq!(
            slots.admit(Owner::Unnamed).unwrap_err(),
            Refusal::Reserved { pid: None, held: 0 }
        );
        // New clients still get in, one connection each, until the cap.
        let fresh: Vec<Slot> = (10..14).map(|p| slots.admit(process(p)).unwrap()).collect();
        assert_eq!(
            slots.admit(process(10)).unwrap_err().code(),
            ErrorCode::TooManyConnections
        );
        assert_eq!(slots.admit(process(20)).unwrap_err(), Refusal::Full);
        drop(fresh);
        assert!(slots.admit(process(20)).is_ok());
    }

    #[derive(Debug, Clone)]
    enum Step {
        Connect(i32),
        Unnamed,
        Close(prop::sample::Index),
    }

    fn step() -> impl Strategy<Value = Step> {
        prop_oneof![
            4 => (1..8_i32).prop_map(Step::Connect),
            1 => Just(Step::Unnamed),
            3 => any::<prop::sample::Index>().prop_map(Step::Close),
        ]
    }

    proptest! {
        /// Whatever processes connect and close, in any order, each connection is admitted
        /// exactly when the documented rule says (below the cap; a process below its bound, and
        /// past the shared slots only with its first connection; an unnamed peer only within
        /// the shared slots), and the counts agree with what is open.
        #[test]
        fn admission_follows_the_rule_whatever_the_order(
            steps in prop::collection::vec(step(), 1..300)
        ) {
            let limits = limits();
            let slots = Slots::new(limits);
            let mut open: Vec<(Owner, Slot)> = Vec::new();
            for step in steps {
                let owner = match step {
                    Step::Connect(pid) => process(pid),
                    Step::Unnamed => Owner::Unnamed,
                    Step::Close(index) => {
                        if !open.is_empty() {
                            open.swap_remove(index.index(open.len()));
                        }
                        continue;
                    }
                };
                let total = open.len();
                let shared = limits.max_connections - limits.reserved_connections;
                let mine = open.iter().filter(|(o, _)| *o == owner).count();
                let expected = total < limits.max_connections
                    && match owner {
                        Owner::Process(_) => {
                            mine < limits.max_connections_per_process
                                && (mine == 0 || total < shared)
                        }
                        Owner::Unnamed => total < shared,
                    };
                match slots.admit(owner) {
                    Ok(slot) => {
                        prop_assert!(expected, "admitted {owner:?} holding {mine} of {total}");
                        open.push((owner, slot));
                    }
                    Err(refusal) => {
                        prop_assert!(!expected, "refused {owner:?} holding {mine} of {total}: {refusal:?}");
                    }
                }
                prop_assert_eq!(slots.held(owner), (open.len(), match owner {
                    Owner::Process(_) => open.iter().filter(|(o, _)| *o == owner).count(),
                    Owner::Unnamed => 0,
                }));
            }
        }
    }
}

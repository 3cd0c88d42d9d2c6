//! Whether a process descends from an agent: the proof behind "no face a model drives is an
//! approver" (DESIGN decisions 9 and 12). Roles are declared at `initialize`; this reads what
//! the kernel says about the process at the other end instead.
//!
//! A process descends from an agent when it, or a process on its parent chain, is
//! - a process of one of this host's runs: it carries a run marker that names this host, or it
//!   sits in one of this host's run cgroups;
//! - or the chain passes through this host itself: the host is a child subreaper whose only
//!   children are run shells and its watchdog, so a process below it is a run's (an orphan that
//!   cleared its environment and left its cgroup is re-parented to the host, not to init);
//! - or a *strict* ancestor is an agent root: a process that holds (or held, while it lives) an
//!   `agent` connection on this host. The root itself is not refused (pi is the person's dialog
//!   as well as the agent); its children are.
//!
//! What cannot be read is decided per case (see [`agent_lineage`]); the answer is a [`Why`]
//! that says which process gave it away.

use super::leftovers::HostIdentity;
pub use super::tcp_peer::tcp_peers;
use super::{cgroup, procfs};
use crate::runner::RUN_MARKER_VAR;

/// The longest parent chain walked; a longer one (a loop that cannot exist, or a reading that
/// went wrong) is not trusted.
const MAX_DEPTH: usize = 4_096;

/// One process by pid and start time (clock ticks since boot), which together no other process
/// shares: a pid alone may be reused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ProcessIdentity {
    /// The pid.
    pub pid: i32,
    /// Its start time in clock ticks since boot.
    pub start: u64,
}

impl ProcessIdentity {
    /// The process running as `pid` now; `None` when there is none (or it cannot be read).
    pub fn of(pid: i32) -> Option<Self> {
        procfs::read_stat(pid).map(|st| Self {
            pid,
            start: st.start,
        })
    }

    /// Whether this very process is still running (not a later one with its pid).
    pub fn alive(self) -> bool {
        procfs::read_stat(self.pid).is_some_and(|st| st.start == self.start && !st.is_dead())
    }
}

/// Why a process counts as descending from an agent: the process on its chain that gave it
/// away (the process itself or an ancestor), and how.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Why {
    /// `pid` carries a run marker that names this host.
    RunMarker {
        /// The marked process.
        pid: i32,
    },
    /// `pid` sits in one of this host's run cgroups.
    RunCgroup {
        /// The member.
        pid: i32,
    },
    /// `pid` is a child of this host: a run's shell, or an orphan of a run re-parented to the
    /// host (a child subreaper).
    UnderHost {
        /// The host's child on the chain.
        pid: i32,
    },
    /// `pid`, a strict ancestor, holds (or held) an agent connection on this host.
    AgentRoot {
        /// The agent process.
        pid: i32,
    },
    /// `pid` could not be read, so where the process runs is unknown.
    Unknown {
        /// The process that could not be read.
        pid: i32,
    },
}

impl Why {
    /// The process on the chain that gave the answer.
    pub fn pid(self) -> i32 {
        match self {
            Why::RunMarker { pid }
            | Why::RunCgroup { pid }
            | Why::UnderHost { pid }
            | Why::AgentRoot { pid }
            | Why::Unknown { pid } => pid,
        }
    }

    /// A short stable name for logs and audit rows.
    pub fn as_str(self) -> &'static str {
        match self {
            Why::RunMarker { .. } => "run_marker",
            Why::RunCgroup { .. } => "run_cgroup",
            Why::UnderHost { .. } => "under_host",
            Why::AgentRoot { .. } => "agent_root",
            Why::Unknown { .. } => "unknown",
        }
    }
}

impl std::fmt::Display for Why {
    /// `pid 1234, a run of this host`: what goes inside the refusal's parentheses.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let pid = self.pid();
        match self {
            Why::RunMarker { .. } => {
                write!(f, "pid {pid}, a run of this host: it carries its marker")
            }
            Why::RunCgroup { .. } => {
                write!(f, "pid {pid}, a run of this host: it sits in its cgroup")
            }
            Why::UnderHost { .. } => {
                write!(f, "pid {pid}, a run of this host: a child of the host")
            }
            Why::AgentRoot { .. } => write!(f, "pid {pid}, an agent connected to this host"),
            Why::Unknown { .. } => write!(
                f,
                "pid {pid} cannot be read from /proc, so whether it runs under an agent is unknown"
            ),
        }
    }
}

/// Whether `pid` descends from an agent of this host (see the module documentation), and why;
/// `None` when it provably does not.
///
/// What cannot be read, decided per case:
/// - `pid` itself unreadable (it exited, or it is hidden from us): [`Why::Unknown`]. The caller
///   asked about a process it has a connection from; not knowing it must not pass.
/// - an ancestor that vanished while we walked: its child has been re-parented meanwhile, so the
///   child is read again and the walk follows the new parent (the host, if it was a run's).
/// - an ancestor that cannot be read while its child still names it: `/proc` hides it (another
///   user's process under `hidepid`; without `hidepid` every `stat` is readable). The walk stops
///   there and the chain above it counts as no agent's. Failing closed here would refuse the CLI
///   a person runs over ssh on a `hidepid` machine (its chain reaches root's sshd), and a run can
///   only put another user's process between itself and the caller through a setuid program
///   (sudo, su), i.e. with privileges that already own the host's database. The run cgroup, read
///   for the caller and every ancestor below that point, still holds across such a boundary.
/// - an environment that cannot be read (another user's, or a process that made itself
///   non-dumpable, which a run could do to hide its marker): no marker evidence for that
///   process; its cgroup and its place under the host or an agent root still count.
/// - a chain longer than [`MAX_DEPTH`]: [`Why::Unknown`].
pub fn agent_lineage(pid: i32, roots: &[ProcessIdentity]) -> Option<Why> {
    let host = HostIdentity::current();
    let Some(mut st) = procfs::read_stat(pid) else {
        return Some(Why::Unknown { pid });
    };
    let mut strict = false;
    for _ in 0..MAX_DEPTH {
        let me = ProcessIdentity {
            pid: st.pid,
            start: st.start,
        };
        if strict && roots.contains(&me) {
            return Some(Why::AgentRoot { pid: st.pid });
        }
        if carries_our_marker(st.pid, host) {
            return Some(Why::RunMarker { pid: st.pid });
        }
        if in_our_run_cgroup(st.pid, host) {
            return Some(Why::RunCgroup { pid: st.pid });
        }
        if st.ppid <= 0 {
            return None;
        }
        if let Some(h) = host
            && st.ppid == h.pid
        {
            // The parent is the host's pid; it is the host if it started when the host did (it
            // cannot be a later process while this child still names it).
            if procfs::read_stat(h.pid).is_some_and(|p| p.start == h.start) {
                return Some(Why::UnderHost { pid: st.pid });
            }
        }
        match procfs::read_stat(st.ppid) {
            Some(parent) => {
                st = parent;
                strict = true;
            }
            None => match procfs::read_stat(st.pid) {
                // Re-parented meanwhile: follow the new parent from this same process.
                Some(again) if again.start == st.start && again.ppid != st.ppid => st = again,
                // Still named and unreadable: hidden from us (see above).
                Some(again) if again.start == st.start => return None,
                // The process itself went away mid-walk: its place is unknown.
                _ => return Some(Why::Unknown { pid: st.pid }),
            },
        }
    }
    Some(Why::Unknown { pid })
}

/// Whether `ancestor` is `pid` itself or one of its ancestors at most `hops` generations up
/// (1: the parent; 2: the grandparent), by pid and start time, following `/proc/<pid>/stat`'s
/// parent chain. A process that cannot be read ends the walk with `false`.
pub fn is_ancestor_within(ancestor: ProcessIdentity, pid: i32, hops: usize) -> bool {
    let mut next = pid;
    for _ in 0..=hops {
        let Some(st) = procfs::read_stat(next) else {
            return false;
        };
        if st.pid == ancestor.pid && st.start == ancestor.start {
            return true;
        }
        if st.ppid <= 0 {
            return false;
        }
        next = st.ppid;
    }
    false
}

/// Whether `pid` carries a run marker that names this host (a marker is the host's pid and
/// start time: another host's runs, or a host nested inside one of them, are not ours).
fn carries_our_marker(pid: i32, host: Option<HostIdentity>) -> bool {
    let Some(host) = host else { return false };
    procfs::environ_value(pid, RUN_MARKER_VAR)
        .and_then(|m| String::from_utf8(m).ok())
        .and_then(|m| HostIdentity::of_marker(&m))
        .is_some_and(|of| of == host)
}

/// Whether `pid` sits in a run cgroup of this host (`planhost-<marker>` right under the host's
/// own cgroup, the marker naming this host).
fn in_our_run_cgroup(pid: i32, host: Option<HostIdentity>) -> bool {
    let Some(host) = host else { return false };
    cgroup::run_cgroup_of(pid)
        .flatten()
        .and_then(|m| HostIdentity::of_marker(&m))
        .is_some_and(|of| of == host)
}

/// Whether `pid` has a controlling terminal (a person's shell in a terminal; an agent's command,
/// a daemon or `at` has none); `None` when it cannot be read.
pub fn has_controlling_terminal(pid: i32) -> Option<bool> {
    super::procfs::read_stat(pid).map(|st| st.tty != 0)
}

#[cfg(test)]
mod tests {
    use std::io::BufRead as _;
    use std::process::{Command, Stdio};

    use super::*;

    fn me() -> ProcessIdentity {
        ProcessIdentity::of(std::process::id() as i32).unwrap()
    }

    fn parent() -> ProcessIdentity {
        ProcessIdentity::of(rustix::process::getppid().unwrap().as_raw_nonzero().get()).unwrap()
    }

    /// A `sleep` child of this process (the "host" of these tests), killed and reaped on drop.
    struct Sleeper(std::process::Child);

    impl Sleeper {
        fn spawn(env: &[(&str, String)]) -> Self {
            let mut cmd = Command::new("sleep");
            cmd.arg("30").env_clear().stdin(Stdio::null());
            for (k, v) in env {
                cmd.env(k, v);
            }
            Self(cmd.spawn().unwrap())
        }

        fn pid(&self) -> i32 {
            self.0.id() as i32
        }
    }

    impl Drop for Sleeper {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }

    #[test]
    fn a_process_outside_the_host_and_its_agents_is_no_agents() {
        // This test process is the "host": neither it nor its parent is under it.
        assert_eq!(agent_lineage(me().pid, &[]), None);
        assert_eq!(agent_lineage(parent().pid, &[]), None);
    }

    #[test]
    fn a_child_of_the_host_is_a_runs() {
        let child = Sleeper::spawn(&[]);
        assert_eq!(
            agent_lineage(child.pid(), &[]),
            Some(Why::UnderHost { pid: child.pid() })
        );
    }

    #[test]
    fn only_a_marker_that_names_this_host_counts() {
        let host = HostIdentity::current().unwrap();
        let ours = Sleeper::spawn(&[(
            RUN_MARKER_VAR,
            format!("{}.{}-1-00ff", host.pid, host.start),
        )]);
        assert_eq!(
            agent_lineage(ours.pid(), &[]),
            Some(Why::RunMarker { pid: ours.pid() })
        );
        // Another host's marker (same pid, another start time) is no evidence; the child is
        // still found under the host.
        let theirs = Sleeper::spawn(&[(
            RUN_MARKER_VAR,
            format!("{}.{}-1-00ff", host.pid, host.start + 1),
        )]);
        assert_eq!(
            agent_lineage(theirs.pid(), &[]),
            Some(Why::UnderHost { pid: theirs.pid() })
        );
    }

    #[test]
    fn strict_descendants_of_an_agent_root_are_refused_and_the_root_is_not() {
        // Take this process's parent for an agent root: this process descends from it.
        let root = parent();
        assert_eq!(
            agent_lineage(me().pid, &[root]),
            Some(Why::AgentRoot { pid: root.pid })
        );
        assert_eq!(agent_lineage(root.pid, &[root]), None, "the root itself");
        // A root known by a start time that is not the running process's is another process.
        let stale = ProcessIdentity {
            pid: root.pid,
            start: root.start + 1,
        };
        assert_eq!(agent_lineage(me().pid, &[stale]), None);
    }

    #[test]
    fn an_unreadable_process_is_unknown() {
        // Above any pid_max the kernel allows (2^22).
        let gone = i32::MAX - 1;
        assert_eq!(agent_lineage(gone, &[]), Some(Why::Unknown { pid: gone }));
    }

    #[test]
    fn a_double_forked_orphan_without_a_marker_is_still_under_the_host() {
        // The host is a child subreaper: an orphan comes back to it, whatever it cleared.
        assert!(super::super::ensure_subreaper());
        let mut sh = Command::new("sh")
            .args(["-c", "sleep 30 >/dev/null 2>&1 & echo $!"])
            .env_clear()
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufReader::new(sh.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        sh.wait().unwrap();
        let orphan: i32 = line.trim().parse().unwrap();
        let st = procfs::read_stat(orphan).unwrap();
        let fd = super::super::open_verified(orphan, st.start).unwrap();
        let why = agent_lineage(orphan, &[]);
        let _ = rustix::process::pidfd_send_signal(&fd, rustix::process::Signal::KILL);
        let _ = rustix::process::waitid(
            rustix::process::WaitId::PidFd(std::os::fd::AsFd::as_fd(&fd)),
            rustix::process::WaitIdOptions::EXITED,
        );
        assert_eq!(st.ppid, me().pid, "re-parented to the subreaper");
        assert_eq!(why, Some(Why::UnderHost { pid: orphan }));
    }
}

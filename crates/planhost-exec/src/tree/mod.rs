//! Finding and ending every process of one command on Linux.
//!
//! Three things together make the tree inescapable and reapable:
//! - the host is a child subreaper, so an orphan of the tree (after `setsid`, a double fork,
//!   `nohup … &`) is re-parented to the host instead of init and stays reachable;
//! - each run has a marker in its environment and its own session, so such orphans (alive via the
//!   marker, already dead via their session id) are attributed to the right run;
//! - where the host may create one, a per-run cgroup v2 adds membership that no process can leave
//!   and `cgroup.kill`; a freeze before the final snapshot stops forks racing the kill.
//!
//! Every signal goes through a pidfd opened after the start time was recorded and checked again,
//! so a reused pid is never signalled. Reaping is `waitid(P_PIDFD)` on exactly those pidfds; the
//! shell itself is reaped by its spawner's side (tokio, or the `clone3` pidfd).
//!
//! When the shell exits on its own, finding what it left behind takes a walk of all of `/proc`.
//! It is skipped only when nothing can be left: the shell was born in its cgroup, no process or
//! thread was created in the host's pid namespace between its birth and its exit (so it started
//! none), and the cgroup reports `populated 0`.

mod cgroup;
mod leftovers;
pub mod lineage;
mod procfs;
pub(crate) mod spawner;
mod tcp_peer;

use std::collections::{HashMap, HashSet};
use std::os::fd::{AsFd, OwnedFd};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use rustix::io::Errno;
use rustix::process::{Pid, PidfdFlags, Signal, WaitId, WaitIdOptions};

use crate::runner::RUN_MARKER_VAR;
pub(crate) use cgroup::RunCgroup;
pub(crate) use procfs::last_pid;

pub use leftovers::{
    HostIdentity, Leftovers, WATCHDOG_VAR, Watchdog, Whose, kill_leftovers, watch_host,
};

/// How long SIGTERM'd processes get to exit before SIGKILL.
pub const TERM_GRACE: Duration = Duration::from_millis(1_000);
/// Upper bound for SIGKILL'd processes to die (D-state can delay it); then we log and go on.
const KILL_WAIT: Duration = Duration::from_secs(5);
/// Upper bound for dead members to be reaped.
const REAP_WAIT: Duration = Duration::from_secs(5);
/// Poll interval bounds while waiting for processes to change state.
const POLL_MIN: Duration = Duration::from_millis(1);
const POLL_MAX: Duration = Duration::from_millis(20);

/// Set by [`claim_unmarked_orphans`].
static CLAIM_UNMARKED: AtomicBool = AtomicBool::new(false);
/// std spawns (fork, then exec) started so far, and those not finished: between its fork and its
/// exec a child carries neither a run marker nor (on that path) a run cgroup.
static FORKS_STARTED: AtomicU64 = AtomicU64::new(0);
static FORKS_IN_FLIGHT: AtomicUsize = AtomicUsize::new(0);

/// What rule 4 ([`claim_unmarked_orphans`]) must leave alone: the markers of this process's runs
/// that have not ended, and processes exempt by identity (the watchdog, survivors a `Keep` run
/// released). By identity, never by what a process says about itself: an escapee can set any
/// environment variable and name a cgroup anything.
#[derive(Default)]
struct Registry {
    live_markers: HashSet<String>,
    exempt: HashSet<(i32, u64)>,
}

fn registry() -> std::sync::MutexGuard<'static, Registry> {
    static REGISTRY: std::sync::OnceLock<std::sync::Mutex<Registry>> = std::sync::OnceLock::new();
    REGISTRY
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A run's marker in the registry of live runs, from before its shell is spawned (a shell between
/// `clone3` and its exec, or before its tree exists, must already be protected) until its tree is
/// dropped.
#[derive(Debug)]
pub(crate) struct LiveMarker(String);

impl LiveMarker {
    pub(crate) fn register(marker: &str) -> Self {
        registry().live_markers.insert(marker.to_owned());
        Self(marker.to_owned())
    }
}

impl Drop for LiveMarker {
    fn drop(&mut self) {
        registry().live_markers.remove(&self.0);
    }
}

/// Exempts the process `pid` (if it is still the one that started at its current start time)
/// from rule 4 for its whole life.
pub(crate) fn exempt(pid: i32) {
    if let Some(st) = procfs::read_stat(pid) {
        let mut reg = registry();
        // Forget the ones that are gone, so the set stays small.
        reg.exempt
            .retain(|&(p, start)| procfs::read_stat(p).is_some_and(|st| st.start == start));
        reg.exempt.insert((pid, st.start));
    }
}

/// Runs a std spawn (fork and exec) of this process, so that no scan mistakes the child, before
/// its exec, for an escapee.
pub(crate) fn forking<T>(spawn: impl FnOnce() -> T) -> T {
    FORKS_IN_FLIGHT.fetch_add(1, Ordering::SeqCst);
    FORKS_STARTED.fetch_add(1, Ordering::SeqCst);
    let out = spawn();
    FORKS_IN_FLIGHT.fetch_sub(1, Ordering::SeqCst);
    out
}

/// Declares that this process starts child processes only through planhost-exec (its runs and
/// its [`Watchdog`]), as `planhost serve` does. From then on, a child of this process that
/// carries no run marker, sits in no run cgroup and started during a run is taken for an
/// escapee of that run (it orphaned itself, left the run's cgroup and cleared its environment:
/// possible as root) and is killed with the run, along with its descendants.
///
/// It holds only while shells are born in their run cgroups (`clone3`): where the host must fork
/// and then move the child, or has no cgroups, the rule stays off, because a fresh shell of
/// another run looks exactly like such an escapee until its exec. An escapee of a concurrent run
/// may be killed when the first of the overlapping runs ends.
pub fn claim_unmarked_orphans() {
    CLAIM_UNMARKED.store(true, Ordering::SeqCst);
}

/// Makes the host a child subreaper once; returns whether it is one.
pub(crate) fn ensure_subreaper() -> bool {
    static DONE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *DONE.get_or_init(|| {
        match rustix::process::set_child_subreaper(Some(rustix::process::getpid())) {
            Ok(()) => true,
            Err(e) => {
                tracing::warn!(error = %e, "PR_SET_CHILD_SUBREAPER failed; orphans reach init");
                false
            }
        }
    })
}

#[derive(Debug)]
struct Member {
    start: u64,
    fd: OwnedFd,
}

/// The shell process: signalled by us, reaped by tokio.
#[derive(Debug)]
struct Root {
    pid: i32,
    start: u64,
    fd: OwnedFd,
}

/// Every process of one run that the host has identified, with pidfds to act on them.
#[derive(Debug)]
pub(crate) struct Tree {
    host: i32,
    session: i32,
    marker_entry: Vec<u8>,
    /// Keeps the marker registered as live until the tree is dropped.
    _live: LiveMarker,
    /// The shell's start time: every process of the run started at or after it.
    started: Option<u64>,
    root: Option<Root>,
    cgroup: Option<RunCgroup>,
    members: HashMap<i32, Member>,
    /// Set by [`Tree::root_was_alone`]: the shell started no process at all.
    alone: bool,
    /// How many `/proc` walks this tree has made.
    scans: u32,
    finished: bool,
}

impl Tree {
    /// Starts tracking the shell `root_pid`, spawned with `marker_entry` (`NAME=value`) in its
    /// environment, in its own session, and (if any) in `cgroup`.
    ///
    /// `born` is the shell's own pidfd when `clone3(CLONE_INTO_CGROUP)` started it in `cgroup`:
    /// then it is a member by construction and, as an unreaped child, cannot have been replaced
    /// by another process, so neither is checked again.
    pub(crate) fn new(
        root_pid: i32,
        marker_entry: String,
        live: LiveMarker,
        cgroup: Option<RunCgroup>,
        born: Option<OwnedFd>,
    ) -> Self {
        let born_in_cgroup = born.is_some() && cgroup.is_some();
        let root = procfs::read_stat(root_pid).and_then(|st| {
            let fd = match born {
                Some(fd) => fd,
                None => open_verified(root_pid, st.start)?,
            };
            Some(Root {
                pid: root_pid,
                start: st.start,
                fd,
            })
        });
        if root.is_none() {
            tracing::warn!(root_pid, "cannot open a pidfd for the shell");
        }
        let cgroup = cgroup.filter(|cg| {
            let joined = born_in_cgroup || cg.pids().contains(&root_pid);
            if !joined {
                tracing::warn!("shell did not join its cgroup; procfs walk only");
            }
            joined
        });
        Self {
            host: rustix::process::getpid().as_raw_nonzero().get(),
            session: root_pid,
            marker_entry: marker_entry.into_bytes(),
            _live: live,
            started: root.as_ref().map(|r| r.start),
            root,
            cgroup,
            members: HashMap::new(),
            alone: false,
            scans: 0,
            finished: false,
        }
    }

    /// The shell exited and tokio reaped it: its pid may be reused, so stop following it.
    pub(crate) fn root_reaped(&mut self) {
        self.root = None;
    }

    /// The shell's spawner saw, before reaping it, that no process or thread was created in this
    /// pid namespace after the shell (see `sys::direct::Child::alone`): the shell was the
    /// run's only process. With its cgroup empty too, [`Tree::terminate`] has nothing to look for.
    pub(crate) fn root_was_alone(&mut self) {
        self.alone = true;
    }

    /// Leaves the remaining descendants running ([`crate::BackgroundPolicy::Keep`]).
    pub(crate) fn release(mut self) {
        if let Some(cg) = &self.cgroup {
            // They outlive the run by the caller's choice: rule 4 must not take them later.
            for pid in cg.pids() {
                exempt(pid);
            }
            cg.release();
        }
        self.finished = true;
    }

    /// SIGTERM, grace, SIGKILL and reap every process of the run. Returns once none is left
    /// (or the generous bounds passed, which is logged), with the number of `/proc` walks it
    /// took: none when the shell was alone and its cgroup is empty.
    pub(crate) async fn terminate(mut self) -> u32 {
        if self.nothing_left() {
            self.finished = true;
            return 0;
        }
        let grace_end = Instant::now() + TERM_GRACE;
        let mut termed = HashSet::new();
        let mut pause = POLL_MIN;
        loop {
            let live = self.scan();
            if live.is_empty() {
                // Nothing of the run is alive, so nothing can fork: no second scan is needed, and
                // a cgroup that still reports members (zombies) only waits for the reap.
                if termed.is_empty() && !self.cgroup.as_ref().is_some_and(RunCgroup::populated) {
                    self.reap().await;
                    self.finished = true;
                    return self.scans;
                }
                break;
            }
            let fresh: Vec<i32> = live.into_iter().filter(|p| termed.insert(*p)).collect();
            self.signal(&fresh, Signal::TERM);
            // A stopped process only acts on SIGTERM once continued.
            self.signal(&fresh, Signal::CONT);
            if Instant::now() >= grace_end {
                break;
            }
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(POLL_MAX);
        }
        self.kill_all().await;
        self.reap().await;
        self.finished = true;
        self.scans
    }

    /// Whether the run provably has no process left, without a `/proc` walk: the shell is
    /// reaped and was alone ([`Tree::root_was_alone`]), and its cgroup reports `populated 0`.
    ///
    /// An empty cgroup alone would not do. A process can leave its cgroup (root, or a delegated
    /// subtree) and live on as an orphan of the host, and an orphan that already died is a
    /// zombie of the host that no cgroup counts, which only the walk finds and reaps. That the
    /// shell started nothing rules both out; the cgroup check guards against a privileged
    /// command that moved the pid counter back (`ns_last_pid`) but stayed in its cgroup.
    fn nothing_left(&self) -> bool {
        self.alone
            && self.root.is_none()
            && self.members.is_empty()
            && self.cgroup.as_ref().is_some_and(|cg| !cg.populated())
    }

    async fn kill_all(&mut self) {
        if let Some(cg) = &self.cgroup
            && cg.populated()
        {
            // Frozen members cannot fork, so this snapshot records every pid we must reap.
            let frozen = cg.freeze().await;
            self.scan();
            if let Some(cg) = &self.cgroup {
                cg.kill();
            }
            tracing::debug!(frozen, "cgroup killed");
        }
        let until = Instant::now() + KILL_WAIT;
        let mut pause = POLL_MIN;
        loop {
            let live = self.scan();
            if live.is_empty() {
                return;
            }
            self.signal(&live, Signal::KILL);
            if Instant::now() >= until {
                tracing::warn!(?live, "processes survived SIGKILL");
                return;
            }
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(POLL_MAX);
        }
    }

    async fn reap(&mut self) {
        let until = Instant::now() + REAP_WAIT;
        let mut pause = POLL_MIN;
        loop {
            self.members.retain(|&pid, m| !reap_one(pid, m));
            if self.members.is_empty() {
                return;
            }
            if Instant::now() >= until {
                let left: Vec<i32> = self.members.keys().copied().collect();
                tracing::warn!(?left, "descendants not reaped in time");
                return;
            }
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(POLL_MAX);
        }
    }

    /// Records every process of the run and returns those still alive (the shell included).
    fn scan(&mut self) -> Vec<i32> {
        self.scans = self.scans.saturating_add(1);
        let forks_before = FORKS_STARTED.load(Ordering::SeqCst);
        let forks_were_running = FORKS_IN_FLIGHT.load(Ordering::SeqCst) != 0;
        let procs = procfs::all();
        let mut children: HashMap<i32, Vec<i32>> = HashMap::new();
        let mut by_pid = HashMap::with_capacity(procs.len());
        for p in &procs {
            children.entry(p.ppid).or_default().push(p.pid);
            by_pid.insert(p.pid, *p);
        }
        let root = self
            .root
            .as_ref()
            .filter(|r| by_pid.get(&r.pid).is_some_and(|st| st.start == r.start))
            .map(|r| r.pid);
        let mut seeds: Vec<i32> = root.into_iter().collect();
        let mut unmarked = Vec::new();
        for p in &procs {
            if p.ppid != self.host || Some(p.pid) == root || self.members.contains_key(&p.pid) {
                continue;
            }
            // An orphan of this run: alive it carries the marker; dead, its environment is gone
            // but it still names the run's session (a pid that cannot be reused while named).
            if p.is_dead() {
                if p.session == self.session && p.pid != p.session {
                    seeds.push(p.pid);
                }
                continue;
            }
            // Read once: the marker check and rule 4 both look at it.
            let environ = procfs::environ(p.pid);
            if environ
                .as_deref()
                .is_some_and(|env| env.split(|&b| b == 0).any(|e| e == self.marker_entry))
            {
                seeds.push(p.pid);
            } else if self.may_claim(p, environ.as_deref()) {
                unmarked.push(p.pid);
            }
        }
        // Valid only if no fork-and-exec child could have been among them.
        if !unmarked.is_empty()
            && !forks_were_running
            && FORKS_IN_FLIGHT.load(Ordering::SeqCst) == 0
            && FORKS_STARTED.load(Ordering::SeqCst) == forks_before
        {
            tracing::warn!(?unmarked, "killing unmarked escapees with this run");
            seeds.extend(unmarked);
        }
        if let Some(cg) = &self.cgroup {
            seeds.extend(cg.pids());
        }
        seeds.extend(
            // Known members still alive as themselves: a pid reused meanwhile (pid_max can be
            // 32768) is another process, no seed of this run.
            self.members
                .iter()
                .filter(|(p, m)| by_pid.get(p).is_some_and(|st| st.start == m.start))
                .map(|(p, _)| *p),
        );

        let mut seen = HashSet::new();
        let mut live = Vec::new();
        while let Some(pid) = seeds.pop() {
            if !seen.insert(pid) {
                continue;
            }
            let Some(st) = by_pid.get(&pid) else { continue };
            if let Some(kids) = children.get(&pid) {
                seeds.extend(kids);
            }
            if Some(pid) != root && !self.track(st) {
                continue;
            }
            if !st.is_dead() {
                live.push(pid);
            }
        }
        live
    }

    /// Whether the live child `p` of the host, without this run's marker, is taken for an
    /// escapee of this run (see [`claim_unmarked_orphans`]).
    fn may_claim(&self, p: &procfs::ProcStat, environ: Option<&[u8]>) -> bool {
        if !(CLAIM_UNMARKED.load(Ordering::SeqCst)
            && crate::sys::born_in_cgroups()
            && self.cgroup.is_some()
            && self.started.is_some_and(|s| p.start >= s))
        {
            return false;
        }
        let reg = registry();
        if reg.exempt.contains(&(p.pid, p.start)) {
            return false;
        }
        // A marker only counts when it names a run of this host that is still going (that run
        // takes it); an ended run's or a made-up one protects nothing. What cannot be read (a
        // process mid-exec or exiting) protects: the rule only kills on positive knowledge.
        let Some(environ) = environ else {
            return false;
        };
        let Some(cgroup) = cgroup::run_cgroup_of(p.pid) else {
            return false;
        };
        let marked_live = procfs::value_in(environ, RUN_MARKER_VAR)
            .and_then(|m| String::from_utf8(m).ok())
            .is_some_and(|m| reg.live_markers.contains(&m));
        let in_live_cgroup = cgroup.is_some_and(|m| reg.live_markers.contains(&m));
        if marked_live || in_live_cgroup {
            return false;
        }
        // An exiting process shows an empty environment and the root cgroup: another run's
        // shell that just exited looks unmarked. Only what was alive and not exiting *after*
        // both reads counts (PF_EXITING never clears); a dying one has nothing left to kill,
        // and reaping it would take its exit status from the run that waits for it.
        procfs::read_stat(p.pid).is_some_and(|now| now.start == p.start && !now.is_exiting())
    }

    /// Opens a pidfd for a newly seen process; false when it vanished or its pid was reused.
    fn track(&mut self, st: &procfs::ProcStat) -> bool {
        if self
            .members
            .get(&st.pid)
            .is_some_and(|m| m.start == st.start)
        {
            return true;
        }
        match open_verified(st.pid, st.start) {
            Some(fd) => {
                self.members.insert(
                    st.pid,
                    Member {
                        start: st.start,
                        fd,
                    },
                );
                true
            }
            None => false,
        }
    }

    fn signal(&self, pids: &[i32], sig: Signal) {
        for pid in pids {
            let fd = match (&self.root, self.members.get(pid)) {
                (Some(r), _) if r.pid == *pid => r.fd.as_fd(),
                (_, Some(m)) => m.fd.as_fd(),
                _ => continue,
            };
            // ESRCH just means it already exited.
            let _ = rustix::process::pidfd_send_signal(fd, sig);
        }
    }
}

impl Drop for Tree {
    /// The run future was dropped mid-flight: kill what we know of, without waiting.
    fn drop(&mut self) {
        if self.finished {
            return;
        }
        if let Some(cg) = &self.cgroup {
            cg.kill();
        }
        let live = self.scan();
        self.signal(&live, Signal::KILL);
    }
}

/// A pidfd for `pid` that provably refers to the process that started at `start`.
fn open_verified(pid: i32, start: u64) -> Option<OwnedFd> {
    let fd = rustix::process::pidfd_open(Pid::from_raw(pid)?, PidfdFlags::empty()).ok()?;
    // The pidfd was opened before this check, so if the start time still matches it refers to
    // the process we saw, not to a later one that reused the pid.
    (procfs::read_stat(pid)?.start == start).then_some(fd)
}

/// Tries to reap one member; true when it is settled (reaped by us or gone).
fn reap_one(pid: i32, m: &Member) -> bool {
    let opts = WaitIdOptions::EXITED | WaitIdOptions::NOHANG;
    match rustix::process::waitid(WaitId::PidFd(m.fd.as_fd()), opts) {
        Ok(Some(_)) => true,
        // Our child, not dead yet.
        Ok(None) => false,
        // Not our child: reaped by its own parent already, or a zombie still waiting to be
        // re-parented to us when its (dying) parent exits.
        Err(Errno::CHILD) => procfs::read_stat(pid).is_none_or(|st| st.start != m.start),
        Err(e) => {
            tracing::warn!(pid, error = %e, "waitid failed");
            true
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Spawns `command` the way the runner does, waits for the shell and tears the tree down as
    /// after a normal exit; returns whether the shell was alone and how many walks it took.
    async fn exit_and_teardown(command: &str, containment: crate::Containment) -> (bool, u32) {
        let dir = tempfile::tempdir().unwrap();
        let shell = crate::effective_shell(crate::Platform::Linux, &crate::probe(), None)
            .expect("bash on this machine");
        let mut spec = crate::CommandSpec::new(shell, command, dir.path());
        spec.env = vec![("PATH".into(), std::env::var("PATH").unwrap_or_default())];
        spec.containment = containment;
        let crate::sys::Spawned {
            mut child,
            mut tree,
        } = crate::sys::spawn(&spec).unwrap();
        assert!(child.wait().await.unwrap().success());
        tree.root_reaped();
        let alone = child.alone();
        if alone {
            tree.root_was_alone();
        }
        (alone, tree.terminate().await)
    }

    /// `true` in its own cgroup: once the shell is gone and the cgroup reports `populated 0`,
    /// the run ends without a `/proc` walk. Whatever else the machine starts meanwhile (other
    /// tests, builds) takes a pid and rightly costs that run its walk, so a few tries are
    /// allowed; every run that did not qualify must still have walked.
    #[tokio::test(flavor = "current_thread")]
    async fn a_shell_that_started_nothing_in_an_empty_cgroup_needs_no_walk() {
        if !(cgroup::prepare() && crate::sys::born_in_cgroups()) {
            eprintln!("no writable cgroup v2 here: the walk is never skipped");
            return;
        }
        if procfs::last_pid().is_none() {
            eprintln!("no /proc/sys/kernel/ns_last_pid here: the walk is never skipped");
            return;
        }
        let mut tries = Vec::new();
        for _ in 0..50 {
            let (alone, scans) = exit_and_teardown("true", crate::Containment::Auto).await;
            tries.push((alone, scans));
            assert!(alone || scans >= 1, "{tries:?}");
            if alone {
                assert_eq!(scans, 0, "an empty cgroup and a lone shell: {tries:?}");
                return;
            }
        }
        panic!("something else took a pid in every try: {tries:?}");
    }

    /// A shell that started anything is walked for even though its cgroup is empty by then: here
    /// an orphan that already died, a zombie of the host that no cgroup counts. Without the
    /// cgroup (`ProcfsOnly`) the walk always runs.
    #[tokio::test(flavor = "current_thread")]
    async fn a_shell_that_started_something_is_walked_for() {
        for containment in [crate::Containment::Auto, crate::Containment::ProcfsOnly] {
            let (alone, scans) = exit_and_teardown("( true & ); sleep 0.1", containment).await;
            assert!(!alone, "{containment:?}");
            assert!(scans >= 1, "{containment:?}");
        }
        let (alone, scans) = exit_and_teardown("true", crate::Containment::ProcfsOnly).await;
        assert!(!alone && scans >= 1, "ProcfsOnly is unchanged");
    }
}

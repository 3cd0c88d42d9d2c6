//! What a host that died left running. Every run's marker names its host (`<pid>.<start>-…`,
//! the pid and its start time since boot), so a later host — or the watchdog of the host that
//! died — can tell a dead host's processes and cgroups from a live one's and end them: a command
//! never outlives its host by more than a moment, and "interrupted" means stopped.

use std::io::Read as _;
use std::time::Duration;

use rustix::process::Signal;

use super::{cgroup, open_verified, procfs};
use crate::runner::RUN_MARKER_VAR;

/// The environment variable that marks planhost's own watchdog, never a run's process.
pub const WATCHDOG_VAR: &str = "PLANHOST_WATCHDOG";

/// One host process: its pid and start time, which together no other process shares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HostIdentity {
    /// The host's pid.
    pub pid: i32,
    /// Its start time in clock ticks since boot.
    pub start: u64,
}

impl HostIdentity {
    /// This process (read from `/proc` once; a process's pid and start time never change).
    pub fn current() -> Option<Self> {
        static ME: std::sync::OnceLock<Option<HostIdentity>> = std::sync::OnceLock::new();
        *ME.get_or_init(|| {
            let pid = rustix::process::getpid().as_raw_nonzero().get();
            procfs::read_stat(pid).map(|st| Self {
                pid,
                start: st.start,
            })
        })
    }

    /// The host a run marker names; `None` for a marker of another form.
    pub fn of_marker(marker: &str) -> Option<Self> {
        let host = marker.split('-').next()?;
        let (pid, start) = host.split_once('.')?;
        Some(Self {
            pid: pid.parse().ok()?,
            start: start.parse().ok()?,
        })
    }

    /// Whether this host is still running.
    pub fn alive(self) -> bool {
        procfs::read_stat(self.pid).is_some_and(|st| st.start == self.start && !st.is_dead())
    }
}

/// What [`kill_leftovers`] ended.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Leftovers {
    /// Run cgroups killed and removed.
    pub cgroups: usize,
    /// Processes killed by their marker.
    pub processes: usize,
}

/// Which hosts' leftovers to end.
#[derive(Debug, Clone, Copy)]
pub enum Whose {
    /// Every host that is no longer running (a host's start-up fence).
    DeadHosts,
    /// One host, whatever it is doing (its watchdog, once it died).
    Host(HostIdentity),
}

impl Whose {
    fn matches(self, marker: &str) -> bool {
        let me = HostIdentity::current();
        match (self, HostIdentity::of_marker(marker)) {
            (Whose::Host(h), Some(of)) => of == h,
            (Whose::DeadHosts, Some(of)) => Some(of) != me && !of.alive(),
            // A marker of an older form names only a pid: its host is gone if that pid is.
            (Whose::DeadHosts, None) => marker
                .split('-')
                .next()
                .and_then(|p| p.parse::<i32>().ok())
                .is_some_and(|pid| procfs::read_stat(pid).is_none()),
            (Whose::Host(_), None) => false,
        }
    }
}

/// Kills every run cgroup and every marked process that belongs to `whose`, and removes the
/// cgroups. Cgroups first: their membership cannot be escaped, and `cgroup.kill` takes what the
/// marker scan cannot see (a process that cleared its environment).
pub fn kill_leftovers(whose: Whose) -> Leftovers {
    let mut out = Leftovers::default();
    for (marker, dir) in cgroup::run_cgroups() {
        if whose.matches(&marker) && cgroup::kill_and_remove(&dir) {
            out.cgroups += 1;
        }
    }
    for p in procfs::all() {
        if p.is_dead() {
            continue;
        }
        let Some(marker) = procfs::environ_value(p.pid, RUN_MARKER_VAR) else {
            continue;
        };
        let Ok(marker) = String::from_utf8(marker) else {
            continue;
        };
        if whose.matches(&marker)
            && let Some(fd) = open_verified(p.pid, p.start)
            && rustix::process::pidfd_send_signal(&fd, Signal::KILL).is_ok()
        {
            out.processes += 1;
        }
    }
    out
}

/// The watchdog's whole life: wait until the host that started it is gone — its stdin reaches
/// end of file when the host exits or is killed, however it dies — then end what it left. Run
/// in a process of its own (`planhost`'s hidden `__watch` command), in its own session, so no
/// signal aimed at the host's terminal takes it first.
pub fn watch_host(host: HostIdentity) -> Leftovers {
    let mut sink = [0u8; 64];
    let mut stdin = std::io::stdin().lock();
    loop {
        match stdin.read(&mut sink) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    // A process that was forking while the host died may appear a moment later: sweep twice.
    let mut total = kill_leftovers(Whose::Host(host));
    std::thread::sleep(Duration::from_millis(50));
    let again = kill_leftovers(Whose::Host(host));
    total.cgroups += again.cgroups;
    total.processes += again.processes;
    total
}

/// The host side: a running watchdog, kept by the host for its whole life (its stdin is the
/// pipe whose end of file tells the watchdog the host is gone).
#[derive(Debug)]
pub struct Watchdog {
    child: std::process::Child,
}

impl Watchdog {
    /// Starts `program args…` as this host's watchdog: stdin a pipe the host never writes to,
    /// its own session, marked with [`WATCHDOG_VAR`] so `ps` and a reader of its environment can
    /// tell it from a run.
    pub fn spawn(program: &std::path::Path, args: &[String]) -> std::io::Result<Self> {
        use std::os::unix::process::CommandExt as _;
        let mut cmd = std::process::Command::new(program);
        cmd.args(args)
            .env(WATCHDOG_VAR, "1")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null());
        // SAFETY: setsid(2) is async-signal-safe and allocates nothing.
        unsafe {
            cmd.pre_exec(|| {
                rustix::process::setsid()?;
                Ok(())
            });
        }
        let child = super::forking(|| cmd.spawn())?;
        // Exempt by identity: an escapee could set WATCHDOG_VAR too.
        if let Ok(pid) = i32::try_from(child.id()) {
            super::exempt(pid);
        }
        Ok(Self { child })
    }

    /// The watchdog's pid.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for Watchdog {
    /// A host that stops normally has ended its runs already; closing the pipe lets the
    /// watchdog sweep once more and exit, and waiting reaps it.
    fn drop(&mut self) {
        drop(self.child.stdin.take());
        let _ = self.child.wait();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_name_their_host() {
        let h = HostIdentity::of_marker("4242.987654-3-00ff").unwrap();
        assert_eq!(
            h,
            HostIdentity {
                pid: 4242,
                start: 987_654
            }
        );
        assert_eq!(HostIdentity::of_marker("4242-3-123"), None);
        let me = HostIdentity::current().unwrap();
        assert!(me.alive());
        assert!(!Whose::DeadHosts.matches(&format!("{}.{}-1-0", me.pid, me.start)));
        assert!(Whose::Host(me).matches(&format!("{}.{}-1-0", me.pid, me.start)));
        // The same pid with another start time is another (dead) host.
        assert!(Whose::DeadHosts.matches(&format!("{}.{}-1-0", me.pid, me.start + 1)));
    }
}

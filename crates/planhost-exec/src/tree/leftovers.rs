//! What a host that died left running. Every run's marker names its host (`<pid>.<start>-…`,
//! the pid and its start time since boot), so a later host — or the watchdog of the host that
//! died — can tell a dead host's processes and cgroups from a live one's and end them: a command
//! never outlives its host by more than a moment, and "interrupted" means stopped.

use std::os::fd::{AsRawFd, FromRawFd as _, OwnedFd};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use rustix::process::Signal;

use super::{cgroup, open_verified, procfs, spawner};
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
        match (self, HostIdentity::of_marker(marker)) {
            (Whose::Host(h), Some(of)) => of == h,
            (Whose::DeadHosts, Some(of)) => Some(of) != HostIdentity::current() && !of.alive(),
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
/// cgroups. Cgroups first (all of them, then the waits for each to empty): their membership
/// cannot be escaped, and `cgroup.kill` takes what the marker scan cannot see (a process that
/// cleared its environment).
pub fn kill_leftovers(whose: Whose) -> Leftovers {
    let dirs: Vec<PathBuf> = cgroup::run_cgroups()
        .into_iter()
        .filter(|(marker, _)| whose.matches(marker))
        .map(|(_, dir)| dir)
        .collect();
    let cgroups = cgroup::kill_and_remove(&dirs);
    Leftovers {
        cgroups,
        processes: kill_marked(whose),
    }
}

/// SIGKILLs every live process whose run marker belongs to `whose`; returns how many.
fn kill_marked(whose: Whose) -> usize {
    let mut killed = 0;
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
            killed += 1;
        }
    }
    killed
}

/// The signal the watchdog asks the kernel for when its host dies (`PR_SET_PDEATHSIG`). It is
/// blocked from before the watchdog's exec, so it waits, pending, until [`watch_host`] reads it
/// from a signalfd: it never kills the watchdog, even during its start.
const DEATH_SIGNAL: libc::c_int = libc::SIGUSR1;

/// How long the watchdog, woken by the death signal, waits for the host to finish dying (its
/// pipe's end of file) before the second sweep.
const EXIT_WAIT: Duration = Duration::from_secs(5);

/// What told the watchdog that its host is dying.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Woken {
    /// The death signal, sent by the kernel as the host's spawner thread exited: the host is
    /// dying (every thread of a SIGKILLed process exits) but may not be gone yet.
    Signal,
    /// Its stdin reached end of file: the host's last thread has closed its descriptors.
    EndOfFile,
}

/// The watchdog's whole life: wait until the host that started it dies, however it dies, then
/// end what it left. Run in a process of its own (`planhost`'s hidden `__watch` command), in its
/// own session, so no signal aimed at the host's terminal takes it first.
///
/// Two things wake it, whichever comes first: the death signal (`PR_SET_PDEATHSIG`, asked for by
/// [`Watchdog::spawn`]), which the kernel sends from the exiting thread that spawned it, and end
/// of file on stdin, a pipe whose only writer is the host (for a watchdog started some other
/// way). The first thing it then does is `cgroup.kill` in each of the host's run cgroups; the
/// cgroup directory was found before the wait, so that is a `readdir` and one write per run.
/// Then the marker scan, the cgroups' removal, and (once the host is gone) a second sweep
/// 50 ms later for a process that was forking meanwhile.
pub fn watch_host(host: HostIdentity) -> Leftovers {
    cgroup::prepare();
    let signals = death_signal_fd();
    let urgent = Urgency::raise();
    let woken = wait_for_death(host, signals.as_ref());
    for (marker, dir) in cgroup::run_cgroups() {
        if Whose::Host(host).matches(&marker) {
            cgroup::kill_members(&dir);
        }
    }
    drop(urgent);
    let mut total = kill_leftovers(Whose::Host(host));
    if woken == Woken::Signal {
        wait_for_end_of_file(EXIT_WAIT);
    }
    // A process that was forking while the host died may appear a moment later: sweep twice.
    std::thread::sleep(Duration::from_millis(50));
    let again = kill_leftovers(Whose::Host(host));
    total.cgroups += again.cgroups;
    total.processes += again.processes;
    total
}

/// The watchdog's scheduling while it waits and writes `cgroup.kill`: real-time (`SCHED_FIFO`,
/// the lowest priority), where the process may ask for it (root, `CAP_SYS_NICE`, or an
/// `RLIMIT_RTPRIO` above 0), so that on a busy machine it runs the moment it is woken instead
/// of after the runnable tasks' slices; elsewhere, as it was. Dropped (back to `SCHED_OTHER`)
/// before anything that takes longer than a few system calls.
struct Urgency(Option<libc::sched_param>);

impl Urgency {
    fn raise() -> Self {
        // SAFETY: sched_getparam/sched_setscheduler on this process with a param it owns.
        unsafe {
            let mut before: libc::sched_param = std::mem::zeroed();
            if libc::sched_getscheduler(0) != libc::SCHED_OTHER
                || libc::sched_getparam(0, &raw mut before) != 0
            {
                return Self(None);
            }
            let fifo = libc::sched_param { sched_priority: 1 };
            let policy = libc::SCHED_FIFO | libc::SCHED_RESET_ON_FORK;
            Self((libc::sched_setscheduler(0, policy, &raw const fifo) == 0).then_some(before))
        }
    }
}

impl Drop for Urgency {
    fn drop(&mut self) {
        if let Some(before) = self.0 {
            // SAFETY: as in `raise`.
            unsafe {
                libc::sched_setscheduler(0, libc::SCHED_OTHER, &raw const before);
            }
        }
    }
}

/// A signalfd for [`DEATH_SIGNAL`] (blocked first), or `None` where there is none.
fn death_signal_fd() -> Option<OwnedFd> {
    // SAFETY: plain system calls on a sigset this function owns; the new descriptor is owned
    // by the returned OwnedFd.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&raw mut set);
        libc::sigaddset(&raw mut set, DEATH_SIGNAL);
        if libc::pthread_sigmask(libc::SIG_BLOCK, &raw const set, std::ptr::null_mut()) != 0 {
            return None;
        }
        let fd = libc::signalfd(-1, &raw const set, libc::SFD_CLOEXEC);
        (fd >= 0).then(|| OwnedFd::from_raw_fd(fd))
    }
}

/// Whether the signal waiting on `signals` is the kernel's death signal from `host`: a kernel
/// death signal reads as `SI_USER` from the dying thread's process, which no other process can
/// forge (`kill` names the sender, `sigqueue` cannot claim `SI_USER`).
fn death_signal_from(signals: &OwnedFd, host: HostIdentity) -> bool {
    // SAFETY: `signalfd_siginfo` is plain data; read(2) fills at most its size.
    unsafe {
        let mut info: libc::signalfd_siginfo = std::mem::zeroed();
        let size = std::mem::size_of::<libc::signalfd_siginfo>();
        let n = libc::read(signals.as_raw_fd(), (&raw mut info).cast(), size);
        usize::try_from(n).is_ok_and(|n| n == size)
            && info.ssi_signo == DEATH_SIGNAL.unsigned_abs()
            && info.ssi_code == libc::SI_USER
            && i64::from(info.ssi_pid) == i64::from(host.pid)
    }
}

/// Waits for the death signal from `host` or end of file on stdin.
fn wait_for_death(host: HostIdentity, signals: Option<&OwnedFd>) -> Woken {
    let mut sink = [0u8; 64];
    loop {
        let mut fds = [
            libc::pollfd {
                fd: 0,
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                fd: signals.map_or(-1, AsRawFd::as_raw_fd),
                events: libc::POLLIN,
                revents: 0,
            },
        ];
        // SAFETY: two initialised pollfds; a negative fd is ignored by poll(2).
        let n = unsafe { libc::poll(fds.as_mut_ptr(), 2, -1) };
        if n < 0 {
            if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            // poll itself failed: wait on the pipe alone.
            wait_for_end_of_file(Duration::MAX);
            return Woken::EndOfFile;
        }
        if fds[1].revents != 0
            && let Some(signals) = signals
            && death_signal_from(signals, host)
        {
            return Woken::Signal;
        }
        if fds[0].revents != 0 && stdin_ended(&mut sink) {
            return Woken::EndOfFile;
        }
    }
}

/// Reads stdin until end of file, or until `bound` has passed.
fn wait_for_end_of_file(bound: Duration) {
    let until = Instant::now().checked_add(bound);
    let mut sink = [0u8; 64];
    loop {
        let timeout = match until {
            None => -1,
            Some(until) => {
                let left = until.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return;
                }
                i32::try_from(left.as_millis()).unwrap_or(i32::MAX).max(1)
            }
        };
        let mut fds = [libc::pollfd {
            fd: 0,
            events: libc::POLLIN,
            revents: 0,
        }];
        // SAFETY: one initialised pollfd.
        let n = unsafe { libc::poll(fds.as_mut_ptr(), 1, timeout) };
        if n < 0 && std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            return;
        }
        if n > 0 && stdin_ended(&mut sink) {
            return;
        }
    }
}

/// Reads (and drops) what stdin holds; true at end of file or on an error other than `EINTR`.
fn stdin_ended(sink: &mut [u8]) -> bool {
    // SAFETY: read(2) into a buffer this function borrows, at most its length.
    let n = unsafe { libc::read(0, sink.as_mut_ptr().cast(), sink.len()) };
    match n {
        0 => true,
        n if n > 0 => false,
        _ => std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted,
    }
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
    ///
    /// It is started from the spawner thread (see `tree::spawner`) with `PR_SET_PDEATHSIG`
    /// set to a signal it keeps blocked, which [`watch_host`] reads: the kernel sends it from
    /// the host's exit, before the host's last thread has closed the pipe.
    pub fn spawn(program: &std::path::Path, args: &[String]) -> std::io::Result<Self> {
        use std::os::unix::process::CommandExt as _;
        let mut cmd = std::process::Command::new(program);
        cmd.args(args)
            .env(WATCHDOG_VAR, "1")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null());
        let parent = spawner::parent_pid();
        // SAFETY: setsid(2), sigprocmask(2), prctl(2) and getppid(2) are async-signal-safe; the
        // closure allocates nothing (the sigset is on the stack).
        unsafe {
            cmd.pre_exec(move || {
                rustix::process::setsid()?;
                let mut set: libc::sigset_t = std::mem::zeroed();
                libc::sigemptyset(&raw mut set);
                libc::sigaddset(&raw mut set, DEATH_SIGNAL);
                if libc::sigprocmask(libc::SIG_BLOCK, &raw const set, std::ptr::null_mut()) == 0 {
                    libc::prctl(
                        libc::PR_SET_PDEATHSIG,
                        DEATH_SIGNAL as libc::c_ulong,
                        0,
                        0,
                        0,
                    );
                }
                if libc::getppid() != parent {
                    // The host died first (no allocation here: ESRCH, "no such process").
                    return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
                }
                Ok(())
            });
        }
        let child = spawner::on_spawner(move || super::forking(|| cmd.spawn()))??;
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

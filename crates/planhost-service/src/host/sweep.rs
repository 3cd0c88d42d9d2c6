//! What dead hosts left running: ended before this host's fence, and by this host's watchdog
//! the moment this host is gone (Linux; elsewhere runs are process groups the runner kills).

use std::path::PathBuf;

/// Run cgroups and processes ended.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Swept {
    /// Run cgroups killed and removed.
    pub cgroups: usize,
    /// Processes killed by their marker.
    pub processes: usize,
}

/// The program a host starts as its watchdog. It is run as `program args… <host pid> <host
/// start>` and must call [`run_watchdog`] with those two numbers: `planhost` runs itself with
/// its hidden `__watch` command; an embedding app may run the `planhost` binary the same way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WatchdogCommand {
    /// The executable.
    pub program: PathBuf,
    /// The arguments before the host's pid and start time.
    pub args: Vec<String>,
}

impl WatchdogCommand {
    /// This executable with `args` (for a binary that has a watchdog command of its own).
    pub fn current_exe(args: &[&str]) -> std::io::Result<Self> {
        Ok(Self {
            program: std::env::current_exe()?,
            args: args.iter().map(|a| (*a).to_owned()).collect(),
        })
    }
}

/// The held watchdog process: it stands by until this host is gone.
#[cfg(target_os = "linux")]
pub(crate) type Watchdog = planhost_exec::Watchdog;
/// No watchdog outside Linux.
#[cfg(not(target_os = "linux"))]
#[derive(Debug)]
pub(crate) struct Watchdog;

/// Ends what dead hosts left running, then starts this host's watchdog: `None` (logged) when it
/// cannot be started or none is configured; the host still serves, and the next host's start
/// ends its leftovers.
#[cfg(target_os = "linux")]
pub(crate) fn end_leftovers_and_watch(
    command: Option<&WatchdogCommand>,
) -> (Swept, Option<Watchdog>) {
    let left = planhost_exec::kill_leftovers(planhost_exec::Whose::DeadHosts);
    if left.cgroups + left.processes > 0 {
        tracing::warn!(
            cgroups = left.cgroups,
            processes = left.processes,
            "ended what a previous host left running"
        );
    }
    // This process starts children only through planhost-exec: a child of it that no run
    // marks and no run cgroup holds is a run's escapee.
    planhost_exec::claim_unmarked_orphans();
    let swept = Swept {
        cgroups: left.cgroups,
        processes: left.processes,
    };
    let Some(command) = command else {
        tracing::warn!("no watchdog configured: only the next host ends what this one leaves");
        return (swept, None);
    };
    let Some(me) = planhost_exec::HostIdentity::current() else {
        tracing::warn!("cannot read this process's identity; running without a watchdog");
        return (swept, None);
    };
    let mut args = command.args.clone();
    args.push(me.pid.to_string());
    args.push(me.start.to_string());
    match planhost_exec::Watchdog::spawn(&command.program, &args) {
        Ok(w) => (swept, Some(w)),
        Err(error) => {
            tracing::warn!(%error, program = %command.program.display(), "cannot start the watchdog");
            (swept, None)
        }
    }
}

#[cfg(not(target_os = "linux"))]
pub(crate) fn end_leftovers_and_watch(
    _command: Option<&WatchdogCommand>,
) -> (Swept, Option<Watchdog>) {
    (Swept::default(), None)
}

/// The watchdog's whole life, in the process a [`WatchdogCommand`] starts: waits until the host
/// `pid` (started at `start`, in clock ticks since boot) is gone, however it dies, then ends
/// what it left running.
#[cfg(target_os = "linux")]
pub fn run_watchdog(pid: i32, start: u64) -> Swept {
    let left = planhost_exec::watch_host(planhost_exec::HostIdentity { pid, start });
    Swept {
        cgroups: left.cgroups,
        processes: left.processes,
    }
}

/// No watchdog outside Linux.
#[cfg(not(target_os = "linux"))]
pub fn run_watchdog(_pid: i32, _start: u64) -> Swept {
    Swept::default()
}

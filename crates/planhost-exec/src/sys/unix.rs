//! Spawning on unix: own session, null stdin, explicit environment, optional cgroup.

use std::io::Write;
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::args::{Arg, shell_args};
use crate::error::{ExecError, Result};
use crate::runner::RUN_MARKER_VAR;
use crate::spec::CommandSpec;
#[cfg(target_os = "linux")]
use crate::spec::Containment;

#[cfg(target_os = "linux")]
pub(crate) use crate::tree::Tree;
#[cfg(not(target_os = "linux"))]
pub(crate) use crate::tree_pgroup::Tree;

/// A started shell and the handle that can end its whole tree.
#[derive(Debug)]
pub(crate) struct Spawned {
    pub(crate) child: Child,
    pub(crate) tree: Tree,
}

/// The shell process, however it was started.
#[derive(Debug)]
pub(crate) enum Child {
    /// std's spawn (fork and exec), reaped by tokio.
    Std(tokio::process::Child),
    /// Born in its run cgroup by `clone3` (see [`super::direct`]).
    #[cfg(target_os = "linux")]
    Direct(super::direct::Child),
}

impl Child {
    /// Waits for the shell to exit (cancel-safe; returns the same status once it has exited).
    pub(crate) async fn wait(&mut self) -> std::io::Result<std::process::ExitStatus> {
        match self {
            Self::Std(c) => c.wait().await,
            #[cfg(target_os = "linux")]
            Self::Direct(c) => c.wait().await,
        }
    }

    /// The parent's ends of stdout and stderr (once).
    pub(crate) fn take_output(
        &mut self,
    ) -> (
        Option<tokio::process::ChildStdout>,
        Option<tokio::process::ChildStderr>,
    ) {
        match self {
            Self::Std(c) => (c.stdout.take(), c.stderr.take()),
            #[cfg(target_os = "linux")]
            Self::Direct(c) => {
                let out = c.stdout.take().and_then(|fd| {
                    adopt(tokio::process::ChildStdout::from_std(
                        std::process::ChildStdout::from(fd),
                    ))
                });
                let err = c.stderr.take().and_then(|fd| {
                    adopt(tokio::process::ChildStderr::from_std(
                        std::process::ChildStderr::from(fd),
                    ))
                });
                (out, err)
            }
        }
    }

    pub(crate) fn id(&self) -> Option<u32> {
        match self {
            Self::Std(c) => c.id(),
            #[cfg(target_os = "linux")]
            Self::Direct(c) => u32::try_from(c.id()).ok(),
        }
    }

    /// Whether the shell, reaped by [`Child::wait`], provably started no process (see
    /// `direct::Child::alone`). Always false for std's spawn: tokio reaps that shell before the
    /// runner could look.
    #[cfg(target_os = "linux")]
    pub(crate) fn alone(&self) -> bool {
        match self {
            Self::Std(_) => false,
            Self::Direct(c) => c.alone(),
        }
    }
}

#[cfg(target_os = "linux")]
fn adopt<T>(r: std::io::Result<T>) -> Option<T> {
    r.map_err(|e| tracing::warn!(error = %e, "cannot read the shell's output"))
        .ok()
}

/// A marker unique to this run within this host's lifetime and across hosts.
fn next_marker() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    // Random per process (std's hasher keys are seeded from the OS), so a host that reuses a
    // pid never reuses a marker; no clock is needed for uniqueness.
    static SALT: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let salt = SALT.get_or_init(|| {
        use std::hash::{BuildHasher, Hasher};
        std::collections::hash_map::RandomState::new()
            .build_hasher()
            .finish()
    });
    // The host is named by its pid and start time, so a later host (or this host's watchdog)
    // can tell whose leftovers these are.
    #[cfg(target_os = "linux")]
    let host = crate::tree::HostIdentity::current().map_or_else(
        || std::process::id().to_string(),
        |h| format!("{}.{}", h.pid, h.start),
    );
    #[cfg(not(target_os = "linux"))]
    let host = std::process::id().to_string();
    format!("{host}-{n}-{salt:016x}")
}

pub(crate) fn spawn(spec: &CommandSpec) -> Result<Spawned> {
    #[cfg(target_os = "linux")]
    crate::tree::ensure_subreaper();
    let marker = next_marker();
    #[cfg(target_os = "linux")]
    let live = crate::tree::LiveMarker::register(&marker);
    #[cfg(target_os = "linux")]
    let cgroup = match spec.containment {
        Containment::Auto => crate::tree::RunCgroup::create(&marker),
        Containment::ProcfsOnly => None,
    };

    let args: Vec<String> = shell_args(spec.shell.dialect, &spec.command)
        .into_iter()
        .map(|arg| match arg {
            Arg::Plain(a) | Arg::Raw(a) => a,
        })
        .collect();

    #[cfg(target_os = "linux")]
    if let Some(cg) = &cgroup
        && let Some(plan) = super::direct::Plan::new(
            &spec.shell.executable,
            args.iter().map(std::ffi::OsStr::new),
            spec.env
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_str()))
                .chain([(RUN_MARKER_VAR, marker.as_str())]),
            &spec.cwd,
        )
    {
        match super::direct::spawn(plan, cg.dir_fd()) {
            Ok(child) => {
                let pidfd = child.pidfd();
                return Ok(started(Child::Direct(child), marker, live, cgroup, pidfd));
            }
            Err(super::direct::Refused::Failed(source)) => {
                return Err(ExecError::SpawnFailed {
                    program: spec.shell.executable.clone(),
                    source,
                });
            }
            Err(super::direct::Refused::Unsupported | super::direct::Refused::NotHere) => {}
        }
    }

    let mut cmd = tokio::process::Command::new(&spec.shell.executable);
    cmd.args(&args);
    cmd.env_clear()
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .env(RUN_MARKER_VAR, &marker)
        .current_dir(&spec.cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);

    #[cfg(target_os = "linux")]
    let procs = cgroup.as_ref().and_then(crate::tree::RunCgroup::procs_file);
    #[cfg(target_os = "linux")]
    let parent = crate::tree::spawner::parent_pid();
    // SAFETY: the closure runs in the forked child before exec. It only calls prctl(2),
    // getppid(2), setsid(2) and write(2) on an already-open file, all async-signal-safe, and
    // allocates nothing.
    unsafe {
        cmd.pre_exec(move || {
            #[cfg(target_os = "linux")]
            {
                // SIGKILL when the host dies, as on the clone3 path (see `tree::spawner`).
                libc::prctl(
                    libc::PR_SET_PDEATHSIG,
                    libc::SIGKILL as libc::c_ulong,
                    0,
                    0,
                    0,
                );
                if libc::getppid() != parent {
                    // The host died first (no allocation here: ESRCH, "no such process").
                    return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
                }
            }
            rustix::process::setsid()?;
            #[cfg(target_os = "linux")]
            if let Some(procs) = &procs {
                // "0" moves the writer itself; failure leaves the procfs walk in charge.
                let _ = (&*procs).write(b"0");
            }
            Ok(())
        });
    }
    // On the spawner thread, in this runtime (tokio reaps the child through its driver).
    #[cfg(target_os = "linux")]
    let child = match tokio::runtime::Handle::try_current() {
        Ok(runtime) => crate::tree::spawner::on_spawner(move || {
            let _entered = runtime.enter();
            crate::tree::forking(|| cmd.spawn())
        })
        .and_then(|spawned| spawned),
        Err(e) => Err(std::io::Error::other(e)),
    };
    #[cfg(not(target_os = "linux"))]
    let child = cmd.spawn();
    let child = child.map_err(|source| ExecError::SpawnFailed {
        program: spec.shell.executable.clone(),
        source,
    })?;
    #[cfg(target_os = "linux")]
    return Ok(started(Child::Std(child), marker, live, cgroup, None));
    #[cfg(not(target_os = "linux"))]
    return Ok(started(Child::Std(child), marker));
}

/// Starts following the tree of a freshly spawned shell; `born` is its pidfd when `clone3`
/// started it in `cgroup`.
fn started(
    child: Child,
    marker: String,
    #[cfg(target_os = "linux")] live: crate::tree::LiveMarker,
    #[cfg(target_os = "linux")] cgroup: Option<crate::tree::RunCgroup>,
    #[cfg(target_os = "linux")] born: Option<std::os::fd::OwnedFd>,
) -> Spawned {
    // A child that was not reaped yet always has its pid.
    let pid = child
        .id()
        .and_then(|p| i32::try_from(p).ok())
        .unwrap_or(i32::MAX);
    #[cfg(target_os = "linux")]
    let tree = Tree::new(
        pid,
        format!("{RUN_MARKER_VAR}={marker}"),
        live,
        cgroup,
        born,
    );
    #[cfg(not(target_os = "linux"))]
    let tree = Tree::new(pid);
    tracing::debug!(pid, marker, "spawned");
    Spawned { child, tree }
}

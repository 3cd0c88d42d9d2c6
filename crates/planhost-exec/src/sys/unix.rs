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
    pub(crate) child: tokio::process::Child,
    pub(crate) tree: Tree,
}

/// A marker unique to this run within this host's lifetime and across hosts.
fn next_marker() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    // Random per process (std's hasher keys are seeded from the OS), so a host that reuses a
    // pid never reuses a marker; no clock is needed for uniqueness.
    static SALT: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
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
    let cgroup = match spec.containment {
        Containment::Auto => crate::tree::RunCgroup::create(&marker),
        Containment::ProcfsOnly => None,
    };

    let mut cmd = tokio::process::Command::new(&spec.shell.executable);
    for arg in shell_args(spec.shell.dialect, &spec.command) {
        match arg {
            Arg::Plain(a) | Arg::Raw(a) => cmd.arg(a),
        };
    }
    cmd.env_clear()
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .env(RUN_MARKER_VAR, &marker)
        .current_dir(&spec.cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);

    #[cfg(target_os = "linux")]
    let procs = cgroup.as_ref().map(crate::tree::RunCgroup::procs_file);
    // SAFETY: the closure runs in the forked child before exec. It only calls setsid(2) and
    // write(2) on an already-open file, both async-signal-safe, and allocates nothing.
    unsafe {
        cmd.pre_exec(move || {
            rustix::process::setsid()?;
            #[cfg(target_os = "linux")]
            if let Some(procs) = &procs {
                // "0" moves the writer itself; failure leaves the procfs walk in charge.
                let _ = (&**procs).write(b"0");
            }
            Ok(())
        });
    }
    let child = cmd.spawn().map_err(|source| ExecError::SpawnFailed {
        program: spec.shell.executable.clone(),
        source,
    })?;
    let Some(pid) = child.id().and_then(|p| i32::try_from(p).ok()) else {
        // Only possible if it was already reaped, which nothing did yet.
        return Err(ExecError::SpawnFailed {
            program: spec.shell.executable.clone(),
            source: std::io::Error::other("spawned process has no pid"),
        });
    };
    #[cfg(target_os = "linux")]
    let tree = Tree::new(pid, format!("{RUN_MARKER_VAR}={marker}"), cgroup);
    #[cfg(not(target_os = "linux"))]
    let tree = Tree::new(pid);
    tracing::debug!(pid, marker, "spawned");
    Ok(Spawned { child, tree })
}

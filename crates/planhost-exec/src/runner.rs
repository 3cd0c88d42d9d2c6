//! The process runner: spawn, stream, time out or cancel, tear the tree down, summarise.

use std::path::Path;
use std::time::Instant;

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::error::{CwdInvalidReason, ExecError, Result};
use crate::pump::pump;
use crate::spec::{BackgroundPolicy, CommandSpec, ExitStatus, OutputChunk, RunResult};
use crate::sys;

/// The environment variable that marks every process of one run (see `docs/notes`).
pub const RUN_MARKER_VAR: &str = "PLANHOST_EXEC_RUN";

enum Ending {
    Exited(std::io::Result<std::process::ExitStatus>),
    TimedOut,
    Cancelled,
}

/// Runs one command to completion, streaming its output to `events`.
///
/// Before anything is spawned, the working directory and environment are checked
/// (`COMMAND_CWD_INVALID`, `COMMAND_ENV_INVALID`). The shell runs in its own session and process
/// group with stdin at `/dev/null` and exactly `spec.env` (plus the run marker). On timeout or
/// when `cancel` fires, the whole process tree is terminated — SIGTERM, a short grace, SIGKILL —
/// and reaped before the streams are closed and this returns.
pub async fn run(
    spec: CommandSpec,
    events: mpsc::Sender<OutputChunk>,
    cancel: CancellationToken,
) -> Result<RunResult> {
    check_cwd(&spec.cwd)?;
    check_env(&spec.env)?;
    let started = Instant::now();
    let sys::Spawned {
        mut child,
        mut tree,
    } = sys::spawn(&spec)?;
    let stop = CancellationToken::new();
    let (stdout, stderr) = child.take_output();
    let reader = tokio::spawn(pump(stdout, stderr, events, stop.clone()));

    let ending = tokio::select! {
        biased;
        status = child.wait() => Ending::Exited(status),
        () = tokio::time::sleep(spec.timeout.duration()) => Ending::TimedOut,
        () = cancel.cancelled() => Ending::Cancelled,
    };
    let (status, timed_out, cancelled) = match ending {
        Ending::Exited(status) => {
            tree.root_reaped();
            #[cfg(target_os = "linux")]
            if child.alone() {
                tree.root_was_alone();
            }
            match spec.background {
                BackgroundPolicy::Reap => {
                    tree.terminate().await;
                }
                BackgroundPolicy::Keep => tree.release(),
            }
            (status, false, false)
        }
        Ending::TimedOut => {
            tree.terminate().await;
            (child.wait().await, true, false)
        }
        Ending::Cancelled => {
            tree.terminate().await;
            (child.wait().await, false, true)
        }
    };
    // Every writer we know of is dead (or released): take what the pipes hold and stop.
    stop.cancel();
    let (stdout, stderr) = reader.await.unwrap_or_else(|e| {
        tracing::warn!(error = %e, "output reader task failed");
        Default::default()
    });
    let status = status.map_err(|source| ExecError::WaitFailed { source })?;
    Ok(RunResult {
        exit: exit_status(status),
        timed_out,
        cancelled,
        duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
        stdout,
        stderr,
    })
}

fn check_cwd(cwd: &Path) -> Result<()> {
    let reason = if !cwd.is_absolute() {
        CwdInvalidReason::NotAbsolute
    } else {
        match fs_err::metadata(cwd) {
            Err(_) => CwdInvalidReason::Missing,
            Ok(m) if !m.is_dir() => CwdInvalidReason::NotADirectory,
            Ok(_) => return Ok(()),
        }
    };
    Err(ExecError::CwdInvalid {
        path: cwd.to_path_buf(),
        reason,
    })
}

fn check_env(env: &[(String, String)]) -> Result<()> {
    match env
        .iter()
        .find(|(k, v)| k.is_empty() || k.contains(['=', '\0']) || v.contains('\0'))
    {
        Some((name, _)) => Err(ExecError::EnvInvalid { name: name.clone() }),
        None => Ok(()),
    }
}

#[cfg(unix)]
fn exit_status(status: std::process::ExitStatus) -> ExitStatus {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => ExitStatus::Code(code),
        (None, Some(sig)) => ExitStatus::Signal(sig),
        (None, None) => ExitStatus::None,
    }
}

#[cfg(not(unix))]
fn exit_status(status: std::process::ExitStatus) -> ExitStatus {
    status.code().map_or(ExitStatus::None, ExitStatus::Code)
}

//! Runs a command the way a person's terminal does: not as a descendant of the test process.
//!
//! Tests that play the agent hold `agent` connections, and the host refuses `approver` to any
//! process below an agent (`ROLE_APPROVER_REFUSED`, DESIGN decision 9). So a CLI a test runs *as
//! the person* is double-forked: `sh` starts it in the background and exits, the command is
//! re-parented past this process, and its output and status come back through files.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::poll_until;

/// What a detached run did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Detached {
    /// The exit code (`None` when a signal ended it).
    pub code: Option<i32>,
    /// Its standard output.
    pub stdout: String,
    /// Its standard error.
    pub stderr: String,
}

/// Runs `cmd`'s program with its arguments, environment changes and working directory,
/// detached from this process, and waits at most `bound` for it to exit. Standard input is
/// `/dev/null`. Panics, saying what, when it does not finish in time.
pub fn run_detached(cmd: &Command, bound: Duration) -> Detached {
    let dir = tempfile::tempdir()
        .unwrap_or_else(|e| panic!("a directory for the detached command's output: {e}"));
    let out: PathBuf = dir.path().to_owned();
    let mut sh = Command::new("sh");
    sh.arg("-c")
        .arg(
            r#"( "$@" >"$PLANHOST_DETACHED_OUT/out" 2>"$PLANHOST_DETACHED_OUT/err" </dev/null
                 echo $? >"$PLANHOST_DETACHED_OUT/rc.tmp"
                 mv "$PLANHOST_DETACHED_OUT/rc.tmp" "$PLANHOST_DETACHED_OUT/rc" ) >/dev/null 2>&1 </dev/null &"#,
        )
        .arg("sh")
        .arg(cmd.get_program())
        .args(cmd.get_args())
        .env("PLANHOST_DETACHED_OUT", &out)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    for (key, value) in cmd.get_envs() {
        match value {
            Some(value) => sh.env(key, value),
            None => sh.env_remove(key),
        };
    }
    if let Some(cwd) = cmd.get_current_dir() {
        sh.current_dir(cwd);
    }
    let what = format!("{:?} (detached)", cmd.get_program());
    let status = sh
        .status()
        .unwrap_or_else(|e| panic!("sh could not start {what}: {e}"));
    assert!(status.success(), "sh could not start {what}: {status}");
    let rc = poll_until(&format!("{what} to exit"), bound, || {
        fs_err::read_to_string(out.join("rc")).ok()
    });
    let read = |name: &str| fs_err::read_to_string(out.join(name)).unwrap_or_default();
    Detached {
        code: rc.trim().parse().ok(),
        stdout: read("out"),
        stderr: read("err"),
    }
}

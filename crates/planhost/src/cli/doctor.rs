//! `planhost doctor`: one check a line, each ok, idle or FAIL (or all as JSON), of what a working
//! host needs: the state directory and its permissions, the lock, the socket answering, plan
//! files that no approval points to, Claude Code's hooks, a shell to run commands in, and SQLite.
//! No host running is idle, not a failure: pi's extension and Claude Code's hook start one when
//! they need it.

use std::io::Write;
use std::process::ExitCode;

use planhost_protocol::{Empty, methods};
use serde::Serialize;

use planhost_service::host::{Paths, diagnostics};

use super::{EXIT_UNREACHABLE, Failure, Output, READER, call, connect, print_json};

/// One line of `doctor`: what was checked, whether it is fine, and what was found.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Check {
    pub(crate) name: &'static str,
    /// Nothing is wrong (`ok` or `idle`).
    pub(crate) ok: bool,
    pub(crate) status: Status,
    pub(crate) detail: String,
}

/// How a check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Status {
    /// It works.
    Ok,
    /// Nothing runs yet, and that is fine: it starts when it is needed.
    Idle,
    /// Something is wrong; the detail says what to do.
    Fail,
}

impl Check {
    fn new(name: &'static str, ok: bool, detail: String) -> Self {
        Self {
            name,
            ok,
            status: if ok { Status::Ok } else { Status::Fail },
            detail,
        }
    }

    fn idle(name: &'static str, detail: String) -> Self {
        Self {
            name,
            ok: true,
            status: Status::Idle,
            detail,
        }
    }

    /// The word in the first column of `doctor`'s text.
    pub(crate) fn label(&self) -> &'static str {
        match self.status {
            Status::Ok => "ok  ",
            Status::Idle => "idle",
            Status::Fail => "FAIL",
        }
    }
}

pub(crate) fn doctor(paths: &Paths, out: Output) -> anyhow::Result<ExitCode> {
    let checks = checks(paths);
    let healthy = checks.iter().all(|c| c.ok);
    if out.json {
        print_json(&serde_json::json!({ "healthy": healthy, "checks": checks }))?;
    } else {
        let mut o = anstream::stdout().lock();
        for c in &checks {
            writeln!(o, "{} {:<16} {}", c.label(), c.name, c.detail)?;
        }
    }
    Ok(if healthy {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// Every check `doctor` makes (blocking: it connects to the socket); the web page's
/// diagnostics panel shows the same.
pub(crate) fn checks(paths: &Paths) -> Vec<Check> {
    let mut checks = Vec::new();
    let dir = &paths.state_dir;
    let unsafe_dir = planhost_service::host::state_dir_problem(dir);
    if dir.is_dir() {
        checks.push(Check::new(
            "state directory",
            true,
            dir.display().to_string(),
        ));
        checks.push(Check::new(
            "permissions",
            unsafe_dir.is_none(),
            unsafe_dir.unwrap_or_else(|| "the state directory is this user's alone".into()),
        ));
    } else {
        checks.push(Check::idle(
            "state directory",
            format!("{} (not made yet: the first host makes it)", dir.display()),
        ));
        checks.push(match unsafe_dir {
            Some(problem) => Check::new("permissions", false, problem),
            None => Check::idle(
                "permissions",
                "nothing to check until the state directory exists".into(),
            ),
        });
    }
    let holder = diagnostics::lock_holder(dir);
    let reached =
        connect(paths, READER).and_then(|mut c| call::<methods::AppVersion>(&mut c, Empty {}));
    let unreachable = matches!(
        reached.as_ref().err().and_then(|e| e.downcast_ref::<Failure>()),
        Some(f) if f.status == EXIT_UNREACHABLE
    );
    checks.push(match &holder {
        Some(pid) => Check::new("lock", true, format!("held by planhost pid {pid}")),
        None => Check::idle(
            "lock",
            "not held: no host is running for this state directory".into(),
        ),
    });
    let socket = paths.socket.display();
    checks.push(match (&reached, &holder) {
        (Ok(v), _) => Check::new(
            "socket",
            true,
            format!(
                "{socket} answers: planhost {} protocol v{}",
                v.version, v.protocol_version
            ),
        ),
        (Err(_), Some(pid)) if unreachable => Check::new(
            "socket",
            false,
            format!(
                "{socket}: no answer, but planhost pid {pid} holds this state directory: pass \
                 the socket it serves on (--socket), or stop it (`planhost stop`)"
            ),
        ),
        // Nobody serves: a host starts on demand, so this is not a failure.
        (Err(_), None) if unreachable => Check::idle(
            "socket",
            format!(
                "{socket}: no host running; pi's extension and Claude Code's hook start one when \
                 they need it (or start one yourself: `planhost serve`)"
            ),
        ),
        (Err(e), _) => Check::new("socket", false, format!("{socket}: {e}")),
    });
    if reached.is_ok() {
        let scanned = connect(paths, READER)
            .and_then(|mut c| call::<methods::PlansOrphans>(&mut c, Empty {}));
        checks.push(match scanned {
            Ok(found) if !found.unreadable.is_empty() => Check::new(
                "plan files",
                false,
                format!(
                    "cannot compare the plan directories with the approvals in {}",
                    found
                        .unreadable
                        .iter()
                        .map(|u| format!("{} ({}: {})", u.workspace_root, u.code, u.message))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ),
            Ok(found) if found.items.is_empty() => Check::new(
                "plan files",
                true,
                "every file in the sessions' .pi/plan/ and .planhost/plan/ belongs to an approval"
                    .into(),
            ),
            // Harmless (nothing points at them), so listed rather than failed.
            Ok(found) => Check::new(
                "plan files",
                true,
                format!(
                    "{} orphan artifact(s), complete files no approval points to: {}",
                    found.items.len(),
                    found
                        .items
                        .iter()
                        .map(|o| format!("{}/{}", o.workspace_root, o.relative_path))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ),
            Err(e) => Check::new(
                "plan files",
                false,
                format!("cannot compare the plan directories with the approvals: {e}"),
            ),
        });
    }
    let (ok, detail) = super::claude::doctor_check();
    checks.push(Check::new("Claude Code", ok, detail));
    let effective = diagnostics::effective_shell();
    checks.push(Check::new(
        "shells",
        effective.is_ok(),
        match &effective {
            Ok((id, executable)) => format!("{id} at {}", executable.display()),
            Err((code, message)) => format!("{code}: {message}"),
        },
    ));
    checks.push(Check::new(
        "sqlite",
        true,
        match &reached {
            Ok(v) => format!("{} (schema v{})", v.sqlite_version, v.schema_version),
            Err(_) => format!("{} (linked)", diagnostics::sqlite_version()),
        },
    ));
    checks
}

//! `planhost doctor`: one check a line, each ok or FAIL (or all as JSON), of what a working host
//! needs: the state directory and its permissions, the lock, the socket answering, plan files
//! that no approval points to, a shell to run commands in, and SQLite.

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
    pub(crate) ok: bool,
    pub(crate) detail: String,
}

pub(crate) fn doctor(paths: &Paths, out: Output) -> anyhow::Result<ExitCode> {
    let checks = checks(paths);
    let healthy = checks.iter().all(|c| c.ok);
    if out.json {
        print_json(&serde_json::json!({ "healthy": healthy, "checks": checks }))?;
    } else {
        let mut o = anstream::stdout().lock();
        for c in &checks {
            writeln!(
                o,
                "{} {:<16} {}",
                if c.ok { "ok  " } else { "FAIL" },
                c.name,
                c.detail
            )?;
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
    checks.push(Check {
        name: "state directory",
        ok: dir.is_dir(),
        detail: format!(
            "{}{}",
            dir.display(),
            if dir.is_dir() {
                ""
            } else {
                " (missing: `planhost serve` creates it)"
            }
        ),
    });
    let unsafe_dir = planhost_service::host::state_dir_problem(dir);
    checks.push(Check {
        name: "permissions",
        ok: unsafe_dir.is_none(),
        detail: unsafe_dir.unwrap_or_else(|| {
            if dir.is_dir() {
                "the state directory is this user's alone".into()
            } else {
                "nothing to check until the state directory exists".into()
            }
        }),
    });
    let holder = diagnostics::lock_holder(dir);
    checks.push(Check {
        name: "lock",
        ok: holder.is_some(),
        detail: match &holder {
            Some(pid) => format!("held by planhost pid {pid}"),
            None => "not held: no host is serving this state directory".into(),
        },
    });
    let reached =
        connect(paths, READER).and_then(|mut c| call::<methods::AppVersion>(&mut c, Empty {}));
    checks.push(Check {
        name: "socket",
        ok: reached.is_ok(),
        detail: match &reached {
            Ok(v) => format!(
                "{} answers: planhost {} protocol v{}",
                paths.socket.display(),
                v.version,
                v.protocol_version
            ),
            Err(e) => match e.downcast_ref::<Failure>() {
                Some(f) if f.status == EXIT_UNREACHABLE && holder.is_some() => format!(
                    "{}: no answer, but planhost pid {} holds this state directory: pass the socket it serves on (--socket)",
                    paths.socket.display(),
                    holder.as_deref().unwrap_or("?")
                ),
                Some(f) if f.status == EXIT_UNREACHABLE => {
                    format!(
                        "{}: no host answers; start one with `planhost serve` (pi's extension \
                         and Claude Code's hook start one by themselves when they need it)",
                        paths.socket.display()
                    )
                }
                Some(_) | None => format!("{}: {e}", paths.socket.display()),
            },
        },
    });
    if reached.is_ok() {
        let scanned = connect(paths, READER)
            .and_then(|mut c| call::<methods::PlansOrphans>(&mut c, Empty {}));
        checks.push(match scanned {
            Ok(found) if !found.unreadable.is_empty() => Check {
                name: "plan files",
                ok: false,
                detail: format!(
                    "cannot compare .pi/plan/ with the approvals in {}",
                    found
                        .unreadable
                        .iter()
                        .map(|u| format!("{} ({}: {})", u.workspace_root, u.code, u.message))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            },
            Ok(found) if found.items.is_empty() => Check {
                name: "plan files",
                ok: true,
                detail: "every file in the sessions' .pi/plan/ belongs to an approval".into(),
            },
            // Harmless (nothing points at them), so listed rather than failed.
            Ok(found) => Check {
                name: "plan files",
                ok: true,
                detail: format!(
                    "{} orphan artifact(s), complete files no approval points to: {}",
                    found.items.len(),
                    found
                        .items
                        .iter()
                        .map(|o| format!("{}/{}", o.workspace_root, o.relative_path))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            },
            Err(e) => Check {
                name: "plan files",
                ok: false,
                detail: format!("cannot compare .pi/plan/ with the approvals: {e}"),
            },
        });
    }
    let (ok, detail) = super::claude::doctor_check();
    checks.push(Check {
        name: "Claude Code",
        ok,
        detail,
    });
    let effective = diagnostics::effective_shell();
    checks.push(Check {
        name: "shells",
        ok: effective.is_ok(),
        detail: match &effective {
            Ok((id, executable)) => format!("{id} at {}", executable.display()),
            Err((code, message)) => format!("{code}: {message}"),
        },
    });
    checks.push(Check {
        name: "sqlite",
        ok: true,
        detail: match &reached {
            Ok(v) => format!("{} (schema v{})", v.sqlite_version, v.schema_version),
            Err(_) => format!("{} (linked)", diagnostics::sqlite_version()),
        },
    });
    checks
}

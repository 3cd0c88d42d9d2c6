//! The commands people type. Every one talks to the running host over its socket, never to the
//! database behind its back.

// This module writes for people on stdout; `serve --stdio` never runs it.
#![allow(clippy::print_stdout)]

use std::io::{IsTerminal, Write};
use std::process::ExitCode;

use planhost_client::{Client, ClientError};
use planhost_core::{
    ApprovalAction, ApprovalStatus, ErrorCode, PublicationStatus, Role, TargetPermissionMode,
    Timestamp,
};
use planhost_protocol::{
    ApprovalInfo, Empty, Method, PlansFilter, ProposalRef, PublicationsFilter, ResolveOutcome,
    ResolvePlanParams, ResolvePublicationParams, SessionsFilter, methods,
};
use serde::Serialize;

use planhost_service::host::{Paths, diagnostics};

/// `--json` on every read command.
#[derive(Debug, Clone, Copy, clap::Args)]
pub(crate) struct Output {
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

/// Exit status when no host answers on the socket.
const EXIT_UNREACHABLE: u8 = 4;

/// An error that already carries its exit status.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub(crate) struct Failure {
    code: ErrorCode,
    message: String,
    status: u8,
}

fn failure(error: ClientError) -> anyhow::Error {
    let status = match error {
        ClientError::Rpc(_) | ClientError::Json(_) => 1,
        ClientError::Io(_) | ClientError::Closed => EXIT_UNREACHABLE,
    };
    let message = match &error {
        ClientError::Rpc(e) => e.message.clone(),
        ClientError::Io(_) | ClientError::Closed | ClientError::Json(_) => error.to_string(),
    };
    Failure {
        code: error.code(),
        message,
        status,
    }
    .into()
}

/// Prints an error with its code and returns the documented exit status.
pub(crate) fn report(error: &anyhow::Error) -> ExitCode {
    match error.downcast_ref::<Failure>() {
        Some(f) => {
            eprintln!("planhost: error {}: {}", f.code, f.message);
            ExitCode::from(f.status)
        }
        None => {
            eprintln!("planhost: {error:#}");
            ExitCode::FAILURE
        }
    }
}

/// What a command that only reads declares: a read works from anywhere, an agent's bash too.
const READER: &[Role] = &[Role::Observer];
/// What a command that answers for a person declares. The host refuses `approver` to a process
/// that runs under an agent (`ROLE_APPROVER_REFUSED`), so only these commands can meet that.
const APPROVER: &[Role] = &[Role::Approver, Role::Observer];

fn connect(paths: &Paths, roles: &[Role]) -> anyhow::Result<Client> {
    let mut client = Client::connect_socket(&paths.socket).map_err(|e| {
        anyhow::Error::from(Failure {
            code: ErrorCode::HostUnreachable,
            message: format!(
                "no planhost is serving on {} ({e}); start one with `planhost serve`",
                paths.socket.display()
            ),
            status: EXIT_UNREACHABLE,
        })
    })?;
    // A person at a terminal: the CLI answers approvals and reads; it never acts as the agent,
    // and declares `approver` only for the commands that answer.
    client.initialize("planhost-cli", roles).map_err(failure)?;
    Ok(client)
}

fn call<M: Method>(c: &mut Client, p: M::Params) -> anyhow::Result<M::Result> {
    c.call::<M>(p).map_err(failure)
}

fn print_json(value: &impl Serialize) -> anyhow::Result<ExitCode> {
    let mut out = std::io::stdout().lock();
    serde_json::to_writer_pretty(&mut out, value)?;
    writeln!(out)?;
    Ok(ExitCode::SUCCESS)
}

fn now() -> Timestamp {
    planhost_core::Clock::now(&planhost_service::SystemClock)
}

/// "in 29m 12s", "3m 0s ago": whole seconds, the largest units first.
fn relative(deadline: Timestamp, now: Timestamp) -> String {
    let ms = now.until(deadline);
    let whole = jiff::SignedDuration::from_secs(ms.abs() / 1000);
    let text = format!("{whole:#}");
    if ms > 0 {
        format!("in {text}")
    } else {
        format!("{text} ago")
    }
}

/// Bold on a terminal, plain text elsewhere (anstream strips styles that cannot be shown).
fn bold(text: &str) -> String {
    let style = anstyle::Style::new().bold();
    format!("{style}{text}{style:#}")
}

fn all_pending() -> Option<Vec<ApprovalStatus>> {
    Some(vec![ApprovalStatus::Pending])
}

pub(crate) fn status(paths: &Paths, out: Output) -> anyhow::Result<ExitCode> {
    let mut c = connect(paths, READER)?;
    let version = call::<methods::AppVersion>(&mut c, Empty {})?;
    let health = call::<methods::AppHealth>(&mut c, Empty {})?;
    let sessions = call::<methods::SessionsList>(
        &mut c,
        SessionsFilter {
            workspace_root: None,
            limit: Some(10_000),
        },
    )?;
    let pending = call::<methods::PlansList>(
        &mut c,
        PlansFilter {
            session_id: None,
            status: all_pending(),
            limit: Some(10_000),
        },
    )?;
    let publications = call::<methods::PublicationsList>(
        &mut c,
        PublicationsFilter {
            session_id: None,
            status: Some(vec![PublicationStatus::Pending]),
            limit: Some(10_000),
        },
    )?;
    if out.json {
        return print_json(&serde_json::json!({
            "version": version, "health": health,
            "sessions": sessions.items.len(), "pendingApprovals": pending.items.len(),
            "pendingPublications": publications.items.len(),
        }));
    }
    let mut o = anstream::stdout().lock();
    writeln!(
        o,
        "planhost {} (protocol v{}, schema v{}, SQLite {})",
        version.version, version.protocol_version, version.schema_version, version.sqlite_version
    )?;
    writeln!(o, "state     {}", version.state_dir)?;
    writeln!(o, "socket    {}", paths.socket.display())?;
    writeln!(
        o,
        "host      pid {}, up {}s",
        health.pid,
        health.uptime_ms / 1000
    )?;
    writeln!(o, "sessions  {}", sessions.items.len())?;
    writeln!(
        o,
        "pending   {} plan approval(s), {} publication(s)",
        pending.items.len(),
        publications.items.len()
    )?;
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn plans(paths: &Paths, pending: bool, out: Output) -> anyhow::Result<ExitCode> {
    let mut c = connect(paths, READER)?;
    let list = call::<methods::PlansList>(
        &mut c,
        PlansFilter {
            session_id: None,
            status: if pending { all_pending() } else { None },
            limit: Some(10_000),
        },
    )?;
    if out.json {
        return print_json(&list);
    }
    let mut o = anstream::stdout().lock();
    if list.items.is_empty() {
        writeln!(o, "no {}plans", if pending { "pending " } else { "" })?;
        return Ok(ExitCode::SUCCESS);
    }
    let now = now();
    writeln!(
        o,
        "{:<10} {:<12} {:<18} TITLE",
        "PROPOSAL", "STATUS", "EXPIRES"
    )?;
    for a in &list.items {
        let expires = match a.status {
            planhost_core::ApprovalStatus::Pending => relative(a.expires_at, now),
            planhost_core::ApprovalStatus::Approved
            | planhost_core::ApprovalStatus::Rejected
            | planhost_core::ApprovalStatus::Expired
            | planhost_core::ApprovalStatus::Interrupted => "-".into(),
        };
        writeln!(
            o,
            "{:<10} {:<12} {:<18} {}",
            short(a.proposal_id.as_str()),
            a.status.as_str(),
            expires,
            a.title
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The last 8 characters of a UUID v7: its random part, unique enough to type. (The first 8 are
/// the high bits of the creation time, shared by every plan of the same minute or so.)
fn short(id: &str) -> &str {
    id.len()
        .checked_sub(8)
        .and_then(|start| id.get(start..))
        .unwrap_or(id)
}

pub(crate) fn show(paths: &Paths, proposal: &str, out: Output) -> anyhow::Result<ExitCode> {
    let mut c = connect(paths, READER)?;
    let detail = call::<methods::PlansGet>(
        &mut c,
        ProposalRef {
            proposal_id: proposal.into(),
        },
    )?;
    if out.json {
        return print_json(&detail);
    }
    let a = &detail.approval;
    let mut o = anstream::stdout().lock();
    let styled = std::io::stdout().is_terminal();
    writeln!(o, "{}", bold(&a.title))?;
    writeln!(o, "question  {}", a.question)?;
    writeln!(o, "file      {}", a.artifact_path)?;
    if !detail.artifact_intact {
        writeln!(
            o,
            "WARNING   the file changed after it was submitted; approving is refused \
             (PLAN_ARTIFACT_CHANGED). What follows is what was submitted."
        )?;
    }
    writeln!(o, "status    {}", a.status.as_str())?;
    let expiry = match a.status {
        planhost_core::ApprovalStatus::Pending => {
            format!("expires {}", relative(a.expires_at, now()))
        }
        planhost_core::ApprovalStatus::Approved
        | planhost_core::ApprovalStatus::Rejected
        | planhost_core::ApprovalStatus::Expired
        | planhost_core::ApprovalStatus::Interrupted => {
            let by = a.resolved_by.as_ref().map(|r| r.client.as_str());
            match (a.error_code, by) {
                (Some(code), _) => format!("resolved ({code})"),
                (None, Some(client)) => format!("resolved by {client}"),
                (None, None) => "resolved".into(),
            }
        }
    };
    writeln!(o, "expiry    {expiry}")?;
    writeln!(o, "proposal  {}", a.proposal_id)?;
    writeln!(
        o,
        "sha256    {} ({} bytes)",
        a.artifact_sha256, a.artifact_size_bytes
    )?;
    writeln!(o)?;
    if styled {
        render_markdown(&mut o, &detail.markdown)?;
    } else {
        // Piped or redirected: the exact plan, byte for byte.
        o.write_all(detail.markdown.as_bytes())?;
        if !detail.markdown.ends_with('\n') {
            writeln!(o)?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// A terminal rendering: headings in bold, everything else as written (the exact plan is the
/// file; this is only for reading).
fn render_markdown(o: &mut impl Write, markdown: &str) -> std::io::Result<()> {
    let mut in_fence = false;
    for line in markdown.lines() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            in_fence = !in_fence;
            writeln!(o, "{line}")?;
        } else if !in_fence && trimmed.starts_with('#') {
            writeln!(o, "{}", bold(trimmed.trim_start_matches('#').trim()))?;
        } else {
            writeln!(o, "{line}")?;
        }
    }
    Ok(())
}

fn resolve(
    paths: &Paths,
    proposal: &str,
    action: ApprovalAction,
    mode: Option<TargetPermissionMode>,
    feedback: Option<String>,
) -> anyhow::Result<ApprovalInfo> {
    let mut c = connect(paths, APPROVER)?;
    let detail = call::<methods::PlansGet>(
        &mut c,
        ProposalRef {
            proposal_id: proposal.into(),
        },
    )?;
    let a = detail.approval;
    let params = ResolvePlanParams {
        proposal_id: a.proposal_id,
        session_id: a.session_id,
        turn_id: a.turn_id,
        tool_call_id: a.tool_call_id,
        version: Some(a.version),
        artifact_sha256: Some(a.artifact_sha256),
        action,
        target_permission_mode: mode,
        feedback,
    };
    call::<methods::PlansResolve>(&mut c, params)
}

pub(crate) fn approve(
    paths: &Paths,
    proposal: &str,
    mode: TargetPermissionMode,
) -> anyhow::Result<ExitCode> {
    let a = resolve(paths, proposal, ApprovalAction::Approve, Some(mode), None)?;
    println!(
        "approved {} \"{}\": session now in agent mode with permission {}, execution {} queued",
        short(a.proposal_id.as_str()),
        a.title,
        mode.as_str(),
        a.execution_id.as_ref().map_or("-", |e| e.as_str())
    );
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn reject(
    paths: &Paths,
    proposal: &str,
    feedback: Option<String>,
) -> anyhow::Result<ExitCode> {
    let a = resolve(paths, proposal, ApprovalAction::Reject, None, feedback)?;
    println!(
        "rejected {} \"{}\": the session stays in plan mode",
        short(a.proposal_id.as_str()),
        a.title
    );
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn shells(paths: &Paths, out: Output) -> anyhow::Result<ExitCode> {
    let mut c = connect(paths, READER)?;
    let catalog = call::<methods::ShellsCatalog>(&mut c, Empty {})?;
    if out.json {
        return print_json(&catalog);
    }
    let mut o = anstream::stdout().lock();
    writeln!(o, "platform {}", catalog.platform)?;
    for s in &catalog.options {
        let marks = [(s.is_default, "default"), (!s.available, "unavailable")]
            .iter()
            .filter(|(on, _)| *on)
            .map(|(_, m)| *m)
            .collect::<Vec<_>>()
            .join(", ");
        writeln!(
            o,
            "  {:<20} {:<22} {:<10} {}",
            s.id.as_str(),
            s.label,
            s.dialect.as_str(),
            marks
        )?;
    }
    match &catalog.effective {
        Some(e) => writeln!(
            o,
            "effective {} ({}){}",
            e.id.as_str(),
            e.dialect.as_str(),
            if e.fallback { ", fallback" } else { "" }
        )?,
        None => writeln!(o, "effective none: Bash would fail with SHELL_NOT_FOUND")?,
    }
    Ok(ExitCode::SUCCESS)
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Check {
    name: &'static str,
    ok: bool,
    detail: String,
}

pub(crate) fn doctor(paths: &Paths, out: Output) -> anyhow::Result<ExitCode> {
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
                        "{}: no host answers; start one with `planhost serve`",
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

pub(crate) fn publications(paths: &Paths, pending: bool, out: Output) -> anyhow::Result<ExitCode> {
    let mut c = connect(paths, READER)?;
    let list = call::<methods::PublicationsList>(
        &mut c,
        PublicationsFilter {
            session_id: None,
            status: pending.then(|| vec![PublicationStatus::Pending]),
            limit: Some(10_000),
        },
    )?;
    if out.json {
        return print_json(&list);
    }
    let mut o = anstream::stdout().lock();
    if list.items.is_empty() {
        writeln!(
            o,
            "no {}publications",
            if pending { "pending " } else { "" }
        )?;
        return Ok(ExitCode::SUCCESS);
    }
    writeln!(o, "{:<10} {:<12} {:<5} PATH", "ID", "STATUS", "REV")?;
    for p in &list.items {
        writeln!(
            o,
            "{:<10} {:<12} {:<5} {}",
            short(p.publication_id.as_str()),
            p.status.as_str(),
            p.revision,
            p.relative_path
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn publish(paths: &Paths, publication: &str, reject: bool) -> anyhow::Result<ExitCode> {
    let mut c = connect(paths, APPROVER)?;
    let action = if reject {
        ApprovalAction::Reject
    } else {
        ApprovalAction::Approve
    };
    // The host resolves a typed prefix or suffix, and says so when it is ambiguous.
    let result = call::<methods::PublicationsResolve>(
        &mut c,
        ResolvePublicationParams {
            publication_id: publication.into(),
            action,
        },
    )?;
    match (result.outcome, &result.next) {
        (ResolveOutcome::Reapprove, Some(next)) => println!(
            "the name was taken while writing; approval revoked. New pending publication {} for {}",
            short(next.publication_id.as_str()),
            next.relative_path
        ),
        (outcome, _) => println!("{}: {}", outcome.as_str(), result.publication.relative_path),
    }
    Ok(match result.outcome {
        ResolveOutcome::Conflict => ExitCode::FAILURE,
        ResolveOutcome::Completed | ResolveOutcome::Rejected | ResolveOutcome::Reapprove => {
            ExitCode::SUCCESS
        }
    })
}

/// `planhost web`: the running host's page address with its token (and a browser, unless
/// `--no-open`). `--rotate` makes a new token first; pages opened with the old one are refused.
pub(crate) fn web(paths: &Paths, no_open: bool, rotate: bool) -> anyhow::Result<ExitCode> {
    let mut file = crate::web::WebFile::read(&paths.state_dir).map_err(|_| {
        anyhow::anyhow!(
            "the host for {} serves no web page: start it with `planhost serve --web`",
            paths.state_dir.display()
        )
    })?;
    if rotate {
        file.token = crate::web::new_token()?;
        file.write(&paths.state_dir)?;
    }
    let answers = file
        .socket_addr()
        .and_then(|a| {
            std::net::TcpStream::connect_timeout(&a, std::time::Duration::from_secs(2)).ok()
        })
        .is_some();
    if !answers {
        anyhow::bail!(
            "no web page answers at {} (the host for {} is not running with --web): start it with `planhost serve --web`",
            file.url,
            paths.state_dir.display()
        );
    }
    let url = file.open_url();
    println!("{url}");
    if let Some(fallback) = file.fallback_url() {
        eprintln!("(if your browser cannot open planhost.localhost: {fallback})");
    }
    if !no_open {
        // Best effort: a machine without a desktop still has the printed address.
        let _ = std::process::Command::new("xdg-open")
            .arg(&url)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn();
    }
    Ok(ExitCode::SUCCESS)
}

/// `planhost stop`: ends the host that holds this state directory, cleanly. It interrupts its
/// pending approvals and queued or running executions exactly as a restart would (its clients
/// are told), kills its command trees, and releases the lock.
pub(crate) fn stop(paths: &Paths) -> anyhow::Result<ExitCode> {
    let lock = paths.lock();
    let Some(holder) = planhost_service::host::StateLock::holder(&lock) else {
        return Err(Failure {
            code: ErrorCode::HostUnreachable,
            message: format!(
                "no planhost is running for {} (nothing holds {}); nothing to stop",
                paths.state_dir.display(),
                lock.display()
            ),
            status: EXIT_UNREACHABLE,
        }
        .into());
    };
    let pid = holder
        .parse::<i32>()
        .ok()
        .and_then(rustix::process::Pid::from_raw)
        .ok_or_else(|| {
            anyhow::anyhow!(
                "{} is held, but names no pid ({holder:?}); run `planhost doctor`",
                lock.display()
            )
        })?;
    rustix::process::kill_process(pid, rustix::process::Signal::TERM).map_err(|e| {
        anyhow::anyhow!("could not signal the host (pid {holder}): {e}; is it another user's?")
    })?;
    // The host lets its connections kill their command trees (10 s at most), then exits.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while planhost_service::host::StateLock::holder(&lock).is_some() {
        if std::time::Instant::now() > deadline {
            anyhow::bail!(
                "the host (pid {holder}) was asked to stop but still holds {} after 20 s; \
                 `kill -9 {holder}` ends it (the next start interrupts its work)",
                lock.display()
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    println!(
        "planhost: stopped the host (pid {holder}) serving {}; its pending approvals and executions \
         were interrupted, as on a restart",
        paths.state_dir.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// `planhost preset [NAME] [--session ID]`: the tool-policy preset, shown or chosen: the host's
/// default for every session without its own, or one session's.
pub(crate) fn preset(
    paths: &Paths,
    name: Option<planhost_core::PolicyPreset>,
    session: Option<&str>,
) -> anyhow::Result<ExitCode> {
    let roles = if name.is_some() { APPROVER } else { READER };
    let mut c = connect(paths, roles)?;
    let session_id = match session {
        None => None,
        Some(typed) => {
            let list = call::<methods::SessionsList>(
                &mut c,
                SessionsFilter {
                    workspace_root: None,
                    limit: Some(10_000),
                },
            )?;
            let ids = list.items.iter().map(|s| s.id.as_str());
            match planhost_core::match_id(typed, ids) {
                planhost_core::IdMatch::One(id) => Some(id),
                planhost_core::IdMatch::None => {
                    return Err(Failure {
                        code: ErrorCode::SessionNotFound,
                        message: format!("no session {typed:?} (`planhost status` lists them)"),
                        status: 1,
                    }
                    .into());
                }
                planhost_core::IdMatch::Ambiguous(all) => {
                    return Err(Failure {
                        code: ErrorCode::IdAmbiguous,
                        message: format!("{typed:?} matches {}; type more of it", all.join(", ")),
                        status: 1,
                    }
                    .into());
                }
            }
        }
    };
    let default = |c: &mut Client| -> anyhow::Result<String> {
        let settings = call::<methods::SettingsGet>(c, Empty {})?;
        Ok(settings
            .default_policy_preset
            .map_or("host".to_owned(), |p| p.as_str().to_owned()))
    };
    match (name, session_id) {
        (None, None) => println!("host default preset: {}", default(&mut c)?),
        (None, Some(id)) => {
            let s = call::<methods::SessionsGet>(
                &mut c,
                planhost_protocol::SessionRef {
                    session_id: id.clone().into(),
                },
            )?;
            match s.policy_preset {
                Some(p) => println!("session {} preset: {p}", short(&id)),
                None => println!(
                    "session {} preset: the host default ({})",
                    short(&id),
                    default(&mut c)?
                ),
            }
        }
        (Some(p), None) => {
            let set = call::<methods::SettingsSet>(
                &mut c,
                planhost_protocol::SettingsPatch {
                    default_permission_mode: None,
                    default_shell: None,
                    default_policy_preset: Some(Some(p)),
                },
            )?;
            let now = set.default_policy_preset.map_or("host", |p| p.as_str());
            println!(
                "host default preset: {now} (from the next turn of every session without its own)"
            );
        }
        (Some(p), Some(id)) => {
            call::<methods::SessionsConfigure>(
                &mut c,
                planhost_protocol::ConfigureParams {
                    session_id: id.clone().into(),
                    permission_mode: None,
                    shell_id: None,
                    policy_preset: Some(Some(p)),
                    provider: None,
                    model: None,
                },
            )?;
            println!("session {} preset: {p} (from its next turn)", short(&id));
        }
    }
    Ok(ExitCode::SUCCESS)
}

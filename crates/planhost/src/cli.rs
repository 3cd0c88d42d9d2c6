//! The commands people type. Every one talks to the running host over its socket, never to the
//! database behind its back.

// This module writes for people on stdout; `serve --stdio` never runs it.
#![allow(clippy::print_stdout)]

use std::io::{IsTerminal, Write};
use std::process::ExitCode;

use anyhow::Context as _;
use planhost_client::{Client, ClientError};
use planhost_core::{ApprovalAction, TargetPermissionMode, Timestamp};
use planhost_protocol::{
    ApprovalInfo, ApprovalList, Empty, HealthResult, PlanDetail, PlansFilter, ProposalRef,
    ResolvePlanParams, SessionList, ShellCatalog, VersionResult,
};
use serde::Serialize;

use crate::paths::Paths;

/// `--json` on every read command.
#[derive(Debug, Clone, Copy, clap::Args)]
pub struct Output {
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

/// Exit status when no host answers on the socket.
const EXIT_UNREACHABLE: u8 = 4;

/// An error that already carries its exit status.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct Failure {
    code: String,
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
        code: error.code().to_owned(),
        message,
        status,
    }
    .into()
}

/// Prints an error with its code and returns the documented exit status.
pub fn report(error: &anyhow::Error) -> ExitCode {
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

fn connect(paths: &Paths) -> anyhow::Result<Client> {
    let mut client = Client::connect_socket(&paths.socket).map_err(|e| {
        anyhow::Error::from(Failure {
            code: "HOST_UNREACHABLE".into(),
            message: format!(
                "no planhost is serving on {} ({e}); start one with `planhost serve`",
                paths.socket.display()
            ),
            status: EXIT_UNREACHABLE,
        })
    })?;
    client.initialize("planhost-cli").map_err(failure)?;
    Ok(client)
}

fn call<P: Serialize, R: serde::de::DeserializeOwned>(
    c: &mut Client,
    method: &str,
    p: &P,
) -> anyhow::Result<R> {
    c.call(method, p).map_err(failure)
}

fn print_json(value: &impl Serialize) -> anyhow::Result<ExitCode> {
    let mut out = std::io::stdout().lock();
    serde_json::to_writer_pretty(&mut out, value)?;
    writeln!(out)?;
    Ok(ExitCode::SUCCESS)
}

fn now() -> Timestamp {
    planhost_core::Clock::now(&planhost_host::SystemClock)
}

/// "in 29m 12s", "expired 3m ago".
fn relative(deadline: Timestamp, now: Timestamp) -> String {
    let ms = now.until(deadline);
    let secs = ms.unsigned_abs() / 1000;
    let text = if secs >= 60 {
        format!("{}m {:02}s", secs / 60, secs % 60)
    } else {
        format!("{secs}s")
    };
    if ms > 0 {
        format!("in {text}")
    } else {
        format!("{text} ago")
    }
}

pub fn status(paths: &Paths, out: Output) -> anyhow::Result<ExitCode> {
    let mut c = connect(paths)?;
    let version: VersionResult = call(&mut c, "app.version", &Empty {})?;
    let health: HealthResult = call(&mut c, "app.health", &Empty {})?;
    let sessions: SessionList = call(&mut c, "sessions.list", &Empty {})?;
    let pending: ApprovalList = call(&mut c, "plans.pending", &PlansFilter { session_id: None })?;
    let publications: planhost_protocol::PublicationList = call(
        &mut c,
        "plans.publications",
        &planhost_protocol::PublicationsParams { pending: true },
    )?;
    if out.json {
        return print_json(&serde_json::json!({
            "version": version, "health": health,
            "sessions": sessions.sessions.len(), "pendingApprovals": pending.approvals.len(),
            "pendingPublications": publications.publications.len(),
        }));
    }
    let mut o = std::io::stdout().lock();
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
    writeln!(o, "sessions  {}", sessions.sessions.len())?;
    writeln!(
        o,
        "pending   {} plan approval(s), {} publication(s)",
        pending.approvals.len(),
        publications.publications.len()
    )?;
    Ok(ExitCode::SUCCESS)
}

pub fn plans(paths: &Paths, pending: bool, out: Output) -> anyhow::Result<ExitCode> {
    let mut c = connect(paths)?;
    let method = if pending {
        "plans.pending"
    } else {
        "plans.list"
    };
    let list: ApprovalList = call(&mut c, method, &PlansFilter { session_id: None })?;
    if out.json {
        return print_json(&list);
    }
    let mut o = std::io::stdout().lock();
    if list.approvals.is_empty() {
        writeln!(o, "no {}plans", if pending { "pending " } else { "" })?;
        return Ok(ExitCode::SUCCESS);
    }
    let now = now();
    writeln!(
        o,
        "{:<10} {:<12} {:<18} TITLE",
        "PROPOSAL", "STATUS", "EXPIRES"
    )?;
    for a in &list.approvals {
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
            short(&a.proposal_id),
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

pub fn show(paths: &Paths, proposal: &str, out: Output) -> anyhow::Result<ExitCode> {
    let mut c = connect(paths)?;
    let detail: PlanDetail = call(
        &mut c,
        "plans.get",
        &ProposalRef {
            proposal_id: proposal.into(),
        },
    )?;
    if out.json {
        return print_json(&detail);
    }
    let a = &detail.approval;
    let mut o = std::io::stdout().lock();
    let styled = std::io::stdout().is_terminal();
    writeln!(o, "{}", bold(&a.title, styled))?;
    writeln!(o, "question  {}", a.question)?;
    writeln!(o, "file      {}", a.artifact_path)?;
    writeln!(o, "status    {}", a.status.as_str())?;
    let expiry = match a.status {
        planhost_core::ApprovalStatus::Pending => {
            format!("expires {}", relative(a.expires_at, now()))
        }
        planhost_core::ApprovalStatus::Approved
        | planhost_core::ApprovalStatus::Rejected
        | planhost_core::ApprovalStatus::Expired
        | planhost_core::ApprovalStatus::Interrupted => {
            format!("resolved ({})", a.error_code.as_deref().unwrap_or("-"))
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

fn bold(text: &str, styled: bool) -> String {
    if styled {
        format!("\x1b[1m{text}\x1b[0m")
    } else {
        text.to_owned()
    }
}

/// A terminal rendering: headings in bold, everything else as written (the exact plan is the
/// file; this is only for reading).
fn render_markdown(o: &mut impl Write, markdown: &str) -> std::io::Result<()> {
    let styled = true;
    let mut in_fence = false;
    for line in markdown.lines() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            in_fence = !in_fence;
            writeln!(o, "{line}")?;
        } else if !in_fence && trimmed.starts_with('#') {
            writeln!(
                o,
                "{}",
                bold(trimmed.trim_start_matches('#').trim(), styled)
            )?;
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
    let mut c = connect(paths)?;
    let detail: PlanDetail = call(
        &mut c,
        "plans.get",
        &ProposalRef {
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
    call(&mut c, "plans.resolve", &params)
}

pub fn approve(paths: &Paths, proposal: &str, mode: &str) -> anyhow::Result<ExitCode> {
    let mode: TargetPermissionMode = mode.parse().context("--mode")?;
    let a = resolve(paths, proposal, ApprovalAction::Approve, Some(mode), None)?;
    println!(
        "approved {} \"{}\": session now in agent mode with permission {}, execution {} queued",
        short(&a.proposal_id),
        a.title,
        mode.as_str(),
        a.execution_id.as_deref().unwrap_or("-")
    );
    Ok(ExitCode::SUCCESS)
}

pub fn reject(paths: &Paths, proposal: &str, feedback: Option<String>) -> anyhow::Result<ExitCode> {
    let a = resolve(paths, proposal, ApprovalAction::Reject, None, feedback)?;
    println!(
        "rejected {} \"{}\": the session stays in plan mode",
        short(&a.proposal_id),
        a.title
    );
    Ok(ExitCode::SUCCESS)
}

pub fn shells(paths: &Paths, out: Output) -> anyhow::Result<ExitCode> {
    let mut c = connect(paths)?;
    let catalog: ShellCatalog = call(&mut c, "shell.catalog", &Empty {})?;
    if out.json {
        return print_json(&catalog);
    }
    let mut o = std::io::stdout().lock();
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
            s.id, s.label, s.dialect, marks
        )?;
    }
    match &catalog.effective {
        Some(e) => writeln!(
            o,
            "effective {} ({}){}",
            e.id,
            e.dialect,
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

pub fn doctor(paths: &Paths, out: Output) -> anyhow::Result<ExitCode> {
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
    let holder = crate::serve::lock::StateLock::holder(&paths.lock());
    checks.push(Check {
        name: "lock",
        ok: holder.is_some(),
        detail: match &holder {
            Some(pid) => format!("held by planhost pid {pid}"),
            None => "not held: no host is serving this state directory".into(),
        },
    });
    let reached =
        connect(paths).and_then(|mut c| call::<_, VersionResult>(&mut c, "app.version", &Empty {}));
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
    let probes = planhost_exec::probe();
    let platform = planhost_exec::Platform::current();
    let effective = planhost_exec::effective_shell(platform, &probes, None);
    checks.push(Check {
        name: "shells",
        ok: effective.is_ok(),
        detail: match &effective {
            Ok(e) => format!("{} at {}", e.id.as_str(), e.executable.display()),
            Err(e) => format!("{}: {e}", e.code()),
        },
    });
    checks.push(Check {
        name: "sqlite",
        ok: true,
        detail: match &reached {
            Ok(v) => format!("{} (schema v{})", v.sqlite_version, v.schema_version),
            Err(_) => format!("{} (linked)", planhost_store::Store::sqlite_version()),
        },
    });
    let healthy = checks.iter().all(|c| c.ok);
    if out.json {
        print_json(&serde_json::json!({ "healthy": healthy, "checks": checks }))?;
    } else {
        let mut o = std::io::stdout().lock();
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

pub fn publications(paths: &Paths, pending: bool, out: Output) -> anyhow::Result<ExitCode> {
    let mut c = connect(paths)?;
    let list: planhost_protocol::PublicationList = call(
        &mut c,
        "plans.publications",
        &planhost_protocol::PublicationsParams { pending },
    )?;
    if out.json {
        return print_json(&list);
    }
    let mut o = std::io::stdout().lock();
    if list.publications.is_empty() {
        writeln!(
            o,
            "no {}publications",
            if pending { "pending " } else { "" }
        )?;
        return Ok(ExitCode::SUCCESS);
    }
    writeln!(o, "{:<10} {:<12} {:<5} PATH", "ID", "STATUS", "REV")?;
    for p in &list.publications {
        writeln!(
            o,
            "{:<10} {:<12} {:<5} {}",
            short(&p.publication_id),
            p.status,
            p.revision,
            p.relative_path
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

pub fn publish(paths: &Paths, publication: &str, reject: bool) -> anyhow::Result<ExitCode> {
    let mut c = connect(paths)?;
    let list: planhost_protocol::PublicationList = call(
        &mut c,
        "plans.publications",
        &planhost_protocol::PublicationsParams { pending: true },
    )?;
    let matches: Vec<_> = list
        .publications
        .iter()
        .filter(|p| {
            p.publication_id == publication
                || (publication.len() >= 8 && p.publication_id.starts_with(publication))
        })
        .collect();
    let [target] = matches.as_slice() else {
        return Err(Failure {
            code: "PUBLICATION_NOT_FOUND".into(),
            message: format!("no single pending publication matches {publication:?}"),
            status: 1,
        }
        .into());
    };
    let action = if reject {
        ApprovalAction::Reject
    } else {
        ApprovalAction::Approve
    };
    let result: planhost_protocol::PublishResolveResult = call(
        &mut c,
        "plans.publishResolve",
        &planhost_protocol::PublishResolveParams {
            publication_id: target.publication_id.clone(),
            action,
        },
    )?;
    match (result.outcome.as_str(), &result.next) {
        ("reapprove", Some(next)) => println!(
            "the name was taken while writing; approval revoked. New pending publication {} for {}",
            short(&next.publication_id),
            next.relative_path
        ),
        (outcome, _) => println!("{outcome}: {}", result.publication.relative_path),
    }
    Ok(if result.outcome == "conflict" {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

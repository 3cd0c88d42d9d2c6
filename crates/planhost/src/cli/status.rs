//! `planhost status` and `planhost shells`: what the running host says about itself (its
//! version, health, sessions and pending work) and the shells it can run commands in.

use std::io::Write;
use std::process::ExitCode;

use planhost_core::PublicationStatus;
use planhost_protocol::{Empty, PlansFilter, PublicationsFilter, SessionsFilter, methods};

use planhost_service::host::Paths;

use super::{Output, READER, all_pending, call, connect, print_json};

pub(crate) fn status(paths: &Paths, out: Output) -> anyhow::Result<ExitCode> {
    let mut c = connect(paths, READER)?;
    let version = call::<methods::AppVersion>(&mut c, Empty {})?;
    let health = call::<methods::AppHealth>(&mut c, Empty {})?;
    let sessions = call::<methods::SessionsList>(
        &mut c,
        SessionsFilter {
            include_ended: None,
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
    // How many sessions each agent has, in the catalog's order: "2 (pi 1, claude-code 1)".
    let by_agent: Vec<String> = planhost_core::Agent::ALL
        .iter()
        .filter_map(|agent| {
            let n = sessions.items.iter().filter(|s| s.agent == *agent).count();
            (n > 0).then(|| format!("{agent} {n}"))
        })
        .collect();
    if by_agent.is_empty() {
        writeln!(o, "sessions  0")?;
    } else {
        writeln!(
            o,
            "sessions  {} ({})",
            sessions.items.len(),
            by_agent.join(", ")
        )?;
    }
    writeln!(
        o,
        "pending   {} plan approval(s), {} publication(s)",
        pending.items.len(),
        publications.items.len()
    )?;
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

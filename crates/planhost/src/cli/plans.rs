//! The plan approvals: `planhost plans` lists them, `planhost show` prints one (its plan
//! rendered for a terminal, or byte for byte when piped), and `planhost approve` and
//! `planhost reject` answer one for a person.

use std::io::{IsTerminal, Write};
use std::process::ExitCode;

use planhost_core::{ApprovalAction, TargetPermissionMode, Timestamp};
use planhost_protocol::{ApprovalInfo, PlansFilter, ProposalRef, ResolvePlanParams, methods};

use planhost_service::host::Paths;

use super::{APPROVER, Output, READER, all_pending, call, connect, print_json, short};

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

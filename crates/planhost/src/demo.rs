//! `planhost demo`: a scripted session through the host service, with no agent or model.

use std::io::Write;
use std::sync::Arc;

use anyhow::Context as _;
use planhost_core::{
    ApprovalAction, BatchPosition, Clock, ExecutionOutcome, Interactivity, Mode, ResolveRequest,
    SubmitPlanInput, TargetPermissionMode, Timestamp, TurnOrigin,
};
use planhost_host::Host;
use planhost_store::SubmitContext;

/// The wall clock, in milliseconds since the epoch.
#[derive(Debug)]
struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Timestamp {
        let ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
        Timestamp(ms)
    }
}

const PLAN: &str = "# Plan: greet the world\r\n\r\n1. Add `hello.txt`.\r\n2. Print it.\r\n";

pub fn run() -> anyhow::Result<()> {
    let state = tempfile::tempdir().context("creating a temporary state directory")?;
    let workspace = tempfile::tempdir().context("creating a temporary workspace")?;
    let mut out = std::io::stdout().lock();
    let db = state.path().join("planhost.sqlite");
    let startup = Host::open(&db, Arc::new(SystemClock)).context("opening the host")?;
    let mut host = startup.host;
    writeln!(
        out,
        "host    opened {} ({:?}; fence interrupted {} approvals)",
        db.display(),
        startup.migration,
        startup.fence.interrupted_approvals.len()
    )?;

    let session = host.open_session(workspace.path(), Some("demo"), Interactivity::Interactive)?;
    writeln!(
        out,
        "session {} in {} — mode {}",
        session.id, session.workspace_root, session.mode
    )?;
    host.store().set_mode(&session.id, Mode::Plan)?;
    writeln!(out, "mode    person selected Plan")?;

    let turn = host.begin_turn(&session.id, TurnOrigin::User, None)?;
    writeln!(out, "turn    {} began", turn.id)?;
    let ctx = SubmitContext {
        session_id: session.id.clone(),
        turn_id: turn.id.clone(),
        tool_call_id: "call-submit".into(),
        batch: BatchPosition { index: 0, size: 1 },
    };
    let input = SubmitPlanInput {
        title: "Greet the world".into(),
        markdown: PLAN.into(),
        question: "Shall I implement this plan?".into(),
    };
    let second = host.submit_plan(
        &SubmitContext {
            batch: BatchPosition { index: 0, size: 2 },
            ..ctx.clone()
        },
        &input,
    );
    if let Err(error) = second {
        writeln!(
            out,
            "refused SubmitPlan sharing its batch: {} ({error})",
            error.code()
        )?;
    }
    let approval = host.submit_plan(&ctx, &input)?;
    writeln!(
        out,
        "plan    {} pending, expires at {} ms",
        approval.proposal_id, approval.expires_at.0
    )?;
    let written = std::fs::read(workspace.path().join(&approval.artifact_relative_path))?;
    writeln!(
        out,
        "file    {} — {} bytes, sha256 {}, exact: {}",
        approval.artifact_relative_path,
        approval.artifact_size_bytes,
        approval.artifact_sha256,
        written == PLAN.as_bytes()
    )?;
    host.store().end_turn(&session.id, &turn.id)?;

    let approved = host.resolve(
        &ResolveRequest {
            proposal_id: approval.proposal_id.clone(),
            session_id: session.id.clone(),
            turn_id: turn.id.clone(),
            tool_call_id: "call-submit".into(),
            version: Some(approval.version),
            artifact_sha256: Some(approval.artifact_sha256.clone()),
            action: ApprovalAction::Approve,
            target_permission_mode: Some(TargetPermissionMode::AcceptEdits),
        },
        None,
    )?;
    let execution = approved
        .execution_id
        .clone()
        .context("approval queued no execution")?;
    let now = host.store().session(&session.id)?;
    writeln!(
        out,
        "approve {} → mode {}, permission {}, execution {} queued",
        approved.status, now.mode, now.permission_mode, execution
    )?;
    let exec_turn = host.claim_execution(&session.id, &execution, None)?;
    writeln!(out, "claim   execution turn {} running", exec_turn.id)?;
    let done =
        host.store()
            .finish_execution(&session.id, &execution, ExecutionOutcome::Completed)?;
    writeln!(
        out,
        "finish  execution {}",
        done.execution_state.map_or("?", |s| s.as_str())
    )?;
    for event in host.store().take_events() {
        writeln!(
            out,
            "event   #{:<3} {}",
            event.seq,
            serde_json::to_string(&event.body)?
        )?;
    }
    Ok(())
}

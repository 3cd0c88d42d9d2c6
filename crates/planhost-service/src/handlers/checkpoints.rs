//! Checkpoints, capture and projection (seeds 003, 004); the `/plan` lifecycle; the seed 004
//! handoff and tool drift.

use planhost_core::{
    AssistantMessage, ClientPersistence, ErrorCode, PlanCommand, TurnState, began_in_planning,
};
use planhost_protocol::{
    AcceptHandoffParams, ApplyToolsetParams, BranchRef, CaptureParams, CaptureResult,
    CheckpointDetail, CheckpointInfo, ExitOptions, ExitPlanParams, ExitPlanResult, HandoffInfo,
    ParseCommandParams, ParsedCommand, PlanStatusResult, ProjectionResult, RestoreToolsetParams,
    RestoredToolset, SaveCheckpointParams, SavedCheckpoint, SeenCheckpointParams, SessionRef,
    SwitchBranchResult, ToolsetInfo, ToolsetParams,
};
use planhost_store::{CaptureBinding, CheckpointSource, HandoffRequest, PlanIdentity};

use crate::new_id;

use crate::authority::domain_provenance;
use crate::connection::Caller;
use crate::convert;
use crate::service::Inner;
use crate::{Result, ServiceError};

pub(crate) async fn save(svc: &Inner, p: SaveCheckpointParams) -> Result<SavedCheckpoint> {
    svc.engine(move |e| {
        let saved = e.store().save_checkpoint(
            &p.session_id,
            &p.branch_path,
            &p.markdown,
            Some(p.expected_revision),
            CheckpointSource::Draft,
            None,
        )?;
        Ok(SavedCheckpoint {
            checkpoint: convert::checkpoint(saved.record),
        })
    })
    .await
}

pub(crate) async fn capture(svc: &Inner, p: CaptureParams) -> Result<CaptureResult> {
    svc.engine(move |e| capture_with_projection(e, p)).await
}

/// Captures on the engine, then reads the branch's projection in the same step.
pub(crate) fn capture_with_projection(
    e: &mut crate::engine::Engine,
    p: CaptureParams,
) -> Result<CaptureResult> {
    let nothing = |code: ErrorCode, detail: String| CaptureResult {
        checkpoint: None,
        created: false,
        reason: Some(code),
        detail: Some(detail),
        projection: None,
        event_seq: 0,
    };
    let session_id = p.session_id.clone();
    let branch_path = p.branch_path.clone();
    let mut result = capture_in(e, p, nothing)?;
    // What the client would ask for next, read in the same step: after the capture, on the
    // same branch, with the event seq it is current at. Only a convenience: a failed read must
    // not turn a saved capture into an error.
    match e.projection(&session_id, &branch_path) {
        Ok((text, revision)) => result.projection = Some(ProjectionResult { text, revision }),
        Err(error) => tracing::warn!(%error, "reading the projection after a capture"),
    }
    result.event_seq = e.store().session(&session_id)?.event_seq;
    Ok(result)
}

fn capture_in(
    e: &mut crate::engine::Engine,
    p: CaptureParams,
    nothing: impl Fn(ErrorCode, String) -> CaptureResult,
) -> Result<CaptureResult> {
    let turn = e.store().turn(&p.turn_id)?;
    if turn.session_id != p.session_id {
        return Err(planhost_core::CoreError::TurnNotActive { turn_id: p.turn_id }.into());
    }
    let mode = e.store().session(&p.session_id)?.mode;
    let message = AssistantMessage {
        entry_id: p.message.entry_id,
        content: p.message.content,
        stop_reason: p.message.stop_reason,
        started_in_planning: began_in_planning(
            turn.policy_mode,
            turn.state == TurnState::Running,
            mode,
        ),
    };
    if let Err(why) = planhost_core::eligibility(&message) {
        return Ok(nothing(why.code(), why.to_string()));
    }
    let capture = match planhost_core::capture(&message) {
        Ok(Some(capture)) => capture,
        Ok(None) => {
            return Ok(nothing(
                ErrorCode::CaptureNoPlan,
                "the message holds no <proposed_plan> block".into(),
            ));
        }
        Err(error) => return Ok(nothing(error.code(), error.to_string())),
    };
    let binding = CaptureBinding {
        entry_id: capture.entry_id.clone(),
        fingerprint: capture.fingerprint.clone(),
        block_index: i64::try_from(capture.block_index).unwrap_or(i64::MAX),
        start: i64::try_from(capture.body_start).unwrap_or(i64::MAX),
        end: i64::try_from(capture.body_end).unwrap_or(i64::MAX),
    };
    let saved = e.store().save_checkpoint(
        &p.session_id,
        &p.branch_path,
        &capture.markdown,
        None,
        CheckpointSource::Capture,
        Some(&binding),
    )?;
    Ok(CaptureResult {
        checkpoint: Some(convert::checkpoint(saved.record)),
        created: saved.created,
        reason: None,
        detail: None,
        projection: None,
        event_seq: 0,
    })
}

pub(crate) async fn latest(svc: &Inner, p: BranchRef) -> Result<CheckpointDetail> {
    svc.engine(move |e| {
        let (c, markdown) = e
            .store()
            .latest_checkpoint(&p.session_id, &p.branch_path)?
            .ok_or(ServiceError::NoCheckpoint)?;
        Ok(CheckpointDetail {
            checkpoint: convert::checkpoint(c),
            markdown,
        })
    })
    .await
}

pub(crate) async fn seen(
    svc: &Inner,
    caller: &Caller,
    p: SeenCheckpointParams,
) -> Result<CheckpointInfo> {
    let by = caller.by.clone();
    svc.engine(move |e| {
        let c = e
            .store()
            .checkpoint_seen(&p.session_id, p.checkpoint_id, &p.sha256, &by)?;
        Ok(convert::checkpoint(c))
    })
    .await
}

pub(crate) async fn projection(svc: &Inner, p: BranchRef) -> Result<ProjectionResult> {
    svc.engine(move |e| {
        let (text, revision) = e.projection(&p.session_id, &p.branch_path)?;
        Ok(ProjectionResult { text, revision })
    })
    .await
}

pub(crate) async fn status(svc: &Inner, p: BranchRef) -> Result<PlanStatusResult> {
    svc.engine(move |e| {
        let id = &p.session_id;
        let s = e.plan_status(id, &p.branch_path)?;
        let persisted = e.store().session(id)?.client_persistence == ClientPersistence::Persisted;
        Ok(PlanStatusResult {
            active: s.active,
            revision: s.revision,
            sha256: s.sha256,
            publication: s.publication,
            path: s.path,
            plan_id: s.identity.plan_id,
            phase: s.identity.phase,
            persisted,
            tool_conflict: s.identity.tool_conflict,
            handoff_restarted: s.identity.handoff_restarted,
            session_name: s.identity.session_name,
        })
    })
    .await
}

pub(crate) async fn exit_options(svc: &Inner, p: BranchRef) -> Result<ExitOptions> {
    svc.engine(move |e| {
        Ok(ExitOptions {
            offer: e.exit_offer(&p.session_id, &p.branch_path)?,
        })
    })
    .await
}

pub(crate) async fn exit(svc: &Inner, p: ExitPlanParams) -> Result<ExitPlanResult> {
    svc.engine(move |e| {
        let id = &p.session_id;
        let revoked = e.exit_plan(id)?;
        let restore_tools = match &p.available_tools {
            Some(available) => Some(e.store().tools_exit(id, available)?),
            None => None,
        };
        Ok(ExitPlanResult {
            session: super::sessions::info(e, id)?,
            restore_tools,
            revoked_publications: revoked,
        })
    })
    .await
    .map(|mut r| {
        r.session = super::sessions::with_tool_calls(svc, r.session);
        r
    })
}

pub(crate) fn parse_command(p: &ParseCommandParams) -> ParsedCommand {
    let completions = planhost_core::COMPLETIONS
        .iter()
        .map(|c| (*c).to_owned())
        .collect();
    match planhost_core::parse_plan_command(&p.line) {
        Ok(PlanCommand::Help) => ParsedCommand {
            command: Some(PlanCommand::Help),
            help: Some(planhost_core::HELP_TEXT.into()),
            error_code: None,
            completions,
        },
        Ok(command) => ParsedCommand {
            command: Some(command),
            help: None,
            error_code: None,
            completions,
        },
        Err(e) => ParsedCommand {
            command: None,
            help: Some(planhost_core::HELP_TEXT.into()),
            error_code: Some(e.code()),
            completions,
        },
    }
}

pub(crate) async fn switch_branch(svc: &Inner, p: SessionRef) -> Result<SwitchBranchResult> {
    svc.engine(move |e| {
        let id = &p.session_id;
        let before = e.store().plan_identity(id)?.phase;
        let revoked = e.store().branch_switched(id)?;
        let after = e.store().plan_identity(id)?.phase;
        Ok(SwitchBranchResult {
            revoked_publications: revoked,
            handoff_cleared: before != after,
        })
    })
    .await
}

fn handoff_info(identity: PlanIdentity) -> HandoffInfo {
    HandoffInfo {
        phase: identity.phase,
        token: identity.handoff_token,
        restarted: identity.handoff_restarted,
    }
}

pub(crate) async fn handoff_approve(svc: &Inner, p: BranchRef) -> Result<HandoffInfo> {
    svc.engine(move |e| {
        let id = &p.session_id;
        let (c, _) = e
            .store()
            .latest_checkpoint(id, &p.branch_path)?
            .ok_or(ServiceError::NoCheckpoint)?;
        let request = HandoffRequest::Approve {
            checkpoint_id: c.id,
            token: new_id(),
        };
        Ok(handoff_info(e.store().handoff(id, &request)?))
    })
    .await
}

pub(crate) async fn handoff_accept(svc: &Inner, p: AcceptHandoffParams) -> Result<HandoffInfo> {
    svc.engine(move |e| {
        let request = HandoffRequest::Accept { token: p.token };
        Ok(handoff_info(e.store().handoff(&p.session_id, &request)?))
    })
    .await
}

pub(crate) async fn handoff_cancel(svc: &Inner, p: SessionRef) -> Result<HandoffInfo> {
    svc.engine(move |e| {
        Ok(handoff_info(
            e.store().handoff(&p.session_id, &HandoffRequest::Cancel)?,
        ))
    })
    .await
}

pub(crate) async fn handoff_retry(svc: &Inner, p: SessionRef) -> Result<HandoffInfo> {
    svc.engine(move |e| {
        let request = HandoffRequest::Retry { token: new_id() };
        Ok(handoff_info(e.store().handoff(&p.session_id, &request)?))
    })
    .await
}

fn toolset_info(identity: PlanIdentity) -> ToolsetInfo {
    ToolsetInfo {
        conflict: identity.tool_conflict,
        applied: identity.tool_applied,
        baseline: identity.tool_baseline,
    }
}

pub(crate) async fn toolset_apply(svc: &Inner, p: ApplyToolsetParams) -> Result<ToolsetInfo> {
    let mut offered = Vec::with_capacity(p.offered.len());
    for tool in &p.offered {
        offered.push((tool.name.clone(), domain_provenance(&tool.provenance)?));
    }
    svc.engine(move |e| {
        let id = &p.session_id;
        let snapshot = e.store().policy_snapshot(id)?;
        let live = snapshot.live;
        if live.mode != planhost_core::Mode::Plan {
            return Err(planhost_core::CoreError::PlanModeNotActive.into());
        }
        // A client that restarted in Plan re-applies Plan's set; the pre-Plan set it recorded
        // first is the one to restore.
        let recorded = e.store().plan_identity(id)?.tool_baseline;
        let baseline = recorded.unwrap_or(p.baseline);
        let tools: Vec<planhost_core::OfferedTool<'_>> = offered
            .iter()
            .map(|(name, provenance)| planhost_core::OfferedTool {
                name: name.as_str(),
                provenance,
            })
            .collect();
        let applied = planhost_core::plan_toolset(snapshot.agent, live.preset, &baseline, &tools);
        Ok(toolset_info(
            e.store().tools_enter(id, &baseline, &applied)?,
        ))
    })
    .await
}

pub(crate) async fn toolset_restore(
    svc: &Inner,
    p: RestoreToolsetParams,
) -> Result<RestoredToolset> {
    svc.engine(move |e| {
        let id = &p.session_id;
        let identity = e.store().plan_identity(id)?;
        // In Plan the tool set stays Plan's, except for the run a person handed the plan to
        // (seed 004: the first tool snapshot is the execution's while the gate stays in place;
        // the host still holds the run to Plan until `handoff.accept`).
        let planning = e.store().policy_snapshot(id)?.live.mode == planhost_core::Mode::Plan;
        if planning && identity.phase != planhost_core::HandoffPhase::HandoffPending {
            return Err(ServiceError::refused(
                planhost_core::ErrorCode::SessionNotIdle,
                "the session is in Plan mode: its Plan tool set stays until it leaves Plan",
            ));
        }
        if identity.tool_baseline.is_none() {
            return Ok(RestoredToolset { tools: None });
        }
        // Seed 004's drift rule: a tool Plan applied that is no longer active was removed by
        // someone else, and is not silently brought back.
        let removed: Vec<String> = identity
            .tool_applied
            .unwrap_or_default()
            .into_iter()
            .filter(|t| !p.active.contains(t))
            .collect();
        let available: Vec<String> = p
            .available
            .into_iter()
            .filter(|t| !removed.contains(t))
            .collect();
        Ok(RestoredToolset {
            tools: Some(e.store().tools_exit(id, &available)?),
        })
    })
    .await
}

pub(crate) async fn toolset_observe(svc: &Inner, p: ToolsetParams) -> Result<ToolsetInfo> {
    svc.engine(move |e| {
        Ok(toolset_info(
            e.store().tools_observe(&p.session_id, &p.tools)?,
        ))
    })
    .await
}

pub(crate) async fn toolset_accept(svc: &Inner, p: ToolsetParams) -> Result<ToolsetInfo> {
    svc.engine(move |e| {
        Ok(toolset_info(
            e.store().tools_resolve(&p.session_id, &p.tools)?,
        ))
    })
    .await
}

//! The engine's part of one `agent.event`: open (or reopen) the session, read it, ask core's
//! lifecycle what to do, and take every step that changes durable state, in one job on the
//! engine's thread. The steps that belong to the tool authority (authorize, an ask answered in
//! the agent's own dialog, a finished call) come after, in `super`.

use std::path::Path;
use std::sync::Arc;

use planhost_core::{
    AgentProfile, AgentView, ApprovalStatus, BatchPosition, CheckpointSource, EntryId, EventFacts,
    ExecutionOutcome, ExecutionState, Interactivity, Mode, SessionId, Step, SubmitPlanInput,
    ToolCallId, TurnOrigin, lifecycle, words,
};
use planhost_protocol::{
    AgentEventParams, ApprovalInfo, CaptureParams, CaptureResult, CapturedMessage, CheckpointInfo,
    ClaimedExecution, SessionInfo,
};
use planhost_store::{ApprovalQuery, ExecutionFilter, HandoffRequest, SessionLife, SubmitContext};

use super::event::{Kind, OwnedContext};
use crate::convert;
use crate::engine::Engine;
use crate::handlers::{checkpoints, plans, sessions};
use crate::service::Inner;
use crate::shells::Shells;
use crate::{Result, ServiceError};

/// What the engine's part established, for the authority's steps and the reply.
#[derive(Debug)]
pub(super) struct Progress {
    /// The session after the engine's steps.
    pub(super) info: SessionInfo,
    /// The steps and the answer.
    pub(super) plan: planhost_core::AgentPlan,
    /// The plan the event is about: submitted now, or answered before.
    pub(super) this_plan: Option<ApprovalInfo>,
    /// The session's waiting plan (after the steps).
    pub(super) waiting: Option<ApprovalInfo>,
    /// The approved plan whose execution this event started.
    pub(super) claimed: Option<ClaimedExecution>,
    /// A plan answered after the session's last turn began (a prompt tells the model).
    pub(super) untold: Option<ApprovalInfo>,
    /// What the model is told after a compaction or on resume.
    pub(super) context: Option<OwnedContext>,
    /// The checkpoint a draft became.
    pub(super) saved: Option<CheckpointInfo>,
    /// What a capture did.
    pub(super) capture: Option<CaptureResult>,
}

/// Everything the job needs, moved onto the engine's thread.
pub(super) struct Job {
    pub(super) svc: Arc<Inner>,
    pub(super) params: AgentEventParams,
    pub(super) kind: Kind,
    pub(super) branch: Vec<EntryId>,
    /// Whether a finished call wrote the agent's own draft (checked on the disk), and where.
    pub(super) draft_file: Option<std::path::PathBuf>,
}

/// The session as the rules see it.
pub(super) fn view_of(info: &SessionInfo, attended: bool) -> AgentView {
    AgentView {
        mode: info.mode,
        turn: info.active_turn.as_ref().map(|t| t.origin),
        pending: info.pending_approval.is_some(),
        execution: info.live_execution.as_ref().map(|x| x.state),
        attended,
    }
}

/// Whether a person answers this session's plans: one is at the agent now, or the agent defers
/// a plan to be answered elsewhere (on the page, from the CLI) and asked again on resume.
fn interactivity(profile: &AgentProfile, attended: bool) -> Interactivity {
    if attended || profile.defers {
        Interactivity::Interactive
    } else {
        Interactivity::Unattended
    }
}

pub(super) fn run(e: &mut Engine, job: Job) -> Result<Progress> {
    let Job {
        svc,
        params: p,
        kind,
        branch,
        draft_file,
    } = job;
    let profile = p.agent.profile();
    let wanted = interactivity(profile, p.attended);
    let opened = e.open_session(
        Path::new(&p.workspace_root),
        Some(&p.external_session_id),
        wanted,
        p.persistence,
        Some(p.agent),
    )?;
    let id = opened.id.clone();
    // Interactivity belongs to the agent's face as it is now, not to how the session began.
    if opened.interactivity != wanted {
        e.store().set_interactivity(&id, wanted)?;
    }
    // Any event of an ended session but its end brings it back.
    if opened.ended_at.is_some() && !matches!(kind, Kind::End(_)) {
        e.store().set_session_life(&id, SessionLife::Live)?;
    }
    let before = sessions::info(e, &id)?;
    let view = view_of(&before, p.attended);
    let facts = facts_of(e, &svc, profile, &view, &id, &kind, draft_file.is_some())?;
    let plan = lifecycle(profile, &view, facts);
    let mut out = Outputs::default();
    for step in &plan.steps {
        take(
            e,
            &svc,
            &id,
            &kind,
            &branch,
            draft_file.as_deref(),
            *step,
            &mut out,
        )?;
    }
    let info = sessions::info(e, &id)?;
    let this_plan = match &kind {
        Kind::Offer { call, .. } => approval_of_call(e, &id, call)?,
        Kind::Answered(proposal) => Some(answered_approval(e, &id, proposal)?),
        Kind::Start(_)
        | Kind::Prompt { .. }
        | Kind::Tool { .. }
        | Kind::Finished { .. }
        | Kind::Draft { .. }
        | Kind::Message(_)
        | Kind::Stop { .. }
        | Kind::End(_) => None,
    };
    // Only a prompt that began a turn reads it (`last_turn_before` is read then).
    let untold = match out.last_turn_before {
        Some(since) => untold(e, &id, since)?,
        None => None,
    };
    let context = if plan.answer == planhost_core::Answer::SessionContext {
        Some(session_context(e, &info, &branch)?)
    } else {
        None
    };
    Ok(Progress {
        waiting: info.pending_approval.clone(),
        info,
        plan,
        this_plan,
        claimed: out.claimed,
        untold,
        context,
        saved: out.saved,
        capture: out.capture,
    })
}

/// What the steps produced.
#[derive(Default)]
struct Outputs {
    claimed: Option<ClaimedExecution>,
    saved: Option<CheckpointInfo>,
    capture: Option<CaptureResult>,
    /// When the session's last turn began, read before this prompt's turn began.
    last_turn_before: Option<planhost_core::Timestamp>,
}

/// The event's facts for the rules.
fn facts_of(
    e: &mut Engine,
    svc: &Inner,
    profile: &AgentProfile,
    view: &AgentView,
    id: &SessionId,
    kind: &Kind,
    wrote_draft: bool,
) -> Result<EventFacts> {
    Ok(match kind {
        Kind::Start(source) => EventFacts::SessionStarted { source: *source },
        Kind::Prompt {
            agent_mode,
            handoff_token,
        } => EventFacts::PromptSubmitted {
            agent_mode: *agent_mode,
            handoff: handoff_token.is_some(),
        },
        Kind::Tool { tool, .. } => {
            use planhost_core::ToolNature as N;
            let nature = profile.agent.classify(tool).nature;
            EventFacts::ToolProposed {
                enters_plan: nature == N::EnterPlan,
                reads_only: matches!(nature, N::ReadsFiles | N::SearchesFiles | N::ReadPlan),
            }
        }
        Kind::Offer { call, markdown, .. } => EventFacts::PlanOffered {
            empty: markdown.trim().is_empty(),
            earlier: approval_of_call(e, id, call)?.map(|a| a.status),
        },
        Kind::Finished { call, .. } => EventFacts::ToolFinished {
            draft: wrote_draft,
            asked_in_dialog: svc.tools.open_ask(id, call).is_some()
                && planhost_core::ask_outcome(profile, view)
                    == planhost_core::AskOutcome::AgentDialog,
        },
        Kind::Draft { .. } => EventFacts::DraftWritten,
        Kind::Message(_) => EventFacts::MessageFinished,
        Kind::Answered(proposal) => EventFacts::PlanAnswered {
            status: answered_approval(e, id, proposal)?.status,
        },
        Kind::Stop { aborted } => EventFacts::TurnStopped { aborted: *aborted },
        Kind::End(reason) => EventFacts::SessionEnded { reason: *reason },
    })
}

/// A plan of this session, by its id.
fn answered_approval(
    e: &mut Engine,
    id: &SessionId,
    proposal: &planhost_core::ProposalId,
) -> Result<ApprovalInfo> {
    let a = e.store().approval(proposal)?;
    if a.session_id != *id {
        return Err(planhost_core::CoreError::ApprovalNotFound(proposal.clone()).into());
    }
    plans::approval_info(e, a)
}

/// The approval this call raised, if it raised one.
fn approval_of_call(
    e: &mut Engine,
    id: &SessionId,
    call: &ToolCallId,
) -> Result<Option<ApprovalInfo>> {
    let rows = e.store().approvals_matching(&ApprovalQuery {
        session_id: Some(id),
        statuses: None,
        execution: ExecutionFilter::Any,
        limit: 50,
    })?;
    match rows.into_iter().find(|a| a.tool_call_id == *call) {
        Some(a) => Ok(Some(plans::approval_info(e, a)?)),
        None => Ok(None),
    }
}

/// The session's last plan, if a person (or a deadline, or a restart) ended it after `since`,
/// when the session's last turn began: the model has not heard of it.
fn untold(
    e: &mut Engine,
    id: &SessionId,
    since: planhost_core::Timestamp,
) -> Result<Option<ApprovalInfo>> {
    let latest = e
        .store()
        .approvals_matching(&ApprovalQuery {
            session_id: Some(id),
            statuses: None,
            execution: ExecutionFilter::Any,
            limit: 1,
        })?
        .into_iter()
        .next();
    let Some(latest) = latest else {
        return Ok(None);
    };
    let ended = matches!(
        latest.status,
        ApprovalStatus::Rejected | ApprovalStatus::Expired | ApprovalStatus::Interrupted
    );
    let at = latest.resolved_at.unwrap_or(latest.updated_at);
    if ended && at > since {
        Ok(Some(plans::approval_info(e, latest)?))
    } else {
        Ok(None)
    }
}

/// One step.
#[allow(clippy::too_many_arguments)]
fn take(
    e: &mut Engine,
    svc: &Inner,
    id: &SessionId,
    kind: &Kind,
    branch: &[EntryId],
    draft_file: Option<&Path>,
    step: Step,
    out: &mut Outputs,
) -> Result<()> {
    let shells = svc.shells;
    match step {
        Step::AbortStaleTurn | Step::AbortTurn => close_turn(e, id, Close::Aborted)?,
        Step::EndTurn => close_turn(e, id, Close::Completed)?,
        Step::AcceptHandoff => {
            if let Kind::Prompt {
                handoff_token: Some(token),
                ..
            } = kind
            {
                e.store().handoff(
                    id,
                    &HandoffRequest::Accept {
                        token: token.clone(),
                    },
                )?;
            }
        }
        Step::BeginTurn | Step::EnsureTurn => {
            if step == Step::BeginTurn {
                out.last_turn_before = e.store().last_turn_started(id)?;
            }
            if e.store().active_turn(id)?.is_none() {
                let pin = shells.pin_for(e, id)?;
                e.begin_turn(id, TurnOrigin::User, pin.as_ref())?;
            }
        }
        Step::EnterPlan => {
            let turn = running_turn(e, id)?;
            let call = ToolCallId::from(format!("agent-mode:{turn}"));
            e.store()
                .enter_plan(id, &turn, &call, BatchPosition { index: 0, size: 1 })?;
        }
        Step::ClaimExecution => out.claimed = claim(e, shells, id)?,
        Step::SubmitPlan => {
            let Kind::Offer {
                call,
                markdown,
                title,
                question,
                batch,
            } = kind
            else {
                return Ok(());
            };
            let ctx = SubmitContext {
                session_id: id.clone(),
                turn_id: running_turn(e, id)?,
                tool_call_id: call.clone(),
                batch: *batch,
            };
            let input = SubmitPlanInput {
                title: title
                    .clone()
                    .unwrap_or_else(|| words::plan_title_of(markdown)),
                markdown: markdown.clone(),
                question: question
                    .clone()
                    .unwrap_or_else(|| words::DEFAULT_QUESTION.to_owned()),
            };
            e.submit_plan(&ctx, &input, Some(branch))?;
        }
        Step::SaveDraft => out.saved = save_draft(e, id, kind, branch, draft_file)?,
        Step::Capture => {
            if let Kind::Message(message) = kind {
                let turn = running_turn(e, id)?;
                out.capture = Some(checkpoints::capture_with_projection(
                    e,
                    CaptureParams {
                        session_id: id.clone(),
                        turn_id: turn,
                        branch_path: branch.to_vec(),
                        message: CapturedMessage::clone(message),
                    },
                )?);
            }
        }
        Step::EndSession => {
            e.store().set_session_life(id, SessionLife::Ended)?;
        }
        // The tool authority's steps run after this job.
        Step::RecordWaitingRead => {
            if let Kind::Tool {
                call, tool, input, ..
            } = kind
            {
                svc.audit.record(planhost_store::AuditRow {
                    at: e.now(),
                    session_id: Some(id.clone()),
                    turn_id: None,
                    tool_call_id: Some(call.clone()),
                    action: planhost_core::AuditAction::ToolAllow,
                    detail: serde_json::json!({
                        "tool": tool,
                        "rule": planhost_core::PolicyRule::PlanWaitingRead,
                        "input": input,
                    })
                    .to_string(),
                });
            }
        }
        Step::Authorize | Step::EnterPlanIfAllowed | Step::AnswerAskInDialog | Step::FinishTool => {
        }
    }
    Ok(())
}

fn running_turn(e: &mut Engine, id: &SessionId) -> Result<planhost_core::TurnId> {
    e.store().active_turn(id)?.map(|t| t.id).ok_or_else(|| {
        ServiceError::refused(
            planhost_core::ErrorCode::TurnNotActive,
            "the session has no running turn",
        )
    })
}

/// How a turn is closed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Close {
    Completed,
    Aborted,
}

/// Ends the running turn: an execution's through its execution (completed or interrupted),
/// any other normally or as aborted (interrupting what it raised).
fn close_turn(e: &mut Engine, id: &SessionId, how: Close) -> Result<()> {
    let Some(turn) = e.store().active_turn(id)? else {
        return Ok(());
    };
    match (turn.origin, &turn.execution_id, how) {
        (TurnOrigin::Execution, Some(execution), Close::Completed) => {
            e.store()
                .finish_execution(id, execution, ExecutionOutcome::Completed)?;
        }
        (TurnOrigin::Execution, Some(execution), Close::Aborted) => {
            e.store()
                .finish_execution(id, execution, ExecutionOutcome::Interrupted)?;
        }
        (_, _, Close::Completed) => {
            e.store().end_turn(id, &turn.id)?;
        }
        (_, _, Close::Aborted) => {
            e.store().abort_turn(id, &turn.id)?;
        }
    }
    Ok(())
}

/// Starts the queued execution: the turn that asked (not an execution's) ends, then the
/// execution is claimed. Nothing when none is queued.
fn claim(e: &mut Engine, shells: Shells, id: &SessionId) -> Result<Option<ClaimedExecution>> {
    let info = sessions::info(e, id)?;
    let Some(execution) = info
        .live_execution
        .filter(|x| x.state == ExecutionState::Queued)
    else {
        return Ok(None);
    };
    if let Some(turn) = info.active_turn
        && turn.origin != TurnOrigin::Execution
    {
        e.store().end_turn(id, &turn.id)?;
    }
    plans::claim_in(e, shells, id, &execution.execution_id).map(Some)
}

/// Saves a draft as the branch's next checkpoint: pi's `update_plan_draft` with its expected
/// revision, or the agent's own draft file, read back from the disk (unchanged text saves
/// nothing).
fn save_draft(
    e: &mut Engine,
    id: &SessionId,
    kind: &Kind,
    branch: &[EntryId],
    draft_file: Option<&Path>,
) -> Result<Option<CheckpointInfo>> {
    let (markdown, expected) = match (kind, draft_file) {
        (
            Kind::Draft {
                markdown,
                expected_revision,
            },
            _,
        ) => (markdown.clone(), Some(*expected_revision)),
        (Kind::Finished { .. }, Some(file)) => {
            let Some(markdown) = super::draft::read(file) else {
                return Ok(None);
            };
            let latest = e.store().latest_checkpoint(id, branch)?;
            match latest {
                Some((_, text)) if text == markdown => return Ok(None),
                Some((c, _)) => (markdown, Some(c.revision)),
                None => (markdown, Some(0)),
            }
        }
        (_, _) => return Ok(None),
    };
    let saved = e.store().save_checkpoint(
        id,
        branch,
        &markdown,
        expected,
        CheckpointSource::Draft,
        None,
    )?;
    Ok(Some(convert::checkpoint(saved.record)))
}

/// What the model is told of the session's plan after a compaction or on resume: the one it
/// carries out, the one waiting, its latest draft, or its last plan with its status.
fn session_context(e: &mut Engine, info: &SessionInfo, branch: &[EntryId]) -> Result<OwnedContext> {
    if let Some(execution) = &info.live_execution {
        let approval = e.store().approval(&execution.proposal_id)?;
        let plan = e.store().submitted_plan(&execution.proposal_id)?;
        let root = &info.workspace_root;
        return Ok(OwnedContext::CarryingOut {
            title: plan.title,
            mode: execution.permission_mode.as_str().to_owned(),
            path: Path::new(root)
                .join(&approval.artifact_relative_path)
                .display()
                .to_string(),
            sha256: approval.artifact_sha256,
            markdown: plan.markdown,
        });
    }
    if info.mode != Mode::Plan {
        return Ok(OwnedContext::None);
    }
    if let Some(pending) = &info.pending_approval {
        let plan = e.store().submitted_plan(&pending.proposal_id)?;
        return Ok(OwnedContext::Waiting {
            title: plan.title,
            markdown: plan.markdown,
        });
    }
    let latest = e
        .store()
        .approvals_matching(&ApprovalQuery {
            session_id: Some(&info.id),
            statuses: None,
            execution: ExecutionFilter::Any,
            limit: 1,
        })?
        .into_iter()
        .next();
    // A draft written after the last plan was submitted (or with none submitted) is where the
    // model was.
    if let Some((c, markdown)) = e.store().latest_checkpoint(&info.id, branch)?
        && latest
            .as_ref()
            .is_none_or(|last| c.created_at > last.created_at.0)
    {
        return Ok(OwnedContext::Draft {
            revision: c.revision,
            markdown,
        });
    }
    Ok(match latest {
        Some(last) => {
            let markdown = e.store().submitted_plan(&last.proposal_id)?.markdown;
            OwnedContext::Last {
                approval: Box::new(plans::approval_info(e, last)?),
                markdown,
            }
        }
        None => OwnedContext::Nothing,
    })
}

//! `plans.enter`, `plans.submit`, `plans.list`, `plans.get`, `plans.resolve` (seed 000) and the
//! executions an approval queues.

use planhost_core::{
    BatchPosition, ErrorCode, ExecutionId, IdMatch, ProposalId, ResolveRequest, SessionId,
    SubmitPlanInput, match_id,
};
use planhost_fs::ArtifactOnDisk;
use planhost_protocol::{
    ApprovalInfo, ApprovalList, CheckpointDetail, ClaimedExecution, EndExecutionParams,
    EnterPlanParams, ExecutionInfo, ExecutionRef, PlanDetail, PlansFilter, ProposalRef,
    ResolvePlanParams, SessionInfo, SubmitPlanParams,
};
use planhost_store::{ApprovalQuery, SubmitContext};

use crate::connection::Caller;
use crate::convert;
use crate::engine::Engine;
use crate::service::Inner;
use crate::{Result, ServiceError};

/// An approval row as the wire shows it.
pub(crate) fn approval_info(
    e: &mut Engine,
    a: planhost_store::ApprovalRecord,
) -> Result<ApprovalInfo> {
    let root = e.store().session(&a.session_id)?.workspace_root;
    Ok(convert::approval(a, &root))
}

/// A full proposal id, or a unique prefix or suffix of one (people type them).
pub(crate) fn resolve_proposal_id(e: &mut Engine, typed: &ProposalId) -> Result<ProposalId> {
    if e.store().approval(typed).is_ok() {
        return Ok(typed.clone());
    }
    let all = e.store().approvals_matching(&ApprovalQuery::default())?;
    match match_id(typed.as_str(), all.iter().map(|a| a.proposal_id.as_str())) {
        IdMatch::One(id) => Ok(id.into()),
        IdMatch::None => Err(planhost_core::CoreError::ApprovalNotFound(typed.clone()).into()),
        IdMatch::Ambiguous(candidates) => Err(ServiceError::IdAmbiguous {
            typed: typed.to_string(),
            candidates,
        }),
    }
}

pub(crate) async fn enter(svc: &Inner, p: EnterPlanParams) -> Result<SessionInfo> {
    let call = (p.session_id.clone(), p.tool_call_id.clone());
    let info = svc
        .engine(move |e| {
            let batch = BatchPosition {
                index: p.batch_index,
                size: p.batch_size,
            };
            e.store()
                .enter_plan(&p.session_id, &p.turn_id, &p.tool_call_id, batch)?;
            super::sessions::info(e, &p.session_id)
        })
        .await?;
    // The EnterPlanMode call is done (entering Plan voided the session's grants anyway).
    svc.tools.release(svc, &call);
    Ok(super::sessions::with_tool_calls(svc, info))
}

pub(crate) async fn submit(svc: &Inner, p: SubmitPlanParams) -> Result<ApprovalInfo> {
    let call = (p.session_id.clone(), p.tool_call_id.clone());
    let submitted = svc
        .engine(move |e| {
            let ctx = SubmitContext {
                session_id: p.session_id,
                turn_id: p.turn_id,
                tool_call_id: p.tool_call_id,
                batch: BatchPosition {
                    index: p.batch_index,
                    size: p.batch_size,
                },
            };
            let input = SubmitPlanInput {
                title: p.title,
                markdown: p.markdown,
                question: p.question,
            };
            let a = e.submit_plan(&ctx, &input, p.branch_path.as_deref())?;
            approval_info(e, a)
        })
        .await?;
    // The SubmitPlan call is done: it is no longer in flight.
    svc.tools.release(svc, &call);
    Ok(submitted)
}

pub(crate) async fn list(svc: &Inner, p: PlansFilter) -> Result<ApprovalList> {
    let limit = super::limit(p.limit);
    svc.engine(move |e| {
        let rows = e.store().approvals_matching(&ApprovalQuery {
            session_id: p.session_id.as_ref(),
            statuses: p.status.as_deref(),
            execution: planhost_store::ExecutionFilter::Any,
            limit,
        })?;
        let items = rows
            .into_iter()
            .map(|a| approval_info(e, a))
            .collect::<Result<Vec<_>>>()?;
        Ok(ApprovalList { items })
    })
    .await
}

pub(crate) async fn get(svc: &Inner, p: ProposalRef) -> Result<PlanDetail> {
    svc.engine(move |e| {
        let id = resolve_proposal_id(e, &p.proposal_id)?;
        let a = e.store().approval(&id)?;
        let markdown = e.store().submitted_plan(&id)?.markdown;
        let artifact_intact = matches!(e.artifact_on_disk(&a), Ok(ArtifactOnDisk::Intact));
        let last_seen = last_seen(e, &a).map(|(c, bytes)| CheckpointDetail {
            checkpoint: convert::checkpoint(c),
            // Checkpoints are stored from UTF-8 text; anything else is not a plan.
            markdown: String::from_utf8_lossy(&bytes).into_owned(),
        });
        Ok(PlanDetail {
            approval: approval_info(e, a)?,
            markdown,
            artifact_intact,
            last_seen,
        })
    })
    .await
}

/// The checkpoint of the approval's session a person was shown last before the plan arrived,
/// unless it holds exactly the plan's text: a diff base only, so a checkpoint that cannot be
/// read is logged and left out rather than hiding the plan.
pub(crate) fn last_seen(
    e: &mut Engine,
    a: &planhost_store::ApprovalRecord,
) -> Option<(planhost_store::CheckpointRecord, Vec<u8>)> {
    // The artifact's recorded digest is the plan text's: no need to hash the text again.
    e.store()
        .last_seen_checkpoint(&a.session_id, a.created_at.0, &a.artifact_sha256)
        .unwrap_or_else(|error| {
            tracing::warn!(%error, proposal = %a.proposal_id, "reading the checkpoint last seen");
            None
        })
}

pub(crate) async fn resolve(
    svc: &Inner,
    caller: &Caller,
    p: ResolvePlanParams,
) -> Result<ApprovalInfo> {
    let by = caller.by.clone();
    svc.engine(move |e| {
        let request = ResolveRequest {
            proposal_id: p.proposal_id,
            session_id: p.session_id,
            turn_id: p.turn_id,
            tool_call_id: p.tool_call_id,
            version: p.version,
            artifact_sha256: p.artifact_sha256,
            action: p.action,
            target_permission_mode: p.target_permission_mode,
        };
        let a = e.resolve(&request, p.feedback.as_deref(), &by)?;
        approval_info(e, a)
    })
    .await
}

pub(crate) async fn claim(svc: &Inner, p: ExecutionRef) -> Result<ClaimedExecution> {
    let shells = svc.shells;
    svc.engine(move |e| claim_in(e, shells, &p.session_id, &p.execution_id))
        .await
}

/// Claims the queued execution on the engine: its turn begins with the shell pinned, and the
/// exact approved plan comes back.
pub(crate) fn claim_in(
    e: &mut Engine,
    shells: crate::shells::Shells,
    session: &SessionId,
    execution: &ExecutionId,
) -> Result<ClaimedExecution> {
    {
        let pin = shells.pin_for(e, session)?;
        let turn = e.claim_execution(session, execution, pin.as_ref())?;
        let approval = find_execution(e, session, execution)?;
        let plan = e.store().submitted_plan(&approval.proposal_id)?;
        let root = e.store().session(session)?.workspace_root;
        let info = convert::execution(&approval, Some(turn.clone()))
            .ok_or_else(|| ServiceError::Internal("a claimed execution has no state".into()))?;
        Ok(ClaimedExecution {
            execution: info,
            turn: convert::turn(turn),
            title: plan.title,
            markdown: plan.markdown,
            sha256: approval.artifact_sha256.clone(),
            artifact_path: std::path::Path::new(&root)
                .join(&approval.artifact_relative_path)
                .display()
                .to_string(),
        })
    }
}

fn find_execution(
    e: &mut Engine,
    session: &SessionId,
    execution: &ExecutionId,
) -> Result<planhost_store::ApprovalRecord> {
    e.store()
        .approvals_matching(&ApprovalQuery {
            session_id: Some(session),
            ..ApprovalQuery::default()
        })?
        .into_iter()
        .find(|a| a.execution_id.as_ref() == Some(execution))
        .ok_or_else(|| {
            ServiceError::refused(
                ErrorCode::ExecutionNotFound,
                format!("no execution {execution}"),
            )
        })
}

pub(crate) async fn end_execution(svc: &Inner, p: EndExecutionParams) -> Result<ExecutionInfo> {
    svc.engine(move |e| {
        let a = e
            .store()
            .finish_execution(&p.session_id, &p.execution_id, p.outcome)?;
        let turn = match &a.execution_turn_id {
            Some(t) => Some(e.store().turn(t)?),
            None => None,
        };
        convert::execution(&a, turn)
            .ok_or_else(|| ServiceError::Internal("an ended execution has no state".into()))
    })
    .await
}

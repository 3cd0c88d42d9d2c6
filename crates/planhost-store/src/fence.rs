//! The startup fence (seed 000 §3 rule 7, §7): before anything is served, one transaction marks
//! every pending approval and every queued or running execution `interrupted`, aborts running
//! turns and writes audit rows. A pending interruption leaves Plan; an approved one leaves Agent.
//! Nothing is replayed: interrupted rows are terminal.

use planhost_core::{
    ApprovalStatus, EventBody, ExecutionId, ExecutionState, PlanState, ProposalId, PublicationId,
    SessionId, TurnId,
};
use rusqlite::params;
use serde_json::json;

use crate::records::IdColumn;
use crate::tx::AuditSubject;
use crate::{Result, Store};

/// The error code written on rows the fence interrupts.
pub const HOST_RESTARTED: &str = planhost_core::ErrorCode::HostRestarted.as_str();

/// What the fence interrupted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FenceReport {
    /// Proposals that were pending.
    pub interrupted_approvals: Vec<ProposalId>,
    /// Executions that were queued or running.
    pub interrupted_executions: Vec<ExecutionId>,
    /// Turns that were running.
    pub aborted_turns: Vec<TurnId>,
}

impl Store {
    /// The fence, run by a host that was asked to stop (`planhost stop`): its pending work is
    /// interrupted exactly as the next start would, while its clients can still be told.
    pub fn stop_fence(&mut self) -> Result<FenceReport> {
        self.fence()
    }

    /// Runs the fence. Called by `open`; idempotent, so calling it again finds nothing.
    pub(crate) fn fence(&mut self) -> Result<FenceReport> {
        self.transact(|t| {
            let now = t.now.0;
            let pending: Vec<(ProposalId, SessionId, TurnId, i64)> = t
                .tx
                .prepare(
                    "UPDATE plan_approvals SET status = 'interrupted', error_code = ?1, \
                     resolved_at = ?2, updated_at = ?2, version = version + 1 \
                     WHERE status = 'pending' RETURNING request_id, session_id, turn_id, expires_at",
                )?
                .query_map(params![HOST_RESTARTED, now], |r| {
                    Ok((r.id(0)?, r.id(1)?, r.id(2)?, r.get(3)?))
                })?
                .collect::<rusqlite::Result<_>>()?;
            let executions: Vec<(ExecutionId, SessionId, ProposalId)> = t
                .tx
                .prepare(
                    "UPDATE plan_approvals SET execution_state = 'interrupted', error_code = ?1, \
                     updated_at = ?2, version = version + 1 \
                     WHERE execution_state IN ('queued', 'running') \
                     RETURNING execution_id, session_id, request_id",
                )?
                .query_map(params![HOST_RESTARTED, now], |r| Ok((r.id(0)?, r.id(1)?, r.id(2)?)))?
                .collect::<rusqlite::Result<_>>()?;
            let turns: Vec<(TurnId, SessionId)> = t
                .tx
                .prepare(
                    "UPDATE turns SET state = 'aborted', ended_at = ?1 WHERE state = 'running' \
                     RETURNING id, session_id",
                )?
                .query_map(params![now], |r| Ok((r.id(0)?, r.id(1)?)))?
                .collect::<rusqlite::Result<_>>()?;
            // A publication not yet approved is not carried across a restart; one approved (its
            // write may have happened) stays `approved` for the host to reconcile against the disk.
            let publications: Vec<(PublicationId, SessionId)> = t
                .tx
                .prepare(
                    "UPDATE publication_approvals SET status = 'interrupted', error_code = ?1, updated_at = ?2 \
                     WHERE status = 'pending' RETURNING id, session_id",
                )?
                .query_map(params![HOST_RESTARTED, now], |r| Ok((r.id(0)?, r.id(1)?)))?
                .collect::<rusqlite::Result<_>>()?;
            for (id, session_id) in &publications {
                let subject = AuditSubject { session_id: Some(session_id), ..AuditSubject::default() };
                t.audit(subject, planhost_core::AuditAction::FencePublicationInterrupted, &json!({ "id": id }))?;
            }
            // A pending handoff has no in-process capability any more: it is never dispatched by
            // itself; review, retry or cancel it (seed 004).
            t.tx.execute(
                "UPDATE plan_identities SET handoff_restarted = 1, handoff_token = NULL, updated_at = ?1 \
                 WHERE phase = 'handoff_pending'",
                params![now],
            )?;
            // A pending interruption stops Plan; the mode stays whatever it durably is.
            t.tx.execute(
                "UPDATE sessions SET plan_state = ?1, updated_at = ?2 WHERE plan_state = ?3",
                params![PlanState::Stopped.as_str(), now, PlanState::AwaitingApproval.as_str()],
            )?;
            for (proposal_id, session_id, turn_id, expires_at) in &pending {
                let subject = AuditSubject {
                    session_id: Some(session_id),
                    turn_id: Some(turn_id),
                    proposal_id: Some(proposal_id),
                    ..AuditSubject::default()
                };
                t.audit(subject, planhost_core::AuditAction::FenceApprovalInterrupted, &json!({ "code": HOST_RESTARTED }))?;
                t.emit(
                    session_id,
                    EventBody::ApprovalChanged {
                        proposal_id: proposal_id.clone(),
                        status: ApprovalStatus::Interrupted,
                        expires_at: planhost_core::Timestamp(*expires_at),
                        error_code: Some(planhost_core::ErrorCode::HostRestarted),
                        resolved_by: None,
                    },
                )?;
            }
            for (execution_id, session_id, proposal_id) in &executions {
                let subject = AuditSubject {
                    session_id: Some(session_id),
                    proposal_id: Some(proposal_id),
                    ..AuditSubject::default()
                };
                t.audit(
                    subject,
                    planhost_core::AuditAction::FenceExecutionInterrupted,
                    &json!({ "executionId": execution_id, "code": HOST_RESTARTED }),
                )?;
                t.emit(
                    session_id,
                    EventBody::ExecutionChanged {
                        execution_id: execution_id.clone(),
                        proposal_id: proposal_id.clone(),
                        state: ExecutionState::Interrupted,
                    },
                )?;
            }
            for (turn_id, session_id) in &turns {
                let subject = AuditSubject {
                    session_id: Some(session_id),
                    turn_id: Some(turn_id),
                    ..AuditSubject::default()
                };
                t.audit(subject, planhost_core::AuditAction::FenceTurnAborted, &json!({ "code": HOST_RESTARTED }))?;
            }
            Ok(FenceReport {
                interrupted_approvals: pending.into_iter().map(|p| p.0).collect(),
                interrupted_executions: executions.into_iter().map(|e| e.0).collect(),
                aborted_turns: turns.into_iter().map(|t| t.0).collect(),
            })
        })
    }
}

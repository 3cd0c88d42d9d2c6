//! The execution queue: the worker claims queued → running (starting the execution turn) and
//! finishes completed or interrupted.

use planhost_core::{
    ExecutionId, ExecutionOutcome, ExecutionState, SessionId, TurnId, TurnOrigin, TurnState,
};
use rusqlite::params;
use serde_json::json;

use crate::records::TurnRecord;
use crate::turns::{ShellPin, close_turn, insert_turn, proposal_of_execution};
use crate::tx::AuditSubject;
use crate::{Result, Store};

impl Store {
    /// Claims the session's queued execution and starts its turn.
    pub fn claim_execution(
        &mut self,
        session_id: &SessionId,
        execution_id: &ExecutionId,
        shell: Option<&ShellPin>,
        new_turn_id: &TurnId,
    ) -> Result<TurnRecord> {
        self.transact(|t| {
            let view = t.view(session_id)?;
            planhost_core::claim_execution(&view, execution_id)?;
            insert_turn(
                t,
                session_id,
                new_turn_id,
                TurnOrigin::Execution,
                Some(execution_id),
                shell,
            )?;
            t.tx.prepare_cached(
                "UPDATE plan_approvals SET execution_state = ?2, execution_turn_id = ?3, \
                 updated_at = ?4, version = version + 1 WHERE execution_id = ?1",
            )?
            .execute(params![
                execution_id.as_str(),
                ExecutionState::Running.as_str(),
                new_turn_id.as_str(),
                t.now.0
            ])?;
            let proposal = proposal_of_execution(t, execution_id)?;
            let subject = AuditSubject {
                session_id: Some(session_id),
                turn_id: Some(new_turn_id),
                proposal_id: Some(&proposal),
                ..AuditSubject::default()
            };
            t.audit(
                subject,
                planhost_core::AuditAction::ExecutionClaimed,
                &json!({ "executionId": execution_id }),
            )?;
            t.emit_execution(&proposal)?;
            t.turn(new_turn_id)?
                .ok_or_else(|| crate::error::corrupt("turns", "inserted turn missing"))
        })
    }

    /// Finishes the live execution and ends its turn.
    pub fn finish_execution(
        &mut self,
        session_id: &SessionId,
        execution_id: &ExecutionId,
        outcome: ExecutionOutcome,
    ) -> Result<crate::ApprovalRecord> {
        self.transact(|t| {
            let view = t.view(session_id)?;
            planhost_core::finish_execution(&view, execution_id, outcome)?;
            let turn_id = view.execution.as_ref().and_then(|e| e.turn_id.clone());
            t.tx.prepare_cached(
                "UPDATE plan_approvals SET execution_state = ?2, updated_at = ?3, version = version + 1 \
                 WHERE execution_id = ?1",
            )?
            .execute(params![execution_id.as_str(), ExecutionState::from(outcome).as_str(), t.now.0])?;
            if let Some(turn_id) = &turn_id {
                let state = match outcome {
                    ExecutionOutcome::Completed => TurnState::Completed,
                    ExecutionOutcome::Interrupted => TurnState::Aborted,
                };
                close_turn(t, session_id, turn_id, state)?;
            }
            let proposal = proposal_of_execution(t, execution_id)?;
            let subject = AuditSubject {
                session_id: Some(session_id),
                turn_id: turn_id.as_ref(),
                proposal_id: Some(&proposal),
                ..AuditSubject::default()
            };
            t.audit(subject, planhost_core::AuditAction::ExecutionFinished, &json!({ "executionId": execution_id, "outcome": outcome }))?;
            t.emit_execution(&proposal)
        })
    }
}

//! Turns: begin, end, abort, and the agent's EnterPlanMode.

use planhost_core::{
    ApprovalStatus, BatchPosition, Dialect, EventBody, ExecutionId, ExecutionState, ProposalId,
    SessionId, ShellId, ToolCallId, TurnId, TurnOrigin, TurnState,
};
use rusqlite::params;
use serde_json::json;

use crate::records::{IdColumn, TurnRecord};
use crate::tx::{AuditSubject, Tx};
use crate::{Result, Store, StoreError};

/// The shell pinned at turn launch (seed 000 §8): it never changes for the turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShellPin {
    /// Effective shell id.
    pub id: ShellId,
    /// Its dialect.
    pub dialect: Dialect,
}

impl Store {
    /// Begins a user or scheduled turn; refused unless the session is idle, and refused in Plan
    /// for scheduled turns and unattended sessions.
    pub fn begin_turn(
        &mut self,
        session_id: &SessionId,
        origin: TurnOrigin,
        shell: Option<&ShellPin>,
        new_id: &TurnId,
    ) -> Result<TurnRecord> {
        self.transact(|t| {
            let view = t.view(session_id)?;
            let state = planhost_core::begin_turn(&view, origin)?;
            insert_turn(t, session_id, new_id, origin, None, shell)?;
            t.set_state(&view, state)?;
            let subject = AuditSubject {
                session_id: Some(session_id),
                turn_id: Some(new_id),
                ..AuditSubject::default()
            };
            t.audit(
                subject,
                planhost_core::AuditAction::TurnStarted,
                &json!({ "origin": origin, "shell": shell.map(|s| &s.id) }),
            )?;
            t.turn(new_id)?
                .ok_or_else(|| crate::error::corrupt("turns", "inserted turn missing"))
        })
    }

    /// Ends the active user or scheduled turn normally.
    pub fn end_turn(&mut self, session_id: &SessionId, turn_id: &TurnId) -> Result<TurnRecord> {
        self.transact(|t| {
            let view = t.view(session_id)?;
            let close = planhost_core::end_turn(&view, turn_id)?;
            close_turn(t, session_id, turn_id, TurnState::Completed)?;
            t.set_state(&view, close.state)?;
            t.turn(turn_id)?
                .ok_or_else(|| crate::error::corrupt("turns", "turn missing"))
        })
    }

    /// Aborts the active turn, interrupting an approval it raised or an execution it ran.
    pub fn abort_turn(&mut self, session_id: &SessionId, turn_id: &TurnId) -> Result<TurnRecord> {
        self.transact(|t| {
            let view = t.view(session_id)?;
            let close = planhost_core::abort_turn(&view, turn_id)?;
            close_turn(t, session_id, turn_id, TurnState::Aborted)?;
            if let Some(proposal_id) = &close.interrupt_approval {
                t.tx.prepare_cached(
                    "UPDATE plan_approvals SET status = ?2, error_code = 'TURN_ABORTED', \
                     resolved_at = ?3, updated_at = ?3, version = version + 1 WHERE request_id = ?1",
                )?
                .execute(params![proposal_id.as_str(), ApprovalStatus::Interrupted.as_str(), t.now.0])?;
                let subject = AuditSubject {
                    session_id: Some(session_id),
                    turn_id: Some(turn_id),
                    proposal_id: Some(proposal_id),
                    ..AuditSubject::default()
                };
                t.audit(subject, planhost_core::AuditAction::ApprovalInterrupted, &json!({ "code": "TURN_ABORTED" }))?;
                t.emit_approval(proposal_id)?;
            }
            if let Some(execution_id) = &close.interrupt_execution {
                t.tx.prepare_cached(
                    "UPDATE plan_approvals SET execution_state = ?2, error_code = 'TURN_ABORTED', \
                     updated_at = ?3, version = version + 1 WHERE execution_id = ?1",
                )?
                .execute(params![execution_id.as_str(), ExecutionState::Interrupted.as_str(), t.now.0])?;
                let subject = AuditSubject {
                    session_id: Some(session_id),
                    turn_id: Some(turn_id),
                    ..AuditSubject::default()
                };
                t.audit(subject, planhost_core::AuditAction::ExecutionInterrupted, &json!({ "executionId": execution_id }))?;
                let proposal = proposal_of_execution(t, execution_id)?;
                t.emit_execution(&proposal)?;
            }
            t.set_state(&view, close.state)?;
            t.turn(turn_id)?.ok_or_else(|| crate::error::corrupt("turns", "turn missing"))
        })
    }

    /// The agent's EnterPlanMode tool call: the only call in its batch, inside the active turn.
    pub fn enter_plan(
        &mut self,
        session_id: &SessionId,
        turn_id: &TurnId,
        tool_call_id: &ToolCallId,
        batch: BatchPosition,
    ) -> Result<crate::SessionRecord> {
        self.transact(|t| {
            let view = t.view(session_id)?;
            let state = planhost_core::enter_plan(&view, turn_id, batch)?;
            t.set_state(&view, state)?;
            let subject = AuditSubject {
                session_id: Some(session_id),
                turn_id: Some(turn_id),
                tool_call_id: Some(tool_call_id),
                ..AuditSubject::default()
            };
            t.audit(
                subject,
                planhost_core::AuditAction::PlanEntered,
                &json!({ "planState": state.plan_state }),
            )?;
            t.session(session_id)
        })
    }

    /// One turn by id.
    pub fn turn(&mut self, turn_id: &TurnId) -> Result<TurnRecord> {
        self.read(|t| {
            t.turn(turn_id)?
                .ok_or_else(|| StoreError::TurnNotFound(turn_id.clone()))
        })
    }
}

pub(crate) fn insert_turn(
    t: &mut Tx<'_>,
    session_id: &SessionId,
    turn_id: &TurnId,
    origin: TurnOrigin,
    execution_id: Option<&ExecutionId>,
    shell: Option<&ShellPin>,
) -> Result<()> {
    let pin = policy_pin(t, session_id)?;
    t.tx.prepare_cached(
        "INSERT INTO turns (id, session_id, origin, state, execution_id, shell_id, shell_dialect, \
         started_at, policy_mode, policy_permission, policy_preset) \
         VALUES (?1, ?2, ?3, 'running', ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
    )?
    .execute(params![
        turn_id.as_str(),
        session_id.as_str(),
        origin.as_str(),
        execution_id.map(ExecutionId::as_str),
        shell.map(|s| s.id.as_str()),
        shell.map(|s| s.dialect.as_str()),
        t.now.0,
        pin.mode.as_str(),
        pin.permission.as_str(),
        pin.preset.as_str(),
    ])?;
    t.emit(
        session_id,
        EventBody::TurnStarted {
            turn_id: turn_id.clone(),
            origin,
        },
    )
}

/// The policy a turn starts with: the session's mode, and its permission mode and preset with
/// the host defaults resolved now.
pub type PolicyPin = planhost_core::PolicyView;

fn policy_pin(t: &Tx<'_>, session_id: &SessionId) -> Result<PolicyPin> {
    let session = t.session(session_id)?;
    let setting = |key: crate::SettingKey| crate::settings::read(&t.tx, key);
    let defaults = crate::queries::policy_defaults(
        setting(crate::SettingKey::DefaultPermissionMode)?,
        setting(crate::SettingKey::DefaultPolicyPreset)?,
    );
    Ok(planhost_core::live_policy(
        session.mode,
        session.permission_mode,
        session.policy_preset,
        defaults,
    ))
}

pub(crate) fn close_turn(
    t: &mut Tx<'_>,
    session_id: &SessionId,
    turn_id: &TurnId,
    state: TurnState,
) -> Result<()> {
    t.tx.prepare_cached(
        "UPDATE turns SET state = ?2, ended_at = ?3 WHERE id = ?1 AND state = 'running'",
    )?
    .execute(params![turn_id.as_str(), state.as_str(), t.now.0])?;
    let subject = AuditSubject {
        session_id: Some(session_id),
        turn_id: Some(turn_id),
        ..AuditSubject::default()
    };
    t.audit(
        subject,
        planhost_core::AuditAction::TurnEnded,
        &json!({ "state": state }),
    )?;
    t.emit(
        session_id,
        EventBody::TurnEnded {
            turn_id: turn_id.clone(),
            state,
        },
    )
}

pub(crate) fn proposal_of_execution(t: &Tx<'_>, execution_id: &ExecutionId) -> Result<ProposalId> {
    Ok(t.tx
        .prepare_cached("SELECT request_id FROM plan_approvals WHERE execution_id = ?1")?
        .query_row([execution_id.as_str()], |r| r.id(0))?)
}

//! The handoff phase (seed 004) and the tool baseline with drift detection.

use planhost_core::{
    CheckpointId, HandoffPhase, HandoffStep, PublicationId, SessionId, ToolsConflict, handoff_next,
    tools_drifted, tools_to_restore,
};
use rusqlite::params;
use serde_json::json;

use super::PlanIdentity;
use crate::tx::AuditSubject;
use crate::{Result, Store, StoreError};

/// A handoff request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HandoffRequest {
    /// A person approved the latest checkpoint for execution; binds it and issues a token.
    Approve {
        /// The checkpoint approved.
        checkpoint_id: CheckpointId,
        /// The new in-process capability.
        token: String,
    },
    /// The client saw the execution prompt start; the token must be this process's.
    Accept {
        /// The capability from `Approve` (or `Retry`).
        token: String,
    },
    /// Back to ready.
    Cancel,
    /// After a restart: review again and issue a fresh token.
    Retry {
        /// The new capability.
        token: String,
    },
}

impl Store {
    /// Applies one handoff step and returns the identity after it.
    pub fn handoff(
        &mut self,
        session_id: &SessionId,
        request: &HandoffRequest,
    ) -> Result<PlanIdentity> {
        self.transact(|t| {
            let id = t.identity(session_id)?;
            let conflict = if id.tool_conflict { ToolsConflict::Unresolved } else { ToolsConflict::None };
            let (step, token, checkpoint, restarted) = match request {
                HandoffRequest::Approve { checkpoint_id, token } => {
                    (HandoffStep::Approve, Some(token.clone()), Some(*checkpoint_id), false)
                }
                HandoffRequest::Accept { token } => {
                    if id.handoff_restarted || id.handoff_token.as_deref() != Some(token.as_str()) {
                        return Err(StoreError::HandoffStale);
                    }
                    (HandoffStep::Accept, None, None, false)
                }
                HandoffRequest::Cancel => (HandoffStep::Cancel, None, None, false),
                HandoffRequest::Retry { token } => {
                    if id.phase != HandoffPhase::HandoffPending {
                        return Err(planhost_core::CoreError::HandoffPhaseInvalid { phase: id.phase.as_str() }.into());
                    }
                    if conflict == ToolsConflict::Unresolved {
                        return Err(planhost_core::CoreError::ToolsConflict.into());
                    }
                    t.tx.prepare_cached(
                        "UPDATE plan_identities SET handoff_token = ?2, handoff_restarted = 0, updated_at = ?3 \
                         WHERE session_id = ?1",
                    )?
                    .execute(params![session_id.as_str(), token, t.now.0])?;
                    let subject = AuditSubject { session_id: Some(session_id), ..AuditSubject::default() };
                    t.audit(subject, planhost_core::AuditAction::HandoffRetry, &json!({}))?;
                    return t.identity(session_id);
                }
            };
            let phase = handoff_next(id.phase, step, conflict)?;
            if step == HandoffStep::Accept {
                // The execution prompt started: Plan mode ends in the same transaction, so the
                // turn the client begins next is an Agent turn (seed 004: accepted → off).
                let view = t.view(session_id)?;
                let state = planhost_core::set_mode(&view, planhost_core::Mode::Agent)?;
                t.set_state(&view, state)?;
            }
            let keep_binding = phase == HandoffPhase::HandoffPending;
            t.tx.prepare_cached(
                "UPDATE plan_identities SET phase = ?2, handoff_token = ?3, handoff_checkpoint = ?4, \
                 handoff_restarted = ?5, updated_at = ?6 WHERE session_id = ?1",
            )?
            .execute(params![
                session_id.as_str(),
                phase.as_str(),
                if keep_binding { token.or(id.handoff_token.clone()) } else { None },
                if keep_binding { checkpoint.or(id.handoff_checkpoint).map(|c| c.0) } else { None },
                i64::from(restarted),
                t.now.0,
            ])?;
            let subject = AuditSubject { session_id: Some(session_id), ..AuditSubject::default() };
            t.audit(subject, planhost_core::AuditAction::HandoffStep, &json!({ "from": id.phase, "to": phase }))?;
            t.emit(session_id, planhost_core::EventBody::HandoffChanged { phase })?;
            t.identity(session_id)
        })
    }

    /// Records the tool set at plan entry (`baseline`) and what Plan mode applied.
    pub fn tools_enter(
        &mut self,
        session_id: &SessionId,
        baseline: &[String],
        applied: &[String],
    ) -> Result<PlanIdentity> {
        self.set_tools(
            session_id,
            Some(baseline),
            Some(applied),
            false,
            planhost_core::AuditAction::ToolsetApplied,
        )
    }

    /// Compares the observed tool set with the applied one; a difference is a conflict that
    /// blocks approval until resolved. Returns the identity (its `tool_conflict`).
    pub fn tools_observe(
        &mut self,
        session_id: &SessionId,
        observed: &[String],
    ) -> Result<PlanIdentity> {
        let id = self.plan_identity(session_id)?;
        let Some(applied) = id.tool_applied.clone() else {
            return Ok(id);
        };
        if !tools_drifted(&applied, observed) || id.tool_conflict {
            return Ok(id);
        }
        self.set_tools(
            session_id,
            id.tool_baseline.as_deref(),
            Some(&applied),
            true,
            planhost_core::AuditAction::ToolsetConflict,
        )
    }

    /// A person accepts the observed set as the applied one; the conflict clears.
    pub fn tools_resolve(
        &mut self,
        session_id: &SessionId,
        observed: &[String],
    ) -> Result<PlanIdentity> {
        let id = self.plan_identity(session_id)?;
        self.set_tools(
            session_id,
            id.tool_baseline.as_deref(),
            Some(observed),
            false,
            planhost_core::AuditAction::ToolsetAccepted,
        )
    }

    /// Exit: the tools to restore are the baseline intersected with what exists now; the
    /// baseline is cleared (re-entering records a new one).
    pub fn tools_exit(
        &mut self,
        session_id: &SessionId,
        available_now: &[String],
    ) -> Result<Vec<String>> {
        let id = self.plan_identity(session_id)?;
        let restore = id
            .tool_baseline
            .as_deref()
            .map(|b| tools_to_restore(b, available_now))
            .unwrap_or_default();
        self.set_tools(
            session_id,
            None,
            None,
            false,
            planhost_core::AuditAction::ToolsetRestored,
        )?;
        Ok(restore)
    }

    fn set_tools(
        &mut self,
        session_id: &SessionId,
        baseline: Option<&[String]>,
        applied: Option<&[String]>,
        conflict: bool,
        action: planhost_core::AuditAction,
    ) -> Result<PlanIdentity> {
        let encode = |v: Option<&[String]>| {
            v.map(|v| serde_json::to_string(v).unwrap_or_else(|_| "[]".into()))
        };
        let (baseline, applied) = (encode(baseline), encode(applied));
        self.transact(|t| {
            t.identity(session_id)?;
            t.tx.prepare_cached(
                "UPDATE plan_identities SET tool_baseline = ?2, tool_applied = ?3, tool_conflict = ?4, updated_at = ?5 \
                 WHERE session_id = ?1",
            )?
            .execute(params![session_id.as_str(), baseline, applied, i64::from(conflict), t.now.0])?;
            let subject = AuditSubject { session_id: Some(session_id), ..AuditSubject::default() };
            t.audit(subject, action, &json!({ "baseline": baseline, "applied": applied, "conflict": conflict }))?;
            t.identity(session_id)
        })
    }
}

impl Store {
    /// The client moved to another branch (`/tree`): every approval bound to the old position is
    /// cleared — a pending publication is revoked, a pending handoff goes back to ready (seed
    /// 003: "/tree always clears approval"). Returns the revoked publication ids.
    pub fn branch_switched(&mut self, session_id: &SessionId) -> Result<Vec<PublicationId>> {
        self.transact(|t| {
            let identity = t.identity(session_id)?;
            let revoked = t.revoke_pending_publications(session_id, planhost_core::ErrorCode::BranchSwitched)?;
            if identity.phase == HandoffPhase::HandoffPending {
                t.tx.prepare_cached(
                    "UPDATE plan_identities SET phase = 'ready', handoff_token = NULL, handoff_checkpoint = NULL, \
                     handoff_restarted = 0, updated_at = ?2 WHERE session_id = ?1",
                )?
                .execute(params![session_id.as_str(), t.now.0])?;
                t.emit(session_id, planhost_core::EventBody::HandoffChanged { phase: HandoffPhase::Ready })?;
            }
            let subject = AuditSubject { session_id: Some(session_id), ..AuditSubject::default() };
            t.audit(subject, planhost_core::AuditAction::PlanBranchSwitched, &json!({ "revokedPublications": revoked }))?;
            Ok(revoked)
        })
    }
}

impl Store {
    /// Leaves Plan mode in one transaction: the session goes to Agent (idle only) and the handoff
    /// phase to off; checkpoints and the plan identity stay for a later `/plan`.
    /// Returns the publication approvals it revoked.
    pub fn exit_plan(&mut self, session_id: &SessionId) -> Result<Vec<PublicationId>> {
        self.transact(|t| {
            let view = t.view(session_id)?;
            let state = planhost_core::set_mode(&view, planhost_core::Mode::Agent)?;
            t.set_state(&view, state)?;
            // Exit without publishing publishes nothing, now or later.
            let revoked =
                t.revoke_pending_publications(session_id, planhost_core::ErrorCode::PlanExited)?;
            let identity = t.identity(session_id)?;
            let phase = handoff_next(identity.phase, HandoffStep::Exit, ToolsConflict::None)?;
            t.tx.prepare_cached(
                "UPDATE plan_identities SET phase = ?2, handoff_token = NULL, handoff_checkpoint = NULL, \
                 handoff_restarted = 0, updated_at = ?3 WHERE session_id = ?1",
            )?
            .execute(params![session_id.as_str(), phase.as_str(), t.now.0])?;
            if phase != identity.phase {
                t.emit(session_id, planhost_core::EventBody::HandoffChanged { phase })?;
            }
            let subject = AuditSubject { session_id: Some(session_id), ..AuditSubject::default() };
            t.audit(subject, planhost_core::AuditAction::PlanExited, &json!({ "published": identity.published_path }))?;
            Ok(revoked)
        })
    }
}

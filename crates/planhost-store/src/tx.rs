//! One transaction per transition: load the domain view, apply the change, emit events, audit.

use planhost_core::{
    ActiveTurn, ApprovalIdentity, ApprovalView, Event, EventBody, LiveExecution, ProposalId,
    SessionId, SessionState, SessionView, Timestamp, ToolCallId, TurnId,
};
use rusqlite::{OptionalExtension, Transaction, params};

use crate::records::{
    APPROVAL_COLUMNS, ApprovalRecord, IdColumn, SESSION_COLUMNS, SessionRecord, TURN_COLUMNS,
    TurnRecord, approval_from_row, parse, session_from_row, turn_from_row,
};
use crate::{Result, StoreError};

/// A transition in progress. Events collected here are published only after commit.
pub(crate) struct Tx<'c> {
    pub(crate) tx: Transaction<'c>,
    pub(crate) now: Timestamp,
    /// Where a fresh id comes from (a session's plan id, on first use).
    pub(crate) ids: std::sync::Arc<dyn planhost_core::IdSource>,
    pub(crate) events: Vec<Event>,
}

/// Who an audit row is about.
#[derive(Debug, Clone, Copy, Default)]
pub struct AuditSubject<'a> {
    /// Session.
    pub session_id: Option<&'a SessionId>,
    /// Turn.
    pub turn_id: Option<&'a TurnId>,
    /// Tool call.
    pub tool_call_id: Option<&'a ToolCallId>,
    /// Proposal.
    pub proposal_id: Option<&'a ProposalId>,
}

impl Tx<'_> {
    pub(crate) fn session(&self, id: &SessionId) -> Result<SessionRecord> {
        let sql = format!("SELECT {SESSION_COLUMNS} FROM sessions WHERE id = ?1");
        self.tx
            .prepare_cached(&sql)?
            .query_row([id.as_str()], session_from_row)
            .optional()?
            .ok_or_else(|| StoreError::SessionNotFound(id.clone()))?
    }

    pub(crate) fn session_by_external_id(&self, external: &str) -> Result<Option<SessionRecord>> {
        let sql = format!("SELECT {SESSION_COLUMNS} FROM sessions WHERE external_id = ?1");
        self.tx
            .prepare_cached(&sql)?
            .query_row([external], session_from_row)
            .optional()?
            .transpose()
    }

    pub(crate) fn turn(&self, id: &TurnId) -> Result<Option<TurnRecord>> {
        let sql = format!("SELECT {TURN_COLUMNS} FROM turns WHERE id = ?1");
        self.tx
            .prepare_cached(&sql)?
            .query_row([id.as_str()], turn_from_row)
            .optional()?
            .transpose()
    }

    pub(crate) fn approval(&self, proposal_id: &ProposalId) -> Result<Option<ApprovalRecord>> {
        let sql = format!("SELECT {APPROVAL_COLUMNS} FROM plan_approvals WHERE request_id = ?1");
        self.tx
            .prepare_cached(&sql)?
            .query_row([proposal_id.as_str()], approval_from_row)
            .optional()?
            .transpose()
    }

    /// The domain's view of one session, read inside this transaction.
    pub(crate) fn view(&self, session_id: &SessionId) -> Result<SessionView> {
        let session = self.session(session_id)?;
        let active_turn = self
            .tx
            .prepare_cached(
                "SELECT id, origin FROM turns WHERE session_id = ?1 AND state = 'running'",
            )?
            .query_row([session_id.as_str()], |r| {
                Ok((r.id::<TurnId>(0)?, r.get::<_, String>(1)?))
            })
            .optional()?
            .map(|(id, origin)| {
                Ok::<_, StoreError>(ActiveTurn {
                    id,
                    origin: parse("turns", origin)?,
                })
            })
            .transpose()?;
        let sql = format!(
            "SELECT {APPROVAL_COLUMNS} FROM plan_approvals WHERE session_id = ?1 AND status = 'pending'"
        );
        let pending = self
            .tx
            .prepare_cached(&sql)?
            .query_row([session_id.as_str()], approval_from_row)
            .optional()?
            .transpose()?
            .map(|a| approval_view(&a));
        let execution = self
            .tx
            .prepare_cached(
                "SELECT execution_id, execution_state, execution_turn_id FROM plan_approvals \
                 WHERE session_id = ?1 AND execution_state IN ('queued', 'running')",
            )?
            .query_row([session_id.as_str()], |r| {
                Ok((r.id(0)?, r.get::<_, String>(1)?, r.id_opt(2)?))
            })
            .optional()?
            .map(|(id, state, turn_id)| {
                Ok::<_, StoreError>(LiveExecution {
                    id,
                    state: parse("plan_approvals", state)?,
                    turn_id,
                })
            })
            .transpose()?;
        Ok(SessionView {
            id: session.id,
            mode: session.mode,
            plan_state: session.plan_state,
            interactivity: session.interactivity,
            active_turn,
            pending,
            execution,
        })
    }

    /// Issues the session's next sequence number and queues the event.
    pub(crate) fn emit(&mut self, session_id: &SessionId, body: EventBody) -> Result<()> {
        let seq: i64 = self
            .tx
            .prepare_cached(
                "UPDATE sessions SET event_seq = event_seq + 1 WHERE id = ?1 RETURNING event_seq",
            )?
            .query_row([session_id.as_str()], |r| r.get(0))?;
        self.events.push(Event {
            session_id: session_id.clone(),
            seq,
            at: self.now,
            body,
        });
        Ok(())
    }

    /// Writes the session's mode and Plan state, and emits `sessionUpdated` if anything changed.
    pub(crate) fn set_state(&mut self, view: &SessionView, state: SessionState) -> Result<()> {
        if view.mode == state.mode && view.plan_state == state.plan_state {
            return Ok(());
        }
        self.tx
            .prepare_cached(
                "UPDATE sessions SET mode = ?2, plan_state = ?3, updated_at = ?4 WHERE id = ?1",
            )?
            .execute(params![
                view.id.as_str(),
                state.mode.as_str(),
                state.plan_state.as_str(),
                self.now.0
            ])?;
        self.emit_session(&view.id)?;
        match (view.mode, state.mode) {
            (planhost_core::Mode::Agent, planhost_core::Mode::Plan) => self.handoff_enter(&view.id),
            (planhost_core::Mode::Plan, _)
            | (planhost_core::Mode::Agent, planhost_core::Mode::Agent) => Ok(()),
        }
    }

    pub(crate) fn emit_session(&mut self, session_id: &SessionId) -> Result<()> {
        let s = self.session(session_id)?;
        self.emit(
            session_id,
            EventBody::SessionUpdated {
                mode: s.mode,
                plan_state: s.plan_state,
                permission_mode: s.permission_mode,
            },
        )
    }

    /// Emits `approvalChanged` for the row's current status.
    pub(crate) fn emit_approval(&mut self, proposal_id: &ProposalId) -> Result<ApprovalRecord> {
        let a = self.existing_approval(proposal_id)?;
        self.emit(
            &a.session_id,
            EventBody::ApprovalChanged {
                proposal_id: a.proposal_id.clone(),
                status: a.status,
                expires_at: a.expires_at,
                error_code: a.error_code,
                resolved_by: a.resolved_by.clone(),
            },
        )?;
        Ok(a)
    }

    /// Emits `executionChanged` for the row's current execution state, if it has one.
    pub(crate) fn emit_execution(&mut self, proposal_id: &ProposalId) -> Result<ApprovalRecord> {
        let a = self.existing_approval(proposal_id)?;
        if let (Some(execution_id), Some(state)) = (&a.execution_id, a.execution_state) {
            self.emit(
                &a.session_id,
                EventBody::ExecutionChanged {
                    execution_id: execution_id.clone(),
                    proposal_id: a.proposal_id.clone(),
                    state,
                },
            )?;
        }
        Ok(a)
    }

    fn existing_approval(&self, proposal_id: &ProposalId) -> Result<ApprovalRecord> {
        self.approval(proposal_id)?
            .ok_or_else(|| crate::error::corrupt("plan_approvals", "row vanished mid-transaction"))
    }

    pub(crate) fn audit(
        &self,
        subject: AuditSubject<'_>,
        action: planhost_core::AuditAction,
        detail: &serde_json::Value,
    ) -> Result<()> {
        self.tx
            .prepare_cached(
                "INSERT INTO audit_log (at, session_id, turn_id, tool_call_id, proposal_id, action, detail) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            )?
            .execute(params![
                self.now.0,
                subject.session_id.map(SessionId::as_str),
                subject.turn_id.map(TurnId::as_str),
                subject.tool_call_id.map(ToolCallId::as_str),
                subject.proposal_id.map(ProposalId::as_str),
                action.as_str(),
                detail.to_string(),
            ])?;
        Ok(())
    }
}

/// The error an armed failpoint injects: SQLite's "database or disk is full". Dropping the
/// transaction it interrupts rolls it back, as after a real failed commit.
#[cfg(feature = "failpoints")]
pub(crate) fn injected(point: &str) -> StoreError {
    StoreError::Sqlite(injected_sqlite(point))
}

/// [`injected`], as SQLite's own error.
#[cfg(feature = "failpoints")]
pub(crate) fn injected_sqlite(point: &str) -> rusqlite::Error {
    rusqlite::Error::SqliteFailure(
        rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_FULL),
        Some(format!("failpoint {point}: database or disk is full")),
    )
}

pub(crate) fn approval_view(a: &ApprovalRecord) -> ApprovalView {
    ApprovalView {
        identity: ApprovalIdentity {
            proposal_id: a.proposal_id.clone(),
            session_id: a.session_id.clone(),
            turn_id: a.turn_id.clone(),
            tool_call_id: a.tool_call_id.clone(),
            version: a.version,
        },
        status: a.status,
        expires_at: a.expires_at,
        artifact_sha256: a.artifact_sha256.clone(),
    }
}

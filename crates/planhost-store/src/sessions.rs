//! Sessions: open, read, select a mode, configure while idle.

use planhost_core::{
    Agent, Interactivity, Mode, PermissionMode, PlanState, PolicyPreset, SessionId, Timestamp,
};
use rusqlite::params;
use serde_json::json;

use crate::records::{SESSION_COLUMNS, SessionRecord, session_from_row};
use crate::tx::AuditSubject;
use crate::{Result, Store, StoreError};

/// Whether a list of sessions includes those the agent ended for good.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    /// Every session.
    Included,
    /// Only sessions that live.
    Excluded,
}

/// Whether a session lives or was ended for good by its agent (`/clear`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionLife {
    /// It lives (any event of it brings it back).
    Live,
    /// Ended for good: it leaves the lists, and keeps everything it holds.
    Ended,
}

/// A request to open (or reopen) a session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenSession {
    /// Absolute, canonical workspace root.
    pub workspace_root: String,
    /// The client's id for the session; reopening with it returns the same session.
    pub external_id: Option<String>,
    /// Whether a person is present to approve.
    pub interactivity: Interactivity,
    /// The agent the session serves; `None`: as recorded (a new session: [`Agent::DEFAULT`]).
    /// Reopening with another agent is refused.
    pub agent: Option<Agent>,
}

/// Configuration changes; `None` leaves a field as it is. Accepted only while idle.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Configure {
    /// New permission mode.
    pub permission_mode: Option<PermissionMode>,
    /// New shell id (`Some(None)` clears it back to the default).
    pub shell_id: Option<Option<planhost_core::ShellId>>,
    /// New provider.
    pub provider: Option<Option<String>>,
    /// New model.
    pub model: Option<Option<String>>,
    /// New policy preset (`Some(None)` clears it back to the default).
    pub policy_preset: Option<Option<PolicyPreset>>,
}

/// An existing session reopened: the same workspace root and agent, or refused.
fn reopened(
    existing: SessionRecord,
    request: &OpenSession,
    external: &str,
) -> Result<SessionRecord> {
    if existing.workspace_root != request.workspace_root {
        return Err(StoreError::WorkspaceMismatch {
            external_id: external.to_owned(),
            existing: existing.workspace_root,
            requested: request.workspace_root.clone(),
        });
    }
    if let Some(requested) = request.agent.filter(|a| *a != existing.agent) {
        return Err(StoreError::AgentMismatch {
            external_id: external.to_owned(),
            existing: existing.agent,
            requested,
        });
    }
    Ok(existing)
}

impl Store {
    /// Opens a session, or returns the existing one for the same external id and root.
    pub fn open_session(
        &mut self,
        request: &OpenSession,
        new_id: &SessionId,
    ) -> Result<SessionRecord> {
        // A reopen (a hook reopens its session on every call) reads and writes nothing.
        if let Some(external) = &request.external_id
            && let Some(existing) = self.read(|t| t.session_by_external_id(external))?
        {
            return reopened(existing, request, external);
        }
        self.transact(|t| {
            if let Some(external) = &request.external_id
                && let Some(existing) = t.session_by_external_id(external)?
            {
                return reopened(existing, request, external);
            }
            let agent = request.agent.unwrap_or(Agent::DEFAULT);
            t.tx.prepare_cached(
                "INSERT INTO sessions (id, external_id, workspace_root, interactivity, mode, plan_state, \
                 permission_mode, created_at, updated_at, agent) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?8, ?9)",
            )?
            .execute(params![
                new_id.as_str(),
                request.external_id,
                request.workspace_root,
                request.interactivity.as_str(),
                Mode::Agent.as_str(),
                PlanState::Inactive.as_str(),
                PermissionMode::Inherit.as_str(),
                t.now.0,
                agent.as_str(),
            ])?;
            let subject = AuditSubject { session_id: Some(new_id), ..AuditSubject::default() };
            t.audit(
                subject,
                planhost_core::AuditAction::SessionOpened,
                &json!({ "workspaceRoot": request.workspace_root, "externalId": request.external_id,
                         "interactivity": request.interactivity, "agent": agent }),
            )?;
            t.emit_session(new_id)?;
            t.session(new_id)
        })
    }

    /// One session by host id.
    pub fn session(&mut self, id: &SessionId) -> Result<SessionRecord> {
        self.read(|t| t.session(id))
    }

    /// Every session, oldest first.
    pub fn sessions(&mut self) -> Result<Vec<SessionRecord>> {
        self.read(|t| {
            let sql = format!("SELECT {SESSION_COLUMNS} FROM sessions ORDER BY created_at, id");
            let mut stmt = t.tx.prepare(&sql)?;
            let rows = stmt.query_map([], session_from_row)?;
            rows.map(|r| r?).collect()
        })
    }

    /// Sessions, newest first, optionally of one workspace root; at most `limit` (0: all).
    /// Sessions the agent ended for good are left out unless `ended` is [`Ended::Included`].
    pub fn sessions_matching(
        &mut self,
        workspace_root: Option<&str>,
        limit: usize,
        ended: Ended,
    ) -> Result<Vec<SessionRecord>> {
        let with_ended = ended == Ended::Included;
        let limit = if limit == 0 {
            -1
        } else {
            i64::try_from(limit).unwrap_or(-1)
        };
        self.read(|t| {
            let sql = format!(
                "SELECT {SESSION_COLUMNS} FROM sessions WHERE (?1 IS NULL OR workspace_root = ?1) \
                 AND (?3 OR ended_at IS NULL) ORDER BY created_at DESC, id DESC LIMIT ?2"
            );
            let mut stmt = t.tx.prepare_cached(&sql)?;
            let rows =
                stmt.query_map(params![workspace_root, limit, with_ended], session_from_row)?;
            rows.map(|r| r?).collect()
        })
    }

    /// Records whether the client keeps its own session (set at open; not a policy input).
    pub fn set_client_persistence(
        &mut self,
        session_id: &SessionId,
        persistence: planhost_core::ClientPersistence,
    ) -> Result<SessionRecord> {
        self.transact(|t| {
            t.session(session_id)?;
            t.tx.prepare_cached(
                "UPDATE sessions SET client_persistence = ?2, updated_at = ?3 WHERE id = ?1",
            )?
            .execute(params![session_id.as_str(), persistence.as_str(), t.now.0])?;
            t.session(session_id)
        })
    }

    /// Records whether a person is at the session now (the agent's face as it is now, not how
    /// the session began): a resumed headless session can plan once a person is there.
    pub fn set_interactivity(
        &mut self,
        session_id: &SessionId,
        interactivity: planhost_core::Interactivity,
    ) -> Result<SessionRecord> {
        self.transact(|t| {
            t.session(session_id)?;
            t.tx.prepare_cached(
                "UPDATE sessions SET interactivity = ?2, updated_at = ?3 WHERE id = ?1",
            )?
            .execute(params![
                session_id.as_str(),
                interactivity.as_str(),
                t.now.0
            ])?;
            t.session(session_id)
        })
    }

    /// Marks the session ended for good (`/clear`), or lives again (`None`: any later event of
    /// it). It stays, with everything it holds; it only leaves the lists.
    pub fn set_session_life(
        &mut self,
        session_id: &SessionId,
        life: SessionLife,
    ) -> Result<SessionRecord> {
        self.transact(|t| {
            t.session(session_id)?;
            let at = match life {
                SessionLife::Ended => Some(t.now.0),
                SessionLife::Live => None,
            };
            t.tx.prepare_cached(
                "UPDATE sessions SET ended_at = ?2, updated_at = ?3 WHERE id = ?1",
            )?
            .execute(params![session_id.as_str(), at, t.now.0])?;
            t.session(session_id)
        })
    }

    /// When the session's most recent turn began, if it had one.
    pub fn last_turn_started(&mut self, session_id: &SessionId) -> Result<Option<Timestamp>> {
        self.read(|t| {
            Ok(t.tx
                .prepare_cached("SELECT MAX(started_at) FROM turns WHERE session_id = ?1")?
                .query_row([session_id.as_str()], |r| r.get::<_, Option<i64>>(0))?
                .map(Timestamp))
        })
    }

    /// A person selects Agent or Plan; accepted only while idle.
    pub fn set_mode(&mut self, session_id: &SessionId, mode: Mode) -> Result<SessionRecord> {
        self.transact(|t| {
            let view = t.view(session_id)?;
            let state = planhost_core::set_mode(&view, mode)?;
            t.set_state(&view, state)?;
            let subject = AuditSubject {
                session_id: Some(session_id),
                ..AuditSubject::default()
            };
            t.audit(
                subject,
                planhost_core::AuditAction::SessionModeSet,
                &json!({ "mode": mode, "planState": state.plan_state }),
            )?;
            t.session(session_id)
        })
    }

    /// Changes configuration; refused while a turn, approval or execution is live.
    pub fn configure(
        &mut self,
        session_id: &SessionId,
        change: &Configure,
    ) -> Result<SessionRecord> {
        self.transact(|t| {
            let view = t.view(session_id)?;
            planhost_core::configure(&view)?;
            let before = t.session(session_id)?;
            let permission = change.permission_mode.unwrap_or(before.permission_mode);
            let shell = change.shell_id.unwrap_or(before.shell_id);
            let provider = change.provider.clone().unwrap_or(before.provider.clone());
            let model = change.model.clone().unwrap_or(before.model.clone());
            let preset = change.policy_preset.unwrap_or(before.policy_preset);
            t.tx.prepare_cached(
                "UPDATE sessions SET permission_mode = ?2, shell_id = ?3, provider = ?4, model = ?5, \
                 policy_preset = ?6, updated_at = ?7 WHERE id = ?1",
            )?
            .execute(params![
                session_id.as_str(),
                permission.as_str(),
                shell.map(planhost_core::ShellId::as_str),
                provider,
                model,
                preset.map(PolicyPreset::as_str),
                t.now.0,
            ])?;
            let subject = AuditSubject { session_id: Some(session_id), ..AuditSubject::default() };
            t.audit(
                subject,
                planhost_core::AuditAction::SessionConfigured,
                &json!({ "permissionMode": permission, "shellId": shell, "provider": provider,
                         "model": model, "policyPreset": preset }),
            )?;
            t.emit_session(session_id)?;
            t.session(session_id)
        })
    }
}

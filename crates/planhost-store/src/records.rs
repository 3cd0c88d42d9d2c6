//! Rows as the store returns them.

use std::str::FromStr;

use planhost_core::{
    ApprovalAction, ApprovalStatus, ExecutionId, ExecutionState, Interactivity, Mode,
    PermissionMode, PlanState, PolicyPreset, ProposalId, SessionId, TargetPermissionMode,
    Timestamp, ToolCallId, TurnId, TurnOrigin, TurnState,
};
use rusqlite::Row;
use serde::Serialize;

use crate::Result;
use crate::error::corrupt;

/// A session row.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionRecord {
    /// Host id (UUID v7).
    pub id: SessionId,
    /// The client's own id, e.g. pi's session id.
    pub external_id: Option<String>,
    /// Absolute workspace root.
    pub workspace_root: String,
    /// Whether a person is present.
    pub interactivity: Interactivity,
    /// Durable mode.
    pub mode: Mode,
    /// Live Plan state.
    pub plan_state: PlanState,
    /// Permission mode.
    pub permission_mode: PermissionMode,
    /// Configured shell id; `None` uses the host default.
    pub shell_id: Option<planhost_core::ShellId>,
    /// Configured provider.
    pub provider: Option<String>,
    /// Configured model.
    pub model: Option<String>,
    /// Policy preset; `None` uses the host default.
    pub policy_preset: Option<PolicyPreset>,
    /// The last event sequence number issued.
    pub event_seq: i64,
    /// Whether the client keeps its own session.
    pub client_persistence: planhost_core::ClientPersistence,
    /// The agent the session serves (schema v7; `pi` for sessions from before).
    pub agent: planhost_core::Agent,
    /// Creation time.
    pub created_at: Timestamp,
    /// Last change.
    pub updated_at: Timestamp,
    /// When the agent ended it for good (`/clear`); `None` while it lives. Schema v9.
    pub ended_at: Option<Timestamp>,
}

/// A turn row.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TurnRecord {
    /// Turn id.
    pub id: TurnId,
    /// Owning session.
    pub session_id: SessionId,
    /// Who started it.
    pub origin: TurnOrigin,
    /// Running, completed or aborted.
    pub state: TurnState,
    /// For execution turns, the execution.
    pub execution_id: Option<ExecutionId>,
    /// The shell id pinned at launch.
    pub shell_id: Option<planhost_core::ShellId>,
    /// The shell dialect pinned at launch.
    pub shell_dialect: Option<planhost_core::Dialect>,
    /// Start.
    pub started_at: Timestamp,
    /// End.
    pub ended_at: Option<Timestamp>,
    /// The mode the turn started in (absent for turns from before schema v3).
    pub policy_mode: Option<planhost_core::Mode>,
}

/// A `plan_approvals` row without the plan body (see `Store::plan_markdown`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalRecord {
    /// Proposal id (`request_id`).
    pub proposal_id: ProposalId,
    /// Owning session.
    pub session_id: SessionId,
    /// The SubmitPlan turn.
    pub turn_id: TurnId,
    /// The SubmitPlan tool call.
    pub tool_call_id: ToolCallId,
    /// Structured title.
    pub title: String,
    /// Structured question.
    pub question: String,
    /// Status.
    pub status: ApprovalStatus,
    /// The action taken, once resolved by a person.
    pub action: Option<ApprovalAction>,
    /// The permission mode chosen at approval.
    pub target_permission_mode: Option<TargetPermissionMode>,
    /// Free text given with a rejection.
    pub feedback: Option<String>,
    /// Creation.
    pub created_at: Timestamp,
    /// Last change.
    pub updated_at: Timestamp,
    /// Absolute deadline.
    pub expires_at: Timestamp,
    /// When it left `pending`.
    pub resolved_at: Option<Timestamp>,
    /// Why it ended, for expired and interrupted rows.
    pub error_code: Option<planhost_core::ErrorCode>,
    /// Who approved or rejected it; `None` while pending and when the host ended it.
    pub resolved_by: Option<planhost_core::Resolver>,
    /// Row version.
    pub version: i64,
    /// `.pi/plan/<unique>.md`, relative to the workspace root.
    pub artifact_relative_path: String,
    /// SHA-256 of the artifact bytes.
    pub artifact_sha256: String,
    /// Artifact size.
    pub artifact_size_bytes: i64,
    /// The execution approval granted.
    pub execution_id: Option<ExecutionId>,
    /// Its state.
    pub execution_state: Option<ExecutionState>,
    /// The execution turn, once claimed.
    pub execution_turn_id: Option<TurnId>,
}

/// An audit row.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AuditRecord {
    /// Monotonic id.
    pub id: i64,
    /// When.
    pub at: Timestamp,
    /// Session, if any.
    pub session_id: Option<SessionId>,
    /// Turn, if any.
    pub turn_id: Option<TurnId>,
    /// Tool call, if any.
    pub tool_call_id: Option<ToolCallId>,
    /// Proposal, if any.
    pub proposal_id: Option<ProposalId>,
    /// What happened, e.g. `approval.approved`.
    pub action: planhost_core::AuditAction,
    /// JSON detail.
    pub detail: String,
}

/// Reads a TEXT id column into its typed id: the ids live in `planhost_core`, which knows
/// nothing of SQLite, so the conversion is here (the column holds the id's text as is).
pub(crate) trait IdColumn {
    /// The id in column `idx`.
    fn id<T: From<String>>(&self, idx: usize) -> rusqlite::Result<T>;
    /// The id in column `idx`, or `None` for NULL.
    fn id_opt<T: From<String>>(&self, idx: usize) -> rusqlite::Result<Option<T>>;
}

impl IdColumn for Row<'_> {
    fn id<T: From<String>>(&self, idx: usize) -> rusqlite::Result<T> {
        self.get::<_, String>(idx).map(T::from)
    }

    fn id_opt<T: From<String>>(&self, idx: usize) -> rusqlite::Result<Option<T>> {
        Ok(self.get::<_, Option<String>>(idx)?.map(T::from))
    }
}

pub(crate) fn parse<T: FromStr>(table: &'static str, value: String) -> Result<T>
where
    T::Err: std::fmt::Display,
{
    T::from_str(&value).map_err(|e| corrupt(table, e))
}

fn parse_opt<T: FromStr>(table: &'static str, value: Option<String>) -> Result<Option<T>>
where
    T::Err: std::fmt::Display,
{
    value.map(|v| parse(table, v)).transpose()
}

pub(crate) const SESSION_COLUMNS: &str = "id, external_id, workspace_root, interactivity, mode, \
    plan_state, permission_mode, shell_id, provider, model, policy_preset, event_seq, created_at, \
    updated_at, client_persistence, agent, ended_at";

pub(crate) fn session_from_row(row: &Row<'_>) -> rusqlite::Result<Result<SessionRecord>> {
    let t = "sessions";
    let raw = (
        row.get::<_, String>(3)?,
        row.get::<_, String>(4)?,
        row.get::<_, String>(5)?,
        row.get::<_, String>(6)?,
        row.get::<_, Option<String>>(10)?,
    );
    let (id, external_id, workspace_root) = (row.id(0)?, row.get(1)?, row.get(2)?);
    let (shell_id, provider, model): (Option<String>, _, _) =
        (row.get(7)?, row.get(8)?, row.get(9)?);
    let (event_seq, created_at, updated_at) = (row.get(11)?, row.get(12)?, row.get(13)?);
    let persistence: String = row.get(14)?;
    let agent: String = row.get(15)?;
    let ended_at: Option<i64> = row.get(16)?;
    Ok((|| {
        Ok(SessionRecord {
            id,
            external_id,
            workspace_root,
            interactivity: parse(t, raw.0)?,
            mode: parse(t, raw.1)?,
            plan_state: parse(t, raw.2)?,
            permission_mode: parse(t, raw.3)?,
            shell_id: parse_opt(t, shell_id)?,
            provider,
            model,
            policy_preset: parse_opt(t, raw.4)?,
            event_seq,
            client_persistence: parse(t, persistence)?,
            agent: parse(t, agent)?,
            created_at: Timestamp(created_at),
            updated_at: Timestamp(updated_at),
            ended_at: ended_at.map(Timestamp),
        })
    })())
}

pub(crate) const TURN_COLUMNS: &str = "id, session_id, origin, state, execution_id, shell_id, shell_dialect, started_at, ended_at, policy_mode";

pub(crate) fn turn_from_row(row: &Row<'_>) -> rusqlite::Result<Result<TurnRecord>> {
    let (origin, state): (String, String) = (row.get(2)?, row.get(3)?);
    let record = (
        row.id(0)?,
        row.id(1)?,
        row.id_opt(4)?,
        row.get::<_, Option<String>>(5)?,
        row.get::<_, Option<String>>(6)?,
        row.get::<_, i64>(7)?,
        row.get::<_, Option<i64>>(8)?,
    );
    let policy_mode: Option<String> = row.get(9)?;
    Ok((|| {
        Ok(TurnRecord {
            id: record.0,
            session_id: record.1,
            origin: parse("turns", origin)?,
            state: parse("turns", state)?,
            execution_id: record.2,
            shell_id: parse_opt("turns", record.3)?,
            shell_dialect: parse_opt("turns", record.4)?,
            started_at: Timestamp(record.5),
            ended_at: record.6.map(Timestamp),
            policy_mode: parse_opt("turns", policy_mode)?,
        })
    })())
}

pub(crate) const APPROVAL_COLUMNS: &str = "request_id, session_id, turn_id, tool_call_id, title, \
    question, status, action, target_permission_mode, feedback, created_at, updated_at, \
    expires_at, resolved_at, error_code, version, artifact_relative_path, artifact_sha256, \
    artifact_size_bytes, execution_id, execution_state, execution_turn_id, resolved_by";

pub(crate) fn approval_from_row(row: &Row<'_>) -> rusqlite::Result<Result<ApprovalRecord>> {
    let t = "plan_approvals";
    let status: String = row.get(6)?;
    let action: Option<String> = row.get(7)?;
    let target: Option<String> = row.get(8)?;
    let execution_state: Option<String> = row.get(20)?;
    let error_code: Option<String> = row.get(14)?;
    let resolved_by: Option<String> = row.get(22)?;
    let mut record = ApprovalRecord {
        proposal_id: row.id(0)?,
        session_id: row.id(1)?,
        turn_id: row.id(2)?,
        tool_call_id: row.id(3)?,
        title: row.get(4)?,
        question: row.get(5)?,
        status: ApprovalStatus::Pending,
        action: None,
        target_permission_mode: None,
        feedback: row.get(9)?,
        created_at: Timestamp(row.get(10)?),
        updated_at: Timestamp(row.get(11)?),
        expires_at: Timestamp(row.get(12)?),
        resolved_at: row.get::<_, Option<i64>>(13)?.map(Timestamp),
        error_code: None,
        resolved_by: None,
        version: row.get(15)?,
        artifact_relative_path: row.get(16)?,
        artifact_sha256: row.get(17)?,
        artifact_size_bytes: row.get(18)?,
        execution_id: row.id_opt(19)?,
        execution_state: None,
        execution_turn_id: row.id_opt(21)?,
    };
    Ok((|| {
        record.status = parse(t, status)?;
        record.action = parse_opt(t, action)?;
        record.target_permission_mode = parse_opt(t, target)?;
        record.execution_state = parse_opt(t, execution_state)?;
        record.error_code = parse_opt(t, error_code)?;
        record.resolved_by = resolver(t, resolved_by)?;
        Ok(record)
    })())
}

pub(crate) fn audit_from_row(row: &Row<'_>) -> rusqlite::Result<Result<AuditRecord>> {
    let action: String = row.get(6)?;
    let record = (
        row.get(0)?,
        Timestamp(row.get(1)?),
        row.id_opt(2)?,
        row.id_opt(3)?,
        row.id_opt(4)?,
        row.id_opt(5)?,
        row.get(7)?,
    );
    Ok(parse("audit_log", action).map(|action| AuditRecord {
        id: record.0,
        at: record.1,
        session_id: record.2,
        turn_id: record.3,
        tool_call_id: record.4,
        proposal_id: record.5,
        action,
        detail: record.6,
    }))
}

/// A stored `resolved_by` (JSON), or a corrupt-row error naming the table.
pub(crate) fn resolver(
    table: &'static str,
    value: Option<String>,
) -> Result<Option<planhost_core::Resolver>> {
    value
        .map(|v| serde_json::from_str(&v).map_err(|e| corrupt(table, e)))
        .transpose()
}

//! Store records to wire types, and host errors to JSON-RPC errors — the one mapping function.

use std::path::Path;

use planhost_host::HostError;
use planhost_protocol::{ApprovalInfo, AuditEntry, RpcError, SessionInfo, TurnInfo, codes};
use planhost_store::{ApprovalRecord, AuditRecord, SessionRecord, StoreError, TurnRecord};

pub fn turn(t: TurnRecord) -> TurnInfo {
    TurnInfo {
        id: t.id,
        session_id: t.session_id,
        origin: t.origin,
        state: t.state,
        execution_id: t.execution_id,
        shell_id: t.shell_id,
        shell_dialect: t.shell_dialect,
        started_at: t.started_at,
        ended_at: t.ended_at,
    }
}

pub fn approval(a: ApprovalRecord, workspace_root: &str) -> ApprovalInfo {
    let artifact_path = Path::new(workspace_root)
        .join(&a.artifact_relative_path)
        .display()
        .to_string();
    ApprovalInfo {
        proposal_id: a.proposal_id,
        session_id: a.session_id,
        turn_id: a.turn_id,
        tool_call_id: a.tool_call_id,
        version: a.version,
        title: a.title,
        question: a.question,
        status: a.status,
        action: a.action,
        target_permission_mode: a.target_permission_mode,
        feedback: a.feedback,
        created_at: a.created_at,
        expires_at: a.expires_at,
        resolved_at: a.resolved_at,
        error_code: a.error_code,
        artifact_relative_path: a.artifact_relative_path,
        artifact_path,
        artifact_sha256: a.artifact_sha256,
        artifact_size_bytes: a.artifact_size_bytes,
        execution_id: a.execution_id,
        execution_state: a.execution_state,
    }
}

pub fn session(
    s: SessionRecord,
    active_turn: Option<TurnRecord>,
    pending: Option<ApprovalRecord>,
) -> SessionInfo {
    let pending_approval = pending.map(|a| approval(a, &s.workspace_root));
    SessionInfo {
        id: s.id,
        external_id: s.external_id,
        workspace_root: s.workspace_root,
        interactivity: s.interactivity,
        mode: s.mode,
        plan_state: s.plan_state,
        permission_mode: s.permission_mode,
        shell_id: s.shell_id,
        provider: s.provider,
        model: s.model,
        policy_preset: s.policy_preset,
        event_seq: s.event_seq,
        client_persistence: s.client_persistence,
        active_turn: active_turn.map(turn),
        pending_approval,
    }
}

pub fn audit(r: AuditRecord) -> AuditEntry {
    let detail = serde_json::from_str(&r.detail).unwrap_or(serde_json::Value::String(r.detail));
    AuditEntry {
        id: r.id,
        at: r.at,
        session_id: r.session_id,
        turn_id: r.turn_id,
        tool_call_id: r.tool_call_id,
        proposal_id: r.proposal_id,
        action: r.action,
        detail,
    }
}

/// The one place host errors become wire errors.
pub fn host_error(error: &HostError) -> RpcError {
    let numeric = match error {
        HostError::Store(StoreError::Sqlite(_) | StoreError::BackupFailed { .. }) => {
            codes::PERSISTENCE_FAILED
        }
        HostError::Store(StoreError::Corrupt { .. }) => codes::INTERNAL_ERROR,
        HostError::Store(
            StoreError::Core(_)
            | StoreError::SessionNotFound(_)
            | StoreError::TurnNotFound(_)
            | StoreError::WorkspaceMismatch { .. }
            | StoreError::BranchInvalid
            | StoreError::CaptureEntryChanged(_)
            | StoreError::PublicationNotFound(_)
            | StoreError::PublicationOpen(_)
            | StoreError::PublicationState { .. }
            | StoreError::HandoffStale
            | StoreError::SettingsInvalid { .. }
            | StoreError::SchemaTooNew { .. }
            | StoreError::MigrationFailed { .. },
        )
        | HostError::Artifact(_)
        | HostError::Publish(_)
        | HostError::NoCheckpoint
        | HostError::PublishedFileChanged
        | HostError::WorkspaceInvalid { .. } => codes::REFUSED,
    };
    RpcError::new(numeric, error.code(), error.to_string())
}

/// A refusal with a stable code that is not a host error (policy, tools, protocol).
pub fn refused(code: &str, message: impl Into<String>) -> RpcError {
    RpcError::new(codes::REFUSED, code, message)
}

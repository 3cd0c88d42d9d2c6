//! Store records to wire types: the one mapping of each record.

use std::path::Path;

use planhost_protocol::{
    ApprovalInfo, AuditEntry, CheckpointInfo, ExecutionInfo, PublicationInfo, SessionInfo, TurnInfo,
};
use planhost_store::{
    ApprovalRecord, AuditRecord, CheckpointRecord, PublicationRecord, SessionRecord, TurnRecord,
};

pub(crate) fn turn(t: TurnRecord) -> TurnInfo {
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

pub(crate) fn approval(a: ApprovalRecord, workspace_root: &str) -> ApprovalInfo {
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
        resolved_by: a.resolved_by,
        artifact_relative_path: a.artifact_relative_path,
        artifact_path,
        artifact_sha256: a.artifact_sha256,
        artifact_size_bytes: a.artifact_size_bytes,
        execution_id: a.execution_id,
        execution_state: a.execution_state,
    }
}

/// The execution an approval row carries, with its turn once claimed; `None` before approval.
pub(crate) fn execution(a: &ApprovalRecord, turn: Option<TurnRecord>) -> Option<ExecutionInfo> {
    match (&a.execution_id, a.execution_state, a.target_permission_mode) {
        (Some(id), Some(state), Some(mode)) => Some(ExecutionInfo {
            execution_id: id.clone(),
            proposal_id: a.proposal_id.clone(),
            session_id: a.session_id.clone(),
            state,
            permission_mode: mode,
            turn: turn.map(self::turn),
        }),
        (_, _, _) => None,
    }
}

pub(crate) fn session(
    s: SessionRecord,
    active_turn: Option<TurnRecord>,
    pending: Option<ApprovalRecord>,
    live: Option<(ApprovalRecord, Option<TurnRecord>)>,
    last: Option<(ApprovalRecord, Option<TurnRecord>)>,
) -> SessionInfo {
    let pending_approval = pending.map(|a| approval(a, &s.workspace_root));
    let live_execution = live.and_then(|(a, t)| execution(&a, t));
    let last_execution = last.and_then(|(a, t)| execution(&a, t));
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
        agent: s.agent,
        active_turn: active_turn.map(turn),
        pending_approval,
        live_execution,
        tool_calls: Vec::new(),
        last_execution,
        created_at: s.created_at,
        updated_at: s.updated_at,
        ended_at: s.ended_at,
    }
}

pub(crate) fn audit(r: AuditRecord) -> AuditEntry {
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

pub(crate) fn publication(p: PublicationRecord) -> PublicationInfo {
    PublicationInfo {
        publication_id: p.id,
        session_id: p.session_id,
        revision: p.revision,
        sha256: p.sha256,
        relative_path: p.relative_path,
        base_sha256: p.base_sha256,
        status: p.status,
        error_code: p.error_code,
        resolved_by: p.resolved_by,
        created_at: p.created_at,
    }
}

pub(crate) fn checkpoint(c: CheckpointRecord) -> CheckpointInfo {
    CheckpointInfo {
        checkpoint_id: c.id,
        revision: c.revision,
        sha256: c.sha256,
        size_bytes: c.size_bytes,
        source: c.source,
        anchor: c.anchor,
        created_at: planhost_core::Timestamp(c.created_at),
        seen_at: c.seen_at.map(planhost_core::Timestamp),
        seen_by: c.seen_by,
    }
}

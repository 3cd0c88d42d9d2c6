//! State-change notifications. Every committed transition yields one or more, each carrying the
//! session's next sequence number (DESIGN.md decision 7).

use serde::{Deserialize, Serialize};

use crate::{
    ApprovalStatus, AskId, ExecutionId, ExecutionState, Mode, PermissionDecision, PermissionMode,
    PlanState, ProposalId, PublicationId, PublicationStatus, Resolver, SessionId, Timestamp,
    ToolCallId, TurnId, TurnOrigin, TurnState,
};

/// One state change of one session.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Event {
    /// The session that changed.
    pub session_id: SessionId,
    /// Strictly increasing per session, across restarts.
    pub seq: i64,
    /// When the change committed, in ms since the epoch.
    pub at: Timestamp,
    /// What changed.
    #[serde(flatten)]
    pub body: EventBody,
}

/// What changed.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(
    tag = "kind",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum EventBody {
    /// Mode, Plan state or permission mode changed.
    SessionUpdated {
        /// Durable mode.
        mode: Mode,
        /// Live Plan state.
        plan_state: PlanState,
        /// Permission mode.
        permission_mode: PermissionMode,
    },
    /// A turn began.
    TurnStarted {
        /// Turn id.
        turn_id: TurnId,
        /// Who started it.
        origin: TurnOrigin,
    },
    /// A turn ended or was aborted.
    TurnEnded {
        /// Turn id.
        turn_id: TurnId,
        /// Completed or aborted.
        state: TurnState,
    },
    /// An approval was created or changed status.
    ApprovalChanged {
        /// Proposal id.
        proposal_id: ProposalId,
        /// New status.
        status: ApprovalStatus,
        /// Absolute deadline.
        expires_at: Timestamp,
        /// Why, for expired and interrupted rows.
        error_code: Option<crate::ErrorCode>,
        /// Who answered it, for approved and rejected rows.
        resolved_by: Option<Resolver>,
    },
    /// A tool call needs a person's answer; any approval surface may resolve it.
    PermissionAsked {
        /// The ask's id, for `permissions.resolve`.
        request_id: AskId,
        /// The turn.
        turn_id: TurnId,
        /// The tool call.
        tool_call_id: ToolCallId,
        /// The tool's name.
        tool_name: String,
        /// Why the policy asks.
        reason: String,
    },
    /// An ask was answered (or withdrawn because its turn ended).
    PermissionResolved {
        /// The ask's id.
        request_id: AskId,
        /// `allow` or `deny`.
        decision: PermissionDecision,
        /// Who answered; `None` when the host withdrew it.
        resolved_by: Option<Resolver>,
    },
    /// A plan checkpoint was saved.
    CheckpointSaved {
        /// Its branch-local revision.
        revision: i64,
        /// SHA-256 of its bytes.
        sha256: String,
        /// The branch leaf it was created at.
        anchor: crate::EntryId,
    },
    /// A publication approval changed status.
    PublicationChanged {
        /// Its id.
        publication_id: PublicationId,
        /// New status.
        status: PublicationStatus,
    },
    /// The handoff phase changed (seed 004).
    HandoffChanged {
        /// New phase.
        phase: crate::HandoffPhase,
    },
    /// An execution was queued, claimed or finished.
    ExecutionChanged {
        /// Execution id.
        execution_id: ExecutionId,
        /// The approval that granted it.
        proposal_id: ProposalId,
        /// New state.
        state: ExecutionState,
    },
}

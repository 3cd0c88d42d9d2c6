//! Plan approvals (seed 000) and the executions they queue.

use planhost_core::{
    ApprovalAction, ApprovalStatus, EntryId, ErrorCode, ExecutionId, ExecutionOutcome,
    ExecutionState, ProposalId, Resolver, SessionId, TargetPermissionMode, Timestamp, ToolCallId,
    TurnId,
};

use crate::sessions::TurnInfo;

params! {
    /// `plans.enter`: the agent's EnterPlanMode tool.
    pub struct EnterPlanParams {
        /// Session.
        pub session_id: SessionId,
        /// The running turn.
        pub turn_id: TurnId,
        /// The EnterPlanMode call.
        pub tool_call_id: ToolCallId,
        /// Zero-based position in the batch.
        pub batch_index: u32,
        /// Tool calls in the batch (EnterPlanMode must be alone).
        pub batch_size: u32,
    }
}

params! {
    /// `plans.submit`: the SubmitPlan tool.
    pub struct SubmitPlanParams {
        /// Session.
        pub session_id: SessionId,
        /// The running turn.
        pub turn_id: TurnId,
        /// The SubmitPlan call.
        pub tool_call_id: ToolCallId,
        /// Zero-based position in the batch.
        pub batch_index: u32,
        /// Tool calls in the batch (SubmitPlan must be alone).
        pub batch_size: u32,
        /// Short label.
        pub title: String,
        /// The plan; written byte for byte.
        pub markdown: String,
        /// What the person is asked.
        pub question: String,
        /// The client's branch (root → leaf): when given, the plan is also saved as a
        /// checkpoint revision anchored at the leaf, in the same transaction.
        #[serde(default)]
        pub branch_path: Option<Vec<EntryId>>,
    }
}

result! {
    /// A plan approval (seed 000 §7).
    pub struct ApprovalInfo {
        /// Proposal id.
        pub proposal_id: ProposalId,
        /// Session.
        pub session_id: SessionId,
        /// SubmitPlan's turn.
        pub turn_id: TurnId,
        /// SubmitPlan's tool call.
        pub tool_call_id: ToolCallId,
        /// Row version: resolve requests name it.
        pub version: i64,
        /// Title.
        pub title: String,
        /// Question.
        pub question: String,
        /// Status.
        pub status: ApprovalStatus,
        /// The action a person took.
        pub action: Option<ApprovalAction>,
        /// Permission mode chosen at approval.
        pub target_permission_mode: Option<TargetPermissionMode>,
        /// Rejection note.
        pub feedback: Option<String>,
        /// Creation.
        pub created_at: Timestamp,
        /// Absolute deadline: creation + 30 minutes, never moved.
        pub expires_at: Timestamp,
        /// When it left pending.
        pub resolved_at: Option<Timestamp>,
        /// Why it ended, for expired and interrupted rows.
        pub error_code: Option<ErrorCode>,
        /// Who answered it (client and roles), for approved and rejected rows.
        pub resolved_by: Option<Resolver>,
        /// `.pi/plan/<unique>.md`.
        pub artifact_relative_path: String,
        /// Absolute path of the artifact (the opener).
        pub artifact_path: String,
        /// SHA-256 of the artifact bytes.
        pub artifact_sha256: String,
        /// Artifact size.
        pub artifact_size_bytes: i64,
        /// The queued execution.
        pub execution_id: Option<ExecutionId>,
        /// Its state.
        pub execution_state: Option<ExecutionState>,
    }
}

params! {
    /// `plans.list`.
    pub struct PlansFilter {
        /// Only this session's approvals.
        #[serde(default)]
        pub session_id: Option<SessionId>,
        /// Only approvals in these statuses (default: every status). A reloaded approval surface
        /// asks for `["pending"]`.
        #[serde(default)]
        pub status: Option<Vec<ApprovalStatus>>,
        /// At most this many, newest first (default 100, at most 10,000).
        #[serde(default)]
        pub limit: Option<u32>,
    }
}

result! {
    /// `plans.list`.
    pub struct ApprovalList {
        /// Newest first.
        pub items: Vec<ApprovalInfo>,
    }
}

params! {
    /// `plans.get`.
    pub struct ProposalRef {
        /// Proposal id, or a unique prefix or suffix of at least 8 characters (people type
        /// them; an ambiguous one is `ID_AMBIGUOUS`).
        pub proposal_id: ProposalId,
    }
}

result! {
    /// `plans.get`: the approval and the exact submitted Markdown.
    pub struct PlanDetail {
        /// The approval.
        pub approval: ApprovalInfo,
        /// The exact submitted Markdown, as stored.
        pub markdown: String,
        /// Whether the file on disk still holds exactly those bytes (read without following a
        /// symlink); a changed file cannot be approved.
        pub artifact_intact: bool,
        /// The checkpoint of the session a person was shown last before this plan arrived,
        /// unless it holds exactly this plan's text: what "what changed" is measured from.
        pub last_seen: Option<crate::checkpoints::CheckpointDetail>,
    }
}

params! {
    /// `plans.resolve` (seed 000 §6 `PlanResolveRequest`).
    pub struct ResolvePlanParams {
        /// Proposal.
        pub proposal_id: ProposalId,
        /// Must match.
        pub session_id: SessionId,
        /// Must match.
        pub turn_id: TurnId,
        /// Must match.
        pub tool_call_id: ToolCallId,
        /// Must match when given.
        #[serde(default)]
        pub version: Option<i64>,
        /// Must match when given.
        #[serde(default)]
        pub artifact_sha256: Option<String>,
        /// Approve or reject.
        pub action: ApprovalAction,
        /// Approve only; `ask` when absent.
        #[serde(default)]
        pub target_permission_mode: Option<TargetPermissionMode>,
        /// Reject only: a note for the agent (an approve with feedback is refused).
        #[serde(default)]
        pub feedback: Option<String>,
    }
}

params! {
    /// `executions.claim`.
    pub struct ExecutionRef {
        /// Session.
        pub session_id: SessionId,
        /// Execution.
        pub execution_id: ExecutionId,
    }
}

params! {
    /// `executions.end`.
    pub struct EndExecutionParams {
        /// Session.
        pub session_id: SessionId,
        /// Execution.
        pub execution_id: ExecutionId,
        /// `completed`, or `interrupted` when the run was aborted.
        pub outcome: ExecutionOutcome,
    }
}

result! {
    /// An execution: what an approval granted, and its turn once claimed.
    pub struct ExecutionInfo {
        /// Execution id.
        pub execution_id: ExecutionId,
        /// The approval that granted it.
        pub proposal_id: ProposalId,
        /// Session.
        pub session_id: SessionId,
        /// Queued, running, completed or interrupted.
        pub state: ExecutionState,
        /// The permission mode the person chose.
        pub permission_mode: TargetPermissionMode,
        /// The execution turn, once claimed.
        pub turn: Option<TurnInfo>,
    }
}

result! {
    /// `executions.claim`: the execution turn and the exact plan that was approved, so the
    /// agent runs those bytes, not whatever the file says now.
    pub struct ClaimedExecution {
        /// The execution, now running.
        pub execution: ExecutionInfo,
        /// The execution turn.
        pub turn: TurnInfo,
        /// The plan's title.
        pub title: String,
        /// The approved Markdown, byte for byte.
        pub markdown: String,
        /// Its SHA-256.
        pub sha256: String,
        /// Absolute path of the immutable artifact.
        pub artifact_path: String,
    }
}

//! The domain's refusals, each with a stable wire code.

use crate::{ApprovalStatus, ExecutionId, ExecutionState, ProposalId, TurnId, TurnOrigin};

/// A value that is not one of an enum's wire strings.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown {kind} value {value:?}")]
pub struct UnknownValue {
    /// The enum that was parsed.
    pub kind: &'static str,
    /// The rejected text.
    pub value: String,
}

/// What blocks a request that needs an idle session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Blocker {
    /// A turn is running.
    ActiveTurn,
    /// An approval is pending.
    PendingApproval,
    /// An execution is queued or running.
    LiveExecution,
}

impl Blocker {
    fn describe(self) -> &'static str {
        match self {
            Blocker::ActiveTurn => "a turn is running",
            Blocker::PendingApproval => "a plan approval is pending",
            Blocker::LiveExecution => "an approved execution is queued or running",
        }
    }
}

/// Every way the domain refuses a request. Returned by the pure transition functions of this
/// crate; the store and host pass them to the wire unchanged through [`CoreError::code`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CoreError {
    /// A second turn was begun while one runs (seed 000 §4).
    #[error("session is busy: {}", .0.describe())]
    SessionBusy(Blocker),
    /// Mode, provider, model, permission mode, shell or policy changed while not idle (§4).
    #[error("configuration is accepted only while the session is idle: {}", .0.describe())]
    ConfigWhileBusy(Blocker),
    /// The named turn is not the session's running turn.
    #[error("turn {turn_id} is not the session's active turn")]
    TurnNotActive {
        /// The turn the request named.
        turn_id: TurnId,
    },
    /// The request needs a turn of another origin (e.g. SubmitPlan inside the execution turn).
    #[error("not allowed in a {0} turn")]
    WrongTurnOrigin(TurnOrigin),
    /// EnterPlanMode or SubmitPlan shared its assistant batch with other tool calls (§3 rule 2).
    #[error("{tool} must be the only tool call in its assistant batch (batch had {batch_size})")]
    ToolNotAlone {
        /// The tool that must stand alone.
        tool: &'static str,
        /// How many tool calls the batch held.
        batch_size: u32,
    },
    /// Plan work in a scheduled turn or an unattended session (§4).
    #[error("Plan mode needs an interactive session with a person to approve")]
    PlanRequiresInteractive,
    /// SubmitPlan outside Plan mode.
    #[error("the session is not in Plan mode")]
    PlanModeNotActive,
    /// A second plan was submitted while one awaits approval.
    #[error("a plan approval is already pending")]
    ApprovalAlreadyPending,
    /// Title empty (after trimming) or longer than [`crate::MAX_TITLE_CHARS`].
    #[error("plan title {0}")]
    TitleInvalid(&'static str),
    /// Question longer than [`crate::MAX_QUESTION_CHARS`].
    #[error("plan question {0}")]
    QuestionInvalid(&'static str),
    /// Markdown empty or larger than [`crate::MAX_PLAN_BYTES`].
    #[error("plan markdown {0}")]
    MarkdownInvalid(&'static str),
    /// No approval has the requested proposal id.
    #[error("no plan proposal {0}")]
    ApprovalNotFound(ProposalId),
    /// The request's session, turn, tool call or version does not match the proposal (§3 rule 3).
    #[error("stale approval request: {field} does not match")]
    ApprovalStale {
        /// The first identity field that did not match.
        field: &'static str,
    },
    /// The proposal was already resolved.
    #[error("plan proposal is already {0}")]
    ApprovalNotPending(ApprovalStatus),
    /// A resolve request that contradicts itself, such as a reject with a permission mode.
    #[error("invalid resolve request: {0}")]
    ResolveInvalid(&'static str),
    /// The absolute deadline passed; the proposal is now `expired` (§3 rule 4).
    #[error("the plan approval deadline has passed")]
    ApprovalTimeout,
    /// `expectedRevision` is not the branch's current checkpoint revision (seed 003).
    #[error("stale expectedRevision {expected}: the current revision is {current}")]
    CheckpointStale {
        /// What the caller expected.
        expected: i64,
        /// The branch's current revision.
        current: i64,
    },
    /// A handoff step that the current phase does not allow (seed 004).
    #[error("not allowed while the plan handoff is {phase}")]
    HandoffPhaseInvalid {
        /// The current phase.
        phase: &'static str,
    },
    /// The tool set changed outside planhost's control; approval waits until it is resolved.
    #[error("the active tool set changed since Plan mode applied it; resolve the conflict first")]
    ToolsConflict,
    /// No live execution has that id.
    #[error("no execution {0}")]
    ExecutionNotFound(ExecutionId),
    /// The execution is in a state that does not allow this step.
    #[error("execution is {0}")]
    ExecutionStateInvalid(ExecutionState),
}

impl CoreError {
    /// The stable wire code.
    pub fn code(&self) -> crate::ErrorCode {
        match self {
            CoreError::SessionBusy(_) => crate::ErrorCode::SessionBusy,
            CoreError::ConfigWhileBusy(_) => crate::ErrorCode::SessionNotIdle,
            CoreError::TurnNotActive { .. } => crate::ErrorCode::TurnNotActive,
            CoreError::WrongTurnOrigin(_) => crate::ErrorCode::TurnOriginInvalid,
            CoreError::ToolNotAlone { .. } => crate::ErrorCode::ToolNotAloneInBatch,
            CoreError::PlanRequiresInteractive => crate::ErrorCode::PlanRequiresInteractiveSession,
            CoreError::PlanModeNotActive => crate::ErrorCode::PlanModeNotActive,
            CoreError::ApprovalAlreadyPending => crate::ErrorCode::PlanApprovalAlreadyPending,
            CoreError::TitleInvalid(_) => crate::ErrorCode::PlanTitleInvalid,
            CoreError::QuestionInvalid(_) => crate::ErrorCode::PlanQuestionInvalid,
            CoreError::MarkdownInvalid(_) => crate::ErrorCode::PlanMarkdownInvalid,
            CoreError::ApprovalNotFound(_) => crate::ErrorCode::PlanApprovalNotFound,
            CoreError::ApprovalStale { .. } => crate::ErrorCode::PlanApprovalStale,
            CoreError::ApprovalNotPending(_) => crate::ErrorCode::PlanApprovalNotPending,
            CoreError::ResolveInvalid(_) => crate::ErrorCode::PlanResolveInvalid,
            CoreError::ApprovalTimeout => crate::ErrorCode::PlanApprovalTimeout,
            CoreError::CheckpointStale { .. } => crate::ErrorCode::CheckpointRevisionStale,
            CoreError::HandoffPhaseInvalid { .. } => crate::ErrorCode::PlanHandoffPhaseInvalid,
            CoreError::ToolsConflict => crate::ErrorCode::PlanToolsConflict,
            CoreError::ExecutionNotFound(_) => crate::ErrorCode::ExecutionNotFound,
            CoreError::ExecutionStateInvalid(_) => crate::ErrorCode::ExecutionStateInvalid,
        }
    }
}

/// The domain's result alias.
pub type Result<T> = std::result::Result<T, CoreError>;

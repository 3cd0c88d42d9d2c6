//! planhost's pure domain: the session, Plan, approval and execution state machines of seed 000.
//!
//! Nothing in this crate performs I/O or reads a clock. Adapters load a [`SessionView`], ask a
//! transition function what may happen, and apply exactly what it returns.
//!
//! ```
//! use planhost_core::{begin_turn, Interactivity, Mode, PlanState, SessionView, TurnOrigin};
//!
//! let idle_plan = SessionView {
//!     id: "s1".into(),
//!     mode: Mode::Plan,
//!     plan_state: PlanState::Stopped,
//!     interactivity: Interactivity::Unattended,
//!     active_turn: None,
//!     pending: None,
//!     execution: None,
//! };
//! // An unattended session can never start Plan work.
//! let refused = begin_turn(&idle_plan, TurnOrigin::User).unwrap_err();
//! assert_eq!(refused.code().as_str(), "PLAN_REQUIRES_INTERACTIVE_SESSION");
//! ```

// Defines `wire_enum!`, used by later modules.
#[macro_use]
mod vocab;

mod agent;
mod capture;
mod catalog;
mod checkpoint;
mod codes;
mod digest;
mod error;
mod event;
mod host_tool;
mod ids;
mod lifecycle;
mod naming;
mod plan_command;
mod plan_input;
mod policy;
mod policy_view;
mod session;
mod shell_safety;
mod shells;
mod time;
mod tool_output;

pub use agent::{
    AgentMode, AgentProfile, AgentView, Answer, AskOutcome, AskWay, Directive, DirectiveKind,
    DraftLocation, EventFacts, HookFailure, LifecycleRule, Notice, NoticeLevel, Plan as AgentPlan,
    PlanDirs, PlanOffer, PolicyVerdict, Reply, ReplyFacts, RuleId, SessionEndReason, SessionSource,
    ShellInput, ShellRoute, Step, WaitOutcome, ask_outcome, lifecycle, reply_for, wait_outcome,
    words,
};
pub use capture::{
    AssistantMessage, CLOSE_DELIMITER, Capture, CaptureError, CaptureErrorKind, ContentBlock,
    Ineligible, OPEN_DELIMITER, PlanBlock, ProposedPlanParser, StopReason, canonical_encoding,
    capture, eligibility, fingerprint,
};
pub use catalog::{
    Agent, CatalogEntry, Classified, CommandInput, CommandLine, McpTool, ToolNature,
    argv_command_line, names_a_file_writer,
};
pub use checkpoint::{
    CheckpointRef, DiskState, ProjectionMode, PublicationState, latest_on_branch, next_revision,
    plan_instruction, plan_title, projection, publication_state,
};
pub use codes::{CodeClass, ErrorCode};
pub use digest::sha256_hex;
pub use error::{Blocker, CoreError, Result, UnknownValue};
pub use event::{Event, EventBody};
pub use host_tool::HostTool;
pub use ids::{
    AskId, CheckpointId, EntryId, ExecutionId, IdMatch, MIN_ID_PREFIX, PlanId, ProposalId,
    PublicationId, SessionId, ToolCallId, TurnId, match_id, short_id,
};
pub use lifecycle::{
    ExitChoice, ExitOffer, HandoffPhase, HandoffStep, ToolsConflict, exit_offer, handoff_next,
    tools_drifted, tools_to_restore,
};
pub use naming::{FALLBACK_SLUG, MAX_SLUG, artifact_file_name, publication_file_name, slug};
pub use plan_command::{COMPLETIONS, HELP_TEXT, PlanCommand, PlanCommandError, parse_plan_command};
pub use plan_input::{MAX_PLAN_BYTES, MAX_QUESTION_CHARS, MAX_TITLE_CHARS, SubmitPlanInput};
pub use policy::{
    AllowedTool, AuthorizeInput, CallFacts, CommandReach, Decision, DenyCode, DraftWrite,
    EffectivePermission, GitRisk, OfferedTool, PolicyRule, ToolProvenance, ToolSource,
    WEB_TOOLS_PACKAGE, authorize, default_strict_allow_list, effective_permission, plan_toolset,
    source_in_package,
};
pub use policy_view::{
    PolicyDefaults, PolicyView, began_in_planning, live_policy, stricter_mode, turn_policy,
};
pub use session::{
    ActiveTurn, ApprovalIdentity, ApprovalView, BatchPosition, LiveExecution, Resolution,
    ResolveRequest, SessionState, SessionView, SubmitDecision, TurnClose, abort_turn, begin_turn,
    claim_execution, configure, end_turn, enter_plan, expire, finish_execution, resolve, set_mode,
    submit_plan,
};
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub use shell_safety::fuzzing as shell_fuzzing;
pub use shell_safety::{
    CommandFacts, CommandSafety, Effect, GitChange, GitUse, NotProven, ParameterUse,
    classify_command, command_facts,
};
pub use shells::{Dialect, OutputStream, Platform, ShellId};
pub use time::{APPROVAL_TTL_MS, Clock, IdSource, ManualClock, SequentialIds, Timestamp};
pub use tool_output::{
    BashResult, EditResult, ExecuteOutput, ExitStatus, FileCount, GlobResult, GrepLine, GrepOutput,
    GrepResult, LineEnding, LineKind, ReadResult, RunResult, StreamSummary, WriteOutcome,
    WriteResult,
};
pub use vocab::{
    Access, AnswerSurface, ApprovalAction, ApprovalStatus, AuditAction, CheckpointSource,
    ClientPersistence, ExecutionOutcome, ExecutionState, Interactivity, Mode, PermissionDecision,
    PermissionMode, PlanState, PolicyPreset, PublicationStatus, Resolver, Role,
    TargetPermissionMode, TurnOrigin, TurnState,
};

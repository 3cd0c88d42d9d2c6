/// A closed set of values with one stable string each: the wire's, the database's and the
/// CLI's. Every such set in planhost is declared with this one macro (the protocol crate's
/// wire-only sets too), so each gets the same `as_str`, `FromStr` (an unknown string is an
/// [`UnknownValue`](crate::UnknownValue) naming the set), `Display`, `ALL` and serde strings.
/// A set that needs a JSON Schema adds the derive as an attribute.
#[macro_export]
macro_rules! wire_enum {
    ($(#[$meta:meta])* $name:ident { $($(#[$vmeta:meta])* $variant:ident = $text:literal),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
        pub enum $name {
            $($(#[$vmeta])* #[serde(rename = $text)] $variant),+
        }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The stable string used on the wire and in the database.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text),+
                }
            }
        }

        impl std::str::FromStr for $name {
            type Err = $crate::UnknownValue;

            fn from_str(s: &str) -> std::result::Result<Self, Self::Err> {
                match s {
                    $($text => Ok($name::$variant),)+
                    other => Err($crate::UnknownValue {
                        kind: stringify!($name),
                        value: other.to_owned(),
                    }),
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

wire_enum! {
    #[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
    /// The durable operating mode of a session; the host's SQLite is its authority.
    Mode { Agent = "agent", Plan = "plan" }
}

wire_enum! {
    #[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
    /// The live Plan state: a projection of the mode, the pending approval and the last outcome.
    PlanState {
        Planning = "planning",
        AwaitingApproval = "awaiting_approval",
        Inactive = "inactive",
        Stopped = "stopped",
    }
}

wire_enum! {
    #[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
    /// `plan_approvals.status`.
    ApprovalStatus {
        Pending = "pending",
        Approved = "approved",
        Rejected = "rejected",
        Expired = "expired",
        Interrupted = "interrupted",
    }
}

wire_enum! {
    #[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
    /// `plan_approvals.execution_state`; NULL until approval.
    ExecutionState {
        Queued = "queued",
        Running = "running",
        Completed = "completed",
        Interrupted = "interrupted",
    }
}

wire_enum! {
    #[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
    /// A session's permission mode. `inherit` defers to the host default.
    PermissionMode {
        Inherit = "inherit",
        Ask = "ask",
        AcceptEdits = "accept-edits",
        Auto = "auto",
    }
}

wire_enum! {
    #[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
    /// The explicit permission mode chosen at approval; `inherit` is not a choice there.
    TargetPermissionMode { Ask = "ask", AcceptEdits = "accept-edits", Auto = "auto" }
}

wire_enum! {
    #[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
    /// The two answers an approval surface offers.
    ApprovalAction { Approve = "approve", Reject = "reject" }
}

wire_enum! {
    #[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
    /// Whether a person is present to answer approvals for this session.
    Interactivity { Interactive = "interactive", Unattended = "unattended" }
}

wire_enum! {
    #[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
    /// Whether the client keeps its own session across restarts (pi's `--no-session` is
    /// ephemeral): host state is always durable, but an ephemeral client cannot come back to it.
    ClientPersistence { Persisted = "persisted", Ephemeral = "ephemeral" }
}

wire_enum! {
    #[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
    /// Who started a turn: a person's prompt, a schedule, or the approved execution.
    TurnOrigin { User = "user", Scheduled = "scheduled", Execution = "execution" }
}

wire_enum! {
    #[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
    /// `turns.state`.
    TurnState { Running = "running", Completed = "completed", Aborted = "aborted" }
}

wire_enum! {
    #[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
    /// How an execution ends.
    ExecutionOutcome { Completed = "completed", Interrupted = "interrupted" }
}

wire_enum! {
    #[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
    /// The named tool-policy presets of DESIGN.md: `host` = seed 000 with decision 11 (in Plan,
    /// a shell command runs unasked only when proven read-only; the default), `literal` = seed
    /// 000 word for word (Bash by the permission mode, also in Plan), `strict` = 003,
    /// `explore` = 004.
    PolicyPreset {
        Host = "host",
        Literal = "literal",
        Strict = "strict",
        Explore = "explore",
    }
}

wire_enum! {
    #[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
    /// What a connection is, declared at `initialize`. Only an approver resolves approvals, so
    /// a model-facing face that is only an agent can never approve its own plan (DESIGN.md
    /// decision 9).
    Role {
        /// Turns, tool calls, and plans that arrive from the agent.
        Agent = "agent",
        /// A person's surface: resolves plan, permission and publication approvals, selects the
        /// mode and changes configuration.
        Approver = "approver",
        /// Reads and events only.
        Observer = "observer",
    }
}

wire_enum! {
    #[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
    /// Which connections may call a method (protocol v2): the role rule of every method.
    Access {
        /// Any initialized connection, whatever its roles: reads.
        Any = "any",
        /// Connections that declared `agent`: turns, tool calls, plans from the agent.
        Agent = "agent",
        /// Connections that declared `approver`: a person's answers and choices.
        Approver = "approver",
    }
}

impl Access {
    /// Whether a connection with `roles` may call a method of this access.
    pub fn permits(self, roles: &[Role]) -> bool {
        match self {
            Access::Any => true,
            Access::Agent => roles.contains(&Role::Agent),
            Access::Approver => roles.contains(&Role::Approver),
        }
    }

    /// The role a connection needs, if any.
    pub fn required_role(self) -> Option<Role> {
        match self {
            Access::Any => None,
            Access::Agent => Some(Role::Agent),
            Access::Approver => Some(Role::Approver),
        }
    }
}

wire_enum! {
    #[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
    /// A person's answer to a permission ask.
    PermissionDecision {
        /// Run the tool call.
        Allow = "allow",
        /// Do not run it.
        Deny = "deny",
    }
}

wire_enum! {
    #[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
    /// How a plan checkpoint arrived (DESIGN.md "How a plan arrives").
    CheckpointSource {
        /// `update_plan_draft` (seed 003).
        Draft = "draft",
        /// A `<proposed_plan>` block captured from an assistant message (seed 004).
        Capture = "capture",
        /// A SubmitPlan (seed 000).
        Submit = "submit",
    }
}

wire_enum! {
    #[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
    /// A publication approval's status (`/plan save`, seed 003).
    PublicationStatus {
        /// Waiting for a person.
        Pending = "pending",
        /// Approved; the write is in progress (a crash here is reconciled at startup).
        Approved = "approved",
        /// Written and recorded.
        Completed = "completed",
        /// A person said no.
        Rejected = "rejected",
        /// Cleared: a newer checkpoint, a branch switch, leaving Plan, or a lost name race.
        Revoked = "revoked",
        /// The file changed outside planhost; nothing was overwritten.
        Conflict = "conflict",
        /// The write failed.
        Failed = "failed",
        /// The host stopped before the write; a person asks again.
        Interrupted = "interrupted",
    }
}

impl PublicationStatus {
    /// True for every status a publication never leaves.
    pub fn is_terminal(self) -> bool {
        match self {
            PublicationStatus::Pending | PublicationStatus::Approved => false,
            PublicationStatus::Completed
            | PublicationStatus::Rejected
            | PublicationStatus::Revoked
            | PublicationStatus::Conflict
            | PublicationStatus::Failed
            | PublicationStatus::Interrupted => true,
        }
    }
}

wire_enum! {
    #[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
    /// What an audit row records.
    AuditAction {
        SessionOpened = "session.opened",
        SessionModeSet = "session.mode_set",
        SessionConfigured = "session.configured",
        SettingsSet = "settings.set",
        RoleRefused = "connection.role_refused",
        TurnStarted = "turn.started",
        TurnEnded = "turn.ended",
        PlanEntered = "plan.entered",
        PlanCheckpoint = "plan.checkpoint",
        PlanCheckpointSeen = "plan.checkpoint_seen",
        PlanExited = "plan.exited",
        PlanBranchSwitched = "plan.branch_switched",
        ApprovalPending = "approval.pending",
        ApprovalApproved = "approval.approved",
        ApprovalRejected = "approval.rejected",
        ApprovalExpired = "approval.expired",
        ApprovalInterrupted = "approval.interrupted",
        ExecutionClaimed = "execution.claimed",
        ExecutionFinished = "execution.finished",
        ExecutionInterrupted = "execution.interrupted",
        FenceApprovalInterrupted = "fence.approval_interrupted",
        FenceExecutionInterrupted = "fence.execution_interrupted",
        FencePublicationInterrupted = "fence.publication_interrupted",
        FenceTurnAborted = "fence.turn_aborted",
        HandoffStep = "handoff.step",
        HandoffRetry = "handoff.retry",
        PublicationPending = "publication.pending",
        PublicationApproved = "publication.approved",
        PublicationCompleted = "publication.completed",
        PublicationRejected = "publication.rejected",
        PublicationRevoked = "publication.revoked",
        PublicationConflict = "publication.conflict",
        PublicationFailed = "publication.failed",
        PublicationInterrupted = "publication.interrupted",
        ToolAllow = "tool.allow",
        ToolDeny = "tool.deny",
        ToolAsk = "tool.ask",
        ToolAskAnswered = "tool.ask_answered",
        ToolExecuted = "tool.executed",
        ToolFinished = "tool.finished",
        ToolStopped = "tool.stopped",
        ToolsetApplied = "tools.enter",
        ToolsetConflict = "tools.conflict",
        ToolsetAccepted = "tools.resolved",
        ToolsetRestored = "tools.exit",
    }
}

impl From<PublicationStatus> for AuditAction {
    fn from(value: PublicationStatus) -> Self {
        match value {
            PublicationStatus::Pending => AuditAction::PublicationPending,
            PublicationStatus::Approved => AuditAction::PublicationApproved,
            PublicationStatus::Completed => AuditAction::PublicationCompleted,
            PublicationStatus::Rejected => AuditAction::PublicationRejected,
            PublicationStatus::Revoked => AuditAction::PublicationRevoked,
            PublicationStatus::Conflict => AuditAction::PublicationConflict,
            PublicationStatus::Failed => AuditAction::PublicationFailed,
            PublicationStatus::Interrupted => AuditAction::PublicationInterrupted,
        }
    }
}

/// Who answered an approval: the client and the roles its connection declared. Recorded on the
/// row and in the audit log; `None` on a row means the host itself ended it (expiry, restart,
/// a branch switch).
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Resolver {
    /// The client's `clientName` from `initialize` (for example `planhost-cli`, `pi-planhost`).
    pub client: String,
    /// The roles its connection declared; `approver` is always among them.
    pub roles: Vec<Role>,
    /// Where the answer came from, as the host established it (never as the client claims):
    /// absent on rows from before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub via: Option<AnswerSurface>,
}

wire_enum! {
    #[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
    /// Where a person's answer came from, as the host established it.
    AnswerSurface {
        /// The agent's own dialog (Claude Code's permission dialog), shown because planhost
        /// asked there: the agent ran the call after it.
        AgentDialog = "agent_dialog",
        /// The face's own dialog inside the agent (pi's extension), whose process is the
        /// agent's, never one it started.
        FaceDialog = "face_dialog",
        /// The `planhost` CLI in a person's terminal (a process with a controlling terminal,
        /// under no agent).
        Terminal = "terminal",
        /// The `planhost` CLI or another client without a terminal, under no agent.
        Client = "client",
        /// The web page.
        WebPage = "web_page",
        /// The app that embeds the host in process, or serves it on stdio.
        Embedded = "embedded",
    }
}

impl ApprovalStatus {
    /// True for every status but `pending`: terminal rows never change status again.
    pub fn is_terminal(self) -> bool {
        match self {
            ApprovalStatus::Pending => false,
            ApprovalStatus::Approved
            | ApprovalStatus::Rejected
            | ApprovalStatus::Expired
            | ApprovalStatus::Interrupted => true,
        }
    }
}

impl ExecutionState {
    /// Queued or running: the one live execution a session may have.
    pub fn is_live(self) -> bool {
        match self {
            ExecutionState::Queued | ExecutionState::Running => true,
            ExecutionState::Completed | ExecutionState::Interrupted => false,
        }
    }
}

impl From<TargetPermissionMode> for PermissionMode {
    fn from(value: TargetPermissionMode) -> Self {
        match value {
            TargetPermissionMode::Ask => PermissionMode::Ask,
            TargetPermissionMode::AcceptEdits => PermissionMode::AcceptEdits,
            TargetPermissionMode::Auto => PermissionMode::Auto,
        }
    }
}

impl From<ExecutionOutcome> for ExecutionState {
    fn from(value: ExecutionOutcome) -> Self {
        match value {
            ExecutionOutcome::Completed => ExecutionState::Completed,
            ExecutionOutcome::Interrupted => ExecutionState::Interrupted,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::str::FromStr;

    #[test]
    fn wire_strings_round_trip() {
        for m in PermissionMode::ALL {
            assert_eq!(PermissionMode::from_str(m.as_str()).ok(), Some(*m));
        }
        assert_eq!(PlanState::AwaitingApproval.as_str(), "awaiting_approval");
        assert_eq!(PermissionMode::AcceptEdits.as_str(), "accept-edits");
        assert!(Mode::from_str("chat").is_err());
    }

    #[test]
    fn terminal_and_live() {
        assert!(!ApprovalStatus::Pending.is_terminal());
        assert!(ApprovalStatus::Interrupted.is_terminal());
        assert!(ExecutionState::Queued.is_live());
        assert!(!ExecutionState::Completed.is_live());
    }
}

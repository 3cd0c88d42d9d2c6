//! What `agent.event` answers: one directive for the agent, with the rule that produced it, and
//! what the model and the person are told.

use serde::{Deserialize, Serialize};

use crate::{AskId, ErrorCode, PermissionDecision, PolicyRule};

wire_enum! {
    #[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
    /// What the agent is told to do with the event's subject.
    DirectiveKind {
        /// Go on: nothing to allow or refuse (a recording event, a prompt).
        Proceed = "proceed",
        /// Run the tool call (for a shell call of an agent whose shell planhost runs, through
        /// `agent.run`: see [`Directive::route_shell`]).
        Allow = "allow",
        /// Do not run it; `reason` says why, `code` is the stable code.
        Deny = "deny",
        /// A person must say yes first, in the agent's own dialog (`reason` is what it shows)
        /// or the face's (`requestId` is the ask to answer).
        Ask = "ask",
        /// Hold the call: the agent ends its run and asks again when resumed.
        Defer = "defer",
    }
}

wire_enum! {
    #[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
    /// A lifecycle rule of `agent.event` (the policy's own rules are [`PolicyRule`]).
    LifecycleRule {
        /// A session started or resumed; nothing to tell.
        SessionOpened = "lifecycle.session_opened",
        /// After a compaction or on resume the model is told the mode and the plan that matters.
        SessionContext = "lifecycle.session_context",
        /// A prompt began a turn.
        TurnBegun = "lifecycle.turn_begun",
        /// The agent's own plan mode put the session in Plan.
        PlanEnteredByAgentMode = "lifecycle.plan_entered_by_agent_mode",
        /// The agent left its own plan mode; planhost's Plan stays on until a plan is approved.
        PlanStillOn = "lifecycle.plan_still_on",
        /// A plan waits for a person's answer: nothing starts.
        PlanWaiting = "lifecycle.plan_waiting",
        /// An approved plan's execution started with this prompt.
        ExecutionClaimed = "lifecycle.execution_claimed",
        /// The execution's turn goes on.
        ExecutionContinues = "lifecycle.execution_continues",
        /// The plan was submitted: an immutable file and a pending approval.
        PlanSubmitted = "lifecycle.plan_submitted",
        /// The person approved this plan.
        PlanApproved = "lifecycle.plan_approved",
        /// The person rejected this plan.
        PlanRejected = "lifecycle.plan_rejected",
        /// Nobody answered this plan in time.
        PlanExpired = "lifecycle.plan_expired",
        /// This plan's approval was interrupted.
        PlanInterrupted = "lifecycle.plan_interrupted",
        /// A plan offered outside Plan: leaving the agent's plan mode is allowed.
        AgentModeLeft = "lifecycle.agent_mode_left",
        /// The offered plan holds no text.
        PlanEmpty = "lifecycle.plan_empty",
        /// A draft became a checkpoint.
        DraftSaved = "lifecycle.draft_saved",
        /// A finished message was searched for a plan.
        MessageCaptured = "lifecycle.message_captured",
        /// The turn ended.
        TurnEnded = "lifecycle.turn_ended",
        /// The session ended.
        SessionEnded = "lifecycle.session_ended",
        /// The tool call is done; its grant is void.
        ToolFinished = "lifecycle.tool_finished",
        /// The policy asked, and nobody is at the session to answer: refused.
        AskUnattended = "lifecycle.ask_unattended",
        /// The policy asked, and the agent has no way to ask: refused.
        AskUnsupported = "lifecycle.ask_unsupported",
    }
}

/// The rule behind a directive: the policy's (a tool decision) or the lifecycle's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(untagged)]
pub enum RuleId {
    /// A rule of the tool policy.
    Policy(PolicyRule),
    /// A lifecycle rule.
    Lifecycle(LifecycleRule),
}

impl RuleId {
    /// The stable string.
    pub fn as_str(self) -> &'static str {
        match self {
            RuleId::Policy(rule) => rule.as_str(),
            RuleId::Lifecycle(rule) => rule.as_str(),
        }
    }
}

impl std::fmt::Display for RuleId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One directive for the agent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct Directive {
    /// What to do.
    pub kind: DirectiveKind,
    /// The rule that produced it.
    pub rule: RuleId,
    /// Why, in the words the agent shows (the model reads a denial's; a person reads an
    /// agent-dialog ask's). `None` for a bare proceed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// A denial's stable code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<ErrorCode>,
    /// For a shell call of an agent whose shell planhost runs: the face rewrites the command
    /// so that it runs through `agent.run` (an allow, or an ask the person answers yes to).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub route_shell: bool,
    /// The host's ask, for a face that shows its own dialog and answers it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<AskId>,
    /// The answer that dialog offers first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_answer: Option<PermissionDecision>,
}

impl Directive {
    /// A directive of `kind` by `rule` with `reason`.
    pub fn new(kind: DirectiveKind, rule: impl Into<RuleId>, reason: Option<String>) -> Self {
        Self {
            kind,
            rule: rule.into(),
            reason,
            code: None,
            route_shell: false,
            request_id: None,
            default_answer: None,
        }
    }

    /// Proceed, by `rule`.
    pub fn proceed(rule: LifecycleRule) -> Self {
        Self::new(DirectiveKind::Proceed, rule, None)
    }
}

impl From<PolicyRule> for RuleId {
    fn from(rule: PolicyRule) -> Self {
        RuleId::Policy(rule)
    }
}

impl From<LifecycleRule> for RuleId {
    fn from(rule: LifecycleRule) -> Self {
        RuleId::Lifecycle(rule)
    }
}

wire_enum! {
    #[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
    /// How a notice for the person reads.
    NoticeLevel { Info = "info", Warning = "warning", Error = "error" }
}

/// Something the person is told (pi's notification, Claude Code's `systemMessage`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct Notice {
    /// The sentence.
    pub text: String,
    /// How it reads.
    pub level: NoticeLevel,
}

/// Everything an event answers besides its data: the directive, what the model is told, what
/// the person is told.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    /// For the agent.
    pub directive: Directive,
    /// For the model (added to its context).
    pub context: Option<String>,
    /// For the person.
    pub notice: Option<Notice>,
}

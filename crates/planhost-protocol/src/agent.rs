//! `agent.event`: one agent-neutral method for the whole Plan-mode lifecycle of every agent
//! (DESIGN decision 13), and `agent.run`: a shell command of an agent that runs its own shell,
//! routed through the host's runner (decision 14).

use planhost_core::{
    Agent, AgentMode, BashResult, ClientPersistence, Directive, EntryId, Notice, SessionEndReason,
    SessionSource, ToolCallId,
};
use serde_json::Value;

use crate::checkpoints::{CaptureResult, CapturedMessage, CheckpointInfo};
use crate::plans::{ApprovalInfo, ClaimedExecution};
use crate::sessions::SessionInfo;
use crate::tools::Provenance;

/// One thing that happened in the agent, in agent-neutral terms.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(
    tag = "kind",
    rename_all = "camelCase",
    rename_all_fields = "camelCase",
    deny_unknown_fields
)]
pub enum AgentEvent {
    /// The session started, resumed, was cleared, compacted or forked.
    SessionStarted {
        /// Why.
        source: SessionSource,
    },
    /// A person's prompt (or the face's own message) starts a run.
    PromptSubmitted {
        /// The agent's own mode, when its event says (Claude Code's `permission_mode`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        agent_mode: Option<AgentMode>,
        /// The seed 004 handoff this prompt carries (pi's `/plan --review`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        handoff_token: Option<String>,
    },
    /// The agent proposes a tool call. The agent's plan offer by tool (Claude Code's
    /// `ExitPlanMode`) is one too: the host knows it from the agent's profile.
    ToolProposed {
        /// The call's id.
        call_id: ToolCallId,
        /// The tool's name, exactly as the agent calls it.
        tool: String,
        /// Its input, exactly.
        input: Value,
        /// Its place in its assistant batch (`0` of `1` when the agent does not say).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        batch_index: Option<u32>,
        /// The batch's size.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        batch_size: Option<u32>,
        /// Where the tool comes from (built-in when absent).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        provenance: Option<Provenance>,
        /// The directory the agent's shell is in, where a shell call would run (the session's
        /// workspace root when absent).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cwd: Option<String>,
    },
    /// A tool the agent ran itself finished.
    ToolFinished {
        /// The call's id.
        call_id: ToolCallId,
        /// The tool's name.
        tool: String,
        /// Its input, for a write of the agent's own plan draft (kept as a checkpoint).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        input: Option<Value>,
        /// It failed.
        #[serde(default)]
        is_error: bool,
    },
    /// The agent offers a plan for approval by running its plan tool (pi's `SubmitPlan`).
    PlanOffered {
        /// The call's id.
        call_id: ToolCallId,
        /// The plan, exactly.
        markdown: String,
        /// A short title (the plan's first heading when absent).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        title: Option<String>,
        /// What the person is asked.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        question: Option<String>,
        /// Its place in its assistant batch.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        batch_index: Option<u32>,
        /// The batch's size.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        batch_size: Option<u32>,
    },
    /// The agent saved its plan draft (pi's `update_plan_draft`).
    DraftWritten {
        /// The complete draft.
        markdown: String,
        /// The revision the agent last saw (0 for none).
        expected_revision: i64,
    },
    /// An assistant message finished (searched for a `<proposed_plan>` block where the agent's
    /// profile says so).
    MessageFinished {
        /// The message.
        message: CapturedMessage,
    },
    /// The face learned that a plan of this session was answered (or expired, or was
    /// interrupted): what the person and the model are told of it.
    PlanAnswered {
        /// The plan.
        proposal_id: planhost_core::ProposalId,
    },
    /// The agent's run stopped.
    TurnStopped {
        /// Aborted by the person (Escape), rather than finished.
        #[serde(default)]
        aborted: bool,
    },
    /// The agent's session ended.
    SessionEnded {
        /// Why.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<SessionEndReason>,
    },
}

params! {
    /// `agent.event`: one event of an agent's session. The host opens (or reopens) the session
    /// by `(agent, externalSessionId)` in `workspaceRoot`, runs the lifecycle's steps in one
    /// job, and answers one directive.
    pub struct AgentEventParams {
        /// The agent.
        pub agent: Agent,
        /// The agent's own session id.
        pub external_session_id: String,
        /// The session's workspace: an absolute, existing directory.
        pub workspace_root: String,
        /// Whether a person is at the agent now and can answer a dialog (pi's UI, Claude Code
        /// outside `-p`): the connection's face as it is now, not how the session began.
        pub attended: bool,
        /// Whether the agent keeps its own session across restarts.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub persistence: Option<ClientPersistence>,
        /// The client's branch path (pi's entry ids, root to leaf) for branch-local
        /// checkpoints; absent: the session's one line of history.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub branch_path: Option<Vec<EntryId>>,
        /// The agent's configuration directory (Claude Code's `~/.claude`), where its own plan
        /// draft lives.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub agent_config_dir: Option<String>,
        /// What happened.
        pub event: AgentEvent,
    }
}

result! {
    /// What `agent.event` answers. (The larger parts are boxed, so that every result of the
    /// contract stays small.)
    pub struct AgentEventResult {
        /// The session after the event.
        pub session: Box<SessionInfo>,
        /// What the agent does.
        pub directive: Directive,
        /// What the model is told (added to its context), if anything.
        pub context: Option<String>,
        /// What the person is told, if anything.
        pub notice: Option<Notice>,
        /// The plan the event is about: submitted now, or answered before.
        pub approval: Option<ApprovalInfo>,
        /// The approved plan whose execution this event started.
        pub execution: Option<Box<ClaimedExecution>>,
        /// The checkpoint a draft became.
        pub checkpoint: Option<CheckpointInfo>,
        /// What a `<proposed_plan>` capture did.
        pub capture: Option<Box<CaptureResult>>,
    }
}

params! {
    /// `agent.run`: the host runs a shell command the agent's hook routed through it. The call
    /// must have been allowed by `agent.event` (or asked and then run by the person's yes), and
    /// the command must be exactly the one allowed.
    pub struct AgentRunParams {
        /// The tool call `agent.event` allowed.
        pub call_id: ToolCallId,
        /// The command, exactly as allowed.
        pub command: String,
        /// The directory the agent's shell is in: an absolute, existing directory.
        pub cwd: String,
        /// The agent's shell environment, as `NAME=value` pairs (planhost adds its own marker
        /// and, for a command it admitted unasked, its git rules).
        #[serde(default)]
        pub env: Vec<(String, String)>,
    }
}

result! {
    /// What `agent.run` did: the command's result, its output streamed before as
    /// `tools.output`.
    pub struct AgentRunResult {
        /// The run.
        pub result: BashResult,
    }
}

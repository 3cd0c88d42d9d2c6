//! Sessions and turns.

use planhost_core::{
    Agent, ClientPersistence, Dialect, ExecutionId, Interactivity, Mode, PermissionMode, PlanState,
    PolicyPreset, SessionId, ShellId, Timestamp, TurnId, TurnOrigin, TurnState,
};

use crate::plans::{ApprovalInfo, ExecutionInfo};
use crate::wire::double_option;

params! {
    /// `sessions.open`: open a session, or reopen it by external id and workspace root.
    pub struct OpenSessionParams {
        /// Absolute path of the workspace root.
        pub workspace_root: String,
        /// The client's id for the session, e.g. pi's session id. A fork has a new one, so it
        /// opens a new session and a fresh plan identity.
        #[serde(default)]
        pub external_id: Option<String>,
        /// Whether a person is present to approve. Plan needs `interactive`.
        pub interactivity: Interactivity,
        /// Whether the client keeps its own session (`ephemeral` for pi's `--no-session`);
        /// absent leaves it as it was (`persisted` for a new session).
        #[serde(default)]
        pub persistence: Option<ClientPersistence>,
        /// The agent the session serves, whose tool names its calls carry (`pi`,
        /// `claude-code`, `codex`, `gemini-cli`, `other`); absent leaves it as it was (`pi` for
        /// a new session). Reopening a session with another agent is `SESSION_AGENT_MISMATCH`.
        #[serde(default)]
        pub agent: Option<Agent>,
    }
}

params! {
    /// Names a session.
    pub struct SessionRef {
        /// Session id.
        pub session_id: SessionId,
    }
}

result! {
    /// A session as the host holds it.
    pub struct SessionInfo {
        /// Host id.
        pub id: SessionId,
        /// The client's id.
        pub external_id: Option<String>,
        /// Workspace root (canonical).
        pub workspace_root: String,
        /// Whether a person is present.
        pub interactivity: Interactivity,
        /// Durable mode.
        pub mode: Mode,
        /// Live Plan state.
        pub plan_state: PlanState,
        /// Configured permission mode (`inherit` uses the host default).
        pub permission_mode: PermissionMode,
        /// Configured shell, `null` for the host default.
        pub shell_id: Option<ShellId>,
        /// Configured provider.
        pub provider: Option<String>,
        /// Configured model.
        pub model: Option<String>,
        /// Configured policy preset, `null` for the host default.
        pub policy_preset: Option<PolicyPreset>,
        /// The last event sequence number issued for this session.
        pub event_seq: i64,
        /// Whether the client keeps its own session.
        pub client_persistence: ClientPersistence,
        /// The agent the session serves: whose catalog classifies its tool calls.
        pub agent: Agent,
        /// The running turn, if any.
        pub active_turn: Option<TurnInfo>,
        /// The pending plan approval, if any.
        pub pending_approval: Option<ApprovalInfo>,
        /// The queued or running execution, if any.
        pub live_execution: Option<ExecutionInfo>,
        /// The running turn's unfinished tool calls, oldest first (in memory: none after a
        /// restart).
        pub tool_calls: Vec<crate::tools::ToolCallInfo>,
        /// The most recent finished (completed or interrupted) execution, if any.
        pub last_execution: Option<ExecutionInfo>,
        /// Creation.
        pub created_at: Timestamp,
        /// Last change.
        pub updated_at: Timestamp,
        /// When its agent ended it for good (`/clear`): it is left out of `sessions.list`
        /// unless asked for. `null` while it lives.
        #[serde(default)]
        pub ended_at: Option<Timestamp>,
    }
}

params! {
    /// `sessions.list`.
    pub struct SessionsFilter {
        /// Only sessions of this workspace root (canonical, as `sessions.open` stored it).
        #[serde(default)]
        pub workspace_root: Option<String>,
        /// At most this many, newest first (default 100, at most 10,000).
        #[serde(default)]
        pub limit: Option<u32>,
        /// Also the sessions their agent ended for good (`/clear`); default false.
        #[serde(default)]
        pub include_ended: Option<bool>,
    }
}

result! {
    /// `sessions.list`.
    pub struct SessionList {
        /// Newest first.
        pub items: Vec<SessionInfo>,
    }
}

params! {
    /// `sessions.setMode`: a person selects Agent or Plan; only while idle.
    pub struct SetModeParams {
        /// Session.
        pub session_id: SessionId,
        /// The mode.
        pub mode: Mode,
    }
}

params! {
    /// `sessions.configure`: absent fields are unchanged; `null` resets to the default.
    pub struct ConfigureParams {
        /// Session.
        pub session_id: SessionId,
        /// New permission mode.
        #[serde(default)]
        pub permission_mode: Option<PermissionMode>,
        /// New shell (validated against this platform's catalog).
        #[serde(default, with = "double_option", skip_serializing_if = "Option::is_none")]
        #[schemars(with = "Option<ShellId>")]
        pub shell_id: Option<Option<ShellId>>,
        /// New policy preset.
        #[serde(default, with = "double_option", skip_serializing_if = "Option::is_none")]
        #[schemars(with = "Option<PolicyPreset>")]
        pub policy_preset: Option<Option<PolicyPreset>>,
        /// New provider.
        #[serde(default, with = "double_option", skip_serializing_if = "Option::is_none")]
        #[schemars(with = "Option<String>")]
        pub provider: Option<Option<String>>,
        /// New model.
        #[serde(default, with = "double_option", skip_serializing_if = "Option::is_none")]
        #[schemars(with = "Option<String>")]
        pub model: Option<Option<String>>,
    }
}

planhost_core::wire_enum! {
    #[derive(schemars::JsonSchema)]
    /// How a turn ends.
    TurnOutcome {
        /// It finished normally.
        Completed = "completed",
        /// It was aborted: what it raised or ran is interrupted.
        Aborted = "aborted",
    }
}

planhost_core::wire_enum! {
    #[derive(schemars::JsonSchema)]
    /// Who may begin a turn with `turns.begin` (execution turns start with `executions.claim`).
    BeginOrigin {
        /// A person's prompt.
        User = "user",
        /// A schedule: never Plan work (`PLAN_REQUIRES_INTERACTIVE_SESSION`).
        Scheduled = "scheduled",
    }
}

params! {
    /// `turns.begin`.
    pub struct BeginTurnParams {
        /// Session.
        pub session_id: SessionId,
        /// `user` (default) or `scheduled`.
        #[serde(default)]
        pub origin: Option<BeginOrigin>,
    }
}

params! {
    /// `turns.end`.
    pub struct EndTurnParams {
        /// Session.
        pub session_id: SessionId,
        /// The running turn.
        pub turn_id: TurnId,
        /// `completed`, or `aborted` (which interrupts the approval it raised or the execution it ran).
        pub outcome: TurnOutcome,
    }
}

result! {
    /// A turn.
    pub struct TurnInfo {
        /// Turn id.
        pub id: TurnId,
        /// Session.
        pub session_id: SessionId,
        /// Who started it.
        pub origin: TurnOrigin,
        /// Running, completed or aborted.
        pub state: TurnState,
        /// For execution turns.
        pub execution_id: Option<ExecutionId>,
        /// The shell pinned at launch (`null` when none was available).
        pub shell_id: Option<ShellId>,
        /// Its dialect.
        pub shell_dialect: Option<Dialect>,
        /// Start.
        pub started_at: Timestamp,
        /// End.
        pub ended_at: Option<Timestamp>,
    }
}

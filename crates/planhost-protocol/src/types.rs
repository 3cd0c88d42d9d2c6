//! Parameters and results of every method. Field names are camelCase on the wire.

use planhost_core::{
    ApprovalAction, ApprovalStatus, ExecutionOutcome, ExecutionState, Interactivity, Mode,
    PermissionMode, PlanState, PolicyPreset, TargetPermissionMode, Timestamp, TurnOrigin,
    TurnState,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

macro_rules! wire {
    ($(#[$meta:meta])* pub struct $name:ident { $($body:tt)* }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
        #[serde(rename_all = "camelCase", deny_unknown_fields)]
        pub struct $name { $($body)* }
    };
}

wire! {
    /// No parameters.
    pub struct Empty {}
}

wire! {
    /// `initialize`: the first request on every connection.
    pub struct InitializeParams {
        /// The protocol version the client speaks.
        pub protocol_version: u32,
        /// e.g. `planhost-cli`, `pi-extension`.
        pub client_name: String,
        /// The client's own version.
        #[serde(default)]
        pub client_version: Option<String>,
    }
}

wire! {
    /// The host's side of the handshake.
    pub struct InitializeResult {
        /// The protocol version the host speaks.
        pub protocol_version: u32,
        /// `planhost`.
        pub server_name: String,
        /// The host's version.
        pub server_version: String,
        /// Every method the host serves.
        pub methods: Vec<String>,
    }
}

wire! {
    /// `app.health`.
    pub struct HealthResult {
        /// `ok`.
        pub status: String,
        /// The host's process id.
        pub pid: u32,
        /// Milliseconds since the host started.
        pub uptime_ms: u64,
    }
}

wire! {
    /// `app.version`.
    pub struct VersionResult {
        /// planhost's version.
        pub version: String,
        /// Protocol version.
        pub protocol_version: u32,
        /// Database schema version.
        pub schema_version: u32,
        /// SQLite library version.
        pub sqlite_version: String,
        /// The state directory.
        pub state_dir: String,
    }
}

wire! {
    /// `sessions.open`: open or reopen (same external id and root) a session.
    pub struct OpenSessionParams {
        /// Absolute path of the workspace root.
        pub workspace_root: String,
        /// The client's id for the session, e.g. pi's session id.
        #[serde(default)]
        pub external_id: Option<String>,
        /// Whether a person is present to approve. Plan needs `interactive`.
        pub interactivity: Interactivity,
        /// Whether the client keeps its own session (`ephemeral` for pi's `--no-session`);
        /// absent leaves it as it was (`persisted` for a new session).
        #[serde(default)]
        pub persistence: Option<planhost_core::ClientPersistence>,
    }
}

wire! {
    /// Names a session.
    pub struct SessionRef {
        /// Session id.
        pub session_id: String,
    }
}

wire! {
    /// A session as the host holds it.
    pub struct SessionInfo {
        /// Host id.
        pub id: String,
        /// The client's id.
        pub external_id: Option<String>,
        /// Workspace root.
        pub workspace_root: String,
        /// Whether a person is present.
        pub interactivity: Interactivity,
        /// Durable mode.
        pub mode: Mode,
        /// Live Plan state.
        pub plan_state: PlanState,
        /// Configured permission mode.
        pub permission_mode: PermissionMode,
        /// Configured shell id, `null` for the default.
        pub shell_id: Option<String>,
        /// Configured provider.
        pub provider: Option<String>,
        /// Configured model.
        pub model: Option<String>,
        /// Configured policy preset, `null` for the host default.
        pub policy_preset: Option<PolicyPreset>,
        /// The last event sequence number issued for this session.
        pub event_seq: i64,
        /// Whether the client keeps its own session.
        pub client_persistence: planhost_core::ClientPersistence,
        /// The running turn, if any.
        pub active_turn: Option<TurnInfo>,
        /// The pending approval, if any.
        pub pending_approval: Option<ApprovalInfo>,
    }
}

wire! {
    /// `sessions.list`.
    pub struct SessionList {
        /// Oldest first.
        pub sessions: Vec<SessionInfo>,
    }
}

wire! {
    /// `sessions.setMode`: a person selects Agent or Plan; only while idle.
    pub struct SetModeParams {
        /// Session.
        pub session_id: String,
        /// The mode.
        pub mode: Mode,
    }
}

wire! {
    /// `sessions.configure`: absent fields are unchanged; `null` resets to the default.
    pub struct ConfigureParams {
        /// Session.
        pub session_id: String,
        /// New permission mode.
        #[serde(default)]
        pub permission_mode: Option<PermissionMode>,
        /// New shell id.
        #[serde(default, with = "double_option")]
        #[schemars(with = "Option<String>")]
        pub shell_id: Option<Option<String>>,
        /// New policy preset.
        #[serde(default, with = "double_option")]
        #[schemars(with = "Option<PolicyPreset>")]
        pub policy_preset: Option<Option<PolicyPreset>>,
        /// New provider.
        #[serde(default, with = "double_option")]
        #[schemars(with = "Option<String>")]
        pub provider: Option<Option<String>>,
        /// New model.
        #[serde(default, with = "double_option")]
        #[schemars(with = "Option<String>")]
        pub model: Option<Option<String>>,
    }
}

/// `Option<Option<T>>`: absent → `None`, `null` → `Some(None)`.
mod double_option {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<T: Serialize, S: Serializer>(
        v: &Option<Option<T>>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        match v {
            Some(inner) => inner.serialize(s),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, T: Deserialize<'de>, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<Option<T>>, D::Error> {
        Option::<T>::deserialize(d).map(Some)
    }
}

wire! {
    /// `turns.begin`.
    pub struct BeginTurnParams {
        /// Session.
        pub session_id: String,
        /// `user` (default) or `scheduled`.
        #[serde(default)]
        pub origin: Option<TurnOrigin>,
    }
}

wire! {
    /// Names a turn.
    pub struct TurnRef {
        /// Session.
        pub session_id: String,
        /// Turn.
        pub turn_id: String,
    }
}

wire! {
    /// A turn.
    pub struct TurnInfo {
        /// Turn id.
        pub id: String,
        /// Session.
        pub session_id: String,
        /// Who started it.
        pub origin: TurnOrigin,
        /// Running, completed or aborted.
        pub state: TurnState,
        /// For execution turns.
        pub execution_id: Option<String>,
        /// Shell id pinned at launch.
        pub shell_id: Option<String>,
        /// Shell dialect pinned at launch.
        pub shell_dialect: Option<String>,
        /// Start.
        pub started_at: Timestamp,
        /// End.
        pub ended_at: Option<Timestamp>,
    }
}

/// Where a tool came from, as the client knows it: `{"kind":"builtIn"}` or
/// `{"kind":"extension","package":…,"sourcePath":…}`. A plain struct on the wire (not a tagged
/// enum) so that a bad field is reported by its full path, e.g. `provenance.package`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Provenance {
    /// `builtIn` or `extension`.
    pub kind: ProvenanceKind,
    /// The extension's package name (extension only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub package: Option<String>,
    /// Where the extension's code was loaded from (extension only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_path: Option<String>,
}

/// The two provenance kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ProvenanceKind {
    /// The agent runtime's own tool.
    BuiltIn,
    /// A tool registered by an extension.
    Extension,
}

impl Provenance {
    /// A built-in tool.
    pub fn built_in() -> Self {
        Self {
            kind: ProvenanceKind::BuiltIn,
            package: None,
            source_path: None,
        }
    }
}

wire! {
    /// Identifies one tool call inside a turn.
    pub struct ToolCallRef {
        /// Session.
        pub session_id: String,
        /// The active turn.
        pub turn_id: String,
        /// The tool call.
        pub tool_call_id: String,
    }
}

wire! {
    /// `tools.authorize`: may this tool call run? The host decides from its durable state.
    pub struct AuthorizeParams {
        /// Session.
        pub session_id: String,
        /// The active turn.
        pub turn_id: String,
        /// The tool call.
        pub tool_call_id: String,
        /// The tool's name.
        pub tool_name: String,
        /// Zero-based position in the assistant batch.
        pub batch_index: u32,
        /// Tool calls in the batch.
        pub batch_size: u32,
        /// Where the tool came from.
        pub provenance: Provenance,
        /// The tool input (recorded in the audit log; not trusted).
        #[serde(default)]
        pub input: Value,
    }
}

/// The three answers of `tools.authorize`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum DecisionKind {
    /// Run it.
    Allow,
    /// Do not run it.
    Deny,
    /// A person must answer `permissions.resolve` first.
    Ask,
}

wire! {
    /// The host's decision.
    pub struct AuthorizeResult {
        /// Allow, deny or ask.
        pub decision: DecisionKind,
        /// The stable code for a deny.
        pub code: Option<String>,
        /// Why.
        pub reason: String,
        /// The policy rule that decided.
        pub rule: String,
        /// For `ask`: the id to resolve.
        pub request_id: Option<String>,
    }
}

wire! {
    /// `permissions.resolve`: answer an ask.
    pub struct ResolvePermissionParams {
        /// The ask.
        pub request_id: String,
        /// `allow` or `deny` (`ask` is refused).
        pub decision: DecisionKind,
        /// Optional note for the audit log.
        #[serde(default)]
        pub reason: Option<String>,
    }
}

wire! {
    /// An open ask.
    pub struct PermissionAsk {
        /// The ask's id.
        pub request_id: String,
        /// Session.
        pub session_id: String,
        /// Turn.
        pub turn_id: String,
        /// Tool call.
        pub tool_call_id: String,
        /// Tool name.
        pub tool_name: String,
        /// Why the policy asks.
        pub reason: String,
        /// The input the person is asked about (summarised above 4 KiB); the grant binds its digest.
        pub input: Value,
        /// The answer, once given.
        pub decision: Option<DecisionKind>,
    }
}

wire! {
    /// `permissions.pending`.
    pub struct PermissionAsks {
        /// Open asks, oldest first.
        pub asks: Vec<PermissionAsk>,
    }
}

wire! {
    /// `tools.execute`: the host runs an authorized tool call.
    pub struct ExecuteParams {
        /// Session.
        pub session_id: String,
        /// The active turn.
        pub turn_id: String,
        /// The tool call `tools.authorize` allowed.
        pub tool_call_id: String,
        /// `Read`, `Glob`, `Grep`, `Write`, `Edit` or `Bash`.
        pub tool: String,
        /// The tool's input.
        pub input: Value,
    }
}

wire! {
    /// The tool's structured result.
    pub struct ExecuteResult {
        /// The tool call.
        pub tool_call_id: String,
        /// Tool-specific output.
        pub output: Value,
    }
}

wire! {
    /// `tools.cancel`.
    pub struct CancelParams {
        /// Session.
        pub session_id: String,
        /// The running tool call.
        pub tool_call_id: String,
    }
}

wire! {
    /// Whether something was cancelled.
    pub struct CancelResult {
        /// True if the call was running and is now being cancelled.
        pub cancelled: bool,
    }
}

wire! {
    /// `tools.output` notification: one ordered chunk of a running command.
    pub struct ToolOutput {
        /// Session.
        pub session_id: String,
        /// The tool call.
        pub tool_call_id: String,
        /// `stdout` or `stderr`.
        pub stream: String,
        /// Strictly increasing across both streams of the call.
        pub seq: u64,
        /// UTF-8 text; invalid bytes replaced with U+FFFD.
        pub text: String,
    }
}

wire! {
    /// `plans.enter`: the agent's EnterPlanMode tool.
    pub struct EnterPlanParams {
        /// Session.
        pub session_id: String,
        /// The active turn.
        pub turn_id: String,
        /// The EnterPlanMode call.
        pub tool_call_id: String,
        /// Zero-based position in the batch.
        pub batch_index: u32,
        /// Tool calls in the batch.
        pub batch_size: u32,
    }
}

wire! {
    /// `plans.submit`: the SubmitPlan tool.
    pub struct SubmitPlanParams {
        /// Session.
        pub session_id: String,
        /// The active turn.
        pub turn_id: String,
        /// The SubmitPlan call.
        pub tool_call_id: String,
        /// Zero-based position in the batch.
        pub batch_index: u32,
        /// Tool calls in the batch.
        pub batch_size: u32,
        /// Short label.
        pub title: String,
        /// The plan; written byte for byte.
        pub markdown: String,
        /// What the person is asked.
        pub question: String,
        /// The client's branch (root → leaf): when given, the plan is also saved as a
        /// checkpoint revision anchored at the leaf.
        #[serde(default)]
        pub branch_path: Option<Vec<String>>,
    }
}

wire! {
    /// An approval row.
    pub struct ApprovalInfo {
        /// Proposal id.
        pub proposal_id: String,
        /// Session.
        pub session_id: String,
        /// SubmitPlan's turn.
        pub turn_id: String,
        /// SubmitPlan's tool call.
        pub tool_call_id: String,
        /// Row version.
        pub version: i64,
        /// Title.
        pub title: String,
        /// Question.
        pub question: String,
        /// Status.
        pub status: ApprovalStatus,
        /// Action taken.
        pub action: Option<ApprovalAction>,
        /// Permission mode chosen at approval.
        pub target_permission_mode: Option<TargetPermissionMode>,
        /// Rejection note.
        pub feedback: Option<String>,
        /// Creation.
        pub created_at: Timestamp,
        /// Absolute deadline.
        pub expires_at: Timestamp,
        /// When it left pending.
        pub resolved_at: Option<Timestamp>,
        /// Why it ended, for expired and interrupted.
        pub error_code: Option<String>,
        /// `.pi/plan/<unique>.md`.
        pub artifact_relative_path: String,
        /// Absolute path of the artifact (the opener).
        pub artifact_path: String,
        /// SHA-256 of the artifact bytes.
        pub artifact_sha256: String,
        /// Artifact size.
        pub artifact_size_bytes: i64,
        /// The queued execution.
        pub execution_id: Option<String>,
        /// Its state.
        pub execution_state: Option<ExecutionState>,
    }
}

wire! {
    /// `plans.pending` / `plans.list` filter.
    pub struct PlansFilter {
        /// Only this session's.
        #[serde(default)]
        pub session_id: Option<String>,
    }
}

wire! {
    /// A list of approvals.
    pub struct ApprovalList {
        /// Newest first.
        pub approvals: Vec<ApprovalInfo>,
    }
}

wire! {
    /// `plans.get`.
    pub struct ProposalRef {
        /// Proposal id (a unique prefix or suffix of at least 8 characters is accepted).
        pub proposal_id: String,
    }
}

wire! {
    /// `plans.get`: the row and the exact submitted Markdown.
    pub struct PlanDetail {
        /// The row.
        pub approval: ApprovalInfo,
        /// The exact submitted Markdown.
        pub markdown: String,
    }
}

wire! {
    /// `plans.resolve` (seed 000 §6 `PlanResolveRequest`).
    pub struct ResolvePlanParams {
        /// Proposal.
        pub proposal_id: String,
        /// Must match.
        pub session_id: String,
        /// Must match.
        pub turn_id: String,
        /// Must match.
        pub tool_call_id: String,
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
        /// Reject only: a note.
        #[serde(default)]
        pub feedback: Option<String>,
    }
}

wire! {
    /// `executions.claim`.
    pub struct ExecutionRef {
        /// Session.
        pub session_id: String,
        /// Execution.
        pub execution_id: String,
    }
}

wire! {
    /// `executions.finish`.
    pub struct FinishExecutionParams {
        /// Session.
        pub session_id: String,
        /// Execution.
        pub execution_id: String,
        /// Completed or interrupted.
        pub outcome: ExecutionOutcome,
    }
}

wire! {
    /// `shell.catalog`.
    pub struct ShellCatalog {
        /// `windows`, `macos` or `linux`.
        pub platform: String,
        /// Every option of the platform.
        pub options: Vec<ShellOptionInfo>,
        /// The shell a new turn would pin now, if any.
        pub effective: Option<EffectiveShellInfo>,
    }
}

wire! {
    /// One catalog entry.
    pub struct ShellOptionInfo {
        /// Stable id.
        pub id: String,
        /// Display label.
        pub label: String,
        /// `powershell`, `cmd` or `posix`.
        pub dialect: String,
        /// Found on this machine.
        pub available: bool,
        /// The platform default.
        pub is_default: bool,
    }
}

wire! {
    /// The effective shell.
    pub struct EffectiveShellInfo {
        /// Shell id.
        pub id: String,
        /// Dialect.
        pub dialect: String,
        /// True when the configured shell is unavailable and the first available one is used.
        pub fallback: bool,
    }
}

wire! {
    /// `settings.get` result and `settings.set` params: absent fields are unchanged on set.
    pub struct Settings {
        /// `ask`, `accept-edits` or `auto`.
        #[serde(default, with = "double_option")]
        #[schemars(with = "Option<String>")]
        pub default_permission_mode: Option<Option<String>>,
        /// A shell id.
        #[serde(default, with = "double_option")]
        #[schemars(with = "Option<String>")]
        pub default_shell: Option<Option<String>>,
        /// `host`, `strict` or `explore`.
        #[serde(default, with = "double_option")]
        #[schemars(with = "Option<String>")]
        pub default_policy_preset: Option<Option<String>>,
    }
}

wire! {
    /// `audit.list`.
    pub struct AuditParams {
        /// Only this session's.
        #[serde(default)]
        pub session_id: Option<String>,
        /// At most this many, newest first (default 100, max 10,000).
        #[serde(default)]
        pub limit: Option<u32>,
    }
}

wire! {
    /// One audit row.
    pub struct AuditEntry {
        /// Monotonic id.
        pub id: i64,
        /// When.
        pub at: Timestamp,
        /// Session.
        pub session_id: Option<String>,
        /// Turn.
        pub turn_id: Option<String>,
        /// Tool call.
        pub tool_call_id: Option<String>,
        /// Proposal.
        pub proposal_id: Option<String>,
        /// What happened.
        pub action: String,
        /// JSON detail.
        pub detail: Value,
    }
}

wire! {
    /// `audit.list` result.
    pub struct AuditList {
        /// Newest first.
        pub entries: Vec<AuditEntry>,
    }
}

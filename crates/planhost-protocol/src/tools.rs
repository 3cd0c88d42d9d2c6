//! Tool calls: authorization, asks, execution, output and cancellation.

use planhost_core::{
    AskId, DenyCode, OutputStream, PermissionDecision, PolicyRule, Resolver, SessionId, Timestamp,
    ToolCallId, TurnId,
};
pub use planhost_core::{
    BashResult, EditResult, ExecuteOutput, ExitStatus, FileCount, GlobResult, GrepLine, GrepOutput,
    GrepResult, HostTool, LineEnding, LineKind, ReadResult, RunResult, StreamSummary, WriteOutcome,
    WriteResult,
};
use serde_json::Value;

/// Where a tool came from, as the client knows it: `{"kind":"builtIn"}` or
/// `{"kind":"extension","package":…,"sourcePath":…}`. A plain struct on the wire (not a tagged
/// enum) so that a bad field is reported by its full path, e.g. `provenance.package`.
#[derive(
    Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
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

planhost_core::wire_enum! {
    #[derive(schemars::JsonSchema)]
    /// The two provenance kinds.
    ProvenanceKind {
        /// The agent runtime's own tool, or the host's.
        BuiltIn = "builtIn",
        /// A tool registered by an extension: a plugin, whatever its name.
        Extension = "extension",
    }
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

params! {
    /// `tools.authorize`: may this tool call run? The host decides from its durable state.
    pub struct AuthorizeParams {
        /// Session.
        pub session_id: SessionId,
        /// The running turn.
        pub turn_id: TurnId,
        /// The tool call.
        pub tool_call_id: ToolCallId,
        /// The tool's name, exactly as called.
        pub tool_name: String,
        /// Zero-based position in the assistant batch.
        pub batch_index: u32,
        /// Tool calls in the batch.
        pub batch_size: u32,
        /// Where the tool came from.
        pub provenance: Provenance,
        /// The tool input. A grant binds its SHA-256: `tools.execute` must send the same input.
        #[serde(default)]
        pub input: Value,
    }
}

planhost_core::wire_enum! {
    #[derive(schemars::JsonSchema)]
    /// The three answers of `tools.authorize`.
    DecisionKind {
        /// Run it.
        Allow = "allow",
        /// Do not run it.
        Deny = "deny",
        /// A person must answer `permissions.resolve` first.
        Ask = "ask",
    }
}

result! {
    /// The host's decision.
    pub struct AuthorizeResult {
        /// Allow, deny or ask.
        pub decision: DecisionKind,
        /// The stable code of a deny.
        pub code: Option<DenyCode>,
        /// Why, in a sentence for the model and the person.
        pub reason: String,
        /// The policy rule that decided.
        pub rule: PolicyRule,
        /// For `ask`: the ask to resolve.
        pub request_id: Option<AskId>,
        /// For `ask`: the answer a surface offers first (`deny` for a command Plan mode could
        /// not prove read-only).
        pub default_answer: Option<PermissionDecision>,
    }
}

params! {
    /// `tools.execute`: the host runs an authorized call of one of its own tools.
    pub struct ExecuteParams {
        /// Session.
        pub session_id: SessionId,
        /// The running turn.
        pub turn_id: TurnId,
        /// The tool call `tools.authorize` allowed (or a person allowed after an ask).
        pub tool_call_id: ToolCallId,
        /// Which tool: one the host runs (`Read`, `Glob`, `Grep`, `Write`, `Edit`, `Bash`).
        #[serde(with = "crate::wire::run_by_host")]
        #[schemars(schema_with = "crate::wire::run_by_host::schema")]
        pub tool: HostTool,
        /// Its input: exactly the authorized one.
        pub input: Value,
    }
}

result! {
    /// The tool's structured result.
    pub struct ExecuteResult {
        /// The tool call.
        pub tool_call_id: ToolCallId,
        /// The tool's own result, untagged (Bash: `exit`, `stdout`, `stderr`, `timedOut`,
        /// `cancelled`, …): the result type of the `tool` the call named. Read it by that tool
        /// (`ExecuteOutput::decode`; in TypeScript, `ExecuteOutputOf[tool]`).
        pub output: ExecuteOutput,
    }
}

params! {
    /// `tools.cancel`.
    pub struct CancelParams {
        /// Session.
        pub session_id: SessionId,
        /// The running tool call.
        pub tool_call_id: ToolCallId,
    }
}

result! {
    /// Whether something was cancelled.
    pub struct CancelResult {
        /// True if the call was running and is now being cancelled (its process tree killed).
        pub cancelled: bool,
    }
}

result! {
    /// `tools.output` notification: one ordered chunk of a running command, to the calling
    /// connection only, all before the call's result.
    pub struct ToolOutput {
        /// Session.
        pub session_id: SessionId,
        /// The tool call.
        pub tool_call_id: ToolCallId,
        /// `stdout` or `stderr`.
        pub stream: OutputStream,
        /// Strictly increasing across both streams of the call.
        pub seq: u64,
        /// UTF-8 text; invalid bytes replaced with U+FFFD.
        pub text: String,
    }
}

planhost_core::wire_enum! {
    #[derive(schemars::JsonSchema)]
    /// An ask's state, for filtering.
    AskStatus {
        /// Waiting for a person.
        Open = "open",
        /// Answered (it stays listed until its turn ends).
        Answered = "answered",
    }
}

params! {
    /// `permissions.list`.
    pub struct AsksFilter {
        /// Only this session's asks.
        #[serde(default)]
        pub session_id: Option<SessionId>,
        /// Only asks in these states (default: every state).
        #[serde(default)]
        pub status: Option<Vec<AskStatus>>,
        /// At most this many, newest first (default 100, at most 10,000).
        #[serde(default)]
        pub limit: Option<u32>,
    }
}

params! {
    /// `permissions.resolve`: answer an ask.
    pub struct ResolvePermissionParams {
        /// The ask.
        pub request_id: AskId,
        /// `allow` or `deny`.
        pub decision: PermissionDecision,
        /// A note for the audit log.
        #[serde(default)]
        pub note: Option<String>,
    }
}

result! {
    /// An ask: a tool call waiting for a person's yes.
    pub struct PermissionAsk {
        /// The ask's id.
        pub request_id: AskId,
        /// Session.
        pub session_id: SessionId,
        /// Turn.
        pub turn_id: TurnId,
        /// Tool call.
        pub tool_call_id: ToolCallId,
        /// Tool name.
        pub tool_name: String,
        /// Why the policy asks.
        pub reason: String,
        /// The policy rule that asked (a surface may say its meaning in the person's language,
        /// with `reason` as the detail).
        pub rule: PolicyRule,
        /// The answer a surface offers first.
        pub default_answer: PermissionDecision,
        /// The exact input the person is asked about (summarised above 4 KiB); the grant binds
        /// its digest.
        pub input: Value,
        /// When it was asked.
        pub asked_at: Timestamp,
        /// The answer, once given.
        pub decision: Option<PermissionDecision>,
        /// Who answered.
        pub resolved_by: Option<Resolver>,
    }
}

result! {
    /// `permissions.list`.
    pub struct AskList {
        /// Newest first.
        pub items: Vec<PermissionAsk>,
    }
}

planhost_core::wire_enum! {
    #[derive(schemars::JsonSchema)]
    /// Where an unfinished tool call of a running turn stands, as the host knows it.
    ToolCallState {
        /// Allowed (by the policy or a person) and not yet run by the host, nor reported
        /// finished by the client (`tools.finished`).
        Allowed = "allowed",
        /// Waiting for a person's answer.
        Asking = "asking",
        /// The host is running it (`tools.execute`).
        Running = "running",
    }
}

result! {
    /// A tool call of the running turn that has not finished. Held in memory: after a restart
    /// there are none (their turns were aborted).
    pub struct ToolCallInfo {
        /// The turn.
        pub turn_id: TurnId,
        /// The tool call.
        pub tool_call_id: ToolCallId,
        /// The tool's name.
        pub tool_name: String,
        /// Allowed, asking or running.
        pub state: ToolCallState,
        /// When it entered that state.
        pub since: Timestamp,
    }
}

params! {
    /// `tools.finished`: a tool the client ran itself, after an allow, has finished. The host
    /// drops the call's grant (it can no longer be run with `tools.execute`) and records it.
    pub struct FinishedParams {
        /// Session.
        pub session_id: SessionId,
        /// The running turn.
        pub turn_id: TurnId,
        /// The tool call.
        pub tool_call_id: ToolCallId,
        /// Whether the tool reported an error.
        #[serde(default)]
        pub is_error: bool,
    }
}

result! {
    /// `tools.finished`.
    pub struct FinishedResult {
        /// True if the host held an unused grant for this call in this turn (now void); false
        /// if it had none (never allowed, already run by the host, its turn ended, or no such
        /// session): a late or repeated report is not an error.
        pub released: bool,
    }
}

result! {
    /// `tools.activity` notification, only to connections that asked for it in `initialize`
    /// (`toolActivity`): a tool call of a running turn changed state or finished.
    pub struct ToolActivity {
        /// Session.
        pub session_id: SessionId,
        /// The turn.
        pub turn_id: TurnId,
        /// The tool call.
        pub tool_call_id: ToolCallId,
        /// The tool's name.
        pub tool_name: String,
        /// Its new state; `null` once it finished, was denied or withdrawn.
        pub state: Option<ToolCallState>,
        /// When.
        pub at: Timestamp,
    }
}

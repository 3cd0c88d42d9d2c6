//! The handshake, the host itself, its settings, the shell catalog and the audit log.

use planhost_core::{
    Access, AuditAction, Dialect, Platform, PolicyPreset, ProposalId, Role, SessionId, ShellId,
    TargetPermissionMode, Timestamp, ToolCallId, TurnId,
};
use serde_json::Value;

use crate::wire::double_option;

params! {
    /// No parameters.
    pub struct Empty {}
}

/// `initialize`: the first request on every connection. Unknown fields are ignored, so a newer
/// client that sends one more field can still talk to this host.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InitializeParams {
    /// The protocol version the client speaks.
    pub protocol_version: u32,
    /// e.g. `planhost-cli`, `pi-planhost`; recorded with every approval this connection answers.
    pub client_name: String,
    /// The client's own version.
    #[serde(default)]
    pub client_version: Option<String>,
    /// What the connection is: at least one of `agent`, `approver`, `observer`.
    pub roles: Vec<Role>,
    /// Also send this connection `tools.activity` notifications (every session's tool calls
    /// as they are allowed, asked, run and finished). Needs the `observer` role.
    #[serde(default)]
    pub tool_activity: bool,
    /// Which sessions' `state.changed` (and, with `toolActivity`, `tools.activity`)
    /// notifications this connection gets: `all` (the default), or `own`, the sessions this
    /// connection opened with `sessions.open` — an agent's connection watches its own session,
    /// and other sessions' events cost it nothing.
    #[serde(default)]
    pub events: EventScope,
    /// With the `agent` role: the agent's own process, when the connecting process is a
    /// short-lived helper acting for it (a hook Claude Code runs for one event). It must be the
    /// connecting process, its parent or its grandparent. Like the process of every agent connection,
    /// it becomes an agent root: no process below it may be an approver, so the model's own
    /// commands cannot answer for a person.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_process: Option<u32>,
}

result! {
    /// One method as `initialize` lists it.
    pub struct MethodInfo {
        /// Dotted name.
        pub name: String,
        /// Which roles may call it.
        pub access: Access,
    }
}

result! {
    /// The host's side of the handshake.
    pub struct InitializeResult {
        /// The protocol version the host speaks.
        pub protocol_version: u32,
        /// `planhost`.
        pub server_name: String,
        /// The host's version.
        pub server_version: String,
        /// This connection's id (in the host's logs and audit rows).
        pub connection_id: u64,
        /// The roles the connection holds, as declared.
        pub roles: Vec<Role>,
        /// Every method the host serves, with its role rule.
        pub methods: Vec<MethodInfo>,
    }
}

planhost_core::wire_enum! {
    #[derive(schemars::JsonSchema, Default)]
    /// Which sessions' notifications a connection gets (`initialize`'s `events`).
    EventScope {
        /// Every session's.
        #[default]
        All = "all",
        /// The sessions this connection opened (`sessions.open`).
        Own = "own",
    }
}

planhost_core::wire_enum! {
    #[derive(schemars::JsonSchema)]
    /// `app.health` status.
    HealthStatus {
        /// Serving.
        Ok = "ok",
    }
}

result! {
    /// `app.health`.
    pub struct HealthResult {
        /// `ok`.
        pub status: HealthStatus,
        /// The host's process id.
        pub pid: u32,
        /// Milliseconds since the host started.
        pub uptime_ms: u64,
    }
}

result! {
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

result! {
    /// `settings.get`, and what `settings.set` leaves: `null` means unset (the built-in default).
    pub struct Settings {
        /// The permission mode sessions with `inherit` use (built-in: `ask`).
        pub default_permission_mode: Option<TargetPermissionMode>,
        /// The shell new turns pin (built-in: the platform's first available).
        pub default_shell: Option<ShellId>,
        /// The policy preset sessions without one use (built-in: `host`).
        pub default_policy_preset: Option<PolicyPreset>,
    }
}

params! {
    /// `settings.set`: absent fields are unchanged; `null` unsets.
    pub struct SettingsPatch {
        /// New default permission mode.
        #[serde(default, with = "double_option", skip_serializing_if = "Option::is_none")]
        #[schemars(with = "Option<TargetPermissionMode>")]
        pub default_permission_mode: Option<Option<TargetPermissionMode>>,
        /// New default shell (validated against this platform's catalog).
        #[serde(default, with = "double_option", skip_serializing_if = "Option::is_none")]
        #[schemars(with = "Option<ShellId>")]
        pub default_shell: Option<Option<ShellId>>,
        /// New default policy preset.
        #[serde(default, with = "double_option", skip_serializing_if = "Option::is_none")]
        #[schemars(with = "Option<PolicyPreset>")]
        pub default_policy_preset: Option<Option<PolicyPreset>>,
    }
}

result! {
    /// `shells.catalog` (seed 000 §8).
    pub struct ShellCatalog {
        /// The platform whose catalog this is.
        pub platform: Platform,
        /// Every option of the platform, in fallback order.
        pub options: Vec<ShellOptionInfo>,
        /// The configured default, if any (it may be unavailable now).
        pub configured: Option<ShellId>,
        /// The shell a new turn would pin now, if any is available.
        pub effective: Option<EffectiveShellInfo>,
    }
}

result! {
    /// One catalog entry.
    pub struct ShellOptionInfo {
        /// Stable id.
        pub id: ShellId,
        /// Display label.
        pub label: String,
        /// The command language.
        pub dialect: Dialect,
        /// Found on this machine.
        pub available: bool,
        /// What an unset setting resolves to: the first available shell.
        pub is_default: bool,
    }
}

result! {
    /// The effective shell.
    pub struct EffectiveShellInfo {
        /// Shell id.
        pub id: ShellId,
        /// Dialect.
        pub dialect: Dialect,
        /// True when the configured shell is unavailable and the first available one is used.
        pub fallback: bool,
    }
}

params! {
    /// `audit.list`.
    pub struct AuditFilter {
        /// Only this session's rows.
        #[serde(default)]
        pub session_id: Option<SessionId>,
        /// At most this many, newest first (default 100, at most 10,000).
        #[serde(default)]
        pub limit: Option<u32>,
    }
}

result! {
    /// One audit row.
    pub struct AuditEntry {
        /// Monotonic id.
        pub id: i64,
        /// When.
        pub at: Timestamp,
        /// Session.
        pub session_id: Option<SessionId>,
        /// Turn.
        pub turn_id: Option<TurnId>,
        /// Tool call.
        pub tool_call_id: Option<ToolCallId>,
        /// Proposal.
        pub proposal_id: Option<ProposalId>,
        /// What happened.
        pub action: AuditAction,
        /// The row's detail (JSON); answers carry `by`: the client and roles that answered.
        pub detail: Value,
    }
}

result! {
    /// `audit.list`.
    pub struct AuditLog {
        /// Newest first.
        pub items: Vec<AuditEntry>,
    }
}

result! {
    /// `host.stopping` notification, to every connection: the host was asked to stop
    /// (`planhost stop`, SIGTERM, Ctrl-C) and has interrupted its pending work, as a restart
    /// would. A client should not start another host by itself after this.
    pub struct HostStopping {
        /// Why, in a sentence for the person.
        pub reason: String,
    }
}

result! {
    /// `app.startWeb`: the page the running host now serves.
    pub struct StartedWeb {
        /// Its address on this machine (without its token: `planhost web` prints that).
        pub url: String,
        /// Whether this call started it (false: it was served already).
        pub started: bool,
    }
}

//! The tool policy: before every tool call the host decides allow, deny or ask from the
//! session's durable state.
//!
//! [`authorize`] is a pure function. Its caller loads the preset, the mode and the permission
//! mode from the host's durable session (SQLite); a mode, preset or permission sent in the
//! request is never authoritative (DESIGN.md "Where state lives"). Every [`Decision`] names the
//! rule that produced it, so the audit log can say why.
//!
//! # Rules, in the order they are checked
//!
//! The tool name is classified by the catalog of the agent the session serves
//! ([`Agent::classify`], `catalog.rs`): the host's canonical names, then the agent's own table,
//! then its MCP naming. The rules below are written by what the tool *is* ([`ToolNature`]):
//! "read-only" is reads and searches of files and `read_plan`; "file writer" is any tool that
//! changes files (`Write`, `Edit`, `MultiEdit`, `NotebookEdit`, `apply_patch`, `write_file`,
//! `replace`, …); "shell" is a tool that runs commands (`Bash`, `bash`, Codex's `shell` and
//! `exec_command`, `run_shell_command`, …) or a skill whose shell lines run first; "notes" is
//! asking the person and the agent's todo list; "control" is the agent's own session state and
//! a running command's output.
//!
//! | # | when | decision | source |
//! |---|---|---|---|
//! | 1 | batch position malformed (`size == 0` or `index >= size`) | deny `POLICY_BATCH_INVALID` | DESIGN decision 4 |
//! | 2 | Plan, a tool *named* like a file writer of any catalog, any provenance or agent | deny `POLICY_PLAN_WRITE_DENIED` | 000 §1, 003, 004, DESIGN "Permission modes" |
//! | 3 | built-in claim for a web name only an extension provides (pi's `web_search`/`web_fetch`), any mode | deny `POLICY_PROVENANCE_MISMATCH` | 003 "same-named SDK" |
//! | 4 | built-in claim for a name the agent's catalog does not know, any mode | deny `POLICY_UNKNOWN_TOOL` | 000 §1, DESIGN decisions 4, 12 |
//! | 5 | built-in `create_plan`, any mode | deny `POLICY_PUBLICATION_COMMAND_ONLY` | 003 "Publication" |
//! | 6 | Agent: read-only, host utility, notes, control | allow | DESIGN "Permission modes" |
//! | 7 | Agent: file writer, subagent | `ask` → ask; `accept-edits`, `auto` → allow | DESIGN "Permission modes" |
//! | 8 | Agent: shell | `auto` → allow; `ask`, `accept-edits` → allow when the classifier proves the command read-only, else ask | DESIGN "Permission modes" |
//! | 9 | Agent: enters Plan | allow alone in its batch | 000 §3 rule 2 |
//! | 10 | Agent: submits or drafts a plan | deny `POLICY_PLAN_MODE_NOT_ACTIVE` | 000 §3, 003 |
//! | 11 | Agent: extension tool, the agent's web tool, MCP tool, outside service | `auto` → allow; otherwise ask | DESIGN "Permission modes" |
//! | 12 | Plan `host`: read-only, host utility, `update_plan_draft`, notes, control | allow | 000 §1 |
//! | 13 | Plan `host`: enters Plan, submits the plan | allow alone in its batch | 000 §1, §3 rule 2 |
//! | 14 | Plan `host`: shell | allow when the classifier proves the command read-only; else ask with Deny as the default, whatever the permission mode | DESIGN decision 11 |
//! | 15 | Plan `host`: subagent | ask (Allow first), whatever the permission mode | DESIGN decision 4: its calls reach this gate only where the agent routes them here |
//! | 16 | Plan `host`: the agent's web tool, outside service | deny `POLICY_PLAN_TOOL_DENIED` | 000 §1 |
//! | 17 | Plan `host`: MCP tool | deny `POLICY_MCP_DENIED` | 000 §1 |
//! | 18 | Plan `host`: extension tool | deny `POLICY_PLUGIN_DENIED` | 000 §1 |
//! | 19 | Plan `strict`: read-only, `update_plan_draft`, notes | allow | 003 "Read-only enforcement" |
//! | 20 | Plan `strict`: shell | deny `POLICY_PLAN_SHELL_DENIED` | 003 |
//! | 21 | Plan `strict`: the agent's web tool or an MCP tool on the allow-list by name and provenance ([`AllowedTool`]) | allow | 003 |
//! | 22 | Plan `strict`: any other MCP tool | deny `POLICY_MCP_DENIED` | 003 |
//! | 23 | Plan `strict`: other built-ins (control, subagent, web, outside service, plan control, host utility) | deny `POLICY_STRICT_TOOL_DENIED` | 003 |
//! | 24 | Plan `strict`: extension tool on the allow-list, provenance checked | allow | 003 |
//! | 25 | Plan `strict`: extension tool named like an allow-listed or built-in tool | deny `POLICY_PROVENANCE_MISMATCH` | 003 |
//! | 26 | Plan `strict`: any other extension tool | deny `POLICY_PLUGIN_DENIED` | 003 |
//! | 27 | Plan `explore`: built-ins but file writers | as in Plan `host`, but shell as in Agent, and subagent, web, MCP and outside service by the permission mode | 004 "Contract" |
//! | 28 | Plan `explore`: extension tool | as in Agent | 004 "Contract" |
//! | 29 | Plan `literal`: everything | as in Plan `host`, but shell and subagent strictly by the permission mode (`auto` → allow, else ask) | 000 §1 word for word |
//!
//! Rules 8, 14 and 27 read the shell classifier's verdict ([`classify_command`]) on the call's
//! command line, taken from where the agent's catalog says it is (a string, or an argv quoted
//! for POSIX: [`crate::CommandInput`]) in the tool's dialect or else the turn's; a call with no
//! command line is not read-only. The verdict and its reason are part of the decision, so the
//! audit row says why a command asked.
//!
//! "Built-in" means the client reported [`ToolProvenance::BuiltIn`] *and* the session agent's
//! catalog knows the name. An extension tool is a plugin whatever its name: an extension named
//! `read` is not Read.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::catalog::names_a_file_writer;
use crate::{
    Agent, BatchPosition, Classified, CommandSafety, Dialect, HostTool, Mode, PermissionDecision,
    PermissionMode, PolicyPreset, TargetPermissionMode, ToolNature, classify_command,
};

/// The package whose `web_search` and `web_fetch` the strict preset admits (seed 003).
pub const WEB_TOOLS_PACKAGE: &str = "@pithos-kit/web";

/// A permission mode with `inherit` resolved: what the policy actually applies.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EffectivePermission {
    /// Ask a person before each Write, Edit, Bash or plugin call. The default: seed 000 §1
    /// defaults the explicit choice to Ask.
    #[default]
    Ask,
    /// Run Write and Edit; ask for Bash and plugin tools.
    AcceptEdits,
    /// Run everything the mode and preset permit.
    Auto,
}

impl EffectivePermission {
    /// Every value, in declaration order.
    pub const ALL: &'static [EffectivePermission] = &[
        EffectivePermission::Ask,
        EffectivePermission::AcceptEdits,
        EffectivePermission::Auto,
    ];

    /// The stable wire string, the same as [`PermissionMode`]'s.
    pub fn as_str(self) -> &'static str {
        PermissionMode::from(self).as_str()
    }

    /// The explicit mode a [`PermissionMode`] names, or `None` for `inherit`.
    pub fn explicit(mode: PermissionMode) -> Option<EffectivePermission> {
        match mode {
            PermissionMode::Inherit => None,
            PermissionMode::Ask => Some(EffectivePermission::Ask),
            PermissionMode::AcceptEdits => Some(EffectivePermission::AcceptEdits),
            PermissionMode::Auto => Some(EffectivePermission::Auto),
        }
    }
}

impl fmt::Display for EffectivePermission {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl From<EffectivePermission> for PermissionMode {
    fn from(value: EffectivePermission) -> Self {
        match value {
            EffectivePermission::Ask => PermissionMode::Ask,
            EffectivePermission::AcceptEdits => PermissionMode::AcceptEdits,
            EffectivePermission::Auto => PermissionMode::Auto,
        }
    }
}

impl From<TargetPermissionMode> for EffectivePermission {
    fn from(value: TargetPermissionMode) -> Self {
        match value {
            TargetPermissionMode::Ask => EffectivePermission::Ask,
            TargetPermissionMode::AcceptEdits => EffectivePermission::AcceptEdits,
            TargetPermissionMode::Auto => EffectivePermission::Auto,
        }
    }
}

/// Resolves a session's permission mode: an explicit mode wins; `inherit` takes the host
/// default (`default_permission_mode`), and `ask` when none is configured.
pub fn effective_permission(
    session: PermissionMode,
    host_default: Option<EffectivePermission>,
) -> EffectivePermission {
    EffectivePermission::explicit(session)
        .or(host_default)
        .unwrap_or_default()
}

/// Where a tool comes from, as the client knows it.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase", deny_unknown_fields)]
pub enum ToolProvenance {
    /// Built into the client runtime or the host. Only catalog names count as built-ins.
    BuiltIn,
    /// Registered by an extension: a plugin, whatever its name.
    Extension {
        /// The npm package name from the extension's manifest.
        package: String,
        /// The absolute path of the file that registered the tool.
        #[serde(rename = "sourcePath")]
        source_path: String,
    },
}

/// Where an allow-listed tool must come from: what makes a name trustworthy (seed 003's
/// provenance check, extended to the agents' own tools and to MCP servers).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase", deny_unknown_fields)]
pub enum ToolSource {
    /// An extension tool from this exact npm package, its source file inside the package.
    Package {
        /// The package name.
        package: String,
    },
    /// The agent's own built-in of that name, in a session that serves this agent.
    Agent {
        /// The agent.
        agent: Agent,
    },
    /// A tool of this MCP server, named by the session agent's MCP convention.
    McpServer {
        /// The server's name as the agent's naming spells it.
        server: String,
    },
}

/// One tool the strict preset admits in Plan mode, by name and provenance.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AllowedTool {
    /// The exact tool name (for an MCP tool: its name on the server).
    pub tool: String,
    /// Where it must come from.
    pub from: ToolSource,
}

impl AllowedTool {
    /// An extension tool from `package`.
    pub fn package(tool: &str, package: &str) -> Self {
        Self {
            tool: tool.to_owned(),
            from: ToolSource::Package {
                package: package.to_owned(),
            },
        }
    }

    /// The built-in `tool` of `agent`.
    pub fn agent(tool: &str, agent: Agent) -> Self {
        Self {
            tool: tool.to_owned(),
            from: ToolSource::Agent { agent },
        }
    }

    /// The tool `tool` of the MCP server `server`.
    pub fn mcp(tool: &str, server: &str) -> Self {
        Self {
            tool: tool.to_owned(),
            from: ToolSource::McpServer {
                server: server.to_owned(),
            },
        }
    }

    /// True when the call `tool_name` with `provenance`, in a session that serves `agent`, is
    /// this entry: an extension of the same name from the package (its source path inside it,
    /// see [`source_in_package`]); the agent's own built-in of that name; or the MCP tool the
    /// agent's naming gives this server's tool.
    pub fn admits(&self, agent: Agent, tool_name: &str, provenance: &ToolProvenance) -> bool {
        match (&self.from, provenance) {
            (
                ToolSource::Package { package },
                ToolProvenance::Extension {
                    package: claimed,
                    source_path,
                },
            ) => {
                self.tool == tool_name
                    && package == claimed
                    && source_in_package(source_path, package)
            }
            (ToolSource::Agent { agent: wanted }, ToolProvenance::BuiltIn) => {
                *wanted == agent && self.tool == tool_name
            }
            (ToolSource::McpServer { server }, ToolProvenance::BuiltIn) => {
                agent.mcp_name(server, &self.tool).as_deref() == Some(tool_name)
            }
            (ToolSource::Package { .. }, ToolProvenance::BuiltIn)
            | (
                ToolSource::Agent { .. } | ToolSource::McpServer { .. },
                ToolProvenance::Extension { .. },
            ) => false,
        }
    }
}

/// The strict preset's default allow-list: `web_search` and `web_fetch` from
/// [`WEB_TOOLS_PACKAGE`] (seed 003 "Read-only enforcement"), and each agent's own built-in web
/// tools (Claude Code's `WebFetch`/`WebSearch`, Codex's `web_search`, Gemini CLI's
/// `google_web_search`/`web_fetch`): the agent's built-in is the trusted tool of that name.
/// No MCP tool is admitted by default.
pub fn default_strict_allow_list() -> Vec<AllowedTool> {
    let mut list: Vec<AllowedTool> = ["web_search", "web_fetch"]
        .into_iter()
        .map(|tool| AllowedTool::package(tool, WEB_TOOLS_PACKAGE))
        .collect();
    for agent in Agent::ALL {
        for entry in agent.table() {
            if entry.nature == ToolNature::Web {
                list.push(AllowedTool::agent(entry.name, *agent));
            }
        }
    }
    list
}

/// True when `source_path` is a file inside the installed package `package`.
///
/// The rule, so that seed 003's top-level, path-escaping and spoofed-source tools fail:
/// - the path is absolute: POSIX (`/…`, no `\` anywhere, since `\` is a file-name character
///   there) or a Windows drive path (`C:\…` or `C:/…`); relative and UNC paths are refused;
/// - no component is empty, `.` or `..` (nothing to normalise, nothing escapes);
/// - the components after the *last* `node_modules` start with the package name's components
///   (`@pithos-kit`, `web`), compared exactly, and at least one component follows them. The
///   innermost `node_modules` owns a file, as in Node's resolution, so a dependency nested
///   inside the package is not the package.
pub fn source_in_package(source_path: &str, package: &str) -> bool {
    let Some(components) = absolute_components(source_path) else {
        return false;
    };
    if components.iter().any(|c| matches!(*c, "" | "." | "..")) {
        return false;
    }
    let Some(last_modules) = components.iter().rposition(|c| *c == "node_modules") else {
        return false;
    };
    let inside = components.get(last_modules + 1..).unwrap_or_default();
    let wanted: Vec<&str> = package.split('/').collect();
    inside.len() > wanted.len() && inside.starts_with(&wanted)
}

fn absolute_components(path: &str) -> Option<Vec<&str>> {
    if let Some(rest) = path.strip_prefix('/') {
        if path.contains('\\') {
            return None;
        }
        return Some(rest.split('/').collect());
    }
    let bytes = path.as_bytes();
    match bytes {
        [drive, b':', b'/' | b'\\', ..] if drive.is_ascii_alphabetic() => {
            Some(path.get(3..)?.split(['/', '\\']).collect())
        }
        _ => None,
    }
}

wire_enum! {
    #[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
    /// The rule that decided a tool call: a stable id for the audit log (see the table above).
    PolicyRule {
        AgentBookkeeping = "agent.bookkeeping",
        AgentEditByPermission = "agent.edit_by_permission",
        AgentEnterPlan = "agent.enter_plan",
        AgentExternalByPermission = "agent.external_by_permission",
        AgentHostUtility = "agent.host_utility",
        AgentMcpByPermission = "agent.mcp_by_permission",
        AgentPlanTool = "agent.plan_tool",
        AgentPluginByPermission = "agent.plugin_by_permission",
        AgentReadOnly = "agent.read_only",
        AgentShellByPermission = "agent.shell_by_permission",
        AgentShellReadOnly = "agent.shell_read_only",
        AgentSubagentByPermission = "agent.subagent_by_permission",
        AgentWebByPermission = "agent.web_by_permission",
        BatchInvalid = "batch.invalid",
        BuiltinUnknown = "builtin.unknown",
        BuiltinWebSpoof = "builtin.web_spoof",
        CreatePlanCommandOnly = "create_plan.command_only",
        PlanExploreBookkeeping = "plan.explore.bookkeeping",
        PlanExploreExternalByPermission = "plan.explore.external_by_permission",
        PlanExploreHostUtility = "plan.explore.host_utility",
        PlanExploreMcpByPermission = "plan.explore.mcp_by_permission",
        PlanExplorePlanControl = "plan.explore.plan_control",
        PlanExplorePluginByPermission = "plan.explore.plugin_by_permission",
        PlanExploreReadOnly = "plan.explore.read_only",
        PlanExploreShellByPermission = "plan.explore.shell_by_permission",
        PlanExploreShellReadOnly = "plan.explore.shell_read_only",
        PlanExploreSubagentByPermission = "plan.explore.subagent_by_permission",
        PlanExploreUpdatePlanDraft = "plan.explore.update_plan_draft",
        PlanExploreWebByPermission = "plan.explore.web_by_permission",
        PlanHostBookkeeping = "plan.host.bookkeeping",
        PlanHostExternalDenied = "plan.host.external_denied",
        PlanHostHostUtility = "plan.host.host_utility",
        PlanHostMcpDenied = "plan.host.mcp_denied",
        PlanHostPlanControl = "plan.host.plan_control",
        PlanHostPluginDenied = "plan.host.plugin_denied",
        PlanHostReadOnly = "plan.host.read_only",
        PlanHostShellMayChange = "plan.host.shell_may_change",
        PlanHostShellReadOnly = "plan.host.shell_read_only",
        PlanHostSubagentAsks = "plan.host.subagent_asks",
        PlanHostWebDenied = "plan.host.web_denied",
        PlanLiteralBookkeeping = "plan.literal.bookkeeping",
        PlanLiteralExternalDenied = "plan.literal.external_denied",
        PlanLiteralHostUtility = "plan.literal.host_utility",
        PlanLiteralMcpDenied = "plan.literal.mcp_denied",
        PlanLiteralPlanControl = "plan.literal.plan_control",
        PlanLiteralPluginDenied = "plan.literal.plugin_denied",
        PlanLiteralReadOnly = "plan.literal.read_only",
        PlanLiteralShellByPermission = "plan.literal.shell_by_permission",
        PlanLiteralSubagentByPermission = "plan.literal.subagent_by_permission",
        PlanLiteralUpdatePlanDraft = "plan.literal.update_plan_draft",
        PlanLiteralWebDenied = "plan.literal.web_denied",
        PlanHostUpdatePlanDraft = "plan.host.update_plan_draft",
        PlanStrictAllowListedBuiltin = "plan.strict.allow_listed_builtin",
        PlanStrictAllowListedExtension = "plan.strict.allow_listed_extension",
        PlanStrictAllowListedMcp = "plan.strict.allow_listed_mcp",
        PlanStrictBookkeeping = "plan.strict.bookkeeping",
        PlanStrictMcpDenied = "plan.strict.mcp_denied",
        PlanStrictNotExposed = "plan.strict.not_exposed",
        PlanStrictPluginDenied = "plan.strict.plugin_denied",
        PlanStrictReadOnly = "plan.strict.read_only",
        PlanStrictSameNamedExtension = "plan.strict.same_named_extension",
        PlanStrictShellDenied = "plan.strict.shell_denied",
        PlanStrictUpdatePlanDraft = "plan.strict.update_plan_draft",
        PlanWriteDenied = "plan.write_denied",
    }
}

wire_enum! {
    #[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
    /// Why the policy refused a tool call; each a stable code for the wire and the audit log.
    DenyCode {
        /// The batch position is malformed (`size == 0` or `index >= size`). DESIGN decision 4.
        BatchInvalid = "POLICY_BATCH_INVALID",
        /// Write, Edit or apply_patch in Plan mode, by name, under every preset and permission
        /// mode. Seeds 000 §1, 003, 004; DESIGN "Permission modes".
        PlanWriteDenied = "POLICY_PLAN_WRITE_DENIED",
        /// A shell tool in Plan mode under `strict`. Seed 003 "Read-only enforcement".
        PlanShellDenied = "POLICY_PLAN_SHELL_DENIED",
        /// An extension tool where the preset admits none (`host` in Plan, seed 000 §1) or none
        /// by that name (`strict` in Plan, seed 003).
        PluginDenied = "POLICY_PLUGIN_DENIED",
        /// A tool whose claimed provenance does not match its name: a built-in claim for a web
        /// tool, or, under `strict`, an extension tool named like an allow-listed tool or a
        /// built-in. Seed 003's same-named SDK, top-level, path-escaping and spoofed-source tools.
        ProvenanceMismatch = "POLICY_PROVENANCE_MISMATCH",
        /// A built-in claim for a name outside the host's catalog. Seed 000 §1; decision 4.
        UnknownTool = "POLICY_UNKNOWN_TOOL",
        /// EnterPlanMode or SubmitPlan shares its assistant batch. Seed 000 §3 rule 2.
        ToolNotAloneInBatch = "POLICY_TOOL_NOT_ALONE_IN_BATCH",
        /// SubmitPlan or update_plan_draft while the session is in Agent mode. Seeds 000, 003.
        PlanModeNotActive = "POLICY_PLAN_MODE_NOT_ACTIVE",
        /// create_plan: publication is driven by `/plan save` and `/plan exit`, never by the
        /// model's own call. Seed 003 "Publication"; issue #5.
        PublicationCommandOnly = "POLICY_PUBLICATION_COMMAND_ONLY",
        /// A built-in the `strict` preset does not expose in Plan mode. Seed 003.
        StrictToolDenied = "POLICY_STRICT_TOOL_DENIED",
        /// A built-in of the session's agent that Plan mode denies under `host` and `literal`:
        /// a web tool or a tool acting through an outside service. Seed 000 §1 lists what Plan
        /// allows; these are not on it.
        PlanToolDenied = "POLICY_PLAN_TOOL_DENIED",
        /// An MCP tool in Plan mode, where the preset admits none by that server and name.
        /// Seed 000 §1 (plugin and unknown tools denied), seed 003 (provenance-checked only).
        McpDenied = "POLICY_MCP_DENIED",
    }
}

impl DenyCode {
    /// The code in the registry.
    pub fn code(self) -> crate::ErrorCode {
        use crate::ErrorCode as E;
        match self {
            DenyCode::BatchInvalid => E::PolicyBatchInvalid,
            DenyCode::PlanWriteDenied => E::PolicyPlanWriteDenied,
            DenyCode::PlanShellDenied => E::PolicyPlanShellDenied,
            DenyCode::PluginDenied => E::PolicyPluginDenied,
            DenyCode::ProvenanceMismatch => E::PolicyProvenanceMismatch,
            DenyCode::UnknownTool => E::PolicyUnknownTool,
            DenyCode::ToolNotAloneInBatch => E::PolicyToolNotAloneInBatch,
            DenyCode::PlanModeNotActive => E::PolicyPlanModeNotActive,
            DenyCode::PublicationCommandOnly => E::PolicyPublicationCommandOnly,
            DenyCode::StrictToolDenied => E::PolicyStrictToolDenied,
            DenyCode::PlanToolDenied => E::PolicyPlanToolDenied,
            DenyCode::McpDenied => E::PolicyMcpDenied,
        }
    }
}

/// The policy's answer for one tool call. `rule` is a stable id for the audit log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "decision", rename_all = "camelCase")]
pub enum Decision {
    /// Run the tool.
    Allow {
        /// The rule that allowed it.
        rule: PolicyRule,
    },
    /// Refuse the tool call.
    Deny {
        /// The rule that denied it.
        rule: PolicyRule,
        /// The stable code.
        code: DenyCode,
        /// A sentence for the model and the person.
        reason: String,
    },
    /// Run the tool only once a person says yes on some approval surface.
    Ask {
        /// The rule that asked.
        rule: PolicyRule,
        /// What the person is asked about.
        reason: String,
        /// The answer an approval surface offers first: `deny` for a command Plan mode could
        /// not prove read-only (decision 11), `allow` for an ask the permission mode raised.
        default: PermissionDecision,
    },
}

impl Decision {
    /// The rule that produced this decision.
    pub fn rule(&self) -> PolicyRule {
        match self {
            Decision::Allow { rule } | Decision::Deny { rule, .. } | Decision::Ask { rule, .. } => {
                *rule
            }
        }
    }

    /// The deny code, if this is a denial.
    pub fn deny_code(&self) -> Option<DenyCode> {
        match self {
            Decision::Deny { code, .. } => Some(*code),
            Decision::Allow { .. } | Decision::Ask { .. } => None,
        }
    }
}

/// Everything [`authorize`] needs. Preset, mode and permission come from the durable session,
/// never from the request; so does the agent whose catalog names the tool.
#[derive(Debug, Clone, Copy)]
pub struct AuthorizeInput<'a> {
    /// The agent the session serves: whose catalog classifies `tool_name`.
    pub agent: Agent,
    /// The session's (or workspace's) preset; `host` when none is chosen.
    pub preset: PolicyPreset,
    /// The durable mode.
    pub mode: Mode,
    /// The session's permission mode, `inherit` resolved by [`effective_permission`].
    pub permission_mode: EffectivePermission,
    /// The tool name, exactly as called.
    pub tool_name: &'a str,
    /// Where the client says the tool comes from.
    pub provenance: &'a ToolProvenance,
    /// The call's place in its assistant batch.
    pub batch: BatchPosition,
    /// Tools `strict` admits in Plan by name and provenance; ignored by the other presets.
    pub allow_list: &'a [AllowedTool],
    /// A shell tool's command line, where its catalog entry says it is
    /// ([`crate::CommandInput::command_line`]); `None`: the input has none.
    pub command: Option<&'a str>,
    /// The dialect the command line is written in.
    pub dialect: Dialect,
    /// Where the classifier's verdict on `command` is kept, so a caller classifies a command
    /// line once (a grant carries it to the execute-time re-check); `None`: not kept.
    pub verdict: Option<&'a std::cell::OnceCell<CommandSafety>>,
}

impl AuthorizeInput<'_> {
    /// What the classifier proves of the call's command line (computed at most once per
    /// `verdict` cell); no command line is not read-only.
    pub fn command_safety(&self) -> CommandSafety {
        let classify = || match self.command {
            Some(line) => classify_command(line, self.dialect),
            None => CommandSafety::MayChangeFiles {
                reason: "the call has no command line to check".into(),
            },
        };
        match self.verdict {
            Some(cell) => cell.get_or_init(classify).clone(),
            None => classify(),
        }
    }
}

/// Decides one tool call. Pure: same input, same decision.
pub fn authorize(input: &AuthorizeInput<'_>) -> Decision {
    let name = input.tool_name;
    let batch = input.batch;
    if batch.size == 0 || batch.index >= batch.size {
        return deny(
            PolicyRule::BatchInvalid,
            DenyCode::BatchInvalid,
            format!(
                "tool call {} of a batch of {} is not a valid position",
                batch.index, batch.size
            ),
        );
    }
    match input.mode {
        // By name and before provenance or agent: a file writer's name in any catalog is
        // blocked, whoever provides the tool (seed 004 blocks these names; seed 003 blocks
        // same-named overrides of built-ins).
        Mode::Plan if names_a_file_writer(name) => return plan_write_denied(name),
        Mode::Plan | Mode::Agent => {}
    }
    let classified = input.agent.classify(name);
    match input.provenance {
        ToolProvenance::BuiltIn => built_in(input, classified),
        ToolProvenance::Extension { package, .. } => extension(input, classified.nature, package),
    }
}

/// A built-in that reaches outside the workspace through something the host cannot see into.
#[derive(Debug, Clone, Copy)]
enum Outside {
    /// The agent's own web tools.
    Web,
    /// A service the agent talks to (an artifact store, a project-defined command).
    External,
    /// An MCP server's tool.
    Mcp,
}

/// A built-in that reaches the per-mode rules, by what it does.
#[derive(Debug, Clone, Copy)]
enum Catalog {
    /// Reads and searches files, reads the plan.
    ReadOnly,
    WritesFiles,
    /// A shell, or a skill whose shell lines run first.
    Shell,
    /// Asks the person, keeps a todo list: changes nothing.
    Notes,
    /// The agent's own session state, a running command's output.
    Control,
    /// Reaches outside through something the host cannot see into.
    Outside(Outside),
    Subagent,
    EnterPlanMode,
    SubmitPlan,
    UpdatePlanDraft,
    HostUtility,
}

fn built_in(input: &AuthorizeInput<'_>, classified: Classified<'_>) -> Decision {
    let name = input.tool_name;
    let catalog = match classified.nature {
        ToolNature::ReadsFiles | ToolNature::SearchesFiles | ToolNature::ReadPlan => {
            Catalog::ReadOnly
        }
        ToolNature::ChangesFiles => Catalog::WritesFiles,
        ToolNature::RunsCommands | ToolNature::RunsSkill => Catalog::Shell,
        ToolNature::AsksUser | ToolNature::TodoList => Catalog::Notes,
        ToolNature::CommandControl | ToolNature::SessionControl => Catalog::Control,
        ToolNature::Web => Catalog::Outside(Outside::Web),
        ToolNature::Subagent => Catalog::Subagent,
        ToolNature::External => Catalog::Outside(Outside::External),
        ToolNature::Mcp => Catalog::Outside(Outside::Mcp),
        ToolNature::EnterPlan => Catalog::EnterPlanMode,
        ToolNature::SubmitPlan => Catalog::SubmitPlan,
        ToolNature::DraftPlan => Catalog::UpdatePlanDraft,
        ToolNature::HostUtility => Catalog::HostUtility,
        ToolNature::PublishPlan => {
            return deny(
                PolicyRule::CreatePlanCommandOnly,
                DenyCode::PublicationCommandOnly,
                "the plan is published by /plan save or /plan exit, not by create_plan".into(),
            );
        }
        ToolNature::ExtensionWeb => {
            return deny(
                PolicyRule::BuiltinWebSpoof,
                DenyCode::ProvenanceMismatch,
                format!("{name} is not a built-in; only an extension package provides it"),
            );
        }
        ToolNature::Unknown => {
            return deny(
                PolicyRule::BuiltinUnknown,
                DenyCode::UnknownTool,
                format!(
                    "{name} is not a tool the host knows for the agent {}",
                    input.agent
                ),
            );
        }
    };
    match input.mode {
        Mode::Agent => agent_built_in(input, catalog),
        Mode::Plan => match input.preset {
            PolicyPreset::Host => lenient_plan_built_in(&HOST_PLAN, input, catalog),
            PolicyPreset::Literal => lenient_plan_built_in(&LITERAL_PLAN, input, catalog),
            PolicyPreset::Explore => lenient_plan_built_in(&EXPLORE_PLAN, input, catalog),
            PolicyPreset::Strict => strict_plan_built_in(input, catalog),
        },
    }
}

/// DESIGN.md "Permission modes", Agent mode; the same under every preset.
fn agent_built_in(input: &AuthorizeInput<'_>, catalog: Catalog) -> Decision {
    let name = input.tool_name;
    let permission = input.permission_mode;
    match catalog {
        Catalog::ReadOnly => allow(PolicyRule::AgentReadOnly),
        Catalog::HostUtility => allow(PolicyRule::AgentHostUtility),
        Catalog::Notes | Catalog::Control => allow(PolicyRule::AgentBookkeeping),
        Catalog::WritesFiles => edits_by_permission(PolicyRule::AgentEditByPermission, input),
        // A subagent may edit files: asked for as an edit would be.
        Catalog::Subagent => edits_by_permission(PolicyRule::AgentSubagentByPermission, input),
        Catalog::Shell => shell_by_permission(
            input,
            PolicyRule::AgentShellReadOnly,
            PolicyRule::AgentShellByPermission,
        ),
        Catalog::Outside(outside) => {
            let rule = match outside {
                Outside::Web => PolicyRule::AgentWebByPermission,
                Outside::External => PolicyRule::AgentExternalByPermission,
                Outside::Mcp => PolicyRule::AgentMcpByPermission,
            };
            ask_unless_auto(rule, name, permission)
        }
        Catalog::EnterPlanMode => alone(PolicyRule::AgentEnterPlan, name, input.batch),
        Catalog::SubmitPlan | Catalog::UpdatePlanDraft => deny(
            PolicyRule::AgentPlanTool,
            DenyCode::PlanModeNotActive,
            format!("{name} needs Plan mode; the session is in Agent mode"),
        ),
    }
}

/// `ask` asks; `accept-edits` and `auto` run it.
fn edits_by_permission(rule: PolicyRule, input: &AuthorizeInput<'_>) -> Decision {
    match input.permission_mode {
        EffectivePermission::Ask => ask(rule, input.tool_name, input.permission_mode),
        EffectivePermission::AcceptEdits | EffectivePermission::Auto => allow(rule),
    }
}

/// Bash by the permission mode, a proven read-only command unasked: `auto` runs it; `ask` and
/// `accept-edits` run a provably read-only command and ask for anything else.
fn shell_by_permission(
    input: &AuthorizeInput<'_>,
    read_only: PolicyRule,
    by_permission: PolicyRule,
) -> Decision {
    let permission = input.permission_mode;
    match permission {
        EffectivePermission::Auto => allow(by_permission),
        EffectivePermission::Ask | EffectivePermission::AcceptEdits => {
            match input.command_safety() {
                CommandSafety::ReadOnly => allow(read_only),
                CommandSafety::MayChangeFiles { reason } => Decision::Ask {
                    rule: by_permission,
                    reason: format!(
                        "permission mode {permission} asks before {} runs a command that may \
                         change files ({reason})",
                        input.tool_name
                    ),
                    default: PermissionDecision::Allow,
                },
            }
        }
    }
}

/// How a lenient preset (`host`, `literal`, `explore`) treats a shell command in Plan mode.
#[derive(Debug, Clone, Copy)]
enum PlanShell {
    /// Decision 11: unasked only when proven read-only; otherwise a person's explicit yes,
    /// Deny first, whatever the permission mode.
    ByProof {
        read_only: PolicyRule,
        may_change: PolicyRule,
    },
    /// As in Agent mode: the permission mode decides, a proven read-only command unasked.
    AsInAgent {
        read_only: PolicyRule,
        by_permission: PolicyRule,
    },
    /// Seed 000 word for word: `auto` runs it, anything else asks.
    ByPermission(PolicyRule),
}

/// How a lenient preset treats, in Plan mode, a tool that reaches outside the workspace
/// through something the host cannot see into: the agent's web tools, an outside service, an
/// MCP server.
#[derive(Debug, Clone, Copy)]
enum PlanThirdParty {
    /// Seed 000 §1: not on Plan's list, denied.
    Denied {
        web: PolicyRule,
        external: PolicyRule,
        mcp: PolicyRule,
    },
    /// Seed 004: only file writers are blocked; the permission mode decides.
    ByPermission {
        web: PolicyRule,
        external: PolicyRule,
        mcp: PolicyRule,
    },
}

/// How a lenient preset treats a subagent in Plan mode.
#[derive(Debug, Clone, Copy)]
enum PlanSubagent {
    /// Always a person's yes: the host cannot prove the agent routes the subagent's own calls
    /// through this gate (Claude Code's hooks do; a subagent may also be started with its own
    /// permission mode), so delegating is asked for, whatever the permission mode.
    Asks(PolicyRule),
    /// The permission mode decides: `auto` runs it, anything else asks.
    ByPermission(PolicyRule),
}

/// The rule ids of one of the presets that share their Plan-mode rules for built-ins.
#[derive(Debug)]
struct LenientRules {
    read_only: PolicyRule,
    host_utility: PolicyRule,
    update_plan_draft: PolicyRule,
    plan_control: PolicyRule,
    bookkeeping: PolicyRule,
    shell: PlanShell,
    third_party: PlanThirdParty,
    subagent: PlanSubagent,
}

const HOST_PLAN: LenientRules = LenientRules {
    read_only: PolicyRule::PlanHostReadOnly,
    host_utility: PolicyRule::PlanHostHostUtility,
    update_plan_draft: PolicyRule::PlanHostUpdatePlanDraft,
    plan_control: PolicyRule::PlanHostPlanControl,
    bookkeeping: PolicyRule::PlanHostBookkeeping,
    shell: PlanShell::ByProof {
        read_only: PolicyRule::PlanHostShellReadOnly,
        may_change: PolicyRule::PlanHostShellMayChange,
    },
    third_party: PlanThirdParty::Denied {
        web: PolicyRule::PlanHostWebDenied,
        external: PolicyRule::PlanHostExternalDenied,
        mcp: PolicyRule::PlanHostMcpDenied,
    },
    subagent: PlanSubagent::Asks(PolicyRule::PlanHostSubagentAsks),
};

const LITERAL_PLAN: LenientRules = LenientRules {
    read_only: PolicyRule::PlanLiteralReadOnly,
    host_utility: PolicyRule::PlanLiteralHostUtility,
    update_plan_draft: PolicyRule::PlanLiteralUpdatePlanDraft,
    plan_control: PolicyRule::PlanLiteralPlanControl,
    bookkeeping: PolicyRule::PlanLiteralBookkeeping,
    shell: PlanShell::ByPermission(PolicyRule::PlanLiteralShellByPermission),
    third_party: PlanThirdParty::Denied {
        web: PolicyRule::PlanLiteralWebDenied,
        external: PolicyRule::PlanLiteralExternalDenied,
        mcp: PolicyRule::PlanLiteralMcpDenied,
    },
    subagent: PlanSubagent::ByPermission(PolicyRule::PlanLiteralSubagentByPermission),
};

const EXPLORE_PLAN: LenientRules = LenientRules {
    read_only: PolicyRule::PlanExploreReadOnly,
    host_utility: PolicyRule::PlanExploreHostUtility,
    update_plan_draft: PolicyRule::PlanExploreUpdatePlanDraft,
    plan_control: PolicyRule::PlanExplorePlanControl,
    bookkeeping: PolicyRule::PlanExploreBookkeeping,
    shell: PlanShell::AsInAgent {
        read_only: PolicyRule::PlanExploreShellReadOnly,
        by_permission: PolicyRule::PlanExploreShellByPermission,
    },
    third_party: PlanThirdParty::ByPermission {
        web: PolicyRule::PlanExploreWebByPermission,
        external: PolicyRule::PlanExploreExternalByPermission,
        mcp: PolicyRule::PlanExploreMcpByPermission,
    },
    subagent: PlanSubagent::ByPermission(PolicyRule::PlanExploreSubagentByPermission),
};

/// Plan under `host` (seed 000 §1 with decision 11), `literal` (seed 000 §1 as written) and
/// `explore`, whose only Plan-mode block on built-ins is the file writers (seed 004 "Contract").
fn lenient_plan_built_in(
    rules: &LenientRules,
    input: &AuthorizeInput<'_>,
    catalog: Catalog,
) -> Decision {
    let name = input.tool_name;
    let permission = input.permission_mode;
    match catalog {
        Catalog::ReadOnly => allow(rules.read_only),
        Catalog::HostUtility => allow(rules.host_utility),
        Catalog::UpdatePlanDraft => allow(rules.update_plan_draft),
        Catalog::Notes | Catalog::Control => allow(rules.bookkeeping),
        Catalog::EnterPlanMode | Catalog::SubmitPlan => {
            alone(rules.plan_control, name, input.batch)
        }
        Catalog::Shell => match rules.shell {
            PlanShell::ByProof {
                read_only,
                may_change,
            } => match input.command_safety() {
                CommandSafety::ReadOnly => allow(read_only),
                CommandSafety::MayChangeFiles { reason } => Decision::Ask {
                    rule: may_change,
                    reason: format!("Plan mode: this command may change files ({reason})"),
                    default: PermissionDecision::Deny,
                },
            },
            PlanShell::AsInAgent {
                read_only,
                by_permission,
            } => shell_by_permission(input, read_only, by_permission),
            PlanShell::ByPermission(rule) => ask_unless_auto(rule, name, permission),
        },
        Catalog::Subagent => match rules.subagent {
            PlanSubagent::Asks(rule) => Decision::Ask {
                rule,
                reason: format!(
                    "Plan mode: {name} delegates to a subagent, which may call any tool; its \
                     own calls are held to Plan mode only where the agent routes them here"
                ),
                default: PermissionDecision::Allow,
            },
            PlanSubagent::ByPermission(rule) => ask_unless_auto(rule, name, permission),
        },
        Catalog::Outside(outside) => match (rules.third_party, outside) {
            (PlanThirdParty::Denied { mcp, .. }, Outside::Mcp) => deny(
                mcp,
                DenyCode::McpDenied,
                format!("{name} is an MCP server's tool; Plan mode denies MCP tools"),
            ),
            (PlanThirdParty::Denied { web, .. }, Outside::Web) => deny(
                web,
                DenyCode::PlanToolDenied,
                format!("{name} reaches the web; this preset denies it in Plan mode"),
            ),
            (PlanThirdParty::Denied { external, .. }, Outside::External) => deny(
                external,
                DenyCode::PlanToolDenied,
                format!("{name} acts through an outside service; Plan mode denies it"),
            ),
            (PlanThirdParty::ByPermission { web, external, mcp }, outside) => {
                let rule = match outside {
                    Outside::Web => web,
                    Outside::External => external,
                    Outside::Mcp => mcp,
                };
                ask_unless_auto(rule, name, permission)
            }
        },
        Catalog::WritesFiles => plan_write_denied(name),
    }
}

/// Plan under `strict`: truly read-only (seed 003 "Read-only enforcement"), plus what the
/// allow-list admits by name and provenance.
fn strict_plan_built_in(input: &AuthorizeInput<'_>, catalog: Catalog) -> Decision {
    let name = input.tool_name;
    let admitted = || {
        input
            .allow_list
            .iter()
            .any(|entry| entry.admits(input.agent, name, input.provenance))
    };
    match catalog {
        Catalog::ReadOnly => allow(PolicyRule::PlanStrictReadOnly),
        Catalog::UpdatePlanDraft => allow(PolicyRule::PlanStrictUpdatePlanDraft),
        Catalog::Notes => allow(PolicyRule::PlanStrictBookkeeping),
        Catalog::Shell => deny(
            PolicyRule::PlanStrictShellDenied,
            DenyCode::PlanShellDenied,
            format!("{name} runs commands; the strict preset blocks shell tools in Plan mode"),
        ),
        Catalog::Outside(Outside::Web) if admitted() => {
            allow(PolicyRule::PlanStrictAllowListedBuiltin)
        }
        Catalog::Outside(Outside::Mcp) if admitted() => allow(PolicyRule::PlanStrictAllowListedMcp),
        Catalog::Outside(Outside::Mcp) => deny(
            PolicyRule::PlanStrictMcpDenied,
            DenyCode::McpDenied,
            format!("{name} is an MCP tool the strict preset's allow-list does not name"),
        ),
        Catalog::HostUtility
        | Catalog::EnterPlanMode
        | Catalog::SubmitPlan
        | Catalog::Control
        | Catalog::Outside(Outside::Web | Outside::External)
        | Catalog::Subagent => deny(
            PolicyRule::PlanStrictNotExposed,
            DenyCode::StrictToolDenied,
            format!("the strict preset does not expose {name} in Plan mode"),
        ),
        Catalog::WritesFiles => plan_write_denied(name),
    }
}

fn extension(input: &AuthorizeInput<'_>, nature: ToolNature, package: &str) -> Decision {
    let name = input.tool_name;
    let permission = input.permission_mode;
    let preset = match input.mode {
        Mode::Agent => {
            return ask_unless_auto(PolicyRule::AgentPluginByPermission, name, permission);
        }
        Mode::Plan => input.preset,
    };
    match preset {
        PolicyPreset::Explore => {
            ask_unless_auto(PolicyRule::PlanExplorePluginByPermission, name, permission)
        }
        PolicyPreset::Literal => deny(
            PolicyRule::PlanLiteralPluginDenied,
            DenyCode::PluginDenied,
            format!("{name} comes from the extension {package:?}; Plan mode denies plugin tools"),
        ),
        PolicyPreset::Host => deny(
            PolicyRule::PlanHostPluginDenied,
            DenyCode::PluginDenied,
            format!("{name} comes from the extension {package:?}; Plan mode denies plugin tools"),
        ),
        PolicyPreset::Strict => {
            if input
                .allow_list
                .iter()
                .any(|entry| entry.admits(input.agent, name, input.provenance))
            {
                return allow(PolicyRule::PlanStrictAllowListedExtension);
            }
            let on_allow_list = input.allow_list.iter().any(|entry| entry.tool == name);
            // A name the agent's catalog gives a built-in (not a web name only an extension
            // provides, not an MCP server's): an extension of that name overrides it.
            let built_in_name = match nature {
                ToolNature::Unknown | ToolNature::ExtensionWeb | ToolNature::Mcp => false,
                ToolNature::ReadsFiles
                | ToolNature::SearchesFiles
                | ToolNature::ChangesFiles
                | ToolNature::RunsCommands
                | ToolNature::RunsSkill
                | ToolNature::CommandControl
                | ToolNature::Web
                | ToolNature::Subagent
                | ToolNature::AsksUser
                | ToolNature::TodoList
                | ToolNature::SessionControl
                | ToolNature::EnterPlan
                | ToolNature::SubmitPlan
                | ToolNature::DraftPlan
                | ToolNature::ReadPlan
                | ToolNature::PublishPlan
                | ToolNature::HostUtility
                | ToolNature::External => true,
            };
            if on_allow_list || built_in_name {
                deny(
                    PolicyRule::PlanStrictSameNamedExtension,
                    DenyCode::ProvenanceMismatch,
                    format!(
                        "{name} from the extension {package:?} is not the trusted tool of that \
                         name; the strict preset blocks it"
                    ),
                )
            } else {
                deny(
                    PolicyRule::PlanStrictPluginDenied,
                    DenyCode::PluginDenied,
                    format!("{name} is not on the strict preset's allow-list"),
                )
            }
        }
    }
}

/// Bash and plugin tools follow the permission mode: only `auto` runs them unasked.
fn ask_unless_auto(rule: PolicyRule, name: &str, permission: EffectivePermission) -> Decision {
    match permission {
        EffectivePermission::Ask | EffectivePermission::AcceptEdits => ask(rule, name, permission),
        EffectivePermission::Auto => allow(rule),
    }
}

/// Seed 000 §3 rule 2: EnterPlanMode and SubmitPlan are each the only call in their batch.
fn alone(rule: PolicyRule, name: &str, batch: BatchPosition) -> Decision {
    if batch.size == 1 && batch.index == 0 {
        allow(rule)
    } else {
        deny(
            rule,
            DenyCode::ToolNotAloneInBatch,
            format!(
                "{name} must be the only tool call in its batch (batch had {})",
                batch.size
            ),
        )
    }
}

fn plan_write_denied(name: &str) -> Decision {
    deny(
        PolicyRule::PlanWriteDenied,
        DenyCode::PlanWriteDenied,
        format!("{name} changes files; Plan mode denies it whatever the permission mode"),
    )
}

fn allow(rule: PolicyRule) -> Decision {
    Decision::Allow { rule }
}

fn ask(rule: PolicyRule, name: &str, permission: EffectivePermission) -> Decision {
    Decision::Ask {
        rule,
        reason: format!("permission mode {permission} asks before {name} runs"),
        default: PermissionDecision::Allow,
    }
}

fn deny(rule: PolicyRule, code: DenyCode, reason: String) -> Decision {
    Decision::Deny { rule, code, reason }
}

/// One tool a client offers, with where it comes from.
#[derive(Debug, Clone, Copy)]
pub struct OfferedTool<'a> {
    /// The tool's name, exactly as the model calls it.
    pub name: &'a str,
    /// Where the client says it comes from.
    pub provenance: &'a ToolProvenance,
}

/// The tools Plan mode makes active under `preset` for a session of `agent` (issue 16: the
/// model sees what it may use): of the tools active before Plan (`baseline`, in its order),
/// those the preset does not deny in Plan by name and provenance, then the host's planning
/// tools the client offers ([`HostTool::PLANNING`]: `update_plan_draft`, `read_plan`, and
/// `SubmitPlan` where the preset admits it). A tool that enters Plan mode is dropped (the
/// session is planning already), and a baseline tool the client does not offer is dropped too
/// (its provenance is unknown). Restoring the exact pre-Plan set on exit is seed 004's drift
/// rule (`tools_to_restore`).
pub fn plan_toolset(
    agent: Agent,
    preset: PolicyPreset,
    baseline: &[String],
    offered: &[OfferedTool<'_>],
) -> Vec<String> {
    let allow_list = default_strict_allow_list();
    let admitted = |tool: &OfferedTool<'_>| {
        let decision = authorize(&AuthorizeInput {
            agent,
            preset,
            mode: Mode::Plan,
            permission_mode: EffectivePermission::Ask,
            tool_name: tool.name,
            provenance: tool.provenance,
            batch: BatchPosition { index: 0, size: 1 },
            allow_list: &allow_list,
            command: None,
            dialect: Dialect::Posix,
            verdict: None,
        });
        !matches!(decision, Decision::Deny { .. })
    };
    let planning = |tool: &OfferedTool<'_>| {
        matches!(tool.provenance, ToolProvenance::BuiltIn)
            && HostTool::PLANNING.iter().any(|t| t.as_str() == tool.name)
    };
    let mut out: Vec<String> = Vec::new();
    let mut push = |name: &str| {
        if !out.iter().any(|n| n == name) {
            out.push(name.to_owned());
        }
    };
    for name in baseline {
        let Some(tool) = offered.iter().find(|t| t.name == name) else {
            continue;
        };
        if agent.classify(name).nature != ToolNature::EnterPlan && admitted(tool) {
            push(name);
        }
    }
    for tool in offered.iter().filter(|t| planning(t) && admitted(t)) {
        push(tool.name);
    }
    out
}

#[cfg(test)]
#[path = "policy_tests.rs"]
mod tests;

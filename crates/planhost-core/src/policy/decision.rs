//! What the policy answers: a [`Decision`] (allow, deny or ask), the [`PolicyRule`] that
//! produced it (a stable id for the audit log) and, for a denial, its [`DenyCode`] (a stable
//! code for the wire).

use serde::Serialize;

use crate::PermissionDecision;

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
        PlanDraftFile = "plan.draft_file",
        PlanWaitingRead = "plan.waiting_read",
        PlanApprovalSurface = "plan.approval_surface",
        PlanScopeEscape = "plan.scope_escape",
        AgentScopeEscapeAsks = "agent.scope_escape_asks",
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
        /// In Plan mode, a command that reaches planhost's approval surfaces (its binary, its
        /// socket, its database, its web token, its page): it would answer a plan. DESIGN
        /// decision 14.
        PlanApprovalSurface = "POLICY_PLAN_APPROVAL_SURFACE",
        /// In Plan mode, a command that starts processes outside planhost's reach
        /// (`systemd-run`, `at`, `crontab`, a terminal multiplexer, `ssh`). DESIGN decision 14.
        ScopeEscape = "POLICY_SCOPE_ESCAPE",
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
            DenyCode::PlanApprovalSurface => E::PolicyPlanApprovalSurface,
            DenyCode::ScopeEscape => E::PolicyScopeEscape,
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

//! Plan mode for built-ins, by preset. `host`, `literal` and `explore` share one shape of rules
//! ([`LenientRules`]) and differ in how they treat a shell, a subagent and the tools that reach
//! outside the workspace; `strict` is truly read-only, plus what its allow-list admits by name
//! and provenance. Every preset denies the file writers.

use crate::{CommandSafety, PermissionDecision};

use super::agent::shell_by_permission;
use super::{
    AuthorizeInput, Catalog, Decision, DenyCode, Outside, PolicyRule, allow, alone,
    ask_unless_auto, deny, plan_write_denied,
};

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
pub(super) struct LenientRules {
    read_only: PolicyRule,
    host_utility: PolicyRule,
    update_plan_draft: PolicyRule,
    plan_control: PolicyRule,
    bookkeeping: PolicyRule,
    shell: PlanShell,
    third_party: PlanThirdParty,
    subagent: PlanSubagent,
}

pub(super) const HOST_PLAN: LenientRules = LenientRules {
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

pub(super) const LITERAL_PLAN: LenientRules = LenientRules {
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

pub(super) const EXPLORE_PLAN: LenientRules = LenientRules {
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
pub(super) fn lenient_plan_built_in(
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
pub(super) fn strict_plan_built_in(input: &AuthorizeInput<'_>, catalog: Catalog) -> Decision {
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

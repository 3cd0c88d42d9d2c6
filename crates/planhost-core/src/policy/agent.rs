//! Agent mode, the same under every preset (DESIGN.md "Permission modes"): reads, notes and
//! control run; file writers and subagents follow the permission mode; a shell command runs
//! unasked under `auto` or when the classifier proves it read-only. [`shell_by_permission`] is
//! also the `explore` preset's shell rule in Plan mode.

use crate::{CommandSafety, PermissionDecision};

use super::{
    AuthorizeInput, Catalog, Decision, DenyCode, EffectivePermission, Outside, PolicyRule, allow,
    alone, ask, ask_unless_auto, deny,
};

/// DESIGN.md "Permission modes", Agent mode; the same under every preset.
pub(super) fn agent_built_in(input: &AuthorizeInput<'_>, catalog: Catalog) -> Decision {
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
pub(super) fn shell_by_permission(
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

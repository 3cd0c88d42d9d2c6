//! Extension tools (plugins), in every mode: Agent mode asks unless the permission mode is
//! `auto`; Plan mode denies them under `host` and `literal`, follows the permission mode under
//! `explore`, and under `strict` runs only what the allow-list admits by name and provenance
//! (an extension named like an allow-listed tool or a built-in is a provenance mismatch).

use crate::{Mode, PolicyPreset, ToolNature};

use super::{AuthorizeInput, Decision, DenyCode, PolicyRule, allow, ask_unless_auto, deny};

pub(super) fn extension(input: &AuthorizeInput<'_>, nature: ToolNature, package: &str) -> Decision {
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

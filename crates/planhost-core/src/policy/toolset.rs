//! The tools Plan mode makes active ([`plan_toolset`], issue 16): the model is offered what
//! the policy would let it use, asked of [`authorize`] tool by tool.

use crate::{Agent, BatchPosition, Dialect, HostTool, Mode, PolicyPreset, ToolNature};

use super::{
    AuthorizeInput, CallFacts, Decision, EffectivePermission, ToolProvenance, authorize,
    default_strict_allow_list,
};

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
            facts: &CallFacts::NONE,
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

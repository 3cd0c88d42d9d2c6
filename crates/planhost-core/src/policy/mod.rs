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
//!
//! # Layout
//!
//! This module holds [`authorize`] and its input, sorts a built-in by what it does, and hands
//! it to the rules of its mode: `agent.rs` (Agent mode), `plan.rs` (Plan mode, by preset);
//! `extension.rs` decides extension tools in every mode. Beside them: `permission.rs`
//! ([`EffectivePermission`]), `provenance.rs` (where a tool comes from, and the strict preset's
//! allow-list), `decision.rs` (what the policy answers: [`Decision`], [`PolicyRule`],
//! [`DenyCode`]), and `toolset.rs`, the tools Plan mode makes active ([`plan_toolset`]).

mod agent;
mod decision;
mod extension;
mod permission;
mod plan;
mod provenance;
mod toolset;

use crate::catalog::names_a_file_writer;
use crate::{
    Agent, BatchPosition, Classified, CommandSafety, Dialect, Mode, NotProven, PermissionDecision,
    PolicyPreset, ToolNature, classify_command,
};

pub use decision::{Decision, DenyCode, PolicyRule};
pub use permission::{EffectivePermission, effective_permission};
pub use provenance::{
    AllowedTool, ToolProvenance, ToolSource, WEB_TOOLS_PACKAGE, default_strict_allow_list,
    source_in_package,
};
pub use toolset::{OfferedTool, plan_toolset};

use agent::agent_built_in;
use extension::extension;
use plan::{EXPLORE_PLAN, HOST_PLAN, LITERAL_PLAN, lenient_plan_built_in, strict_plan_built_in};

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
    /// What the host established about the call beyond its input (on the disk, against its own
    /// paths): [`CallFacts::NONE`] when nothing.
    pub facts: &'a CallFacts,
}

/// Whether a file writer writes the agent's own plan draft.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DraftWrite {
    /// It does not (or nothing was checked).
    #[default]
    No,
    /// It writes the agent's own plan draft, as its profile places it, with nothing on the way
    /// a symlink (checked on the disk by the host): admitted in Plan (`plan.draft_file`).
    AgentsOwnDraft,
}

/// What a shell command reaches beyond the files it reads, as the host established it from the
/// command's words and its own paths.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum CommandReach {
    /// Nothing planhost guards.
    #[default]
    Inside,
    /// One of planhost's approval surfaces (its binary, socket, database, web token, page):
    /// the command could answer a plan. `what` names it for the person.
    ApprovalSurface {
        /// What was found, e.g. "the `planhost` program".
        what: String,
    },
    /// A program that starts processes outside planhost's reach (`systemd-run`, `at`).
    EscapesScope {
        /// The program.
        program: String,
    },
}

/// What the host found of the git a command proven read-only runs (DESIGN decision 15): git
/// runs programs its configuration names, which the host reads before it admits the command.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum GitRisk {
    /// No git, or nothing its configuration names that the run-time rules do not switch off.
    #[default]
    None,
    /// The repository names a program no setting switches off (an external diff).
    NamesProgram {
        /// The key.
        key: String,
        /// The program.
        value: String,
    },
    /// git runs in a directory whose configuration the host cannot read first.
    Elsewhere,
}

/// What the host established about a call beyond its input.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CallFacts {
    /// Whether a file writer writes the agent's own plan draft.
    pub draft: DraftWrite,
    /// What a shell command reaches.
    pub reach: CommandReach,
    /// What the git of a command proven read-only would run.
    pub git: GitRisk,
}

impl CallFacts {
    /// Nothing established.
    pub const NONE: CallFacts = CallFacts {
        draft: DraftWrite::No,
        reach: CommandReach::Inside,
        git: GitRisk::None,
    };
}

impl AuthorizeInput<'_> {
    /// What the classifier proves of the call's command line (computed at most once per
    /// `verdict` cell); no command line is not read-only.
    pub fn command_safety(&self) -> CommandSafety {
        let classify = || match self.command {
            Some(line) => classify_command(line, self.dialect),
            None => CommandSafety::MayChangeFiles {
                reason: NotProven::NoCommandLine,
            },
        };
        let verdict = match self.verdict {
            Some(cell) => cell.get_or_init(classify).clone(),
            None => classify(),
        };
        // A command the classifier proves read-only is read-only in fact only if its git runs
        // nothing the repository names that the run-time rules cannot switch off (DESIGN
        // decision 15): the host read the configuration first.
        match (verdict, &self.facts.git) {
            (CommandSafety::ReadOnly, GitRisk::NamesProgram { key, value }) => {
                CommandSafety::MayChangeFiles {
                    reason: NotProven::GitConfigNamesProgram {
                        key: key.clone(),
                        value: value.clone(),
                    },
                }
            }
            (CommandSafety::ReadOnly, GitRisk::Elsewhere) => CommandSafety::MayChangeFiles {
                reason: NotProven::GitElsewhere,
            },
            (verdict, GitRisk::None | GitRisk::NamesProgram { .. } | GitRisk::Elsewhere) => verdict,
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
        // The agent's own plan draft, which its profile places and the host checked on the
        // disk: the one file an agent writes in Plan (Claude Code hands ExitPlanMode its text).
        Mode::Plan
            if input.facts.draft == DraftWrite::AgentsOwnDraft
                && matches!(input.provenance, ToolProvenance::BuiltIn)
                && input.agent.classify(name).nature == ToolNature::ChangesFiles =>
        {
            return allow(PolicyRule::PlanDraftFile);
        }
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
    if let Catalog::Shell = catalog
        && let Some(decision) = reach(input)
    {
        return decision;
    }
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

/// DESIGN decision 14: in Plan, a command that reaches an approval surface or leaves planhost's
/// reach is denied, not asked, under every preset; in Agent mode a command that leaves its reach
/// is asked unless the permission mode is `auto`.
fn reach(input: &AuthorizeInput<'_>) -> Option<Decision> {
    match (&input.facts.reach, input.mode) {
        (CommandReach::Inside, Mode::Agent | Mode::Plan)
        | (CommandReach::ApprovalSurface { .. }, Mode::Agent) => None,
        (CommandReach::ApprovalSurface { what }, Mode::Plan) => Some(deny(
            PolicyRule::PlanApprovalSurface,
            DenyCode::PlanApprovalSurface,
            format!(
                "this command reaches {what}, which answers plans: in Plan mode planhost denies \
                 it, since it would answer a plan (a person answers with `planhost approve` in \
                 their own terminal, or on the web page)"
            ),
        )),
        (CommandReach::EscapesScope { program }, Mode::Plan) => Some(deny(
            PolicyRule::PlanScopeEscape,
            DenyCode::ScopeEscape,
            format!(
                "`{program}` starts processes outside planhost's reach, where nothing it runs \
                 can be stopped or told apart from a person: Plan mode denies it"
            ),
        )),
        (CommandReach::EscapesScope { program }, Mode::Agent) => match input.permission_mode {
            EffectivePermission::Auto => None,
            EffectivePermission::Ask | EffectivePermission::AcceptEdits => Some(Decision::Ask {
                rule: PolicyRule::AgentScopeEscapeAsks,
                reason: format!(
                    "`{program}` starts processes outside planhost's reach: what it leaves \
                     running is not stopped with the command"
                ),
                default: PermissionDecision::Deny,
            }),
        },
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

#[cfg(test)]
mod tests;

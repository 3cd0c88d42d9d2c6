//! What a tool *is*, per agent: each agent's exact tool names mapped to a [`ToolNature`], as
//! data (DESIGN.md decision 12). The policy decides by nature, never by a name it spells itself,
//! so a tool the session's agent calls `MultiEdit`, `apply_patch` or `replace` is a file writer
//! like `Write`, and a name no table lists is [`ToolNature::Unknown`] (fail closed).
//!
//! Every catalog recognises the host's canonical names ([`HostTool`]) first, with the same
//! nature under every agent: the host's own tools are the host's whoever calls them, and the
//! execute-time re-check of `tools.execute` names them so. Then the agent's own table, then its
//! MCP naming rule. [`Agent::Other`] (an unnamed agent) has no table: only the canonical names.
//!
//! Where each table's names come from is written above it; the names are facts read from the
//! published packages and docs named there, nothing else of them is used.

use std::borrow::Cow;

use crate::{Dialect, HostTool};

wire_enum! {
    #[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
    /// The agent a session serves: whose tool names its calls carry. Stored on the session
    /// (schema v7); `pi` when a client does not say (the only client before agents were named).
    Agent {
        /// pi, through the extension in `integrations/pi`.
        Pi = "pi",
        /// Anthropic's Claude Code.
        ClaudeCode = "claude-code",
        /// OpenAI's Codex CLI.
        Codex = "codex",
        /// Google's Gemini CLI.
        GeminiCli = "gemini-cli",
        /// Any other client: only the host's canonical names are known.
        Other = "other",
    }
}

impl Agent {
    /// The agent of a session whose client did not name one.
    pub const DEFAULT: Agent = Agent::Pi;
}

wire_enum! {
    #[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
    /// What a tool does, whatever its agent calls it. The policy's rules are written per nature.
    ToolNature {
        /// Reads files (or a file-like resource such as an image or the host's docs).
        ReadsFiles = "reads_files",
        /// Lists or searches files.
        SearchesFiles = "searches_files",
        /// Creates, edits, moves or deletes files: denied in Plan under every preset.
        ChangesFiles = "changes_files",
        /// Runs commands: the shell classifier reads the command line where the entry says
        /// where it is; a call without one is never proven read-only.
        RunsCommands = "runs_commands",
        /// Runs a skill or a command file, whose shell lines run before its text reaches the
        /// model (Claude Code's `!` lines): held to the shell's rule, with no line to prove.
        RunsSkill = "runs_skill",
        /// Reads the output of, or stops, a command or task the agent already started.
        CommandControl = "command_control",
        /// Fetches or searches the web, built into the agent.
        Web = "web",
        /// A web tool pi only gets from an extension package (seed 003): a built-in claim for
        /// it is a spoof.
        ExtensionWeb = "extension_web",
        /// Delegates to a subagent, which can itself call any tool.
        Subagent = "subagent",
        /// Asks or tells the person something; changes nothing.
        AsksUser = "asks_user",
        /// The agent's own todo or task list; changes no file.
        TodoList = "todo_list",
        /// The agent's own session state: schedules of its own prompts, goals, tool search,
        /// notifications. Changes no file; whatever it later runs is authorized then.
        SessionControl = "session_control",
        /// Enters Plan mode (seed 000 `EnterPlanMode`).
        EnterPlan = "enter_plan",
        /// Submits the plan for approval (seed 000 `SubmitPlan`, Claude Code's `ExitPlanMode`).
        SubmitPlan = "submit_plan",
        /// Records a plan checkpoint (seed 003 `update_plan_draft`).
        DraftPlan = "draft_plan",
        /// Reads the plan checkpoint back.
        ReadPlan = "read_plan",
        /// Publication as a model tool (seed 003 `create_plan`): never allowed.
        PublishPlan = "publish_plan",
        /// A seed 000 host utility (`CompactContext`, `BrowserPreview`).
        HostUtility = "host_utility",
        /// Acts through a service the host cannot see into (a remote artifact store, a
        /// project-defined command): treated like a plugin.
        External = "external",
        /// A tool of an MCP server, recognised by the agent's MCP naming: denied in Plan unless
        /// a preset admits it by name and server.
        Mcp = "mcp",
        /// No catalog knows it.
        Unknown = "unknown",
    }
}

/// Where a shell tool's command line is in its input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CommandInput {
    /// Nowhere: the call is never proven read-only.
    None,
    /// In the field `name`: a string is a script in `dialect` (`None`: the turn's pinned
    /// shell's), an array of strings is an argv run without a shell (so POSIX-quoted).
    Field {
        /// The input field.
        name: &'static str,
        /// The script's language; `None`: the turn's.
        dialect: Option<Dialect>,
    },
}

/// One tool of a catalog.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CatalogEntry {
    /// The exact name the agent calls it by.
    pub name: &'static str,
    /// What it does.
    pub nature: ToolNature,
    /// Where its command line is (shell tools).
    pub command: CommandInput,
}

/// A name classified under an agent's catalog.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Classified<'a> {
    /// What the tool does.
    pub nature: ToolNature,
    /// Where its command line is.
    pub command: CommandInput,
    /// For an MCP tool named by the agent's convention: its server and its own name.
    pub mcp: Option<McpTool<'a>>,
}

/// An MCP tool's server and name, as the agent's naming spells them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct McpTool<'a> {
    /// The server's name (as configured, normalised by the agent).
    pub server: &'a str,
    /// The tool's name on that server.
    pub tool: &'a str,
}

/// A shell call's command line, ready for the classifier.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandLine<'a> {
    /// The script.
    pub line: Cow<'a, str>,
    /// Its language when the tool fixes it (an argv, Claude Code's `PowerShell`); `None`: the
    /// turn's pinned shell's.
    pub dialect: Option<Dialect>,
}

const fn entry(name: &'static str, nature: ToolNature) -> CatalogEntry {
    CatalogEntry {
        name,
        nature,
        command: CommandInput::None,
    }
}

const fn shell(name: &'static str, field: &'static str, dialect: Option<Dialect>) -> CatalogEntry {
    CatalogEntry {
        name,
        nature: ToolNature::RunsCommands,
        command: CommandInput::Field {
            name: field,
            dialect,
        },
    }
}

use ToolNature as N;

const POSIX: Option<Dialect> = Some(Dialect::Posix);

/// The host's canonical names ([`HostTool`]), known to every agent.
const HOST: &[CatalogEntry] = &[
    entry(HostTool::Read.as_str(), N::ReadsFiles),
    entry(HostTool::Glob.as_str(), N::SearchesFiles),
    entry(HostTool::Grep.as_str(), N::SearchesFiles),
    entry(HostTool::Write.as_str(), N::ChangesFiles),
    entry(HostTool::Edit.as_str(), N::ChangesFiles),
    shell(HostTool::Bash.as_str(), "command", None),
    entry(HostTool::EnterPlanMode.as_str(), N::EnterPlan),
    entry(HostTool::SubmitPlan.as_str(), N::SubmitPlan),
    entry(HostTool::UpdatePlanDraft.as_str(), N::DraftPlan),
    entry(HostTool::ReadPlan.as_str(), N::ReadPlan),
    entry(HostTool::CreatePlan.as_str(), N::PublishPlan),
    entry(HostTool::CompactContext.as_str(), N::HostUtility),
    entry(HostTool::BrowserPreview.as_str(), N::HostUtility),
];

/// pi's built-in tools: `@mariozechner/pi-coding-agent` 0.73.1, `dist/core/tools/*.js`
/// (`read`, `bash`, `edit`, `write`, `grep`, `find`, `ls`; `bash` takes `{command, timeout}`,
/// and the extension sends it to the host as `Bash`). `web_search` and `web_fetch` are the
/// names seed 003 admits only from the `@pithos-kit/web` extension package.
const PI: &[CatalogEntry] = &[
    entry("read", N::ReadsFiles),
    entry("grep", N::SearchesFiles),
    entry("find", N::SearchesFiles),
    entry("ls", N::SearchesFiles),
    entry("write", N::ChangesFiles),
    entry("edit", N::ChangesFiles),
    shell("bash", "command", None),
    entry("web_search", N::ExtensionWeb),
    entry("web_fetch", N::ExtensionWeb),
];

/// Claude Code's built-in tools, as its hooks and permission rules name them: the list of
/// built-in names and the legacy aliases in `@anthropic-ai/claude-agent-sdk` 0.3.328 (which
/// pins Claude Code 2.1.328), and <https://code.claude.com/docs/en/tools-reference>. Names of
/// earlier releases that a hook of an older Claude Code still reports are kept (`Task`,
/// `MultiEdit`, `LS`, `NotebookRead`, `BashOutput`, `KillShell`/`KillBash`, `TaskOutput`,
/// `SlashCommand`, and the renamed MCP resource tools). Inputs from the SDK's `sdk-tools.d.ts`:
/// `Bash`/`PowerShell` `{command, …}`, `Monitor` `{command?, ws?, …}`, `Agent` may set its own
/// permission `mode`. MCP tools are `mcp__<server>__<tool>`.
const CLAUDE_CODE: &[CatalogEntry] = &[
    entry("Read", N::ReadsFiles),
    entry("NotebookRead", N::ReadsFiles),
    entry("Glob", N::SearchesFiles),
    entry("Grep", N::SearchesFiles),
    entry("LS", N::SearchesFiles),
    entry("LSP", N::SearchesFiles),
    entry("Write", N::ChangesFiles),
    entry("Edit", N::ChangesFiles),
    entry("MultiEdit", N::ChangesFiles),
    entry("NotebookEdit", N::ChangesFiles),
    // Creates a git worktree; leaving one may remove it.
    entry("EnterWorktree", N::ChangesFiles),
    entry("ExitWorktree", N::ChangesFiles),
    // Proposals carry edits to skill files.
    entry("propose_skills", N::ChangesFiles),
    shell("Bash", "command", POSIX),
    shell("PowerShell", "command", Some(Dialect::Powershell)),
    shell("Monitor", "command", POSIX),
    entry("Skill", N::RunsSkill),
    entry("SlashCommand", N::RunsSkill),
    entry("BashOutput", N::CommandControl),
    entry("TaskOutput", N::CommandControl),
    entry("TaskStop", N::CommandControl),
    entry("KillShell", N::CommandControl),
    entry("KillBash", N::CommandControl),
    entry("WebFetch", N::Web),
    entry("WebSearch", N::Web),
    entry("Agent", N::Subagent),
    entry("Task", N::Subagent),
    entry("SendMessage", N::Subagent),
    entry("Workflow", N::Subagent),
    entry("AskUserQuestion", N::AsksUser),
    entry("PushNotification", N::AsksUser),
    entry("SendUserMessage", N::AsksUser),
    entry("Brief", N::AsksUser),
    entry("SendUserFile", N::AsksUser),
    entry("ReportFindings", N::AsksUser),
    entry("OfferChromeSetup", N::AsksUser),
    entry("ShareOnboardingGuide", N::AsksUser),
    entry("ShowOnboardingRolePicker", N::AsksUser),
    entry("TodoWrite", N::TodoList),
    entry("TaskCreate", N::TodoList),
    entry("TaskGet", N::TodoList),
    entry("TaskList", N::TodoList),
    entry("TaskUpdate", N::TodoList),
    entry("CronCreate", N::SessionControl),
    entry("CronDelete", N::SessionControl),
    entry("CronList", N::SessionControl),
    entry("ScheduleWakeup", N::SessionControl),
    entry("SetGoal", N::SessionControl),
    entry("ProposeGoal", N::SessionControl),
    entry("ToolSearch", N::SessionControl),
    entry("ListAgents", N::SessionControl),
    entry("ListPeers", N::SessionControl),
    entry("SubagentHandback", N::SessionControl),
    entry("ReadNotifications", N::SessionControl),
    entry("WaitForMcpServers", N::SessionControl),
    entry("EndConversation", N::SessionControl),
    entry("EnterPlanMode", N::EnterPlan),
    entry("ExitPlanMode", N::SubmitPlan),
    entry("ListMcpResourcesTool", N::Mcp),
    entry("ReadMcpResourceTool", N::Mcp),
    entry("ReadMcpResourceDirTool", N::Mcp),
    entry("ListMcpResources", N::Mcp),
    entry("ReadMcpResource", N::Mcp),
    entry("ReadMcpResourceDir", N::Mcp),
    entry("Artifact", N::External),
    entry("ClaudeDesign", N::External),
    entry("Projects", N::External),
    entry("RemoteTrigger", N::External),
    entry("SendFeedback", N::External),
];

/// Codex CLI's tools. Model-facing names: the tool handlers of `@openai/codex` 0.169.0
/// (`exec_command` `{cmd, …}`, `write_stdin`, `apply_patch`, `update_plan`, `view_image`,
/// `request_user_input`, `request_permissions`, `spawn_agent`/`send_input`/`resume_agent`/
/// `wait_agent`/`close_agent`, the MCP resource tools, `tool_search`, `get_context_remaining`,
/// `current_time`) and earlier releases' shell tools in `codex-rs/core/src/tools/spec.rs`
/// (`shell` `{command: [argv…]}`, `shell_command` `{command}`, `local_shell`); `web_search` is
/// the Responses API's hosted search. Hook-facing names (<https://developers.openai.com/codex/hooks>,
/// hooks on by default since 0.124.0): every shell-like call reaches `PreToolUse` as `Bash`
/// with `tool_input.command` (a host canonical name, so known to every catalog),
/// `apply_patch` as itself, MCP tools as `mcp__<server>__<tool>`.
const CODEX: &[CatalogEntry] = &[
    entry("view_image", N::ReadsFiles),
    entry("apply_patch", N::ChangesFiles),
    shell("shell", "command", None),
    shell("shell_command", "command", None),
    shell("local_shell", "command", None),
    shell("exec_command", "cmd", None),
    // Types into a running command: anything it runs is unproven.
    entry("write_stdin", N::RunsCommands),
    entry("web_search", N::Web),
    entry("spawn_agent", N::Subagent),
    entry("send_input", N::Subagent),
    entry("resume_agent", N::Subagent),
    entry("wait_agent", N::CommandControl),
    entry("close_agent", N::CommandControl),
    entry("request_user_input", N::AsksUser),
    entry("request_permissions", N::AsksUser),
    entry("update_plan", N::TodoList),
    entry("tool_search", N::SessionControl),
    entry("get_context_remaining", N::SessionControl),
    entry("current_time", N::SessionControl),
    entry("list_mcp_resources", N::Mcp),
    entry("list_mcp_resource_templates", N::Mcp),
    entry("read_mcp_resource", N::Mcp),
];

/// Gemini CLI's tools: `@google/gemini-cli-core` 0.61.0, `dist/src/tools/tool-names.js`
/// (`ALL_BUILTIN_TOOL_NAMES`, `TOOL_LEGACY_ALIASES`) and `definitions/base-declarations.js`
/// (`run_shell_command` `{command, …}`), the background-shell tools of
/// `shellBackgroundTools.js`, the subagents of `dist/src/agents/` (`codebase_investigator`,
/// `cli_help`, `generalist`, called through `invoke_agent` or by name); `search_file_content`
/// (the legacy name of `grep_search`) and `save_memory` (which appended to `GEMINI.md`) are
/// earlier releases'. MCP tools are `mcp_<server>_<tool>` (`mcp-tool.js`), and tools of the
/// project's discovery command are `discovered_tool_<name>`.
const GEMINI_CLI: &[CatalogEntry] = &[
    entry("read_file", N::ReadsFiles),
    entry("read_many_files", N::ReadsFiles),
    entry("get_internal_docs", N::ReadsFiles),
    // Loads a skill's instructions and lists its folder; runs nothing.
    entry("activate_skill", N::ReadsFiles),
    entry("glob", N::SearchesFiles),
    entry("grep_search", N::SearchesFiles),
    entry("search_file_content", N::SearchesFiles),
    entry("list_directory", N::SearchesFiles),
    entry("write_file", N::ChangesFiles),
    entry("replace", N::ChangesFiles),
    entry("save_memory", N::ChangesFiles),
    shell("run_shell_command", "command", None),
    entry("list_background_processes", N::CommandControl),
    entry("read_background_output", N::CommandControl),
    entry("google_web_search", N::Web),
    entry("web_fetch", N::Web),
    entry("invoke_agent", N::Subagent),
    entry("codebase_investigator", N::Subagent),
    entry("cli_help", N::Subagent),
    entry("generalist", N::Subagent),
    entry("ask_user", N::AsksUser),
    entry("write_todos", N::TodoList),
    entry("tracker_create_task", N::TodoList),
    entry("tracker_update_task", N::TodoList),
    entry("tracker_get_task", N::TodoList),
    entry("tracker_list_tasks", N::TodoList),
    entry("tracker_add_dependency", N::TodoList),
    entry("tracker_visualize", N::TodoList),
    entry("update_topic", N::SessionControl),
    entry("complete_task", N::SessionControl),
    entry("enter_plan_mode", N::EnterPlan),
    entry("exit_plan_mode", N::SubmitPlan),
    entry("list_mcp_resources", N::Mcp),
    entry("read_mcp_resource", N::Mcp),
];

impl Agent {
    /// The agent's own table (the canonical names come first and are not in it).
    pub fn table(self) -> &'static [CatalogEntry] {
        match self {
            Agent::Pi => PI,
            Agent::ClaudeCode => CLAUDE_CODE,
            Agent::Codex => CODEX,
            Agent::GeminiCli => GEMINI_CLI,
            Agent::Other => &[],
        }
    }

    /// The host's canonical names, which every agent knows.
    pub fn host_table() -> &'static [CatalogEntry] {
        HOST
    }

    /// What `name` is under this agent: the canonical names, then the agent's table, then its
    /// MCP naming and name prefixes; anything else is [`ToolNature::Unknown`]. Exact and
    /// case-sensitive: `READ` is not `Read`.
    pub fn classify(self, name: &str) -> Classified<'_> {
        let known = HOST
            .iter()
            .chain(self.table())
            .find(|entry| entry.name == name);
        if let Some(entry) = known {
            return Classified {
                nature: entry.nature,
                command: entry.command,
                mcp: None,
            };
        }
        if let Some(mcp) = self.mcp_tool(name) {
            return Classified {
                nature: ToolNature::Mcp,
                command: CommandInput::None,
                mcp: Some(mcp),
            };
        }
        let nature = match self {
            Agent::GeminiCli if name.starts_with("discovered_tool_") => ToolNature::External,
            Agent::Pi | Agent::ClaudeCode | Agent::Codex | Agent::GeminiCli | Agent::Other => {
                ToolNature::Unknown
            }
        };
        Classified {
            nature,
            command: CommandInput::None,
            mcp: None,
        }
    }

    /// The server and tool of an MCP tool named by this agent's convention: Claude Code and
    /// Codex `mcp__<server>__<tool>`, Gemini CLI `mcp_<server>_<tool>` (its server name is the
    /// part before the first `_`, as Gemini CLI parses it). pi and other agents have none.
    pub fn mcp_tool(self, name: &str) -> Option<McpTool<'_>> {
        let (server, tool) = match self {
            Agent::ClaudeCode | Agent::Codex => name.strip_prefix("mcp__")?.split_once("__")?,
            Agent::GeminiCli => name.strip_prefix("mcp_")?.split_once('_')?,
            Agent::Pi | Agent::Other => return None,
        };
        (!server.is_empty() && !tool.is_empty()).then_some(McpTool { server, tool })
    }

    /// The name this agent gives the tool `tool` of the MCP server `server`, if it has MCP.
    pub fn mcp_name(self, server: &str, tool: &str) -> Option<String> {
        match self {
            Agent::ClaudeCode | Agent::Codex => Some(format!("mcp__{server}__{tool}")),
            Agent::GeminiCli => Some(format!("mcp_{server}_{tool}")),
            Agent::Pi | Agent::Other => None,
        }
    }
}

/// True when some catalog (the host's or any agent's) names a file writer `name`: Plan mode
/// denies such a name whatever its provenance or the session's agent, so an extension or an
/// unknown agent's tool named like a writer never slips through.
pub fn names_a_file_writer(name: &str) -> bool {
    HOST.iter()
        .chain(PI)
        .chain(CLAUDE_CODE)
        .chain(CODEX)
        .chain(GEMINI_CLI)
        .any(|entry| entry.name == name && entry.nature == ToolNature::ChangesFiles)
}

impl CommandInput {
    /// The command line of a call with this `input`, if the entry says where it is and it is
    /// there: a string, or an argv (an array of strings) quoted for POSIX — where an argv is
    /// `bash`/`sh`/`dash` with `-c` or `-lc` and a script, the script itself.
    pub fn command_line<'v>(&self, input: &'v serde_json::Value) -> Option<CommandLine<'v>> {
        let CommandInput::Field { name, dialect } = *self else {
            return None;
        };
        match input.get(name)? {
            serde_json::Value::String(line) => Some(CommandLine {
                line: Cow::Borrowed(line),
                dialect,
            }),
            serde_json::Value::Array(items) => {
                let argv = items
                    .iter()
                    .map(serde_json::Value::as_str)
                    .collect::<Option<Vec<&str>>>()?;
                Some(CommandLine {
                    line: argv_command_line(&argv)?,
                    dialect: Some(Dialect::Posix),
                })
            }
            serde_json::Value::Null
            | serde_json::Value::Bool(_)
            | serde_json::Value::Number(_)
            | serde_json::Value::Object(_) => None,
        }
    }
}

/// An argv as one POSIX command line with the same meaning: `["bash", "-lc", script]` (also
/// `sh`, `dash`, by absolute path too, and `-c`) is `script`; anything else is each argument
/// single-quoted unless it is made only of characters no shell treats specially. `None` for an
/// empty argv.
pub fn argv_command_line<'a>(argv: &[&'a str]) -> Option<Cow<'a, str>> {
    if let [program, flag, script] = argv {
        let base = program.rsplit('/').next().unwrap_or(program);
        if matches!(base, "bash" | "sh" | "dash") && matches!(*flag, "-c" | "-lc") {
            return Some(Cow::Borrowed(script));
        }
    }
    if argv.is_empty() {
        return None;
    }
    let words: Vec<Cow<'_, str>> = argv.iter().map(|word| quote(word)).collect();
    Some(Cow::Owned(words.join(" ")))
}

fn quote(word: &str) -> Cow<'_, str> {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_./:@%+,-".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        Cow::Borrowed(word)
    } else {
        Cow::Owned(format!("'{}'", word.replace('\'', r"'\''")))
    }
}

#[cfg(test)]
#[path = "catalog_tests.rs"]
mod tests;

//! What differs between agents, as data (DESIGN decision 13): how each offers a plan, whether
//! it can ask a person or defer, what happens when its hook fails, where its own plan draft
//! lives, where planhost writes its plans, and who runs its shell. The lifecycle rules
//! ([`super::plan`]) read a profile; they never name an agent.

use crate::Agent;

/// Where planhost writes an agent's plans inside a workspace: `<root>/<submissions>/` holds the
/// immutable submissions, `<root>/<published>/` the published, human-facing plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PlanDirs {
    /// The directory in the workspace root (`.pi`, `.planhost`).
    pub root: &'static str,
    /// Under it, the immutable submissions (`plan`).
    pub submissions: &'static str,
    /// Under it, the published plans (`plans`).
    pub published: &'static str,
}

impl PlanDirs {
    /// pi's, as seeds 000 and 003 name them: `.pi/plan/` and `.pi/plans/`.
    pub const PI: PlanDirs = PlanDirs {
        root: ".pi",
        submissions: "plan",
        published: "plans",
    };

    /// Every other agent's: `.planhost/plan/` and `.planhost/plans/`. planhost's own directory,
    /// not the agent's (a Claude Code user's `.claude/` holds the settings the hooks live in).
    pub const PLANHOST: PlanDirs = PlanDirs {
        root: ".planhost",
        submissions: "plan",
        published: "plans",
    };

    /// Every layout any agent uses, for scans that look at all of them (`plans.orphans`, the
    /// start-up sweep).
    pub const ALL: &'static [PlanDirs] = &[PlanDirs::PI, PlanDirs::PLANHOST];

    /// `<root>/<submissions>/`, the prefix of every submission's relative path.
    pub fn submissions_prefix(self) -> String {
        format!("{}/{}/", self.root, self.submissions)
    }

    /// `<root>/<published>/`, the prefix of every publication's relative path.
    pub fn published_prefix(self) -> String {
        format!("{}/{}/", self.root, self.published)
    }
}

/// How a person is asked about a tool call the policy will not run unasked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AskWay {
    /// The face shows planhost's own dialog and answers through `permissions.resolve` (pi:
    /// Deny first where the policy says so).
    FaceDialog,
    /// The agent's own permission dialog, forced by the hook (Claude Code's `ask`). Only while
    /// a person is at the session; unattended the call is refused, never left to run.
    AgentDialog,
    /// The agent has no way to ask (Codex's hooks cannot): the call is refused with the reason
    /// and a way forward.
    Cannot,
}

/// What the agent does when its hook fails (crashes, times out, prints nothing it can read).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HookFailure {
    /// Not a hook: the face is an extension in the agent's own process (pi).
    NoHook,
    /// The agent blocks the tool (Claude Code with `onFailure: "block"`).
    Blocks,
    /// The agent runs the tool anyway (Codex, whatever the settings say).
    RunsTheTool,
}

/// Who runs the agent's shell commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ShellRoute {
    /// The face runs them through `tools.execute` (pi's extension replaces `bash`).
    HostTool,
    /// The agent runs its own shell, and its hook rewrites each allowed command so that it
    /// runs through planhost (`agent.run`): the host's runner, its scope, its kill, its
    /// environment rules (DESIGN decisions 14 and 15).
    RewriteToHost,
}

/// Where an agent keeps its own plan draft: a file it writes while planning and hands over
/// when it offers the plan (Claude Code's `~/.claude/plans/<slug>.md`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DraftLocation {
    /// The directory, relative to the agent's configuration directory (`plans`).
    pub dir: &'static str,
    /// The file extension, without its dot (`md`).
    pub extension: &'static str,
    /// The field of a file writer's input that names the file (`file_path`).
    pub path_field: &'static str,
}

/// Where an agent's shell tool keeps what planhost needs besides the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ShellInput {
    /// The field holding the command's timeout in milliseconds (Claude Code's `timeout`).
    pub timeout_field: Option<&'static str>,
    /// The field that runs the command in the background (Claude Code's `run_in_background`).
    pub background_field: Option<&'static str>,
}

impl ShellInput {
    /// No fields besides the command line.
    pub const NONE: ShellInput = ShellInput {
        timeout_field: None,
        background_field: None,
    };
}

/// How an agent offers a plan for approval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PlanOffer {
    /// The tool whose call offers the plan (`ExitPlanMode`, `SubmitPlan`); `None`: no tool.
    pub tool: Option<&'static str>,
    /// Whether the tool's *proposal* is the offer (the hook sees only the proposal: Claude
    /// Code's `ExitPlanMode` carries the plan in its input), rather than its execution (pi
    /// runs `SubmitPlan` itself and reports the offer then).
    pub at_proposal: bool,
    /// The input field that holds the plan's Markdown, for an offer at proposal.
    pub markdown_field: Option<&'static str>,
    /// Whether a finished assistant message is searched for a `<proposed_plan>` block
    /// (seed 004).
    pub captures_blocks: bool,
}

/// Everything the lifecycle rules need to know about one agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct AgentProfile {
    /// The agent.
    pub agent: Agent,
    /// Its name, as a person reads it ("Claude Code").
    pub display_name: &'static str,
    /// How it offers a plan.
    pub offer: PlanOffer,
    /// How a person is asked.
    pub ask: AskWay,
    /// Whether an offered plan can be deferred while nobody is at the session (Claude Code's
    /// `defer` under `claude -p`): the run ends with the plan waiting, and a resumed session
    /// asks again.
    pub defers: bool,
    /// What the agent does when its hook fails.
    pub hook_failure: HookFailure,
    /// Where its own plan draft lives, if it keeps one.
    pub draft: Option<DraftLocation>,
    /// Where planhost writes its plans.
    pub dirs: PlanDirs,
    /// Who runs its shell.
    pub shell: ShellRoute,
    /// Whether its events say whether it is in its own plan mode (Claude Code's
    /// `permission_mode: "plan"`). Such a signal may move a session into Plan, never out of it.
    pub signals_plan_mode: bool,
    /// Where its shell tool keeps its timeout and background flag.
    pub shell_input: ShellInput,
    /// The longest a shell command of this agent may run through planhost, in milliseconds
    /// (the agent's own bound: Claude Code's Bash allows 10 minutes).
    pub shell_timeout_max_ms: u64,
    /// How long a shell command runs through planhost when the agent gives no timeout (Claude
    /// Code's own default: 2 minutes).
    pub shell_timeout_default_ms: u64,
    /// What the person does to let the agent go on once a plan is answered.
    pub continue_hint: &'static str,
    /// How the person answers a waiting plan inside the agent itself, besides planhost's CLI
    /// and page (pi's `/plan`); `None` when the agent has no way.
    pub answer_here: Option<&'static str>,
    /// The command that resumes a session the agent deferred (`{session}` is its id), for an
    /// agent that defers.
    pub resume_command: Option<&'static str>,
}

const PI: AgentProfile = AgentProfile {
    agent: Agent::Pi,
    display_name: "pi",
    offer: PlanOffer {
        tool: Some("SubmitPlan"),
        at_proposal: false,
        markdown_field: None,
        captures_blocks: true,
    },
    ask: AskWay::FaceDialog,
    defers: false,
    hook_failure: HookFailure::NoHook,
    draft: None,
    dirs: PlanDirs::PI,
    shell: ShellRoute::HostTool,
    signals_plan_mode: false,
    shell_input: ShellInput::NONE,
    shell_timeout_max_ms: 300_000,
    shell_timeout_default_ms: 60_000,
    continue_hint: "pi goes on by itself",
    answer_here: Some("type /plan to answer it in pi"),
    resume_command: None,
};

const CLAUDE_CODE: AgentProfile = AgentProfile {
    agent: Agent::ClaudeCode,
    display_name: "Claude Code",
    offer: PlanOffer {
        tool: Some("ExitPlanMode"),
        at_proposal: true,
        markdown_field: Some("plan"),
        captures_blocks: false,
    },
    ask: AskWay::AgentDialog,
    defers: true,
    hook_failure: HookFailure::Blocks,
    draft: Some(DraftLocation {
        dir: "plans",
        extension: "md",
        path_field: "file_path",
    }),
    dirs: PlanDirs::PLANHOST,
    shell: ShellRoute::RewriteToHost,
    signals_plan_mode: true,
    shell_input: ShellInput {
        timeout_field: Some("timeout"),
        background_field: Some("run_in_background"),
    },
    shell_timeout_max_ms: 600_000,
    shell_timeout_default_ms: 120_000,
    continue_hint: "then tell Claude to continue",
    answer_here: None,
    resume_command: Some(
        "claude -p --resume {session} --permission-mode plan --permission-prompt-tool stdio",
    ),
};

const CODEX: AgentProfile = AgentProfile {
    agent: Agent::Codex,
    display_name: "Codex",
    offer: PlanOffer {
        tool: None,
        at_proposal: false,
        markdown_field: None,
        captures_blocks: true,
    },
    ask: AskWay::Cannot,
    defers: false,
    hook_failure: HookFailure::RunsTheTool,
    draft: None,
    dirs: PlanDirs::PLANHOST,
    shell: ShellRoute::RewriteToHost,
    signals_plan_mode: true,
    shell_input: ShellInput::NONE,
    shell_timeout_max_ms: 600_000,
    shell_timeout_default_ms: 600_000,
    continue_hint: "then tell Codex to continue",
    answer_here: None,
    resume_command: None,
};

const GEMINI_CLI: AgentProfile = AgentProfile {
    agent: Agent::GeminiCli,
    display_name: "Gemini CLI",
    offer: PlanOffer {
        tool: Some("exit_plan_mode"),
        at_proposal: true,
        markdown_field: None,
        captures_blocks: false,
    },
    ask: AskWay::AgentDialog,
    defers: false,
    hook_failure: HookFailure::RunsTheTool,
    draft: None,
    dirs: PlanDirs::PLANHOST,
    shell: ShellRoute::RewriteToHost,
    signals_plan_mode: true,
    shell_input: ShellInput::NONE,
    shell_timeout_max_ms: 600_000,
    shell_timeout_default_ms: 600_000,
    continue_hint: "then tell Gemini to continue",
    answer_here: None,
    resume_command: None,
};

const OTHER: AgentProfile = AgentProfile {
    agent: Agent::Other,
    display_name: "the agent",
    offer: PlanOffer {
        tool: Some("SubmitPlan"),
        at_proposal: false,
        markdown_field: None,
        captures_blocks: false,
    },
    ask: AskWay::FaceDialog,
    defers: false,
    hook_failure: HookFailure::NoHook,
    draft: None,
    dirs: PlanDirs::PLANHOST,
    shell: ShellRoute::HostTool,
    signals_plan_mode: false,
    shell_input: ShellInput::NONE,
    shell_timeout_max_ms: 300_000,
    shell_timeout_default_ms: 60_000,
    continue_hint: "then let the agent continue",
    answer_here: None,
    resume_command: None,
};

impl Agent {
    /// The agent's profile.
    pub const fn profile(self) -> &'static AgentProfile {
        match self {
            Agent::Pi => &PI,
            Agent::ClaudeCode => &CLAUDE_CODE,
            Agent::Codex => &CODEX,
            Agent::GeminiCli => &GEMINI_CLI,
            Agent::Other => &OTHER,
        }
    }
}

impl AgentProfile {
    /// Whether a proposal of `tool` is this agent's plan offer (the hook sees the offer as a
    /// tool's proposal).
    pub fn offers_at_proposal(&self, tool: &str) -> bool {
        self.offer.at_proposal && self.offer.tool == Some(tool)
    }

    /// Whether `path` is this agent's own plan draft: a file with the draft's extension
    /// directly in `<config_dir>/<draft dir>/`, written with plain components (no `.`, `..` or
    /// repeated separators). Pure: whether anything on the way is a symlink is the caller's
    /// to check on the disk.
    pub fn is_draft_path(&self, config_dir: &str, path: &str) -> bool {
        let Some(draft) = self.draft else {
            return false;
        };
        if !config_dir.starts_with('/') || config_dir.len() < 2 {
            return false;
        }
        let dir = format!("{}/{}", config_dir.trim_end_matches('/'), draft.dir);
        let Some(name) = path
            .strip_prefix(dir.as_str())
            .and_then(|r| r.strip_prefix('/'))
        else {
            return false;
        };
        let plain = |p: &str| {
            p.split('/')
                .skip(1)
                .all(|c| !c.is_empty() && c != "." && c != "..")
        };
        let Some(stem) = name
            .strip_suffix(draft.extension)
            .and_then(|s| s.strip_suffix('.'))
        else {
            return false;
        };
        !stem.is_empty()
            && !name.contains('/')
            && !name.starts_with('.')
            && plain(config_dir.trim_end_matches('/'))
            && !name.contains('\0')
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_agent_has_a_profile_of_its_own() {
        for agent in Agent::ALL {
            assert_eq!(agent.profile().agent, *agent);
        }
        assert_eq!(Agent::Pi.profile().dirs, PlanDirs::PI);
        assert_eq!(Agent::ClaudeCode.profile().dirs, PlanDirs::PLANHOST);
        assert_eq!(PlanDirs::PI.submissions_prefix(), ".pi/plan/");
        assert_eq!(PlanDirs::PLANHOST.published_prefix(), ".planhost/plans/");
    }

    #[test]
    fn the_draft_is_one_file_directly_in_the_plans_directory() {
        let claude = Agent::ClaudeCode.profile();
        let ok = |p: &str| claude.is_draft_path("/home/u/.claude", p);
        assert!(ok("/home/u/.claude/plans/brave-otter.md"));
        assert!(claude.is_draft_path("/home/u/.claude/", "/home/u/.claude/plans/x.md"));
        for bad in [
            "/home/u/.claude/plans/../settings.json",
            "/home/u/.claude/plans/sub/x.md",
            "/home/u/.claude/plans/x.txt",
            "/home/u/.claude/plans/.md",
            "/home/u/.claude/plans/.hidden.md",
            "/home/u/.claude/plans//x.md",
            "/home/u/.claude/plansx/x.md",
            "/home/u/.claude/settings.json",
            "/home/u/.claude/plans/",
            "plans/x.md",
        ] {
            assert!(!ok(bad), "{bad}");
        }
        assert!(!claude.is_draft_path("relative", "relative/plans/x.md"));
        assert!(!claude.is_draft_path("/h/../u", "/h/../u/plans/x.md"));
        assert!(
            !Agent::Pi
                .profile()
                .is_draft_path("/home/u/.claude", "/home/u/.claude/plans/x.md")
        );
    }
}

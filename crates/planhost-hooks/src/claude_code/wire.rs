//! Claude Code's hook wire, typed: what it sends on stdin and what it reads back on stdout
//! (Claude Code 2.1.332, checked by running it: `docs/claude-code.md`). Fields planhost does not
//! read are ignored, so a newer Claude Code that adds fields still decodes.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One hook call's input.
#[derive(Debug, Clone, Deserialize)]
pub struct HookInput {
    /// Claude Code's session id: the host session's external id.
    pub session_id: String,
    /// The working directory of Claude Code's shell.
    pub cwd: PathBuf,
    /// Which event, and its own fields.
    #[serde(flatten)]
    pub event: EventWire,
    /// Claude Code's own permission mode (`default`, `plan`, `acceptEdits`, …).
    #[serde(default)]
    pub permission_mode: Option<String>,
}

/// The events planhost installs hooks for.
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "hook_event_name")]
pub enum EventWire {
    /// A session starts, resumes, was cleared or compacted.
    SessionStart {
        /// `startup`, `resume`, `clear`, `compact` (or `fork`).
        #[serde(default)]
        source: Option<String>,
    },
    /// A person's prompt.
    UserPromptSubmit {},
    /// A tool call is about to run.
    PreToolUse {
        /// The tool.
        tool_name: String,
        /// Its input.
        #[serde(default)]
        tool_input: Value,
        /// The call's id.
        tool_use_id: String,
    },
    /// Claude Code is about to show its own permission dialog.
    PermissionRequest {},
    /// A tool call ran.
    PostToolUse {
        /// The tool.
        tool_name: String,
        /// Its input.
        #[serde(default)]
        tool_input: Value,
        /// The call's id.
        tool_use_id: String,
        /// What it returned.
        #[serde(default)]
        tool_response: Value,
    },
    /// The model's turn ended.
    Stop {},
    /// The session ends.
    SessionEnd {
        /// `clear`, `logout`, `prompt_input_exit`, `other`.
        #[serde(default)]
        reason: Option<String>,
    },
}

impl EventWire {
    /// Whether this event gates a tool call: a failure there must block it.
    pub fn is_gate(&self) -> bool {
        matches!(
            self,
            EventWire::PreToolUse { .. } | EventWire::PermissionRequest {}
        )
    }

    /// The event's name, as Claude Code spells it.
    pub fn name(&self) -> &'static str {
        match self {
            EventWire::SessionStart { .. } => "SessionStart",
            EventWire::UserPromptSubmit {} => "UserPromptSubmit",
            EventWire::PreToolUse { .. } => "PreToolUse",
            EventWire::PermissionRequest {} => "PermissionRequest",
            EventWire::PostToolUse { .. } => "PostToolUse",
            EventWire::Stop {} => "Stop",
            EventWire::SessionEnd { .. } => "SessionEnd",
        }
    }
}

/// What a hook prints on stdout.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HookOutput {
    /// The event's own answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hook_specific_output: Option<SpecificOutput>,
    /// Shown to the person.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub system_message: Option<String>,
}

/// The event's own answer.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "hookEventName")]
pub enum SpecificOutput {
    /// `PreToolUse`: the decision.
    #[serde(rename_all = "camelCase")]
    PreToolUse {
        /// `allow`, `deny`, `ask` or `defer`.
        permission_decision: &'static str,
        /// Why: the model reads a denial's, the person an ask's.
        permission_decision_reason: String,
        /// The input Claude Code runs instead (a shell command routed through planhost).
        #[serde(skip_serializing_if = "Option::is_none")]
        updated_input: Option<Value>,
    },
    /// `UserPromptSubmit`: added to the model's context.
    #[serde(rename_all = "camelCase")]
    UserPromptSubmit {
        /// The context.
        additional_context: String,
    },
    /// `SessionStart`: added to the model's context.
    #[serde(rename_all = "camelCase")]
    SessionStart {
        /// The context.
        additional_context: String,
    },
}

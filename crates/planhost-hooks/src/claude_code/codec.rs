//! Claude Code's codec: its hook input as one agent event, and the host's directive as its hook
//! output. No lifecycle here: the host decides (`agent.event`), this only translates.

use std::path::Path;

use planhost_core::{Agent, AgentMode, DirectiveKind, ErrorCode, SessionEndReason, SessionSource};
use planhost_protocol::{AgentEvent, AgentEventParams, AgentEventResult};
use serde_json::Value;

use super::wire::{EventWire, HookInput, HookOutput, SpecificOutput};
use crate::reply::HookReply;
use crate::route::routed_command;

/// What the hook knows besides the event: Claude Code's environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaudeEnv {
    /// Whether a person is at the session (`CLAUDE_CODE_SESSION_ATTENDED`; `claude -p` sets it
    /// to 0).
    pub attended: bool,
    /// The project directory (`CLAUDE_PROJECT_DIR`): the session's workspace, whatever
    /// directory the shell is in.
    pub project_dir: Option<String>,
    /// Claude Code's configuration directory (`CLAUDE_CONFIG_DIR`, else `~/.claude`).
    pub config_dir: Option<String>,
    /// How the routed command names this hook program (`planhost-hook` when it was found on
    /// `PATH`, else its path).
    pub program: String,
}

impl ClaudeEnv {
    /// From the process environment Claude Code gives its hooks.
    pub fn from_env(program: String) -> Self {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
        Self {
            attended: var("CLAUDE_CODE_SESSION_ATTENDED").is_none_or(|v| v != "0"),
            project_dir: var("CLAUDE_PROJECT_DIR"),
            config_dir: var("CLAUDE_CONFIG_DIR").or_else(|| {
                var("HOME").map(|h| Path::new(&h).join(".claude").display().to_string())
            }),
            program,
        }
    }
}

/// What one hook call becomes: an event for the host, or an answer with no host at all.
#[derive(Debug)]
pub enum Decoded {
    /// Ask the host.
    Event {
        /// The call.
        params: Box<AgentEventParams>,
        /// Whether the hook gates a tool (a failure blocks it).
        gate: bool,
        /// The event's name, for the answer.
        event: &'static str,
        /// The tool call's input as Claude Code sent it (a routed command keeps its fields).
        tool_input: Option<Value>,
        /// The call's id.
        call_id: Option<String>,
    },
    /// Nothing to ask: answer this.
    Reply(HookReply),
}

/// Reads one hook call.
pub fn decode(stdin: &[u8], env: &ClaudeEnv) -> Decoded {
    let input: HookInput = match serde_json::from_slice(stdin) {
        Ok(input) => input,
        Err(e) => {
            // An event planhost installed no hook for says nothing; anything else that cannot be
            // read blocks, as a gate must (without its name the hook cannot tell).
            let name = serde_json::from_slice::<Value>(stdin).ok().and_then(|v| {
                v.get("hook_event_name")
                    .and_then(Value::as_str)
                    .map(str::to_owned)
            });
            if name.as_deref().is_some_and(|n| !KNOWN.contains(&n)) {
                return Decoded::Reply(HookReply::nothing());
            }
            return Decoded::Reply(HookReply::blocked(&format!(
                "planhost could not read this hook call from Claude Code ({e}) [{}]; the tool is \
                 blocked. Check that `planhost setup claude-code` wrote these hooks.",
                ErrorCode::InvalidParams.as_str()
            )));
        }
    };
    let gate = input.event.is_gate();
    let name = input.event.name();
    let agent_mode = input.permission_mode.as_deref().map(|m| {
        if m == "plan" {
            AgentMode::Plan
        } else {
            AgentMode::NotPlan
        }
    });
    let (event, tool_input, call_id) = match input.event {
        EventWire::SessionStart { source } => (
            AgentEvent::SessionStarted {
                source: match source.as_deref() {
                    Some("resume") => SessionSource::Resume,
                    Some("clear") => SessionSource::Clear,
                    Some("compact") => SessionSource::Compact,
                    Some("fork") => SessionSource::Fork,
                    Some(_) | None => SessionSource::Startup,
                },
            },
            None,
            None,
        ),
        EventWire::UserPromptSubmit {} => (
            AgentEvent::PromptSubmitted {
                agent_mode,
                handoff_token: None,
            },
            None,
            None,
        ),
        EventWire::PreToolUse {
            tool_name,
            tool_input,
            tool_use_id,
        } => (
            AgentEvent::ToolProposed {
                call_id: tool_use_id.as_str().into(),
                tool: tool_name,
                input: tool_input.clone(),
                batch_index: None,
                batch_size: None,
                provenance: None,
                cwd: Some(input.cwd.display().to_string()),
            },
            Some(tool_input),
            Some(tool_use_id),
        ),
        // planhost decided in PreToolUse: Claude Code's dialog only appears for a call planhost
        // asked about there, and the person answers it in that dialog.
        EventWire::PermissionRequest {} => return Decoded::Reply(HookReply::nothing()),
        EventWire::PostToolUse {
            tool_name,
            tool_input,
            tool_use_id,
            tool_response,
        } => {
            let is_error = tool_response
                .get("is_error")
                .or_else(|| tool_response.get("isError"))
                .and_then(Value::as_bool)
                .unwrap_or(false);
            (
                AgentEvent::ToolFinished {
                    call_id: tool_use_id.as_str().into(),
                    tool: tool_name,
                    input: Some(tool_input),
                    is_error,
                },
                None,
                None,
            )
        }
        EventWire::Stop {} => (AgentEvent::TurnStopped { aborted: false }, None, None),
        EventWire::SessionEnd { reason } => (
            AgentEvent::SessionEnded {
                reason: Some(match reason.as_deref() {
                    Some("clear") => SessionEndReason::Clear,
                    Some("logout" | "prompt_input_exit") => SessionEndReason::Exit,
                    Some(_) | None => SessionEndReason::Other,
                }),
            },
            None,
            None,
        ),
    };
    let workspace = env
        .project_dir
        .clone()
        .unwrap_or_else(|| input.cwd.display().to_string());
    Decoded::Event {
        params: Box::new(AgentEventParams {
            agent: Agent::ClaudeCode,
            external_session_id: input.session_id,
            workspace_root: workspace,
            attended: env.attended,
            persistence: None,
            branch_path: None,
            agent_config_dir: env.config_dir.clone(),
            event,
        }),
        gate,
        event: name,
        tool_input,
        call_id,
    }
}

/// The events planhost installs hooks for.
const KNOWN: &[&str] = &[
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PermissionRequest",
    "PostToolUse",
    "Stop",
    "SessionEnd",
];

/// The host's answer as Claude Code's hook output.
pub fn encode(
    event: &str,
    result: &AgentEventResult,
    tool_input: Option<&Value>,
    call_id: Option<&str>,
    env: &ClaudeEnv,
) -> HookReply {
    let d = &result.directive;
    let notice = result.notice.as_ref().map(|n| n.text.clone());
    let reason = d.reason.clone().unwrap_or_default();
    let specific = match event {
        "PreToolUse" => {
            let decision = match d.kind {
                DirectiveKind::Allow => Some("allow"),
                DirectiveKind::Deny => Some("deny"),
                DirectiveKind::Ask => Some("ask"),
                DirectiveKind::Defer => Some("defer"),
                DirectiveKind::Proceed => None,
            };
            decision.map(|decision| {
                // What runs is said outright: Claude Code asks its own permission system again
                // for an allow that names no input (ExitPlanMode's plan dialog, `-p`'s prompt
                // tool). A routed shell call runs through planhost (its scope, its timeout, its
                // kill), and the person reads the command as it is inside the rewritten one.
                let updated_input = match (d.kind, d.route_shell, tool_input, call_id) {
                    (DirectiveKind::Allow | DirectiveKind::Ask, true, Some(input), Some(call)) => {
                        routed_input(input, call, &env.program).or_else(|| Some(input.clone()))
                    }
                    (DirectiveKind::Allow | DirectiveKind::Ask, _, Some(input), _) => {
                        Some(input.clone())
                    }
                    (_, _, _, _) => None,
                };
                SpecificOutput::PreToolUse {
                    permission_decision: decision,
                    permission_decision_reason: reason,
                    updated_input,
                }
            })
        }
        "UserPromptSubmit" => result
            .context
            .clone()
            .map(|additional_context| SpecificOutput::UserPromptSubmit { additional_context }),
        "SessionStart" => result
            .context
            .clone()
            .map(|additional_context| SpecificOutput::SessionStart { additional_context }),
        _ => None,
    };
    // A headless run that ends with its plan deferred prints nothing of its own: the person
    // who ran it reads where to answer and how to go on, on Claude Code's stderr (its stdout
    // stays the run's output).
    if d.kind == DirectiveKind::Defer
        && !env.attended
        && let Some(text) = &notice
    {
        super::tell_person(text);
    }
    let out = HookOutput {
        hook_specific_output: specific,
        system_message: notice,
    };
    if out.hook_specific_output.is_none() && out.system_message.is_none() {
        return HookReply::nothing();
    }
    HookReply::json(&out)
}

/// Claude Code's Bash input with the command routed through planhost; `None` when the input
/// has no command.
fn routed_input(input: &Value, call: &str, program: &str) -> Option<Value> {
    let command = input.get("command")?.as_str()?;
    let mut routed = input.clone();
    routed["command"] = Value::String(routed_command(program, call, command));
    Some(routed)
}

/// What a failure tells Claude Code: a gate blocks the tool with planhost's reason and code; a
/// recording event never blocks the person, it says what went wrong.
pub fn failed(gate: bool, code: ErrorCode, message: &str) -> HookReply {
    if gate {
        HookReply::blocked(&format!(
            "planhost blocked this tool call: {message} [{}]",
            code.as_str()
        ))
    } else {
        HookReply::json(&HookOutput {
            hook_specific_output: None,
            system_message: Some(format!(
                "planhost: {message} [{}]. Tool calls stay blocked until planhost answers.",
                code.as_str()
            )),
        })
    }
}

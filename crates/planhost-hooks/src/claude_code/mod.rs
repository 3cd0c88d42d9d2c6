//! Claude Code: its codec (hook wire ⇄ agent events) and its settings.

pub mod codec;
pub mod settings;
pub mod wire;

use planhost_core::ErrorCode;

use crate::process::{Call, Codec, Decoded};
use crate::reply::HookReply;
use codec::ClaudeEnv;

/// Writes `text` where the person who ran Claude Code reads it: Claude Code's own stderr (its
/// process's descriptor 2), else the terminal; nowhere when neither can be opened. Hook output
/// Claude Code keeps to itself under `-p`.
pub(crate) fn tell_person(text: &str) {
    use std::io::Write as _;
    let claude = std::env::var("CLAUDE_PID")
        .ok()
        .and_then(|p| p.trim().parse::<u32>().ok())
        .unwrap_or_else(std::os::unix::process::parent_id);
    let open = |path: &str| fs_err::OpenOptions::new().append(true).open(path).ok();
    if let Some(mut out) = open(&format!("/proc/{claude}/fd/2")).or_else(|| open("/dev/tty")) {
        let _ = writeln!(out, "{text}");
    }
}

/// The connection's client name, as the host records it.
pub const CLIENT_NAME: &str = "planhost-hook-claude-code";

/// Claude Code's codec.
#[derive(Debug, Clone)]
pub struct ClaudeCode {
    /// What the hook knows of Claude Code's environment.
    pub env: ClaudeEnv,
}

impl Codec for ClaudeCode {
    fn client_name(&self) -> &'static str {
        CLIENT_NAME
    }

    /// `CLAUDE_PID`, which Claude Code gives its hooks, else the hook's parent: the host makes
    /// it an agent root, so nothing Claude Code runs can connect as an approver (the host checks
    /// it is an ancestor of this process).
    fn agent_process(&self) -> Option<u32> {
        std::env::var("CLAUDE_PID")
            .ok()
            .and_then(|p| p.trim().parse().ok())
            .or_else(|| Some(std::os::unix::process::parent_id()))
    }

    fn decode(&self, stdin: &[u8]) -> Decoded {
        match codec::decode(stdin, &self.env) {
            codec::Decoded::Reply(reply) => Decoded::Reply(reply),
            codec::Decoded::Event {
                params,
                gate,
                event,
                tool_input,
                call_id,
            } => {
                let env = self.env.clone();
                Decoded::Call(Box::new(Call {
                    params: *params,
                    gate,
                    encode: Box::new(move |result| {
                        codec::encode(event, result, tool_input.as_ref(), call_id.as_deref(), &env)
                    }),
                }))
            }
        }
    }

    fn failed(&self, gate: bool, code: ErrorCode, message: &str) -> HookReply {
        codec::failed(gate, code, message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::process::{HostError, answer};
    use serde_json::json;

    fn claude() -> ClaudeCode {
        ClaudeCode {
            env: ClaudeEnv {
                attended: true,
                project_dir: Some("/w".into()),
                config_dir: Some("/h/.claude".into()),
                program: "planhost-hook".into(),
            },
        }
    }

    fn event(name: &str) -> Vec<u8> {
        json!({
            "session_id": "s", "cwd": "/w/sub", "hook_event_name": name,
            "tool_name": "Write", "tool_use_id": "t1", "tool_input": {},
        })
        .to_string()
        .into_bytes()
    }

    #[test]
    fn bad_input_blocks_a_gate_and_says_why() {
        let reply = answer(&claude(), b"not json", |_| unreachable!("no host is asked"));
        assert_eq!(reply.exit, 2);
        let said = reply.stderr.unwrap_or_default();
        assert!(said.contains("INVALID_PARAMS") && said.contains("planhost setup claude-code"));
        // An event planhost installed no hook for is left alone.
        let other = answer(&claude(), &event("Notification"), |_| unreachable!());
        assert_eq!(other, HookReply::nothing());
    }

    #[test]
    fn no_host_blocks_a_tool_and_only_warns_on_a_prompt() {
        let unreachable = |_: &planhost_protocol::AgentEventParams| {
            Err(HostError {
                code: ErrorCode::HostUnreachable,
                message: "no planhost answers on /x.sock".into(),
            })
        };
        let gate = answer(&claude(), &event("PreToolUse"), unreachable);
        assert_eq!(gate.exit, 2);
        assert!(gate.stderr.unwrap_or_default().contains("HOST_UNREACHABLE"));
        let prompt = answer(&claude(), &event("UserPromptSubmit"), unreachable);
        assert_eq!(prompt.exit, 0);
        assert!(
            prompt
                .stdout
                .unwrap_or_default()
                .contains("HOST_UNREACHABLE")
        );
    }

    #[test]
    fn the_workspace_is_the_project_and_the_mode_is_claudes() {
        let stdin = json!({
            "session_id": "s", "cwd": "/w/sub", "hook_event_name": "UserPromptSubmit",
            "permission_mode": "plan", "prompt": "plan it",
        })
        .to_string();
        let Decoded::Call(call) = claude().decode(stdin.as_bytes()) else {
            panic!("a prompt asks the host");
        };
        assert_eq!(call.params.workspace_root, "/w");
        assert_eq!(call.params.agent_config_dir.as_deref(), Some("/h/.claude"));
        assert!(matches!(
            call.params.event,
            planhost_protocol::AgentEvent::PromptSubmitted {
                agent_mode: Some(planhost_core::AgentMode::Plan),
                ..
            }
        ));
        assert!(!call.gate);
    }
}

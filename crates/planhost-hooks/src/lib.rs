//! planhost for agents that gate their tool calls through hooks: one small process for every
//! hook-based agent ([`process`]: read stdin, decode with the agent's codec, ask the host's
//! `agent.event`, encode the answer, exit), one codec per agent (Claude Code's in
//! [`claude_code`]; Codex and Gemini CLI stand on the same shape), the routed shell command
//! ([`route`]: `planhost-hook run`), and each agent's settings written and removed exactly.
//!
//! A codec holds no lifecycle: what happens is the host's (DESIGN decision 13).

pub mod claude_code;
pub mod process;
pub mod reply;
pub mod route;

pub use process::{Call, Codec, Decoded, HOOK_BINARY, HostError, answer, run};
pub use reply::HookReply;

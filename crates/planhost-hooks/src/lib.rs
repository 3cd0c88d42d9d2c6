//! planhost for agents that gate their tool calls through hooks, one process per hook call:
//! Claude Code first (Codex and Gemini CLI stand on the same shape).
//!
//! - [`claude_code::settings`] writes planhost's hooks into a Claude Code `settings.json` and
//!   takes exactly them out again, keeping every other key, comment and space.

pub mod claude_code;

//! Claude Code.

pub mod hook;
pub mod settings;

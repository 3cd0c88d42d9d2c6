//! Claude Code.

pub mod hook;
pub mod process;
pub mod settings;

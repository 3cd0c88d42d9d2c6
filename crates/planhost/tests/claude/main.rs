#![allow(clippy::unwrap_used, clippy::expect_used)]
//! End-to-end tests that drive the real Claude Code (a pinned version from npm, installed
//! privately on first use, see `planhost_test_support::claude_install`) against the real
//! `planhost` binary, with the hooks `planhost setup claude-code` writes and a scripted
//! Anthropic Messages API on 127.0.0.1. Claude Code runs headless (`claude -p`, stream-json).
//!
//! Pre-install Claude Code (CI): `cargo run -p planhost-test-support --example install_claude`.

mod escape;
mod harness;
mod plans;
mod scenarios;
mod setup;
mod tui;

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::wildcard_enum_match_arm,
    clippy::print_stdout
)]
//! The npm packages as a person meets them: built once by `scripts/npm-pack` (the release
//! binary, `npm pack`), served by a package registry on 127.0.0.1 that holds only them, and
//! installed in a clean HOME whose PATH has node and npm but no cargo and no planhost.
//!
//! - `cli`: `npm install -g` of the launcher tarball, `planhost --version`, `planhost demo`,
//!   exit statuses and signals through the launcher, the packaged binaries stripped and small,
//!   and a clear message (no crash) once the platform package is gone.
//! - `pi`: `pi install npm:pi-planhost`, then one scripted Plan session through real pi with no
//!   `PLANHOST_BIN` and no planhost on PATH (Plan entered, a write denied, the plan approved
//!   from `planhost approve`).
//! - `claude`: `npx planhost setup claude-code`, npx's cache cleared, one real Claude Code tool
//!   call gated by the hook, then an exact uninstall.
//!
//! Not part of `cargo test --workspace` (it builds the release binary, minutes with LTO): run
//! `cargo test -p planhost --test npm`. `PLANHOST_NPM_PACKAGES=DIR` uses packages already made
//! by `scripts/npm-pack DIR` (CI makes them once); otherwise the test runs that script into
//! `<target>/npm-packages` first.

#[allow(dead_code, unused_imports, unused_macros)]
#[path = "../claude/harness.rs"]
mod claude_harness;
#[allow(dead_code, unused_imports, unused_macros)]
#[path = "../pi/harness.rs"]
mod harness;
#[allow(dead_code, unused_imports, unused_macros)]
#[path = "../pi/plan_steps.rs"]
mod plan_steps;

mod claude;
mod clean;
mod cli;
mod pi;

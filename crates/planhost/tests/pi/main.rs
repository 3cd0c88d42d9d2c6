#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::wildcard_enum_match_arm,
    clippy::print_stdout
)]
//! End-to-end tests that drive the real `pi` coding agent (0.73.1 and 1.6.0, each installed
//! privately on first use, see `planhost_test_support::pi_install`) in RPC mode against the real
//! `planhost` binary, with the planhost extension (`integrations/pi`) loaded and a scripted model
//! on 127.0.0.1.
//!
//! - `smoke`: pi alone (no planhost extension) against the scripted model, plus a tiny probe
//!   extension written by the test: proves the install, the RPC driver, dialogs and the model
//!   server.
//! - `scenarios`: the planhost extension's contract (issue 9), every scenario on both versions.
//!   They fail, with a message saying so, until `integrations/pi` is a loadable pi package.
//! - `scenarios_more`: the rest of issue 9 (deadline, capture and publication, stale revision,
//!   host restart, Bash timeout and abort, the `host` preset's ask, `pi -c`, fork).
//!
//! - `unit`: the extension's own unit tests (`integrations/pi/test`, node's test runner).
//!
//! Pre-install pi (CI): `cargo run -p planhost-test-support --example install_pi`.

mod harness;
mod plan_mode;
mod plan_steps;
mod scenarios;
mod scenarios_more;
mod smoke;
mod unit;

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::wildcard_enum_match_arm
)]
//! End-to-end tests: the real `planhost` binary over its real transports (`serve --stdio` and the
//! unix socket) and its CLI. Every host a test starts is killed and reaped when the test ends.

mod asks;
mod authority;
mod cli;
mod cli_text;
mod contract;
mod crash;
mod crash_files;
mod disk_full;
mod errors;
mod faults;
mod flood;
mod flow;
mod host_crash;
mod in_flight;
mod limits;
mod load;
mod notify;
mod peercred;
mod plans;
mod process;
mod restart;
mod robustness;
mod roles;
mod steps;
mod support;

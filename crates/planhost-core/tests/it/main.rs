#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::wildcard_enum_match_arm
)]
//! planhost-core's integration tests: data corpora run through the public API.

mod capture_corpus;
mod plan_command_corpus;

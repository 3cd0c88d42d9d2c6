//! The engine's tests, inside the crate so they keep exercising the engine and its store
//! directly (the store is private to the service): real SQLite files, real workspace
//! directories, a manual clock. They were the integration tests of `planhost-host`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::wildcard_enum_match_arm
)]

mod agent_event;
mod agents;
mod artifact_changed;
mod bad_input;
mod events;
mod fixture;
mod git_row;
#[cfg(target_os = "linux")]
mod peer;
mod plan_and_storage;
mod plans;
mod properties;
mod publication_names;
mod timer;

//! Integration tests: real SQLite files, real workspace directories, a manual clock.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::wildcard_enum_match_arm
)]

mod files;
mod migrations;

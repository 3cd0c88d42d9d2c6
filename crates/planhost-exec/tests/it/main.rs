//! Integration tests for planhost-exec: the real runner against real bash.

// clippy.toml allows these inside #[test] fns only; the shared helpers here are test code too.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::wildcard_enum_match_arm
)]

mod bounds;
mod catalog;
mod memory;
mod stream;
mod support;
mod tree;

//! Integration tests for planhost-fs, against real files in temp dirs.

// clippy.toml allows unwrap only inside #[test] fns; the shared helpers here are test code too.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::wildcard_enum_match_arm
)]

mod artifact;
mod dir;
mod publish;
mod swap_races;
mod validator_props;
mod workspace;

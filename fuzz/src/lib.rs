//! The invariants the five fuzz targets assert, shared so each target is a few lines. They are the
//! same invariants as the property tests (`crates/planhost-protocol/tests/properties.rs`,
//! `crates/planhost-fs/tests/it/validator_props.rs`, `planhost-core`'s `capture_tests.rs`,
//! `plan_command.rs` and `shell_safety/tests/`): a violation panics, which libFuzzer reports as
//! a crash.

pub mod capture;
pub mod decoder;
pub mod paths;
pub mod plan;
pub mod shell;

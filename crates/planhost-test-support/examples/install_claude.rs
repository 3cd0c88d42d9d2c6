//! Installs the Claude Code the end-to-end tests drive (`cargo run -p planhost-test-support
//! --example install_claude`), so CI can do it once before the tests, and prints where it is.

#![allow(clippy::print_stdout)]

use planhost_test_support::{CLAUDE_VERSION, ensure_claude};

fn main() {
    let install = ensure_claude();
    println!("Claude Code {CLAUDE_VERSION}: {}", install.bin.display());
}

//! A command line through the shell classifier (`classify_command`, `command_facts`, and the
//! fast parser against brush-parser): every invariant of `planhost_fuzz::shell::check`.
#![no_main]
// `fuzz_target!` itself writes `RUST_LIBFUZZER_DEBUG_PATH` with `std::fs::File::create`.
#![allow(clippy::disallowed_methods)]

use libfuzzer_sys::fuzz_target;
use planhost_fuzz::shell::check;

fuzz_target!(|data: &[u8]| {
    if let Ok(line) = std::str::from_utf8(data) {
        check(line);
    }
});

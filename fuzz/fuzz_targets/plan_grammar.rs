//! A typed line through `parse_plan_command`: accepted exactly as the independent reference
//! says, every rejection PLAN_COMMAND_INVALID with the help text, surrounding whitespace ignored.
#![no_main]
// `fuzz_target!` itself writes `RUST_LIBFUZZER_DEBUG_PATH` with `std::fs::File::create`.
#![allow(clippy::disallowed_methods)]

use libfuzzer_sys::fuzz_target;
use planhost_fuzz::plan::check;

fuzz_target!(|data: &[u8]| {
    if let Ok(line) = std::str::from_utf8(data) {
        check(line);
    }
});

//! A message through `capture` and the streaming `ProposedPlanParser` (whole and chunked): they
//! agree, every rejection is a CAPTURE_* code at a text block's line, and a captured body is its
//! source slice with line-ending `\r`s dropped.
#![no_main]
// `fuzz_target!` itself writes `RUST_LIBFUZZER_DEBUG_PATH` with `std::fs::File::create`.
#![allow(clippy::disallowed_methods)]

use libfuzzer_sys::fuzz_target;
use planhost_fuzz::capture::{Message, check};

fuzz_target!(|message: Message| {
    check(&message);
});

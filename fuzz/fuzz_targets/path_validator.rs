//! A requested path through `Workspace::resolve` and `resolve_for_write` (a root opened by its
//! real path and one opened through a symlink) and `Name::new`, in a real tree with symlinks
//! inside, outside, dangling and looping: an accepted path is canonical and inside the root; a
//! refused one carries a stable code (FS_PATH_INVALID for empty or NUL, FS_OUTSIDE_WORKSPACE
//! when lexically outside); a write target has no symlink on it.
#![no_main]
// `fuzz_target!` itself writes `RUST_LIBFUZZER_DEBUG_PATH` with `std::fs::File::create`.
#![allow(clippy::disallowed_methods)]

use libfuzzer_sys::fuzz_target;
use planhost_fuzz::paths::{Request, check, fixture};

fuzz_target!(|request: Request| {
    let fx = fixture();
    check(fx, &request.text(fx));
});

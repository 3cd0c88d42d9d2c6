//! Integration tests for planhost-tools, against real files in temp dirs.

// clippy.toml allows unwrap only inside #[test] fns; the shared helpers here are test code too.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::wildcard_enum_match_arm
)]

mod bash;
mod dispatch;
mod edit;
mod errors;
mod glob;
mod grep;
mod paths;
mod read;
mod reserved;
mod wire;
mod write;

use std::path::Path;

use planhost_fs::Workspace;
use planhost_tools::ToolContext;

/// A workspace in a temp dir with `files` written into it.
pub fn workspace(files: &[(&str, &[u8])]) -> (tempfile::TempDir, ToolContext) {
    let tmp = tempfile::tempdir().unwrap();
    for (path, bytes) in files {
        let full = tmp.path().join(path);
        fs_err::create_dir_all(full.parent().unwrap()).unwrap();
        fs_err::write(full, bytes).unwrap();
    }
    let ctx = ToolContext::new(Workspace::new(tmp.path()).unwrap());
    (tmp, ctx)
}

/// Every entry under `root`, relative and sorted, for "nothing else was written" checks.
pub fn listing(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in fs_err::read_dir(&dir).unwrap() {
            let entry = entry.unwrap();
            out.push(
                entry
                    .path()
                    .strip_prefix(root)
                    .unwrap()
                    .display()
                    .to_string(),
            );
            if entry.file_type().unwrap().is_dir() {
                stack.push(entry.path());
            }
        }
    }
    out.sort();
    out
}

/// How long a swap-race test keeps the swapper running (well under CI's patience).
pub const SWAP_RACE_FOR: std::time::Duration = std::time::Duration::from_millis(1500);

/// Outside files a swap-race test plants; every name holds this marker and nothing inside does.
pub const OUTSIDE_MARKER: &str = "OUTSIDE_SECRET";

/// Races `probe` against a swapper that, as fast as it can, exchanges the workspace directory
/// `sub` (a real directory holding `inside.txt`) with `link`, a symlink to an outside directory
/// holding files named with [`OUTSIDE_MARKER`]: by `renameat2(RENAME_EXCHANGE)`, or where the
/// filesystem lacks it by renames (`sub -> parked`, `link -> sub`, `sub -> link`,
/// `parked -> sub`). Runs until `probe` returns `Some(leak)` or [`SWAP_RACE_FOR`]
/// passes; returns the first leak and how many probes ran.
pub fn swap_race(mut probe: impl FnMut(&ToolContext) -> Option<String>) -> (Option<String>, u64) {
    use std::sync::atomic::{AtomicBool, Ordering};

    let (tmp, ctx) = workspace(&[("sub/inside.txt", b"needle inside\n")]);
    let outside = tempfile::tempdir().unwrap();
    for n in 0..20 {
        let name = format!("{OUTSIDE_MARKER}_{n}.txt");
        fs_err::write(outside.path().join(name), b"needle outside\n").unwrap();
    }
    let root = tmp.path().to_path_buf();
    // Siblings of `sub` widen the window between listing the root and entering `sub`.
    for n in 0..200 {
        fs_err::write(root.join(format!("filler_{n}.txt")), b"filler\n").unwrap();
    }
    fs_err::os::unix::fs::symlink(outside.path(), root.join("link")).unwrap();
    let stop = AtomicBool::new(false);
    std::thread::scope(|scope| {
        let swapper = scope.spawn(|| {
            let (sub, link, parked) = (root.join("sub"), root.join("link"), root.join("parked"));
            let exchange = || {
                use rustix::fs::{CWD, RenameFlags, renameat_with};
                renameat_with(CWD, &sub, CWD, &link, RenameFlags::EXCHANGE).is_ok()
            };
            let mut swaps = 0u64;
            while !stop.load(Ordering::Relaxed) {
                // One atomic exchange per swap where the filesystem has it (sub is then a
                // symlink half the time); four plain renames where it does not.
                if !exchange() {
                    fs_err::rename(&sub, &parked).unwrap();
                    fs_err::rename(&link, &sub).unwrap();
                    fs_err::rename(&sub, &link).unwrap();
                    fs_err::rename(&parked, &sub).unwrap();
                }
                swaps += 1;
            }
            // Leave `sub` a real directory, whatever the last exchange did.
            if fs_err::symlink_metadata(&sub).unwrap().is_symlink() {
                assert!(exchange(), "an exchange that worked stopped working");
            }
            swaps
        });
        let deadline = std::time::Instant::now() + SWAP_RACE_FOR;
        let mut probes = 0u64;
        let mut leak = None;
        while leak.is_none() && std::time::Instant::now() < deadline {
            leak = probe(&ctx);
            probes += 1;
        }
        stop.store(true, Ordering::Relaxed);
        let swaps = swapper.join().unwrap();
        assert!(swaps > 0, "the swapper never ran");
        (leak, probes)
    })
}

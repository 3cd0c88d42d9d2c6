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

pub use planhost_test_support::swap::{SWAP_RACE_FOR, snapshot};

/// Outside files a swap-race test plants; every name holds this marker and nothing inside does.
pub const OUTSIDE_MARKER: &str = "OUTSIDE_SECRET";

/// A swap-race fixture: a workspace whose `sub` is a real directory, an outside directory, and
/// `link`, a symlink in the workspace to that outside directory.
#[derive(Debug)]
pub struct SwapFixture {
    /// The workspace root (kept alive for the race).
    pub tmp: tempfile::TempDir,
    /// The outside directory `link` points at.
    pub outside: tempfile::TempDir,
    /// A context on the workspace, outside access denied.
    pub ctx: ToolContext,
}

impl SwapFixture {
    /// `inside` is written under the workspace (`sub/...` paths make `sub`), `outside` under the
    /// outside directory; then `link` is made.
    pub fn new(inside: &[(&str, &[u8])], outside: &[(&str, &[u8])]) -> Self {
        let (tmp, ctx) = workspace(inside);
        let out = tempfile::tempdir().unwrap();
        for (path, bytes) in outside {
            let full = out.path().join(path);
            fs_err::create_dir_all(full.parent().unwrap()).unwrap();
            fs_err::write(full, bytes).unwrap();
        }
        fs_err::os::unix::fs::symlink(out.path(), tmp.path().join("link")).unwrap();
        Self {
            tmp,
            outside: out,
            ctx,
        }
    }

    /// A path in the workspace.
    pub fn inside(&self, relative: &str) -> std::path::PathBuf {
        self.tmp.path().join(relative)
    }

    /// Races `probe` against a swapper exchanging the workspace names `a` and `b` for
    /// [`SWAP_RACE_FOR`]; returns the first leak and how many probes ran.
    pub fn race(
        &self,
        a: &str,
        b: &str,
        mut probe: impl FnMut(&ToolContext) -> Option<String>,
    ) -> (Option<String>, u64) {
        let race = planhost_test_support::swap::swap_race(
            &self.inside(a),
            &self.inside(b),
            SWAP_RACE_FOR,
            || probe(&self.ctx),
        );
        eprintln!(
            "{}: {a} <-> {b}: {} probes, {} swaps",
            std::thread::current().name().unwrap_or("race"),
            race.probes,
            race.swaps
        );
        (race.leak, race.probes)
    }
}

/// Races `probe` (Glob and Grep) against a swapper that, as fast as it can, exchanges the
/// workspace directory `sub` (a real directory holding `inside.txt`) with `link`, a symlink to an
/// outside directory holding files named with [`OUTSIDE_MARKER`] (see
/// [`planhost_test_support::swap::swap_race`]). Runs until `probe` returns `Some(leak)` or
/// [`SWAP_RACE_FOR`] passes; returns the first leak and how many probes ran.
pub fn swap_race(probe: impl FnMut(&ToolContext) -> Option<String>) -> (Option<String>, u64) {
    let names: Vec<String> = (0..20)
        .map(|n| format!("{OUTSIDE_MARKER}_{n}.txt"))
        .collect();
    let outside: Vec<(&str, &[u8])> = names
        .iter()
        .map(|n| (n.as_str(), &b"needle outside\n"[..]))
        .collect();
    let fixture = SwapFixture::new(&[("sub/inside.txt", b"needle inside\n")], &outside);
    // Siblings of `sub` widen the window between listing the root and entering `sub`.
    for n in 0..200 {
        fs_err::write(fixture.inside(&format!("filler_{n}.txt")), b"filler\n").unwrap();
    }
    fixture.race("sub", "link", probe)
}

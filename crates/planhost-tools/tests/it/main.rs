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

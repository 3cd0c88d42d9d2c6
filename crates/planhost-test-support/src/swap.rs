//! Swap races: a thread exchanges two names as fast as it can while the code under test runs
//! again and again, so every window between a check and a use is hit sooner or later.
//!
//! The usual pair is a real directory (or file) inside a workspace and a symlink to an outside
//! one: half the time the inside name is the symlink. [`swap_race`] runs a probe until it reports
//! a leak or [`SWAP_RACE_FOR`] passes, and [`snapshot`] records an outside tree so a probe can
//! tell whether anything there was created or changed.
//!
//! ```
//! use planhost_test_support::swap::{snapshot, swap_race};
//!
//! let tmp = tempfile::tempdir().unwrap();
//! let (real, other) = (tmp.path().join("real"), tmp.path().join("other"));
//! fs_err::create_dir(&real).unwrap();
//! fs_err::create_dir(&other).unwrap();
//! fs_err::write(real.join("f"), b"x").unwrap();
//! let before = snapshot(tmp.path());
//! let race = swap_race(&real, &other, std::time::Duration::from_millis(50), || None);
//! assert_eq!(race.leak, None);
//! assert!(race.swaps > 0 && race.probes > 0);
//! // The swapper leaves `real` as it found it.
//! assert_eq!(snapshot(tmp.path()), before);
//! ```

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How long a swap-race test keeps the swapper running: long enough for thousands of probes,
/// short enough that CI stays fast.
pub const SWAP_RACE_FOR: Duration = Duration::from_millis(1500);

/// What a race did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Race {
    /// The first leak a probe reported, if any.
    pub leak: Option<String>,
    /// How many probes ran.
    pub probes: u64,
    /// How many swaps the swapper made.
    pub swaps: u64,
}

/// Races `probe` against a swapper that exchanges the names `a` and `b` (on one filesystem) as
/// fast as it can: by `renameat2(RENAME_EXCHANGE)`, or where the filesystem lacks it by four
/// renames through a parked name beside `a` (`a -> parked`, `b -> a`, `a -> b`, `parked -> a`).
///
/// Runs until `probe` returns `Some(leak)` or `duration` passes. Afterwards `a` and `b` are
/// exchanged back if the last exchange left them swapped (judged by the inode at `a`; when the
/// code under test replaced either name, they are left as they are).
///
/// # Panics
///
/// When the swapper never swapped, or a fallback rename fails: the race proved nothing.
pub fn swap_race(
    a: &Path,
    b: &Path,
    duration: Duration,
    mut probe: impl FnMut() -> Option<String>,
) -> Race {
    let stop = AtomicBool::new(false);
    let identity = |p: &Path| fs_err::symlink_metadata(p).ok().map(|m| (m.dev(), m.ino()));
    let (a_start, b_start) = (identity(a), identity(b));
    assert!(
        a_start.is_some() && b_start.is_some(),
        "both names must exist before the race"
    );
    std::thread::scope(|scope| {
        let swapper = scope.spawn(|| {
            let parked = parked_name(a);
            let mut swaps = 0u64;
            while !stop.load(Ordering::Relaxed) {
                if !exchange(a, b) {
                    for (from, to) in [(a, parked.as_path()), (b, a), (a, b), (&parked, a)] {
                        fs_err::rename(from, to).unwrap_or_else(|e| panic!("swapping: {e}"));
                    }
                }
                swaps += 1;
            }
            if identity(a) == b_start && identity(b) == a_start {
                assert!(exchange(a, b), "an exchange that worked stopped working");
            }
            swaps
        });
        let deadline = Instant::now() + duration;
        let mut probes = 0u64;
        let mut leak = None;
        while leak.is_none() && Instant::now() < deadline {
            leak = probe();
            probes += 1;
        }
        stop.store(true, Ordering::Relaxed);
        let swaps = swapper
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        assert!(swaps > 0, "the swapper never ran");
        Race {
            leak,
            probes,
            swaps,
        }
    })
}

/// Exchanges `a` and `b` atomically; `false` when the filesystem cannot.
fn exchange(a: &Path, b: &Path) -> bool {
    use rustix::fs::{CWD, RenameFlags, renameat_with};
    renameat_with(CWD, a, CWD, b, RenameFlags::EXCHANGE).is_ok()
}

fn parked_name(a: &Path) -> PathBuf {
    let mut name = a.file_name().unwrap_or_default().to_os_string();
    name.push(".parked");
    a.with_file_name(name)
}

/// Everything under `root`, without following symlinks: each relative path mapped to what it
/// is (`dir`, `file:<bytes as lossy text>`, `symlink:<target>` or `other`). Two snapshots of an
/// outside tree compare equal exactly when nothing was created, removed, renamed or rewritten.
pub fn snapshot(root: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = fs_err::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let relative = path
                .strip_prefix(root)
                .map_or_else(|_| path.display().to_string(), |r| r.display().to_string());
            let Ok(meta) = fs_err::symlink_metadata(&path) else {
                continue;
            };
            let what = if meta.is_symlink() {
                let target = fs_err::read_link(&path).unwrap_or_default();
                format!("symlink:{}", target.display())
            } else if meta.is_dir() {
                stack.push(path);
                "dir".to_owned()
            } else if meta.is_file() {
                let bytes = fs_err::read(entry.path()).unwrap_or_default();
                format!("file:{}", String::from_utf8_lossy(&bytes))
            } else {
                "other".to_owned()
            };
            out.insert(relative, what);
        }
    }
    out
}

//! Durable writes: exclusive create, and staged temp files committed by rename.

use std::io::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::dir::{Dir, Name, Permissions, Replace};
use crate::error::{FsError, Result};

/// Distinguishes temp names made by one process; the pid distinguishes processes.
static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Stale temp names skipped before staging gives up.
const MAX_TEMP_ATTEMPTS: u32 = 64;

/// Prefix of every staged temp name, so stray temps from a crash are recognisable.
pub const TEMP_PREFIX: &str = ".planhost-tmp-";

impl Dir {
    /// Writes `bytes` to the new file `name`: a fsynced temp file renamed onto `name` without
    /// replacing anything (an existing name is `FsError::AlreadyExists`), then `self` fsynced.
    ///
    /// The name never holds a partial file. A failure before the rename leaves nothing; a
    /// directory fsync failure after it is reported, with the complete file in place.
    pub fn write_new(&self, name: Name<'_>, bytes: &[u8], permissions: Permissions) -> Result<()> {
        // Staged, fsynced, then renamed without replacing: the final name only ever holds
        // complete bytes, even when the process dies mid-write (a temp file is all it leaves).
        self.stage(name, bytes, permissions)?
            .commit(Replace::Forbid)
    }

    /// Writes `bytes` to a fresh temp file in this directory, fsynced, ready to be renamed
    /// onto `target`. Dropping the result without committing removes the temp file.
    pub fn stage<'d>(
        &'d self,
        target: Name<'_>,
        bytes: &[u8],
        permissions: Permissions,
    ) -> Result<Staged<'d>> {
        // A crashed run may have left a temp with the same pid and counter (pids repeat in
        // containers): such a name is skipped, never reused or overwritten.
        let mut attempts = 0;
        let temp_name = loop {
            let candidate = format!(
                "{TEMP_PREFIX}{}-{}",
                std::process::id(),
                TEMP_COUNTER.fetch_add(1, Ordering::Relaxed)
            );
            let temp = Name::new(&candidate)?;
            let fill = |f: &mut std::fs::File| {
                fail_point!("fs::write", |_| f
                    .write_all(&bytes[..bytes.len() / 2])
                    .and(Err(injected("fs::write"))));
                f.write_all(bytes)?;
                // `create_file_with` fsyncs the file right after this returns.
                fail_point!("fs::fsync", |_| Err(injected("fs::fsync")));
                Ok(())
            };
            match self.create_file_with(temp, permissions, fill) {
                Ok(_) => break candidate,
                Err(FsError::AlreadyExists { .. }) if attempts < MAX_TEMP_ATTEMPTS => attempts += 1,
                Err(error) => return Err(error),
            }
        };
        Ok(Staged {
            dir: self,
            temp_name,
            target: target.as_str().to_owned(),
            committed: Committed::No,
        })
    }

    /// Atomically replaces (or creates) `name` with `bytes`: temp file, fsync, rename, fsync dir.
    pub fn replace_atomically(
        &self,
        name: Name<'_>,
        bytes: &[u8],
        permissions: Permissions,
    ) -> Result<()> {
        self.stage(name, bytes, permissions)?.commit(Replace::Allow)
    }
}

impl Dir {
    /// Removes the temp files a crashed process left here: names with [`TEMP_PREFIX`] whose
    /// process (`<prefix><pid>-<n>`) is no longer running. A live process's temp is about to be
    /// committed or removed by it, so it is left alone. Returns the names removed.
    pub fn sweep_stale_temps(&self) -> Result<Vec<String>> {
        let mut removed = Vec::new();
        for name in self.entry_names()? {
            let Some(pid) = name
                .strip_prefix(TEMP_PREFIX)
                .and_then(|rest| rest.split('-').next())
                .and_then(|pid| pid.parse::<i32>().ok())
            else {
                continue;
            };
            if process_running(pid) {
                continue;
            }
            match self.remove_file(Name::new(&name)?) {
                Ok(()) | Err(FsError::NotFound { .. }) => removed.push(name),
                Err(e) => return Err(e),
            }
        }
        if !removed.is_empty() {
            self.sync()?;
        }
        Ok(removed)
    }
}

/// Whether a process with this pid exists (a pid that cannot be signalled but exists counts).
fn process_running(pid: i32) -> bool {
    match rustix::process::Pid::from_raw(pid) {
        Some(p) => !matches!(
            rustix::process::test_kill_process(p),
            Err(rustix::io::Errno::SRCH)
        ),
        None => true,
    }
}

/// The error an armed failpoint injects: the disk is full.
#[cfg(feature = "failpoints")]
fn injected(point: &str) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::StorageFull,
        format!("failpoint {point}: no space left on device"),
    )
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Committed {
    No,
    Yes,
}

/// A fully written, fsynced temp file waiting to be renamed onto its target.
///
/// Publication verifies the current target between [`Dir::stage`] and [`Staged::commit`], which
/// keeps the unverifiable window down to the rename itself.
#[derive(Debug)]
pub struct Staged<'d> {
    dir: &'d Dir,
    temp_name: String,
    target: String,
    committed: Committed,
}

impl Staged<'_> {
    /// The temp file's name inside the directory.
    pub fn temp_name(&self) -> &str {
        &self.temp_name
    }

    /// Renames the temp file onto the target, then fsyncs the directory.
    ///
    /// With [`Replace::Forbid`] an existing target (file, directory or symlink) fails with
    /// [`crate::FsError::AlreadyExists`] or [`crate::FsError::Symlink`], and the temp file is removed.
    pub fn commit(mut self, replace: Replace) -> Result<()> {
        let temp = Name::new(&self.temp_name)?;
        let target = Name::new(&self.target)?;
        fail_point!("fs::rename", |_| Err(FsError::io(
            "renameat",
            self.dir.path().join(&self.temp_name),
            injected("fs::rename")
        )));
        self.dir.rename(temp, self.dir, target, replace)?;
        self.committed = Committed::Yes;
        fail_point!("fs::fsync_dir", |_| Err(FsError::io(
            "fsync",
            self.dir.path(),
            injected("fs::fsync_dir")
        )));
        self.dir.sync()
    }
}

impl Drop for Staged<'_> {
    fn drop(&mut self) {
        match self.committed {
            Committed::Yes => {}
            Committed::No => {
                if let Ok(temp) = Name::new(&self.temp_name) {
                    // Best effort: there is no caller left to report to.
                    let _: Result<()> = self.dir.remove_file(temp);
                }
            }
        }
    }
}

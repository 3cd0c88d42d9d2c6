//! One host per state directory: an exclusive `flock` on `planhost.lock`, holding our pid.

use fs_err::os::unix::fs::OpenOptionsExt;
use std::fs::File;
use std::io::{Read, Seek, Write};
use std::path::Path;

use rustix::fs::{FlockOperation, flock};

/// The held lock; released when dropped (or when the process dies, however it dies).
#[derive(Debug)]
pub struct StateLock {
    _file: File,
}

/// Why the lock could not be taken.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// Another live host holds it.
    #[error("another planhost (pid {pid}) is already serving {dir}")]
    Held {
        /// The holder's pid as it wrote it.
        pid: String,
        /// The state directory.
        dir: String,
    },
    /// The lock file could not be opened or written.
    #[error("cannot lock {path}: {source}")]
    Io {
        /// The lock file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
}

impl StateLock {
    /// Takes the lock without waiting.
    pub fn acquire(path: &Path) -> Result<Self, LockError> {
        let io = |source| LockError::Io {
            path: path.display().to_string(),
            source,
        };
        let mut file = fs_err::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .open(path)
            .map_err(io)?
            .into_parts()
            .0;
        if flock(&file, FlockOperation::NonBlockingLockExclusive).is_err() {
            let mut pid = String::new();
            let _ = file.read_to_string(&mut pid);
            let dir = path
                .parent()
                .map(|p| p.display().to_string())
                .unwrap_or_default();
            return Err(LockError::Held {
                pid: pid.trim().to_owned(),
                dir,
            });
        }
        file.set_len(0).map_err(io)?;
        file.rewind().map_err(io)?;
        writeln!(file, "{}", std::process::id()).map_err(io)?;
        file.sync_all().map_err(io)?;
        Ok(Self { _file: file })
    }

    /// Who holds the lock, if anyone (for `planhost doctor`): `Some(pid)` when held.
    pub fn holder(path: &Path) -> Option<String> {
        let mut file = fs_err::File::open(path).ok()?.into_parts().0;
        if flock(&file, FlockOperation::NonBlockingLockShared).is_ok() {
            return None;
        }
        let mut pid = String::new();
        file.read_to_string(&mut pid).ok()?;
        Some(pid.trim().to_owned())
    }
}

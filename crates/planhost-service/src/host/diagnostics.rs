//! What `planhost doctor` checks on this machine without a host: the lock's holder, the shell
//! Bash would run, the SQLite linked in.

use std::path::{Path, PathBuf};

use planhost_core::ErrorCode;

/// Who holds a state directory's lock, if anyone: `Some(pid)` as it wrote it.
pub fn lock_holder(state_dir: &Path) -> Option<String> {
    super::StateLock::holder(&state_dir.join(super::LOCK_FILE))
}

/// The shell Bash would run on this machine with no pin: its id and executable, or the code and
/// message of why there is none.
pub fn effective_shell() -> Result<(String, PathBuf), (ErrorCode, String)> {
    let probes = planhost_exec::probe();
    let platform = planhost_exec::Platform::current();
    planhost_exec::effective_shell(platform, &probes, None)
        .map(|e| (e.id.as_str().to_owned(), e.executable))
        .map_err(|e| (e.code(), e.to_string()))
}

/// The SQLite version linked into this binary.
pub fn sqlite_version() -> &'static str {
    planhost_store::Store::sqlite_version()
}

//! Whether a state directory can be trusted with plans and decisions.

use std::os::unix::fs::DirBuilderExt as _;
use std::path::Path;

/// Why a state directory cannot be trusted with plans and decisions: someone else owns it, or
/// others may write to it (and so swap the database or the lock). `None` when it is sound, or
/// when it does not exist yet.
pub fn state_dir_problem(dir: &Path) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let meta = fs_err::metadata(dir).ok()?;
    let me = rustix::process::geteuid().as_raw();
    if meta.uid() != me {
        return Some(format!(
            "the state directory {} belongs to uid {}, not to this user (uid {me})",
            dir.display(),
            meta.uid()
        ));
    }
    if meta.mode() & 0o022 != 0 {
        return Some(format!(
            "the state directory {} is writable by others (mode {:o}); run `chmod go-w {}`",
            dir.display(),
            meta.mode() & 0o777,
            dir.display()
        ));
    }
    None
}

/// Creates a directory (and its missing parents) readable by this user alone.
#[allow(
    clippy::disallowed_methods,
    reason = "fs-err has no DirBuilder; the caller's error names the path"
)]
pub(crate) fn create_private_dir(path: &Path) -> std::io::Result<()> {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(path)
}

//! Publication of the human-facing plan: `<root>/.pi/plans/<name>.md` (seed 003, "Publication
//! and approval").
//!
//! - **First publication** ([`publish_new`]) stages a fsynced temp file in `.pi/plans/` and
//!   renames it onto the name with `RENAME_NOREPLACE`: the file appears complete or not at all,
//!   and an existing name (file, directory or symlink) is never replaced.
//! - **Updates** ([`publish_update`]) stage the new bytes first, then verify that the name still
//!   holds a regular file whose bytes hash to the last published digest, then rename over it.
//!   Anything else there is a [`PublishError::Conflict`]; nothing is written and the temp file is
//!   removed.
//! - **Status and crash reconciliation** ([`inspect`], [`reconcile`]) read what is on disk
//!   without writing.
//!
//! # Race windows (honest version)
//!
//! This is verify-then-rename, not a compare-and-swap: Linux has no rename that is conditional on
//! the target's content. An external writer that is not cooperating with planhost can still win:
//!
//! - Between the verifying read and the rename, the file can be modified in place, or replaced
//!   by another file or a symlink. The rename then replaces that *name* with the new plan: a
//!   modification made in that gap is lost, and a symlink is replaced as a name — it is never
//!   followed, so its target is untouched. A directory substituted there makes the rename fail
//!   (`EISDIR`), which is reported as a [`ConflictKind::Directory`] conflict.
//! - The verification narrows the gap: after reading, the name is `lstat`ed again and must still
//!   be the inode that was read, so a swap during the read is caught. What remains is the span of
//!   one `fstatat` and one `renameat` system call.
//! - A process that still holds the old file open keeps writing to the old inode after the
//!   rename; those writes do not reach the published name.
//!
//! Durability: the temp file is fsynced before the rename and the directory after it. A crash
//! can leave a stray `.planhost-tmp-*` file in `.pi/plans/` (never at the plan's name).

use std::io::Read as _;
use std::path::{Path, PathBuf};

use planhost_core::PlanDirs;

use crate::atomic::Staged;
use crate::dir::{Dir, EntryKind, FileId, MissingDirs, Name, Permissions, Probe, Replace};
use crate::error::{FsError, WriteFailure};

/// Mode of a first publication (less what the umask takes away): a document the user reads,
/// edits and commits, never group- or world-writable whatever the umask. An update keeps the
/// mode the file has by then (the user's `chmod` stands).
pub const PUBLICATION_MODE: u32 = 0o644;

/// Why a publication call wrote nothing (or, for [`PublishError::WriteFailed`], may not have
/// completed). Every variant leaves no temp file behind.
#[derive(Debug, thiserror::Error)]
pub enum PublishError {
    /// The root is not an absolute existing directory, or the name is not a plain, visible
    /// `*.md` name (or not a generated name, for [`next_name`]). Code `PUBLISH_PATH_INVALID`.
    #[error("invalid publication path: {reason}")]
    PathInvalid {
        /// Why the path was refused.
        reason: String,
    },
    /// `.pi`, `.pi/plans` or (for a first publication) the target is a symlink, dangling or not.
    /// Code `PUBLISH_SYMLINK`.
    #[error("publication path contains a symlink: {}", path.display())]
    Symlink {
        /// The symlink.
        path: PathBuf,
    },
    /// `.pi` or `.pi/plans` exists but is not a directory. Code `PUBLISH_NOT_DIRECTORY`.
    #[error("publication directory is not a directory: {}", path.display())]
    NotDirectory {
        /// The non-directory.
        path: PathBuf,
    },
    /// [`publish_new`] found the name taken at write time. The caller advances the name
    /// ([`next_name`]), revokes approval and asks again. Code `PUBLISH_COLLISION`.
    #[error("published plan name is already taken: {}", path.display())]
    Collision {
        /// The existing target.
        path: PathBuf,
    },
    /// [`publish_update`] found the target not at the base digest; nothing was written.
    /// Code `PUBLISH_CONFLICT`.
    #[error("published plan changed on disk ({kind:?}): {}", path.display())]
    Conflict {
        /// What was found instead of the base bytes.
        kind: ConflictKind,
        /// The published path.
        path: PathBuf,
    },
    /// An I/O failure. If it happened after the rename (the directory fsync), the new bytes
    /// may be in place: call [`reconcile`] before retrying. Code `PUBLISH_WRITE_FAILED`.
    #[error("publication write failed: {source}")]
    WriteFailed {
        /// The underlying failure.
        #[source]
        source: FsError,
    },
}

impl PublishError {
    /// The stable wire code.
    pub fn code(&self) -> planhost_core::ErrorCode {
        match self {
            Self::PathInvalid { .. } => planhost_core::ErrorCode::PublishPathInvalid,
            Self::Symlink { .. } => planhost_core::ErrorCode::PublishSymlink,
            Self::NotDirectory { .. } => planhost_core::ErrorCode::PublishNotDirectory,
            Self::Collision { .. } => planhost_core::ErrorCode::PublishCollision,
            Self::Conflict { .. } => planhost_core::ErrorCode::PublishConflict,
            Self::WriteFailed { .. } => planhost_core::ErrorCode::PublishWriteFailed,
        }
    }

    /// The conflict kind, for [`PublishError::Conflict`] only.
    pub fn conflict_kind(&self) -> Option<ConflictKind> {
        match self {
            Self::Conflict { kind, .. } => Some(*kind),
            Self::PathInvalid { .. }
            | Self::Symlink { .. }
            | Self::NotDirectory { .. }
            | Self::Collision { .. }
            | Self::WriteFailed { .. } => None,
        }
    }
}

impl From<FsError> for PublishError {
    fn from(e: FsError) -> Self {
        match WriteFailure::from(e) {
            WriteFailure::Symlink(path) => Self::Symlink { path },
            WriteFailure::NotDirectory(path) => Self::NotDirectory { path },
            WriteFailure::Collision(path) => Self::Collision { path },
            WriteFailure::PathInvalid(reason) => Self::PathInvalid { reason },
            WriteFailure::Write(source) => Self::WriteFailed { source },
        }
    }
}

/// What an update found at the published path instead of the base bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConflictKind {
    /// A regular file whose bytes do not hash to the base digest (or a different file swapped in).
    Modified,
    /// Nothing: the file (or `.pi/plans`) is gone.
    Deleted,
    /// A symlink, dangling or not.
    Symlink,
    /// A directory.
    Directory,
    /// A FIFO, socket or device.
    NotRegular,
}

/// Whether a name is free for a first publication, as seen by [`preflight`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Preflight {
    /// Nothing exists at the name (possibly because `.pi` or `.pi/plans` does not exist yet).
    Free,
    /// A file or directory exists at the name: pick the next name before asking approval.
    Taken,
}

/// What a publication call did to the disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// [`publish_new`] created the file.
    Created,
    /// [`publish_update`] replaced the file.
    Replaced,
    /// [`publish_update`] verified that the disk already holds these bytes and wrote nothing.
    Unchanged,
}

/// A completed publication: the identity the store records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Published {
    /// `.pi/plans/<file_name>`, `/`-separated, relative to the workspace root.
    pub relative_path: String,
    /// Lowercase hex SHA-256 of the exact bytes now at that path.
    pub sha256: String,
    /// Their length.
    pub size_bytes: u64,
    /// Whether this call created, replaced or left the file.
    pub change: Change,
}

/// What a non-regular entry at the published name is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Occupant {
    /// A symlink, dangling or not (never followed).
    Symlink,
    /// A directory.
    Directory,
    /// A FIFO, socket or device.
    Other,
}

/// What is at the published path now, read without following symlinks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OnDisk {
    /// Nothing (including a missing `.pi` or `.pi/plans`).
    Missing,
    /// A regular file with these bytes.
    File {
        /// Lowercase hex SHA-256 of its bytes.
        sha256: String,
        /// Its length, read up to one byte past the largest plan (a larger file stops there).
        size: u64,
    },
    /// Something that is not a regular file.
    NotAFile(Occupant),
}

/// The outcome of checking an approved publication after a restart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reconciled {
    /// The disk holds the expected bytes: the write completed; do not repeat it.
    AlreadyWritten,
    /// The disk holds the base bytes (or, for a first publication, nothing): safe to retry.
    NotWritten,
    /// Neither: an external change. For a first publication (no base) this means something
    /// else occupies the name; treat it as a collision.
    Conflict(ConflictKind),
}

/// Validates what exists of `.pi` and `.pi/plans` without creating anything, and reports whether
/// `file_name` is free.
///
/// A symlinked `.pi`, `.pi/plans` or target is refused with [`PublishError::Symlink`]; a
/// non-directory `.pi` or `.pi/plans` with [`PublishError::NotDirectory`].
pub fn preflight(
    workspace_root: &Path,
    dirs: PlanDirs,
    file_name: &str,
) -> Result<Preflight, PublishError> {
    let name = validate_file_name(file_name)?;
    let Some(plans) = probe_plans(workspace_root, dirs)? else {
        return Ok(Preflight::Free);
    };
    match plans.kind_of(name)? {
        None => Ok(Preflight::Free),
        Some(EntryKind::Symlink) => Err(PublishError::Symlink {
            path: plans.path().join(file_name),
        }),
        Some(EntryKind::File | EntryKind::Directory | EntryKind::Other) => Ok(Preflight::Taken),
    }
}

/// First publication: creates `.pi` and `.pi/plans` one at a time when missing, then creates
/// `file_name` exclusively with exactly `bytes` (temp file, fsync, `RENAME_NOREPLACE`, fsync
/// the directory).
///
/// An existing name is never replaced: [`PublishError::Collision`] (or
/// [`PublishError::Symlink`] for a symlink). On failure, directories this call created are
/// removed again.
pub fn publish_new(
    workspace_root: &Path,
    dirs: PlanDirs,
    file_name: &str,
    bytes: &[u8],
) -> Result<Published, PublishError> {
    let name = validate_file_name(file_name)?;
    let root = open_root(workspace_root)?;
    let names = plans_names(dirs)?;
    let walked = root
        .walk(&names, MissingDirs::Create)
        .map_err(directory_error)?;
    let created = create_exclusive(&walked.dir, name, bytes);
    if created.is_err() {
        root.undo_created(&names, walked.created_from);
    }
    created?;
    Ok(published(dirs, file_name, bytes, Change::Created))
}

/// Updates the published file in place: stages a temp file, verifies that the name still holds
/// a regular file whose bytes hash to `base_sha256`, then renames the temp file over it and
/// fsyncs the directory. The file's permission bits are kept.
///
/// When `bytes` already hash to `base_sha256`, the disk is verified and nothing is written
/// ([`Change::Unchanged`]). Anything other than the base bytes at the name — or a missing
/// `.pi/plans` — is a [`PublishError::Conflict`]: nothing is overwritten and the temp file is
/// removed. If the new bytes may already be on disk (a crash after the rename), call
/// [`reconcile`] first: this function reports that as a conflict. See the module docs for the
/// remaining race window.
pub fn publish_update(
    workspace_root: &Path,
    dirs: PlanDirs,
    file_name: &str,
    bytes: &[u8],
    base_sha256: &str,
) -> Result<Published, PublishError> {
    let name = validate_file_name(file_name)?;
    let Some(plans) = probe_plans(workspace_root, dirs)? else {
        return Err(conflict(
            ConflictKind::Deleted,
            workspace_root,
            dirs,
            file_name,
        ));
    };
    let target = plans.path().join(file_name);
    let digest = planhost_core::sha256_hex(bytes);
    if digest.eq_ignore_ascii_case(base_sha256) {
        verify_base(&plans, name, base_sha256)?;
        return Ok(published(dirs, file_name, bytes, Change::Unchanged));
    }
    // Checked before staging so a plain conflict creates no temp file at all.
    let mode = match plans.entry(name)? {
        Some(entry) => match entry.kind {
            EntryKind::File => entry.permissions & 0o777,
            EntryKind::Directory | EntryKind::Symlink | EntryKind::Other => {
                return Err(conflict_at(kind_conflict(entry.kind), target));
            }
        },
        None => return Err(conflict_at(ConflictKind::Deleted, target)),
    };
    let staged: Staged<'_> = plans
        .stage(name, bytes, Permissions::Exact(mode))
        .map_err(write_failed)?;
    // On a conflict `staged` is dropped here, which removes the temp file.
    verify_base(&plans, name, base_sha256)?;
    staged
        .commit(Replace::Allow)
        .map_err(|e| match plans.kind_of(name) {
            // A directory swapped in after verification: rename(2) refuses with EISDIR.
            Ok(Some(EntryKind::Directory)) => conflict_at(ConflictKind::Directory, target),
            Ok(Some(EntryKind::File | EntryKind::Symlink | EntryKind::Other) | None) | Err(_) => {
                PublishError::WriteFailed { source: e }
            }
        })?;
    Ok(published(dirs, file_name, bytes, Change::Replaced))
}

/// Reports what is at `.pi/plans/<file_name>` now, without following symlinks and without
/// writing, for `/plan status` (synced, dirty, conflict) and for [`reconcile`].
///
/// A symlinked or non-directory `.pi` or `.pi/plans` is an error, as in [`preflight`].
pub fn inspect(
    workspace_root: &Path,
    dirs: PlanDirs,
    file_name: &str,
) -> Result<OnDisk, PublishError> {
    let name = validate_file_name(file_name)?;
    let Some(plans) = probe_plans(workspace_root, dirs)? else {
        return Ok(OnDisk::Missing);
    };
    match read_regular(&plans, name) {
        Ok((bytes, _)) => Ok(OnDisk::File {
            sha256: planhost_core::sha256_hex(&bytes),
            size: bytes.len() as u64,
        }),
        Err(FsError::NotFound { .. }) => Ok(OnDisk::Missing),
        Err(FsError::Symlink { .. }) => Ok(OnDisk::NotAFile(Occupant::Symlink)),
        Err(FsError::IsDirectory { .. }) => Ok(OnDisk::NotAFile(Occupant::Directory)),
        Err(FsError::NotRegularFile { .. }) => Ok(OnDisk::NotAFile(Occupant::Other)),
        Err(
            e @ (FsError::InvalidName { .. }
            | FsError::InvalidPath { .. }
            | FsError::NotDirectory { .. }
            | FsError::AlreadyExists { .. }
            | FsError::OutsideWorkspace { .. }
            | FsError::SymlinkEscape { .. }
            | FsError::NonUtf8 { .. }
            | FsError::Io { .. }),
        ) => Err(e.into()),
    }
}

/// Decides, after a restart, whether an approved publication of `expected_sha256` over
/// `base_sha256` (`None` for a first publication) already completed.
pub fn reconcile(
    workspace_root: &Path,
    dirs: PlanDirs,
    file_name: &str,
    expected_sha256: &str,
    base_sha256: Option<&str>,
) -> Result<Reconciled, PublishError> {
    Ok(match inspect(workspace_root, dirs, file_name)? {
        OnDisk::File { sha256, .. } if sha256.eq_ignore_ascii_case(expected_sha256) => {
            Reconciled::AlreadyWritten
        }
        OnDisk::File { sha256, .. } => match base_sha256 {
            Some(base) if sha256.eq_ignore_ascii_case(base) => Reconciled::NotWritten,
            Some(_) | None => Reconciled::Conflict(ConflictKind::Modified),
        },
        OnDisk::Missing => match base_sha256 {
            None => Reconciled::NotWritten,
            Some(_) => Reconciled::Conflict(ConflictKind::Deleted),
        },
        OnDisk::NotAFile(occupant) => Reconciled::Conflict(match occupant {
            Occupant::Symlink => ConflictKind::Symlink,
            Occupant::Directory => ConflictKind::Directory,
            Occupant::Other => ConflictKind::NotRegular,
        }),
    })
}

fn plans_names(dirs: PlanDirs) -> Result<[Name<'static>; 2], PublishError> {
    Ok([Name::new(dirs.root)?, Name::new(dirs.published)?])
}

fn open_root(workspace_root: &Path) -> Result<Dir, PublishError> {
    let invalid = |why: &str| PublishError::PathInvalid {
        reason: format!("workspace root {} {why}", workspace_root.display()),
    };
    if !workspace_root.is_absolute() {
        return Err(invalid("is not absolute"));
    }
    Dir::open_anchor(workspace_root).map_err(|e| match e {
        FsError::NotFound { .. } | FsError::NotDirectory { .. } => {
            invalid("is not an existing directory")
        }
        other @ (FsError::InvalidName { .. }
        | FsError::InvalidPath { .. }
        | FsError::Symlink { .. }
        | FsError::IsDirectory { .. }
        | FsError::NotRegularFile { .. }
        | FsError::AlreadyExists { .. }
        | FsError::OutsideWorkspace { .. }
        | FsError::SymlinkEscape { .. }
        | FsError::NonUtf8 { .. }
        | FsError::Io { .. }) => other.into(),
    })
}

/// Opens `.pi/plans` without creating anything; `None` when it (or `.pi`) does not exist.
fn probe_plans(workspace_root: &Path, dirs: PlanDirs) -> Result<Option<Dir>, PublishError> {
    let root = open_root(workspace_root)?;
    match root.probe(&plans_names(dirs)?).map_err(directory_error)? {
        Probe::Complete(dir) => Ok(Some(dir)),
        Probe::MissingFrom { .. } => Ok(None),
    }
}

/// On the way to `.pi/plans`, a FIFO or device is just another non-directory.
fn directory_error(e: FsError) -> PublishError {
    match e {
        FsError::NotRegularFile { path } => PublishError::NotDirectory { path },
        other @ (FsError::InvalidName { .. }
        | FsError::InvalidPath { .. }
        | FsError::NotFound { .. }
        | FsError::Symlink { .. }
        | FsError::NotDirectory { .. }
        | FsError::IsDirectory { .. }
        | FsError::AlreadyExists { .. }
        | FsError::OutsideWorkspace { .. }
        | FsError::SymlinkEscape { .. }
        | FsError::NonUtf8 { .. }
        | FsError::Io { .. }) => other.into(),
    }
}

/// Stages and renames without replacing (`RENAME_NOREPLACE`, or a hard link where the filesystem
/// lacks that flag): the name only ever holds complete bytes.
fn create_exclusive(plans: &Dir, name: Name<'_>, bytes: &[u8]) -> Result<(), PublishError> {
    // A failure to stage is never a collision at the plan's name, whatever the temp name hit.
    let staged = plans
        .stage(name, bytes, Permissions::AtMost(PUBLICATION_MODE))
        .map_err(write_failed)?;
    Ok(staged.commit(Replace::Forbid)?)
}

fn write_failed(source: FsError) -> PublishError {
    PublishError::WriteFailed { source }
}

/// Opens `name` (regular files only, never following), reads it, and returns its bytes with the
/// identity of the inode read. At most one byte more than the largest plan is read: a file
/// planted larger than any plan can never hash to a published digest, so it reads as modified
/// without the host reading gigabytes (or running out of memory) to find that out.
fn read_regular(plans: &Dir, name: Name<'_>) -> Result<(Vec<u8>, FileId), FsError> {
    let path = plans.path().join(name.as_str());
    let file = plans.open_file(name)?;
    let id = FileId::of_file(&file, &path)?;
    let mut bytes = Vec::new();
    let cap = planhost_core::MAX_PLAN_BYTES as u64 + 1;
    file.take(cap)
        .read_to_end(&mut bytes)
        .map_err(|e| FsError::io("read", &path, e))?;
    Ok((bytes, id))
}

/// Succeeds only if `name` is a regular file whose bytes hash to `base`, and the name still
/// refers to that same inode after the read.
fn verify_base(plans: &Dir, name: Name<'_>, base: &str) -> Result<(), PublishError> {
    let target = plans.path().join(name.as_str());
    let (bytes, read_id) = match read_regular(plans, name) {
        Ok(read) => read,
        Err(e) => return Err(conflict_at(open_conflict(e)?, target)),
    };
    if !planhost_core::sha256_hex(&bytes).eq_ignore_ascii_case(base) {
        return Err(conflict_at(ConflictKind::Modified, target));
    }
    if plans.file_id(name)? == Some(read_id) {
        return Ok(());
    }
    // Swapped during the read: report what is there now.
    let kind = match plans.kind_of(name)? {
        None => ConflictKind::Deleted,
        Some(kind) => kind_conflict(kind),
    };
    Err(conflict_at(kind, target))
}

/// Classifies a failure to open the target as a conflict; other failures pass through.
fn open_conflict(e: FsError) -> Result<ConflictKind, FsError> {
    match e {
        FsError::NotFound { .. } => Ok(ConflictKind::Deleted),
        FsError::Symlink { .. } => Ok(ConflictKind::Symlink),
        FsError::IsDirectory { .. } => Ok(ConflictKind::Directory),
        FsError::NotRegularFile { .. } => Ok(ConflictKind::NotRegular),
        other @ (FsError::InvalidName { .. }
        | FsError::InvalidPath { .. }
        | FsError::NotDirectory { .. }
        | FsError::AlreadyExists { .. }
        | FsError::OutsideWorkspace { .. }
        | FsError::SymlinkEscape { .. }
        | FsError::NonUtf8 { .. }
        | FsError::Io { .. }) => Err(other),
    }
}

fn kind_conflict(kind: EntryKind) -> ConflictKind {
    match kind {
        EntryKind::File => ConflictKind::Modified,
        EntryKind::Directory => ConflictKind::Directory,
        EntryKind::Symlink => ConflictKind::Symlink,
        EntryKind::Other => ConflictKind::NotRegular,
    }
}

fn conflict(
    kind: ConflictKind,
    workspace_root: &Path,
    dirs: PlanDirs,
    file_name: &str,
) -> PublishError {
    conflict_at(
        kind,
        workspace_root
            .join(dirs.root)
            .join(dirs.published)
            .join(file_name),
    )
}

fn conflict_at(kind: ConflictKind, path: PathBuf) -> PublishError {
    PublishError::Conflict { kind, path }
}

fn published(dirs: PlanDirs, file_name: &str, bytes: &[u8], change: Change) -> Published {
    Published {
        relative_path: format!("{}{file_name}", dirs.published_prefix()),
        sha256: planhost_core::sha256_hex(bytes),
        size_bytes: bytes.len() as u64,
        change,
    }
}

/// A plain, visible `*.md` component. A leading `.` is refused, which also keeps a plan name
/// from ever matching a staged temp file (`.planhost-tmp-*`).
fn validate_file_name(file_name: &str) -> Result<Name<'_>, PublishError> {
    let invalid = |why: &str| PublishError::PathInvalid {
        reason: format!("file name {file_name:?} {why}"),
    };
    if file_name.starts_with('.') {
        return Err(invalid("starts with `.`"));
    }
    crate::artifact::markdown_name(file_name).map_err(invalid)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_name_rules() {
        for bad in [
            "",
            ".md",
            ".hidden.md",
            ".planhost-tmp-1-2",
            "a/b.md",
            "a\0.md",
            "../a.md",
            "plan.txt",
            "a\\b.md",
        ] {
            let err = validate_file_name(bad).unwrap_err();
            assert_eq!(err.code().as_str(), "PUBLISH_PATH_INVALID", "{bad:?}");
        }
        assert!(validate_file_name(&"a".repeat(256)).is_err());
        assert!(validate_file_name("add-auth-20260805-120000.md").is_ok());
    }
}

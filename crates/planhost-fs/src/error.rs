//! The crate's error type: one enum, one stable code per variant.

use std::path::PathBuf;

/// Result alias for planhost-fs operations.
pub type Result<T, E = FsError> = std::result::Result<T, E>;

/// Everything the directory-handle layer and the workspace resolver can refuse or fail with.
///
/// The artifact writer maps these onto its own wire contract, [`crate::ArtifactError`].
#[derive(Debug, thiserror::Error)]
pub enum FsError {
    /// A single path component was empty, `.`, `..`, or held `/` or NUL.
    /// Returned by [`crate::Name::new`] and everything that takes a name.
    #[error("invalid path component {name:?}")]
    InvalidName {
        /// The rejected component.
        name: String,
    },
    /// A requested path was malformed (empty, NUL, not absolute where it must be).
    /// Returned by [`crate::Workspace`] resolution and [`crate::Dir::open_anchor`].
    #[error("invalid path {path:?}: {reason}")]
    InvalidPath {
        /// The path as requested.
        path: String,
        /// Why it was refused.
        reason: &'static str,
    },
    /// Nothing exists at the path. Returned by opens, walks without creation, and resolution.
    #[error("no such file or directory: {}", path.display())]
    NotFound {
        /// The missing path.
        path: PathBuf,
    },
    /// A symlink stood where a real file or directory was required (including a dangling link).
    /// Returned by every handle operation, which opens with `O_NOFOLLOW`.
    #[error("refusing symlink at {}", path.display())]
    Symlink {
        /// The symlink's own path.
        path: PathBuf,
    },
    /// A non-directory stood where a directory was required. Returned by walks and opens.
    #[error("not a directory: {}", path.display())]
    NotDirectory {
        /// The offending path.
        path: PathBuf,
    },
    /// A directory stood where a regular file was required. Returned by file opens.
    #[error("is a directory: {}", path.display())]
    IsDirectory {
        /// The directory's path.
        path: PathBuf,
    },
    /// A FIFO, socket or device stood where a regular file was required.
    #[error("not a regular file: {}", path.display())]
    NotRegularFile {
        /// The offending path.
        path: PathBuf,
    },
    /// An exclusive create or no-replace rename found the name taken.
    #[error("already exists: {}", path.display())]
    AlreadyExists {
        /// The existing path.
        path: PathBuf,
    },
    /// The requested path is outside the workspace root (lexically, before any symlink).
    /// Returned by [`crate::Workspace::resolve`].
    #[error("path is outside the workspace: {}", path.display())]
    OutsideWorkspace {
        /// The normalised requested path.
        path: PathBuf,
    },
    /// The requested path is inside the root, but a symlink on it leads outside.
    /// Returned by [`crate::Workspace::resolve`].
    #[error("symlink at {} leads outside the workspace to {}", path.display(), target.display())]
    SymlinkEscape {
        /// The requested path.
        path: PathBuf,
        /// Where it really leads.
        target: PathBuf,
    },
    /// A path is not valid UTF-8; planhost's wire carries only UTF-8 paths.
    #[error("path is not valid UTF-8: {}", path.display())]
    NonUtf8 {
        /// The path, lossily displayed.
        path: PathBuf,
    },
    /// Any other system-call failure.
    #[error("{op} failed on {}: {source}", path.display())]
    Io {
        /// The operation that failed (`openat`, `fsync`, `renameat`, ...).
        op: &'static str,
        /// The path it acted on.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
}

impl FsError {
    /// The stable SCREAMING_SNAKE code for this error.
    pub fn code(&self) -> planhost_core::ErrorCode {
        match self {
            Self::InvalidName { .. } => planhost_core::ErrorCode::FsInvalidName,
            Self::InvalidPath { .. } => planhost_core::ErrorCode::FsPathInvalid,
            Self::NotFound { .. } => planhost_core::ErrorCode::FsNotFound,
            Self::Symlink { .. } => planhost_core::ErrorCode::FsSymlink,
            Self::NotDirectory { .. } => planhost_core::ErrorCode::FsNotDirectory,
            Self::IsDirectory { .. } => planhost_core::ErrorCode::FsIsDirectory,
            Self::NotRegularFile { .. } => planhost_core::ErrorCode::FsNotRegularFile,
            Self::AlreadyExists { .. } => planhost_core::ErrorCode::FsAlreadyExists,
            Self::OutsideWorkspace { .. } => planhost_core::ErrorCode::FsOutsideWorkspace,
            Self::SymlinkEscape { .. } => planhost_core::ErrorCode::FsSymlinkEscape,
            Self::NonUtf8 { .. } => planhost_core::ErrorCode::FsNonUtf8Path,
            Self::Io { .. } => planhost_core::ErrorCode::FsIo,
        }
    }

    pub(crate) fn io(op: &'static str, path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Self::Io {
            op,
            path: path.into(),
            source,
        }
    }
}

/// What a failed plan-file write means to its caller: the same five outcomes for the immutable
/// artifact writer and for publication, so both map `FsError` through this one function.
#[derive(Debug)]
pub(crate) enum WriteFailure {
    /// A symlink on the path or at the target.
    Symlink(PathBuf),
    /// A directory on the path is not a directory.
    NotDirectory(PathBuf),
    /// The target already exists.
    Collision(PathBuf),
    /// The path or name itself is invalid.
    PathInvalid(String),
    /// Any I/O failure while writing.
    Write(FsError),
}

impl From<FsError> for WriteFailure {
    fn from(e: FsError) -> Self {
        match e {
            FsError::Symlink { path } | FsError::SymlinkEscape { path, .. } => Self::Symlink(path),
            FsError::NotDirectory { path } => Self::NotDirectory(path),
            FsError::AlreadyExists { path } => Self::Collision(path),
            FsError::InvalidName { .. }
            | FsError::InvalidPath { .. }
            | FsError::OutsideWorkspace { .. }
            | FsError::NonUtf8 { .. } => Self::PathInvalid(e.to_string()),
            FsError::NotFound { .. }
            | FsError::IsDirectory { .. }
            | FsError::NotRegularFile { .. }
            | FsError::Io { .. } => Self::Write(e),
        }
    }
}

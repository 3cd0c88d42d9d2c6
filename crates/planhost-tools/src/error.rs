//! The crate's error type: one enum, one stable wire code per variant.

use planhost_exec::ExecError;
use planhost_fs::FsError;

/// Result alias for tool calls.
pub type Result<T, E = ToolError> = std::result::Result<T, E>;

/// Why a tool call did nothing. No variant is returned after a partial write: Write and Edit
/// either replace the whole file atomically or leave it as it was.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    /// The path is outside the workspace root and no outside access was granted.
    /// Code `TOOL_PATH_OUTSIDE_WORKSPACE`; any tool.
    #[error("path is outside the workspace: {path}")]
    OutsideWorkspace {
        /// The requested path, normalised.
        path: String,
    },
    /// Nothing exists at the path. Code `TOOL_PATH_NOT_FOUND`; Read, Edit, Glob, Grep.
    #[error("path not found: {path}")]
    NotFound {
        /// The requested path.
        path: String,
    },
    /// A directory was given where a file is needed. Code `TOOL_PATH_IS_DIRECTORY`; Read, Write,
    /// Edit.
    #[error("path is a directory: {path}")]
    IsDirectory {
        /// The directory.
        path: String,
    },
    /// The file holds binary data (a NUL byte). Code `TOOL_BINARY_FILE`; Read, Edit.
    #[error("file looks binary: {path}")]
    BinaryFile {
        /// The file.
        path: String,
    },
    /// The file exceeds the size the tool will load. Code `TOOL_FILE_TOO_LARGE`; Read, Edit.
    #[error("file is {size} bytes, over the {limit}-byte limit: {path}")]
    FileTooLarge {
        /// The file.
        path: String,
        /// Its size.
        size: u64,
        /// The limit it exceeds.
        limit: u64,
    },
    /// The Grep pattern is not a valid regex. Code `TOOL_INVALID_REGEX`; Grep.
    #[error("invalid regex: {message}")]
    InvalidRegex {
        /// The regex engine's explanation.
        message: String,
    },
    /// A glob (Glob's pattern or Grep's filter) is invalid. Code `TOOL_INVALID_GLOB`.
    #[error("invalid glob: {message}")]
    InvalidGlob {
        /// The glob engine's explanation.
        message: String,
    },
    /// A path the tool would act on or report is not valid UTF-8. Code `TOOL_NON_UTF8_PATH`.
    #[error("path is not valid UTF-8: {path}")]
    NonUtf8Path {
        /// The path, lossily decoded.
        path: String,
    },
    /// Edit's `oldString` does not occur in the file. Code `TOOL_EDIT_NO_MATCH`.
    #[error("oldString not found in {path}")]
    EditNoMatch {
        /// The file.
        path: String,
    },
    /// Edit's `oldString` occurs more than once and `replaceAll` is false.
    /// Code `TOOL_EDIT_NOT_UNIQUE`.
    #[error("oldString occurs {count} times in {path}; add context or set replaceAll")]
    EditNotUnique {
        /// The file.
        path: String,
        /// How many times it occurs.
        count: usize,
    },
    /// The name Edit read from no longer holds the file it read (replaced, renamed or swapped
    /// while Edit worked); nothing was written. Code `TOOL_FILE_CHANGED`; Edit.
    #[error("file changed while it was being edited; nothing was written: {path}")]
    FileChanged {
        /// The file.
        path: String,
    },
    /// Writing failed at the OS level; the target is unchanged. Code `TOOL_WRITE_FAILED`;
    /// Write, Edit.
    #[error("write failed: {source}")]
    WriteFailed {
        /// The underlying failure.
        #[source]
        source: FsError,
    },
    /// Reading failed at the OS level (permissions, I/O). Code `TOOL_READ_FAILED`; any tool.
    #[error("read failed: {message}")]
    ReadFailed {
        /// What failed.
        message: String,
    },
    /// A symlink was refused: one leading out of the workspace (any tool), a dangling one, or
    /// any symlink on a Write/Edit path. Code `TOOL_SYMLINK_REFUSED`.
    #[error("symlink refused: {path}")]
    SymlinkRefused {
        /// The requested path.
        path: String,
    },
    /// The request itself is malformed (empty path, zero limit, `oldString == newString`, a
    /// FIFO or device as target, a file where a directory is needed...). Code
    /// `TOOL_INVALID_INPUT`.
    #[error("invalid input: {message}")]
    InvalidInput {
        /// What is wrong.
        message: String,
    },
    /// Write or Edit aimed at a path only the host writes: `.pi/plan/` (immutable SubmitPlan
    /// artifacts) or `.pi/plans/` (published plans), judged on the canonical path.
    /// Code `TOOL_PATH_RESERVED`.
    #[error("path is reserved for the host's plan files: {path}")]
    PathReserved {
        /// The canonical workspace-relative path.
        path: String,
    },
    /// The tool name is none of Read, Glob, Grep, Write, Edit, Bash. Code `TOOL_UNKNOWN`;
    /// returned by `tool_by_name` and by `execute` for a host tool it does not run.
    #[error("unknown tool: {name}")]
    UnknownTool {
        /// The name as given.
        name: String,
    },
    /// Bash was refused or failed in the process runner. The code is exec's own, unchanged
    /// (`COMMAND_TIMEOUT_INVALID`, `COMMAND_SHELL_INVALID`, `COMMAND_SHELL_CHANGED`,
    /// `SHELL_NOT_FOUND`, `COMMAND_CWD_INVALID`, `COMMAND_ENV_INVALID`, `COMMAND_SPAWN_FAILED`,
    /// `COMMAND_WAIT_FAILED`); built only by [`ToolError::from_exec`].
    #[error(transparent)]
    Command {
        /// The runner's error.
        source: ExecError,
    },
    /// The host broke a contract with this crate (Bash dispatched without a pinned shell) or a
    /// tool task died. Code `TOOL_INTERNAL_ERROR`; returned by `execute`.
    #[error("internal error: {message}")]
    Internal {
        /// What went wrong.
        message: String,
    },
}

impl ToolError {
    /// The stable wire code.
    pub fn code(&self) -> planhost_core::ErrorCode {
        match self {
            Self::OutsideWorkspace { .. } => planhost_core::ErrorCode::ToolPathOutsideWorkspace,
            Self::NotFound { .. } => planhost_core::ErrorCode::ToolPathNotFound,
            Self::IsDirectory { .. } => planhost_core::ErrorCode::ToolPathIsDirectory,
            Self::BinaryFile { .. } => planhost_core::ErrorCode::ToolBinaryFile,
            Self::FileTooLarge { .. } => planhost_core::ErrorCode::ToolFileTooLarge,
            Self::InvalidRegex { .. } => planhost_core::ErrorCode::ToolInvalidRegex,
            Self::InvalidGlob { .. } => planhost_core::ErrorCode::ToolInvalidGlob,
            Self::NonUtf8Path { .. } => planhost_core::ErrorCode::ToolNonUtf8Path,
            Self::EditNoMatch { .. } => planhost_core::ErrorCode::ToolEditNoMatch,
            Self::EditNotUnique { .. } => planhost_core::ErrorCode::ToolEditNotUnique,
            Self::FileChanged { .. } => planhost_core::ErrorCode::ToolFileChanged,
            Self::WriteFailed { .. } => planhost_core::ErrorCode::ToolWriteFailed,
            Self::ReadFailed { .. } => planhost_core::ErrorCode::ToolReadFailed,
            Self::SymlinkRefused { .. } => planhost_core::ErrorCode::ToolSymlinkRefused,
            Self::InvalidInput { .. } => planhost_core::ErrorCode::ToolInvalidInput,
            Self::PathReserved { .. } => planhost_core::ErrorCode::ToolPathReserved,
            Self::UnknownTool { .. } => planhost_core::ErrorCode::ToolUnknown,
            Self::Command { source } => source.code(),
            Self::Internal { .. } => planhost_core::ErrorCode::ToolInternalError,
        }
    }

    /// The one mapping from the runner's errors: the variant keeps exec's code exactly.
    pub fn from_exec(source: ExecError) -> Self {
        Self::Command { source }
    }

    pub(crate) fn invalid(message: impl Into<String>) -> Self {
        Self::InvalidInput {
            message: message.into(),
        }
    }

    /// Maps a filesystem error for a tool that was reading or writing.
    pub(crate) fn from_fs(error: FsError, access: Access) -> Self {
        let shown = |p: &std::path::Path| p.display().to_string();
        match error {
            FsError::InvalidName { .. } | FsError::InvalidPath { .. } => {
                Self::invalid(error.to_string())
            }
            FsError::NotFound { path } => Self::NotFound { path: shown(&path) },
            FsError::Symlink { path } | FsError::SymlinkEscape { path, .. } => {
                Self::SymlinkRefused { path: shown(&path) }
            }
            FsError::NotDirectory { .. } | FsError::NotRegularFile { .. } => {
                Self::invalid(error.to_string())
            }
            FsError::IsDirectory { path } => Self::IsDirectory { path: shown(&path) },
            FsError::OutsideWorkspace { path } => Self::OutsideWorkspace { path: shown(&path) },
            FsError::NonUtf8 { path } => Self::NonUtf8Path { path: shown(&path) },
            FsError::AlreadyExists { .. } | FsError::Io { .. } => match access {
                Access::Read => Self::ReadFailed {
                    message: error.to_string(),
                },
                Access::Write => Self::WriteFailed { source: error },
            },
        }
    }
}

/// Whether a failing filesystem call was part of reading or of writing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Access {
    Read,
    Write,
}

//! The crate's one error type and its stable wire codes.

use std::path::PathBuf;

use crate::shell::{Platform, ShellId};

/// Why a shell id was refused by [`crate::validate_shell_setting`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShellInvalidReason {
    /// The string is not one of the four catalog ids.
    Unknown,
    /// The id exists, but not in this platform's catalog (for example `cmd` on Linux).
    WrongPlatform,
    /// The id belongs to this platform, but the probe did not find its executable.
    Unavailable,
}

impl ShellInvalidReason {
    fn as_str(self) -> &'static str {
        match self {
            Self::Unknown => "unknown shell id",
            Self::WrongPlatform => "shell is not offered on this platform",
            Self::Unavailable => "shell is not available on this machine",
        }
    }
}

/// Why a working directory was refused before spawning.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CwdInvalidReason {
    /// The path is relative; the runner only accepts absolute paths.
    NotAbsolute,
    /// Nothing exists at the path (or it cannot be inspected).
    Missing,
    /// The path exists but is not a directory.
    NotADirectory,
}

impl CwdInvalidReason {
    fn as_str(self) -> &'static str {
        match self {
            Self::NotAbsolute => "path is not absolute",
            Self::Missing => "directory does not exist",
            Self::NotADirectory => "path is not a directory",
        }
    }
}

/// Everything this crate can refuse or fail with. Each variant maps to one stable code.
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    /// A settings write named an unknown, wrong-platform or unavailable shell.
    /// Returned by [`crate::validate_shell_setting`].
    #[error("invalid shell {id:?}: {}", reason.as_str())]
    ShellInvalid {
        /// The id as it was written.
        id: String,
        /// Which rule refused it.
        reason: ShellInvalidReason,
    },
    /// The pinned shell no longer matches the request or the catalog resolved just before spawn.
    /// Returned by [`crate::verify_pin`].
    #[error(
        "shell changed since the turn was pinned: pinned {pinned}, expected {expected}, now {current}"
    )]
    ShellChanged {
        /// The id pinned at turn launch.
        pinned: ShellId,
        /// The id the Bash request carried.
        expected: ShellId,
        /// The id the catalog resolves to now.
        current: ShellId,
    },
    /// No shell of this platform's catalog is available.
    /// Returned by [`crate::effective_shell`].
    #[error("no shell is available on {platform:?}")]
    ShellNotFound {
        /// The platform whose catalog was empty of available shells.
        platform: Platform,
    },
    /// An explicit timeout outside 1,000..=300,000 ms (or the agent's own bound). Returned by
    /// [`crate::Timeout::from_request`] and [`crate::Timeout::within`].
    #[error("timeout {ms} ms is outside 1000..={max} ms")]
    TimeoutInvalid {
        /// The requested value.
        ms: u64,
        /// The largest value accepted.
        max: u64,
    },
    /// The working directory is relative, missing or not a directory. Returned by
    /// [`crate::run`] before anything is spawned.
    #[error("invalid working directory {}: {}", path.display(), reason.as_str())]
    CwdInvalid {
        /// The path as given.
        path: PathBuf,
        /// Which check failed.
        reason: CwdInvalidReason,
    },
    /// An environment entry cannot be passed to a process (empty name, `=` or NUL inside).
    /// Returned by [`crate::run`] before anything is spawned.
    #[error("invalid environment variable name or value for {name:?}")]
    EnvInvalid {
        /// The offending name.
        name: String,
    },
    /// The operating system refused to start the shell. Returned by [`crate::run`].
    #[error("failed to spawn {}: {source}", program.display())]
    SpawnFailed {
        /// The executable that was started.
        program: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// Waiting for the shell process failed after it was spawned. Returned by [`crate::run`];
    /// the process tree has already been torn down when this is returned.
    #[error("failed to wait for the command: {source}")]
    WaitFailed {
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
}

impl ExecError {
    /// The stable wire code of this error, as named by the seeds.
    pub fn code(&self) -> planhost_core::ErrorCode {
        match self {
            Self::ShellInvalid { .. } => planhost_core::ErrorCode::CommandShellInvalid,
            Self::ShellChanged { .. } => planhost_core::ErrorCode::CommandShellChanged,
            Self::ShellNotFound { .. } => planhost_core::ErrorCode::ShellNotFound,
            Self::TimeoutInvalid { .. } => planhost_core::ErrorCode::CommandTimeoutInvalid,
            Self::CwdInvalid { .. } => planhost_core::ErrorCode::CommandCwdInvalid,
            Self::EnvInvalid { .. } => planhost_core::ErrorCode::CommandEnvInvalid,
            Self::SpawnFailed { .. } => planhost_core::ErrorCode::CommandSpawnFailed,
            Self::WaitFailed { .. } => planhost_core::ErrorCode::CommandWaitFailed,
        }
    }
}

/// The crate's result alias.
pub type Result<T> = std::result::Result<T, ExecError>;

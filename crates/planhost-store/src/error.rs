//! The store's errors.

use planhost_core::{CoreError, EntryId, PublicationId, SessionId, TurnId};

/// Every way a store operation fails. Domain refusals pass through as [`StoreError::Core`]; the
/// database is unchanged whenever one of these is returned, except for
/// [`CoreError::ApprovalTimeout`], which is returned after the expiry it reports has committed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// A domain rule refused the request.
    #[error(transparent)]
    Core(#[from] CoreError),
    /// No session has this id (or external id).
    #[error("no session {0}")]
    SessionNotFound(SessionId),
    /// No turn has this id.
    #[error("no turn {0}")]
    TurnNotFound(TurnId),
    /// A branch path was empty (the last entry is the checkpoint's anchor).
    #[error("branchPath must name at least the current branch leaf")]
    BranchInvalid,
    /// No checkpoint of the session has this id and SHA-256.
    #[error("{0}")]
    CheckpointNotFound(String),
    /// A captured entry was offered again with different content (seed 004: one entry, one capture).
    #[error("entry {0} was already captured with other content")]
    CaptureEntryChanged(EntryId),
    /// No publication approval has this id.
    #[error("no publication {0}")]
    PublicationNotFound(PublicationId),
    /// Another publication is pending or being written for the session.
    #[error("publication {0} is still pending")]
    PublicationOpen(PublicationId),
    /// The publication is in a status that does not allow this step.
    #[error("publication is {status}")]
    PublicationState {
        /// Its status.
        status: planhost_core::PublicationStatus,
    },
    /// A handoff accept named a capability this host process did not issue (e.g. after a restart).
    #[error("the handoff capability is not current; review and retry the handoff")]
    HandoffStale,
    /// An external id was reopened with a different workspace root.
    #[error("session {external_id} belongs to workspace {existing}, not {requested}")]
    WorkspaceMismatch {
        /// The client's id for the session.
        external_id: String,
        /// The root recorded at first open.
        existing: String,
        /// The root this request named.
        requested: String,
    },
    /// An external id was reopened naming another agent: a session's agent never changes (its
    /// tool names would mean something else).
    #[error("session {external_id} serves the agent {existing}, not {requested}")]
    AgentMismatch {
        /// The client's id for the session.
        external_id: String,
        /// The agent recorded at first open.
        existing: planhost_core::Agent,
        /// The agent this request named.
        requested: planhost_core::Agent,
    },
    /// A settings value is malformed; returned by `open` (fail closed) and by settings writes.
    #[error("invalid setting {key}: {reason}")]
    SettingsInvalid {
        /// The setting's key.
        key: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The database was written by a newer planhost.
    #[error("database schema v{found} is newer than this planhost (v{supported})")]
    SchemaTooNew {
        /// `PRAGMA user_version` on disk.
        found: u32,
        /// The newest version this build understands.
        supported: u32,
    },
    /// A migration failed and was rolled back; the old version stays authoritative.
    #[error(
        "migration from v{from} to v{to} failed, v{from} is unchanged (backup at {backup}): {reason}"
    )]
    MigrationFailed {
        /// Version before.
        from: u32,
        /// Target version.
        to: u32,
        /// The exact pre-migration copy.
        backup: String,
        /// What failed.
        reason: String,
    },
    /// The pre-migration backup could not be written; nothing was migrated.
    #[error("could not write backup {path}: {reason}")]
    BackupFailed {
        /// Where the backup was to go.
        path: String,
        /// Why it failed.
        reason: String,
    },
    /// SQLite failed (I/O, corruption, constraint). The transaction was rolled back.
    #[error("database error: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// A stored value could not be read back (corruption or a foreign writer).
    #[error("corrupt row in {table}: {reason}")]
    Corrupt {
        /// The table.
        table: &'static str,
        /// What was wrong.
        reason: String,
    },
    /// The database file could not be created or its permissions tightened.
    #[error("database file: {0}")]
    Io(std::io::Error),
}

impl StoreError {
    /// The stable wire code.
    pub fn code(&self) -> planhost_core::ErrorCode {
        match self {
            StoreError::Core(e) => e.code(),
            StoreError::SessionNotFound(_) => planhost_core::ErrorCode::SessionNotFound,
            StoreError::TurnNotFound(_) => planhost_core::ErrorCode::TurnNotFound,
            StoreError::WorkspaceMismatch { .. } => {
                planhost_core::ErrorCode::SessionWorkspaceMismatch
            }
            StoreError::AgentMismatch { .. } => planhost_core::ErrorCode::SessionAgentMismatch,
            StoreError::BranchInvalid => planhost_core::ErrorCode::CheckpointBranchInvalid,
            StoreError::CheckpointNotFound(_) => planhost_core::ErrorCode::CheckpointNotFound,
            StoreError::CaptureEntryChanged(_) => planhost_core::ErrorCode::CaptureEntryChanged,
            StoreError::PublicationNotFound(_) => planhost_core::ErrorCode::PublicationNotFound,
            StoreError::PublicationOpen(_) => planhost_core::ErrorCode::PublicationPending,
            StoreError::PublicationState { .. } => {
                planhost_core::ErrorCode::PublicationStateInvalid
            }
            StoreError::HandoffStale => planhost_core::ErrorCode::PlanHandoffStale,
            StoreError::SettingsInvalid { .. } => planhost_core::ErrorCode::SettingsInvalid,
            StoreError::SchemaTooNew { .. } => planhost_core::ErrorCode::StoreSchemaTooNew,
            StoreError::MigrationFailed { .. } => planhost_core::ErrorCode::StoreMigrationFailed,
            StoreError::BackupFailed { .. } => planhost_core::ErrorCode::StoreBackupFailed,
            StoreError::Sqlite(_) => planhost_core::ErrorCode::StorePersistenceFailed,
            StoreError::Corrupt { .. } => planhost_core::ErrorCode::StoreCorrupt,
            StoreError::Io(_) => planhost_core::ErrorCode::StorePersistenceFailed,
        }
    }
}

/// The store's result alias.
pub type Result<T> = std::result::Result<T, StoreError>;

pub(crate) fn corrupt(table: &'static str, reason: impl std::fmt::Display) -> StoreError {
    StoreError::Corrupt {
        table,
        reason: reason.to_string(),
    }
}

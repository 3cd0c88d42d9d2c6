//! The host service's errors.

use planhost_fs::ArtifactError;
use planhost_store::StoreError;

/// Every way a host operation fails; the wire code comes from [`HostError::code`].
#[derive(Debug, thiserror::Error)]
pub enum HostError {
    /// A store or domain refusal; the database is unchanged (except a recorded expiry).
    #[error(transparent)]
    Store(#[from] StoreError),
    /// SubmitPlan's artifact could not be written; no approval row exists.
    #[error(transparent)]
    Artifact(#[from] ArtifactError),
    /// Publication to `.pi/plans/` failed (path, symlink, collision, conflict, write).
    #[error(transparent)]
    Publish(planhost_fs::PublishError),
    /// `/plan save`, `/plan preview` or a publication needs a checkpoint and the branch has none.
    #[error("there is no plan checkpoint on this branch yet")]
    NoCheckpoint,
    /// The published file no longer holds what was published; it is never overwritten.
    #[error("the published plan file was changed outside planhost; it will not be overwritten")]
    PublishedFileChanged,
    /// A session was opened with a root that is not an absolute, existing directory.
    #[error("workspace root {root:?} is invalid: {reason}")]
    WorkspaceInvalid {
        /// The requested root.
        root: String,
        /// Why it was refused.
        reason: String,
    },
}

impl HostError {
    /// The stable wire code.
    pub fn code(&self) -> &'static str {
        match self {
            HostError::Store(e) => e.code(),
            HostError::Artifact(e) => e.code(),
            HostError::WorkspaceInvalid { .. } => "WORKSPACE_INVALID",
            HostError::Publish(e) => e.code(),
            HostError::NoCheckpoint => "CHECKPOINT_NONE",
            HostError::PublishedFileChanged => "PUBLISH_CONFLICT",
        }
    }
}

impl From<planhost_core::CoreError> for HostError {
    fn from(value: planhost_core::CoreError) -> Self {
        HostError::Store(StoreError::Core(value))
    }
}

/// The host's result alias.
pub type Result<T> = std::result::Result<T, HostError>;

//! The service's errors: every refusal and failure of the contract, each with one stable code.

use planhost_core::{Access, ErrorCode, Role};
use planhost_fs::{ArtifactError, PublishError};
use planhost_protocol::{RequestError, RpcError};
use planhost_store::StoreError;

/// Every way a service call fails; the wire code comes from [`ServiceError::code`], the JSON-RPC
/// error from [`ServiceError::to_rpc`] (the one mapping every transport uses).
#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    /// A store or domain refusal; the database is unchanged (except a recorded expiry).
    #[error(transparent)]
    Store(#[from] StoreError),
    /// SubmitPlan's artifact could not be written (no approval row exists), or an artifact
    /// could not be checked.
    #[error(transparent)]
    Artifact(#[from] ArtifactError),
    /// Publication to `.pi/plans/` failed (path, symlink, collision, conflict, write).
    #[error(transparent)]
    Publish(#[from] PublishError),
    /// The file a person reviewed no longer holds the submitted bytes: the approval is refused.
    #[error("the plan file {path} changed after it was submitted ({found}); it cannot be approved")]
    ArtifactChanged {
        /// The artifact's relative path.
        path: String,
        /// What is there now.
        found: String,
    },
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
    /// The connection's roles do not allow the method; nothing ran.
    #[error("{method} needs the {needs} role; this connection declared {declared}")]
    RoleForbidden {
        /// The method.
        method: &'static str,
        /// The role it needs.
        needs: Role,
        /// What the connection declared, e.g. `[agent]`.
        declared: String,
    },
    /// A typed id prefix matched several records.
    #[error("{typed:?} matches more than one: {}", candidates.join(", "))]
    IdAmbiguous {
        /// What was typed.
        typed: String,
        /// Every match.
        candidates: Vec<String>,
    },
    /// A refusal of the tool authority, the shell or the request itself, with its code.
    #[error("{message}")]
    Refused {
        /// The stable code.
        code: ErrorCode,
        /// What happened.
        message: String,
    },
    /// The params did not match the method, or the method does not exist.
    #[error("{}", .0.message)]
    Request(RequestError),
    /// The service's state thread stopped (shutdown or a fatal fault); the call did not run.
    #[error("the host is not running")]
    Stopped,
    /// An internal fault (a result that could not be encoded, a tool task that panicked).
    #[error("internal error: {0}")]
    Internal(String),
}

impl ServiceError {
    /// A refusal with its code.
    pub(crate) fn refused(code: ErrorCode, message: impl Into<String>) -> Self {
        ServiceError::Refused {
            code,
            message: message.into(),
        }
    }

    /// The role rule's refusal.
    pub(crate) fn forbidden(method: &'static str, access: Access, roles: &[Role]) -> Self {
        let declared = roles
            .iter()
            .map(|r| r.as_str())
            .collect::<Vec<_>>()
            .join(", ");
        ServiceError::RoleForbidden {
            method,
            needs: access.required_role().unwrap_or(Role::Observer),
            declared: format!("[{declared}]"),
        }
    }

    /// The stable wire code.
    pub fn code(&self) -> ErrorCode {
        match self {
            ServiceError::Store(e) => e.code(),
            ServiceError::Artifact(e) => e.code(),
            ServiceError::Publish(e) => e.code(),
            ServiceError::ArtifactChanged { .. } => ErrorCode::PlanArtifactChanged,
            ServiceError::NoCheckpoint => ErrorCode::CheckpointNone,
            ServiceError::PublishedFileChanged => ErrorCode::PublishConflict,
            ServiceError::WorkspaceInvalid { .. } => ErrorCode::WorkspaceInvalid,
            ServiceError::RoleForbidden { .. } => ErrorCode::RoleForbidden,
            ServiceError::IdAmbiguous { .. } => ErrorCode::IdAmbiguous,
            ServiceError::Refused { code, .. } => *code,
            ServiceError::Request(e) => e.code,
            ServiceError::Stopped => ErrorCode::HostStopped,
            ServiceError::Internal(_) => ErrorCode::InternalError,
        }
    }

    /// The JSON-RPC error every transport sends.
    pub fn to_rpc(&self) -> RpcError {
        let field = match self {
            ServiceError::Request(e) => e.field.clone(),
            ServiceError::Store(_)
            | ServiceError::Artifact(_)
            | ServiceError::Publish(_)
            | ServiceError::ArtifactChanged { .. }
            | ServiceError::NoCheckpoint
            | ServiceError::PublishedFileChanged
            | ServiceError::WorkspaceInvalid { .. }
            | ServiceError::RoleForbidden { .. }
            | ServiceError::IdAmbiguous { .. }
            | ServiceError::Refused { .. }
            | ServiceError::Stopped
            | ServiceError::Internal(_) => None,
        };
        RpcError::with_field(self.code(), self.to_string(), field)
    }
}

impl From<planhost_core::CoreError> for ServiceError {
    fn from(value: planhost_core::CoreError) -> Self {
        ServiceError::Store(StoreError::Core(value))
    }
}

impl From<RequestError> for ServiceError {
    fn from(value: RequestError) -> Self {
        ServiceError::Request(value)
    }
}

/// The service's result alias.
pub type Result<T, E = ServiceError> = std::result::Result<T, E>;

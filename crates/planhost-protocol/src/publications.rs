//! Publication approvals: `/plan save` asks to write `.pi/plans/<name>.md` (seed 003).

use planhost_core::{
    ApprovalAction, EntryId, ErrorCode, PublicationId, PublicationStatus, Resolver, SessionId,
    Timestamp,
};

params! {
    /// `publications.request` (`/plan save`).
    pub struct RequestPublicationParams {
        /// Session.
        pub session_id: SessionId,
        /// The branch path: its latest checkpoint is what would be published.
        pub branch_path: Vec<EntryId>,
        /// After a conflict, a person chose to replace what is on disk now: the approval binds
        /// the current on-disk digest as its base. Without it, a conflict is refused.
        #[serde(default)]
        pub overwrite_conflict: bool,
    }
}

result! {
    /// A publication approval: binds revision, digest, path and base digest.
    pub struct PublicationInfo {
        /// Id (for `publications.resolve`).
        pub publication_id: PublicationId,
        /// Session.
        pub session_id: SessionId,
        /// Checkpoint revision.
        pub revision: i64,
        /// Digest of the bytes to write.
        pub sha256: String,
        /// `.pi/plans/<name>.md`.
        pub relative_path: String,
        /// The digest the file must still have (updates); `null` for a first publication.
        pub base_sha256: Option<String>,
        /// Status.
        pub status: PublicationStatus,
        /// Why it ended badly.
        pub error_code: Option<ErrorCode>,
        /// Who approved or rejected it.
        pub resolved_by: Option<Resolver>,
        /// When it was requested.
        pub created_at: Timestamp,
    }
}

planhost_core::wire_enum! {
    #[derive(schemars::JsonSchema)]
    /// What `publications.request` found.
    RequestOutcome {
        /// The latest checkpoint is already published and the disk verified: nothing to write.
        Synced = "synced",
        /// A publication approval is pending: a person approves exactly this binding.
        Pending = "pending",
    }
}

result! {
    /// `publications.request`.
    pub struct PublicationRequest {
        /// Synced or pending.
        pub outcome: RequestOutcome,
        /// The pending approval.
        pub publication: Option<PublicationInfo>,
    }
}

params! {
    /// `publications.list`.
    pub struct PublicationsFilter {
        /// Only this session's.
        #[serde(default)]
        pub session_id: Option<SessionId>,
        /// Only these statuses (default: every status).
        #[serde(default)]
        pub status: Option<Vec<PublicationStatus>>,
        /// At most this many, newest first (default 100, at most 10,000).
        #[serde(default)]
        pub limit: Option<u32>,
    }
}

result! {
    /// `publications.list`.
    pub struct PublicationList {
        /// Newest first.
        pub items: Vec<PublicationInfo>,
    }
}

params! {
    /// `publications.resolve`.
    pub struct ResolvePublicationParams {
        /// The approval (or a unique prefix of at least 8 characters).
        pub publication_id: PublicationId,
        /// `approve` writes; `reject` writes nothing.
        pub action: ApprovalAction,
    }
}

planhost_core::wire_enum! {
    #[derive(schemars::JsonSchema)]
    /// What answering a publication did.
    ResolveOutcome {
        /// Written (or verified already written) and recorded.
        Completed = "completed",
        /// Rejected; nothing written.
        Rejected = "rejected",
        /// A first publication lost a race for its name: revoked, and `next` asks again.
        Reapprove = "reapprove",
        /// The file changed outside planhost: nothing overwritten; Plan mode stays.
        Conflict = "conflict",
    }
}

result! {
    /// `publications.resolve`.
    pub struct PublicationResolution {
        /// What happened.
        pub outcome: ResolveOutcome,
        /// The resolved approval.
        pub publication: PublicationInfo,
        /// For `reapprove`: the new pending approval.
        pub next: Option<PublicationInfo>,
    }
}

//! What changed in a plan (`plans.changes`) and the plan files no approval points to
//! (`plans.orphans`): read models every face shows the same way.

use planhost_core::{ProposalId, Timestamp};

use crate::checkpoints::CheckpointInfo;

planhost_core::wire_enum! {
    #[derive(schemars::JsonSchema)]
    /// What a base is.
    ChangeBaseKind {
        /// The session's plan submitted just before this one.
        Previous = "previous",
        /// The checkpoint a person was shown last before this plan arrived.
        Seen = "seen",
    }
}

planhost_core::wire_enum! {
    #[derive(schemars::JsonSchema)]
    /// What the comparison found.
    DiffStatus {
        /// The same text: nothing changed.
        Identical = "identical",
        /// The hunks say what changed.
        Changed = "changed",
        /// Too large to compare or to show within the host's bounds; no hunks.
        TooLarge = "tooLarge",
    }
}

planhost_core::wire_enum! {
    #[derive(schemars::JsonSchema)]
    /// One line of a hunk.
    DiffTag {
        /// In both texts.
        Equal = "equal",
        /// Only in the base.
        Delete = "delete",
        /// Only in the plan.
        Insert = "insert",
    }
}

result! {
    /// One line of a hunk, without its newline.
    pub struct DiffLine {
        /// Which side it is on.
        pub tag: DiffTag,
        /// The text.
        pub text: String,
    }
}

result! {
    /// A run of changes with up to three lines of context around them. Line numbers are 1-based.
    pub struct DiffHunk {
        /// The first base line shown.
        pub old_start: u32,
        /// Base lines shown.
        pub old_lines: u32,
        /// The first plan line shown.
        pub new_start: u32,
        /// Plan lines shown.
        pub new_lines: u32,
        /// The lines.
        pub lines: Vec<DiffLine>,
    }
}

result! {
    /// A line diff from a base to the plan, bounded in size and time.
    pub struct LineDiff {
        /// What the comparison found.
        pub status: DiffStatus,
        /// Lines in the base.
        pub base_lines: u32,
        /// Lines in the plan.
        pub plan_lines: u32,
        /// Lines only in the plan (0 when too large).
        pub inserted: u32,
        /// Lines only in the base (0 when too large).
        pub deleted: u32,
        /// The hunks (none when identical or too large).
        pub hunks: Vec<DiffHunk>,
    }
}

result! {
    /// One base a plan is compared with.
    pub struct ChangeBase {
        /// What it is.
        pub kind: ChangeBaseKind,
        /// `previous`: that plan's proposal.
        pub proposal_id: Option<ProposalId>,
        /// `seen`: that checkpoint, with when and by which client it was shown.
        pub checkpoint: Option<CheckpointInfo>,
        /// When the person knew it: the previous plan's submission, or the showing.
        pub known_at: Timestamp,
        /// From this base to the plan.
        pub diff: LineDiff,
    }
}

result! {
    /// `plans.changes`.
    pub struct PlanChanges {
        /// The plan.
        pub proposal_id: ProposalId,
        /// The bases, the one the person knew last first; a base holding the same text as one
        /// before it is left out. Empty for a session's first plan that no one was shown.
        pub bases: Vec<ChangeBase>,
    }
}

result! {
    /// A complete file in a session's `.pi/plan/` that no approval points to (a crash between
    /// writing an artifact and committing its row leaves one; harmless, never reused).
    pub struct OrphanArtifact {
        /// The session's workspace.
        pub workspace_root: String,
        /// `.pi/plan/<name>`.
        pub relative_path: String,
    }
}

result! {
    /// `plans.orphans`.
    pub struct OrphanArtifacts {
        /// By workspace, then name.
        pub items: Vec<OrphanArtifact>,
        /// Workspaces whose `.pi/plan/` could not be read, and why.
        pub unreadable: Vec<UnreadableWorkspace>,
    }
}

result! {
    /// A workspace whose `.pi/plan/` could not be listed.
    pub struct UnreadableWorkspace {
        /// The session's workspace.
        pub workspace_root: String,
        /// The stable code of the failure.
        pub code: planhost_core::ErrorCode,
        /// What happened.
        pub message: String,
    }
}

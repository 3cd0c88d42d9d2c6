//! Parameters and results of the checkpoint, capture, publication and `/plan` methods (issue #5).

use planhost_core::{AssistantMessage, ExitChoice, ExitOffer, HandoffPhase, PublicationState};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

macro_rules! wire {
    ($(#[$meta:meta])* pub struct $name:ident { $($body:tt)* }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
        #[serde(rename_all = "camelCase", deny_unknown_fields)]
        pub struct $name { $($body)* }
    };
}

wire! {
    /// Names a session and the client's current branch (entry ids, root → leaf).
    pub struct BranchRef {
        /// Session.
        pub session_id: String,
        /// The branch path; its last entry is the current leaf.
        pub branch_path: Vec<String>,
    }
}

wire! {
    /// `plans.checkpoint`: seed 003's `update_plan_draft` — a complete snapshot, never a patch.
    pub struct CheckpointParams {
        /// Session.
        pub session_id: String,
        /// The branch path; the new checkpoint is anchored at its leaf.
        pub branch_path: Vec<String>,
        /// The complete plan.
        pub markdown: String,
        /// The branch-local revision the caller last saw (0 for none).
        pub expected_revision: i64,
    }
}

wire! {
    /// A saved checkpoint.
    pub struct CheckpointInfo {
        /// Store id.
        pub checkpoint_id: i64,
        /// The new branch-local revision.
        pub revision: i64,
        /// SHA-256 of the exact bytes.
        pub sha256: String,
        /// Byte size.
        pub size_bytes: i64,
        /// False when the same capture was offered again and nothing was stored.
        pub created: bool,
    }
}

wire! {
    /// `plans.capture`: offer a final assistant message for `<proposed_plan>` capture (seed 004).
    pub struct CaptureParams {
        /// Session.
        pub session_id: String,
        /// The turn the message belongs to: whether it began in planning is decided from it.
        pub turn_id: String,
        /// The branch path (the message's entry is usually its leaf).
        pub branch_path: Vec<String>,
        /// The message. `startedInPlanning` is overridden by the host's own state.
        pub message: AssistantMessage,
    }
}

wire! {
    /// What capture did.
    pub struct CaptureResult {
        /// A plan was captured (or the same capture was already stored).
        pub captured: bool,
        /// The checkpoint, when captured.
        pub checkpoint: Option<CheckpointInfo>,
        /// Why nothing was captured: an ineligible message, no block, or a delimiter error code.
        pub reason: Option<String>,
    }
}

wire! {
    /// `plans.projection`.
    pub struct ProjectionResult {
        /// The exact latest checkpoint, labelled as unapproved data; empty without one.
        pub text: String,
    }
}

wire! {
    /// `plans.preview`.
    pub struct PreviewResult {
        /// Revision.
        pub revision: i64,
        /// Digest.
        pub sha256: String,
        /// The exact bytes.
        pub markdown: String,
    }
}

wire! {
    /// `plans.status` (seed 003 `/plan status`).
    pub struct PlanStatusResult {
        /// Plan mode is active.
        pub active: bool,
        /// The branch's latest revision.
        pub revision: Option<i64>,
        /// Its digest.
        pub sha256: Option<String>,
        /// unpublished / dirty / synced / conflict.
        pub publication: PublicationState,
        /// The published path.
        pub path: Option<String>,
        /// The stable plan id of this session.
        pub plan_id: String,
        /// The handoff phase.
        pub phase: HandoffPhase,
        /// Whether the plan can be come back to: the host's state is always durable, so this is
        /// whether the client declared its own session persisted (not `--no-session`).
        pub persisted: bool,
        /// An external tool change waits for resolution.
        pub tool_conflict: bool,
        /// A pending handoff survived a restart and waits for review, retry or cancel.
        pub handoff_restarted: bool,
    }
}

wire! {
    /// A publication approval: binds revision, digest, path and base digest.
    pub struct PublicationInfo {
        /// Id (for `plans.publishResolve`).
        pub publication_id: String,
        /// Session.
        pub session_id: String,
        /// Checkpoint revision.
        pub revision: i64,
        /// Digest.
        pub sha256: String,
        /// `.pi/plans/<name>.md`.
        pub relative_path: String,
        /// The digest the file must still have (updates).
        pub base_sha256: Option<String>,
        /// Status.
        pub status: String,
        /// Why it ended badly.
        pub error_code: Option<String>,
    }
}

wire! {
    /// `plans.publish` (`/plan save`).
    pub struct PublishParams {
        /// Session.
        pub session_id: String,
        /// The branch path.
        pub branch_path: Vec<String>,
        /// After a conflict, a person chose to replace what is on disk now: the approval binds
        /// the current on-disk digest as its base. Without it, a conflict is refused.
        #[serde(default)]
        pub overwrite_conflict: bool,
    }
}

wire! {
    /// `plans.publish` (`/plan save`): nothing to do, or an approval to ask for.
    pub struct PublishResult {
        /// `synced` (verified, nothing written) or `pending` (ask the person).
        pub outcome: String,
        /// The pending approval.
        pub publication: Option<PublicationInfo>,
    }
}

wire! {
    /// `plans.publishResolve`.
    pub struct PublishResolveParams {
        /// The approval.
        pub publication_id: String,
        /// `approve` writes; `reject` writes nothing.
        pub action: planhost_core::ApprovalAction,
    }
}

wire! {
    /// What resolving a publication did.
    pub struct PublishResolveResult {
        /// `completed`, `rejected`, `reapprove` (name collision: ask again for `next`) or `conflict`.
        pub outcome: String,
        /// The resolved approval.
        pub publication: PublicationInfo,
        /// For `reapprove`: the new pending approval.
        pub next: Option<PublicationInfo>,
    }
}

wire! {
    /// `plans.exit` (`/plan exit`).
    pub struct ExitParams {
        /// Session.
        pub session_id: String,
        /// The branch path.
        pub branch_path: Vec<String>,
        /// Absent: ask what to offer. Present: do it.
        #[serde(default)]
        pub choice: Option<ExitChoice>,
        /// Tools available now, to compute what to restore on exit.
        #[serde(default)]
        pub available_tools: Option<Vec<String>>,
    }
}

wire! {
    /// What `/plan exit` offers or did.
    pub struct ExitResult {
        /// The offer (when no choice was given and Plan is still active).
        pub offer: Option<ExitOffer>,
        /// Plan mode was left.
        pub exited: bool,
        /// Tools to restore (baseline ∩ available now), when exited.
        pub restore_tools: Option<Vec<String>>,
    }
}

wire! {
    /// `plans.command`: parse a typed `/plan …` line.
    pub struct CommandParams {
        /// The whole line as typed.
        pub line: String,
    }
}

wire! {
    /// The parsed command, or the help text for anything else.
    pub struct CommandResult {
        /// `enter`, `save`, `preview`, `exit`, `status`, `help`; absent when rejected.
        pub command: Option<String>,
        /// The usage text (for `help` and for rejected input).
        pub help: Option<String>,
        /// `PLAN_COMMAND_INVALID` when rejected.
        pub error_code: Option<String>,
    }
}

wire! {
    /// `plans.handoff` (seed 004).
    pub struct HandoffParams {
        /// Session.
        pub session_id: String,
        /// The branch path (approve binds its latest checkpoint).
        #[serde(default)]
        pub branch_path: Vec<String>,
        /// `enter`, `approve`, `accept`, `cancel`, `retry`, `exit`.
        pub action: String,
        /// The capability for `accept`.
        #[serde(default)]
        pub token: Option<String>,
    }
}

wire! {
    /// The handoff state.
    pub struct HandoffResult {
        /// Phase.
        pub phase: HandoffPhase,
        /// The capability issued by `approve` / `retry` (pass it to `accept`).
        pub token: Option<String>,
        /// A pending handoff survived a restart.
        pub restarted: bool,
    }
}

wire! {
    /// `plans.tools` (seed 004 tool drift).
    pub struct ToolsParams {
        /// Session.
        pub session_id: String,
        /// `enter` (record baseline and applied), `observe`, `resolve`, `exit`.
        pub action: String,
        /// The tool set this action is about (observed, applied, or available now).
        pub tools: Vec<String>,
        /// For `enter`: the tools active before Plan mode.
        #[serde(default)]
        pub baseline: Option<Vec<String>>,
    }
}

wire! {
    /// The tool drift state.
    pub struct ToolsResult {
        /// An external change waits for resolution (approval is blocked).
        pub conflict: bool,
        /// For `exit`: what to restore.
        pub restore: Option<Vec<String>>,
    }
}

wire! {
    /// `plans.publications`.
    pub struct PublicationsParams {
        /// Only pending approvals.
        #[serde(default)]
        pub pending: bool,
    }
}

wire! {
    /// Publication approvals, newest first.
    pub struct PublicationList {
        /// The approvals.
        pub publications: Vec<PublicationInfo>,
    }
}

wire! {
    /// `plans.branchSwitched`: what the client's `/tree` cleared.
    pub struct BranchSwitchResult {
        /// Publication approvals revoked because they were bound to the old position.
        pub revoked_publications: Vec<String>,
    }
}

//! Plan checkpoints and capture (seeds 003 and 004), the `/plan` lifecycle, the seed 004
//! handoff and tool drift.

use planhost_core::{
    CheckpointId, CheckpointSource, ContentBlock, EntryId, ErrorCode, ExitOffer, HandoffPhase,
    PlanCommand, PlanId, PublicationId, PublicationState, Resolver, SessionId, StopReason,
    Timestamp, TurnId,
};

use crate::sessions::SessionInfo;

params! {
    /// Names a session and the client's current branch (entry ids, root → leaf).
    pub struct BranchRef {
        /// Session.
        pub session_id: SessionId,
        /// The branch path; its last entry is the current leaf.
        pub branch_path: Vec<EntryId>,
    }
}

params! {
    /// `checkpoints.save`: seed 003's `update_plan_draft`, a complete snapshot, never a patch.
    pub struct SaveCheckpointParams {
        /// Session.
        pub session_id: SessionId,
        /// The branch path; the new checkpoint is anchored at its leaf.
        pub branch_path: Vec<EntryId>,
        /// The complete plan.
        pub markdown: String,
        /// The branch-local revision the caller last saw (0 for none). A stale one is
        /// `CHECKPOINT_REVISION_STALE`, and the message names the current revision.
        pub expected_revision: i64,
    }
}

result! {
    /// A stored checkpoint.
    pub struct CheckpointInfo {
        /// Store id.
        pub checkpoint_id: CheckpointId,
        /// The branch-local revision.
        pub revision: i64,
        /// SHA-256 of the exact bytes.
        pub sha256: String,
        /// Byte size.
        pub size_bytes: i64,
        /// How it arrived.
        pub source: CheckpointSource,
        /// The branch leaf it was created at.
        pub anchor: EntryId,
        /// When.
        pub created_at: Timestamp,
        /// When a person was last shown it (`checkpoints.seen`), if ever; in `plans.get`'s
        /// `lastSeen`, the last showing before the plan arrived.
        pub seen_at: Option<Timestamp>,
        /// The client that showed it then.
        pub seen_by: Option<Resolver>,
    }
}

params! {
    /// `checkpoints.seen`: a person was just shown this checkpoint's exact bytes (pi's
    /// `/plan preview` says so). A plan submitted later is diffed against the checkpoint the
    /// person was shown last before it.
    pub struct SeenCheckpointParams {
        /// Session.
        pub session_id: SessionId,
        /// The checkpoint shown.
        pub checkpoint_id: CheckpointId,
        /// SHA-256 of the bytes shown; must be the checkpoint's.
        pub sha256: String,
    }
}

result! {
    /// `checkpoints.save`.
    pub struct SavedCheckpoint {
        /// The new checkpoint.
        pub checkpoint: CheckpointInfo,
    }
}

result! {
    /// A finished assistant message as the client holds it: whether it began in planning is
    /// the host's fact, decided from the turn.
    pub struct CapturedMessage {
        /// The unique persisted transcript entry holding the message.
        pub entry_id: EntryId,
        /// The content blocks in order.
        pub content: Vec<ContentBlock>,
        /// How the turn ended.
        pub stop_reason: StopReason,
    }
}

params! {
    /// `checkpoints.capture`: offer a final assistant message for `<proposed_plan>` capture.
    pub struct CaptureParams {
        /// Session.
        pub session_id: SessionId,
        /// The turn the message belongs to.
        pub turn_id: TurnId,
        /// The branch path (the message's entry is usually its leaf).
        pub branch_path: Vec<EntryId>,
        /// The message.
        pub message: CapturedMessage,
    }
}

result! {
    /// What capture did.
    pub struct CaptureResult {
        /// The checkpoint, when a plan was captured (offered again: the same checkpoint).
        pub checkpoint: Option<CheckpointInfo>,
        /// True when this call stored it; false when the same entry was captured before.
        pub created: bool,
        /// Why nothing was captured: `CAPTURE_NOT_ELIGIBLE`, `CAPTURE_NO_PLAN` or a delimiter code.
        pub reason: Option<ErrorCode>,
        /// The reason in words.
        pub detail: Option<String>,
        /// The branch's projection right after this call (what `checkpoints.projection` would
        /// return for this branch path now), so the client need not ask again before the next
        /// model call unless the session changed meanwhile; `null` if it could not be read.
        pub projection: Option<ProjectionResult>,
        /// The session's last event `seq` as of that reading: a client that has seen a newer
        /// `state.changed` of the session must not use `projection`.
        pub event_seq: i64,
    }
}

result! {
    /// `checkpoints.latest` (`/plan preview`): the branch's latest exact checkpoint.
    pub struct CheckpointDetail {
        /// The checkpoint.
        pub checkpoint: CheckpointInfo,
        /// The exact bytes.
        pub markdown: String,
    }
}

result! {
    /// `checkpoints.projection`.
    pub struct ProjectionResult {
        /// The exact latest checkpoint, labelled as unapproved data; empty without one.
        pub text: String,
        /// The revision projected, if any.
        pub revision: Option<i64>,
    }
}

result! {
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
        pub plan_id: PlanId,
        /// The handoff phase.
        pub phase: HandoffPhase,
        /// Whether the plan can be come back to: the host's state is always durable, so this is
        /// whether the client declared its own session persisted (not `--no-session`).
        pub persisted: bool,
        /// An external tool change waits for resolution.
        pub tool_conflict: bool,
        /// A pending handoff survived a restart and waits for review, retry or cancel.
        pub handoff_restarted: bool,
        /// The session's name, from the first published plan's `# Plan:` title (seed 003).
        pub session_name: Option<String>,
    }
}

result! {
    /// `plans.exitOptions`: what `/plan exit` offers now (seed 003).
    pub struct ExitOptions {
        /// Exit at once (synced), or the choices with their safe default.
        pub offer: ExitOffer,
    }
}

params! {
    /// `plans.exit`: leave Plan mode without publishing; checkpoints and identity stay.
    pub struct ExitPlanParams {
        /// Session.
        pub session_id: SessionId,
        /// Tools available now, to compute what to restore (the seed 004 drift rule).
        #[serde(default)]
        pub available_tools: Option<Vec<String>>,
    }
}

result! {
    /// What leaving Plan did.
    pub struct ExitPlanResult {
        /// The session, now in Agent.
        pub session: SessionInfo,
        /// Tools to restore (baseline ∩ available now), when `availableTools` was given.
        pub restore_tools: Option<Vec<String>>,
        /// Publication approvals revoked because Plan was left.
        pub revoked_publications: Vec<PublicationId>,
    }
}

params! {
    /// `plans.parseCommand`: parse a typed `/plan …` line with the host's grammar.
    pub struct ParseCommandParams {
        /// The whole line as typed.
        pub line: String,
    }
}

result! {
    /// The parsed command, or the help text for anything else.
    pub struct ParsedCommand {
        /// The command; absent when rejected.
        pub command: Option<PlanCommand>,
        /// The usage text (for `help` and for rejected input).
        pub help: Option<String>,
        /// `PLAN_COMMAND_INVALID` when rejected.
        pub error_code: Option<ErrorCode>,
        /// The arguments completion offers, in order.
        pub completions: Vec<String>,
    }
}

result! {
    /// `plans.switchBranch`: what the client's `/tree` cleared.
    pub struct SwitchBranchResult {
        /// Publication approvals revoked because they were bound to the old position.
        pub revoked_publications: Vec<PublicationId>,
        /// A pending handoff went back to ready.
        pub handoff_cleared: bool,
    }
}

params! {
    /// `handoff.accept`: the client saw the execution prompt start.
    pub struct AcceptHandoffParams {
        /// Session.
        pub session_id: SessionId,
        /// The capability `handoff.approve` or `handoff.retry` issued.
        pub token: String,
    }
}

result! {
    /// The seed 004 handoff state.
    pub struct HandoffInfo {
        /// Phase.
        pub phase: HandoffPhase,
        /// The capability issued by approve / retry (pass it to `handoff.accept`).
        pub token: Option<String>,
        /// A pending handoff survived a restart.
        pub restarted: bool,
    }
}

params! {
    /// `toolset.apply`: the session is in Plan; the host computes the tools Plan makes active
    /// under the session's preset from the tools active before (`baseline`) and every tool
    /// the client offers (with provenance), records both, and returns what to apply.
    pub struct ApplyToolsetParams {
        /// Session.
        pub session_id: SessionId,
        /// The tools active before Plan mode. Ignored when the session already has a recorded
        /// baseline (a restarted client re-applies Plan's set; the pre-Plan set stays).
        pub baseline: Vec<String>,
        /// Every tool the client can activate, with where it comes from.
        pub offered: Vec<OfferedTool>,
    }
}

params! {
    /// One tool a client can activate.
    pub struct OfferedTool {
        /// The tool's name as the model calls it.
        pub name: String,
        /// Where it comes from.
        pub provenance: crate::Provenance,
    }
}

params! {
    /// `toolset.restore`: the session left Plan (an approval, `/plan exit`, a mode change);
    /// the tools to make active again.
    pub struct RestoreToolsetParams {
        /// Session.
        pub session_id: SessionId,
        /// Every tool the client can activate now.
        pub available: Vec<String>,
        /// The tools active now (a tool the person removed during Plan is not restored).
        pub active: Vec<String>,
    }
}

result! {
    /// `toolset.restore`.
    pub struct RestoredToolset {
        /// The tools to make active; `null` when none was recorded (nothing to restore).
        pub tools: Option<Vec<String>>,
    }
}

params! {
    /// `toolset.observe` and `toolset.accept`: the tool set the client sees now.
    pub struct ToolsetParams {
        /// Session.
        pub session_id: SessionId,
        /// The active tools.
        pub tools: Vec<String>,
    }
}

result! {
    /// The tool drift state.
    pub struct ToolsetInfo {
        /// An external change waits for a person (approval is blocked meanwhile).
        pub conflict: bool,
        /// What Plan mode last applied.
        pub applied: Option<Vec<String>>,
        /// The tools active before Plan mode.
        pub baseline: Option<Vec<String>>,
    }
}

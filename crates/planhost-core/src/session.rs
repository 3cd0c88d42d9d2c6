//! The session state machine of seed 000 §3, §4 and §6, as pure functions over a [`SessionView`].
//!
//! The store loads a view inside its transaction, asks one of these functions what may happen,
//! and applies exactly the returned change. Nothing here reads a clock or touches a disk.

use crate::{
    APPROVAL_TTL_MS, ApprovalAction, ApprovalStatus, Blocker, CoreError, ExecutionId,
    ExecutionOutcome, ExecutionState, Interactivity, Mode, PermissionMode, PlanState, ProposalId,
    Result, SessionId, SubmitPlanInput, TargetPermissionMode, Timestamp, ToolCallId, TurnId,
    TurnOrigin,
};

/// The session's running turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActiveTurn {
    /// Turn id.
    pub id: TurnId,
    /// Who started it.
    pub origin: TurnOrigin,
}

/// The identity a pending approval is bound to (seed 000 §3 rule 3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovalIdentity {
    /// Proposal (request) id.
    pub proposal_id: ProposalId,
    /// Owning session.
    pub session_id: SessionId,
    /// The turn in which SubmitPlan was called.
    pub turn_id: TurnId,
    /// The SubmitPlan tool call.
    pub tool_call_id: ToolCallId,
    /// Row version; any change to the row increments it.
    pub version: i64,
}

/// An approval row as the domain needs to see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovalView {
    /// Who it belongs to.
    pub identity: ApprovalIdentity,
    /// `plan_approvals.status`.
    pub status: ApprovalStatus,
    /// Absolute deadline.
    pub expires_at: Timestamp,
    /// SHA-256 of the artifact bytes; approval binds it.
    pub artifact_sha256: String,
}

/// The session's queued or running execution.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveExecution {
    /// Execution id.
    pub id: ExecutionId,
    /// Queued or running.
    pub state: ExecutionState,
    /// The execution turn, once claimed.
    pub turn_id: Option<TurnId>,
}

/// Everything the transitions need to know about one session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionView {
    /// Session id.
    pub id: SessionId,
    /// Durable mode.
    pub mode: Mode,
    /// Live Plan state.
    pub plan_state: PlanState,
    /// Whether a person is present.
    pub interactivity: Interactivity,
    /// The running turn, if any.
    pub active_turn: Option<ActiveTurn>,
    /// The pending approval, if any.
    pub pending: Option<ApprovalView>,
    /// The queued or running execution, if any.
    pub execution: Option<LiveExecution>,
}

/// The state a transition leaves the session in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionState {
    /// Durable mode after the transition.
    pub mode: Mode,
    /// Live Plan state after the transition.
    pub plan_state: PlanState,
}

/// Where a tool call stands in its assistant batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchPosition {
    /// Zero-based index of this call.
    pub index: u32,
    /// Number of tool calls in the batch.
    pub size: u32,
}

impl SessionView {
    fn state(&self) -> SessionState {
        SessionState {
            mode: self.mode,
            plan_state: self.plan_state,
        }
    }

    /// The first thing that keeps the session from being idle, if any.
    pub fn blocker(&self) -> Option<Blocker> {
        if self.active_turn.is_some() {
            Some(Blocker::ActiveTurn)
        } else if self.pending.is_some() {
            Some(Blocker::PendingApproval)
        } else if self.execution.is_some() {
            Some(Blocker::LiveExecution)
        } else {
            None
        }
    }

    fn require_turn(&self, turn_id: &TurnId) -> Result<&ActiveTurn> {
        match &self.active_turn {
            Some(turn) if turn.id == *turn_id => Ok(turn),
            Some(_) | None => Err(CoreError::TurnNotActive {
                turn_id: turn_id.clone(),
            }),
        }
    }

    fn plan_allowed(&self, origin: TurnOrigin) -> Result<()> {
        match (self.interactivity, origin) {
            (Interactivity::Interactive, TurnOrigin::User | TurnOrigin::Execution) => Ok(()),
            (Interactivity::Unattended, _) | (_, TurnOrigin::Scheduled) => {
                Err(CoreError::PlanRequiresInteractive)
            }
        }
    }
}

fn require_alone(tool: &'static str, batch: BatchPosition) -> Result<()> {
    if batch.size == 1 && batch.index == 0 {
        Ok(())
    } else {
        Err(CoreError::ToolNotAlone {
            tool,
            batch_size: batch.size,
        })
    }
}

/// A prompt or scheduled turn may begin only while the session is idle. A scheduled turn, or any
/// turn of an unattended session, is refused in Plan mode before provider work.
pub fn begin_turn(view: &SessionView, origin: TurnOrigin) -> Result<SessionState> {
    if let Some(blocker) = view.blocker() {
        return Err(CoreError::SessionBusy(blocker));
    }
    match origin {
        TurnOrigin::Execution => return Err(CoreError::WrongTurnOrigin(origin)),
        TurnOrigin::User | TurnOrigin::Scheduled => {}
    }
    match view.mode {
        Mode::Agent => Ok(view.state()),
        Mode::Plan => {
            view.plan_allowed(origin)?;
            Ok(SessionState {
                mode: Mode::Plan,
                plan_state: PlanState::Planning,
            })
        }
    }
}

/// What ending or aborting a turn does to the session's other records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnClose {
    /// The session state afterwards.
    pub state: SessionState,
    /// A pending approval raised in this turn that the abort interrupts.
    pub interrupt_approval: Option<ProposalId>,
    /// A running execution whose turn this was, now interrupted.
    pub interrupt_execution: Option<ExecutionId>,
}

/// Ends the active user or scheduled turn normally. A pending approval it raised stays pending.
pub fn end_turn(view: &SessionView, turn_id: &TurnId) -> Result<TurnClose> {
    let turn = view.require_turn(turn_id)?;
    match turn.origin {
        TurnOrigin::Execution => Err(CoreError::WrongTurnOrigin(turn.origin)),
        TurnOrigin::User | TurnOrigin::Scheduled => Ok(TurnClose {
            state: view.state(),
            interrupt_approval: None,
            interrupt_execution: None,
        }),
    }
}

/// Aborts the active turn: an approval it raised becomes `interrupted` and Plan stops; an
/// execution it was running becomes `interrupted` and the session stays in Agent.
pub fn abort_turn(view: &SessionView, turn_id: &TurnId) -> Result<TurnClose> {
    view.require_turn(turn_id)?;
    let interrupt_approval = view
        .pending
        .as_ref()
        .filter(|a| a.identity.turn_id == *turn_id)
        .map(|a| a.identity.proposal_id.clone());
    let interrupt_execution = view
        .execution
        .as_ref()
        .filter(|e| e.turn_id.as_ref() == Some(turn_id))
        .map(|e| e.id.clone());
    let state = if interrupt_approval.is_some() {
        SessionState {
            mode: Mode::Plan,
            plan_state: PlanState::Stopped,
        }
    } else {
        view.state()
    };
    Ok(TurnClose {
        state,
        interrupt_approval,
        interrupt_execution,
    })
}

/// A person selects a mode; accepted only while idle. Selecting the current mode changes nothing.
pub fn set_mode(view: &SessionView, mode: Mode) -> Result<SessionState> {
    if let Some(blocker) = view.blocker() {
        return Err(CoreError::ConfigWhileBusy(blocker));
    }
    match mode {
        Mode::Agent => Ok(SessionState {
            mode,
            plan_state: PlanState::Inactive,
        }),
        Mode::Plan if view.mode == Mode::Plan => Ok(view.state()),
        Mode::Plan => {
            view.plan_allowed(TurnOrigin::User)?;
            Ok(SessionState {
                mode,
                plan_state: PlanState::Planning,
            })
        }
    }
}

/// Provider, model, permission mode, shell or policy preset may change only while idle.
pub fn configure(view: &SessionView) -> Result<()> {
    match view.blocker() {
        Some(blocker) => Err(CoreError::ConfigWhileBusy(blocker)),
        None => Ok(()),
    }
}

/// The agent's EnterPlanMode tool: alone in its batch, inside the active turn, interactive only.
pub fn enter_plan(
    view: &SessionView,
    turn_id: &TurnId,
    batch: BatchPosition,
) -> Result<SessionState> {
    let turn = view.require_turn(turn_id)?;
    require_alone(crate::HostTool::EnterPlanMode.as_str(), batch)?;
    view.plan_allowed(turn.origin)?;
    if view.pending.is_some() {
        return Err(CoreError::ApprovalAlreadyPending);
    }
    if view.execution.is_some() {
        return Err(CoreError::SessionBusy(Blocker::LiveExecution));
    }
    Ok(SessionState {
        mode: Mode::Plan,
        plan_state: PlanState::Planning,
    })
}

/// What an accepted SubmitPlan records, besides the artifact the host writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SubmitDecision {
    /// The session state once the approval row exists.
    pub state: SessionState,
    /// The absolute deadline: creation + 30 minutes.
    pub expires_at: Timestamp,
}

/// SubmitPlan, checked in the order of seed 000 §4: interactivity first, before any artifact,
/// approval or queue work; then turn, batch, mode, the one-pending rule and the input.
pub fn submit_plan(
    view: &SessionView,
    turn_id: &TurnId,
    batch: BatchPosition,
    input: &SubmitPlanInput,
    now: Timestamp,
) -> Result<SubmitDecision> {
    let turn = view.require_turn(turn_id)?;
    view.plan_allowed(turn.origin)?;
    match turn.origin {
        TurnOrigin::User | TurnOrigin::Scheduled => {}
        TurnOrigin::Execution => return Err(CoreError::WrongTurnOrigin(turn.origin)),
    }
    require_alone(crate::HostTool::SubmitPlan.as_str(), batch)?;
    if view.mode != Mode::Plan {
        return Err(CoreError::PlanModeNotActive);
    }
    if view.pending.is_some() {
        return Err(CoreError::ApprovalAlreadyPending);
    }
    if view.execution.is_some() {
        return Err(CoreError::SessionBusy(Blocker::LiveExecution));
    }
    input.validate()?;
    Ok(SubmitDecision {
        state: SessionState {
            mode: Mode::Plan,
            plan_state: PlanState::AwaitingApproval,
        },
        expires_at: now.plus_ms(APPROVAL_TTL_MS),
    })
}

/// A request to resolve a pending approval (seed 000 §6 `PlanResolveRequest`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolveRequest {
    /// Proposal id.
    pub proposal_id: ProposalId,
    /// Must match the proposal's session.
    pub session_id: SessionId,
    /// Must match the proposal's turn.
    pub turn_id: TurnId,
    /// Must match the proposal's SubmitPlan tool call.
    pub tool_call_id: ToolCallId,
    /// When present, must equal the row version.
    pub version: Option<i64>,
    /// When present, must equal the artifact's SHA-256.
    pub artifact_sha256: Option<String>,
    /// Approve or reject.
    pub action: ApprovalAction,
    /// Only for approve; `ask` when absent.
    pub target_permission_mode: Option<TargetPermissionMode>,
}

/// The outcome of a resolve request that matched its proposal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resolution {
    /// Approved: the single transaction of §6.
    Approve {
        /// Agent / inactive.
        state: SessionState,
        /// The explicit permission mode stored on the session.
        permission_mode: PermissionMode,
        /// The selected target, as recorded on the row.
        target: TargetPermissionMode,
    },
    /// Rejected: no permission mode, the session stays in Plan.
    Reject {
        /// Plan / stopped.
        state: SessionState,
    },
    /// The deadline had passed: record `expired`, then report [`CoreError::ApprovalTimeout`].
    Expire {
        /// Plan / stopped.
        state: SessionState,
    },
}

/// Matches a resolve request against the approval and decides. Any identity mismatch is a stale
/// request and changes nothing; a late request expires the approval instead of resolving it.
pub fn resolve(
    view: &SessionView,
    approval: &ApprovalView,
    request: &ResolveRequest,
    now: Timestamp,
) -> Result<Resolution> {
    let id = &approval.identity;
    if request.proposal_id != id.proposal_id {
        return Err(CoreError::ApprovalStale {
            field: "proposalId",
        });
    }
    if request.session_id != id.session_id || view.id != id.session_id {
        return Err(CoreError::ApprovalStale { field: "sessionId" });
    }
    if request.turn_id != id.turn_id {
        return Err(CoreError::ApprovalStale { field: "turnId" });
    }
    if request.tool_call_id != id.tool_call_id {
        return Err(CoreError::ApprovalStale {
            field: "toolCallId",
        });
    }
    if request.version.is_some_and(|v| v != id.version) {
        return Err(CoreError::ApprovalStale { field: "version" });
    }
    // A hex digest: its case carries no meaning.
    if request
        .artifact_sha256
        .as_ref()
        .is_some_and(|d| !d.eq_ignore_ascii_case(&approval.artifact_sha256))
    {
        return Err(CoreError::ApprovalStale {
            field: "artifactSha256",
        });
    }
    if approval.status != ApprovalStatus::Pending {
        return Err(CoreError::ApprovalNotPending(approval.status));
    }
    if request.action == ApprovalAction::Reject && request.target_permission_mode.is_some() {
        return Err(CoreError::ResolveInvalid(
            "reject takes no targetPermissionMode",
        ));
    }
    let stopped = SessionState {
        mode: Mode::Plan,
        plan_state: PlanState::Stopped,
    };
    if now >= approval.expires_at {
        return Ok(Resolution::Expire { state: stopped });
    }
    match request.action {
        ApprovalAction::Approve => {
            let target = request
                .target_permission_mode
                .unwrap_or(TargetPermissionMode::Ask);
            Ok(Resolution::Approve {
                state: SessionState {
                    mode: Mode::Agent,
                    plan_state: PlanState::Inactive,
                },
                permission_mode: target.into(),
                target,
            })
        }
        ApprovalAction::Reject => Ok(Resolution::Reject { state: stopped }),
    }
}

/// The timer's view of expiry: a pending approval whose deadline has passed expires and Plan stops.
pub fn expire(approval: &ApprovalView, now: Timestamp) -> Option<SessionState> {
    (approval.status == ApprovalStatus::Pending && now >= approval.expires_at).then_some(
        SessionState {
            mode: Mode::Plan,
            plan_state: PlanState::Stopped,
        },
    )
}

/// The worker claims the queued execution; it starts the execution turn.
pub fn claim_execution(view: &SessionView, execution_id: &ExecutionId) -> Result<()> {
    let execution = match &view.execution {
        Some(e) if e.id == *execution_id => e,
        Some(_) | None => return Err(CoreError::ExecutionNotFound(execution_id.clone())),
    };
    if execution.state != ExecutionState::Queued {
        return Err(CoreError::ExecutionStateInvalid(execution.state));
    }
    if view.active_turn.is_some() {
        return Err(CoreError::SessionBusy(Blocker::ActiveTurn));
    }
    if view.mode != Mode::Agent {
        // Approval commits Agent before execution begins (§3 rule 6); anything else is corrupt.
        return Err(CoreError::ExecutionStateInvalid(execution.state));
    }
    Ok(())
}

/// Finishes the live execution: running → completed or interrupted; queued → interrupted only.
pub fn finish_execution(
    view: &SessionView,
    execution_id: &ExecutionId,
    outcome: ExecutionOutcome,
) -> Result<()> {
    let execution = match &view.execution {
        Some(e) if e.id == *execution_id => e,
        Some(_) | None => return Err(CoreError::ExecutionNotFound(execution_id.clone())),
    };
    match (execution.state, outcome) {
        (ExecutionState::Running, _) | (ExecutionState::Queued, ExecutionOutcome::Interrupted) => {
            Ok(())
        }
        (ExecutionState::Queued, ExecutionOutcome::Completed)
        | (ExecutionState::Completed | ExecutionState::Interrupted, _) => {
            Err(CoreError::ExecutionStateInvalid(execution.state))
        }
    }
}

#[cfg(test)]
#[path = "session_tests.rs"]
mod tests;

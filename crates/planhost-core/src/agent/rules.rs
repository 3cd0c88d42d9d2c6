//! The Plan-mode lifecycle of every agent, as one pure function: an agent event and the session
//! as it is now → the steps the host takes, in order, and what it answers. The service runs the
//! steps in one job (`agent.event`); faces only translate (DESIGN decision 13).

use crate::{ApprovalStatus, ExecutionState, Mode, TurnOrigin};

use super::profile::{AgentProfile, AskWay};

wire_enum! {
    #[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
    /// Why a session (re)started, as the agent reports it.
    SessionSource {
        /// A new session.
        Startup = "startup",
        /// An earlier session resumed (`claude --resume`, `pi -c`).
        Resume = "resume",
        /// The conversation was cleared (`/clear`).
        Clear = "clear",
        /// The conversation was compacted: the model lost what planhost holds.
        Compact = "compact",
        /// A copy of another session (a new session id).
        Fork = "fork",
        /// The agent reloaded its extensions (pi's `/reload`).
        Reload = "reload",
    }
}

wire_enum! {
    #[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
    /// The agent's own mode as its event reports it (Claude Code's `permission_mode`).
    AgentMode {
        /// The agent says it is planning.
        Plan = "plan",
        /// The agent says it is not planning.
        NotPlan = "not_plan",
    }
}

wire_enum! {
    #[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
    /// Why a session ended, as the agent reports it.
    SessionEndReason {
        /// The person cleared the conversation; a new session follows.
        Clear = "clear",
        /// The person left, or the run ended.
        Exit = "exit",
        /// Anything else the agent says.
        Other = "other",
    }
}

/// The session as the rules see it, read in the job that acts on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AgentView {
    /// The durable mode.
    pub mode: Mode,
    /// The running turn's origin, if a turn runs.
    pub turn: Option<TurnOrigin>,
    /// Whether a plan waits for a person's answer.
    pub pending: bool,
    /// The queued or running execution's state, if any.
    pub execution: Option<ExecutionState>,
    /// Whether a person is at the agent now (the connection's face as it is now, not how the
    /// session began).
    pub attended: bool,
}

/// An agent event, as the rules see it: its kind and what the host established about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventFacts {
    /// The session started, resumed, was cleared, compacted or forked.
    SessionStarted {
        /// Why.
        source: SessionSource,
    },
    /// A person's prompt (or the face's own message) starts a run.
    PromptSubmitted {
        /// The agent's own mode, when it says.
        agent_mode: Option<AgentMode>,
        /// The prompt is a seed 004 handoff this face dispatched.
        handoff: bool,
    },
    /// The agent proposes a tool call (not the agent's plan offer: see `PlanOffered`).
    ToolProposed {
        /// The tool enters Plan mode (`EnterPlanMode`).
        enters_plan: bool,
        /// The tool only reads or searches files (it changes nothing, runs nothing).
        reads_only: bool,
    },
    /// A tool the agent ran itself finished.
    ToolFinished {
        /// It wrote the agent's own plan draft.
        draft: bool,
        /// planhost's ask for it was shown in the agent's own dialog, so it ran on a yes there.
        asked_in_dialog: bool,
    },
    /// The agent offers a plan for approval.
    PlanOffered {
        /// The plan holds no text.
        empty: bool,
        /// What became of the approval this very call raised before, if it did (the agent asks
        /// again: `claude -p --resume`, a repeated `ExitPlanMode`).
        earlier: Option<ApprovalStatus>,
    },
    /// The agent saved its plan draft (`update_plan_draft`).
    DraftWritten,
    /// An assistant message finished: searched for a `<proposed_plan>` block.
    MessageFinished,
    /// The face learned that a plan was answered, expired or interrupted.
    PlanAnswered {
        /// What became of it.
        status: ApprovalStatus,
    },
    /// The agent's run stopped.
    TurnStopped {
        /// Aborted by the person (Escape) rather than finished.
        aborted: bool,
    },
    /// The agent's session ended.
    SessionEnded {
        /// Why.
        reason: SessionEndReason,
    },
}

/// One thing the host does for an event, in the order listed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// The running user turn was never reported ended (the person pressed Escape): it ends as
    /// aborted, so whatever it raised is interrupted, never granted.
    AbortStaleTurn,
    /// The running turn ends: an execution's completed, any other's normally.
    EndTurn,
    /// The running turn ends as aborted (an execution's as interrupted).
    AbortTurn,
    /// The seed 004 handoff this prompt carries is accepted (Plan mode ends).
    AcceptHandoff,
    /// A turn begins for this prompt.
    BeginTurn,
    /// A turn begins unless one runs (a tool outside any turn: hooks installed mid-session, or
    /// a prompt hook that failed).
    EnsureTurn,
    /// The agent's own plan mode puts the session in Plan.
    EnterPlan,
    /// The queued execution starts: the asking turn (not an execution's) ends, then the
    /// execution is claimed and its turn begins.
    ClaimExecution,
    /// The plan becomes an immutable artifact with a pending approval.
    SubmitPlan,
    /// The draft's text becomes the branch's next checkpoint.
    SaveDraft,
    /// The message is searched for a `<proposed_plan>` block.
    Capture,
    /// `tools.authorize` decides the call.
    Authorize,
    /// The call enters Plan mode, if the policy allowed it (the agent's `EnterPlanMode`: what
    /// the agent runs next is Plan's).
    EnterPlanIfAllowed,
    /// The ask for this call is recorded as answered yes in the agent's own dialog.
    AnswerAskInDialog,
    /// A read allowed while a plan waits is recorded in the audit log.
    RecordWaitingRead,
    /// The call's grant is void.
    FinishTool,
    /// The session is marked ended (kept, and reopened by any later event of it).
    EndSession,
}

/// What the host answers, once the steps ran; the sentences are [`super::words`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// Nothing to say.
    Proceed,
    /// Session start after a compaction or a resume: the mode and the plan that matters now.
    SessionContext,
    /// The execution of an approved plan started: the model gets the exact plan.
    CarryOut,
    /// The execution's turn goes on with this prompt.
    ExecutionContinues,
    /// A prompt while a plan waits for a person: the model is told not to start, the person
    /// where to answer.
    PlanWaiting,
    /// A tool call while a plan waits and no turn is on: held.
    HeldWhileWaiting,
    /// A read while a plan waits and no turn is on: it runs (it changes nothing).
    ReadWhileWaiting,
    /// A second plan offered while another waits: held.
    AlreadyWaiting,
    /// The agent left its own plan mode, planhost did not.
    PlanStillOn,
    /// The session entered Plan by the agent's own mode.
    PlanEntered,
    /// The policy's decision, mapped to what this agent can do.
    Decision,
    /// The plan was submitted and waits for a person.
    PlanSubmitted,
    /// This call's plan was answered (or is still waiting).
    PlanAnswer(ApprovalStatus),
    /// A plan offered in Agent mode: leaving the agent's plan mode is allowed.
    LeavePlanMode,
    /// The plan holds no text.
    PlanEmpty,
    /// The draft became a checkpoint.
    DraftSaved,
    /// The message was searched for a plan.
    Captured,
    /// The turn ended.
    TurnEnded,
    /// The session ended.
    SessionEnded,
    /// The tool call is done.
    ToolDone,
    /// A plan was answered elsewhere: the person is told how, the model what it needs.
    Answered(ApprovalStatus),
}

/// The steps and the answer for one event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// In order.
    pub steps: Vec<Step>,
    /// What is answered once they ran.
    pub answer: Answer,
}

fn plan(steps: Vec<Step>, answer: Answer) -> Plan {
    Plan { steps, answer }
}

/// The lifecycle: what the host does for `event` in the session `view`, for the agent
/// `profile`.
pub fn lifecycle(profile: &AgentProfile, view: &AgentView, event: EventFacts) -> Plan {
    use Step as S;
    let execution_turn = view.turn == Some(TurnOrigin::Execution);
    match event {
        EventFacts::SessionStarted { source } => match source {
            SessionSource::Compact | SessionSource::Resume => plan(vec![], Answer::SessionContext),
            SessionSource::Startup
            | SessionSource::Clear
            | SessionSource::Fork
            | SessionSource::Reload => plan(vec![], Answer::Proceed),
        },
        EventFacts::PromptSubmitted {
            agent_mode,
            handoff,
        } => {
            // The approved plan's execution goes on with this prompt (a resumed run continues
            // it; a person redirecting the work stays within what they approved).
            if execution_turn {
                return plan(vec![], Answer::ExecutionContinues);
            }
            let mut steps = Vec::new();
            if view.turn.is_some() {
                steps.push(S::AbortStaleTurn);
            }
            if handoff {
                steps.push(S::AcceptHandoff);
            }
            // A plan a person approved while the agent waited: this prompt carries it out.
            if view.execution == Some(ExecutionState::Queued) {
                steps.push(S::ClaimExecution);
                return plan(steps, Answer::CarryOut);
            }
            if view.pending {
                return plan(steps, Answer::PlanWaiting);
            }
            steps.push(S::BeginTurn);
            match (agent_mode, view.mode) {
                (Some(AgentMode::Plan), Mode::Agent) if profile.signals_plan_mode => {
                    steps.push(S::EnterPlan);
                    plan(steps, Answer::PlanEntered)
                }
                (Some(AgentMode::NotPlan), Mode::Plan) if profile.signals_plan_mode && !handoff => {
                    plan(steps, Answer::PlanStillOn)
                }
                (Some(AgentMode::Plan | AgentMode::NotPlan) | None, Mode::Agent | Mode::Plan) => {
                    plan(steps, Answer::Proceed)
                }
            }
        }
        EventFacts::ToolProposed {
            enters_plan,
            reads_only,
        } => {
            // While a plan waits and no turn is on (the person has not answered), only reads
            // run: they change nothing, and the person may ask about the plan meanwhile.
            if view.turn.is_none() && view.pending {
                return if reads_only {
                    plan(vec![S::RecordWaitingRead], Answer::ReadWhileWaiting)
                } else {
                    plan(vec![], Answer::HeldWhileWaiting)
                };
            }
            let mut steps = vec![S::EnsureTurn, S::Authorize];
            if enters_plan {
                steps.push(S::EnterPlanIfAllowed);
            }
            plan(steps, Answer::Decision)
        }
        EventFacts::ToolFinished {
            draft,
            asked_in_dialog,
        } => {
            let mut steps = Vec::new();
            if draft && view.mode == Mode::Plan {
                steps.push(S::SaveDraft);
            }
            if asked_in_dialog {
                steps.push(S::AnswerAskInDialog);
            }
            steps.push(S::FinishTool);
            plan(steps, Answer::ToolDone)
        }
        EventFacts::PlanOffered { empty, earlier } => {
            if let Some(status) = earlier {
                let steps = match status {
                    ApprovalStatus::Approved => vec![S::ClaimExecution],
                    ApprovalStatus::Pending
                    | ApprovalStatus::Rejected
                    | ApprovalStatus::Expired
                    | ApprovalStatus::Interrupted => vec![],
                };
                return plan(steps, Answer::PlanAnswer(status));
            }
            if view.mode == Mode::Agent {
                // Approved earlier and asked again to leave the agent's plan mode, or never in
                // Plan: leaving gives nothing planhost would deny.
                let steps = if view.execution == Some(ExecutionState::Queued) {
                    vec![S::ClaimExecution]
                } else {
                    vec![]
                };
                return plan(steps, Answer::LeavePlanMode);
            }
            if view.pending {
                return plan(vec![], Answer::AlreadyWaiting);
            }
            if empty {
                return plan(vec![], Answer::PlanEmpty);
            }
            plan(vec![S::EnsureTurn, S::SubmitPlan], Answer::PlanSubmitted)
        }
        EventFacts::DraftWritten => plan(vec![S::SaveDraft], Answer::DraftSaved),
        EventFacts::PlanAnswered { status } => plan(vec![], Answer::Answered(status)),
        EventFacts::MessageFinished => {
            if profile.offer.captures_blocks && view.turn.is_some() {
                plan(vec![S::Capture], Answer::Captured)
            } else {
                plan(vec![], Answer::Proceed)
            }
        }
        EventFacts::TurnStopped { aborted } => {
            let steps = match (view.turn.is_some(), aborted) {
                (false, _) => vec![],
                (true, false) => vec![S::EndTurn],
                (true, true) => vec![S::AbortTurn],
            };
            plan(steps, Answer::TurnEnded)
        }
        // The agent is exiting: the turn ends normally, so a plan it submitted stays pending
        // for a person (a resumed session picks up the answer). An agent that is killed says
        // nothing; its next prompt aborts the turn.
        EventFacts::SessionEnded { reason } => {
            let mut steps = Vec::new();
            if view.turn.is_some() {
                steps.push(S::EndTurn);
            }
            // A cleared conversation is gone for good: its session leaves the lists, unless a
            // plan or an execution still holds it.
            if reason == SessionEndReason::Clear && !view.pending && view.execution.is_none() {
                steps.push(S::EndSession);
            }
            plan(steps, Answer::SessionEnded)
        }
    }
}

/// What an ask becomes for this agent now: shown in the face's dialog, forced into the agent's
/// own dialog, or refused because nobody can answer it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AskOutcome {
    /// The face asks the person itself (pi).
    FaceDialog,
    /// The agent's own dialog asks (Claude Code's `ask`).
    AgentDialog,
    /// Nobody is at the session: refused, never left to run.
    Unattended,
    /// The agent cannot ask at all: refused with a way forward.
    CannotAsk,
}

/// How an ask is carried to a person for `profile` in `view`.
pub fn ask_outcome(profile: &AgentProfile, view: &AgentView) -> AskOutcome {
    match profile.ask {
        AskWay::Cannot => AskOutcome::CannotAsk,
        AskWay::FaceDialog | AskWay::AgentDialog if !view.attended => AskOutcome::Unattended,
        AskWay::FaceDialog => AskOutcome::FaceDialog,
        AskWay::AgentDialog => AskOutcome::AgentDialog,
    }
}

/// How a plan offer is held while it waits: refused with the reason (the model stops and the
/// person answers), or deferred (an unattended agent that can defer ends its run and asks
/// again when resumed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitOutcome {
    /// Refused, with the reason: stop and wait.
    Refuse,
    /// Deferred.
    Defer,
    /// The offer is reported as done (the face's own tool returns the sentence).
    Report,
}

/// How a waiting plan holds the agent's offer, for `profile` in `view`.
pub fn wait_outcome(profile: &AgentProfile, view: &AgentView) -> WaitOutcome {
    if !profile.offer.at_proposal {
        WaitOutcome::Report
    } else if profile.defers && !view.attended {
        WaitOutcome::Defer
    } else {
        WaitOutcome::Refuse
    }
}

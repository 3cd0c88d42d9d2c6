//! The lifecycle, event by event, for each agent: one table row per case.

use super::*;
use crate::{Agent, ApprovalStatus, ErrorCode, ExecutionState as X, Mode, TurnOrigin as T};
use pretty_assertions::assert_eq;

use Step as S;

/// A session as the rules see it: mode, turn, pending, execution, attended.
fn view(mode: Mode, turn: Option<T>, pending: bool, execution: Option<X>) -> AgentView {
    AgentView {
        mode,
        turn,
        pending,
        execution,
        attended: true,
    }
}

fn prompt(agent_mode: Option<AgentMode>) -> EventFacts {
    EventFacts::PromptSubmitted {
        agent_mode,
        handoff: false,
    }
}

fn offer(earlier: Option<ApprovalStatus>) -> EventFacts {
    EventFacts::PlanOffered {
        empty: false,
        earlier,
    }
}

/// `(case, agents, view, event, steps, answer)`: the same answer for every agent listed.
type Row = (
    &'static str,
    &'static [Agent],
    AgentView,
    EventFacts,
    &'static [Step],
    Answer,
);

const ALL: &[Agent] = &[Agent::Pi, Agent::ClaudeCode, Agent::Codex, Agent::GeminiCli];
const SIGNALLING: &[Agent] = &[Agent::ClaudeCode, Agent::Codex, Agent::GeminiCli];

fn rows() -> Vec<Row> {
    use Mode::{Agent as A, Plan as P};
    vec![
        (
            "a new session says nothing",
            ALL,
            view(A, None, false, None),
            EventFacts::SessionStarted {
                source: SessionSource::Startup,
            },
            &[],
            Answer::Proceed,
        ),
        (
            "after a compaction the model is told the plan that matters",
            ALL,
            view(P, None, true, None),
            EventFacts::SessionStarted {
                source: SessionSource::Compact,
            },
            &[],
            Answer::SessionContext,
        ),
        (
            "resume too",
            ALL,
            view(P, None, false, None),
            EventFacts::SessionStarted {
                source: SessionSource::Resume,
            },
            &[],
            Answer::SessionContext,
        ),
        (
            "a prompt begins a turn",
            ALL,
            view(A, None, false, None),
            prompt(None),
            &[S::BeginTurn],
            Answer::Proceed,
        ),
        (
            "a turn never reported ended (Escape) is aborted first",
            ALL,
            view(P, Some(T::User), false, None),
            prompt(None),
            &[S::AbortStaleTurn, S::BeginTurn],
            Answer::Proceed,
        ),
        (
            "the execution's turn goes on with the next prompt",
            ALL,
            view(A, Some(T::Execution), false, Some(X::Running)),
            prompt(None),
            &[],
            Answer::ExecutionContinues,
        ),
        (
            "an approval given while the agent waited: the prompt carries it out",
            ALL,
            view(A, None, false, Some(X::Queued)),
            prompt(None),
            &[S::ClaimExecution],
            Answer::CarryOut,
        ),
        (
            "the stale turn that asked is aborted before the approved execution is claimed",
            ALL,
            view(A, Some(T::User), false, Some(X::Queued)),
            prompt(None),
            &[S::AbortStaleTurn, S::ClaimExecution],
            Answer::CarryOut,
        ),
        (
            "a prompt while a plan waits begins nothing",
            ALL,
            view(P, None, true, None),
            prompt(None),
            &[],
            Answer::PlanWaiting,
        ),
        (
            "the agent's own plan mode puts the session in Plan",
            SIGNALLING,
            view(A, None, false, None),
            prompt(Some(AgentMode::Plan)),
            &[S::BeginTurn, S::EnterPlan],
            Answer::PlanEntered,
        ),
        (
            "pi reports no mode of its own: nothing is entered by it",
            &[Agent::Pi],
            view(A, None, false, None),
            prompt(Some(AgentMode::Plan)),
            &[S::BeginTurn],
            Answer::Proceed,
        ),
        (
            "leaving the agent's plan mode never leaves planhost's",
            SIGNALLING,
            view(P, None, false, None),
            prompt(Some(AgentMode::NotPlan)),
            &[S::BeginTurn],
            Answer::PlanStillOn,
        ),
        (
            "a handoff prompt is accepted before its turn begins",
            &[Agent::Pi],
            view(P, None, false, None),
            EventFacts::PromptSubmitted {
                agent_mode: None,
                handoff: true,
            },
            &[S::AcceptHandoff, S::BeginTurn],
            Answer::Proceed,
        ),
        (
            "a tool call is authorized in its turn",
            ALL,
            view(P, Some(T::User), false, None),
            EventFacts::ToolProposed {
                enters_plan: false,
                reads_only: false,
            },
            &[S::EnsureTurn, S::Authorize],
            Answer::Decision,
        ),
        (
            "EnterPlanMode enters Plan once the policy allows it",
            ALL,
            view(A, Some(T::User), false, None),
            EventFacts::ToolProposed {
                enters_plan: true,
                reads_only: false,
            },
            &[S::EnsureTurn, S::Authorize, S::EnterPlanIfAllowed],
            Answer::Decision,
        ),
        (
            "a tool call outside any turn gets one",
            ALL,
            view(A, None, false, None),
            EventFacts::ToolProposed {
                enters_plan: false,
                reads_only: false,
            },
            &[S::EnsureTurn, S::Authorize],
            Answer::Decision,
        ),
        (
            "nothing runs while a plan waits and no turn is on",
            ALL,
            view(P, None, true, None),
            EventFacts::ToolProposed {
                enters_plan: false,
                reads_only: false,
            },
            &[],
            Answer::HeldWhileWaiting,
        ),
        (
            "but reads run while a plan waits",
            ALL,
            view(P, None, true, None),
            EventFacts::ToolProposed {
                enters_plan: false,
                reads_only: true,
            },
            &[S::RecordWaitingRead],
            Answer::ReadWhileWaiting,
        ),
        (
            "a plan is submitted",
            ALL,
            view(P, Some(T::User), false, None),
            offer(None),
            &[S::EnsureTurn, S::SubmitPlan],
            Answer::PlanSubmitted,
        ),
        (
            "an empty plan is refused",
            ALL,
            view(P, Some(T::User), false, None),
            EventFacts::PlanOffered {
                empty: true,
                earlier: None,
            },
            &[],
            Answer::PlanEmpty,
        ),
        (
            "a second plan while one waits is held",
            ALL,
            view(P, Some(T::User), true, None),
            offer(None),
            &[],
            Answer::AlreadyWaiting,
        ),
        (
            "the same call offered again while it waits",
            ALL,
            view(P, None, true, None),
            offer(Some(ApprovalStatus::Pending)),
            &[],
            Answer::PlanAnswer(ApprovalStatus::Pending),
        ),
        (
            "the same call offered again once approved starts the execution",
            ALL,
            view(A, Some(T::User), false, Some(X::Queued)),
            offer(Some(ApprovalStatus::Approved)),
            &[S::ClaimExecution],
            Answer::PlanAnswer(ApprovalStatus::Approved),
        ),
        (
            "rejected: refused with the note, still in Plan",
            ALL,
            view(P, Some(T::User), false, None),
            offer(Some(ApprovalStatus::Rejected)),
            &[],
            Answer::PlanAnswer(ApprovalStatus::Rejected),
        ),
        (
            "an interrupted approval is never a yes",
            ALL,
            view(P, Some(T::User), false, None),
            offer(Some(ApprovalStatus::Interrupted)),
            &[],
            Answer::PlanAnswer(ApprovalStatus::Interrupted),
        ),
        (
            "a plan offered in Agent mode leaves the agent's plan mode",
            ALL,
            view(A, Some(T::User), false, None),
            offer(None),
            &[],
            Answer::LeavePlanMode,
        ),
        (
            "the agent's draft is saved in Plan",
            ALL,
            view(P, Some(T::User), false, None),
            EventFacts::ToolFinished {
                draft: true,
                asked_in_dialog: false,
            },
            &[S::SaveDraft, S::FinishTool],
            Answer::ToolDone,
        ),
        (
            "a draft-looking write outside Plan is only finished",
            ALL,
            view(A, Some(T::User), false, None),
            EventFacts::ToolFinished {
                draft: true,
                asked_in_dialog: false,
            },
            &[S::FinishTool],
            Answer::ToolDone,
        ),
        (
            "a call that ran after the agent's dialog asked: answered yes there",
            ALL,
            view(P, Some(T::User), false, None),
            EventFacts::ToolFinished {
                draft: false,
                asked_in_dialog: true,
            },
            &[S::AnswerAskInDialog, S::FinishTool],
            Answer::ToolDone,
        ),
        (
            "pi's update_plan_draft",
            ALL,
            view(P, Some(T::User), false, None),
            EventFacts::DraftWritten,
            &[S::SaveDraft],
            Answer::DraftSaved,
        ),
        (
            "pi and Codex capture <proposed_plan> blocks",
            &[Agent::Pi, Agent::Codex],
            view(P, Some(T::User), false, None),
            EventFacts::MessageFinished,
            &[S::Capture],
            Answer::Captured,
        ),
        (
            "Claude Code and Gemini CLI offer plans by tool, not by block",
            &[Agent::ClaudeCode, Agent::GeminiCli],
            view(P, Some(T::User), false, None),
            EventFacts::MessageFinished,
            &[],
            Answer::Proceed,
        ),
        (
            "a run stops: its turn ends",
            ALL,
            view(P, Some(T::User), false, None),
            EventFacts::TurnStopped { aborted: false },
            &[S::EndTurn],
            Answer::TurnEnded,
        ),
        (
            "an aborted run's turn is aborted",
            ALL,
            view(P, Some(T::User), true, None),
            EventFacts::TurnStopped { aborted: true },
            &[S::AbortTurn],
            Answer::TurnEnded,
        ),
        (
            "a stop without a turn does nothing",
            ALL,
            view(P, None, true, None),
            EventFacts::TurnStopped { aborted: false },
            &[],
            Answer::TurnEnded,
        ),
        (
            "an exit ends the turn normally: a waiting plan survives it",
            ALL,
            view(P, Some(T::User), true, None),
            EventFacts::SessionEnded {
                reason: SessionEndReason::Exit,
            },
            &[S::EndTurn],
            Answer::SessionEnded,
        ),
        (
            "a cleared conversation's session leaves the lists",
            ALL,
            view(P, None, false, None),
            EventFacts::SessionEnded {
                reason: SessionEndReason::Clear,
            },
            &[S::EndSession],
            Answer::SessionEnded,
        ),
        (
            "unless a plan still waits in it",
            ALL,
            view(P, None, true, None),
            EventFacts::SessionEnded {
                reason: SessionEndReason::Clear,
            },
            &[],
            Answer::SessionEnded,
        ),
    ]
}

#[test]
fn the_lifecycle_event_by_event_for_every_agent() {
    for (case, agents, view, event, steps, answer) in rows() {
        for agent in agents {
            let plan = lifecycle(agent.profile(), &view, event);
            assert_eq!(
                (plan.steps.as_slice(), plan.answer),
                (steps, answer),
                "{case} ({agent})"
            );
        }
    }
}

fn plan_facts(status: ApprovalStatus) -> words::PlanFacts<'static> {
    words::PlanFacts {
        proposal_id: "019a2b3c-0000-7000-8000-00000000abcd1234",
        title: "Tidy the logs",
        relative_path: ".planhost/plan/tidy-the-logs-019a.md",
        status,
        feedback: Some("keep the rotation"),
        mode: None,
        error_code: None,
    }
}

fn attended(attended: bool) -> AgentView {
    AgentView {
        attended,
        ..view(Mode::Plan, Some(T::User), false, None)
    }
}

#[test]
fn an_ask_is_carried_as_each_agent_can() {
    use crate::PolicyRule::PlanHostShellMayChange as R;
    let id = crate::AskId::from("ask-1");
    let ask = ReplyFacts {
        verdict: Some(PolicyVerdict::Ask {
            rule: crate::PolicyRule::PlanHostShellMayChange,
            reason: "Plan mode: `rm -rf build` may change files",
            request_id: &id,
            default_answer: crate::PermissionDecision::Deny,
        }),
        shell_call: true,
        ..ReplyFacts::default()
    };
    let kind = |agent: Agent, person: bool| {
        let r = reply_for(agent.profile(), &attended(person), Answer::Decision, &ask);
        (r.directive.kind, r.directive.rule, r.directive.code)
    };
    let asked = |rule| (DirectiveKind::Ask, RuleId::Policy(rule), None);
    let no_person = |rule| {
        (
            DirectiveKind::Deny,
            RuleId::Lifecycle(rule),
            Some(ErrorCode::PermissionNoPerson),
        )
    };
    assert_eq!(kind(Agent::Pi, true), asked(R));
    assert_eq!(kind(Agent::ClaudeCode, true), asked(R));
    assert_eq!(kind(Agent::GeminiCli, true), asked(R));
    // Nobody to ask: refused, never left to run (and never "the person said no").
    assert_eq!(
        kind(Agent::Pi, false),
        no_person(LifecycleRule::AskUnattended)
    );
    assert_eq!(
        kind(Agent::ClaudeCode, false),
        no_person(LifecycleRule::AskUnattended)
    );
    // Codex cannot ask at all.
    assert_eq!(
        kind(Agent::Codex, true),
        no_person(LifecycleRule::AskUnsupported)
    );
    // The agent's own dialog shows planhost's reason and routes the command through planhost.
    let claude = reply_for(
        Agent::ClaudeCode.profile(),
        &attended(true),
        Answer::Decision,
        &ask,
    );
    assert!(claude.directive.route_shell);
    assert!(
        claude
            .directive
            .reason
            .is_some_and(|r| r.starts_with("planhost, Plan mode: `rm -rf build` may change files."))
    );
    // pi's own dialog answers the host's ask, Deny first.
    let pi = reply_for(Agent::Pi.profile(), &attended(true), Answer::Decision, &ask);
    assert_eq!(pi.directive.request_id, Some(id.clone()));
    assert_eq!(
        pi.directive.default_answer,
        Some(crate::PermissionDecision::Deny)
    );
}

#[test]
fn a_submitted_plan_is_held_as_each_agent_can() {
    let plan = plan_facts(ApprovalStatus::Pending);
    let facts = ReplyFacts {
        this_plan: Some(plan),
        ..ReplyFacts::default()
    };
    let held = |agent: Agent, person: bool| {
        reply_for(
            agent.profile(),
            &attended(person),
            Answer::PlanSubmitted,
            &facts,
        )
    };
    // Claude Code attended: the offer is refused, so the model stops; the person is told where
    // to answer, with the id the CLI takes (the random end of the id).
    let claude = held(Agent::ClaudeCode, true);
    assert_eq!(claude.directive.kind, DirectiveKind::Deny);
    let person = claude.notice.map(|n| n.text).unwrap_or_default();
    assert!(person.contains("planhost approve abcd1234"), "{person}");
    assert!(person.contains("then tell Claude to continue"), "{person}");
    // Headless Claude Code defers.
    assert_eq!(
        held(Agent::ClaudeCode, false).directive.kind,
        DirectiveKind::Defer
    );
    // pi's SubmitPlan tool reports it; the same model sentence.
    let pi = held(Agent::Pi, true);
    assert_eq!(pi.directive.kind, DirectiveKind::Proceed);
    assert!(
        pi.context
            .as_deref()
            .is_some_and(|c| c.starts_with("planhost saved this plan as .planhost/plan/"))
    );
}

#[test]
fn a_rejection_reaches_the_model_with_its_note() {
    let facts = ReplyFacts {
        this_plan: Some(plan_facts(ApprovalStatus::Rejected)),
        ..ReplyFacts::default()
    };
    for agent in [Agent::Pi, Agent::ClaudeCode] {
        let r = reply_for(
            agent.profile(),
            &attended(true),
            Answer::PlanAnswer(ApprovalStatus::Rejected),
            &facts,
        );
        assert_eq!(r.directive.kind, DirectiveKind::Deny, "{agent}");
        assert!(
            r.directive
                .reason
                .is_some_and(|t| t.contains("Their note: keep the rotation")),
            "{agent}"
        );
    }
    // On the next prompt, a plan answered while the agent waited reaches the model once.
    let untold = ReplyFacts {
        untold: Some(plan_facts(ApprovalStatus::Rejected)),
        ..ReplyFacts::default()
    };
    let r = reply_for(
        Agent::ClaudeCode.profile(),
        &attended(true),
        Answer::Proceed,
        &untold,
    );
    assert!(
        r.context
            .is_some_and(|c| c.contains("Their note: keep the rotation"))
    );
}

#[test]
fn every_directive_names_its_rule() {
    // Every answer, with no facts at all, still answers with a rule (never a bare default).
    let answers = [
        Answer::Proceed,
        Answer::SessionContext,
        Answer::CarryOut,
        Answer::ExecutionContinues,
        Answer::PlanWaiting,
        Answer::HeldWhileWaiting,
        Answer::ReadWhileWaiting,
        Answer::AlreadyWaiting,
        Answer::PlanStillOn,
        Answer::PlanEntered,
        Answer::Decision,
        Answer::PlanSubmitted,
        Answer::PlanAnswer(ApprovalStatus::Expired),
        Answer::LeavePlanMode,
        Answer::PlanEmpty,
        Answer::DraftSaved,
        Answer::Captured,
        Answer::TurnEnded,
        Answer::SessionEnded,
        Answer::ToolDone,
    ];
    for answer in answers {
        let r = reply_for(
            Agent::ClaudeCode.profile(),
            &attended(true),
            answer,
            &ReplyFacts::default(),
        );
        assert!(!r.directive.rule.as_str().is_empty(), "{answer:?}");
    }
}

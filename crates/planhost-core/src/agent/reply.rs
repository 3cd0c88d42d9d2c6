//! What `agent.event` answers once its steps ran: the [`Answer`] of [`super::lifecycle`] and the
//! facts the steps established, made into one [`Reply`] with [`super::words`]' sentences.

use crate::{AskId, ErrorCode, Mode, PermissionDecision, PolicyRule};

use super::directive::{
    Directive, DirectiveKind as K, LifecycleRule as L, Notice, NoticeLevel, Reply,
};
use super::profile::AgentProfile;
use super::rules::{AgentView, Answer, AskOutcome, WaitOutcome, ask_outcome, wait_outcome};
use super::words::{self, CarryFacts, ContextPlan, PlanFacts};

/// The policy's decision on a proposed tool call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PolicyVerdict<'a> {
    /// Run it.
    Allow {
        /// The rule.
        rule: PolicyRule,
        /// Why.
        reason: &'a str,
    },
    /// Refuse it.
    Deny {
        /// The rule.
        rule: PolicyRule,
        /// Why.
        reason: &'a str,
        /// The stable code.
        code: ErrorCode,
    },
    /// A person first.
    Ask {
        /// The rule.
        rule: PolicyRule,
        /// What the person is asked.
        reason: &'a str,
        /// The host's ask.
        request_id: &'a AskId,
        /// The answer offered first.
        default_answer: PermissionDecision,
    },
}

/// What the steps established, for the sentences.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReplyFacts<'a> {
    /// The session's waiting plan.
    pub waiting: Option<PlanFacts<'a>>,
    /// The plan this event is about: raised by this call, now or before.
    pub this_plan: Option<PlanFacts<'a>>,
    /// The approved plan whose execution this event started.
    pub claimed: Option<CarryFacts<'a>>,
    /// The session's last plan, answered after its last turn began: the model was never told
    /// (the person answered on the page or the CLI while the agent waited).
    pub untold: Option<PlanFacts<'a>>,
    /// What the model is told after a compaction or on resume.
    pub context: Option<ContextPlan<'a>>,
    /// The policy's decision.
    pub verdict: Option<PolicyVerdict<'a>>,
    /// The call is a shell call of an agent whose shell planhost runs.
    pub shell_call: bool,
    /// The checkpoint a draft became: its revision and SHA-256.
    pub saved: Option<(i64, &'a str)>,
    /// The checkpoint a capture made, and whether it is new.
    pub captured: Option<(i64, bool)>,
    /// Where the plan's answer came from, in a person's words ("on the web page").
    pub answered_by: Option<&'a str>,
    /// The agent's own session id (for the command that resumes it).
    pub external_session: Option<&'a str>,
}

fn notice(text: String, level: NoticeLevel) -> Option<Notice> {
    Some(Notice { text, level })
}

fn reply(directive: Directive, context: Option<String>, notice: Option<Notice>) -> Reply {
    Reply {
        directive,
        context,
        notice,
    }
}

fn proceed(rule: L) -> Reply {
    reply(Directive::proceed(rule), None, None)
}

fn deny(rule: impl Into<super::RuleId>, reason: String, code: Option<ErrorCode>) -> Directive {
    let mut d = Directive::new(K::Deny, rule, Some(reason));
    d.code = code;
    d
}

/// The reply for `answer`, given what the steps established.
pub fn reply_for(
    profile: &AgentProfile,
    view: &AgentView,
    answer: Answer,
    facts: &ReplyFacts<'_>,
) -> Reply {
    match answer {
        Answer::Proceed => {
            // A plan answered while the agent waited, which the model has not heard of.
            let context = facts
                .untold
                .map(|plan| words::not_approved(profile, &plan))
                .filter(|s| !s.is_empty());
            reply(Directive::proceed(L::TurnBegun), context, None)
        }
        Answer::SessionContext => match &facts.context {
            Some(plan) => reply(
                Directive::proceed(L::SessionContext),
                Some(words::session_context(profile, plan)),
                None,
            ),
            None => proceed(L::SessionOpened),
        },
        Answer::CarryOut => reply(
            Directive::proceed(L::ExecutionClaimed),
            facts.claimed.map(|c| words::carry_out(profile, &c)),
            None,
        ),
        Answer::ExecutionContinues => proceed(L::ExecutionContinues),
        Answer::PlanWaiting => waiting(profile, facts),
        Answer::HeldWhileWaiting => held(profile, view, facts, words::nothing_runs_while_waiting),
        Answer::ReadWhileWaiting => reply(
            Directive::new(
                K::Allow,
                crate::PolicyRule::PlanWaitingRead,
                Some(words::READ_WHILE_WAITING.into()),
            ),
            None,
            None,
        ),
        Answer::AlreadyWaiting => held(profile, view, facts, words::already_waiting),
        Answer::PlanStillOn => reply(
            Directive::proceed(L::PlanStillOn),
            Some(words::plan_still_on(profile)),
            notice(words::plan_still_on_notice(profile), NoticeLevel::Warning),
        ),
        Answer::PlanEntered => proceed(L::PlanEnteredByAgentMode),
        Answer::Decision => decision(profile, view, facts),
        Answer::PlanSubmitted => submitted(profile, view, facts),
        Answer::PlanAnswer(status) => plan_answer(profile, view, status, facts),
        Answer::LeavePlanMode => reply(
            Directive::new(
                K::Allow,
                L::AgentModeLeft,
                Some(words::AGENT_MODE_LEAVE.into()),
            ),
            facts.claimed.map(|c| words::carry_out(profile, &c)),
            None,
        ),
        Answer::PlanEmpty => reply(
            deny(
                L::PlanEmpty,
                words::plan_empty(profile),
                Some(ErrorCode::InvalidParams),
            ),
            None,
            None,
        ),
        Answer::DraftSaved => reply(
            Directive::proceed(L::DraftSaved),
            facts.saved.map(|(rev, sha)| words::draft_saved(rev, sha)),
            None,
        ),
        Answer::Captured => reply(
            Directive::proceed(L::MessageCaptured),
            None,
            facts
                .captured
                .filter(|(_, created)| *created)
                .and_then(|(rev, _)| notice(words::captured_notice(rev), NoticeLevel::Info)),
        ),
        Answer::TurnEnded => proceed(L::TurnEnded),
        Answer::SessionEnded => proceed(L::SessionEnded),
        Answer::ToolDone => proceed(L::ToolFinished),
        Answer::Answered(status) => answered(profile, status, facts),
    }
}

/// A plan answered elsewhere: the person reads how; the model reads a rejection's note (a
/// rejection without one waits for the person to say what to change).
fn answered(
    profile: &AgentProfile,
    status: crate::ApprovalStatus,
    facts: &ReplyFacts<'_>,
) -> Reply {
    use crate::ApprovalStatus as S;
    let rule = match status {
        S::Approved => L::PlanApproved,
        S::Rejected => L::PlanRejected,
        S::Expired => L::PlanExpired,
        S::Interrupted => L::PlanInterrupted,
        S::Pending => L::PlanWaiting,
    };
    let Some(plan) = facts.this_plan else {
        return proceed(rule);
    };
    let level = match status {
        S::Approved | S::Pending => NoticeLevel::Info,
        S::Rejected | S::Expired | S::Interrupted => NoticeLevel::Warning,
    };
    let with_note = status == S::Rejected && plan.feedback.is_some_and(|f| !f.trim().is_empty());
    reply(
        Directive::proceed(rule),
        with_note.then(|| words::not_approved(profile, &plan)),
        notice(words::answered_notice(&plan, facts.answered_by), level),
    )
}

/// A prompt while a plan waits: the model does not start, the person learns where to answer.
fn waiting(profile: &AgentProfile, facts: &ReplyFacts<'_>) -> Reply {
    let Some(plan) = facts.waiting else {
        return proceed(L::PlanWaiting);
    };
    reply(
        Directive::proceed(L::PlanWaiting),
        Some(words::waiting_for_model(&plan)),
        notice(
            format!("planhost: {}", words::waiting_for_person(profile, &plan)),
            NoticeLevel::Info,
        ),
    )
}

/// A tool call or a second offer while a plan waits: held.
fn held(
    profile: &AgentProfile,
    view: &AgentView,
    facts: &ReplyFacts<'_>,
    why: fn(&AgentProfile, &PlanFacts<'_>) -> String,
) -> Reply {
    let Some(plan) = facts.waiting else {
        return proceed(L::PlanWaiting);
    };
    let reason = why(profile, &plan);
    let person = notice(
        format!("planhost: {}", words::waiting_for_person(profile, &plan)),
        NoticeLevel::Info,
    );
    hold(profile, view, facts, &plan, reason, person)
}

/// A plan offer or a tool call held while a plan waits: refused with the reason, or deferred.
fn hold(
    profile: &AgentProfile,
    view: &AgentView,
    facts: &ReplyFacts<'_>,
    plan: &PlanFacts<'_>,
    reason: String,
    person: Option<Notice>,
) -> Reply {
    match wait_outcome(profile, view) {
        WaitOutcome::Defer => reply(
            Directive::new(K::Defer, L::PlanWaiting, Some(words::DEFERRED.into())),
            None,
            notice(
                words::deferred_notice(
                    profile,
                    plan,
                    facts.external_session.unwrap_or("<session>"),
                ),
                NoticeLevel::Info,
            ),
        ),
        WaitOutcome::Refuse | WaitOutcome::Report => reply(
            deny(L::PlanWaiting, reason, Some(ErrorCode::SessionNotIdle)),
            None,
            person,
        ),
    }
}

fn submitted(profile: &AgentProfile, view: &AgentView, facts: &ReplyFacts<'_>) -> Reply {
    let Some(plan) = facts.this_plan else {
        return proceed(L::PlanSubmitted);
    };
    let model = words::submitted(profile, &plan);
    let person = notice(words::submitted_notice(profile, &plan), NoticeLevel::Info);
    match wait_outcome(profile, view) {
        // The face's own tool reports the submission to the model.
        // The person's notice goes with it: a face that shows its own dialog says it when the
        // person dismisses that dialog.
        WaitOutcome::Report => reply(Directive::proceed(L::PlanSubmitted), Some(model), person),
        WaitOutcome::Defer => reply(
            Directive::new(K::Defer, L::PlanSubmitted, Some(words::DEFERRED.into())),
            None,
            notice(
                words::deferred_notice(
                    profile,
                    &plan,
                    facts.external_session.unwrap_or("<session>"),
                ),
                NoticeLevel::Info,
            ),
        ),
        // The offer itself is refused: the model stops, and reads why.
        WaitOutcome::Refuse => reply(deny(L::PlanSubmitted, model, None), None, person),
    }
}

fn plan_answer(
    profile: &AgentProfile,
    view: &AgentView,
    status: crate::ApprovalStatus,
    facts: &ReplyFacts<'_>,
) -> Reply {
    use crate::ApprovalStatus as S;
    let Some(plan) = facts.this_plan else {
        return proceed(L::PlanWaiting);
    };
    match status {
        S::Pending => {
            let person = notice(
                format!("planhost: {}", words::waiting_for_person(profile, &plan)),
                NoticeLevel::Info,
            );
            hold(
                profile,
                view,
                facts,
                &plan,
                words::already_waiting(profile, &plan),
                person,
            )
        }
        S::Approved => reply(
            Directive::new(
                K::Allow,
                L::PlanApproved,
                Some(words::approved_leave(&plan)),
            ),
            facts.claimed.map(|c| words::carry_out(profile, &c)),
            None,
        ),
        S::Rejected | S::Expired | S::Interrupted => {
            let rule = match status {
                S::Rejected => L::PlanRejected,
                S::Expired => L::PlanExpired,
                S::Pending | S::Approved | S::Interrupted => L::PlanInterrupted,
            };
            let code = match status {
                S::Expired => Some(ErrorCode::PlanApprovalTimeout),
                S::Interrupted => plan.error_code,
                S::Pending | S::Approved | S::Rejected => None,
            };
            reply(
                deny(rule, words::not_approved(profile, &plan), code),
                None,
                None,
            )
        }
    }
}

fn decision(profile: &AgentProfile, view: &AgentView, facts: &ReplyFacts<'_>) -> Reply {
    let Some(verdict) = facts.verdict else {
        return proceed(L::ToolFinished);
    };
    match verdict {
        PolicyVerdict::Allow { rule, reason } => {
            let mut d = Directive::new(K::Allow, rule, Some(words::allowed(reason)));
            d.route_shell = facts.shell_call;
            reply(d, None, None)
        }
        PolicyVerdict::Deny { rule, reason, code } => reply(
            deny(rule, words::denied(reason, Some(code.as_str())), Some(code)),
            None,
            None,
        ),
        PolicyVerdict::Ask {
            rule,
            reason,
            request_id,
            default_answer,
        } => match ask_outcome(profile, view) {
            AskOutcome::FaceDialog => {
                let mut d = Directive::new(K::Ask, rule, Some(reason.to_owned()));
                d.request_id = Some(request_id.clone());
                d.default_answer = Some(default_answer);
                reply(d, None, None)
            }
            AskOutcome::AgentDialog => {
                let mut d = Directive::new(
                    K::Ask,
                    rule,
                    Some(words::ask_in_agent_dialog(reason, view.mode == Mode::Plan)),
                );
                d.route_shell = facts.shell_call;
                d.request_id = Some(request_id.clone());
                d.default_answer = Some(default_answer);
                reply(d, None, None)
            }
            AskOutcome::Unattended => reply(
                deny(
                    L::AskUnattended,
                    words::ask_unattended(profile, reason),
                    Some(ErrorCode::PermissionNoPerson),
                ),
                None,
                None,
            ),
            AskOutcome::CannotAsk => reply(
                deny(
                    L::AskUnsupported,
                    words::ask_unsupported(profile, reason),
                    Some(ErrorCode::PermissionNoPerson),
                ),
                None,
                None,
            ),
        },
    }
}

//! Every sentence the model or the person reads about the Plan-mode lifecycle, in one place, so
//! that pi, Claude Code, Codex, Gemini CLI and the page say the same thing in the same words.
//! Each function takes plain facts and the agent's profile; none reads state.

use crate::{ApprovalStatus, ErrorCode, TargetPermissionMode, short_id};

use super::profile::AgentProfile;

/// One plan, as the sentences need it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlanFacts<'a> {
    /// Its proposal id.
    pub proposal_id: &'a str,
    /// Its title.
    pub title: &'a str,
    /// Its artifact, relative to the workspace root.
    pub relative_path: &'a str,
    /// Its status.
    pub status: ApprovalStatus,
    /// The person's note, for a rejection.
    pub feedback: Option<&'a str>,
    /// The permission mode an approval chose.
    pub mode: Option<TargetPermissionMode>,
    /// Why it ended, for an expiry or an interruption.
    pub error_code: Option<ErrorCode>,
}

/// An approved plan whose execution starts: what the model carries out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CarryFacts<'a> {
    /// Its title.
    pub title: &'a str,
    /// The permission mode the person chose.
    pub mode: &'a str,
    /// The artifact's absolute path.
    pub path: &'a str,
    /// Its SHA-256.
    pub sha256: &'a str,
    /// The exact approved bytes.
    pub markdown: &'a str,
}

/// What the model is told of the session's plan after a compaction or on resume.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContextPlan<'a> {
    /// It carries out an approved plan.
    CarryingOut(CarryFacts<'a>),
    /// A plan waits for the person.
    Waiting {
        /// Its title.
        title: &'a str,
        /// Its exact text.
        markdown: &'a str,
    },
    /// Its latest draft, newer than any plan it submitted.
    Draft {
        /// The checkpoint's revision.
        revision: i64,
        /// Its exact text.
        markdown: &'a str,
    },
    /// The last plan it submitted, not approved.
    Last {
        /// The plan.
        plan: PlanFacts<'a>,
        /// Its exact text.
        markdown: &'a str,
    },
    /// In Plan with no plan yet.
    Nothing,
}

/// The person's command lines for a waiting plan, and the agent's own way to answer it.
fn answer_commands(profile: &AgentProfile, proposal_id: &str) -> String {
    let id = short_id(proposal_id);
    let here = profile
        .answer_here
        .map(|way| format!(", or {way}"))
        .unwrap_or_default();
    format!(
        "Approve it with `planhost approve {id}` (add `--mode accept-edits` or `--mode auto` to \
         let the work edit without asking), reject it with `planhost reject {id} --feedback \
         \"…\"`, or answer on planhost's web page (`planhost web`){here}"
    )
}

/// The person's notice while a plan waits: how to answer it, and where.
pub fn waiting_for_person(profile: &AgentProfile, plan: &PlanFacts<'_>) -> String {
    format!(
        "the plan \"{}\" waits for your answer in planhost, for 30 minutes from when it was \
         submitted. {}; {}.",
        plan.title,
        answer_commands(profile, plan.proposal_id),
        profile.continue_hint
    )
}

/// The person's notice when a run ends with its plan deferred (nobody was at the agent): the
/// plan, where to answer, and the exact command that goes on.
pub fn deferred_notice(profile: &AgentProfile, plan: &PlanFacts<'_>, session: &str) -> String {
    let id = short_id(plan.proposal_id);
    let resume = profile
        .resume_command
        .map(|c| format!(" Then go on with: {}", c.replace("{session}", session)))
        .unwrap_or_default();
    format!(
        "planhost: the plan \"{}\" ({id}) waits for your answer, for 30 minutes. {}.{resume}",
        plan.title,
        answer_commands(profile, plan.proposal_id)
    )
}

/// The model's instruction while a plan waits and a prompt arrives.
pub fn waiting_for_model(plan: &PlanFacts<'_>) -> String {
    let id = short_id(plan.proposal_id);
    format!(
        "planhost: the plan \"{}\" waits for the person's answer in planhost. Do not start on it \
         and do not run tools: tell the person to approve or reject it (`planhost approve {id}`, \
         `planhost reject {id}`, or planhost's web page), then wait.",
        plan.title
    )
}

/// A read let through while a plan waits.
pub const READ_WHILE_WAITING: &str =
    "planhost allowed it: a plan waits for the person's answer, and reads run meanwhile";

/// The refusal of a tool call while a plan waits and no turn is on.
pub fn nothing_runs_while_waiting(profile: &AgentProfile, plan: &PlanFacts<'_>) -> String {
    format!(
        "planhost holds the plan \"{}\" for a person's answer: until they give it, only reads \
         run, and this call does more than read [{}]. Stop here and wait. For the person: {}",
        plan.title,
        ErrorCode::SessionNotIdle.as_str(),
        waiting_for_person(profile, plan)
    )
}

/// The refusal of a second plan while one waits.
pub fn already_waiting(profile: &AgentProfile, plan: &PlanFacts<'_>) -> String {
    format!(
        "planhost already holds the plan \"{}\" for a person's answer: stop here and wait for \
         them. For the person: {}",
        plan.title,
        waiting_for_person(profile, plan)
    )
}

/// What the model is told once its plan is submitted.
pub fn submitted(profile: &AgentProfile, plan: &PlanFacts<'_>) -> String {
    let person = if profile.offer.at_proposal {
        format!(" For the person: {}", waiting_for_person(profile, plan))
    } else {
        String::new()
    };
    format!(
        "planhost saved this plan as {} and holds it for a person's approval: stop here, edit \
         nothing, and wait for their answer.{person}",
        plan.relative_path
    )
}

/// The person's notice once a plan is submitted.
pub fn submitted_notice(profile: &AgentProfile, plan: &PlanFacts<'_>) -> String {
    format!("planhost: {}", waiting_for_person(profile, plan))
}

/// What the model is told once a person approved its plan and the execution starts.
pub fn carry_out(profile: &AgentProfile, plan: &CarryFacts<'_>) -> String {
    let leave = match (profile.offer.at_proposal, profile.offer.tool) {
        (true, Some(tool)) => format!(
            " Leave plan mode with {tool} if {} is still in it, then implement exactly this plan.",
            profile.display_name
        ),
        (true | false, _) => String::new(),
    };
    format!(
        "planhost: the person approved the plan \"{}\" (permission mode {}). Plan mode has ended: \
         carry out this approved plan now.{leave} It is exactly as submitted ({}, sha256 {}):\n\n{}",
        plan.title, plan.mode, plan.path, plan.sha256, plan.markdown
    )
}

/// The model's reminder when the agent left its own plan mode but planhost did not.
pub fn plan_still_on(profile: &AgentProfile) -> String {
    format!(
        "planhost (which enforces this session's mode) still has this session in Plan mode: do \
         not edit files or run commands that change anything; explore, then present a plan{} for \
         the person to approve.",
        offer_with(profile)
    )
}

/// The person's notice when the agent left its own plan mode but planhost did not.
pub fn plan_still_on_notice(profile: &AgentProfile) -> String {
    format!(
        "planhost: this session is still in Plan mode, whatever {}'s mode says: files and \
         commands that change things stay blocked until a plan is approved (`planhost plans`, \
         `planhost approve`, or the web page).",
        profile.display_name
    )
}

/// " with ExitPlanMode", or nothing for an agent without a plan tool.
fn offer_with(profile: &AgentProfile) -> String {
    profile
        .offer
        .tool
        .map(|t| format!(" with {t}"))
        .unwrap_or_default()
}

/// What the model is told when an answered plan's offer comes again (or, on the next prompt,
/// what became of its plan): rejected, expired or interrupted, never approved.
pub fn not_approved(profile: &AgentProfile, plan: &PlanFacts<'_>) -> String {
    let again = offer_with(profile);
    match plan.status {
        ApprovalStatus::Rejected => {
            let note = plan
                .feedback
                .map(str::trim)
                .filter(|f| !f.is_empty())
                .map(|f| format!(" Their note: {f}"))
                .unwrap_or_default();
            format!(
                "The person rejected the plan \"{}\" in planhost.{note} You are still in Plan \
                 mode: revise the plan, then present it again{again}.",
                plan.title
            )
        }
        ApprovalStatus::Expired => format!(
            "Nobody answered the plan \"{}\" before its deadline [{}]. You are still in Plan \
             mode: present it again{again} when the person is there.",
            plan.title,
            ErrorCode::PlanApprovalTimeout.as_str()
        ),
        ApprovalStatus::Interrupted => format!(
            "The approval of the plan \"{}\" was interrupted (the turn that asked was stopped, \
             or planhost restarted){}; it was never approved. Present it again{again}.",
            plan.title,
            plan.error_code
                .map(|c| format!(" [{}]", c.as_str()))
                .unwrap_or_default()
        ),
        ApprovalStatus::Pending | ApprovalStatus::Approved => String::new(),
    }
}

/// The person's notice when their plan was answered elsewhere or ended.
pub fn answered_notice(plan: &PlanFacts<'_>, by: Option<&str>) -> String {
    let by = by.map(|b| format!(" by {b}")).unwrap_or_default();
    match plan.status {
        ApprovalStatus::Approved => format!(
            "planhost: the plan \"{}\" was approved{by} (permission mode {}); the execution \
             starts now.",
            plan.title,
            plan.mode.map_or("ask", TargetPermissionMode::as_str)
        ),
        ApprovalStatus::Rejected => {
            let note = plan
                .feedback
                .map(str::trim)
                .filter(|f| !f.is_empty())
                .map(|f| format!(" (\"{f}\")"))
                .unwrap_or_default();
            let next = if note.is_empty() {
                "Plan mode stays on: tell the model what to change."
            } else {
                "Plan mode stays on; the note went to the model."
            };
            format!(
                "planhost: the plan \"{}\" was rejected{by}{note}. {next}",
                plan.title
            )
        }
        ApprovalStatus::Expired => format!(
            "planhost: nobody answered the plan \"{}\" within 30 minutes, so it expired [{}]. \
             Plan mode stays on: ask the model to submit it again.",
            plan.title,
            plan.error_code
                .unwrap_or(ErrorCode::PlanApprovalTimeout)
                .as_str()
        ),
        ApprovalStatus::Interrupted => format!(
            "planhost: the approval of \"{}\" was interrupted ({}): the host stopped before anyone \
             answered, and nothing was replayed. Ask the model to submit the plan again.",
            plan.title,
            plan.error_code.unwrap_or(ErrorCode::HostRestarted).as_str()
        ),
        ApprovalStatus::Pending => format!("planhost: the plan \"{}\" still waits.", plan.title),
    }
}

/// Where an answer came from, in a person's words, for "approved by …".
pub fn answered_via(via: crate::AnswerSurface, client: &str) -> String {
    use crate::AnswerSurface as S;
    match via {
        S::AgentDialog => "you in the agent's own dialog".into(),
        S::FaceDialog if client == "pi-planhost" => "you in pi".into(),
        S::FaceDialog => format!("you in {client}"),
        S::Terminal => "the planhost CLI in a terminal".into(),
        S::Client => format!("the client {client}"),
        S::WebPage => "the web page".into(),
        S::Embedded => format!("the app {client}"),
    }
}

/// An approved plan's offer, let through so the agent leaves its own plan mode.
pub fn approved_leave(plan: &PlanFacts<'_>) -> String {
    format!(
        "planhost: the person approved the plan (permission mode {})",
        plan.mode.map_or("ask", TargetPermissionMode::as_str)
    )
}

/// A plan offered outside Plan mode.
pub const AGENT_MODE_LEAVE: &str = "planhost: this session is in Agent mode; leaving plan mode";

/// A plan offered with no text.
pub fn plan_empty(profile: &AgentProfile) -> String {
    let write = if profile.draft.is_some() {
        "write the plan to the plan file you were given"
    } else {
        "write the plan out in full"
    };
    format!(
        "planhost received no plan{}: {write}, then offer it again [{}]",
        offer_with(profile),
        ErrorCode::InvalidParams.as_str()
    )
}

/// A held plan offer under an agent that defers (the run ends; resume to go on).
pub const DEFERRED: &str = "planhost holds the plan for a person's approval (`planhost plans`, \
                            `planhost approve`, or the web page); resume this session once they \
                            answered";

/// What the model is told after a compaction or on resume.
pub fn session_context(profile: &AgentProfile, plan: &ContextPlan<'_>) -> String {
    let with = offer_with(profile);
    match plan {
        ContextPlan::CarryingOut(c) => format!(
            "planhost: you are carrying out the plan \"{}\", which the person approved \
             (permission mode {}). It is, exactly:\n\n{}",
            c.title, c.mode, c.markdown
        ),
        ContextPlan::Waiting { title, markdown } => format!(
            "planhost: this session is in Plan mode, and the plan \"{title}\" waits for the \
             person's answer in planhost. It is not approved: do not act on it, and edit \
             nothing. It is, exactly:\n\n{markdown}"
        ),
        ContextPlan::Draft { revision, markdown } => format!(
            "planhost: this session is in Plan mode: explore, edit nothing but your plan file, \
             and present the plan{with}. Your latest draft (revision {revision}), not approved, \
             is, exactly:\n\n{markdown}"
        ),
        ContextPlan::Last { plan, markdown } => {
            let note = plan
                .feedback
                .map(|f| format!(", with the note: {f}"))
                .unwrap_or_default();
            format!(
                "planhost: this session is in Plan mode: explore, edit nothing, and present a \
                 plan{with}. The last plan, \"{}\", was {}{note}; it is not approved. It was, \
                 exactly:\n\n{markdown}",
                plan.title,
                plan.status.as_str()
            )
        }
        ContextPlan::Nothing => format!(
            "planhost (which enforces this session's mode) has this session in Plan mode: do not \
             edit files or run commands that change anything; explore, then present a plan{with} \
             for the person to approve."
        ),
    }
}

/// A tool call's allow, as the agent shows it.
pub fn allowed(reason: &str) -> String {
    format!("planhost allowed it: {reason}")
}

/// A tool call's denial, as the model reads it.
pub fn denied(reason: &str, code: Option<&str>) -> String {
    match code {
        Some(code) => format!("planhost denied it: {reason} [{code}]"),
        None => format!("planhost denied it: {reason}"),
    }
}

/// An ask in the agent's own dialog, as the person reads it there.
pub fn ask_in_agent_dialog(reason: &str, plan_mode: bool) -> String {
    // The host's reason may name the mode itself; it is said once.
    let reason = reason.trim_end_matches('.');
    if plan_mode {
        format!(
            "planhost, Plan mode: {}. Plan mode runs unasked only what planhost can prove \
             read-only; answer Yes only if you want it to run now.",
            reason.trim_start_matches("Plan mode: ")
        )
    } else {
        format!("planhost asks: {reason}. Answer Yes only if you want it to run now.")
    }
}

/// An ask nobody can answer: refused, with the way forward.
pub fn ask_unattended(profile: &AgentProfile, reason: &str) -> String {
    format!(
        "planhost would ask a person before this runs ({}), and no person can be asked here \
         ({} is running without one, as under `-p`): refused [{}]. To let such calls run \
         without asking, choose a permission mode that allows them (`planhost mode \
         accept-edits` or `auto`; add `--session <id>` for one session), or approve the plan \
         with `--mode accept-edits`; or run it where a person can answer.",
        reason.trim_end_matches('.'),
        profile.display_name,
        ErrorCode::PermissionNoPerson.as_str()
    )
}

/// An ask the agent has no way to show: refused, with the way forward.
pub fn ask_unsupported(profile: &AgentProfile, reason: &str) -> String {
    format!(
        "planhost would ask a person before this runs ({}), and {} cannot ask: refused [{}]. To \
         let such calls run without asking, choose a permission mode that allows them \
         (`planhost mode accept-edits` or `auto`; add `--session <id>` for one session), or \
         approve the plan with `--mode accept-edits`.",
        reason.trim_end_matches('.'),
        profile.display_name,
        ErrorCode::PermissionNoPerson.as_str()
    )
}

/// A draft saved as a checkpoint, as the model reads it.
pub fn draft_saved(revision: i64, sha256: &str) -> String {
    format!("Saved as revision {revision} (sha256 {sha256}).")
}

/// A plan captured from a `<proposed_plan>` block, as the person reads it.
pub fn captured_notice(revision: i64) -> String {
    format!(
        "planhost: the proposed plan was captured as revision {revision}. /plan --review hands \
         it to execution."
    )
}

/// A plan's title: its first heading (a `Plan:` prefix dropped), else its first line, at most
/// 80 characters; `Plan` when it has none. The one title rule for plans a face does not title.
pub fn plan_title_of(markdown: &str) -> String {
    let line = markdown
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with('#'))
        .or_else(|| markdown.lines().map(str::trim).find(|l| !l.is_empty()))
        .unwrap_or("Plan");
    let title = line.trim_start_matches('#').trim();
    let title = title.strip_prefix("Plan:").map_or(title, str::trim);
    let title: String = title.chars().take(80).collect();
    if title.is_empty() {
        "Plan".into()
    } else {
        title
    }
}

/// The question a plan offered without one asks.
pub const DEFAULT_QUESTION: &str = "Shall I implement this plan?";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plan_is_titled_by_its_first_heading() {
        assert_eq!(plan_title_of("# Plan: greet\n\n1. x\n"), "greet");
        assert_eq!(plan_title_of("intro\n## Tidy the logs\n"), "Tidy the logs");
        assert_eq!(plan_title_of("just text\nmore\n"), "just text");
        assert_eq!(plan_title_of("#\n"), "Plan");
        assert_eq!(
            plan_title_of(&format!("# {}", "x".repeat(200)))
                .chars()
                .count(),
            80
        );
    }
}

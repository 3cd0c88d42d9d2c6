//! One Plan-mode core for every agent (DESIGN decision 13). An agent's face (pi's extension, a
//! hook codec) translates what its agent reports into an agent event; the host's `agent.event`
//! reads the session, asks [`lifecycle`] what to do for the agent's [`AgentProfile`], runs the
//! steps in one job, and answers with [`reply_for`]: one [`Directive`] with the rule that
//! produced it, what the model is told and what the person is told, in [`words`]' sentences.
//!
//! ```
//! use planhost_core::{
//!     Agent, AgentView, Answer, EventFacts, Mode, Step, TurnOrigin, lifecycle,
//! };
//!
//! // Claude Code's next prompt after the person pressed Escape while a turn ran: the stale
//! // turn is aborted (whatever it raised is interrupted, never granted), then a turn begins.
//! let view = AgentView {
//!     mode: Mode::Plan,
//!     turn: Some(TurnOrigin::User),
//!     pending: false,
//!     execution: None,
//!     attended: true,
//! };
//! let prompt = EventFacts::PromptSubmitted { agent_mode: None, handoff: false };
//! let plan = lifecycle(Agent::ClaudeCode.profile(), &view, prompt);
//! assert_eq!(plan.steps, [Step::AbortStaleTurn, Step::BeginTurn]);
//! assert_eq!(plan.answer, Answer::Proceed);
//! ```

mod directive;
mod profile;
mod reply;
mod rules;
pub mod words;

#[cfg(test)]
mod tests;

pub use directive::{Directive, DirectiveKind, LifecycleRule, Notice, NoticeLevel, Reply, RuleId};
pub use profile::{
    AgentProfile, AskWay, DraftLocation, HookFailure, PlanDirs, PlanOffer, ShellInput, ShellRoute,
};
pub use reply::{PolicyVerdict, ReplyFacts, reply_for};
pub use rules::{
    AgentMode, AgentView, Answer, AskOutcome, EventFacts, Plan, SessionEndReason, SessionSource,
    Step, WaitOutcome, ask_outcome, lifecycle, wait_outcome,
};

//! The `/plan` lifecycle rules of seed 003 (exit choices) and seed 004 (handoff phases, tool
//! drift), as pure functions.

use serde::{Deserialize, Serialize};

use crate::{CoreError, PublicationState, Result};

wire_enum! {
    #[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
    /// Seed 004's handoff phases: `off → planning → ready → handoff_pending → off`.
    HandoffPhase {
        Off = "off",
        Planning = "planning",
        Ready = "ready",
        HandoffPending = "handoff_pending",
    }
}

/// What `/plan exit` may offer (seed 003).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub enum ExitChoice {
    /// Publish the exact current checkpoint (create or update), then exit.
    CreateOrUpdatePlan,
    /// Leave Plan mode; the checkpoint and plan identity stay restorable. The safe default.
    ExitWithoutPublishing,
    /// Show the latest checkpoint, then offer again.
    Preview,
    /// Stay in Plan mode.
    ContinuePlanning,
    /// No checkpoint yet: ask the agent to finalize one first.
    FinalizeBeforeExit,
}

/// The answer to `/plan exit` before any choice is made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(
    tag = "kind",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum ExitOffer {
    /// The published plan is synced: exit at once.
    ExitNow,
    /// Ask the person; `default` is what Enter picks.
    Choose {
        /// The choices, in the order shown.
        choices: Vec<ExitChoice>,
        /// The safe default.
        default: ExitChoice,
    },
}

/// Seed 003: synced → exit at once; otherwise Create/Update, Exit without publishing (default),
/// Preview, Continue; with no checkpoint: Exit without publishing (default), Finalize, Continue.
/// Exit without publishing is always offered, so Plan mode can never be a trap.
pub fn exit_offer(has_checkpoint: bool, state: PublicationState) -> ExitOffer {
    if !has_checkpoint {
        return ExitOffer::Choose {
            choices: vec![
                ExitChoice::ExitWithoutPublishing,
                ExitChoice::FinalizeBeforeExit,
                ExitChoice::ContinuePlanning,
            ],
            default: ExitChoice::ExitWithoutPublishing,
        };
    }
    match state {
        PublicationState::Synced => ExitOffer::ExitNow,
        PublicationState::Unpublished | PublicationState::Dirty | PublicationState::Conflict => {
            ExitOffer::Choose {
                choices: vec![
                    ExitChoice::CreateOrUpdatePlan,
                    ExitChoice::ExitWithoutPublishing,
                    ExitChoice::Preview,
                    ExitChoice::ContinuePlanning,
                ],
                default: ExitChoice::ExitWithoutPublishing,
            }
        }
    }
}

/// A handoff transition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HandoffStep {
    /// Plan mode entered.
    Enter,
    /// A valid plan was captured or checkpointed.
    Ready,
    /// A person approved the exact revision for execution.
    Approve,
    /// The client observed the execution prompt start.
    Accept,
    /// The person cancelled the pending handoff.
    Cancel,
    /// Plan mode left.
    Exit,
}

/// The next phase, or a refusal naming the phase the step needs.
pub fn handoff_next(
    phase: HandoffPhase,
    step: HandoffStep,
    tools_conflict: ToolsConflict,
) -> Result<HandoffPhase> {
    use HandoffPhase as P;
    use HandoffStep as S;
    let invalid = || {
        Err(CoreError::HandoffPhaseInvalid {
            phase: phase.as_str(),
        })
    };
    match (step, phase) {
        (S::Enter, P::Off | P::Planning | P::Ready) => Ok(P::Planning),
        (S::Enter, P::HandoffPending) => invalid(),
        (S::Ready, P::Planning | P::Ready) => Ok(P::Ready),
        (S::Ready, P::Off | P::HandoffPending) => invalid(),
        (S::Approve, P::Ready) => match tools_conflict {
            ToolsConflict::None => Ok(P::HandoffPending),
            ToolsConflict::Unresolved => Err(CoreError::ToolsConflict),
        },
        (S::Approve, P::Off | P::Planning | P::HandoffPending) => invalid(),
        (S::Accept, P::HandoffPending) => Ok(P::Off),
        (S::Cancel, P::HandoffPending) => Ok(P::Ready),
        (S::Accept | S::Cancel, P::Off | P::Planning | P::Ready) => invalid(),
        (S::Exit, P::Off | P::Planning | P::Ready | P::HandoffPending) => Ok(P::Off),
    }
}

/// Whether the tool set changed outside the extension's control since it was last applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolsConflict {
    /// The observed set is the applied one.
    None,
    /// Someone changed it; approval is blocked until a person resolves it.
    Unresolved,
}

/// Seed 004: a drift is any difference, as sets, between what was applied and what is observed.
pub fn tools_drifted(applied: &[String], observed: &[String]) -> bool {
    let mut a: Vec<&String> = applied.iter().collect();
    let mut o: Vec<&String> = observed.iter().collect();
    a.sort();
    a.dedup();
    o.sort();
    o.dedup();
    a != o
}

/// Seed 004: exit restores the baseline recorded at entry, intersected with the tools that exist
/// now (a removed tool is never silently restored), in the baseline's order.
pub fn tools_to_restore(baseline: &[String], available_now: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for tool in baseline {
        if available_now.contains(tool) && !out.contains(tool) {
            out.push(tool.clone());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| (*x).to_owned()).collect()
    }

    #[test]
    fn exit_is_never_a_trap() {
        for state in [
            PublicationState::Unpublished,
            PublicationState::Dirty,
            PublicationState::Synced,
            PublicationState::Conflict,
        ] {
            for has in [true, false] {
                match exit_offer(has, state) {
                    ExitOffer::ExitNow => assert!(has && state == PublicationState::Synced),
                    ExitOffer::Choose { choices, default } => {
                        assert_eq!(default, ExitChoice::ExitWithoutPublishing);
                        assert!(choices.contains(&ExitChoice::ExitWithoutPublishing));
                        assert_eq!(choices.contains(&ExitChoice::FinalizeBeforeExit), !has);
                        assert_eq!(choices.contains(&ExitChoice::CreateOrUpdatePlan), has);
                    }
                }
            }
        }
    }

    #[test]
    fn handoff_phases() {
        use HandoffPhase as P;
        use HandoffStep as S;
        let ok = ToolsConflict::None;
        assert_eq!(handoff_next(P::Off, S::Enter, ok), Ok(P::Planning));
        assert_eq!(handoff_next(P::Planning, S::Ready, ok), Ok(P::Ready));
        assert_eq!(
            handoff_next(P::Ready, S::Approve, ok),
            Ok(P::HandoffPending)
        );
        assert_eq!(handoff_next(P::HandoffPending, S::Accept, ok), Ok(P::Off));
        assert_eq!(handoff_next(P::HandoffPending, S::Cancel, ok), Ok(P::Ready));
        assert_eq!(
            handoff_next(P::Ready, S::Approve, ToolsConflict::Unresolved)
                .map_err(|e| e.code().as_str()),
            Err("PLAN_TOOLS_CONFLICT")
        );
        assert_eq!(
            handoff_next(P::Planning, S::Approve, ok).map_err(|e| e.code().as_str()),
            Err("PLAN_HANDOFF_PHASE_INVALID")
        );
        assert_eq!(handoff_next(P::HandoffPending, S::Exit, ok), Ok(P::Off));
    }

    #[test]
    fn drift_and_restore() {
        assert!(!tools_drifted(
            &s(&["read", "bash"]),
            &s(&["bash", "read", "read"])
        ));
        assert!(tools_drifted(&s(&["read"]), &s(&["read", "mcp_x"])));
        assert_eq!(
            tools_to_restore(
                &s(&["read", "edit", "bash", "web"]),
                &s(&["bash", "read", "new"])
            ),
            s(&["read", "bash"])
        );
    }
}

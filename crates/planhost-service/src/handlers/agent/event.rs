//! The wire's agent event as the lifecycle's kinds: a plan offered by a tool's proposal (the
//! agent's profile says which) becomes an offer here, so the rules never name an agent.

use planhost_core::{
    AgentMode, AgentProfile, BatchPosition, SessionEndReason, SessionSource, ToolCallId, words,
};
use planhost_protocol::{AgentEvent, CapturedMessage, Provenance};
use serde_json::Value;

/// One event, as the job takes it.
#[derive(Debug, Clone)]
pub(crate) enum Kind {
    Start(SessionSource),
    Prompt {
        agent_mode: Option<AgentMode>,
        handoff_token: Option<String>,
    },
    Tool {
        call: ToolCallId,
        tool: String,
        input: Value,
        batch: BatchPosition,
        provenance: Provenance,
        cwd: Option<String>,
    },
    Offer {
        call: ToolCallId,
        markdown: String,
        title: Option<String>,
        question: Option<String>,
        batch: BatchPosition,
    },
    Finished {
        call: ToolCallId,
        tool: String,
        input: Option<Value>,
        is_error: bool,
    },
    Draft {
        markdown: String,
        expected_revision: i64,
    },
    Message(CapturedMessage),
    Answered(planhost_core::ProposalId),
    Stop {
        aborted: bool,
    },
    End(SessionEndReason),
}

fn batch(index: Option<u32>, size: Option<u32>) -> BatchPosition {
    BatchPosition {
        index: index.unwrap_or(0),
        size: size.unwrap_or(1),
    }
}

impl Kind {
    /// The kind of `event` for `profile`.
    pub(crate) fn of(profile: &AgentProfile, event: AgentEvent) -> Self {
        match event {
            AgentEvent::SessionStarted { source } => Kind::Start(source),
            AgentEvent::PromptSubmitted {
                agent_mode,
                handoff_token,
            } => Kind::Prompt {
                agent_mode,
                handoff_token,
            },
            AgentEvent::ToolProposed {
                call_id,
                tool,
                input,
                batch_index,
                batch_size,
                provenance,
                cwd,
            } => {
                if profile.offers_at_proposal(&tool) {
                    // The proposal is the offer: the plan is in the input's field the profile
                    // names (a missing or non-text field is an empty plan, refused).
                    let markdown = profile
                        .offer
                        .markdown_field
                        .and_then(|f| input.get(f))
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_owned();
                    return Kind::Offer {
                        call: call_id,
                        title: Some(words::plan_title_of(&markdown)),
                        markdown,
                        question: None,
                        batch: batch(batch_index, batch_size),
                    };
                }
                Kind::Tool {
                    call: call_id,
                    tool,
                    input,
                    batch: batch(batch_index, batch_size),
                    provenance: provenance.unwrap_or_else(Provenance::built_in),
                    cwd,
                }
            }
            AgentEvent::ToolFinished {
                call_id,
                tool,
                input,
                is_error,
            } => Kind::Finished {
                call: call_id,
                tool,
                input,
                is_error,
            },
            AgentEvent::PlanOffered {
                call_id,
                markdown,
                title,
                question,
                batch_index,
                batch_size,
            } => Kind::Offer {
                call: call_id,
                markdown,
                title,
                question,
                batch: batch(batch_index, batch_size),
            },
            AgentEvent::DraftWritten {
                markdown,
                expected_revision,
            } => Kind::Draft {
                markdown,
                expected_revision,
            },
            AgentEvent::MessageFinished { message } => Kind::Message(message),
            AgentEvent::PlanAnswered { proposal_id } => Kind::Answered(proposal_id),
            AgentEvent::TurnStopped { aborted } => Kind::Stop { aborted },
            AgentEvent::SessionEnded { reason } => {
                Kind::End(reason.unwrap_or(SessionEndReason::Other))
            }
        }
    }
}

/// [`planhost_core::words::ContextPlan`], owned (read on the engine's thread).
#[derive(Debug, Clone)]
pub(crate) enum OwnedContext {
    /// Not in Plan and nothing carried out: nothing to tell.
    None,
    CarryingOut {
        title: String,
        mode: String,
        path: String,
        sha256: String,
        markdown: String,
    },
    Waiting {
        title: String,
        markdown: String,
    },
    Draft {
        revision: i64,
        markdown: String,
    },
    Last {
        approval: Box<planhost_protocol::ApprovalInfo>,
        markdown: String,
    },
    Nothing,
}

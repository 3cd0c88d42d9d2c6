//! `agent.event`: one agent-neutral method for the Plan-mode lifecycle of every agent (DESIGN
//! decision 13). Core's rules decide ([`planhost_core::lifecycle`]); this runs their steps — the
//! durable ones in one job on the engine's thread (`job`), then the tool authority's — and
//! answers with core's reply ([`planhost_core::reply_for`]), so no face holds a lifecycle of
//! its own and every agent reads the same sentences.

mod draft;
mod event;
mod job;

use std::sync::Arc;

use planhost_core::{
    AgentProfile, AgentView, DraftWrite, EntryId, PolicyVerdict, ReplyFacts, Step, ToolNature,
    words,
};
use planhost_protocol::{
    AgentEventParams, AgentEventResult, ApprovalInfo, AuthorizeParams, AuthorizeResult,
    DecisionKind, FinishedParams,
};

use crate::Result;
use crate::connection::Caller;
use crate::handlers::sessions;
use crate::service::Inner;

pub(crate) use event::{Kind, OwnedContext};

/// One agent event.
pub(crate) async fn event(
    svc: &Arc<Inner>,
    caller: &Caller,
    p: AgentEventParams,
) -> Result<AgentEventResult> {
    let profile = p.agent.profile();
    let kind = Kind::of(profile, p.event.clone());
    // The client's branch path, or the session's one line of history.
    let branch = p.branch_path.clone().unwrap_or_else(|| {
        vec![EntryId::from(format!(
            "{}:{}",
            p.agent.as_str(),
            p.external_session_id
        ))]
    });
    // Facts only the disk can give, established before the job (off the engine's thread).
    let draft_file = match &kind {
        Kind::Tool { tool, input, .. } => {
            draft::target(profile, p.agent_config_dir.as_deref(), tool, Some(input))
        }
        Kind::Finished { tool, input, .. } => {
            draft::target(profile, p.agent_config_dir.as_deref(), tool, input.as_ref())
        }
        Kind::Start(_)
        | Kind::Prompt { .. }
        | Kind::Offer { .. }
        | Kind::Draft { .. }
        | Kind::Message(_)
        | Kind::Answered(_)
        | Kind::Stop { .. }
        | Kind::End(_) => None,
    };
    let attended = p.attended;
    let progress = {
        let job = job::Job {
            svc: Arc::clone(svc),
            params: p,
            kind: kind.clone(),
            branch,
            draft_file: draft_file.clone(),
        };
        svc.engine(move |e| job::run(e, job)).await?
    };
    let session_id = progress.info.id.clone();
    // An `own` connection watches the session it spoke for.
    svc.fanout.opened(caller.conn, &session_id);
    // The tool authority's steps.
    let mut decision: Option<AuthorizeResult> = None;
    let mut shell_call = false;
    let mut entered_plan = false;
    for step in &progress.plan.steps {
        match (step, &kind) {
            (
                Step::Authorize,
                Kind::Tool {
                    call,
                    tool,
                    input,
                    batch,
                    provenance,
                    cwd,
                },
            ) => {
                let turn = sessions::get(svc, session_id.clone())
                    .await?
                    .active_turn
                    .map(|t| t.id)
                    .ok_or_else(|| {
                        crate::ServiceError::refused(
                            planhost_core::ErrorCode::TurnNotActive,
                            "the session has no running turn",
                        )
                    })?;
                let draft = if draft_file.is_some() {
                    DraftWrite::AgentsOwnDraft
                } else {
                    DraftWrite::No
                };
                shell_call = profile.shell == planhost_core::ShellRoute::RewriteToHost
                    && profile.agent.classify(tool).nature == ToolNature::RunsCommands;
                let answer = svc
                    .tools
                    .authorize(
                        svc,
                        AuthorizeParams {
                            session_id: session_id.clone(),
                            turn_id: turn,
                            tool_call_id: call.clone(),
                            tool_name: tool.clone(),
                            batch_index: batch.index,
                            batch_size: batch.size,
                            provenance: provenance.clone(),
                            input: input.clone(),
                        },
                        draft,
                        cwd.as_deref().map(std::path::Path::new),
                    )
                    .await?;
                decision = Some(answer);
            }
            (Step::EnterPlanIfAllowed, Kind::Tool { call, batch, .. }) => {
                if decision
                    .as_ref()
                    .is_some_and(|d| d.decision == DecisionKind::Allow)
                {
                    let (session, call, batch) = (session_id.clone(), call.clone(), *batch);
                    let key = (session.clone(), call.clone());
                    svc.engine(move |e| {
                        let turn =
                            e.store()
                                .active_turn(&session)?
                                .map(|t| t.id)
                                .ok_or_else(|| {
                                    crate::ServiceError::refused(
                                        planhost_core::ErrorCode::TurnNotActive,
                                        "the session has no running turn",
                                    )
                                })?;
                        e.store().enter_plan(&session, &turn, &call, batch)?;
                        Ok(())
                    })
                    .await?;
                    // Entering Plan was the call: it is no longer in flight.
                    svc.tools.release(svc, &key);
                    entered_plan = true;
                }
            }
            (Step::AnswerAskInDialog, Kind::Finished { call, .. }) => {
                svc.tools
                    .answer_in_agent_dialog(svc, caller, &session_id, call)
                    .await?;
            }
            (Step::FinishTool, Kind::Finished { call, is_error, .. }) => {
                if let Some(turn) = &progress.info.active_turn {
                    svc.tools.release_grant(
                        svc,
                        &FinishedParams {
                            session_id: session_id.clone(),
                            turn_id: turn.id.clone(),
                            tool_call_id: call.clone(),
                            is_error: *is_error,
                        },
                    );
                }
            }
            (_, _) => {}
        }
    }
    let info = if entered_plan {
        sessions::get(svc, session_id.clone()).await?
    } else {
        sessions::with_tool_calls(svc, progress.info)
    };
    let view = AgentView {
        attended,
        ..job::view_of(&info, attended)
    };
    let data = Data {
        this_plan: &progress.this_plan,
        waiting: &progress.waiting,
        untold: &progress.untold,
        claimed: &progress.claimed,
        context: &progress.context,
        saved: &progress.saved,
        capture: &progress.capture,
        external_session: info.external_id.as_deref(),
        answered_by: progress
            .this_plan
            .as_ref()
            .and_then(|a| a.resolved_by.as_ref())
            .map(|by| match by.via {
                Some(via) => words::answered_via(via, &by.client),
                None => by.client.clone(),
            }),
    };
    let reply = reply(
        profile,
        &view,
        &progress_facts(&data),
        decision.as_ref(),
        shell_call,
        progress.plan.answer,
    );
    Ok(AgentEventResult {
        session: info,
        directive: reply.directive,
        context: reply.context,
        notice: reply.notice,
        approval: progress.this_plan,
        execution: progress.claimed,
        checkpoint: progress.saved,
        capture: progress.capture,
    })
}

/// The reply's data, borrowed from what the job read.
struct Data<'a> {
    this_plan: &'a Option<ApprovalInfo>,
    waiting: &'a Option<ApprovalInfo>,
    untold: &'a Option<ApprovalInfo>,
    claimed: &'a Option<planhost_protocol::ClaimedExecution>,
    context: &'a Option<OwnedContext>,
    saved: &'a Option<planhost_protocol::CheckpointInfo>,
    capture: &'a Option<planhost_protocol::CaptureResult>,
    /// Where the plan's answer came from, in a person's words.
    answered_by: Option<String>,
    /// The agent's own session id.
    external_session: Option<&'a str>,
}

/// A plan as the sentences need it.
fn plan_facts(a: &ApprovalInfo) -> words::PlanFacts<'_> {
    words::PlanFacts {
        proposal_id: a.proposal_id.as_str(),
        title: &a.title,
        relative_path: &a.artifact_relative_path,
        status: a.status,
        feedback: a.feedback.as_deref(),
        mode: a.target_permission_mode,
        error_code: a.error_code,
    }
}

fn progress_facts<'a>(d: &'a Data<'a>) -> ReplyFacts<'a> {
    let context = d.context.as_ref().and_then(|c| match c {
        OwnedContext::None => None,
        OwnedContext::CarryingOut {
            title,
            mode,
            path,
            sha256,
            markdown,
        } => Some(words::ContextPlan::CarryingOut(words::CarryFacts {
            title,
            mode,
            path,
            sha256,
            markdown,
        })),
        OwnedContext::Waiting { title, markdown } => {
            Some(words::ContextPlan::Waiting { title, markdown })
        }
        OwnedContext::Draft { revision, markdown } => Some(words::ContextPlan::Draft {
            revision: *revision,
            markdown,
        }),
        OwnedContext::Last { approval, markdown } => Some(words::ContextPlan::Last {
            plan: plan_facts(approval),
            markdown,
        }),
        OwnedContext::Nothing => Some(words::ContextPlan::Nothing),
    });
    ReplyFacts {
        waiting: d.waiting.as_ref().map(plan_facts),
        this_plan: d.this_plan.as_ref().map(plan_facts),
        claimed: d.claimed.as_ref().map(|c| words::CarryFacts {
            title: &c.title,
            mode: c.execution.permission_mode.as_str(),
            path: &c.artifact_path,
            sha256: &c.sha256,
            markdown: &c.markdown,
        }),
        untold: d.untold.as_ref().map(plan_facts),
        context,
        verdict: None,
        shell_call: false,
        saved: d.saved.as_ref().map(|c| (c.revision, c.sha256.as_str())),
        captured: d.capture.as_ref().and_then(|c| {
            c.checkpoint
                .as_ref()
                .map(|checkpoint| (checkpoint.revision, c.created))
        }),
        answered_by: d.answered_by.as_deref(),
        external_session: d.external_session,
    }
}

/// Core's reply, with the policy's decision.
fn reply(
    profile: &AgentProfile,
    view: &AgentView,
    facts: &ReplyFacts<'_>,
    decision: Option<&AuthorizeResult>,
    shell_call: bool,
    answer: planhost_core::Answer,
) -> planhost_core::Reply {
    let verdict = decision.map(|d| match d.decision {
        DecisionKind::Allow => PolicyVerdict::Allow {
            rule: d.rule,
            reason: &d.reason,
        },
        DecisionKind::Deny => PolicyVerdict::Deny {
            rule: d.rule,
            reason: &d.reason,
            code: d.code.map_or(
                planhost_core::ErrorCode::ToolNotAuthorized,
                planhost_core::DenyCode::code,
            ),
        },
        DecisionKind::Ask => match &d.request_id {
            Some(request_id) => PolicyVerdict::Ask {
                rule: d.rule,
                reason: &d.reason,
                request_id,
                default_answer: d
                    .default_answer
                    .unwrap_or(planhost_core::PermissionDecision::Deny),
            },
            None => PolicyVerdict::Deny {
                rule: d.rule,
                reason: &d.reason,
                code: planhost_core::ErrorCode::ToolNotAuthorized,
            },
        },
    });
    let facts = ReplyFacts {
        verdict,
        shell_call,
        ..*facts
    };
    planhost_core::reply_for(profile, view, answer, &facts)
}

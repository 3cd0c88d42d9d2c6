//! The checkpoint, capture, publication and `/plan` methods (issue #5).

use std::sync::Arc;

use planhost_core::{ApprovalAction, ExitChoice, ExitOffer, PlanCommand, parse_plan_command};
use planhost_host::{Overwrite, PublishOutcome, PublishStart};
use planhost_protocol::{
    BranchRef, CaptureParams, CaptureResult, CheckpointInfo, CheckpointParams, CommandParams,
    CommandResult, ExitParams, ExitResult, HandoffParams, HandoffResult, PlanStatusResult,
    PreviewResult, ProjectionResult, PublicationInfo, PublicationList, PublicationsParams,
    PublishResolveParams, PublishResolveResult, PublishResult, RpcError, ToolsParams, ToolsResult,
};
use planhost_store::{
    ApprovalFilter, CaptureBinding, CheckpointSource, HandoffRequest, PublicationRecord,
    SavedCheckpoint,
};
use serde_json::Value;

use super::convert::refused;
use super::service::{Service, params, to_value};

fn checkpoint_info(saved: SavedCheckpoint) -> CheckpointInfo {
    CheckpointInfo {
        checkpoint_id: saved.record.id,
        revision: saved.record.revision,
        sha256: saved.record.sha256,
        size_bytes: saved.record.size_bytes,
        created: saved.created,
    }
}

fn publication(p: PublicationRecord) -> PublicationInfo {
    PublicationInfo {
        publication_id: p.id,
        session_id: p.session_id,
        revision: p.revision,
        sha256: p.sha256,
        relative_path: p.relative_path,
        base_sha256: p.base_sha256,
        status: p.status,
        error_code: p.error_code,
    }
}

fn command_name(c: PlanCommand) -> &'static str {
    match c {
        PlanCommand::Enter => "enter",
        PlanCommand::Save => "save",
        PlanCommand::Preview => "preview",
        PlanCommand::Exit => "exit",
        PlanCommand::Status => "status",
        PlanCommand::Help => "help",
    }
}

/// Serves the `plans.*` methods of issue #5; `None` when `method` is not one of them.
pub async fn dispatch(
    svc: &Arc<Service>,
    method: &str,
    p: Value,
) -> Option<Result<Value, RpcError>> {
    Some(match method {
        "plans.checkpoint" => checkpoint(svc, p).await,
        "plans.capture" => capture(svc, p).await,
        "plans.projection" => {
            branch(svc, p, |h, b| {
                Ok(to_value(ProjectionResult {
                    text: h.projection(&b.session_id, &b.branch_path)?,
                }))
            })
            .await
        }
        "plans.preview" => {
            branch(svc, p, |h, b| {
                let (c, markdown) = h
                    .store()
                    .latest_checkpoint(&b.session_id, &b.branch_path)?
                    .ok_or(planhost_host::HostError::NoCheckpoint)?;
                Ok(to_value(PreviewResult {
                    revision: c.revision,
                    sha256: c.sha256,
                    markdown,
                }))
            })
            .await
        }
        "plans.status" => {
            branch(svc, p, |h, b| {
                let s = h.plan_status(&b.session_id, &b.branch_path)?;
                let persisted = h.store().session(&b.session_id)?.client_persistence
                    == planhost_core::ClientPersistence::Persisted;
                Ok(to_value(PlanStatusResult {
                    active: s.active,
                    revision: s.revision,
                    sha256: s.sha256,
                    publication: s.publication,
                    path: s.path,
                    plan_id: s.identity.plan_id,
                    phase: s.identity.phase,
                    persisted,
                    tool_conflict: s.identity.tool_conflict,
                    handoff_restarted: s.identity.handoff_restarted,
                }))
            })
            .await
        }
        "plans.publish" => publish(svc, p).await,
        "plans.publishResolve" => publish_resolve(svc, p).await,
        "plans.exit" => exit(svc, p).await,
        "plans.publications" => publications(svc, p).await,
        "plans.branchSwitched" => {
            let p: planhost_protocol::SessionRef = match params(p) {
                Ok(p) => p,
                Err(e) => return Some(Err(e)),
            };
            let revoked = svc
                .host(move |h| Ok(h.store().branch_switched(&p.session_id)?))
                .await;
            revoked.and_then(|revoked_publications| {
                to_value(planhost_protocol::BranchSwitchResult {
                    revoked_publications,
                })
            })
        }
        "plans.command" => command(p),
        "plans.handoff" => handoff(svc, p).await,
        "plans.tools" => tools(svc, p).await,
        _ => return None,
    })
}

async fn branch(
    svc: &Arc<Service>,
    p: Value,
    f: impl FnOnce(
        &mut planhost_host::Host,
        BranchRef,
    ) -> Result<Result<Value, RpcError>, planhost_host::HostError>
    + Send
    + 'static,
) -> Result<Value, RpcError> {
    let b: BranchRef = params(p)?;
    svc.host(move |h| f(h, b)).await?
}

async fn checkpoint(svc: &Arc<Service>, p: Value) -> Result<Value, RpcError> {
    let p: CheckpointParams = params(p)?;
    let saved = svc
        .host(move |h| {
            Ok(h.store().save_checkpoint(
                &p.session_id,
                &p.branch_path,
                &p.markdown,
                Some(p.expected_revision),
                CheckpointSource::Draft,
                None,
            )?)
        })
        .await?;
    to_value(checkpoint_info(saved))
}

async fn capture(svc: &Arc<Service>, p: Value) -> Result<Value, RpcError> {
    let p: CaptureParams = params(p)?;
    let result = svc
        .host(move |h| {
            let mut message = p.message;
            // "Begun in planning" is the host's fact, not the client's claim: the turn must be
            // this session's, and either it started in Plan, or it is still running and the
            // session entered Plan during it (EnterPlanMode). A replay of an Agent turn's
            // message after switching to Plan is never captured.
            let turn = h.store().turn(&p.turn_id)?;
            if turn.session_id != p.session_id {
                return Err(planhost_core::CoreError::TurnNotActive { turn_id: p.turn_id }.into());
            }
            let running_in_plan = turn.state == planhost_core::TurnState::Running
                && h.store().session(&p.session_id)?.mode == planhost_core::Mode::Plan;
            message.started_in_planning =
                turn.policy_mode == Some(planhost_core::Mode::Plan) || running_in_plan;
            if let Err(why) = planhost_core::eligibility(&message) {
                return Ok(CaptureResult {
                    captured: false,
                    checkpoint: None,
                    reason: Some(why.to_string()),
                });
            }
            let capture = match planhost_core::capture(&message) {
                Ok(Some(capture)) => capture,
                Ok(None) => {
                    return Ok(CaptureResult {
                        captured: false,
                        checkpoint: None,
                        reason: Some("no <proposed_plan> block".into()),
                    });
                }
                Err(e) => {
                    return Ok(CaptureResult {
                        captured: false,
                        checkpoint: None,
                        reason: Some(e.code().into()),
                    });
                }
            };
            let binding = CaptureBinding {
                entry_id: capture.entry_id.clone(),
                fingerprint: capture.fingerprint.clone(),
                block_index: i64::try_from(capture.block_index).unwrap_or(i64::MAX),
                start: i64::try_from(capture.body_start).unwrap_or(i64::MAX),
                end: i64::try_from(capture.body_end).unwrap_or(i64::MAX),
            };
            let saved = h.store().save_checkpoint(
                &p.session_id,
                &p.branch_path,
                &capture.markdown,
                None,
                CheckpointSource::Capture,
                Some(&binding),
            )?;
            Ok(CaptureResult {
                captured: true,
                checkpoint: Some(checkpoint_info(saved)),
                reason: None,
            })
        })
        .await?;
    to_value(result)
}

async fn publish(svc: &Arc<Service>, p: Value) -> Result<Value, RpcError> {
    let p: planhost_protocol::PublishParams = params(p)?;
    let overwrite = if p.overwrite_conflict {
        Overwrite::DiskAsBase
    } else {
        Overwrite::Refuse
    };
    let start = svc
        .host(move |h| h.start_publication(&p.session_id, &p.branch_path, overwrite))
        .await?;
    to_value(match start {
        PublishStart::Synced(_) => PublishResult {
            outcome: "synced".into(),
            publication: None,
        },
        PublishStart::Pending(p) => PublishResult {
            outcome: "pending".into(),
            publication: Some(publication(p)),
        },
    })
}

async fn publish_resolve(svc: &Arc<Service>, p: Value) -> Result<Value, RpcError> {
    let p: PublishResolveParams = params(p)?;
    let approve = p.action == ApprovalAction::Approve;
    let outcome = svc
        .host(move |h| h.resolve_publication(&p.publication_id, approve))
        .await?;
    to_value(match outcome {
        PublishOutcome::Completed(r) => PublishResolveResult {
            outcome: "completed".into(),
            publication: publication(r),
            next: None,
        },
        PublishOutcome::Rejected(r) => PublishResolveResult {
            outcome: "rejected".into(),
            publication: publication(r),
            next: None,
        },
        PublishOutcome::Conflict(r) => PublishResolveResult {
            outcome: "conflict".into(),
            publication: publication(r),
            next: None,
        },
        PublishOutcome::Reapprove { revoked, next } => PublishResolveResult {
            outcome: "reapprove".into(),
            publication: publication(revoked),
            next: Some(publication(next)),
        },
    })
}

async fn publications(svc: &Arc<Service>, p: Value) -> Result<Value, RpcError> {
    let p: PublicationsParams = params(p)?;
    let filter = if p.pending {
        ApprovalFilter::Pending
    } else {
        ApprovalFilter::All
    };
    let list = svc
        .host(move |h| Ok(h.store().publications(filter)?))
        .await?;
    to_value(PublicationList {
        publications: list.into_iter().map(publication).collect(),
    })
}

async fn exit(svc: &Arc<Service>, p: Value) -> Result<Value, RpcError> {
    let p: ExitParams = params(p)?;
    let result = svc
        .host(move |h| {
            let leave =
                |h: &mut planhost_host::Host| -> Result<ExitResult, planhost_host::HostError> {
                    h.exit_plan(&p.session_id)?;
                    let restore = match &p.available_tools {
                        Some(available) => Some(h.store().tools_exit(&p.session_id, available)?),
                        None => None,
                    };
                    Ok(ExitResult {
                        offer: None,
                        exited: true,
                        restore_tools: restore,
                    })
                };
            match p.choice {
                None => match h.exit_offer(&p.session_id, &p.branch_path)? {
                    ExitOffer::ExitNow => leave(h),
                    offer @ ExitOffer::Choose { .. } => Ok(ExitResult {
                        offer: Some(offer),
                        exited: false,
                        restore_tools: None,
                    }),
                },
                Some(ExitChoice::ExitWithoutPublishing) => leave(h),
                Some(
                    ExitChoice::ContinuePlanning
                    | ExitChoice::Preview
                    | ExitChoice::FinalizeBeforeExit
                    | ExitChoice::CreateOrUpdatePlan,
                ) => {
                    // These are client-driven: preview shows plans.preview; create/update runs
                    // plans.publish; finalize asks the agent. Plan mode stays active meanwhile.
                    Ok(ExitResult {
                        offer: None,
                        exited: false,
                        restore_tools: None,
                    })
                }
            }
        })
        .await?;
    to_value(result)
}

fn command(p: Value) -> Result<Value, RpcError> {
    let p: CommandParams = params(p)?;
    to_value(match parse_plan_command(&p.line) {
        Ok(PlanCommand::Help) => CommandResult {
            command: Some("help".into()),
            help: Some(planhost_core::HELP_TEXT.into()),
            error_code: None,
        },
        Ok(c) => CommandResult {
            command: Some(command_name(c).into()),
            help: None,
            error_code: None,
        },
        Err(e) => CommandResult {
            command: None,
            help: Some(planhost_core::HELP_TEXT.into()),
            error_code: Some(e.code().into()),
        },
    })
}

async fn handoff(svc: &Arc<Service>, p: Value) -> Result<Value, RpcError> {
    let p: HandoffParams = params(p)?;
    let identity = svc
        .host(move |h| {
            let token = planhost_host::new_id();
            let request = match p.action.as_str() {
                "enter" => HandoffRequest::Enter,
                "approve" => {
                    let (c, _) = h
                        .store()
                        .latest_checkpoint(&p.session_id, &p.branch_path)?
                        .ok_or(planhost_host::HostError::NoCheckpoint)?;
                    HandoffRequest::Approve {
                        checkpoint_id: c.id,
                        token,
                    }
                }
                "accept" => HandoffRequest::Accept {
                    token: p.token.clone().unwrap_or_default(),
                },
                "cancel" => HandoffRequest::Cancel,
                "retry" => HandoffRequest::Retry { token },
                "exit" => HandoffRequest::Exit,
                _ => {
                    return Ok(Err(refused(
                        "PLAN_HANDOFF_ACTION_INVALID",
                        format!("unknown handoff action {:?}", p.action),
                    )));
                }
            };
            Ok(Ok(h.store().handoff(&p.session_id, &request)?))
        })
        .await??;
    to_value(HandoffResult {
        phase: identity.phase,
        token: identity.handoff_token,
        restarted: identity.handoff_restarted,
    })
}

async fn tools(svc: &Arc<Service>, p: Value) -> Result<Value, RpcError> {
    let p: ToolsParams = params(p)?;
    let result = svc
        .host(move |h| {
            let s = h.store();
            Ok(Ok(match p.action.as_str() {
                "enter" => {
                    let baseline = p.baseline.clone().unwrap_or_default();
                    ToolsResult {
                        conflict: s
                            .tools_enter(&p.session_id, &baseline, &p.tools)?
                            .tool_conflict,
                        restore: None,
                    }
                }
                "observe" => ToolsResult {
                    conflict: s.tools_observe(&p.session_id, &p.tools)?.tool_conflict,
                    restore: None,
                },
                "resolve" => ToolsResult {
                    conflict: s.tools_resolve(&p.session_id, &p.tools)?.tool_conflict,
                    restore: None,
                },
                "exit" => ToolsResult {
                    conflict: false,
                    restore: Some(s.tools_exit(&p.session_id, &p.tools)?),
                },
                _ => {
                    return Ok(Err(refused(
                        "PLAN_TOOLS_ACTION_INVALID",
                        format!("unknown tools action {:?}", p.action),
                    )));
                }
            }))
        })
        .await??;
    to_value(result)
}

//! The host service behind every transport: one dispatcher over the host actor, the tool
//! runtime (asks, grants, running calls) and the notification fan-out.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use planhost_core::{BatchPosition, ResolveRequest, SubmitPlanInput, TurnOrigin};
use planhost_host::{Host, HostError, HostHandle};
use planhost_protocol::{
    ApprovalList, AuditList, AuditParams, BeginTurnParams, ConfigureParams, Empty, EnterPlanParams,
    ExecutionRef, FinishExecutionParams, HealthResult, OpenSessionParams, PROTOCOL_VERSION,
    PlanDetail, PlansFilter, ProposalRef, ResolvePlanParams, RpcError, SessionList, SessionRef,
    SetModeParams, SubmitPlanParams, TurnRef, VersionResult,
};
use planhost_store::{ApprovalFilter, AuditSink, Configure, SubmitContext};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::broadcast::Broadcaster;
use super::convert::{self, refused};
use super::shells::Shells;
use super::tools::ToolRuntime;

/// Everything a connection needs to serve requests.
pub struct Service {
    pub host: HostHandle,
    pub state_dir: PathBuf,
    pub started: Instant,
    pub clients: Arc<Broadcaster>,
    pub policy: Arc<super::policy_cache::PolicyCache>,
    pub tools: Arc<ToolRuntime>,
    pub audit: AuditSink,
    pub shells: Shells,
}

/// Identifies the connection a request arrived on.
#[derive(Debug, Clone)]
pub struct Caller {
    /// Connection id.
    pub conn: u64,
    /// Where this connection's own notifications (tool output) go.
    pub outbound: tokio::sync::mpsc::Sender<Arc<str>>,
    /// Cancelled when the connection goes away; tool calls run under a child of it.
    pub kill: tokio_util::sync::CancellationToken,
}

/// Deserializes params, naming the offending field on failure.
pub fn params<T: DeserializeOwned>(value: Value) -> Result<T, RpcError> {
    let value = if value.is_null() {
        Value::Object(serde_json::Map::new())
    } else {
        value
    };
    serde_path_to_error::deserialize::<_, T>(value).map_err(|error| {
        let path = error.path().to_string();
        let inner = error.into_inner().to_string();
        let field = if path == "." {
            field_in_message(&inner)
        } else {
            Some(path)
        };
        let mut e = RpcError::new(
            planhost_protocol::codes::INVALID_PARAMS,
            "INVALID_PARAMS",
            match &field {
                Some(f) => format!("invalid params: {f}: {inner}"),
                None => format!("invalid params: {inner}"),
            },
        );
        if let Some(data) = e.data.as_mut() {
            data.field = field;
        }
        e
    })
}

/// serde names a missing or unknown top-level field only in its message: "missing field `x`".
fn field_in_message(message: &str) -> Option<String> {
    let start = message.find('`')? + 1;
    let end = start + message[start..].find('`')?;
    Some(message[start..end].to_owned())
}

pub fn to_value<T: Serialize>(value: T) -> Result<Value, RpcError> {
    serde_json::to_value(value).map_err(|e| {
        RpcError::new(
            planhost_protocol::codes::INTERNAL_ERROR,
            "INTERNAL_ERROR",
            e.to_string(),
        )
    })
}

impl Service {
    /// Runs `f` on the host thread, mapping its error to the wire.
    pub async fn host<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Host) -> Result<T, HostError> + Send + 'static,
    ) -> Result<T, RpcError> {
        match self.host.call(f).await {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(error)) => Err(convert::host_error(&error)),
            Err(gone) => Err(RpcError::new(
                planhost_protocol::codes::INTERNAL_ERROR,
                "HOST_STOPPED",
                gone.to_string(),
            )),
        }
    }

    /// Dispatches one request (everything but `initialize`, which the connection handles).
    pub async fn dispatch(
        self: &Arc<Self>,
        caller: &Caller,
        method: &str,
        p: Value,
    ) -> Result<Value, RpcError> {
        match method {
            "app.health" => {
                let _: Empty = params(p)?;
                to_value(HealthResult {
                    status: "ok".into(),
                    pid: std::process::id(),
                    uptime_ms: u64::try_from(self.started.elapsed().as_millis())
                        .unwrap_or(u64::MAX),
                })
            }
            "app.version" => {
                let _: Empty = params(p)?;
                to_value(VersionResult {
                    version: env!("CARGO_PKG_VERSION").into(),
                    protocol_version: PROTOCOL_VERSION,
                    schema_version: planhost_store::CURRENT_VERSION,
                    sqlite_version: planhost_store::Store::sqlite_version().into(),
                    state_dir: self.state_dir.display().to_string(),
                })
            }
            "sessions.open" => {
                let p: OpenSessionParams = params(p)?;
                let id = self
                    .host(move |h| {
                        let s = h.open_session(
                            p.workspace_root.as_ref(),
                            p.external_id.as_deref(),
                            p.interactivity,
                        )?;
                        if let Some(persistence) = p.persistence
                            && persistence != s.client_persistence
                        {
                            h.store().set_client_persistence(&s.id, persistence)?;
                        }
                        Ok(s.id)
                    })
                    .await?;
                self.session_info(id).await
            }
            "sessions.get" => {
                let p: SessionRef = params(p)?;
                self.session_info(p.session_id).await
            }
            "sessions.list" => {
                let _: Empty = params(p)?;
                let ids = self
                    .host(|h| {
                        Ok(h.store()
                            .sessions()?
                            .into_iter()
                            .map(|s| s.id)
                            .collect::<Vec<_>>())
                    })
                    .await?;
                let mut sessions = Vec::with_capacity(ids.len());
                for id in ids {
                    sessions.push(
                        serde_json::from_value(self.session_info(id).await?).map_err(internal)?,
                    );
                }
                to_value(SessionList { sessions })
            }
            "sessions.setMode" => {
                let p: SetModeParams = params(p)?;
                let id = p.session_id.clone();
                self.host(move |h| Ok(h.store().set_mode(&p.session_id, p.mode)?))
                    .await?;
                self.session_info(id).await
            }
            "sessions.configure" => {
                let p: ConfigureParams = params(p)?;
                if let Some(Some(shell)) = &p.shell_id {
                    self.shells.validate_setting(shell)?;
                }
                let id = p.session_id.clone();
                let change = Configure {
                    permission_mode: p.permission_mode,
                    shell_id: p.shell_id,
                    provider: p.provider,
                    model: p.model,
                    policy_preset: p.policy_preset,
                };
                self.host(move |h| Ok(h.store().configure(&p.session_id, &change)?))
                    .await?;
                self.session_info(id).await
            }
            "turns.begin" => {
                let p: BeginTurnParams = params(p)?;
                let origin = p.origin.unwrap_or(TurnOrigin::User);
                if origin == TurnOrigin::Execution {
                    return Err(refused(
                        "TURN_ORIGIN_INVALID",
                        "execution turns start with executions.claim",
                    ));
                }
                let shells = self.shells;
                let turn = self
                    .host(move |h| {
                        let pin = shells.pin_for(h, &p.session_id)?;
                        h.begin_turn(&p.session_id, origin, pin.as_ref())
                    })
                    .await?;
                to_value(convert::turn(turn))
            }
            "turns.end" | "turns.abort" => {
                let p: TurnRef = params(p)?;
                let abort = method == "turns.abort";
                let turn = self
                    .host(move |h| {
                        Ok(if abort {
                            h.store().abort_turn(&p.session_id, &p.turn_id)?
                        } else {
                            h.store().end_turn(&p.session_id, &p.turn_id)?
                        })
                    })
                    .await?;
                to_value(convert::turn(turn))
            }
            "tools.authorize" => self.tools.authorize(self, params(p)?).await,
            "tools.execute" => self.tools.execute(self, caller, params(p)?).await,
            "tools.cancel" => self.tools.cancel(params(p)?),
            "permissions.resolve" => self.tools.resolve(self, params(p)?).await,
            "permissions.pending" => {
                let _: Empty = params(p)?;
                self.tools.pending_asks()
            }
            "plans.enter" => {
                let p: EnterPlanParams = params(p)?;
                let id = p.session_id.clone();
                let batch = BatchPosition {
                    index: p.batch_index,
                    size: p.batch_size,
                };
                self.host(move |h| {
                    Ok(h.store()
                        .enter_plan(&p.session_id, &p.turn_id, &p.tool_call_id, batch)?)
                })
                .await?;
                self.session_info(id).await
            }
            "plans.submit" => {
                let p: SubmitPlanParams = params(p)?;
                let ctx = SubmitContext {
                    session_id: p.session_id,
                    turn_id: p.turn_id,
                    tool_call_id: p.tool_call_id,
                    batch: BatchPosition {
                        index: p.batch_index,
                        size: p.batch_size,
                    },
                };
                let input = SubmitPlanInput {
                    title: p.title,
                    markdown: p.markdown,
                    question: p.question,
                };
                let branch = p.branch_path;
                let (approval, root) = self
                    .host(move |h| {
                        let a = h.submit_plan_on_branch(&ctx, &input, branch.as_deref())?;
                        let root = h.store().session(&ctx.session_id)?.workspace_root;
                        Ok((a, root))
                    })
                    .await?;
                to_value(convert::approval(approval, &root))
            }
            "plans.pending" | "plans.list" => {
                let p: PlansFilter = params(p)?;
                let filter = if method == "plans.pending" {
                    ApprovalFilter::Pending
                } else {
                    ApprovalFilter::All
                };
                let approvals = self
                    .host(move |h| {
                        let roots: HashMap<String, String> = h
                            .store()
                            .sessions()?
                            .into_iter()
                            .map(|s| (s.id, s.workspace_root))
                            .collect();
                        Ok(h.store()
                            .approvals(filter)?
                            .into_iter()
                            .filter(|a| p.session_id.as_ref().is_none_or(|s| *s == a.session_id))
                            .map(|a| {
                                let root = roots.get(&a.session_id).cloned().unwrap_or_default();
                                convert::approval(a, &root)
                            })
                            .collect::<Vec<_>>())
                    })
                    .await?;
                to_value(ApprovalList { approvals })
            }
            "plans.get" => {
                let p: ProposalRef = params(p)?;
                let (approval, markdown) = self
                    .host(move |h| {
                        let id = resolve_proposal_id(h, &p.proposal_id)?;
                        let a = h.store().approval(&id)?;
                        let root = h.store().session(&a.session_id)?.workspace_root;
                        let markdown = h.store().submitted_plan(&id)?.markdown;
                        Ok((convert::approval(a, &root), markdown))
                    })
                    .await?;
                to_value(PlanDetail { approval, markdown })
            }
            "plans.resolve" => {
                let p: ResolvePlanParams = params(p)?;
                let request = ResolveRequest {
                    proposal_id: p.proposal_id,
                    session_id: p.session_id,
                    turn_id: p.turn_id,
                    tool_call_id: p.tool_call_id,
                    version: p.version,
                    artifact_sha256: p.artifact_sha256,
                    action: p.action,
                    target_permission_mode: p.target_permission_mode,
                };
                let feedback = p.feedback;
                let (a, root) = self
                    .host(move |h| {
                        let a = h.resolve(&request, feedback.as_deref())?;
                        let root = h.store().session(&a.session_id)?.workspace_root;
                        Ok((a, root))
                    })
                    .await?;
                to_value(convert::approval(a, &root))
            }
            "executions.claim" => {
                let p: ExecutionRef = params(p)?;
                let shells = self.shells;
                let turn = self
                    .host(move |h| {
                        let pin = shells.pin_for(h, &p.session_id)?;
                        h.claim_execution(&p.session_id, &p.execution_id, pin.as_ref())
                    })
                    .await?;
                to_value(convert::turn(turn))
            }
            "executions.finish" => {
                let p: FinishExecutionParams = params(p)?;
                let (a, root) = self
                    .host(move |h| {
                        let a = h.store().finish_execution(
                            &p.session_id,
                            &p.execution_id,
                            p.outcome,
                        )?;
                        let root = h.store().session(&a.session_id)?.workspace_root;
                        Ok((a, root))
                    })
                    .await?;
                to_value(convert::approval(a, &root))
            }
            "shell.catalog" => {
                let _: Empty = params(p)?;
                let shells = self.shells;
                let default = self
                    .host(|h| {
                        Ok(h.store()
                            .settings()?
                            .into_iter()
                            .find(|(k, _)| *k == planhost_store::SettingKey::DefaultShell)
                            .map(|(_, v)| v))
                    })
                    .await?;
                to_value(shells.catalog(default.as_deref()))
            }
            "settings.get" => {
                let _: Empty = params(p)?;
                self.settings().await
            }
            "settings.set" => {
                let p: planhost_protocol::Settings = params(p)?;
                if let Some(Some(shell)) = &p.default_shell {
                    self.shells.validate_setting(shell)?;
                }
                let cache = Arc::clone(&self.policy);
                self.host(move |h| {
                    use planhost_store::SettingKey as K;
                    // Host defaults feed every session's policy view: drop them all before replying.
                    cache.clear();
                    for (key, value) in [
                        (K::DefaultPermissionMode, p.default_permission_mode),
                        (K::DefaultShell, p.default_shell),
                        (K::DefaultPolicyPreset, p.default_policy_preset),
                    ] {
                        if let Some(value) = value {
                            h.store().set_setting(key, value.as_deref())?;
                        }
                    }
                    Ok(())
                })
                .await?;
                self.settings().await
            }
            "audit.list" => {
                let p: AuditParams = params(p)?;
                let limit = p.limit.unwrap_or(100).clamp(1, 10_000);
                let entries = self
                    .host(move |h| Ok(h.store().audit(p.session_id.as_deref(), limit)?))
                    .await?
                    .into_iter()
                    .map(convert::audit)
                    .collect();
                to_value(AuditList { entries })
            }
            other if other.starts_with("plans.") => {
                match super::plans::dispatch(self, other, p).await {
                    Some(result) => result,
                    None => Err(RpcError::new(
                        planhost_protocol::codes::METHOD_NOT_FOUND,
                        "METHOD_NOT_FOUND",
                        format!("unknown method {other:?}"),
                    )),
                }
            }
            other => Err(RpcError::new(
                planhost_protocol::codes::METHOD_NOT_FOUND,
                "METHOD_NOT_FOUND",
                format!("unknown method {other:?}"),
            )),
        }
    }

    async fn settings(&self) -> Result<Value, RpcError> {
        let rows = self.host(|h| Ok(h.store().settings()?)).await?;
        let mut out = planhost_protocol::Settings {
            default_permission_mode: Some(None),
            default_shell: Some(None),
            default_policy_preset: Some(None),
        };
        for (key, value) in rows {
            match key {
                planhost_store::SettingKey::DefaultPermissionMode => {
                    out.default_permission_mode = Some(Some(value))
                }
                planhost_store::SettingKey::DefaultShell => out.default_shell = Some(Some(value)),
                planhost_store::SettingKey::DefaultPolicyPreset => {
                    out.default_policy_preset = Some(Some(value))
                }
            }
        }
        to_value(out)
    }

    /// The session with its active turn and pending approval.
    pub async fn session_info(&self, id: String) -> Result<Value, RpcError> {
        let info = self
            .host(move |h| {
                let s = h.store().session(&id)?;
                let turn = h.store().active_turn(&id)?;
                let pending = h
                    .store()
                    .approvals(ApprovalFilter::Pending)?
                    .into_iter()
                    .find(|a| a.session_id == id);
                Ok(convert::session(s, turn, pending))
            })
            .await?;
        to_value(info)
    }
}

fn internal(e: serde_json::Error) -> RpcError {
    RpcError::new(
        planhost_protocol::codes::INTERNAL_ERROR,
        "INTERNAL_ERROR",
        e.to_string(),
    )
}

/// Accepts a full proposal id, or a unique prefix or suffix of at least 8 characters (for people
/// typing; `planhost plans` prints the random suffix).
fn resolve_proposal_id(h: &mut Host, id: &str) -> Result<String, HostError> {
    let not_found = || HostError::from(planhost_core::CoreError::ApprovalNotFound(id.to_owned()));
    if h.store().approval(id).is_ok() {
        return Ok(id.to_owned());
    }
    if id.len() < 8 {
        return Err(not_found());
    }
    let matches: Vec<String> = h
        .store()
        .approvals(ApprovalFilter::All)?
        .into_iter()
        .map(|a| a.proposal_id)
        .filter(|p| p.starts_with(id) || p.ends_with(id))
        .collect();
    match matches.as_slice() {
        [one] => Ok(one.clone()),
        [] | [_, _, ..] => Err(not_found()),
    }
}

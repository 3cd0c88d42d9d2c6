//! The tool runtime: host-authoritative authorization, asks and their answers, and execution of
//! the host's own tools with streamed output and cancellation.
//!
//! A grant is bound to its session, turn, tool call, tool name and the SHA-256 of the input that
//! was authorized (or shown to the person). `tools.execute` needs a matching grant *and* re-runs
//! the policy against the durable state on the host thread, so nothing that changed since the
//! authorization (a mode switch, an approval) can be slipped past it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use planhost_core::{
    AuthorizeInput, BatchPosition, Decision, Timestamp, ToolProvenance, default_strict_allow_list,
};
use planhost_protocol::{
    AuthorizeParams, AuthorizeResult, CancelParams, CancelResult, DecisionKind, ExecuteParams,
    PermissionAsk, PermissionAsks, ResolvePermissionParams, RpcError,
};
use planhost_store::{AskRecord, AuditRow};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::convert::refused;
use super::policy_cache::{Entry, PolicyView};
use super::service::{Caller, Service, to_value};

/// Who allowed a tool call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GrantedBy {
    /// The policy allowed it outright.
    Policy,
    /// The policy asked and a person said yes.
    Person,
}

/// A tool call that was allowed, not yet executed.
#[derive(Debug, Clone)]
pub struct Grant {
    pub turn_id: String,
    pub tool_name: String,
    pub input_sha256: String,
    pub by: GrantedBy,
}

struct Ask {
    info: PermissionAsk,
    input_sha256: String,
}

struct Running {
    cancel: CancellationToken,
    conn: u64,
}

/// Key of a tool call: (session, tool call).
type CallKey = (String, String);

/// In-memory tool state. Nothing here survives a restart, by design: an ask or grant of a
/// previous host process is gone, so its tool call is denied (fail closed).
#[derive(Default)]
pub struct ToolRuntime {
    grants: Mutex<HashMap<CallKey, Grant>>,
    asks: Mutex<Vec<Ask>>,
    running: Mutex<HashMap<CallKey, Running>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The SHA-256 of a tool input, as the grant binds it.
pub fn input_digest(input: &Value) -> String {
    planhost_core::sha256_hex(input.to_string().as_bytes())
}

/// The policy's decision for one of the host's own tools in `view`.
pub fn decide(
    view: PolicyView,
    tool_name: &str,
    provenance: &ToolProvenance,
    batch: BatchPosition,
) -> Decision {
    let allow_list = default_strict_allow_list();
    planhost_core::authorize(&AuthorizeInput {
        preset: view.preset,
        mode: view.mode,
        permission_mode: view.permission,
        tool_name,
        provenance,
        batch,
        allow_list: &allow_list,
    })
}

impl ToolRuntime {
    /// The session's policy view for `turn_id`, from the cache or (once per change) the store.
    async fn policy_view(
        svc: &Service,
        session_id: String,
        turn_id: String,
    ) -> Result<PolicyView, RpcError> {
        let entry = match svc.policy.get(&session_id) {
            Some(entry) => entry,
            None => {
                let cache = Arc::clone(&svc.policy);
                let id = session_id.clone();
                let (entry, generation) = svc
                    .host(move |h| {
                        let generation = cache.generation();
                        Ok((
                            Entry::from_snapshot(h.store().policy_snapshot(&id)?),
                            generation,
                        ))
                    })
                    .await?;
                svc.policy
                    .insert_if_current(&session_id, entry.clone(), generation);
                entry
            }
        };
        if entry.active_turn.as_deref() != Some(turn_id.as_str()) {
            return Err(super::convert::host_error(
                &planhost_core::CoreError::TurnNotActive { turn_id }.into(),
            ));
        }
        Ok(entry.view)
    }

    /// `tools.authorize`: the durable session decides; the request's claims are only inputs.
    pub async fn authorize(
        &self,
        svc: &Arc<Service>,
        p: AuthorizeParams,
    ) -> Result<Value, RpcError> {
        let provenance = domain_provenance(&p.provenance)?;
        let view = Self::policy_view(svc, p.session_id.clone(), p.turn_id.clone()).await?;
        let decision = decide(
            view,
            &p.tool_name,
            &provenance,
            BatchPosition {
                index: p.batch_index,
                size: p.batch_size,
            },
        );
        let key = (p.session_id.clone(), p.tool_call_id.clone());
        let digest = input_digest(&p.input);
        let detail = json!({
            "tool": p.tool_name, "provenance": p.provenance, "mode": view.mode, "preset": view.preset,
            "permissionMode": view.permission.as_str(), "rule": decision.rule(), "input": audit_input(&p.input),
        });
        let audit_row = |action: &str, extra: Value| AuditRow {
            at: now(),
            session_id: Some(p.session_id.clone()),
            turn_id: Some(p.turn_id.clone()),
            tool_call_id: Some(p.tool_call_id.clone()),
            action: action.into(),
            detail: merge(&detail, extra).to_string(),
        };
        let result = match &decision {
            Decision::Allow { rule } => {
                let grant = Grant {
                    turn_id: p.turn_id.clone(),
                    tool_name: p.tool_name.clone(),
                    input_sha256: digest,
                    by: GrantedBy::Policy,
                };
                lock(&self.grants).insert(key, grant);
                svc.audit.record(audit_row("tool.allow", Value::Null));
                AuthorizeResult {
                    decision: DecisionKind::Allow,
                    code: None,
                    reason: format!("allowed by {rule}"),
                    rule: (*rule).into(),
                    request_id: None,
                }
            }
            Decision::Deny { rule, code, reason } => {
                lock(&self.grants).remove(&key);
                svc.audit.record(audit_row(
                    "tool.deny",
                    json!({ "code": code.as_str(), "reason": reason }),
                ));
                AuthorizeResult {
                    decision: DecisionKind::Deny,
                    code: Some(code.as_str().into()),
                    reason: reason.clone(),
                    rule: (*rule).into(),
                    request_id: None,
                }
            }
            Decision::Ask { rule, reason } => {
                let info = PermissionAsk {
                    request_id: planhost_host::new_id(),
                    session_id: p.session_id.clone(),
                    turn_id: p.turn_id.clone(),
                    tool_call_id: p.tool_call_id.clone(),
                    tool_name: p.tool_name.clone(),
                    reason: reason.clone(),
                    input: audit_input(&p.input),
                    decision: None,
                };
                let record = info.clone();
                svc.host(move |h| {
                    Ok(h.store().record_ask(&AskRecord {
                        session_id: &record.session_id,
                        turn_id: &record.turn_id,
                        tool_call_id: &record.tool_call_id,
                        request_id: &record.request_id,
                        tool_name: &record.tool_name,
                        reason: &record.reason,
                    })?)
                })
                .await?;
                let request_id = info.request_id.clone();
                lock(&self.asks).push(Ask {
                    info,
                    input_sha256: digest,
                });
                AuthorizeResult {
                    decision: DecisionKind::Ask,
                    code: None,
                    reason: reason.clone(),
                    rule: (*rule).into(),
                    request_id: Some(request_id),
                }
            }
        };
        to_value(result)
    }

    /// `permissions.resolve`: any surface answers an open ask, once.
    pub async fn resolve(
        &self,
        svc: &Arc<Service>,
        p: ResolvePermissionParams,
    ) -> Result<Value, RpcError> {
        let allow = match p.decision {
            DecisionKind::Allow => true,
            DecisionKind::Deny => false,
            DecisionKind::Ask => {
                return Err(refused(
                    "PERMISSION_DECISION_INVALID",
                    "answer allow or deny",
                ));
            }
        };
        let (ask, digest) = {
            let asks = lock(&self.asks);
            let ask = asks
                .iter()
                .find(|a| a.info.request_id == p.request_id)
                .ok_or_else(|| {
                    refused(
                        "PERMISSION_NOT_FOUND",
                        format!("no open ask {}", p.request_id),
                    )
                })?;
            if ask.info.decision.is_some() {
                return Err(refused(
                    "PERMISSION_ALREADY_RESOLVED",
                    "this ask was already answered",
                ));
            }
            (ask.info.clone(), ask.input_sha256.clone())
        };
        let decision = if allow { "allow" } else { "deny" };
        let record = ask.clone();
        let note = p.reason.clone();
        svc.host(move |h| {
            Ok(h.store().record_ask_answer(
                &AskRecord {
                    session_id: &record.session_id,
                    turn_id: &record.turn_id,
                    tool_call_id: &record.tool_call_id,
                    request_id: &record.request_id,
                    tool_name: &record.tool_name,
                    reason: &record.reason,
                },
                decision,
                note.as_deref(),
            )?)
        })
        .await?;
        let mut answered = ask.clone();
        {
            let mut asks = lock(&self.asks);
            let Some(slot) = asks.iter_mut().find(|a| a.info.request_id == p.request_id) else {
                return Err(refused("PERMISSION_NOT_FOUND", "the ask was withdrawn"));
            };
            if slot.info.decision.is_some() {
                return Err(refused(
                    "PERMISSION_ALREADY_RESOLVED",
                    "this ask was already answered",
                ));
            }
            slot.info.decision = Some(p.decision);
            answered.decision = Some(p.decision);
            if allow {
                let grant = Grant {
                    turn_id: ask.turn_id.clone(),
                    tool_name: ask.tool_name.clone(),
                    input_sha256: digest,
                    by: GrantedBy::Person,
                };
                lock(&self.grants)
                    .insert((ask.session_id.clone(), ask.tool_call_id.clone()), grant);
            }
        }
        to_value(answered)
    }

    /// Open asks, oldest first.
    pub fn pending_asks(&self) -> Result<Value, RpcError> {
        let asks = lock(&self.asks)
            .iter()
            .filter(|a| a.info.decision.is_none())
            .map(|a| a.info.clone())
            .collect();
        to_value(PermissionAsks { asks })
    }

    /// A turn ended: its grants and asks are void. Called from the host thread's event hook,
    /// before the reply of the change that ended it.
    pub fn turn_closed(&self, session_id: &str, turn_id: &str) {
        lock(&self.grants).retain(|(s, _), g| !(s == session_id && g.turn_id == turn_id));
        lock(&self.asks)
            .retain(|a| !(a.info.session_id == session_id && a.info.turn_id == turn_id));
    }

    /// The session's mode or permission changed: every grant must be asked for again.
    pub fn session_changed(&self, session_id: &str) {
        lock(&self.grants).retain(|(s, _), _| s != session_id);
    }

    /// `tools.execute`: only a call allowed in this turn for exactly this input runs, once, and
    /// only if the policy still allows it now.
    pub async fn execute(
        &self,
        svc: &Arc<Service>,
        caller: &Caller,
        p: ExecuteParams,
    ) -> Result<Value, RpcError> {
        let key = (p.session_id.clone(), p.tool_call_id.clone());
        let grant = lock(&self.grants).remove(&key);
        let grant = match grant {
            Some(g)
                if g.turn_id == p.turn_id
                    && g.tool_name == p.tool
                    && g.input_sha256 == input_digest(&p.input) =>
            {
                g
            }
            Some(_) | None => {
                return Err(refused(
                    "TOOL_NOT_AUTHORIZED",
                    format!(
                        "tool call {} was not authorized for {} with this input in this turn",
                        p.tool_call_id, p.tool
                    ),
                ));
            }
        };
        // Cancelled with the connection, even if it closes before the call registers below.
        let cancel = caller.kill.child_token();
        {
            let mut running = lock(&self.running);
            if running.contains_key(&key) {
                return Err(refused(
                    "TOOL_CALL_RUNNING",
                    "this tool call is already running",
                ));
            }
            running.insert(
                key.clone(),
                Running {
                    cancel: cancel.clone(),
                    conn: caller.conn,
                },
            );
        }
        let outcome = super::execute::run(svc, caller, &p, grant.by, cancel).await;
        lock(&self.running).remove(&key);
        let summary = match &outcome {
            Ok(v) => json!({ "tool": p.tool, "ok": true, "exit": v.get("exit") }),
            Err(e) => json!({ "tool": p.tool, "ok": false, "code": e.stable_code() }),
        };
        svc.audit.record(AuditRow {
            at: now(),
            session_id: Some(p.session_id.clone()),
            turn_id: Some(p.turn_id.clone()),
            tool_call_id: Some(p.tool_call_id.clone()),
            action: "tool.executed".into(),
            detail: summary.to_string(),
        });
        outcome
    }

    /// `tools.cancel`.
    pub fn cancel(&self, p: CancelParams) -> Result<Value, RpcError> {
        let cancelled = lock(&self.running)
            .get(&(p.session_id, p.tool_call_id))
            .map(|r| r.cancel.cancel())
            .is_some();
        to_value(CancelResult { cancelled })
    }

    /// A connection went away: cancel what it was running (its process trees die).
    pub fn connection_closed(&self, conn: u64) {
        for running in lock(&self.running).values().filter(|r| r.conn == conn) {
            running.cancel.cancel();
        }
    }
}

/// The wire's flat provenance as the domain's enum; an extension must name its package and path.
fn domain_provenance(p: &planhost_protocol::Provenance) -> Result<ToolProvenance, RpcError> {
    let missing = |field: &str| {
        let mut e = RpcError::new(
            planhost_protocol::codes::INVALID_PARAMS,
            "INVALID_PARAMS",
            format!("invalid params: provenance.{field}: required for an extension tool"),
        );
        if let Some(d) = e.data.as_mut() {
            d.field = Some(format!("provenance.{field}"));
        }
        e
    };
    match p.kind {
        planhost_protocol::ProvenanceKind::BuiltIn => Ok(ToolProvenance::BuiltIn),
        planhost_protocol::ProvenanceKind::Extension => Ok(ToolProvenance::Extension {
            package: p.package.clone().ok_or_else(|| missing("package"))?,
            source_path: p.source_path.clone().ok_or_else(|| missing("sourcePath"))?,
        }),
    }
}

fn now() -> Timestamp {
    let ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
    Timestamp(ms)
}

/// Inputs larger than this are summarised in the audit log and asks (a Write's content can be
/// megabytes); the grant still binds the full input's digest.
const AUDIT_INPUT_BYTES: usize = 4 * 1024;

fn audit_input(input: &Value) -> Value {
    let text = input.to_string();
    if text.len() <= AUDIT_INPUT_BYTES {
        return input.clone();
    }
    json!({ "summarized": true, "bytes": text.len(), "sha256": planhost_core::sha256_hex(text.as_bytes()) })
}

fn merge(base: &Value, extra: Value) -> Value {
    let mut out = base.clone();
    if let (Some(map), Value::Object(extra)) = (out.as_object_mut(), extra) {
        map.extend(extra);
    }
    out
}

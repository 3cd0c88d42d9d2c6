//! The tool authority: host-authoritative authorization, asks and their answers, and execution
//! of the host's own tools with streamed output and cancellation. It fails closed: no grant, no
//! run.
//!
//! A grant is bound to its session, turn, tool call, tool name and the SHA-256 of the input that
//! was authorized (or shown to the person). `tools.execute` needs a matching grant *and* re-runs
//! the policy against the durable state on the engine's thread, so nothing that changed since
//! the authorization (a mode switch, an approval) can be slipped past it.

mod execute;
pub(crate) mod policy_cache;

use std::cell::OnceCell;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use planhost_core::{
    AuditAction, AuthorizeInput, BatchPosition, CommandSafety, Decision, ErrorCode,
    PermissionDecision, SessionId, Timestamp, ToolCallId, ToolProvenance, TurnId,
    default_strict_allow_list,
};
use planhost_protocol::{
    AskList, AskStatus, AsksFilter, AuthorizeParams, AuthorizeResult, CancelParams, CancelResult,
    DecisionKind, ExecuteOutput, ExecuteParams, ExecuteResult, FinishedParams, FinishedResult,
    PermissionAsk, ResolvePermissionParams, ServerNotification, ToolActivity, ToolCallInfo,
    ToolCallState,
};
use planhost_store::{AskRecord, AuditRow};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::connection::Caller;
use crate::fanout::Fanout;
use crate::service::Inner;
use crate::{Result, ServiceError};
use policy_cache::Entry;

/// Who allowed a tool call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum GrantedBy {
    /// The policy allowed it outright.
    Policy,
    /// The policy asked and a person said yes.
    Person,
}

/// A tool call that was allowed, not yet executed.
#[derive(Debug, Clone)]
struct Grant {
    turn_id: TurnId,
    tool_name: String,
    input_sha256: String,
    by: GrantedBy,
    since: Timestamp,
    /// The classifier's verdict on the input's command line, when the policy needed it.
    verdict: Option<CommandSafety>,
}

struct Ask {
    info: PermissionAsk,
    input_sha256: String,
    /// The classifier's verdict the ask was decided by, for the grant a yes makes.
    verdict: Option<CommandSafety>,
}

struct Running {
    cancel: CancellationToken,
    conn: u64,
    turn_id: TurnId,
    tool_name: String,
    since: Timestamp,
}

/// Key of a tool call: (session, tool call).
type CallKey = (SessionId, ToolCallId);

/// In-memory tool state. Nothing here survives a restart, by design: an ask or grant of a
/// previous host process is gone, so its tool call is denied (fail closed).
#[derive(Default)]
pub(crate) struct ToolAuthority {
    grants: Mutex<HashMap<CallKey, Grant>>,
    asks: Mutex<Vec<Ask>>,
    running: Mutex<HashMap<CallKey, Running>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The SHA-256 of a tool input, as the grant binds it.
fn input_digest(input: &Value) -> String {
    planhost_core::sha256_hex(input.to_string().as_bytes())
}

/// The strict preset's allow-list, built once (it was built on every tool call).
static STRICT_ALLOW_LIST: std::sync::LazyLock<Vec<planhost_core::AllowedTool>> =
    std::sync::LazyLock::new(default_strict_allow_list);

/// The policy's decision for a tool call of the turn `entry` describes.
///
/// `verdict` keeps the shell classifier's answer on the call's command line: it is computed at
/// most once, only when a rule needs it, and a grant carries it to the execute-time re-check
/// (same input by the grant's digest, same turn, so the same dialect), which then does not
/// classify again on the host thread.
fn decide(
    entry: &Entry,
    tool_name: &str,
    provenance: &ToolProvenance,
    batch: BatchPosition,
    input: &Value,
    verdict: &OnceCell<CommandSafety>,
) -> Decision {
    let view = entry.view;
    let agent = entry.agent;
    // The command line is where the session agent's catalog says it is (Claude Code's `Bash`
    // `{command}`, Codex's `shell` argv, Gemini CLI's `run_shell_command` `{command}`), in the
    // tool's own dialect or else the turn's.
    let command = agent.classify(tool_name).command.command_line(input);
    planhost_core::authorize(&AuthorizeInput {
        agent,
        preset: view.preset,
        mode: view.mode,
        permission_mode: view.permission,
        tool_name,
        provenance,
        batch,
        allow_list: &STRICT_ALLOW_LIST,
        command: command.as_ref().map(|c| c.line.as_ref()),
        dialect: command
            .as_ref()
            .and_then(|c| c.dialect)
            .unwrap_or(entry.dialect),
        verdict: Some(verdict),
    })
}

/// What the audit row says of a shell call's command line: proven read-only, or why it asked
/// (the classifier's reason is in the ask's); `null` when the permission mode decided alone.
fn shell_detail(decision: &Decision, agent: planhost_core::Agent, tool_name: &str) -> Value {
    use planhost_core::{PolicyRule as R, ToolNature};
    if !matches!(
        agent.classify(tool_name).nature,
        ToolNature::RunsCommands | ToolNature::RunsSkill
    ) {
        return Value::Null;
    }
    let proven = matches!(
        decision.rule(),
        R::AgentShellReadOnly | R::PlanHostShellReadOnly | R::PlanExploreShellReadOnly
    );
    match decision {
        Decision::Ask { reason, .. } => json!({ "readOnly": false, "reason": reason }),
        Decision::Allow { .. } if proven => json!({ "readOnly": true }),
        Decision::Allow { .. } | Decision::Deny { .. } => json!({ "readOnly": null }),
    }
}

/// Inputs larger than this are summarised in the audit log and asks (a Write's content can be
/// megabytes); the grant still binds the full input's digest.
const AUDIT_INPUT_BYTES: usize = 4 * 1024;

fn audit_input(input: &Value) -> Value {
    summarized_input(&input.to_string()).unwrap_or_else(|| input.clone())
}

/// The summary that stands for an input of `text` (its JSON) above [`AUDIT_INPUT_BYTES`];
/// `None` when the input is shown whole.
fn summarized_input(text: &str) -> Option<Value> {
    (text.len() > AUDIT_INPUT_BYTES).then(|| {
        json!({ "summarized": true, "bytes": text.len(), "sha256": planhost_core::sha256_hex(text.as_bytes()) })
    })
}

/// The audit detail of an allow or a deny, serialised in one pass. Its keys are in the order a
/// JSON map sorts them (the order these rows always had).
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct DecisionDetail<'a> {
    agent: planhost_core::Agent,
    #[serde(skip_serializing_if = "Option::is_none")]
    code: Option<planhost_core::DenyCode>,
    input: &'a Value,
    mode: planhost_core::Mode,
    permission_mode: &'a str,
    preset: planhost_core::PolicyPreset,
    provenance: &'a planhost_protocol::Provenance,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<&'a str>,
    rule: planhost_core::PolicyRule,
    shell: &'a Value,
    tool: &'a str,
}

fn ask_record(info: &PermissionAsk) -> AskRecord<'_> {
    AskRecord {
        session_id: &info.session_id,
        turn_id: &info.turn_id,
        tool_call_id: &info.tool_call_id,
        request_id: &info.request_id,
        tool_name: &info.tool_name,
        reason: &info.reason,
    }
}

/// The wire's flat provenance as the domain's enum; an extension must name its package and path.
pub(crate) fn domain_provenance(p: &planhost_protocol::Provenance) -> Result<ToolProvenance> {
    let missing = |field: &str| {
        ServiceError::Request(planhost_protocol::RequestError {
            code: ErrorCode::InvalidParams,
            message: format!("invalid params: provenance.{field}: required for an extension tool"),
            field: Some(format!("provenance.{field}")),
        })
    };
    match p.kind {
        planhost_protocol::ProvenanceKind::BuiltIn => Ok(ToolProvenance::BuiltIn),
        planhost_protocol::ProvenanceKind::Extension => Ok(ToolProvenance::Extension {
            package: p.package.clone().ok_or_else(|| missing("package"))?,
            source_path: p.source_path.clone().ok_or_else(|| missing("sourcePath"))?,
        }),
    }
}

/// Tells the connections that watch tool activity that a call changed state.
fn activity(
    svc: &Inner,
    key: &CallKey,
    turn_id: &TurnId,
    tool_name: &str,
    state: Option<ToolCallState>,
) {
    if svc.fanout.has_tool_watchers() {
        announce(&svc.fanout, now(svc), key, turn_id, tool_name, state);
    }
}

fn announce(
    fanout: &Fanout,
    at: Timestamp,
    (session_id, tool_call_id): &CallKey,
    turn_id: &TurnId,
    tool_name: &str,
    state: Option<ToolCallState>,
) {
    // Most hosts have no page open: a tool call then builds and sends nothing.
    if !fanout.has_tool_watchers() {
        return;
    }
    fanout.send_tool_activity(
        session_id,
        &ServerNotification::ToolActivity(ToolActivity {
            session_id: session_id.clone(),
            turn_id: turn_id.clone(),
            tool_call_id: tool_call_id.clone(),
            tool_name: tool_name.to_owned(),
            state,
            at,
        }),
    );
}

fn now(svc: &Inner) -> Timestamp {
    svc.clock.now()
}

/// Records a decision in the decision journal before it is answered: a decision that could not
/// be recorded (a full disk, an I/O error) is never answered, so no tool call is allowed
/// unaudited. One append on this thread; the audit log gets the row from the journal's writer.
async fn record_decision(svc: &Inner, row: AuditRow) -> Result<()> {
    Ok(svc.audit.record_durable(row)?)
}

impl ToolAuthority {
    /// The session's policy entry for `turn_id`, from the cache or (once per change) the store.
    async fn policy_view(svc: &Inner, session_id: &SessionId, turn_id: &TurnId) -> Result<Entry> {
        let entry = match svc.policy.get(session_id) {
            Some(entry) => entry,
            None => {
                let cache = Arc::clone(&svc.policy);
                let id = session_id.clone();
                let (entry, generation) = svc
                    .engine(move |e| {
                        let generation = cache.generation();
                        Ok((
                            Entry::from_snapshot(e.store().policy_snapshot(&id)?),
                            generation,
                        ))
                    })
                    .await?;
                svc.policy
                    .insert_if_current(session_id, entry.clone(), generation);
                entry
            }
        };
        if entry.active_turn.as_ref() != Some(turn_id) {
            return Err(planhost_core::CoreError::TurnNotActive {
                turn_id: turn_id.clone(),
            }
            .into());
        }
        Ok(entry)
    }

    /// `tools.authorize`: the durable session decides; the request's claims are only inputs.
    pub(crate) async fn authorize(
        &self,
        svc: &Inner,
        p: AuthorizeParams,
    ) -> Result<AuthorizeResult> {
        let provenance = domain_provenance(&p.provenance)?;
        let entry = Self::policy_view(svc, &p.session_id, &p.turn_id).await?;
        let view = entry.view;
        let batch = BatchPosition {
            index: p.batch_index,
            size: p.batch_size,
        };
        let verdict = OnceCell::new();
        let decision = decide(&entry, &p.tool_name, &provenance, batch, &p.input, &verdict);
        let key = (p.session_id.clone(), p.tool_call_id.clone());
        // The input is serialised once: for the grant's digest and the audit row's size check.
        let input_text = p.input.to_string();
        let digest = planhost_core::sha256_hex(input_text.as_bytes());
        let summary = summarized_input(&input_text);
        let shell = shell_detail(&decision, entry.agent, &p.tool_name);
        let audit_row =
            |action: AuditAction, denied: Option<(planhost_core::DenyCode, &str)>| AuditRow {
                at: now(svc),
                session_id: Some(p.session_id.clone()),
                turn_id: Some(p.turn_id.clone()),
                tool_call_id: Some(p.tool_call_id.clone()),
                action,
                detail: serde_json::to_string(&DecisionDetail {
                    agent: entry.agent,
                    code: denied.map(|(code, _)| code),
                    input: summary.as_ref().unwrap_or(&p.input),
                    mode: view.mode,
                    permission_mode: view.permission.as_str(),
                    preset: view.preset,
                    provenance: &p.provenance,
                    reason: denied.map(|(_, reason)| reason),
                    rule: decision.rule(),
                    shell: &shell,
                    tool: &p.tool_name,
                })
                .unwrap_or_default(),
            };
        Ok(match &decision {
            Decision::Allow { rule } => {
                // Granted only once recorded. execute re-checks the durable turn and policy, so
                // a change committed while this waited still wins.
                record_decision(svc, audit_row(AuditAction::ToolAllow, None)).await?;
                let grant = Grant {
                    turn_id: p.turn_id.clone(),
                    tool_name: p.tool_name.clone(),
                    input_sha256: digest,
                    by: GrantedBy::Policy,
                    since: now(svc),
                    verdict: verdict.get().cloned(),
                };
                lock(&self.grants).insert(key.clone(), grant);
                activity(
                    svc,
                    &key,
                    &p.turn_id,
                    &p.tool_name,
                    Some(ToolCallState::Allowed),
                );
                AuthorizeResult {
                    decision: DecisionKind::Allow,
                    code: None,
                    reason: format!("allowed by {rule}"),
                    rule: *rule,
                    request_id: None,
                    default_answer: None,
                }
            }
            Decision::Deny { rule, code, reason } => {
                let void = lock(&self.grants).remove(&key);
                if let Some(g) = void {
                    activity(svc, &key, &g.turn_id, &g.tool_name, None);
                }
                record_decision(
                    svc,
                    audit_row(AuditAction::ToolDeny, Some((*code, reason.as_str()))),
                )
                .await?;
                AuthorizeResult {
                    decision: DecisionKind::Deny,
                    code: Some(*code),
                    reason: reason.clone(),
                    rule: *rule,
                    request_id: None,
                    default_answer: None,
                }
            }
            Decision::Ask {
                rule,
                reason,
                default,
            } => {
                let info = PermissionAsk {
                    request_id: crate::new_id().into(),
                    session_id: p.session_id.clone(),
                    turn_id: p.turn_id.clone(),
                    tool_call_id: p.tool_call_id.clone(),
                    tool_name: p.tool_name.clone(),
                    reason: reason.clone(),
                    rule: *rule,
                    default_answer: *default,
                    input: audit_input(&p.input),
                    asked_at: now(svc),
                    decision: None,
                    resolved_by: None,
                };
                let record = info.clone();
                svc.engine(move |e| Ok(e.store().record_ask(&ask_record(&record))?))
                    .await?;
                let request_id = info.request_id.clone();
                lock(&self.asks).push(Ask {
                    info,
                    input_sha256: digest,
                    verdict: verdict.get().cloned(),
                });
                activity(
                    svc,
                    &key,
                    &p.turn_id,
                    &p.tool_name,
                    Some(ToolCallState::Asking),
                );
                AuthorizeResult {
                    decision: DecisionKind::Ask,
                    code: None,
                    reason: reason.clone(),
                    rule: *rule,
                    request_id: Some(request_id),
                    default_answer: Some(*default),
                }
            }
        })
    }

    /// `permissions.resolve`: any approver answers an open ask, once.
    pub(crate) async fn resolve(
        &self,
        svc: &Inner,
        caller: &Caller,
        p: ResolvePermissionParams,
    ) -> Result<PermissionAsk> {
        let already = || {
            ServiceError::refused(
                ErrorCode::PermissionAlreadyResolved,
                "this ask was already answered",
            )
        };
        let (ask, digest) = {
            let asks = lock(&self.asks);
            let ask = asks
                .iter()
                .find(|a| a.info.request_id == p.request_id)
                .ok_or_else(|| {
                    ServiceError::refused(
                        ErrorCode::PermissionNotFound,
                        format!("no open ask {}", p.request_id),
                    )
                })?;
            if ask.info.decision.is_some() {
                return Err(already());
            }
            (ask.info.clone(), ask.input_sha256.clone())
        };
        let record = ask.clone();
        let note = p.note.clone();
        let by = caller.by.clone();
        let decision = p.decision;
        svc.engine(move |e| {
            Ok(e.store()
                .record_ask_answer(&ask_record(&record), decision, note.as_deref(), &by)?)
        })
        .await?;
        let mut asks = lock(&self.asks);
        let Some(slot) = asks.iter_mut().find(|a| a.info.request_id == p.request_id) else {
            return Err(ServiceError::refused(
                ErrorCode::PermissionNotFound,
                "the ask was withdrawn",
            ));
        };
        if slot.info.decision.is_some() {
            return Err(already());
        }
        slot.info.decision = Some(p.decision);
        slot.info.resolved_by = Some(caller.by.clone());
        let answered = slot.info.clone();
        let verdict = slot.verdict.clone();
        drop(asks);
        let key = (ask.session_id.clone(), ask.tool_call_id.clone());
        let state = match p.decision {
            PermissionDecision::Allow => {
                let grant = Grant {
                    turn_id: ask.turn_id.clone(),
                    tool_name: ask.tool_name.clone(),
                    input_sha256: digest,
                    by: GrantedBy::Person,
                    since: now(svc),
                    verdict,
                };
                lock(&self.grants).insert(key.clone(), grant);
                Some(ToolCallState::Allowed)
            }
            PermissionDecision::Deny => None,
        };
        activity(svc, &key, &ask.turn_id, &ask.tool_name, state);
        Ok(answered)
    }

    /// `permissions.list`, newest first.
    pub(crate) fn list_asks(&self, p: &AsksFilter) -> AskList {
        let items = lock(&self.asks)
            .iter()
            .rev()
            .filter(|a| {
                p.session_id
                    .as_ref()
                    .is_none_or(|s| *s == a.info.session_id)
            })
            .filter(|a| {
                let status = match a.info.decision {
                    None => AskStatus::Open,
                    Some(_) => AskStatus::Answered,
                };
                p.status.as_ref().is_none_or(|s| s.contains(&status))
            })
            .take(crate::handlers::limit(p.limit))
            .map(|a| a.info.clone())
            .collect();
        AskList { items }
    }

    /// A turn ended: its grants and asks are void. Called from the engine thread's event hook,
    /// before the reply of the change that ended it.
    /// Watchers of tool activity hear of every call withdrawn (`at` is the event's time).
    pub(crate) fn turn_closed(
        &self,
        fanout: &Fanout,
        at: Timestamp,
        session_id: &SessionId,
        turn_id: &TurnId,
    ) {
        let watched = fanout.has_tool_watchers();
        let mut void: Vec<(CallKey, String)> = Vec::new();
        lock(&self.grants).retain(|key, g| {
            let ends = key.0 == *session_id && g.turn_id == *turn_id;
            if ends && watched {
                void.push((key.clone(), g.tool_name.clone()));
            }
            !ends
        });
        lock(&self.asks).retain(|a| {
            let ends = a.info.session_id == *session_id && a.info.turn_id == *turn_id;
            if ends && watched && a.info.decision.is_none() {
                let key = (a.info.session_id.clone(), a.info.tool_call_id.clone());
                void.push((key, a.info.tool_name.clone()));
            }
            !ends
        });
        for (key, tool) in &void {
            announce(fanout, at, key, turn_id, tool, None);
        }
    }

    /// The session's mode or permission changed: every grant must be asked for again.
    pub(crate) fn session_changed(&self, fanout: &Fanout, at: Timestamp, session_id: &SessionId) {
        let watched = fanout.has_tool_watchers();
        let mut void: Vec<(CallKey, Grant)> = Vec::new();
        lock(&self.grants).retain(|key, g| {
            let ends = key.0 == *session_id;
            if ends && watched {
                void.push((key.clone(), g.clone()));
            }
            !ends
        });
        for (key, g) in &void {
            announce(fanout, at, key, &g.turn_id, &g.tool_name, None);
        }
    }

    /// `tools.execute`: only a call allowed in this turn for exactly this input runs, once, and
    /// only if the policy still allows it now.
    pub(crate) async fn execute(
        &self,
        svc: &Inner,
        caller: &Caller,
        p: ExecuteParams,
    ) -> Result<ExecuteResult> {
        let key = (p.session_id.clone(), p.tool_call_id.clone());
        let grant = lock(&self.grants).remove(&key);
        let grant = match grant {
            Some(g)
                if g.turn_id == p.turn_id
                    && g.tool_name == p.tool.as_str()
                    && g.input_sha256 == input_digest(&p.input) =>
            {
                g
            }
            other => {
                // A grant for other input or another turn is spent by the attempt.
                if let Some(g) = other {
                    activity(svc, &key, &g.turn_id, &g.tool_name, None);
                }
                return Err(ServiceError::refused(
                    ErrorCode::ToolNotAuthorized,
                    format!(
                        "tool call {} was not authorized for {} with this input in this turn",
                        p.tool_call_id,
                        p.tool.as_str()
                    ),
                ));
            }
        };
        // Cancelled with the connection, even if it closes before the call registers below.
        let cancel = caller.kill.child_token();
        {
            let mut running = lock(&self.running);
            if running.contains_key(&key) {
                return Err(ServiceError::refused(
                    ErrorCode::ToolCallRunning,
                    "this tool call is already running",
                ));
            }
            running.insert(
                key.clone(),
                Running {
                    cancel: cancel.clone(),
                    conn: caller.conn,
                    turn_id: grant.turn_id.clone(),
                    tool_name: grant.tool_name.clone(),
                    since: now(svc),
                },
            );
        }
        let tool = p.tool.as_str();
        activity(
            svc,
            &key,
            &grant.turn_id,
            tool,
            Some(ToolCallState::Running),
        );
        let outcome = execute::run(svc, caller, &p, grant.by, grant.verdict, cancel).await;
        lock(&self.running).remove(&key);
        activity(svc, &key, &grant.turn_id, tool, None);
        let summary = match &outcome {
            Ok(v) => {
                // Bash's exit status; null for the file tools.
                let exit = if let ExecuteOutput::Bash(bash) = &v.output {
                    Some(bash.run.exit)
                } else {
                    None
                };
                json!({ "tool": p.tool.as_str(), "ok": true, "exit": exit })
            }
            Err(e) => json!({ "tool": p.tool.as_str(), "ok": false, "code": e.code() }),
        };
        svc.audit.record(AuditRow {
            at: now(svc),
            session_id: Some(p.session_id.clone()),
            turn_id: Some(p.turn_id.clone()),
            tool_call_id: Some(p.tool_call_id.clone()),
            action: AuditAction::ToolExecuted,
            detail: summary.to_string(),
        });
        outcome
    }

    /// A host method that is itself the tool (`plans.submit`, `plans.enter`) completed its call.
    pub(crate) fn release(&self, svc: &Inner, key: &CallKey) {
        let released = lock(&self.grants).remove(key);
        if let Some(grant) = released {
            activity(svc, key, &grant.turn_id, &grant.tool_name, None);
        }
    }

    /// `tools.finished`: the client ran an allowed call itself and it ended; its grant is void.
    ///
    /// A call the host asked about and nobody answered in planhost, which the client then ran,
    /// was answered in the client's own dialog (Claude Code's permission dialog, whose answer
    /// no hook reports): its ask is closed as allowed there, recorded with the client that says
    /// so, so that no surface offers to answer a call that already ran. It grants nothing.
    pub(crate) async fn finished(
        &self,
        svc: &Inner,
        caller: &Caller,
        p: &FinishedParams,
    ) -> Result<FinishedResult> {
        let open_ask = lock(&self.asks)
            .iter()
            .find(|a| {
                a.info.session_id == p.session_id
                    && a.info.tool_call_id == p.tool_call_id
                    && a.info.turn_id == p.turn_id
                    && a.info.decision.is_none()
            })
            .map(|a| a.info.clone());
        if let Some(ask) = open_ask {
            let record = ask.clone();
            let by = caller.by.clone();
            svc.engine(move |e| {
                Ok(e.store().record_ask_answer(
                    &ask_record(&record),
                    PermissionDecision::Allow,
                    Some("answered in the agent's own dialog: the agent ran the tool"),
                    &by,
                )?)
            })
            .await?;
            if let Some(slot) = lock(&self.asks)
                .iter_mut()
                .find(|a| a.info.request_id == ask.request_id)
            {
                slot.info.decision = Some(PermissionDecision::Allow);
                slot.info.resolved_by = Some(caller.by.clone());
            }
            let key = (p.session_id.clone(), p.tool_call_id.clone());
            activity(svc, &key, &ask.turn_id, &ask.tool_name, None);
        }
        Ok(self.release_grant(svc, p))
    }

    /// Drops the call's unused grant, recording that the client ran it.
    fn release_grant(&self, svc: &Inner, p: &FinishedParams) -> FinishedResult {
        let key = (p.session_id.clone(), p.tool_call_id.clone());
        let released = {
            let mut grants = lock(&self.grants);
            match grants.get(&key) {
                Some(g) if g.turn_id == p.turn_id => grants.remove(&key),
                Some(_) | None => None,
            }
        };
        let Some(grant) = released else {
            return FinishedResult { released: false };
        };
        activity(svc, &key, &grant.turn_id, &grant.tool_name, None);
        svc.audit.record(AuditRow {
            at: now(svc),
            session_id: Some(p.session_id.clone()),
            turn_id: Some(p.turn_id.clone()),
            tool_call_id: Some(p.tool_call_id.clone()),
            action: AuditAction::ToolFinished,
            detail: json!({ "tool": grant.tool_name, "ok": !p.is_error, "ranBy": "client" })
                .to_string(),
        });
        FinishedResult { released: true }
    }

    /// The unfinished tool calls of a session, oldest first: open asks, unused grants and
    /// calls the host is running.
    pub(crate) fn in_flight(&self, session_id: &SessionId) -> Vec<ToolCallInfo> {
        let info = |(_, call): &CallKey, turn: &TurnId, tool: &str, state, since| ToolCallInfo {
            turn_id: turn.clone(),
            tool_call_id: call.clone(),
            tool_name: tool.to_owned(),
            state,
            since,
        };
        let mut calls: Vec<ToolCallInfo> = Vec::new();
        for (key, g) in lock(&self.grants)
            .iter()
            .filter(|(k, _)| k.0 == *session_id)
        {
            calls.push(info(
                key,
                &g.turn_id,
                &g.tool_name,
                ToolCallState::Allowed,
                g.since,
            ));
        }
        for (key, r) in lock(&self.running)
            .iter()
            .filter(|(k, _)| k.0 == *session_id)
        {
            calls.push(info(
                key,
                &r.turn_id,
                &r.tool_name,
                ToolCallState::Running,
                r.since,
            ));
        }
        for a in lock(&self.asks)
            .iter()
            .filter(|a| a.info.session_id == *session_id && a.info.decision.is_none())
        {
            calls.push(ToolCallInfo {
                turn_id: a.info.turn_id.clone(),
                tool_call_id: a.info.tool_call_id.clone(),
                tool_name: a.info.tool_name.clone(),
                state: ToolCallState::Asking,
                since: a.info.asked_at,
            });
        }
        calls.sort_by(|a, b| {
            (a.since, a.tool_call_id.as_str()).cmp(&(b.since, b.tool_call_id.as_str()))
        });
        calls
    }

    /// `tools.cancel`.
    pub(crate) fn cancel(&self, p: &CancelParams) -> CancelResult {
        let cancelled = lock(&self.running)
            .get(&(p.session_id.clone(), p.tool_call_id.clone()))
            .map(|r| r.cancel.cancel())
            .is_some();
        CancelResult { cancelled }
    }

    /// `tools.stop`: a person stops a call the host runs. The stop is on record (`tool.stopped`,
    /// with who gave it) before the call is cancelled; a call that is not running is left alone.
    pub(crate) async fn stop(
        &self,
        svc: &Inner,
        caller: &Caller,
        p: &CancelParams,
    ) -> Result<CancelResult> {
        let key = (p.session_id.clone(), p.tool_call_id.clone());
        let running = lock(&self.running)
            .get(&key)
            .map(|r| (r.turn_id.clone(), r.tool_name.clone()));
        let Some((turn_id, tool_name)) = running else {
            return Ok(CancelResult { cancelled: false });
        };
        let (session, call, by) = (
            p.session_id.clone(),
            p.tool_call_id.clone(),
            caller.by.clone(),
        );
        svc.engine(move |e| {
            Ok(e.store()
                .record_tool_stopped(&session, &turn_id, &call, &tool_name, &by)?)
        })
        .await?;
        Ok(self.cancel(p))
    }

    /// A connection went away: cancel what it was running (its process trees die).
    pub(crate) fn connection_closed(&self, conn: u64) {
        for running in lock(&self.running).values().filter(|r| r.conn == conn) {
            running.cancel.cancel();
        }
    }
}

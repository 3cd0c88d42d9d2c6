//! The tool authority: host-authoritative authorization, asks and their answers, and execution
//! of the host's own tools with streamed output and cancellation. It fails closed: no grant, no
//! run.
//!
//! A grant is bound to its session, turn, tool call, tool name and the SHA-256 of the input that
//! was authorized (or shown to the person). `tools.execute` needs a matching grant *and* re-runs
//! the policy against the durable state on the engine's thread, so nothing that changed since
//! the authorization (a mode switch, an approval) can be slipped past it.

mod asks;
mod calls;
mod execute;
pub(crate) mod policy_cache;
mod route;

use std::cell::OnceCell;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use planhost_core::{
    AuditAction, AuthorizeInput, BatchPosition, CallFacts, CommandSafety, Decision, ErrorCode,
    SessionId, Timestamp, ToolCallId, ToolProvenance, TurnId, default_strict_allow_list,
};
use planhost_protocol::{
    AuthorizeParams, AuthorizeResult, DecisionKind, PermissionAsk, ServerNotification,
    ToolActivity, ToolCallState,
};
use planhost_store::{AskRecord, AuditRow};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

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
    /// What the host established about the call, for the execute-time re-check.
    facts: CallFacts,
    /// For a shell call of an agent whose shell planhost runs: what `agent.run` may run.
    routed: Option<Routed>,
}

struct Ask {
    info: PermissionAsk,
    input_sha256: String,
    /// The classifier's verdict the ask was decided by, for the grant a yes makes.
    verdict: Option<CommandSafety>,
    /// What the host established about the call.
    facts: CallFacts,
    /// For a shell call of an agent whose shell planhost runs: what `agent.run` may run once
    /// the person says yes in the agent's own dialog.
    routed: Option<Routed>,
}

/// A shell call an agent's hook routes through `agent.run`: exactly what may run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Routed {
    /// The command line, exactly.
    pub(crate) command: String,
    /// The agent's timeout for it, in milliseconds, if it gave one.
    pub(crate) timeout_ms: Option<u64>,
    /// The agent runs it in the background (no timeout of its own).
    pub(crate) background: bool,
    /// The call's input, exactly, for the run-time re-check.
    pub(crate) input: Value,
}

impl Routed {
    /// What an agent's shell call routes, read from its input where the agent's profile and
    /// catalog say; `None` when the agent runs no shell through planhost or this is no shell.
    fn of(agent: planhost_core::Agent, tool_name: &str, input: &Value) -> Option<Self> {
        let profile = agent.profile();
        if profile.shell != planhost_core::ShellRoute::RewriteToHost {
            return None;
        }
        let classified = agent.classify(tool_name);
        if classified.nature != planhost_core::ToolNature::RunsCommands {
            return None;
        }
        let command = classified.command.command_line(input)?.line.into_owned();
        let timeout_ms = profile
            .shell_input
            .timeout_field
            .and_then(|f| input.get(f))
            .and_then(Value::as_u64);
        let background = profile
            .shell_input
            .background_field
            .and_then(|f| input.get(f))
            .and_then(Value::as_bool)
            .unwrap_or(false);
        Some(Self {
            command,
            timeout_ms,
            background,
            input: input.clone(),
        })
    }
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
    /// The session of each routed shell call, for `agent.run` (which names only the call).
    routes: Mutex<HashMap<ToolCallId, SessionId>>,
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
    facts: &CallFacts,
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
        facts,
    })
}

/// What the host establishes about a shell command before the policy decides, from one parse
/// of it (whose verdict goes into `verdict`, so the policy does not classify again): what it
/// reaches (DESIGN decision 14: planhost's approval surfaces, a launcher outside its reach), and
/// for a command proven read-only that runs git, what the repository's configuration names
/// (decision 15), read in `cwd` (the session's root when absent). Nothing for other tools.
fn shell_facts(
    svc: &Inner,
    entry: &Entry,
    tool_name: &str,
    input: &Value,
    cwd: Option<&std::path::Path>,
    verdict: &OnceCell<CommandSafety>,
    draft: planhost_core::DraftWrite,
) -> CallFacts {
    let none = CallFacts {
        draft,
        ..CallFacts::NONE
    };
    let classified = entry.agent.classify(tool_name);
    if !matches!(
        classified.nature,
        planhost_core::ToolNature::RunsCommands | planhost_core::ToolNature::RunsSkill
    ) {
        return none;
    }
    let Some(line) = classified.command.command_line(input) else {
        return none;
    };
    let dialect = line.dialect.unwrap_or(entry.dialect);
    let facts = planhost_core::command_facts(&line.line, dialect);
    let _ = verdict.set(facts.safety.clone());
    let reach = svc.surfaces.reach(&line.line, &facts.programs);
    let git = match (facts.safety.is_read_only(), facts.git) {
        (false, _) | (true, planhost_core::GitUse::None) => planhost_core::GitRisk::None,
        (true, planhost_core::GitUse::Elsewhere) => planhost_core::GitRisk::Elsewhere,
        (true, planhost_core::GitUse::Here) => {
            let root = std::path::Path::new(&*entry.workspace_root);
            let dir = cwd.unwrap_or(root);
            let env = planhost_tools::bash_env(|name| std::env::var(name).ok());
            match planhost_tools::git_guard::program_keys(dir, &env) {
                Some(keys) => planhost_tools::git_guard::unswitchable(&keys)
                    .first()
                    .map_or(planhost_core::GitRisk::None, |(key, value)| {
                        planhost_core::GitRisk::NamesProgram {
                            key: key.clone(),
                            value: value.clone(),
                        }
                    }),
                // Not in a repository (or no git): git reads nothing of one.
                None => planhost_core::GitRisk::None,
            }
        }
    };
    CallFacts { draft, reach, git }
}

/// The git configuration a command admitted unasked runs with (DESIGN decision 15), from the
/// repository at `dir` as it is now, at run time: every driver it names switched to run nothing
/// of its own. Read (a git process) only when the command runs git. A repository that now names
/// a program no setting switches off (`diff.external`, a driver's `command`) changed since the
/// call was allowed: the run is refused, and the call, proposed again, is asked.
fn unasked_git_env(
    dir: &std::path::Path,
    env: &[(String, String)],
    command: &str,
) -> Result<Vec<(String, String)>> {
    let runs_git = planhost_core::command_facts(command, planhost_core::Dialect::Posix).git
        != planhost_core::GitUse::None;
    let keys = if runs_git {
        planhost_tools::git_guard::program_keys(dir, env).unwrap_or_default()
    } else {
        Vec::new()
    };
    if let Some((key, value)) = planhost_tools::git_guard::unswitchable(&keys).first() {
        return Err(ServiceError::refused(
            ErrorCode::ToolNotAuthorized,
            format!(
                "the repository's git configuration now names a program git would run (`{key}` \
                 = `{value}`), which it did not when this call was allowed: planhost does not \
                 run it unasked; propose the call again to be asked"
            ),
        ));
    }
    let drivers: Vec<String> = keys.into_iter().map(|(k, _)| k).collect();
    Ok(planhost_tools::git_guard::unasked_env(&drivers))
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

    /// `tools.authorize`: the durable session decides; the request's claims are only inputs,
    /// with what the host established about the call: `draft`, whether a file writer writes
    /// the agent's own plan draft (checked on the disk), and what a shell command reaches
    /// (against the host's own paths).
    pub(crate) async fn authorize(
        &self,
        svc: &Inner,
        p: AuthorizeParams,
        draft: planhost_core::DraftWrite,
        cwd: Option<&std::path::Path>,
    ) -> Result<AuthorizeResult> {
        let provenance = domain_provenance(&p.provenance)?;
        let entry = Self::policy_view(svc, &p.session_id, &p.turn_id).await?;
        let verdict = OnceCell::new();
        let facts = shell_facts(svc, &entry, &p.tool_name, &p.input, cwd, &verdict, draft);
        let view = entry.view;
        let batch = BatchPosition {
            index: p.batch_index,
            size: p.batch_size,
        };
        let decision = decide(
            &entry,
            &p.tool_name,
            &provenance,
            batch,
            &p.input,
            &verdict,
            &facts,
        );
        let routed = Routed::of(entry.agent, &p.tool_name, &p.input);
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
                    facts: facts.clone(),
                    routed: routed.clone(),
                };
                if routed.is_some() {
                    lock(&self.routes).insert(p.tool_call_id.clone(), p.session_id.clone());
                }
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
                if routed.is_some() {
                    lock(&self.routes).insert(p.tool_call_id.clone(), p.session_id.clone());
                }
                lock(&self.asks).push(Ask {
                    info,
                    input_sha256: digest,
                    verdict: verdict.get().cloned(),
                    facts: facts.clone(),
                    routed: routed.clone(),
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
}

//! One Claude Code hook call: the event on stdin, planhost's answer on stdout and in the exit
//! status.
//!
//! The hook reaches the host through [`Host`] (a socket connection in the binary, anything that
//! answers typed calls in a test) and fails closed by itself: where the hook is the gate
//! (`PreToolUse`, `PermissionRequest`), anything that goes wrong — bad input, no host, an
//! internal error — blocks the tool with planhost's code and a sentence saying what to do
//! (exit status 2, which Claude Code treats as "blocked", the reason on stderr for the model).
//! The events that only record never block the person: a failure there is said as a
//! `systemMessage` and the session goes on, its tools still gated.

use std::path::PathBuf;

use planhost_core::{
    Agent, ApprovalStatus, EntryId, ErrorCode, ExecutionOutcome, ExecutionState, Interactivity,
    Mode, SessionId, TurnId, TurnOrigin,
};
use planhost_protocol::{
    ApprovalInfo, AuthorizeParams, AuthorizeResult, BeginTurnParams, BranchRef, DecisionKind,
    EndExecutionParams, EndTurnParams, EnterPlanParams, ExecutionRef, FinishedParams, Method,
    OpenSessionParams, PlansFilter, ProposalRef, Provenance, SaveCheckpointParams, SessionInfo,
    SubmitPlanParams, TurnOutcome, methods,
};
use serde::Deserialize;
use serde_json::{Value, json};

/// A failed host call: its stable code and message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message} [{}]", code.as_str())]
pub struct HostError {
    /// The stable code (`HOST_UNREACHABLE` when there is no host).
    pub code: ErrorCode,
    /// What happened and what to do.
    pub message: String,
}

/// Whatever answers planhost's typed calls for one hook: the host's socket in the binary.
pub trait Host {
    /// One call.
    fn call<M: Method>(&mut self, params: M::Params) -> Result<M::Result, HostError>;
}

/// What Claude Code sends on stdin (the fields planhost reads; others are ignored).
#[derive(Debug, Clone, Deserialize)]
pub struct HookInput {
    /// Claude Code's session id: the host session's external id.
    pub session_id: String,
    /// The session's working directory: its workspace.
    pub cwd: PathBuf,
    /// Which event.
    pub hook_event_name: String,
    /// Claude Code's own permission mode (`default`, `plan`, `acceptEdits`, …).
    #[serde(default)]
    pub permission_mode: Option<String>,
    /// `SessionStart`: `startup`, `resume`, `clear`, `compact` or `fork`.
    #[serde(default)]
    pub source: Option<String>,
    /// `UserPromptSubmit`: the prompt's id.
    #[serde(default)]
    pub prompt_id: Option<String>,
    /// Tool events: the tool's name.
    #[serde(default)]
    pub tool_name: Option<String>,
    /// Tool events: its input.
    #[serde(default)]
    pub tool_input: Option<Value>,
    /// Tool events: the call's id.
    #[serde(default)]
    pub tool_use_id: Option<String>,
    /// `PostToolUse`: what the tool returned.
    #[serde(default)]
    pub tool_response: Option<Value>,
}

/// What the hook prints and how it exits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookReply {
    /// JSON for stdout, if any.
    pub stdout: Option<String>,
    /// Text for stderr, if any (with exit status 2 it is the reason the model sees).
    pub stderr: Option<String>,
    /// The exit status: 0, or 2 for "blocked".
    pub exit: u8,
}

impl HookReply {
    fn json(value: &Value) -> Self {
        Self {
            stdout: Some(value.to_string()),
            stderr: None,
            exit: 0,
        }
    }

    fn nothing() -> Self {
        Self {
            stdout: None,
            stderr: None,
            exit: 0,
        }
    }

    /// Blocked: exit status 2 with the reason.
    fn blocked(reason: &str) -> Self {
        Self {
            stdout: None,
            stderr: Some(reason.to_owned()),
            exit: 2,
        }
    }
}

/// The connection's name and version, as the host records them.
pub const CLIENT_NAME: &str = "planhost-hook-claude-code";

/// How the hook learns about its surroundings beyond the event itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HookEnv {
    /// Whether a person is at the session (`CLAUDE_CODE_SESSION_ATTENDED`; `claude -p` sets it
    /// to 0).
    pub attended: bool,
}

impl HookEnv {
    /// From the process environment Claude Code gives its hooks.
    pub fn from_env() -> Self {
        Self {
            attended: std::env::var("CLAUDE_CODE_SESSION_ATTENDED").map_or(true, |v| v != "0"),
        }
    }
}

/// Handles one hook call. `connect` is called at most once, after the input was read.
pub fn handle<H: Host>(
    stdin: &[u8],
    env: &HookEnv,
    connect: impl FnOnce() -> Result<H, HostError>,
) -> HookReply {
    let input: HookInput = match serde_json::from_slice(stdin) {
        Ok(input) => input,
        Err(e) => {
            // Without an event name the hook cannot tell a gate from a record: it blocks, as
            // a gate must.
            return HookReply::blocked(&format!(
                "planhost could not read this hook call from Claude Code ({e}) [{}]; the tool is blocked. Check that `planhost setup claude-code` wrote these hooks.",
                ErrorCode::InvalidParams.as_str()
            ));
        }
    };
    let gate = matches!(
        input.hook_event_name.as_str(),
        "PreToolUse" | "PermissionRequest"
    );
    let result = connect().and_then(|mut host| dispatch(&mut host, &input, env));
    match result {
        Ok(reply) => reply,
        Err(error) if gate => HookReply::blocked(&format!(
            "planhost blocked this tool call: {} [{}]",
            error.message,
            error.code.as_str()
        )),
        Err(error) => HookReply::json(&json!({
            "systemMessage": format!(
                "planhost: {} [{}]. Tool calls stay blocked until planhost answers.",
                error.message,
                error.code.as_str()
            ),
        })),
    }
}

fn dispatch<H: Host>(
    host: &mut H,
    input: &HookInput,
    env: &HookEnv,
) -> Result<HookReply, HostError> {
    match input.hook_event_name.as_str() {
        "SessionStart" => session_start(host, input),
        "UserPromptSubmit" => prompt(host, input),
        "PreToolUse" => pre_tool_use(host, input, env),
        "PermissionRequest" => permission_request(host, input),
        "PostToolUse" => post_tool_use(host, input),
        "Stop" => {
            let session = open(host, input)?;
            close_turn(host, &session, false)?;
            Ok(HookReply::nothing())
        }
        // Claude Code is exiting (`/exit`, or the end of `claude -p`): the turn ends normally,
        // so a plan it submitted stays pending for a person (and a resumed session picks up the
        // answer). A Claude Code that is killed says nothing; its next prompt aborts the turn.
        "SessionEnd" => {
            let session = open(host, input)?;
            close_turn(host, &session, false)?;
            Ok(HookReply::nothing())
        }
        // An event planhost did not install a hook for: nothing to say.
        _ => Ok(HookReply::nothing()),
    }
}

/// A session starts, resumes, or was compacted. After a compaction or on resume the model has
/// lost (or may never have had) what planhost holds, so it is told: the mode, and the plan that
/// matters now — the one it is carrying out, the one waiting for the person, or the last one,
/// labelled with its status. Plans survive compaction this way.
fn session_start<H: Host>(host: &mut H, input: &HookInput) -> Result<HookReply, HostError> {
    let session = open(host, input)?;
    if !matches!(input.source.as_deref(), Some("compact" | "resume")) {
        return Ok(HookReply::nothing());
    }
    let Some(context) = context_of(host, &session, input)? else {
        return Ok(HookReply::nothing());
    };
    Ok(HookReply::json(&json!({
        "hookSpecificOutput": {
            "hookEventName": "SessionStart",
            "additionalContext": context,
        },
    })))
}

/// What the model is told of the session's plan after a compaction or on resume.
fn context_of<H: Host>(
    host: &mut H,
    session: &SessionInfo,
    input: &HookInput,
) -> Result<Option<String>, HostError> {
    let markdown_of = |host: &mut H, approval: &ApprovalInfo| {
        host.call::<methods::PlansGet>(ProposalRef {
            proposal_id: approval.proposal_id.clone(),
        })
        .map(|detail| detail.markdown)
    };
    if let Some(execution) = &session.live_execution {
        let detail = host.call::<methods::PlansGet>(ProposalRef {
            proposal_id: execution.proposal_id.clone(),
        })?;
        return Ok(Some(format!(
            "planhost: you are carrying out the plan \"{}\", which the person approved (permission mode {}). It is, exactly:\n\n{}",
            detail.approval.title,
            execution.permission_mode.as_str(),
            detail.markdown
        )));
    }
    if session.mode != Mode::Plan {
        return Ok(None);
    }
    if let Some(pending) = &session.pending_approval {
        let markdown = markdown_of(host, pending)?;
        return Ok(Some(format!(
            "planhost: this session is in Plan mode, and the plan \"{}\" waits for the person's answer in planhost. It is not approved: do not act on it, and edit nothing. It is, exactly:\n\n{markdown}",
            pending.title
        )));
    }
    let latest = host
        .call::<methods::PlansList>(PlansFilter {
            session_id: Some(session.id.clone()),
            status: None,
            limit: Some(1),
        })?
        .items
        .into_iter()
        .next();
    // A draft written after the last plan was submitted (or with none submitted) is where the
    // model was.
    if let Some(draft) = latest_draft(host, session, input)?
        && latest
            .as_ref()
            .is_none_or(|last| draft.checkpoint.created_at > last.created_at)
    {
        return Ok(Some(format!(
            "planhost: this session is in Plan mode: explore, edit nothing but your plan file, and present the plan with ExitPlanMode. Your latest draft (revision {}), not approved, is, exactly:\n\n{}",
            draft.checkpoint.revision, draft.markdown
        )));
    }
    Ok(Some(match latest {
        Some(last) => {
            let markdown = markdown_of(host, &last)?;
            let note = last
                .feedback
                .as_deref()
                .map(|f| format!(", with the note: {f}"))
                .unwrap_or_default();
            format!(
                "planhost: this session is in Plan mode: explore, edit nothing, and present a plan with ExitPlanMode. The last plan, \"{}\", was {}{note}; it is not approved. It was, exactly:\n\n{markdown}",
                last.title,
                last.status.as_str()
            )
        }
        None => PLAN_STILL_ON.replace("still has", "has"),
    }))
}

/// Opens (or reopens) the host session of this Claude Code session and workspace.
fn open<H: Host>(host: &mut H, input: &HookInput) -> Result<SessionInfo, HostError> {
    host.call::<methods::SessionsOpen>(OpenSessionParams {
        workspace_root: input.cwd.display().to_string(),
        external_id: Some(input.session_id.clone()),
        interactivity: Interactivity::Interactive,
        persistence: None,
        agent: Some(Agent::ClaudeCode),
    })
}

fn end_turn<H: Host>(
    host: &mut H,
    session: &SessionId,
    turn: &TurnId,
    outcome: TurnOutcome,
) -> Result<(), HostError> {
    host.call::<methods::TurnsEnd>(EndTurnParams {
        session_id: session.clone(),
        turn_id: turn.clone(),
        outcome,
    })
    .map(drop)
}

/// Ends the running turn: an execution's through `executions.end`, any other's through
/// `turns.end`. `aborted` interrupts what the turn raised or ran.
fn close_turn<H: Host>(
    host: &mut H,
    session: &SessionInfo,
    aborted: bool,
) -> Result<(), HostError> {
    let Some(turn) = &session.active_turn else {
        return Ok(());
    };
    match (&turn.origin, &turn.execution_id) {
        (TurnOrigin::Execution, Some(execution)) => host
            .call::<methods::ExecutionsEnd>(EndExecutionParams {
                session_id: session.id.clone(),
                execution_id: execution.clone(),
                outcome: if aborted {
                    ExecutionOutcome::Interrupted
                } else {
                    ExecutionOutcome::Completed
                },
            })
            .map(drop),
        _ => end_turn(
            host,
            &session.id,
            &turn.id,
            if aborted {
                TurnOutcome::Aborted
            } else {
                TurnOutcome::Completed
            },
        ),
    }
}

fn begin_turn<H: Host>(host: &mut H, session: &SessionId) -> Result<TurnId, HostError> {
    host.call::<methods::TurnsBegin>(BeginTurnParams {
        session_id: session.clone(),
        origin: None,
    })
    .map(|t| t.id)
}

/// The running turn, begun now if Claude Code runs a tool outside one (hooks installed while a
/// session ran, or a prompt hook that failed).
fn turn_of<H: Host>(host: &mut H, session: &SessionInfo) -> Result<TurnId, HostError> {
    match &session.active_turn {
        Some(turn) => Ok(turn.id.clone()),
        None => begin_turn(host, &session.id),
    }
}

/// A person's prompt: the turn it starts. A turn still running from before (the person pressed
/// Escape, which Claude Code reports to no hook) ends as aborted first, so whatever it raised is
/// interrupted, never granted. Claude Code's plan mode puts the session in Plan.
fn prompt<H: Host>(host: &mut H, input: &HookInput) -> Result<HookReply, HostError> {
    let mut session = open(host, input)?;
    match &session.active_turn {
        // The approved plan's execution goes on with this prompt (a resumed `claude -p`
        // continues it; a person redirecting the work stays within what they approved): it
        // ends when Claude Code stops.
        Some(turn) if turn.origin == TurnOrigin::Execution => return Ok(HookReply::nothing()),
        // A turn Claude Code never reported ended (the person pressed Escape): aborted, so
        // whatever it raised is interrupted, never granted.
        Some(_) => {
            close_turn(host, &session, true)?;
            session = open(host, input)?;
        }
        None => {}
    }
    // A plan a person approved in planhost while Claude Code waited: this prompt starts its
    // execution, and the model is given the exact approved plan.
    if let Some(execution) = &session.live_execution
        && execution.state == ExecutionState::Queued
    {
        let claimed = host.call::<methods::ExecutionsClaim>(ExecutionRef {
            session_id: session.id.clone(),
            execution_id: execution.execution_id.clone(),
        })?;
        let context = format!(
            "planhost: the person approved the plan \"{}\" (permission mode {}). Leave plan mode with ExitPlanMode if Claude Code is still in it, then implement exactly this plan, approved as {} (sha256 {}):\n\n{}",
            claimed.title,
            claimed.execution.permission_mode.as_str(),
            claimed.artifact_path,
            claimed.sha256,
            claimed.markdown
        );
        return Ok(HookReply::json(&json!({
            "hookSpecificOutput": {
                "hookEventName": "UserPromptSubmit",
                "additionalContext": context,
            },
        })));
    }
    if let Some(pending) = &session.pending_approval {
        return Ok(HookReply::json(&json!({
            "hookSpecificOutput": {
                "hookEventName": "UserPromptSubmit",
                "additionalContext": format!(
                    "planhost: the plan \"{}\" waits for the person's answer in planhost. Do not start on it and do not run tools: tell the person to approve or reject it (`planhost approve {}`, `planhost reject {}`, or planhost's web page), then wait.",
                    pending.title, short(pending.proposal_id.as_str()), short(pending.proposal_id.as_str())
                ),
            },
            "systemMessage": format!("planhost: {}", waiting_message(pending)),
        })));
    }
    let turn = begin_turn(host, &session.id)?;
    let wants_plan = input.permission_mode.as_deref() == Some("plan");
    if wants_plan && session.mode == Mode::Agent {
        let call = format!(
            "claude-code-plan-mode-{}",
            input.prompt_id.as_deref().unwrap_or("prompt")
        );
        host.call::<methods::PlansEnter>(EnterPlanParams {
            session_id: session.id.clone(),
            turn_id: turn,
            tool_call_id: call.into(),
            batch_index: 0,
            batch_size: 1,
        })?;
        return Ok(HookReply::nothing());
    }
    if !wants_plan && session.mode == Mode::Plan {
        return Ok(HookReply::json(&json!({
            "hookSpecificOutput": {
                "hookEventName": "UserPromptSubmit",
                "additionalContext": PLAN_STILL_ON,
            },
            "systemMessage": "planhost: this session is still in Plan mode, whatever Claude Code's mode says: files and commands that change things stay blocked until a plan is approved (`planhost plans`, `planhost approve`, or the web page).",
        })));
    }
    Ok(HookReply::nothing())
}

/// The last 8 characters of an id: what `planhost plans` prints and `planhost approve` takes.
fn short(id: &str) -> &str {
    id.len()
        .checked_sub(8)
        .and_then(|start| id.get(start..))
        .unwrap_or(id)
}

/// What the person is told while a plan waits: how to answer it, and where.
fn waiting_message(pending: &ApprovalInfo) -> String {
    let id = short(pending.proposal_id.as_str());
    format!(
        "the plan \"{}\" waits for your answer in planhost, for 30 minutes from when it was submitted. Approve it with `planhost approve {id}` (add `--mode accept-edits` or `--mode auto` to let the work edit without asking), reject it with `planhost reject {id} --feedback \"…\"`, or answer on planhost's web page (`planhost web`); then tell Claude to continue.",
        pending.title
    )
}

/// What the model is told when Claude Code left plan mode but planhost did not.
const PLAN_STILL_ON: &str = "planhost (which enforces this session's mode) still has this session in Plan mode: do not edit files or run commands that change anything; explore, then present a plan with ExitPlanMode for the person to approve.";

fn pre_tool_use<H: Host>(
    host: &mut H,
    input: &HookInput,
    env: &HookEnv,
) -> Result<HookReply, HostError> {
    let (Some(tool), Some(call)) = (&input.tool_name, &input.tool_use_id) else {
        return Err(HostError {
            code: ErrorCode::InvalidParams,
            message: "PreToolUse came without tool_name or tool_use_id".into(),
        });
    };
    let session = open(host, input)?;
    if tool == "ExitPlanMode" {
        return exit_plan_mode(host, input, env, &session, call);
    }
    if session.mode == Mode::Plan
        && let Some(file) = plan_file_target(tool, input.tool_input.as_ref())
    {
        return Ok(allow(&format!(
            "planhost admits Claude Code's own plan file in Plan ({}); what a person approves is planhost's immutable copy",
            file.display()
        )));
    }
    if session.active_turn.is_none()
        && let Some(pending) = &session.pending_approval
    {
        return Ok(deny(&format!(
            "planhost holds the plan \"{}\" for a person's answer, and nothing runs until they give it [{}]: stop here and wait. For the person: {}",
            pending.title,
            ErrorCode::SessionNotIdle.as_str(),
            waiting_message(pending)
        )));
    }
    let turn = turn_of(host, &session)?;
    let plan = session.mode == Mode::Plan;
    let decision = host.call::<methods::ToolsAuthorize>(AuthorizeParams {
        session_id: session.id.clone(),
        turn_id: turn,
        tool_call_id: call.as_str().into(),
        tool_name: tool.clone(),
        batch_index: 0,
        batch_size: 1,
        provenance: Provenance::built_in(),
        input: input.tool_input.clone().unwrap_or(Value::Null),
    })?;
    Ok(decision_reply(&decision, plan))
}

/// planhost's decision as Claude Code's `permissionDecision`: allow (what planhost's permission
/// mode allows runs without Claude Code asking again), deny with the reason and code, or ask.
/// An ask in Plan forces Claude Code's own dialog, so a person answers (headless, nobody does:
/// the call is refused). An ask in Agent mode leaves the call to Claude Code's own permission
/// system, the person's settings for it: its mode, its rules, its dialog.
fn decision_reply(decision: &AuthorizeResult, plan: bool) -> HookReply {
    let (verdict, reason) = match decision.decision {
        DecisionKind::Allow => ("allow", format!("planhost allowed it: {}", decision.reason)),
        DecisionKind::Deny => (
            "deny",
            match &decision.code {
                Some(code) => format!(
                    "planhost denied it: {} [{}]",
                    decision.reason,
                    code.as_str()
                ),
                None => format!("planhost denied it: {}", decision.reason),
            },
        ),
        DecisionKind::Ask if plan => (
            "ask",
            format!(
                "planhost, Plan mode: {}. Plan mode runs unasked only what planhost can prove read-only; answer Yes only if you want it to run now.",
                // The host's reason may name the mode itself; it is said once.
                decision
                    .reason
                    .trim_end_matches('.')
                    .trim_start_matches("Plan mode: ")
            ),
        ),
        DecisionKind::Ask => return HookReply::nothing(),
    };
    HookReply::json(&json!({
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": verdict,
            "permissionDecisionReason": reason,
        }
    }))
}

fn allow(reason: &str) -> HookReply {
    pre_tool_reply("allow", reason, None)
}

fn deny(reason: &str) -> HookReply {
    pre_tool_reply("deny", reason, None)
}

fn pre_tool_reply(verdict: &str, reason: &str, updated_input: Option<&Value>) -> HookReply {
    let mut out = json!({
        "hookEventName": "PreToolUse",
        "permissionDecision": verdict,
        "permissionDecisionReason": reason,
    });
    if let Some(input) = updated_input {
        out["updatedInput"] = input.clone();
    }
    HookReply::json(&json!({ "hookSpecificOutput": out }))
}

/// The file a Write, Edit or MultiEdit changes, when it is Claude Code's own plan file: a
/// Markdown file directly in `~/.claude/plans/`, named without `..`, where nothing on the way
/// that exists is a symlink (`~/.claude`, `plans`) and the file, if it exists, is a regular
/// file. The one file planhost lets Claude Code change in Plan: Claude Code hands the plan to
/// ExitPlanMode from it, and what a person approves is planhost's own immutable copy.
fn plan_file_target(tool: &str, input: Option<&Value>) -> Option<PathBuf> {
    use std::path::Component;
    if !matches!(tool, "Write" | "Edit" | "MultiEdit") {
        return None;
    }
    let path = PathBuf::from(input?.get("file_path")?.as_str()?);
    let home = PathBuf::from(std::env::var_os("HOME").filter(|h| !h.is_empty())?);
    let plans = home.join(".claude").join("plans");
    let plain = path
        .components()
        .all(|c| matches!(c, Component::RootDir | Component::Normal(_)));
    if !plain || path.parent()? != plans || path.extension().is_none_or(|e| e != "md") {
        return None;
    }
    let real_dir = |dir: &std::path::Path| match fs_err::symlink_metadata(dir) {
        Ok(meta) => meta.is_dir(),
        Err(e) => e.kind() == std::io::ErrorKind::NotFound,
    };
    if !real_dir(&home.join(".claude")) || !real_dir(&plans) {
        return None;
    }
    match fs_err::symlink_metadata(&path) {
        Ok(meta) if !meta.is_file() => None,
        Ok(_) => Some(path),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Some(path),
        Err(_) => None,
    }
}

/// ExitPlanMode is planhost's SubmitPlan: the plan Claude Code hands over becomes an immutable
/// artifact with a pending approval, which a person answers in planhost (its CLI or web page;
/// Claude Code's own dialog never answers it: any process below Claude Code could claim to be
/// it). Called again for the same call (`claude -p --resume`) or after the person answered, it
/// reports that answer: approved lets Claude Code leave plan mode; rejected, expired or
/// interrupted keeps it in Plan with the reason.
fn exit_plan_mode<H: Host>(
    host: &mut H,
    input: &HookInput,
    env: &HookEnv,
    session: &SessionInfo,
    call: &str,
) -> Result<HookReply, HostError> {
    let echoed = input.tool_input.clone().unwrap_or_else(|| json!({}));
    let approvals = host
        .call::<methods::PlansList>(PlansFilter {
            session_id: Some(session.id.clone()),
            status: None,
            limit: Some(50),
        })?
        .items;
    let mine = approvals.iter().find(|a| a.tool_call_id.as_str() == call);
    if let Some(approval) = mine {
        return answer_of(host, session, approval, env, &echoed);
    }
    if session.mode == Mode::Agent {
        // Approved earlier (and now asked again to leave Claude Code's plan mode), or planhost
        // was never in Plan: leaving Claude Code's plan mode gives nothing planhost would deny.
        start_execution(host, session)?;
        return Ok(pre_tool_reply(
            "allow",
            "planhost: this session is in Agent mode; leaving plan mode",
            Some(&echoed),
        ));
    }
    if let Some(pending) = &session.pending_approval {
        return Ok(if env.attended {
            deny(&format!(
                "planhost already holds the plan \"{}\" for a person's answer: stop here and wait for them. For the person: {}",
                pending.title,
                waiting_message(pending)
            ))
        } else {
            defer()
        });
    }
    let markdown = echoed
        .get("plan")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    if markdown.trim().is_empty() {
        return Ok(deny(&format!(
            "planhost received no plan with ExitPlanMode: write the plan to the plan file Claude Code named, then call ExitPlanMode again [{}]",
            ErrorCode::InvalidParams.as_str()
        )));
    }
    let turn = turn_of(host, session)?;
    let approval = host.call::<methods::PlansSubmit>(SubmitPlanParams {
        session_id: session.id.clone(),
        turn_id: turn,
        tool_call_id: call.into(),
        batch_index: 0,
        batch_size: 1,
        title: title_of(&markdown),
        markdown,
        question: "Shall I implement this plan?".into(),
        // Also this branch's next checkpoint, in the same transaction as the approval.
        branch_path: Some(branch_of(input)),
    })?;
    Ok(if env.attended {
        deny(&format!(
            "planhost saved this plan as {} and holds it for a person's approval: stop here, edit nothing, and wait for them. For the person: {}",
            approval.artifact_relative_path,
            waiting_message(&approval)
        ))
    } else {
        defer()
    })
}

/// Headless: the run ends with the call deferred; `claude -p --resume` asks again.
fn defer() -> HookReply {
    pre_tool_reply(
        "defer",
        "planhost holds the plan for a person's approval (`planhost plans`, `planhost approve`, or the web page); resume this session once they answered",
        None,
    )
}

/// The person's answer to this call's plan, as Claude Code's decision.
fn answer_of<H: Host>(
    host: &mut H,
    session: &SessionInfo,
    approval: &ApprovalInfo,
    env: &HookEnv,
    echoed: &Value,
) -> Result<HookReply, HostError> {
    let feedback = approval
        .feedback
        .as_deref()
        .map(|f| format!(" Their note: {f}"))
        .unwrap_or_default();
    Ok(match approval.status {
        ApprovalStatus::Pending if env.attended => deny(&format!(
            "planhost holds this plan for a person's answer: stop here and wait for them. For the person: {}",
            waiting_message(approval)
        )),
        ApprovalStatus::Pending => defer(),
        ApprovalStatus::Approved => {
            start_execution(host, session)?;
            pre_tool_reply(
                "allow",
                &format!(
                    "planhost: the person approved the plan (permission mode {})",
                    approval
                        .target_permission_mode
                        .map_or("ask", |m| m.as_str())
                ),
                Some(echoed),
            )
        }
        ApprovalStatus::Rejected => deny(&format!(
            "The person rejected this plan in planhost.{feedback} You are still in Plan mode: revise the plan, then present it again with ExitPlanMode."
        )),
        ApprovalStatus::Expired => deny(&format!(
            "Nobody answered this plan before its deadline [{}]. You are still in Plan mode: present it again with ExitPlanMode when the person is there.",
            ErrorCode::PlanApprovalTimeout.as_str()
        )),
        ApprovalStatus::Interrupted => deny(&format!(
            "This plan's approval was interrupted (the turn that asked was stopped, or planhost restarted){}; it was never approved. Present it again with ExitPlanMode.",
            approval
                .error_code
                .map(|c| format!(" [{}]", c.as_str()))
                .unwrap_or_default()
        )),
    })
}

/// Starts the queued execution an approval granted: the turn that asked ends, and the
/// execution's own turn begins (what follows is the approved work).
fn start_execution<H: Host>(host: &mut H, session: &SessionInfo) -> Result<(), HostError> {
    let Some(execution) = &session.live_execution else {
        return Ok(());
    };
    if execution.state != ExecutionState::Queued {
        return Ok(());
    }
    if let Some(turn) = &session.active_turn
        && turn.origin != TurnOrigin::Execution
    {
        end_turn(host, &session.id, &turn.id, TurnOutcome::Completed)?;
    }
    host.call::<methods::ExecutionsClaim>(ExecutionRef {
        session_id: session.id.clone(),
        execution_id: execution.execution_id.clone(),
    })?;
    Ok(())
}

/// A plan's title: its first heading, else its first line, at most 80 characters.
fn title_of(markdown: &str) -> String {
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

/// Claude Code's conversation as planhost's checkpoint branch: one line of history per Claude
/// Code session (its id as the only entry).
fn branch_of(input: &HookInput) -> Vec<EntryId> {
    vec![EntryId::from(format!("claude-code:{}", input.session_id))]
}

/// Saves the plan file's text as the branch's next checkpoint (unchanged text saves nothing).
fn save_draft<H: Host>(
    host: &mut H,
    session: &SessionInfo,
    input: &HookInput,
    markdown: String,
) -> Result<(), HostError> {
    let branch = branch_of(input);
    let latest = host.call::<methods::CheckpointsLatest>(BranchRef {
        session_id: session.id.clone(),
        branch_path: branch.clone(),
    });
    let expected = match latest {
        Ok(detail) if detail.markdown == markdown => return Ok(()),
        Ok(detail) => detail.checkpoint.revision,
        Err(e) if e.code == ErrorCode::CheckpointNone => 0,
        Err(e) => return Err(e),
    };
    host.call::<methods::CheckpointsSave>(SaveCheckpointParams {
        session_id: session.id.clone(),
        branch_path: branch,
        markdown,
        expected_revision: expected,
    })
    .map(drop)
}

/// The latest draft of the plan (its checkpoint), if Claude Code wrote one in this session.
fn latest_draft<H: Host>(
    host: &mut H,
    session: &SessionInfo,
    input: &HookInput,
) -> Result<Option<planhost_protocol::CheckpointDetail>, HostError> {
    match host.call::<methods::CheckpointsLatest>(BranchRef {
        session_id: session.id.clone(),
        branch_path: branch_of(input),
    }) {
        Ok(detail) => Ok(Some(detail)),
        Err(e) if e.code == ErrorCode::CheckpointNone => Ok(None),
        Err(e) => Err(e),
    }
}

/// Claude Code is about to show its permission dialog. planhost decided in `PreToolUse`; the
/// dialog only appears for a call planhost asked about, and the person answers it there.
fn permission_request<H: Host>(host: &mut H, input: &HookInput) -> Result<HookReply, HostError> {
    open(host, input)?;
    Ok(HookReply::nothing())
}

/// A tool Claude Code ran has finished: its grant is void. A write of Claude Code's own plan
/// file in Plan is kept as a checkpoint (the draft's exact bytes, in planhost's database), so
/// the draft survives whatever happens to that editable file and to the conversation.
fn post_tool_use<H: Host>(host: &mut H, input: &HookInput) -> Result<HookReply, HostError> {
    let Some(call) = &input.tool_use_id else {
        return Ok(HookReply::nothing());
    };
    let session = open(host, input)?;
    if session.mode == Mode::Plan
        && let Some(file) = input
            .tool_name
            .as_deref()
            .and_then(|tool| plan_file_target(tool, input.tool_input.as_ref()))
        && let Ok(markdown) = fs_err::read_to_string(&file)
        && !markdown.trim().is_empty()
    {
        save_draft(host, &session, input, markdown)?;
        return Ok(HookReply::nothing());
    }
    let Some(turn) = session.active_turn else {
        return Ok(HookReply::nothing());
    };
    let is_error = input
        .tool_response
        .as_ref()
        .and_then(|r| r.get("is_error").or_else(|| r.get("isError")))
        .and_then(Value::as_bool)
        .unwrap_or(false);
    host.call::<methods::ToolsFinished>(FinishedParams {
        session_id: session.id,
        turn_id: turn.id,
        tool_call_id: call.as_str().into(),
        is_error,
    })?;
    Ok(HookReply::nothing())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plan_is_titled_by_its_first_heading() {
        assert_eq!(title_of("# Plan: greet\n\n1. x\n"), "greet");
        assert_eq!(title_of("intro\n## Tidy the logs\n"), "Tidy the logs");
        assert_eq!(title_of("just text\nmore\n"), "just text");
        assert_eq!(title_of("#\n"), "Plan");
        assert_eq!(
            title_of(&format!("# {}", "x".repeat(200))).chars().count(),
            80
        );
    }

    #[test]
    fn ids_are_shown_by_their_random_end() {
        assert_eq!(short("01a234e9-596b-7446-8335-44f4e93670c6"), "e93670c6");
        assert_eq!(short("abc"), "abc");
    }

    #[test]
    fn bad_input_blocks_a_gate_and_says_why() {
        let reply = handle::<Never>(b"not json", &HookEnv { attended: true }, || {
            unreachable!("no host is reached for input that cannot be read")
        });
        assert_eq!(reply.exit, 2);
        assert!(
            reply.stderr.as_deref().is_some_and(
                |e| e.contains("INVALID_PARAMS") && e.contains("planhost setup claude-code")
            ),
            "{reply:?}"
        );
    }

    #[test]
    fn no_host_blocks_a_tool_and_only_warns_on_a_prompt() {
        let unreachable = || {
            Err::<Never, _>(HostError {
                code: ErrorCode::HostUnreachable,
                message: "no planhost answers on /x.sock".into(),
            })
        };
        let event = |name: &str| {
            serde_json::json!({
                "session_id": "s", "cwd": "/w", "hook_event_name": name,
                "tool_name": "Write", "tool_use_id": "t1", "tool_input": {},
            })
            .to_string()
        };
        let env = HookEnv { attended: true };
        let gate = handle(event("PreToolUse").as_bytes(), &env, unreachable);
        assert_eq!(gate.exit, 2);
        assert!(gate.stderr.unwrap_or_default().contains("HOST_UNREACHABLE"));
        let prompt = handle(event("UserPromptSubmit").as_bytes(), &env, unreachable);
        assert_eq!(prompt.exit, 0);
        assert!(
            prompt
                .stdout
                .unwrap_or_default()
                .contains("HOST_UNREACHABLE")
        );
    }

    /// A host that is never reached.
    struct Never;

    impl Host for Never {
        fn call<M: Method>(&mut self, _: M::Params) -> Result<M::Result, HostError> {
            unreachable!("never called")
        }
    }
}

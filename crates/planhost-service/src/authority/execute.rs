//! Runs one authorized tool call and streams its output to the calling connection.

use planhost_core::{BatchPosition, CallFacts, Decision, ErrorCode, ToolProvenance};
use planhost_exec::PinnedShell;
use planhost_fs::Workspace;
use planhost_protocol::{ExecuteParams, ExecuteResult, ServerNotification, ToolOutput};
use planhost_tools::{ShellPinContext, ToolContext};
use tokio_util::sync::CancellationToken;

use super::policy_cache::Entry;
use super::{GrantedBy, decide};
use crate::connection::Caller;
use crate::service::Inner;
use crate::shells::Shells;
use crate::{Result, ServiceError};

/// Output chunks buffered between the runner and the connection; the runner waits when full.
const OUTPUT_QUEUE: usize = 256;
/// Free slots tool output leaves in the connection's queue for broadcasts.
const OUTPUT_HEADROOM: usize = crate::fanout::CONNECTION_QUEUE / 2;

/// How a grant was given, for the execute-time re-check.
pub(super) struct Recheck {
    /// The policy or a person.
    pub(super) by: GrantedBy,
    /// The classifier's verdict the grant was decided by.
    pub(super) verdict: Option<planhost_core::CommandSafety>,
    /// What the host established about the call.
    pub(super) facts: CallFacts,
}

/// Streams a running call's output to the calling connection as `tools.output`, in order; the
/// task ends once the sender is dropped and every chunk was sent.
pub(super) fn forward_output(
    caller: &Caller,
    session: planhost_core::SessionId,
    call: planhost_core::ToolCallId,
) -> (
    tokio::sync::mpsc::Sender<planhost_exec::OutputChunk>,
    tokio::task::JoinHandle<()>,
) {
    let (tx, mut rx) = tokio::sync::mpsc::channel::<planhost_exec::OutputChunk>(OUTPUT_QUEUE);
    let outbound = caller.notes.clone();
    let forward = tokio::spawn(async move {
        while let Some(chunk) = rx.recv().await {
            let note = ServerNotification::ToolOutput(ToolOutput {
                session_id: session.clone(),
                tool_call_id: call.clone(),
                stream: chunk.stream,
                seq: chunk.seq,
                text: chunk.text,
            });
            // Tool output may use only half of the connection's queue, so state-change
            // broadcasts always find room: a client reading its own output slowly slows its
            // command (back-pressure), and is never mistaken for one that stopped reading.
            while outbound.capacity() < OUTPUT_HEADROOM {
                if outbound.is_closed() {
                    return;
                }
                tokio::time::sleep(std::time::Duration::from_millis(5)).await;
            }
            if outbound.send(note).await.is_err() {
                return;
            }
        }
    });
    (tx, forward)
}

/// What a re-checked call runs with.
pub(super) struct RunContext {
    /// The session's workspace root.
    pub(super) root: String,
    /// The turn's shell pin, if it pinned one.
    pub(super) pinned: Option<ShellPinContext>,
    /// The session's agent.
    pub(super) agent: planhost_core::Agent,
}

/// On the engine: the call's turn must still run, and the durable state decides again, now (a
/// grant never outlives the policy that gave it).
pub(super) fn recheck(
    e: &mut crate::engine::Engine,
    session_id: &planhost_core::SessionId,
    turn_id: planhost_core::TurnId,
    tool: &str,
    input: &serde_json::Value,
    grant: &Recheck,
) -> Result<RunContext> {
    let session = e.store().session(session_id)?;
    let turn = e
        .store()
        .active_turn(session_id)?
        .filter(|t| t.id == turn_id);
    let Some(turn) = turn else {
        return Err(planhost_core::CoreError::TurnNotActive { turn_id }.into());
    };
    let entry = Entry::from_snapshot(e.store().policy_snapshot(session_id)?);
    let one = BatchPosition { index: 0, size: 1 };
    // The grant's input is this input (its digest matched) in this turn: the verdict the grant
    // was decided by holds, and is not computed again on this thread.
    let verdict = grant
        .verdict
        .clone()
        .map_or_else(std::cell::OnceCell::new, std::cell::OnceCell::from);
    match (
        decide(
            &entry,
            tool,
            &ToolProvenance::BuiltIn,
            one,
            input,
            &verdict,
            &grant.facts,
        ),
        grant.by,
    ) {
        (Decision::Allow { .. }, GrantedBy::Policy | GrantedBy::Person)
        | (Decision::Ask { .. }, GrantedBy::Person) => {}
        (Decision::Ask { .. }, GrantedBy::Policy) => {
            return Err(ServiceError::refused(
                ErrorCode::ToolNotAuthorized,
                "the policy now asks a person first; authorize again",
            ));
        }
        (Decision::Deny { code, reason, .. }, GrantedBy::Policy | GrantedBy::Person) => {
            return Err(ServiceError::refused(code.code(), reason));
        }
    }
    let configured = Shells::configured(e, session_id)?;
    let pinned = match (turn.shell_id, turn.shell_dialect) {
        (Some(id), Some(dialect)) => Some(ShellPinContext::new(
            PinnedShell { id, dialect },
            configured,
        )),
        (_, _) => None,
    };
    Ok(RunContext {
        root: session.workspace_root,
        pinned,
        agent: session.agent,
    })
}

pub(super) async fn run(
    svc: &Inner,
    caller: &Caller,
    p: &ExecuteParams,
    grant: Recheck,
    cancel: CancellationToken,
) -> Result<ExecuteResult> {
    let (session_id, turn_id, tool) = (p.session_id.clone(), p.turn_id.clone(), p.tool);
    let input = p.input.clone();
    let unasked_read_only = grant.by == GrantedBy::Policy
        && matches!(grant.verdict, Some(planhost_core::CommandSafety::ReadOnly));
    let ctx = svc
        .engine(move |e| recheck(e, &session_id, turn_id, tool.as_str(), &input, &grant))
        .await?;
    let workspace = Workspace::new(ctx.root.as_ref())
        .map_err(|e| ServiceError::refused(e.code(), e.to_string()))?;
    let pinned = ctx.pinned;
    let mut ctx = ToolContext::new(workspace);
    // A command the policy admitted unasked, proven read-only: git may run nothing the
    // repository names (DESIGN decision 15).
    if unasked_read_only && tool == planhost_core::HostTool::Bash {
        let env = planhost_tools::bash_env(|name| std::env::var(name).ok());
        let root = ctx.workspace().root().to_path_buf();
        let command = p
            .input
            .get("command")
            .and_then(serde_json::Value::as_str)
            .unwrap_or_default();
        ctx = ctx.with_bash_env(super::unasked_git_env(&root, &env, command)?);
    }
    let (tx, forward) = forward_output(caller, p.session_id.clone(), p.tool_call_id.clone());
    let result =
        planhost_tools::execute(&ctx, p.tool, p.input.clone(), pinned.as_ref(), tx, cancel).await;
    // Every chunk reaches the client before the result does.
    let _ = forward.await;
    let output = result.map_err(|e| ServiceError::refused(e.code(), e.to_string()))?;
    Ok(ExecuteResult {
        tool_call_id: p.tool_call_id.clone(),
        output,
    })
}

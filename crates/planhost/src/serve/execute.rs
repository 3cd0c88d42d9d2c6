//! Runs one authorized tool call and streams its output to the calling connection.

use std::str::FromStr;
use std::sync::Arc;

use planhost_exec::{Dialect, PinnedShell, ShellId, Stream};
use planhost_fs::Workspace;
use planhost_protocol::{
    ExecuteParams, ExecuteResult, Notification, RpcError, ToolOutput, notifications,
};
use planhost_tools::{ShellPinContext, ToolContext, ToolName};
use tokio_util::sync::CancellationToken;

use super::convert::refused;
use super::policy_cache::Entry;
use super::service::{Caller, Service, to_value};
use super::shells::Shells;
use super::tools::{GrantedBy, decide};
use planhost_core::{BatchPosition, Decision, ToolProvenance};

/// Output chunks buffered between the runner and the connection; the runner waits when full.
const OUTPUT_QUEUE: usize = 256;
/// Free slots tool output leaves in the client's queue for broadcasts.
const OUTPUT_HEADROOM: usize = super::broadcast::CLIENT_QUEUE / 2;

pub async fn run(
    svc: &Arc<Service>,
    caller: &Caller,
    p: &ExecuteParams,
    granted_by: GrantedBy,
    cancel: CancellationToken,
) -> Result<serde_json::Value, RpcError> {
    let tool = ToolName::from_str(&p.tool).map_err(|e| refused(e.code(), e.to_string()))?;
    let (session_id, turn_id, tool_name) =
        (p.session_id.clone(), p.turn_id.clone(), p.tool.clone());
    let (root, pin, configured) = svc
        .host(move |h| {
            let session = h.store().session(&session_id)?;
            let turn = h
                .store()
                .active_turn(&session_id)?
                .filter(|t| t.id == turn_id);
            let Some(turn) = turn else {
                return Err(planhost_core::CoreError::TurnNotActive { turn_id }.into());
            };
            // The durable state decides again, now: a grant never outlives the policy that gave it.
            let entry = Entry::from_snapshot(h.store().policy_snapshot(&session_id)?);
            let one = BatchPosition { index: 0, size: 1 };
            match (
                decide(entry.view, &tool_name, &ToolProvenance::BuiltIn, one),
                granted_by,
            ) {
                (Decision::Allow { .. }, GrantedBy::Policy | GrantedBy::Person)
                | (Decision::Ask { .. }, GrantedBy::Person) => {}
                (Decision::Ask { .. }, GrantedBy::Policy) => {
                    return Ok(Err(refused(
                        "TOOL_NOT_AUTHORIZED",
                        "the policy now asks a person first; authorize again",
                    )));
                }
                (Decision::Deny { code, reason, .. }, GrantedBy::Policy | GrantedBy::Person) => {
                    return Ok(Err(refused(code.as_str(), reason)));
                }
            }
            let configured = Shells::configured(h, &session_id)?;
            Ok(Ok((
                session.workspace_root,
                (turn.shell_id, turn.shell_dialect),
                configured,
            )))
        })
        .await??;
    let workspace = Workspace::new(root.as_ref()).map_err(|e| refused(e.code(), e.to_string()))?;
    let ctx = ToolContext::new(workspace);
    let pinned = match pin {
        (Some(id), Some(dialect)) => {
            let id = ShellId::from_str(&id).map_err(|e| refused(e.code(), e.to_string()))?;
            let dialect: Dialect = serde_json::from_value(serde_json::Value::String(dialect))
                .map_err(|e| refused("COMMAND_SHELL_INVALID", e.to_string()))?;
            Some(ShellPinContext::new(
                PinnedShell { id, dialect },
                configured,
            ))
        }
        (_, _) => None,
    };

    let (tx, mut rx) = tokio::sync::mpsc::channel(OUTPUT_QUEUE);
    let outbound = caller.outbound.clone();
    let (session, call) = (p.session_id.clone(), p.tool_call_id.clone());
    let forward = tokio::spawn(async move {
        while let Some(chunk) = rx.recv().await {
            let chunk: planhost_exec::OutputChunk = chunk;
            let output = ToolOutput {
                session_id: session.clone(),
                tool_call_id: call.clone(),
                stream: match chunk.stream {
                    Stream::Stdout => "stdout".into(),
                    Stream::Stderr => "stderr".into(),
                },
                seq: chunk.seq,
                text: chunk.text,
            };
            let Ok(params) = serde_json::to_value(output) else {
                continue;
            };
            let note = Notification::new(notifications::TOOL_OUTPUT, params);
            let Ok(line) = serde_json::to_string(&note) else {
                continue;
            };
            // Tool output may use only half of the client's queue, so state-change broadcasts
            // always find room: a client reading its own output slowly slows its command
            // (back-pressure), and is never mistaken for one that stopped reading.
            while outbound.capacity() < OUTPUT_HEADROOM {
                if outbound.is_closed() {
                    return;
                }
                tokio::time::sleep(std::time::Duration::from_millis(5)).await;
            }
            if outbound.send(Arc::from(line)).await.is_err() {
                return;
            }
        }
    });
    let result =
        planhost_tools::execute(&ctx, tool, p.input.clone(), pinned.as_ref(), tx, cancel).await;
    // Every chunk reaches the client before the result does.
    let _ = forward.await;
    let output = result.map_err(|e| refused(e.code(), e.to_string()))?;
    to_value(ExecuteResult {
        tool_call_id: p.tool_call_id.clone(),
        output,
    })
}

//! Params for the calls tests make most, so that a typed call reads as briefly as the JSON it
//! replaces: `c.call::<methods::ToolsAuthorize>(params::authorize(&sid, &turn, "w1", "Write",
//! input))`. Every other field takes its default.

use std::path::Path;

use planhost_core::{ApprovalAction, Interactivity, Mode, SessionId, TurnId};
use planhost_protocol::{
    ApprovalInfo, AuthorizeParams, BeginTurnParams, ConfigureParams, EndTurnParams,
    EnterPlanParams, OpenSessionParams, Provenance, ResolvePlanParams, SessionRef, SetModeParams,
    SubmitPlanParams, TurnOutcome,
};
use serde_json::Value;

/// `sessions.open` of an interactive session on `workspace`.
pub fn open(workspace: &Path) -> OpenSessionParams {
    open_as(workspace, Interactivity::Interactive)
}

/// `sessions.open` with the given interactivity.
pub fn open_as(workspace: &Path, interactivity: Interactivity) -> OpenSessionParams {
    OpenSessionParams {
        workspace_root: workspace.display().to_string(),
        external_id: None,
        interactivity,
        persistence: None,
        agent: None,
    }
}

/// Names a session (`sessions.get`, `plans.list`, …).
pub fn session(sid: &SessionId) -> SessionRef {
    SessionRef {
        session_id: sid.clone(),
    }
}

/// `sessions.setMode`.
pub fn set_mode(sid: &SessionId, mode: Mode) -> SetModeParams {
    SetModeParams {
        session_id: sid.clone(),
        mode,
    }
}

/// `sessions.configure` changing nothing yet: set the fields the test changes.
pub fn configure(sid: &SessionId) -> ConfigureParams {
    ConfigureParams {
        session_id: sid.clone(),
        permission_mode: None,
        shell_id: None,
        policy_preset: None,
        provider: None,
        model: None,
    }
}

/// `turns.begin` of a person's turn.
pub fn begin(sid: &SessionId) -> BeginTurnParams {
    BeginTurnParams {
        session_id: sid.clone(),
        origin: None,
    }
}

/// `turns.end`.
pub fn end(sid: &SessionId, turn: &TurnId, outcome: TurnOutcome) -> EndTurnParams {
    EndTurnParams {
        session_id: sid.clone(),
        turn_id: turn.clone(),
        outcome,
    }
}

/// `tools.authorize` of a built-in tool, alone in its batch.
pub fn authorize(
    sid: &SessionId,
    turn: &TurnId,
    call: &str,
    tool: &str,
    input: Value,
) -> AuthorizeParams {
    AuthorizeParams {
        session_id: sid.clone(),
        turn_id: turn.clone(),
        tool_call_id: call.into(),
        tool_name: tool.into(),
        batch_index: 0,
        batch_size: 1,
        provenance: Provenance::built_in(),
        input,
    }
}

/// `plans.enter`, alone in its batch.
pub fn enter(sid: &SessionId, turn: &TurnId, call: &str) -> EnterPlanParams {
    EnterPlanParams {
        session_id: sid.clone(),
        turn_id: turn.clone(),
        tool_call_id: call.into(),
        batch_index: 0,
        batch_size: 1,
    }
}

/// `plans.submit`, alone in its batch, asking "Shall I implement this plan?".
pub fn submit(
    sid: &SessionId,
    turn: &TurnId,
    call: &str,
    title: &str,
    markdown: &str,
) -> SubmitPlanParams {
    SubmitPlanParams {
        session_id: sid.clone(),
        turn_id: turn.clone(),
        tool_call_id: call.into(),
        batch_index: 0,
        batch_size: 1,
        title: title.into(),
        markdown: markdown.into(),
        question: "Shall I implement this plan?".into(),
        branch_path: None,
    }
}

/// `plans.resolve` naming exactly this approval (its version and digest as shown).
pub fn resolve(approval: &ApprovalInfo, action: ApprovalAction) -> ResolvePlanParams {
    ResolvePlanParams {
        proposal_id: approval.proposal_id.clone(),
        session_id: approval.session_id.clone(),
        turn_id: approval.turn_id.clone(),
        tool_call_id: approval.tool_call_id.clone(),
        version: Some(approval.version),
        artifact_sha256: Some(approval.artifact_sha256.clone()),
        action,
        target_permission_mode: None,
        feedback: None,
    }
}

/// `tools.execute` of an authorized call, with exactly the input it was authorized for.
pub fn execute(
    sid: &SessionId,
    turn: &TurnId,
    call: &str,
    tool: planhost_core::HostTool,
    input: Value,
) -> planhost_protocol::ExecuteParams {
    planhost_protocol::ExecuteParams {
        session_id: sid.clone(),
        turn_id: turn.clone(),
        tool_call_id: call.into(),
        tool,
        input,
    }
}

/// The Bash result of a `tools.execute` that ran Bash (any other tool's is a test bug).
#[track_caller]
pub fn bash_of(output: &planhost_core::ExecuteOutput) -> &planhost_core::BashResult {
    if let planhost_core::ExecuteOutput::Bash(bash) = output {
        bash
    } else {
        panic!("not a Bash result: {output:?}")
    }
}

//! The whole Plan flow: an agent plans, a person approves, the agent executes with streamed
//! output — over the socket with two clients, and over `serve --stdio` with one.

use std::collections::HashMap;

use planhost_core::{
    ApprovalStatus, DenyCode, ExecutionOutcome, ExecutionState, HostTool, Interactivity, Mode,
    PermissionDecision, PermissionMode, PlanState, TargetPermissionMode, TurnOrigin, TurnState,
};
use planhost_protocol::{
    DecisionKind, EndExecutionParams, ExecutionRef, ResolvePermissionParams, methods,
};
use planhost_test_support::host::params;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::steps::*;
use crate::support::*;

/// Runs the flow. `conns[agent]` drives the session; `conns[approver]` watches and decides
/// (the same connection over stdio).
fn full_flow(conns: &mut [Conn], agent: usize, approver: usize, env: &Env) {
    let root = env.workspace();
    let sid = conns[agent].open_session(&root, Interactivity::Interactive);
    conns[agent].set_mode(&sid, Mode::Plan);
    let turn = conns[agent].begin_turn(&sid);

    let denied = conns[agent].authorize(&sid, &turn, "write-1", "Write");
    assert_eq!(denied.decision, DecisionKind::Deny, "{denied:?}");
    assert_eq!(denied.code, Some(DenyCode::PlanWriteDenied), "{denied:?}");
    let allowed = conns[agent].authorize(&sid, &turn, "submit-1", "SubmitPlan");
    assert_eq!(allowed.decision, DecisionKind::Allow, "{allowed:?}");
    let approval = conns[agent]
        .call::<methods::PlansSubmit>(params::submit(&sid, &turn, "submit-1", "E2E plan", PLAN));
    let proposal = approval.proposal_id.clone();
    assert_eq!(approval.status, ApprovalStatus::Pending);
    let artifact = &approval.artifact_path;
    assert!(
        artifact.starts_with(&format!("{}/.pi/plan/", root.display())),
        "{artifact}"
    );
    assert_eq!(fs_err::read_to_string(artifact).unwrap(), PLAN);
    let waiting = conns[agent].get_session(&sid);
    assert_eq!(waiting.plan_state, PlanState::AwaitingApproval);
    assert_eq!(
        waiting.pending_approval.as_ref().map(|a| &a.proposal_id),
        Some(&proposal)
    );
    conns[agent].end_turn(&sid, &turn);

    // The person's surface learns of the approval from the event stream, then restores it.
    conns[approver].wait_event("approvalChanged pending", sid.as_str(), |e| {
        e["kind"] == "approvalChanged"
            && e["proposalId"] == proposal.as_str()
            && e["status"] == "pending"
    });
    let list = conns[approver].pending_plans();
    assert_eq!(list.len(), 1, "{list:?}");
    assert_eq!(list[0].proposal_id, proposal);
    assert_eq!(list[0].title, "E2E plan");
    assert_eq!(list[0].question, "Shall I implement this plan?");
    let approved = conns[approver]
        .call::<methods::PlansResolve>(approve(&approval, TargetPermissionMode::AcceptEdits));
    assert_eq!(approved.status, ApprovalStatus::Approved, "{approved:?}");
    assert_eq!(
        approved.target_permission_mode,
        Some(TargetPermissionMode::AcceptEdits)
    );
    assert_eq!(approved.execution_state, Some(ExecutionState::Queued));
    let execution = approved.execution_id.clone().expect("executionId");
    assert!(conns[approver].pending_plans().is_empty());

    // The agent sees Agent mode with the chosen permission, and claims the execution.
    conns[agent].wait_event("executionChanged queued", sid.as_str(), |e| {
        e["kind"] == "executionChanged"
            && e["executionId"] == execution.as_str()
            && e["state"] == "queued"
    });
    let session = conns[agent].get_session(&sid);
    assert_eq!(session.mode, Mode::Agent);
    assert_eq!(session.permission_mode, PermissionMode::AcceptEdits);
    let claimed = conns[agent].call::<methods::ExecutionsClaim>(ExecutionRef {
        session_id: sid.clone(),
        execution_id: execution.clone(),
    });
    // The claim hands the agent the exact approved bytes, not whatever the file says now.
    assert_eq!(claimed.markdown, PLAN, "{claimed:?}");
    assert_eq!(claimed.sha256, approval.artifact_sha256, "{claimed:?}");
    assert_eq!(claimed.artifact_path, approval.artifact_path, "{claimed:?}");
    assert_eq!(claimed.execution.execution_id, execution);
    assert_eq!(
        claimed.execution.state,
        ExecutionState::Running,
        "{claimed:?}"
    );
    let exec_turn = &claimed.turn;
    assert_eq!(exec_turn.origin, TurnOrigin::Execution);
    assert_eq!(exec_turn.state, TurnState::Running);
    assert_eq!(exec_turn.execution_id, Some(execution.clone()));
    let et = exec_turn.id.clone();

    // accept-edits: Write runs; Bash asks a person.
    let write = conns[agent].authorize_input(
        &sid,
        &et,
        "write-2",
        "Write",
        json!({ "path": "out.txt", "content": "from the plan\n" }),
    );
    assert_eq!(write.decision, DecisionKind::Allow, "{write:?}");
    conns[agent].call::<methods::ToolsExecute>(params::execute(
        &sid,
        &et,
        "write-2",
        HostTool::Write,
        json!({ "path": "out.txt", "content": "from the plan\n" }),
    ));
    assert_eq!(
        fs_err::read_to_string(root.join("out.txt")).unwrap(),
        "from the plan\n"
    );
    let ask = conns[agent].authorize_input(
        &sid,
        &et,
        "bash-1",
        "Bash",
        json!({ "command": "touch flow.mark; echo one; echo two >&2; cat out.txt; echo three >&2" }),
    );
    assert_eq!(ask.decision, DecisionKind::Ask, "{ask:?}");
    let request = ask.request_id.clone().expect("requestId");
    conns[approver].wait_event("permissionAsked", sid.as_str(), |e| {
        e["kind"] == "permissionAsked" && e["requestId"] == request.as_str()
    });
    let answered = conns[approver].call::<methods::PermissionsResolve>(ResolvePermissionParams {
        request_id: request,
        decision: PermissionDecision::Allow,
        note: None,
    });
    assert_eq!(answered.decision, Some(PermissionDecision::Allow));

    let result = conns[agent].call::<methods::ToolsExecute>(params::execute(
        &sid,
        &et,
        "bash-1",
        HostTool::Bash,
        json!({ "command": "touch flow.mark; echo one; echo two >&2; cat out.txt; echo three >&2" }),
    ));
    assert_eq!(result.tool_call_id, "bash-1");
    assert_eq!(
        params::bash_of(&result.output).run.exit,
        planhost_core::ExitStatus::Code(0),
        "{result:?}"
    );
    // Every chunk arrived before the result, each stream on its own, seq strictly increasing.
    let chunks: Vec<Value> = conns[agent]
        .notes
        .iter()
        .filter(|n| n.method == "tools.output" && n.params["toolCallId"] == "bash-1")
        .map(|n| n.params.clone())
        .collect();
    let notes = &conns[agent].notes;
    assert_eq!(streamed(notes, "bash-1", "stdout"), "one\nfrom the plan\n");
    assert_eq!(streamed(notes, "bash-1", "stderr"), "two\nthree\n");
    let seqs: Vec<u64> = chunks.iter().map(|c| c["seq"].as_u64().unwrap()).collect();
    assert!(seqs.windows(2).all(|w| w[0] < w[1]), "seqs {seqs:?}");
    assert!(chunks.iter().all(|c| c["sessionId"] == sid.as_str()));

    let finished = conns[agent].call::<methods::ExecutionsEnd>(EndExecutionParams {
        session_id: sid.clone(),
        execution_id: execution.clone(),
        outcome: ExecutionOutcome::Completed,
    });
    assert_eq!(finished.execution_id, execution, "{finished:?}");
    assert_eq!(finished.state, ExecutionState::Completed, "{finished:?}");
    let idle = conns[agent].get_session(&sid);
    assert_eq!(idle.mode, Mode::Agent);
    assert!(idle.active_turn.is_none(), "{idle:?}");
    assert!(idle.pending_approval.is_none(), "{idle:?}");

    // The approver saw the whole lifecycle, in order, with per-session seq strictly increasing.
    conns[approver].wait_event("executionChanged completed", sid.as_str(), |e| {
        e["kind"] == "executionChanged" && e["state"] == "completed"
    });
    assert_seq_increasing(&conns[approver].events());
    let kinds: Vec<String> = conns[approver]
        .events()
        .iter()
        .filter(|e| e["sessionId"] == sid.as_str())
        .map(|e| {
            let detail = e.get("status").or(e.get("state")).and_then(Value::as_str);
            format!("{}:{}", e["kind"].as_str().unwrap(), detail.unwrap_or(""))
        })
        .collect();
    let position = |k: &str| {
        kinds
            .iter()
            .position(|x| x == k)
            .unwrap_or_else(|| panic!("{k} missing from {kinds:?}"))
    };
    assert!(position("approvalChanged:pending") < position("approvalChanged:approved"));
    assert!(position("approvalChanged:approved") < position("executionChanged:queued"));
    assert!(position("executionChanged:queued") < position("executionChanged:running"));
    assert!(position("executionChanged:running") < position("executionChanged:completed"));
}

/// Per session, `seq` strictly increases in the order events were delivered.
pub(crate) fn assert_seq_increasing(events: &[Value]) {
    let mut last: HashMap<String, i64> = HashMap::new();
    assert!(!events.is_empty(), "no events");
    for e in events {
        let session = e["sessionId"].as_str().unwrap().to_owned();
        let seq = e["seq"].as_i64().unwrap();
        if let Some(prev) = last.insert(session, seq) {
            assert!(prev < seq, "seq went from {prev} to {seq} in {events:#?}");
        }
    }
}

#[test]
fn full_flow_with_an_agent_and_an_approver_over_the_socket() {
    let env = home();
    let host = SocketHost::start(&env);
    let mut conns = vec![host.connect("e2e-agent"), host.connect("e2e-approver")];
    full_flow(&mut conns, 0, 1, &env);
}

#[test]
fn full_flow_over_stdio_with_nothing_but_protocol_on_stdout() {
    let env = home();
    let (mut host, conn) = StdioHost::start(&env);
    let mut conns = vec![conn];
    full_flow(&mut conns, 0, 0, &env);
    // Closing stdin is the end of the session: the host exits cleanly.
    conns[0].close();
    let status = host
        .child
        .wait_exit("serve --stdio to exit after stdin closed");
    assert!(
        status.success(),
        "{status}; stderr:\n{}",
        host.stderr.text()
    );
    host.assert_stdout_is_protocol();
    let lines = host.stdout_lines();
    assert!(
        lines.iter().any(|l| l.contains("\"tools.output\"")),
        "no tool output on stdout"
    );
}

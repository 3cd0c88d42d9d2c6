//! What a session is doing right now, as a person's surface sees it: the running turn's tool
//! calls (allowed, asking, running) until they finish, `tools.activity` for the connections
//! that asked for it, and the last finished execution.

use planhost_core::{
    AuditAction, ExecutionOutcome, ExecutionState, HostTool, Interactivity, PermissionDecision,
    PermissionMode, Role, SessionId, TargetPermissionMode, TurnId,
};
use planhost_protocol::{
    DecisionKind, EndExecutionParams, ExecutionRef, FinishedParams, InitializeParams, Notification,
    PROTOCOL_VERSION, ResolvePermissionParams, SessionsFilter, ToolCallState, methods,
};
use planhost_test_support::host::params;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::steps::*;
use crate::support::*;

/// (toolCallId, toolName, state) of the session's unfinished tool calls.
fn in_flight(c: &mut Conn, sid: &SessionId) -> Vec<(String, String, ToolCallState)> {
    c.get_session(sid)
        .tool_calls
        .into_iter()
        .map(|t| (t.tool_call_id.to_string(), t.tool_name, t.state))
        .collect()
}

fn call(id: &str, tool: &str, state: ToolCallState) -> (String, String, ToolCallState) {
    (id.to_owned(), tool.to_owned(), state)
}

/// The states the `tools.activity` notifications in `notes` gave `tool_call`, in order.
fn activity_of(notes: &[Notification], tool_call: &str) -> Vec<Value> {
    notes
        .iter()
        .filter(|n| n.method == "tools.activity" && n.params["toolCallId"] == tool_call)
        .map(|n| n.params["state"].clone())
        .collect()
}

/// `initialize` asking for `tools.activity`.
fn hello_with_activity(name: &str, roles: &[Role]) -> InitializeParams {
    InitializeParams {
        protocol_version: PROTOCOL_VERSION,
        client_name: name.into(),
        client_version: None,
        roles: roles.to_vec(),
        tool_activity: true,
        events: planhost_protocol::EventScope::All,
        agent_process: None,
    }
}

/// `tools.finished` of a call that did not report an error.
fn finished(sid: &SessionId, turn: &TurnId, call: &str) -> FinishedParams {
    FinishedParams {
        session_id: sid.clone(),
        turn_id: turn.clone(),
        tool_call_id: call.into(),
        is_error: false,
    }
}

#[test]
fn a_sessions_tool_calls_show_allowed_asking_and_running_until_each_finishes() {
    let env = home();
    let host = SocketHost::start(&env);
    let mut agent = host.connect("e2e-agent");
    let mut approver = host.connect("e2e-approver");
    let mut watcher = host.connect_raw();
    watcher.call::<methods::Initialize>(hello_with_activity("e2e-watch", &[Role::Observer]));
    let sid = agent.open_session(&env.workspace(), Interactivity::Interactive);
    agent.set_permission_mode(&sid, PermissionMode::Ask);
    let turn = agent.begin_turn(&sid);
    assert_eq!(in_flight(&mut approver, &sid), vec![]);

    // A tool the client runs itself: allowed until the client says it finished.
    let read = agent.authorize_input(&sid, &turn, "read-1", "Read", json!({ "path": "a.txt" }));
    assert_eq!(read.decision, DecisionKind::Allow, "{read:?}");
    assert_eq!(
        in_flight(&mut approver, &sid),
        vec![call("read-1", "Read", ToolCallState::Allowed)]
    );
    watcher.wait_note("read-1 allowed", |n| {
        n.method == "tools.activity" && n.params["toolCallId"] == "read-1"
    });
    let released = agent.call::<methods::ToolsFinished>(finished(&sid, &turn, "read-1"));
    assert!(released.released, "{released:?}");
    assert_eq!(in_flight(&mut approver, &sid), vec![]);
    // Once: a second report, or a call never allowed, releases nothing.
    let again = agent.call::<methods::ToolsFinished>(FinishedParams {
        is_error: true,
        ..finished(&sid, &turn, "read-1")
    });
    assert!(!again.released, "{again:?}");
    let never = agent.call::<methods::ToolsFinished>(finished(&sid, &turn, "nope"));
    assert!(!never.released, "{never:?}");
    watcher.wait_until("read-1 finished", |notes| {
        (activity_of(notes, "read-1").len() >= 2).then_some(())
    });
    assert_eq!(
        activity_of(&watcher.notes, "read-1"),
        vec![json!("allowed"), Value::Null]
    );
    // Its grant is void: the host will not run it now.
    let late = agent.call_err::<methods::ToolsExecute>(params::execute(
        &sid,
        &turn,
        "read-1",
        HostTool::Read,
        json!({ "path": "a.txt" }),
    ));
    assert_refused(&late, "TOOL_NOT_AUTHORIZED");

    // A host-run call: asking, then allowed, then running, then gone.
    let input = json!({ "command": "touch done.mark; sleep 1; echo done" });
    let ask = agent.authorize_input(&sid, &turn, "bash-1", "Bash", input.clone());
    assert_eq!(ask.decision, DecisionKind::Ask, "{ask:?}");
    assert_eq!(
        in_flight(&mut approver, &sid),
        vec![call("bash-1", "Bash", ToolCallState::Asking)]
    );
    approver.call::<methods::PermissionsResolve>(ResolvePermissionParams {
        request_id: ask.request_id.expect("requestId"),
        decision: PermissionDecision::Allow,
        note: None,
    });
    assert_eq!(
        in_flight(&mut approver, &sid),
        vec![call("bash-1", "Bash", ToolCallState::Allowed)]
    );
    let running = agent.send::<methods::ToolsExecute>(params::execute(
        &sid,
        &turn,
        "bash-1",
        HostTool::Bash,
        input,
    ));
    let seen = poll_until("bash-1 running", BOUND, || {
        let now = in_flight(&mut approver, &sid);
        (now == vec![call("bash-1", "Bash", ToolCallState::Running)]).then_some(now)
    });
    assert_eq!(seen.len(), 1);
    let ran = agent.response_to(&running);
    assert!(ran.error.is_none(), "{ran:?}");
    assert_eq!(in_flight(&mut approver, &sid), vec![]);
    watcher.wait_until("bash-1 done", |notes| {
        (activity_of(notes, "bash-1").len() >= 4).then_some(())
    });
    assert_eq!(
        activity_of(&watcher.notes, "bash-1"),
        vec![
            json!("asking"),
            json!("allowed"),
            json!("running"),
            Value::Null
        ]
    );
    // The other connections did not ask for tool activity and got none.
    assert!(activity_of(&agent.notes, "bash-1").is_empty());
    assert!(activity_of(&approver.notes, "bash-1").is_empty());

    // An allowed call still unfinished when its turn ends is gone with the turn.
    let left = agent.authorize(&sid, &turn, "read-2", "Read");
    assert_eq!(left.decision, DecisionKind::Allow, "{left:?}");
    assert_eq!(
        in_flight(&mut approver, &sid),
        vec![call("read-2", "Read", ToolCallState::Allowed)]
    );
    agent.end_turn(&sid, &turn);
    assert_eq!(in_flight(&mut approver, &sid), vec![]);
    // Watchers hear of the withdrawal too.
    watcher.wait_until("read-2 withdrawn", |notes| {
        (activity_of(notes, "read-2").len() >= 2).then_some(())
    });
    assert_eq!(
        activity_of(&watcher.notes, "read-2"),
        vec![json!("allowed"), Value::Null]
    );

    // The client's report is in the audit log, marked as run by the client.
    let audit = approver.audit(&sid);
    let rows: Vec<_> = audit
        .iter()
        .filter(|e| e.action == AuditAction::ToolFinished)
        .collect();
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0].tool_call_id, Some("read-1".into()));
    assert_eq!(rows[0].detail["ranBy"], "client");
    assert_eq!(rows[0].detail["ok"], true);
}

#[test]
fn tool_activity_needs_the_observer_role() {
    let env = home();
    let host = SocketHost::start(&env);
    let mut conn = host.connect_raw();
    let refused = conn.call_err::<methods::Initialize>(hello_with_activity(
        "e2e",
        &[Role::Agent, Role::Approver],
    ));
    assert_code(&refused, -32004, "ROLE_FORBIDDEN");
}

#[test]
fn a_finished_execution_is_the_sessions_last_execution() {
    let env = home();
    let host = SocketHost::start(&env);
    let mut agent = host.connect("e2e-agent");
    let sid = agent.open_session(&env.workspace(), Interactivity::Interactive);
    let fresh = agent.get_session(&sid);
    assert!(fresh.last_execution.is_none(), "{fresh:?}");

    let (turn, approval) = agent.submit_plan(&sid, "Last execution");
    // plans.submit completed the SubmitPlan call: it is not left in flight.
    assert_eq!(in_flight(&mut agent, &sid), vec![]);
    agent.end_turn(&sid, &turn);
    let approved =
        agent.call::<methods::PlansResolve>(approve(&approval, TargetPermissionMode::Ask));
    let execution = approved.execution_id.expect("executionId");
    agent.call::<methods::ExecutionsClaim>(ExecutionRef {
        session_id: sid.clone(),
        execution_id: execution.clone(),
    });
    let running = agent.get_session(&sid);
    assert_eq!(
        running.live_execution.as_ref().map(|e| e.state),
        Some(ExecutionState::Running),
        "{running:?}"
    );
    assert!(running.last_execution.is_none(), "{running:?}");
    agent.call::<methods::ExecutionsEnd>(EndExecutionParams {
        session_id: sid.clone(),
        execution_id: execution.clone(),
        outcome: ExecutionOutcome::Completed,
    });
    let after = agent.get_session(&sid);
    assert!(after.live_execution.is_none(), "{after:?}");
    let last = after.last_execution.as_ref().expect("lastExecution");
    assert_eq!(last.execution_id, execution);
    assert_eq!(last.state, ExecutionState::Completed);
    assert!(
        last.turn.as_ref().is_some_and(|t| t.ended_at.is_some()),
        "{after:?}"
    );
    let listed = agent.call::<methods::SessionsList>(SessionsFilter {
        include_ended: None,
        workspace_root: None,
        limit: None,
    });
    assert_eq!(
        listed.items[0]
            .last_execution
            .as_ref()
            .map(|e| &e.execution_id),
        Some(&execution)
    );
}

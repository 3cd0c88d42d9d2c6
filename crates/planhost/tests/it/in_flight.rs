//! What a session is doing right now, as a person's surface sees it: the running turn's tool
//! calls (allowed, asking, running) until they finish, `tools.activity` for the connections
//! that asked for it, and the last finished execution.

use planhost_protocol::Notification;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::steps::*;
use crate::support::*;

/// (toolCallId, toolName, state) of the session's unfinished tool calls.
fn in_flight(c: &mut Conn, sid: &str) -> Vec<(String, String, String)> {
    let session = get_session(c, sid);
    session["toolCalls"]
        .as_array()
        .unwrap_or_else(|| panic!("toolCalls is a list: {session}"))
        .iter()
        .map(|t| {
            (
                t["toolCallId"].as_str().unwrap().to_owned(),
                t["toolName"].as_str().unwrap().to_owned(),
                t["state"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn call(id: &str, tool: &str, state: &str) -> (String, String, String) {
    (id.to_owned(), tool.to_owned(), state.to_owned())
}

/// The states the `tools.activity` notifications in `notes` gave `tool_call`, in order.
fn activity_of(notes: &[Notification], tool_call: &str) -> Vec<Value> {
    notes
        .iter()
        .filter(|n| n.method == "tools.activity" && n.params["toolCallId"] == tool_call)
        .map(|n| n.params["state"].clone())
        .collect()
}

#[test]
fn a_sessions_tool_calls_show_allowed_asking_and_running_until_each_finishes() {
    let env = home();
    let host = SocketHost::start(&env);
    let mut agent = host.connect("e2e-agent");
    let mut approver = host.connect("e2e-approver");
    let mut watcher = host.connect_raw();
    watcher.call_json(
        "initialize",
        json!({ "protocolVersion": planhost_protocol::PROTOCOL_VERSION, "clientName": "e2e-watch",
                "roles": ["observer"], "toolActivity": true }),
    );
    let sid = open_session(&mut agent, &env.workspace(), "interactive");
    agent.call_json(
        "sessions.configure",
        json!({ "sessionId": sid, "permissionMode": "ask" }),
    );
    let turn = begin_turn(&mut agent, &sid);
    assert_eq!(in_flight(&mut approver, &sid), vec![]);

    // A tool the client runs itself: allowed until the client says it finished.
    let read = authorize_input(
        &mut agent,
        &sid,
        &turn,
        "read-1",
        "Read",
        json!({ "path": "a.txt" }),
    );
    assert_eq!(read["decision"], "allow", "{read}");
    assert_eq!(
        in_flight(&mut approver, &sid),
        vec![call("read-1", "Read", "allowed")]
    );
    watcher.wait_note("read-1 allowed", |n| {
        n.method == "tools.activity" && n.params["toolCallId"] == "read-1"
    });
    let finished = agent.call_json(
        "tools.finished",
        json!({ "sessionId": sid, "turnId": turn, "toolCallId": "read-1" }),
    );
    assert_eq!(finished["released"], true, "{finished}");
    assert_eq!(in_flight(&mut approver, &sid), vec![]);
    // Once: a second report, or a call never allowed, releases nothing.
    let again = agent.call_json(
        "tools.finished",
        json!({ "sessionId": sid, "turnId": turn, "toolCallId": "read-1", "isError": true }),
    );
    assert_eq!(again["released"], false, "{again}");
    let never = agent.call_json(
        "tools.finished",
        json!({ "sessionId": sid, "turnId": turn, "toolCallId": "nope" }),
    );
    assert_eq!(never["released"], false, "{never}");
    watcher.wait_until("read-1 finished", |notes| {
        (activity_of(notes, "read-1").len() >= 2).then_some(())
    });
    assert_eq!(
        activity_of(&watcher.notes, "read-1"),
        vec![json!("allowed"), Value::Null]
    );
    // Its grant is void: the host will not run it now.
    let late = agent.call_json_err(
        "tools.execute",
        execute_params(&sid, &turn, "read-1", "Read", json!({ "path": "a.txt" })),
    );
    assert_refused(&late, "TOOL_NOT_AUTHORIZED");

    // A host-run call: asking, then allowed, then running, then gone.
    let input = json!({ "command": "touch done.mark; sleep 1; echo done" });
    let ask = authorize_input(&mut agent, &sid, &turn, "bash-1", "Bash", input.clone());
    assert_eq!(ask["decision"], "ask", "{ask}");
    assert_eq!(
        in_flight(&mut approver, &sid),
        vec![call("bash-1", "Bash", "asking")]
    );
    approver.call_json(
        "permissions.resolve",
        json!({ "requestId": ask["requestId"], "decision": "allow" }),
    );
    assert_eq!(
        in_flight(&mut approver, &sid),
        vec![call("bash-1", "Bash", "allowed")]
    );
    let running = agent.send_json(
        "tools.execute",
        execute_params(&sid, &turn, "bash-1", "Bash", input),
    );
    let seen = poll_until("bash-1 running", BOUND, || {
        let now = in_flight(&mut approver, &sid);
        (now == vec![call("bash-1", "Bash", "running")]).then_some(now)
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
    let left = authorize(&mut agent, &sid, &turn, "read-2", "Read");
    assert_eq!(left["decision"], "allow", "{left}");
    assert_eq!(
        in_flight(&mut approver, &sid),
        vec![call("read-2", "Read", "allowed")]
    );
    end_turn(&mut agent, &sid, &turn);
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
    let audit = approver.call_json("audit.list", json!({ "sessionId": sid }));
    let rows: Vec<&Value> = items(&audit)
        .iter()
        .filter(|e| e["action"] == "tool.finished")
        .collect();
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0]["toolCallId"], "read-1");
    assert_eq!(rows[0]["detail"]["ranBy"], "client");
    assert_eq!(rows[0]["detail"]["ok"], true);
}

#[test]
fn tool_activity_needs_the_observer_role() {
    let env = home();
    let host = SocketHost::start(&env);
    let mut conn = host.connect_raw();
    let refused = conn.call_json_err(
        "initialize",
        json!({ "protocolVersion": planhost_protocol::PROTOCOL_VERSION, "clientName": "e2e",
                "roles": ["agent", "approver"], "toolActivity": true }),
    );
    assert_code(&refused, -32004, "ROLE_FORBIDDEN");
}

#[test]
fn a_finished_execution_is_the_sessions_last_execution() {
    let env = home();
    let host = SocketHost::start(&env);
    let mut agent = host.connect("e2e-agent");
    let sid = open_session(&mut agent, &env.workspace(), "interactive");
    let fresh = get_session(&mut agent, &sid);
    assert!(fresh["lastExecution"].is_null(), "{fresh}");

    let (turn, approval) = submit_plan(&mut agent, &sid, "Last execution");
    // plans.submit completed the SubmitPlan call: it is not left in flight.
    assert_eq!(in_flight(&mut agent, &sid), vec![]);
    end_turn(&mut agent, &sid, &turn);
    let approved = agent.call_json(
        "plans.resolve",
        resolve_params(&approval, "approve", Some("ask")),
    );
    let execution = approved["executionId"].as_str().unwrap().to_owned();
    agent.call_json(
        "executions.claim",
        json!({ "sessionId": sid, "executionId": execution }),
    );
    let running = get_session(&mut agent, &sid);
    assert_eq!(running["liveExecution"]["state"], "running", "{running}");
    assert!(running["lastExecution"].is_null(), "{running}");
    agent.call_json(
        "executions.end",
        json!({ "sessionId": sid, "executionId": execution, "outcome": "completed" }),
    );
    let after = get_session(&mut agent, &sid);
    assert!(after["liveExecution"].is_null(), "{after}");
    assert_eq!(after["lastExecution"]["executionId"], execution.as_str());
    assert_eq!(after["lastExecution"]["state"], "completed");
    assert!(
        after["lastExecution"]["turn"]["endedAt"].is_i64(),
        "{after}"
    );
    let listed = agent.call_json("sessions.list", json!({}));
    assert_eq!(
        items(&listed)[0]["lastExecution"]["executionId"],
        execution.as_str()
    );
}

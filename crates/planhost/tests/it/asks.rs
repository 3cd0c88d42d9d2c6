//! Asks: the policy asks a person, any surface answers once, and only then does the call run.

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::steps::*;
use crate::support::*;

#[test]
fn an_ask_blocks_execution_until_a_person_allows_it_once() {
    let env = home();
    let host = SocketHost::start(&env);
    let mut agent = host.connect("e2e-agent");
    let mut approver = host.connect("e2e-approver");
    let sid = open_session(&mut agent, &env.workspace(), "interactive");
    agent.call_json(
        "sessions.configure",
        json!({ "sessionId": sid, "permissionMode": "ask" }),
    );
    let turn = begin_turn(&mut agent, &sid);

    let ask = authorize_input(
        &mut agent,
        &sid,
        &turn,
        "bash-1",
        "Bash",
        json!({ "command": "touch ran.txt && echo ran" }),
    );
    assert_eq!(ask["decision"], "ask", "{ask}");
    let request = ask["requestId"].as_str().expect("requestId").to_owned();
    let bash = execute_params(
        &sid,
        &turn,
        "bash-1",
        "Bash",
        json!({ "command": "touch ran.txt && echo ran" }),
    );

    // Unanswered: the call may not run.
    let early = agent.call_json_err("tools.execute", bash.clone());
    assert_refused(&early, "TOOL_NOT_AUTHORIZED");

    approver.wait_event("permissionAsked", &sid, |e| {
        e["kind"] == "permissionAsked"
            && e["requestId"] == request.as_str()
            && e["toolName"] == "Bash"
    });
    let open = open_asks(&mut approver);
    assert_eq!(open.len(), 1, "{open:?}");
    assert_eq!(open[0]["requestId"], request.as_str(), "{open:?}");
    let answered = approver.call_json(
        "permissions.resolve",
        json!({ "requestId": request, "decision": "allow", "note": "looks fine" }),
    );
    assert_eq!(answered["decision"], "allow");
    assert_eq!(answered["toolCallId"], "bash-1");
    assert!(open_asks(&mut approver).is_empty());

    let twice = approver.call_json_err(
        "permissions.resolve",
        json!({ "requestId": request, "decision": "deny" }),
    );
    assert_refused(&twice, "PERMISSION_ALREADY_RESOLVED");

    let ran = agent.call_json("tools.execute", bash.clone());
    assert_eq!(ran["output"]["exit"]["code"], 0, "{ran}");
    // One allow, one run.
    let again = agent.call_json_err("tools.execute", bash);
    assert_refused(&again, "TOOL_NOT_AUTHORIZED");

    agent.wait_event("permissionResolved", &sid, |e| {
        e["kind"] == "permissionResolved"
            && e["requestId"] == request.as_str()
            && e["decision"] == "allow"
    });
    let audit = poll_until("the audit rows of the ask", BOUND, || {
        let entries = approver.call_json("audit.list", json!({ "sessionId": sid }));
        let rows: Vec<Value> = items(&entries)
            .iter()
            .filter(|e| e["detail"]["requestId"] == request.as_str())
            .cloned()
            .collect();
        (rows.len() >= 2).then_some(rows)
    });
    let actions: Vec<&str> = audit
        .iter()
        .map(|e| e["action"].as_str().unwrap())
        .collect();
    assert!(actions.contains(&"tool.ask"), "{actions:?}");
    assert!(actions.contains(&"tool.ask_answered"), "{actions:?}");
    let answer = audit
        .iter()
        .find(|e| e["action"] == "tool.ask_answered")
        .unwrap();
    assert_eq!(answer["detail"]["decision"], "allow");
    assert_eq!(answer["detail"]["note"], "looks fine");
    assert_eq!(answer["toolCallId"], "bash-1");
}

#[test]
fn a_denied_ask_never_runs() {
    let env = home();
    let host = SocketHost::start(&env);
    let mut agent = host.connect("e2e-agent");
    let mut approver = host.connect("e2e-approver");
    let sid = open_session(&mut agent, &env.workspace(), "interactive");
    agent.call_json(
        "sessions.configure",
        json!({ "sessionId": sid, "permissionMode": "ask" }),
    );
    let turn = begin_turn(&mut agent, &sid);
    let ask = authorize_input(
        &mut agent,
        &sid,
        &turn,
        "write-1",
        "Write",
        json!({ "path": "never.txt", "content": "x" }),
    );
    assert_eq!(ask["decision"], "ask", "{ask}");
    let request = ask["requestId"].as_str().unwrap().to_owned();
    let denied = approver.call_json(
        "permissions.resolve",
        json!({ "requestId": request, "decision": "deny" }),
    );
    assert_eq!(denied["decision"], "deny");
    let refused = agent.call_json_err(
        "tools.execute",
        execute_params(
            &sid,
            &turn,
            "write-1",
            "Write",
            json!({ "path": "never.txt", "content": "x" }),
        ),
    );
    assert_refused(&refused, "TOOL_NOT_AUTHORIZED");
    assert!(!env.workspace().join("never.txt").exists());
}

//! The host stays the authority between `tools.authorize` and `tools.execute`: a grant is bound
//! to its input, re-checked against the durable state, and pinned to its turn's policy.

use serde_json::json;

use crate::steps::*;
use crate::support::*;

fn write_input(name: &str) -> serde_json::Value {
    json!({ "path": name, "content": "x\n" })
}

#[test]
fn a_grant_does_not_survive_entering_plan_mode_in_the_same_turn() {
    let env = home();
    let host = SocketHost::start(&env);
    let mut c = host.connect("agent");
    let sid = open_session(&mut c, &env.workspace(), "interactive");
    c.call_json(
        "sessions.configure",
        json!({ "sessionId": sid, "permissionMode": "accept-edits" }),
    );
    let turn = begin_turn(&mut c, &sid);
    let allowed = authorize_input(&mut c, &sid, &turn, "w1", "Write", write_input("pwned.txt"));
    assert_eq!(allowed["decision"], "allow");
    c.call_json(
        "plans.enter",
        json!({ "sessionId": sid, "turnId": turn, "toolCallId": "enter", "batchIndex": 0, "batchSize": 1 }),
    );
    let e = c.call_json_err(
        "tools.execute",
        execute_params(&sid, &turn, "w1", "Write", write_input("pwned.txt")),
    );
    assert!(
        matches!(
            stable(&e),
            Some("TOOL_NOT_AUTHORIZED" | "POLICY_PLAN_WRITE_DENIED")
        ),
        "{e:?}"
    );
    assert!(!env.workspace().join("pwned.txt").exists());

    // An ask answered after the switch does not let the Write through either.
    end_turn(&mut c, &sid, &turn);
    c.call_json(
        "sessions.setMode",
        json!({ "sessionId": sid, "mode": "agent" }),
    );
    c.call_json(
        "sessions.configure",
        json!({ "sessionId": sid, "permissionMode": "ask" }),
    );
    let turn = begin_turn(&mut c, &sid);
    let ask = authorize_input(
        &mut c,
        &sid,
        &turn,
        "w2",
        "Write",
        write_input("pwned2.txt"),
    );
    assert_eq!(ask["decision"], "ask");
    c.call_json(
        "plans.enter",
        json!({ "sessionId": sid, "turnId": turn, "toolCallId": "enter2", "batchIndex": 0, "batchSize": 1 }),
    );
    c.call_json(
        "permissions.resolve",
        json!({ "requestId": ask["requestId"], "decision": "allow" }),
    );
    let e = c.call_json_err(
        "tools.execute",
        execute_params(&sid, &turn, "w2", "Write", write_input("pwned2.txt")),
    );
    assert_eq!(stable(&e), Some("POLICY_PLAN_WRITE_DENIED"), "{e:?}");
    assert!(!env.workspace().join("pwned2.txt").exists());
}

#[test]
fn the_executed_input_must_be_the_authorized_one() {
    let env = home();
    let host = SocketHost::start(&env);
    let mut c = host.connect("agent");
    let sid = open_session(&mut c, &env.workspace(), "interactive");
    c.call_json(
        "sessions.configure",
        json!({ "sessionId": sid, "permissionMode": "ask" }),
    );
    let turn = begin_turn(&mut c, &sid);
    let ask = authorize_input(&mut c, &sid, &turn, "w1", "Write", write_input("shown.txt"));
    assert_eq!(ask["decision"], "ask");
    let pending = open_asks(&mut c);
    assert_eq!(
        pending[0]["input"]["path"], "shown.txt",
        "the person sees what is asked"
    );
    c.call_json(
        "permissions.resolve",
        json!({ "requestId": ask["requestId"], "decision": "allow" }),
    );
    let e = c.call_json_err(
        "tools.execute",
        execute_params(&sid, &turn, "w1", "Write", write_input("other.txt")),
    );
    assert_eq!(stable(&e), Some("TOOL_NOT_AUTHORIZED"), "{e:?}");
    assert!(!env.workspace().join("other.txt").exists());
}

#[test]
fn a_host_default_change_does_not_reach_a_running_turn() {
    let env = home();
    let host = SocketHost::start(&env);
    let mut c = host.connect("agent");
    let sid = open_session(&mut c, &env.workspace(), "interactive");
    let turn = begin_turn(&mut c, &sid);
    let before = authorize(&mut c, &sid, &turn, "b1", "Bash");
    assert_eq!(before["decision"], "ask");
    c.call_json("settings.set", json!({ "defaultPermissionMode": "auto" }));
    let during = authorize(&mut c, &sid, &turn, "b2", "Bash");
    assert_eq!(
        during["decision"], "ask",
        "the turn keeps the policy it started with"
    );
    end_turn(&mut c, &sid, &turn);
    let next = begin_turn(&mut c, &sid);
    let after = authorize(&mut c, &sid, &next, "b3", "Bash");
    assert_eq!(
        after["decision"], "allow",
        "the next turn picks the new default up"
    );
}

#[test]
fn an_execute_sent_just_before_the_connection_closes_is_cancelled() {
    let env = home();
    let host = SocketHost::start(&env);
    let mut c = host.connect("agent");
    let sid = open_session(&mut c, &env.workspace(), "interactive");
    c.call_json(
        "sessions.configure",
        json!({ "sessionId": sid, "permissionMode": "auto" }),
    );
    let turn = begin_turn(&mut c, &sid);
    let input = json!({ "command": "echo $$ > pid.txt; exec sleep 600" });
    authorize_input(&mut c, &sid, &turn, "s1", "Bash", input.clone());
    c.send_json(
        "tools.execute",
        execute_params(&sid, &turn, "s1", "Bash", input),
    );
    c.close();
    // Whether the host cancelled it before the spawn or killed it after, the call ends on its
    // own (it would otherwise run for 600 s) and leaves no process behind.
    let mut watcher = host.connect("watcher");
    poll_until(
        "the call to end",
        std::time::Duration::from_secs(20),
        || {
            let audit = watcher.call_json("audit.list", json!({ "sessionId": sid, "limit": 50 }));
            audit["items"]
                .as_array()?
                .iter()
                .any(|e| e["action"] == "tool.executed" && e["toolCallId"] == "s1")
                .then_some(())
        },
    );
    if let Ok(pid) = fs_err::read_to_string(env.workspace().join("pid.txt")) {
        let pid = pid.trim();
        poll_until(
            "the command to be gone",
            std::time::Duration::from_secs(10),
            || (!std::path::Path::new(&format!("/proc/{pid}")).exists()).then_some(()),
        );
    }
}

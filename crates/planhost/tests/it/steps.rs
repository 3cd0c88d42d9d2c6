//! The protocol steps of the Plan flow, as an agent or an approval surface takes them.

use std::path::Path;

use serde_json::{Value, json};

use crate::support::Conn;

pub(crate) fn open_session(c: &mut Conn, root: &Path, interactivity: &str) -> String {
    let s = c.call_json(
        "sessions.open",
        json!({ "workspaceRoot": root.display().to_string(), "interactivity": interactivity }),
    );
    s["id"].as_str().expect("session id").to_owned()
}

pub(crate) fn get_session(c: &mut Conn, sid: &str) -> Value {
    c.call_json("sessions.get", json!({ "sessionId": sid }))
}

pub(crate) fn set_mode(c: &mut Conn, sid: &str, mode: &str) -> Value {
    c.call_json(
        "sessions.setMode",
        json!({ "sessionId": sid, "mode": mode }),
    )
}

pub(crate) fn begin_turn(c: &mut Conn, sid: &str) -> String {
    let t = c.call_json("turns.begin", json!({ "sessionId": sid }));
    t["id"].as_str().expect("turn id").to_owned()
}

/// Ends the running turn normally.
pub(crate) fn end_turn(c: &mut Conn, sid: &str, turn: &str) -> Value {
    c.call_json(
        "turns.end",
        json!({ "sessionId": sid, "turnId": turn, "outcome": "completed" }),
    )
}

/// The items of a v2 list result (`{"items": [...]}`, newest first).
#[track_caller]
pub(crate) fn items(list: &Value) -> &Vec<Value> {
    list["items"]
        .as_array()
        .unwrap_or_else(|| panic!("not a list result: {list}"))
}

/// Every pending plan approval (`plans.list` with `status: ["pending"]`).
pub(crate) fn pending_plans(c: &mut Conn) -> Vec<Value> {
    let list = c.call_json("plans.list", json!({ "status": ["pending"] }));
    items(&list).clone()
}

/// Every open permission ask (`permissions.list` with `status: ["open"]`).
pub(crate) fn open_asks(c: &mut Conn) -> Vec<Value> {
    let list = c.call_json("permissions.list", json!({ "status": ["open"] }));
    items(&list).clone()
}

pub(crate) fn authorize_params(sid: &str, turn: &str, call: &str, tool: &str, size: u32) -> Value {
    json!({
        "sessionId": sid, "turnId": turn, "toolCallId": call, "toolName": tool,
        "batchIndex": 0, "batchSize": size, "provenance": { "kind": "builtIn" }, "input": {},
    })
}

pub(crate) fn authorize(c: &mut Conn, sid: &str, turn: &str, call: &str, tool: &str) -> Value {
    c.call_json(
        "tools.authorize",
        authorize_params(sid, turn, call, tool, 1),
    )
}

/// Authorizes a call for exactly `input`: the grant binds the input's digest, so the execute must
/// send the same input.
pub(crate) fn authorize_input(
    c: &mut Conn,
    sid: &str,
    turn: &str,
    call: &str,
    tool: &str,
    input: Value,
) -> Value {
    let mut params = authorize_params(sid, turn, call, tool, 1);
    params["input"] = input;
    c.call_json("tools.authorize", params)
}

pub(crate) fn execute_params(sid: &str, turn: &str, call: &str, tool: &str, input: Value) -> Value {
    json!({ "sessionId": sid, "turnId": turn, "toolCallId": call, "tool": tool, "input": input })
}

pub(crate) const PLAN: &str = "# Plan: e2e\n\n1. Write `out.txt`.\n2. Run Bash.\n";

pub(crate) fn submit_params(sid: &str, turn: &str, call: &str, title: &str, size: u32) -> Value {
    json!({
        "sessionId": sid, "turnId": turn, "toolCallId": call, "batchIndex": 0,
        "batchSize": size, "title": title, "markdown": PLAN,
        "question": "Shall I implement this plan?",
    })
}

/// Plan mode, a turn, SubmitPlan allowed and submitted; returns (turn, approval).
pub(crate) fn submit_plan(c: &mut Conn, sid: &str, title: &str) -> (String, Value) {
    set_mode(c, sid, "plan");
    let turn = begin_turn(c, sid);
    let allowed = authorize(c, sid, &turn, "submit-1", "SubmitPlan");
    assert_eq!(allowed["decision"], "allow", "{allowed}");
    let approval = c.call_json(
        "plans.submit",
        submit_params(sid, &turn, "submit-1", title, 1),
    );
    assert_eq!(approval["status"], "pending");
    (turn, approval)
}

/// `plans.resolve` params naming exactly this approval.
pub(crate) fn resolve_params(approval: &Value, action: &str, mode: Option<&str>) -> Value {
    let mut p = json!({
        "proposalId": approval["proposalId"], "sessionId": approval["sessionId"],
        "turnId": approval["turnId"], "toolCallId": approval["toolCallId"],
        "version": approval["version"], "artifactSha256": approval["artifactSha256"],
        "action": action,
    });
    if let Some(mode) = mode {
        p["targetPermissionMode"] = json!(mode);
    }
    p
}

//! The whole Plan flow: an agent plans, a person approves, the agent executes with streamed
//! output — over the socket with two clients, and over `serve --stdio` with one.

use std::collections::HashMap;

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::steps::*;
use crate::support::*;

/// Runs the flow. `conns[agent]` drives the session; `conns[approver]` watches and decides
/// (the same connection over stdio).
fn full_flow(conns: &mut [Conn], agent: usize, approver: usize, env: &Env) {
    let root = env.workspace();
    let sid = open_session(&mut conns[agent], &root, "interactive");
    set_mode(&mut conns[agent], &sid, "plan");
    let turn = begin_turn(&mut conns[agent], &sid);

    let denied = authorize(&mut conns[agent], &sid, &turn, "write-1", "Write");
    assert_eq!(denied["decision"], "deny", "{denied}");
    assert_eq!(denied["code"], "POLICY_PLAN_WRITE_DENIED", "{denied}");
    let allowed = authorize(&mut conns[agent], &sid, &turn, "submit-1", "SubmitPlan");
    assert_eq!(allowed["decision"], "allow", "{allowed}");
    let approval = conns[agent].call_json(
        "plans.submit",
        submit_params(&sid, &turn, "submit-1", "E2E plan", 1),
    );
    let proposal = approval["proposalId"].as_str().unwrap().to_owned();
    assert_eq!(approval["status"], "pending");
    let artifact = approval["artifactPath"].as_str().unwrap();
    assert!(
        artifact.starts_with(&format!("{}/.pi/plan/", root.display())),
        "{artifact}"
    );
    assert_eq!(fs_err::read_to_string(artifact).unwrap(), PLAN);
    let waiting = get_session(&mut conns[agent], &sid);
    assert_eq!(waiting["planState"], "awaiting_approval");
    assert_eq!(waiting["pendingApproval"]["proposalId"], proposal.as_str());
    end_turn(&mut conns[agent], &sid, &turn);

    // The person's surface learns of the approval from the event stream, then restores it.
    conns[approver].wait_event("approvalChanged pending", &sid, |e| {
        e["kind"] == "approvalChanged"
            && e["proposalId"] == proposal.as_str()
            && e["status"] == "pending"
    });
    let list = pending_plans(&mut conns[approver]);
    assert_eq!(list.len(), 1, "{list:?}");
    assert_eq!(list[0]["proposalId"], proposal.as_str());
    assert_eq!(list[0]["title"], "E2E plan");
    assert_eq!(list[0]["question"], "Shall I implement this plan?");
    let approved = conns[approver].call_json(
        "plans.resolve",
        resolve_params(&approval, "approve", Some("accept-edits")),
    );
    assert_eq!(approved["status"], "approved", "{approved}");
    assert_eq!(approved["targetPermissionMode"], "accept-edits");
    assert_eq!(approved["executionState"], "queued");
    let execution = approved["executionId"].as_str().unwrap().to_owned();
    assert!(pending_plans(&mut conns[approver]).is_empty());

    // The agent sees Agent mode with the chosen permission, and claims the execution.
    conns[agent].wait_event("executionChanged queued", &sid, |e| {
        e["kind"] == "executionChanged"
            && e["executionId"] == execution.as_str()
            && e["state"] == "queued"
    });
    let session = get_session(&mut conns[agent], &sid);
    assert_eq!(session["mode"], "agent");
    assert_eq!(session["permissionMode"], "accept-edits");
    let claimed = conns[agent].call_json(
        "executions.claim",
        json!({ "sessionId": sid, "executionId": execution }),
    );
    // The claim hands the agent the exact approved bytes, not whatever the file says now.
    assert_eq!(claimed["markdown"], PLAN, "{claimed}");
    assert_eq!(claimed["sha256"], approval["artifactSha256"], "{claimed}");
    assert_eq!(
        claimed["artifactPath"], approval["artifactPath"],
        "{claimed}"
    );
    assert_eq!(claimed["execution"]["executionId"], execution.as_str());
    assert_eq!(claimed["execution"]["state"], "running", "{claimed}");
    let exec_turn = &claimed["turn"];
    assert_eq!(exec_turn["origin"], "execution");
    assert_eq!(exec_turn["state"], "running");
    assert_eq!(exec_turn["executionId"], execution.as_str());
    let et = exec_turn["id"].as_str().unwrap().to_owned();

    // accept-edits: Write runs; Bash asks a person.
    let write = authorize_input(
        &mut conns[agent],
        &sid,
        &et,
        "write-2",
        "Write",
        json!({ "path": "out.txt", "content": "from the plan\n" }),
    );
    assert_eq!(write["decision"], "allow", "{write}");
    conns[agent].call_json(
        "tools.execute",
        execute_params(
            &sid,
            &et,
            "write-2",
            "Write",
            json!({ "path": "out.txt", "content": "from the plan\n" }),
        ),
    );
    assert_eq!(
        fs_err::read_to_string(root.join("out.txt")).unwrap(),
        "from the plan\n"
    );
    let ask = authorize_input(
        &mut conns[agent],
        &sid,
        &et,
        "bash-1",
        "Bash",
        json!({ "command": "touch flow.mark; echo one; echo two >&2; cat out.txt; echo three >&2" }),
    );
    assert_eq!(ask["decision"], "ask", "{ask}");
    let request = ask["requestId"].as_str().unwrap().to_owned();
    conns[approver].wait_event("permissionAsked", &sid, |e| {
        e["kind"] == "permissionAsked" && e["requestId"] == request.as_str()
    });
    let answered = conns[approver].call_json(
        "permissions.resolve",
        json!({ "requestId": request, "decision": "allow" }),
    );
    assert_eq!(answered["decision"], "allow");

    let result = conns[agent].call_json(
        "tools.execute",
        execute_params(
            &sid,
            &et,
            "bash-1",
            "Bash",
            json!({ "command": "touch flow.mark; echo one; echo two >&2; cat out.txt; echo three >&2" }),
        ),
    );
    assert_eq!(result["toolCallId"], "bash-1");
    assert_eq!(result["output"]["exit"]["code"], 0, "{result}");
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

    let finished = conns[agent].call_json(
        "executions.end",
        json!({ "sessionId": sid, "executionId": execution, "outcome": "completed" }),
    );
    assert_eq!(finished["executionId"], execution.as_str(), "{finished}");
    assert_eq!(finished["state"], "completed", "{finished}");
    let idle = get_session(&mut conns[agent], &sid);
    assert_eq!(idle["mode"], "agent");
    assert!(idle["activeTurn"].is_null(), "{idle}");
    assert!(idle["pendingApproval"].is_null(), "{idle}");

    // The approver saw the whole lifecycle, in order, with per-session seq strictly increasing.
    conns[approver].wait_event("executionChanged completed", &sid, |e| {
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

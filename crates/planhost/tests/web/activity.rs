//! What a session is doing, live in real Chromium: the running turn's tool calls (allowed, then
//! running, gone once finished) and the last finished execution; and "what changed" measured
//! from the draft a person was shown before (pi's `/plan preview` calls `checkpoints.seen`).

use std::thread;

use planhost_core::Role;
use serde_json::{Value, json};

use crate::browser::{Browser, browser_scenario, run_scenario};
use crate::support::{
    HostOptions, WebHost, agent, open_session, plan_session, resolve, session_of, submit,
};

/// (id, state) of the tool calls a scenario saw.
fn ids_and_states(calls: &Value) -> Vec<(String, String)> {
    calls
        .as_array()
        .map(|cs| {
            cs.iter()
                .map(|c| {
                    (
                        c["id"].as_str().unwrap_or_default().to_owned(),
                        c["state"].as_str().unwrap_or_default().to_owned(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

fn pair(id: &str, state: &str) -> (String, String) {
    (id.to_owned(), state.to_owned())
}

fn authorize(
    agent: &mut crate::support::Conn,
    sid: &Value,
    turn: &Value,
    call: &str,
    tool: &str,
    input: Value,
) -> Value {
    agent.call_json(
        "tools.authorize",
        json!({
            "sessionId": sid, "turnId": turn, "toolCallId": call, "toolName": tool,
            "batchIndex": 0, "batchSize": 1, "provenance": { "kind": "builtIn" }, "input": input,
        }),
    )
}

#[test]
fn a_sessions_tool_calls_and_last_execution_show_live_in_the_open_page() {
    let (_slot, budget) = browser_scenario();
    let host = WebHost::start(&budget);
    let mut agent = agent(&host);
    let mut person = host.connect("e2e-person", &[Role::Approver, Role::Observer]);
    let sid = open_session(&host, &mut agent);
    person.call_json(
        "sessions.configure",
        json!({ "sessionId": sid, "permissionMode": "ask" }),
    );
    let turn = agent.call_json("turns.begin", json!({ "sessionId": sid }))["id"].clone();

    let mut browser = Browser::start(&host, "session_activity", json!({ "sessionId": sid }));
    let open = browser.checkpoint("open");
    assert_eq!(ids_and_states(&open["before"]), vec![], "{open}");

    // A Read the client runs itself: allowed until the client reports it finished.
    let read = authorize(
        &mut agent,
        &sid,
        &turn,
        "read-1",
        "Read",
        json!({ "path": "a.txt" }),
    );
    assert_eq!(read["decision"], "allow", "{read}");
    browser.resume(&json!({}));
    let allowed = browser.checkpoint("allowed");

    // Read finished; a Bash asked, allowed by the person, and running (on a connection of its own).
    let finished = agent.call_json(
        "tools.finished",
        json!({ "sessionId": sid, "turnId": turn, "toolCallId": "read-1" }),
    );
    assert_eq!(finished["released"], true, "{finished}");
    let input = json!({ "command": "touch ran.mark; sleep 4" });
    let ask = authorize(&mut agent, &sid, &turn, "bash-1", "Bash", input.clone());
    assert_eq!(ask["decision"], "ask", "{ask}");
    person.call_json(
        "permissions.resolve",
        json!({ "requestId": ask["requestId"], "decision": "allow" }),
    );
    let mut runner = host.connect("e2e-runner", &[Role::Agent]);
    let (run_sid, run_turn) = (sid.clone(), turn.clone());
    let bash = thread::spawn(move || {
        runner.call_json(
            "tools.execute",
            json!({ "sessionId": run_sid, "turnId": run_turn, "toolCallId": "bash-1", "tool": "Bash", "input": input }),
        )
    });
    browser.resume(&json!({}));
    let running = browser.checkpoint("running");
    let ran = bash.join().expect("the Bash call's thread");
    assert_eq!(ran["output"]["exit"]["code"], 0, "{ran}");

    // The turn over, then a plan approved, claimed and completed.
    agent.call_json(
        "turns.end",
        json!({ "sessionId": sid, "turnId": turn, "outcome": "completed" }),
    );
    person.call_json(
        "sessions.setMode",
        json!({ "sessionId": sid, "mode": "plan" }),
    );
    let approval = submit(
        &mut agent,
        &sid,
        "submit-1",
        "Executed",
        "# Plan\n\n1. Do it.\n",
    );
    let approved = person.call_json(
        "plans.resolve",
        json!({
            "proposalId": approval["proposalId"], "sessionId": approval["sessionId"],
            "turnId": approval["turnId"], "toolCallId": approval["toolCallId"],
            "version": approval["version"], "artifactSha256": approval["artifactSha256"],
            "action": "approve", "targetPermissionMode": "ask",
        }),
    );
    let execution = approved["executionId"].clone();
    agent.call_json(
        "executions.claim",
        json!({ "sessionId": sid, "executionId": execution }),
    );
    agent.call_json(
        "executions.end",
        json!({ "sessionId": sid, "executionId": execution, "outcome": "completed" }),
    );
    browser.resume(&json!({}));
    let result = browser.result();

    assert!(
        result["none"].as_str().is_some_and(|t| !t.is_empty()),
        "a running turn with no calls says so: {result:#}"
    );
    assert_eq!(
        ids_and_states(&allowed["allowed"]),
        vec![pair("read-1", "allowed")],
        "{allowed:#}"
    );
    assert_eq!(allowed["allowed"][0]["name"], "Read", "{allowed:#}");
    assert!(
        allowed["allowed"][0]["since"]
            .as_str()
            .is_some_and(|t| t.ends_with('Z')),
        "{allowed:#}"
    );
    assert_eq!(
        ids_and_states(&running["running"]),
        vec![pair("bash-1", "running")],
        "the finished Read is gone, the Bash runs: {running:#}"
    );
    assert_eq!(result["last"]["executionId"], execution, "{result:#}");
    assert!(
        result["last"]["ended"]
            .as_str()
            .is_some_and(|t| t.ends_with('Z')),
        "{result:#}"
    );
    assert_eq!(
        result["toolsAfter"], 0,
        "no turn, no tool calls: {result:#}"
    );
    assert_eq!(
        result["sameDocument"], true,
        "updated without a reload: {result:#}"
    );
    assert_eq!(
        result["fetched"]["list"], 0,
        "events of one session refetch only its item: {result:#}"
    );
    assert!(result["fetched"]["item"].as_u64() > Some(0), "{result:#}");
    let session = session_of(&mut person, &sid);
    assert_eq!(session["lastExecution"]["state"], "completed", "{session}");
    assert_eq!(session["toolCalls"], json!([]), "{session}");
}

#[test]
fn a_plan_card_shows_what_changed_since_the_draft_the_person_was_shown() {
    let (_slot, budget) = browser_scenario();
    let host = WebHost::start_with(&budget, HostOptions { test_clock: true });
    let mut agent = agent(&host);
    // pi's connection: the agent and the person's terminal (it marks `/plan preview` seen).
    let mut pi = host.connect("pi-planhost", &[Role::Agent, Role::Approver]);
    let sid = plan_session(&host, &mut agent);
    let first = submit(
        &mut agent,
        &sid,
        "submit-1",
        "First",
        "# Plan\n\n1. Write `out.txt`.\n2. Run the tests.\n",
    );
    assert_eq!(resolve(&host, &first, "reject")["status"], "rejected");
    // Later, by the host's own clock: no sleep.
    host.test_clock().advance(10);

    let branch = json!(["root", "e1"]);
    let draft = "# Plan\n\n1. Write `out.txt`.\n2. Run the linter.\n3. Run the tests.\n";
    let saved = agent.call_json(
        "checkpoints.save",
        json!({ "sessionId": sid, "branchPath": branch, "markdown": draft, "expectedRevision": 0 }),
    );
    let checkpoint = saved["checkpoint"].clone();
    // A wrong SHA-256 or another session's id is refused with its code, and marks nothing; an
    // observer shows nothing to a person, so it may not mark.
    let other = open_session(&host, &mut agent);
    let mut watcher = host.connect("e2e-watch", &[Role::Observer]);
    let cases = [
        (false, &sid, json!("00"), "CHECKPOINT_NOT_FOUND"),
        (
            false,
            &other,
            checkpoint["sha256"].clone(),
            "CHECKPOINT_NOT_FOUND",
        ),
        (true, &sid, checkpoint["sha256"].clone(), "ROLE_FORBIDDEN"),
    ];
    for (as_observer, session, sha, code) in cases {
        let conn = if as_observer { &mut watcher } else { &mut pi };
        let refused = conn
            .try_call_json(
                "checkpoints.seen",
                json!({ "sessionId": session, "checkpointId": checkpoint["checkpointId"], "sha256": sha }),
            )
            .expect_err("refused");
        assert_eq!(
            refused.stable_code().map(planhost_core::ErrorCode::as_str),
            Some(code),
            "{session} {sha}: {refused:?}"
        );
    }
    let seen = pi.call_json(
        "checkpoints.seen",
        json!({ "sessionId": sid, "checkpointId": checkpoint["checkpointId"], "sha256": checkpoint["sha256"] }),
    );
    assert!(seen["seenAt"].is_i64(), "{seen}");
    assert_eq!(seen["seenBy"]["client"], "pi-planhost", "{seen}");
    // Later, by the host's own clock: no sleep.
    host.test_clock().advance(10);

    // A later draft nobody was shown, then the plan.
    agent.call_json(
        "checkpoints.save",
        json!({ "sessionId": sid, "branchPath": branch, "markdown": "# Plan\n\nunseen\n", "expectedRevision": 1 }),
    );
    let plan = "# Plan\n\n1. Write `out.txt`.\n2. Run the linter on `src/`.\n3. Run the tests.\n";
    let second = submit(&mut agent, &sid, "submit-2", "Second", plan);
    let detail = agent.call_json("plans.get", json!({ "proposalId": second["proposalId"] }));
    assert_eq!(
        detail["lastSeen"]["checkpoint"]["checkpointId"], checkpoint["checkpointId"],
        "{detail}"
    );
    assert_eq!(detail["lastSeen"]["markdown"], draft, "{detail}");

    let result = run_scenario(
        &host,
        "diff_since_seen_draft",
        json!({ "approvalId": second["proposalId"] }),
    );
    let has = |lines: &Value, text: &str| {
        lines.as_array().is_some_and(|ls| {
            ls.iter()
                .any(|l| l.as_str().is_some_and(|l| l.contains(text)))
        })
    };
    assert_eq!(result["open"], 1, "one diff open: {result:#}");
    assert_eq!(result["seen"]["count"], 1, "{result:#}");
    let label = result["seen"]["label"].as_str().unwrap_or_default();
    assert!(
        label.contains(&checkpoint["revision"].to_string()) && label.contains("pi-planhost"),
        "the label names the revision and where it was shown: {result:#}"
    );
    assert!(
        has(&result["seen"]["inserted"], "Run the linter on `src/`."),
        "{result:#}"
    );
    assert!(
        has(&result["seen"]["deleted"], "Run the linter."),
        "{result:#}"
    );
    assert!(
        !has(&result["seen"]["inserted"], "Run the tests."),
        "a line the person already saw is not new: {result:#}"
    );
    assert_eq!(result["previous"]["count"], 1, "{result:#}");
    assert_eq!(result["previous"]["open"], false, "folded: {result:#}");
    assert!(
        has(&result["previous"]["inserted"], "Run the linter on `src/`."),
        "{result:#}"
    );
}

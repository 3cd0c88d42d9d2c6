//! A host that crashed and came back: live work of the old process is interrupted, nothing of
//! it is actionable, and nothing replays.

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::steps::*;
use crate::support::*;

fn actions(c: &mut Conn) -> Vec<String> {
    items(&c.call_json("audit.list", json!({ "limit": 10_000 })))
        .iter()
        .map(|e| e["action"].as_str().unwrap().to_owned())
        .collect()
}

fn count(actions: &[String], action: &str) -> usize {
    actions.iter().filter(|a| *a == action).count()
}

#[test]
fn a_restarted_host_interrupts_live_work_and_replays_nothing() {
    let env = home();
    let mut host = SocketHost::start(&env);
    let mut c = host.connect("e2e-before-crash");

    // A: a plan awaiting approval.
    let a = open_session(&mut c, &env.workspace(), "interactive");
    let (turn_a, pending) = submit_plan(&mut c, &a, "Pending at the crash");
    end_turn(&mut c, &a, &turn_a);
    // B: approved, its execution queued but not claimed.
    let b = open_session(&mut c, &env.workspace(), "interactive");
    let (turn_b, approval_b) = submit_plan(&mut c, &b, "Approved at the crash");
    end_turn(&mut c, &b, &turn_b);
    let approved = c.call_json(
        "plans.resolve",
        resolve_params(&approval_b, "approve", Some("auto")),
    );
    assert_eq!(approved["executionState"], "queued");
    let execution = approved["executionId"].as_str().unwrap().to_owned();
    // C: a turn running at the crash.
    let cs = open_session(&mut c, &env.workspace(), "interactive");
    let turn_c = begin_turn(&mut c, &cs);
    // Every audit row is durable before the crash (tool rows are written asynchronously).
    let before = poll_until("tool audit rows to be written", BOUND, || {
        let a = actions(&mut c);
        (count(&a, "tool.allow") == 2).then_some(a)
    });
    drop(c);

    host.kill();
    let host = SocketHost::start(&env);
    let mut c = host.connect("e2e-after-crash");

    // Nothing is pending any more; A's approval is interrupted, not resumable.
    let still = pending_plans(&mut c);
    assert!(still.is_empty(), "{still:?}");
    let detail = c.call_json("plans.get", json!({ "proposalId": pending["proposalId"] }));
    let row = &detail["approval"];
    assert_eq!(row["status"], "interrupted", "{row}");
    assert_eq!(row["errorCode"], "HOST_RESTARTED");
    assert!(
        row["version"].as_i64() > pending["version"].as_i64(),
        "{row}"
    );
    assert_eq!(detail["markdown"], PLAN);
    let sa = get_session(&mut c, &a);
    assert_eq!(sa["mode"], "plan");
    assert_eq!(sa["planState"], "stopped");
    assert!(
        sa["pendingApproval"].is_null() && sa["activeTurn"].is_null(),
        "{sa}"
    );

    // The old approve request is dead: stale by version, and not pending with the new one.
    let old = c.call_json_err(
        "plans.resolve",
        resolve_params(&pending, "approve", Some("auto")),
    );
    assert_refused(&old, "PLAN_APPROVAL_STALE");
    let mut fresh = resolve_params(&pending, "approve", Some("auto"));
    fresh["version"] = row["version"].clone();
    let fresh = c.call_json_err("plans.resolve", fresh);
    assert_refused(&fresh, "PLAN_APPROVAL_NOT_PENDING");

    // B's queued execution is interrupted and can no longer be claimed.
    let b_row = c.call_json(
        "plans.get",
        json!({ "proposalId": approval_b["proposalId"] }),
    )["approval"]
        .clone();
    assert_eq!(b_row["status"], "approved");
    assert_eq!(b_row["executionState"], "interrupted", "{b_row}");
    let claim = c.call_json_err(
        "executions.claim",
        json!({ "sessionId": b, "executionId": execution }),
    );
    assert_eq!(claim.code, planhost_protocol::codes::REFUSED, "{claim:?}");
    assert!(
        matches!(
            stable(&claim),
            Some("EXECUTION_STATE_INVALID" | "EXECUTION_NOT_FOUND")
        ),
        "{claim:?}"
    );
    let sb = get_session(&mut c, &b);
    assert_eq!(sb["mode"], "agent");
    assert!(sb["activeTurn"].is_null(), "{sb}");

    // C's turn was aborted.
    assert!(get_session(&mut c, &cs)["activeTurn"].is_null());
    let e = c.call_json_err(
        "turns.end",
        json!({ "sessionId": cs, "turnId": turn_c, "outcome": "completed" }),
    );
    assert_refused(&e, "TURN_NOT_ACTIVE");

    // Nothing replayed: no turn began, nothing was claimed or executed, no new approval.
    let after = actions(&mut c);
    for action in [
        "turn.started",
        "execution.claimed",
        "tool.executed",
        "approval.pending",
    ] {
        assert_eq!(
            count(&after, action),
            count(&before, action),
            "{action} after the restart: {after:?}"
        );
    }
    assert_eq!(count(&after, "fence.approval_interrupted"), 1, "{after:?}");
    let all = c.call_json("plans.list", json!({}));
    assert_eq!(items(&all).len(), 2, "{all}");
    let sessions: Vec<Value> = items(&c.call_json("sessions.list", json!({}))).clone();
    assert_eq!(sessions.len(), 3);
    assert!(sessions.iter().all(|s| s["activeTurn"].is_null()));

    // The host is usable: A can plan again.
    let turn = begin_turn(&mut c, &a);
    end_turn(&mut c, &a, &turn);
}

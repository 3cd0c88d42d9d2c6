//! Crash rounds: a workload of plan flows runs against the real host, the host is SIGKILLed at
//! a varying moment, and a restarted host must show no live work, nothing replayed, and every
//! recorded file exactly as recorded.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use planhost_client::{Client, ClientError};
use serde_json::{Value, json};

use crate::support::*;

fn call(c: &mut Client, method: &str, params: Value) -> Result<Value, ClientError> {
    c.call_raw(method, &params)
}

/// One flow: open, Plan, checkpoint, submit, then leave it pending, approve and execute, or
/// publish — depending on `i`.
fn one_flow(c: &mut Client, root: &Path, round: usize, i: usize) -> Result<(), ClientError> {
    let s = call(
        c,
        "sessions.open",
        json!({ "workspaceRoot": root.display().to_string(), "externalId": format!("crash-{round}-{i}"),
                "interactivity": "interactive" }),
    )?;
    let sid = s["id"].as_str().unwrap_or_default().to_owned();
    call(
        c,
        "sessions.setMode",
        json!({ "sessionId": sid, "mode": "plan" }),
    )?;
    let turn = call(c, "turns.begin", json!({ "sessionId": sid }))?["id"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let branch = json!(["root", format!("e{i}")]);
    let markdown = format!("# Plan: crash {round} {i}\n\n1. step\n");
    call(
        c,
        "checkpoints.save",
        json!({ "sessionId": sid, "branchPath": branch, "markdown": markdown, "expectedRevision": 0 }),
    )?;
    let approval = call(
        c,
        "plans.submit",
        json!({ "sessionId": sid, "turnId": turn, "toolCallId": "submit", "batchIndex": 0, "batchSize": 1,
                "title": format!("crash {round} {i}"), "markdown": markdown, "question": "ok?" }),
    )?;
    if i % 3 == 2 {
        let published = call(
            c,
            "publications.request",
            json!({ "sessionId": sid, "branchPath": branch }),
        )?;
        if let Some(id) = published["publication"]["publicationId"].as_str() {
            call(
                c,
                "publications.resolve",
                json!({ "publicationId": id, "action": "approve" }),
            )?;
        }
    }
    call(
        c,
        "turns.end",
        json!({ "sessionId": sid, "turnId": turn, "outcome": "completed" }),
    )?;
    if i.is_multiple_of(3) {
        return Ok(());
    }
    let approved = call(
        c,
        "plans.resolve",
        json!({ "proposalId": approval["proposalId"], "sessionId": sid, "turnId": turn, "toolCallId": "submit",
                "version": approval["version"], "action": "approve" }),
    )?;
    let execution = approved["executionId"].clone();
    call(
        c,
        "executions.claim",
        json!({ "sessionId": sid, "executionId": execution }),
    )?;
    call(
        c,
        "executions.end",
        json!({ "sessionId": sid, "executionId": execution, "outcome": "completed" }),
    )?;
    Ok(())
}

fn workload(socket: PathBuf, root: PathBuf, round: usize, flows: Arc<AtomicUsize>) {
    let Ok(mut c) = Client::connect_socket(&socket) else {
        return;
    };
    if c.initialize("crash-workload", ALL_ROLES).is_err() {
        return;
    }
    for i in 0.. {
        match one_flow(&mut c, &root, round, i) {
            Ok(()) => {
                flows.fetch_add(1, Ordering::Relaxed);
            }
            // Refusals are fine (a flow may collide with its own earlier partial state).
            Err(ClientError::Rpc(_)) => {}
            // The host is gone: the round's crash happened.
            Err(ClientError::Io(_) | ClientError::Closed | ClientError::Json(_)) => return,
        }
    }
}

fn check_after_restart(env: &Env) {
    let host = SocketHost::start(env);
    let mut c = host.connect("checker");
    assert_eq!(
        c.call(
            "plans.list",
            json!({ "status": ["pending"], "limit": 10_000 })
        )["items"],
        json!([]),
        "pending survived a restart"
    );
    for s in c.call("sessions.list", json!({ "limit": 10_000 }))["items"]
        .as_array()
        .unwrap()
    {
        assert_ne!(s["planState"], "awaiting_approval", "{s}");
        assert_eq!(
            s["activeTurn"],
            Value::Null,
            "a turn survived a restart: {s}"
        );
        assert_eq!(
            s["liveExecution"],
            Value::Null,
            "an execution survived a restart: {s}"
        );
    }
    let approvals = c.call("plans.list", json!({ "limit": 10_000 }))["items"]
        .as_array()
        .unwrap()
        .clone();
    for a in &approvals {
        assert!(
            !matches!(a["executionState"].as_str(), Some("queued" | "running")),
            "live execution: {a}"
        );
        if a["status"] == "approved" {
            assert!(a["executionId"].is_string(), "{a}");
        } else {
            assert_eq!(a["executionId"], Value::Null, "{a}");
        }
        // Every recorded artifact is on disk with exactly the recorded bytes.
        let bytes = fs_err::read(a["artifactPath"].as_str().unwrap()).expect("artifact on disk");
        assert_eq!(
            planhost_core::sha256_hex(&bytes),
            a["artifactSha256"].as_str().unwrap()
        );
    }
    let publications = c.call("publications.list", json!({ "limit": 10_000 }))["items"]
        .as_array()
        .unwrap()
        .clone();
    let mut seen = std::collections::HashSet::new();
    for p in &publications {
        assert!(
            !matches!(p["status"].as_str(), Some("pending" | "approved")),
            "open publication: {p}"
        );
        let path = p["relativePath"].as_str().unwrap();
        if p["status"] == "completed" && seen.insert(path.to_owned()) {
            let bytes = fs_err::read(env.workspace().join(path)).expect("published file on disk");
            assert_eq!(
                planhost_core::sha256_hex(&bytes),
                p["sha256"].as_str().unwrap(),
                "{p}"
            );
        }
    }
    // Nothing is replayed: no turn starts by itself after the restart.
    std::thread::sleep(Duration::from_millis(200));
    for s in c.call("sessions.list", json!({ "limit": 10_000 }))["items"]
        .as_array()
        .unwrap()
    {
        assert_eq!(s["activeTurn"], Value::Null, "{s}");
    }
}

#[test]
fn killed_at_any_moment_the_host_restarts_clean() {
    let env = Env::new();
    let flows = Arc::new(AtomicUsize::new(0));
    for round in 0..6 {
        let mut host = SocketHost::start(&env);
        let worker = {
            let (socket, root, flows) = (env.socket(), env.workspace(), Arc::clone(&flows));
            std::thread::spawn(move || workload(socket, root, round, flows))
        };
        // A different moment each round, from early in the first flow to mid-stream.
        std::thread::sleep(Duration::from_millis(20 + (round as u64 * 53) % 190));
        host.kill();
        worker.join().unwrap();
        check_after_restart(&env);
    }
    assert!(
        flows.load(Ordering::Relaxed) > 0,
        "the workload never completed a flow"
    );
}

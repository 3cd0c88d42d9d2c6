//! Crash injection (issue 10): seeded, reproducible trials. A workload of plan flows — submit,
//! checkpoint, publish, approve, claim, and a Bash call that appends to a side-effect file —
//! runs against the real host, which is SIGKILLed at a moment drawn from the seed. After each
//! restart: `PRAGMA integrity_check` is ok; nothing is live after the fence; every row's
//! artifact is on disk with its hash; published files hold exactly recorded bytes; no side
//! effect happened twice or after the kill; and no process or cgroup of the dead host is left.
//!
//! `PLANHOST_CRASH_TRIALS` (default 20, the CI run) and `PLANHOST_CRASH_SEED` (default
//! `0x5eed`) select the run; `docs/reliability.md` has the full 200-trial command and figures.

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
                "version": approval["version"], "action": "approve", "targetPermissionMode": "auto" }),
    )?;
    let execution = approved["executionId"].clone();
    let claimed = call(
        c,
        "executions.claim",
        json!({ "sessionId": sid, "executionId": execution }),
    )?;
    // The side effect: one `start` and one `end` line per flow, with a pause between them
    // long enough that a command outliving its host would be seen writing `end` later.
    let exec_turn = claimed["turn"]["id"].clone();
    let input = json!({ "command": format!(
        "echo start-{round}-{i} >> side.txt; sleep 0.3; echo end-{round}-{i} >> side.txt"
    ) });
    let allowed = call(
        c,
        "tools.authorize",
        json!({ "sessionId": sid, "turnId": exec_turn, "toolCallId": "side", "toolName": "Bash",
                "batchIndex": 0, "batchSize": 1, "provenance": { "kind": "builtIn" }, "input": input }),
    )?;
    if allowed["decision"] == "allow" {
        call(
            c,
            "tools.execute",
            json!({ "sessionId": sid, "turnId": exec_turn, "toolCallId": "side", "tool": "Bash",
                    "input": input }),
        )?;
    }
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

/// What a trial saw at the moment of the kill.
struct AtKill {
    /// The killed host's pid (its runs' markers and cgroups start with it).
    host_pid: u32,
    /// `side.txt`'s length a moment after the kill (the watchdog's moment).
    side_len: u64,
}

fn side_text(env: &Env) -> String {
    fs_err::read_to_string(env.workspace().join("side.txt")).unwrap_or_default()
}

fn check_side_effects(env: &Env, at_kill: &AtKill, trial: &str) {
    let text = side_text(env);
    assert_eq!(
        text.len() as u64,
        at_kill.side_len,
        "{trial}: a side effect happened after the kill:\n{text}"
    );
    let mut seen = std::collections::HashSet::new();
    for line in text.lines() {
        assert!(
            seen.insert(line),
            "{trial}: side effect {line:?} happened twice"
        );
        if let Some(flow) = line.strip_prefix("end-") {
            assert!(
                seen.contains(format!("start-{flow}").as_str()),
                "{trial}: {line:?} without its start"
            );
        }
    }
}

/// No process is left working in the workspace, and no cgroup of the killed host remains.
fn check_no_leftovers(env: &Env, at_kill: &AtKill, trial: &str) {
    use planhost_test_support::procs;
    assert_eq!(
        procs::processes_in(&env.workspace()),
        Vec::<i32>::new(),
        "{trial}: processes left in the workspace"
    );
    assert_eq!(
        procs::run_cgroups_of(at_kill.host_pid),
        Vec::<String>::new(),
        "{trial}: the dead host's cgroups remain"
    );
}

fn check_after_restart(env: &Env, at_kill: &AtKill, trial: &str) {
    let host = SocketHost::start(env);
    let mut c = host.connect("checker");
    assert_eq!(integrity_check(env), "ok", "{trial}: integrity_check");
    check_no_leftovers(env, at_kill, trial);
    assert_eq!(
        c.call_json(
            "plans.list",
            json!({ "status": ["pending"], "limit": 10_000 })
        )["items"],
        json!([]),
        "pending survived a restart"
    );
    for s in c.call_json("sessions.list", json!({ "limit": 10_000 }))["items"]
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
    let approvals = c.call_json("plans.list", json!({ "limit": 10_000 }))["items"]
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
    let publications = c.call_json("publications.list", json!({ "limit": 10_000 }))["items"]
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
    for s in c.call_json("sessions.list", json!({ "limit": 10_000 }))["items"]
        .as_array()
        .unwrap()
    {
        assert_eq!(s["activeTurn"], Value::Null, "{s}");
    }
    // Long past the side-effect command's pause: anything that outlived the host has written.
    std::thread::sleep(Duration::from_millis(150));
    check_side_effects(env, at_kill, trial);
}

/// splitmix64: a tiny, well-mixed generator, so a trial's moment depends only on the seed.
fn splitmix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// Trials that share one state directory, so restarts also meet earlier trials' state.
const TRIALS_PER_STATE_DIR: u64 = 5;

#[test]
fn killed_at_any_moment_the_host_restarts_clean() {
    let trials = env_u64("PLANHOST_CRASH_TRIALS", 20);
    let seed = env_u64("PLANHOST_CRASH_SEED", 0x5eed);
    let flows = Arc::new(AtomicUsize::new(0));
    let mut side_effects = 0;
    let mut env = home();
    let started = std::time::Instant::now();
    for trial in 0..trials {
        if trial > 0 && trial % TRIALS_PER_STATE_DIR == 0 {
            env = home();
        }
        // From early in the first flow to the middle of a later one's Bash call.
        let delay = 5 + splitmix(seed ^ trial) % 900;
        let name = format!("trial {trial} (seed {seed:#x}, kill after {delay} ms)");
        let round = trial as usize;
        let mut host = SocketHost::start(&env);
        let worker = {
            let (socket, root, flows) = (env.socket(), env.workspace(), Arc::clone(&flows));
            std::thread::spawn(move || workload(socket, root, round, flows))
        };
        std::thread::sleep(Duration::from_millis(delay));
        let host_pid = host.pid();
        host.kill();
        worker.join().unwrap();
        // The watchdog's moment: the killed host's commands are ended by now.
        std::thread::sleep(Duration::from_millis(100));
        let at_kill = AtKill {
            host_pid,
            side_len: side_text(&env).len() as u64,
        };
        check_after_restart(&env, &at_kill, &name);
        if (trial + 1) % TRIALS_PER_STATE_DIR == 0 || trial + 1 == trials {
            side_effects += side_text(&env).lines().count();
        }
    }
    eprintln!(
        "crash injection: {trials} trials, seed {seed:#x}, {} flows completed, {side_effects} side-effect lines, {:.1} s",
        flows.load(Ordering::Relaxed),
        started.elapsed().as_secs_f64()
    );
    assert!(
        flows.load(Ordering::Relaxed) > 0,
        "the workload never completed a flow"
    );
    assert!(side_effects > 0, "no Bash side effect ever ran");
}

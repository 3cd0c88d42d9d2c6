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
use planhost_core::{
    ApprovalAction, ApprovalStatus, EntryId, ExecutionOutcome, ExecutionState, HostTool, Mode,
    PlanState, PublicationStatus, TargetPermissionMode,
};
use planhost_protocol::{
    ApprovalInfo, DecisionKind, EndExecutionParams, ExecutionRef, OpenSessionParams, PlansFilter,
    PublicationsFilter, RequestPublicationParams, ResolvePlanParams, ResolvePublicationParams,
    SaveCheckpointParams, SessionInfo, SessionsFilter, SubmitPlanParams, TurnOutcome, methods,
};
use planhost_test_support::host::params;
use serde_json::json;

use crate::support::*;

/// One flow: open, Plan, checkpoint, submit, then leave it pending, approve and execute, or
/// publish — depending on `i`.
fn one_flow(c: &mut Client, root: &Path, round: usize, i: usize) -> Result<(), ClientError> {
    let sid = c
        .call::<methods::SessionsOpen>(OpenSessionParams {
            external_id: Some(format!("crash-{round}-{i}")),
            ..params::open(root)
        })?
        .id;
    c.call::<methods::SessionsSetMode>(params::set_mode(&sid, Mode::Plan))?;
    let turn = c.call::<methods::TurnsBegin>(params::begin(&sid))?.id;
    let branch: Vec<EntryId> = vec!["root".into(), format!("e{i}").into()];
    let markdown = format!("# Plan: crash {round} {i}\n\n1. step\n");
    c.call::<methods::CheckpointsSave>(SaveCheckpointParams {
        session_id: sid.clone(),
        branch_path: branch.clone(),
        markdown: markdown.clone(),
        expected_revision: 0,
    })?;
    let approval = c.call::<methods::PlansSubmit>(SubmitPlanParams {
        question: "ok?".into(),
        ..params::submit(
            &sid,
            &turn,
            "submit",
            &format!("crash {round} {i}"),
            &markdown,
        )
    })?;
    if i % 3 == 2 {
        let published = c.call::<methods::PublicationsRequest>(RequestPublicationParams {
            session_id: sid.clone(),
            branch_path: branch,
            overwrite_conflict: false,
        })?;
        if let Some(publication) = published.publication {
            c.call::<methods::PublicationsResolve>(ResolvePublicationParams {
                publication_id: publication.publication_id,
                action: ApprovalAction::Approve,
            })?;
        }
    }
    c.call::<methods::TurnsEnd>(params::end(&sid, &turn, TurnOutcome::Completed))?;
    if i.is_multiple_of(3) {
        return Ok(());
    }
    let approved = c.call::<methods::PlansResolve>(ResolvePlanParams {
        target_permission_mode: Some(TargetPermissionMode::Auto),
        ..params::resolve(&approval, ApprovalAction::Approve)
    })?;
    let execution = approved
        .execution_id
        .expect("an approved plan has an execution");
    let claimed = c.call::<methods::ExecutionsClaim>(ExecutionRef {
        session_id: sid.clone(),
        execution_id: execution.clone(),
    })?;
    // The side effect: one `start` and one `end` line per flow, with a pause between them
    // long enough that a command outliving its host would be seen writing `end` later.
    let exec_turn = claimed.turn.id;
    let input = json!({ "command": format!(
        "echo start-{round}-{i} >> side.txt; sleep 0.3; echo end-{round}-{i} >> side.txt"
    ) });
    let allowed = c.call::<methods::ToolsAuthorize>(params::authorize(
        &sid,
        &exec_turn,
        "side",
        "Bash",
        input.clone(),
    ))?;
    if allowed.decision == DecisionKind::Allow {
        c.call::<methods::ToolsExecute>(params::execute(
            &sid,
            &exec_turn,
            "side",
            HostTool::Bash,
            input,
        ))?;
    }
    c.call::<methods::ExecutionsEnd>(EndExecutionParams {
        session_id: sid,
        execution_id: execution,
        outcome: ExecutionOutcome::Completed,
    })?;
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

/// Every session the host has (at most 10,000).
fn all_sessions(c: &mut Conn) -> Vec<SessionInfo> {
    c.call::<methods::SessionsList>(SessionsFilter {
        include_ended: None,
        workspace_root: None,
        limit: Some(10_000),
    })
    .items
}

fn check_after_restart(env: &Env, at_kill: &AtKill, trial: &str) {
    let host = SocketHost::start(env);
    let mut c = host.connect("checker");
    assert_eq!(integrity_check(env), "ok", "{trial}: integrity_check");
    check_no_leftovers(env, at_kill, trial);
    assert_eq!(
        c.call::<methods::PlansList>(PlansFilter {
            session_id: None,
            status: Some(vec![ApprovalStatus::Pending]),
            limit: Some(10_000),
        })
        .items,
        Vec::<ApprovalInfo>::new(),
        "pending survived a restart"
    );
    for s in all_sessions(&mut c) {
        assert_ne!(s.plan_state, PlanState::AwaitingApproval, "{s:?}");
        assert_eq!(s.active_turn, None, "a turn survived a restart: {s:?}");
        assert_eq!(
            s.live_execution, None,
            "an execution survived a restart: {s:?}"
        );
    }
    let approvals = c
        .call::<methods::PlansList>(PlansFilter {
            session_id: None,
            status: None,
            limit: Some(10_000),
        })
        .items;
    for a in &approvals {
        assert!(
            !matches!(
                a.execution_state,
                Some(ExecutionState::Queued | ExecutionState::Running)
            ),
            "live execution: {a:?}"
        );
        if a.status == ApprovalStatus::Approved {
            assert!(a.execution_id.is_some(), "{a:?}");
        } else {
            assert_eq!(a.execution_id, None, "{a:?}");
        }
        // Every recorded artifact is on disk with exactly the recorded bytes.
        let bytes = fs_err::read(&a.artifact_path).expect("artifact on disk");
        assert_eq!(planhost_core::sha256_hex(&bytes), a.artifact_sha256);
    }
    let publications = c
        .call::<methods::PublicationsList>(PublicationsFilter {
            session_id: None,
            status: None,
            limit: Some(10_000),
        })
        .items;
    let mut seen = std::collections::HashSet::new();
    for p in &publications {
        assert!(
            !matches!(
                p.status,
                PublicationStatus::Pending | PublicationStatus::Approved
            ),
            "open publication: {p:?}"
        );
        let path = &p.relative_path;
        if p.status == PublicationStatus::Completed && seen.insert(path.clone()) {
            let bytes = fs_err::read(env.workspace().join(path)).expect("published file on disk");
            assert_eq!(planhost_core::sha256_hex(&bytes), p.sha256, "{p:?}");
        }
    }
    // Nothing is replayed: no turn starts by itself after the restart.
    std::thread::sleep(Duration::from_millis(200));
    for s in all_sessions(&mut c) {
        assert_eq!(s.active_turn, None, "{s:?}");
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

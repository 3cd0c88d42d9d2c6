//! An app that embeds planhost gets the whole host from `Host::start`: the trust check, the
//! one-host lock, the sweep of what a dead host left running, the startup fence, and the
//! transports' framing and limits. A test binary of its own: the sweep looks at every process
//! of this user, and the host marks itself as the parent of runs.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::wildcard_enum_match_arm
)]

use std::os::unix::fs::PermissionsExt as _;
use std::sync::Arc;
use std::time::Duration;

use planhost_core::{ApprovalStatus, Interactivity, ManualClock, Mode, Role, Timestamp};
use planhost_protocol::{
    BeginTurnParams, InitializeParams, OpenSessionParams, PROTOCOL_VERSION, ProposalRef,
    SetModeParams, SubmitPlanParams, methods,
};
use planhost_service::Peer;
use planhost_service::host::{Host, HostConfig, HostError, Limits, LockError};
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};

/// 2025-11-30 00:00:00 UTC.
const T0: Timestamp = Timestamp(1_764_460_800_000);

fn config(dir: &std::path::Path) -> HostConfig {
    let mut config = HostConfig::new(dir);
    config.clock = Some(Arc::new(ManualClock::new(T0)));
    config
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

fn hello() -> InitializeParams {
    InitializeParams {
        protocol_version: PROTOCOL_VERSION,
        client_name: "embedder".into(),
        client_version: None,
        roles: vec![Role::Agent, Role::Approver, Role::Observer],
        tool_activity: false,
        events: planhost_protocol::EventScope::All,
        agent_process: None,
    }
}

/// A process that looks like a run of a host that died: its marker names a pid no process can
/// have.
#[cfg(target_os = "linux")]
fn dead_hosts_run() -> std::process::Child {
    let child = std::process::Command::new("sleep")
        .arg("60")
        .env(planhost_exec::RUN_MARKER_VAR, "2147483646.1-embed-test")
        .spawn()
        .unwrap();
    // Until the child has exec'd, its environment is still this test's, without the marker:
    // a sweep that ran now would not know it for a run (on a busy machine it did).
    let environ = format!("/proc/{}/environ", child.id());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !fs_err::read(&environ)
        .is_ok_and(|env| env.windows(RUN_MARKER.len()).any(|w| w == RUN_MARKER))
    {
        assert!(std::time::Instant::now() < deadline, "sleep never started");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    child
}

/// The marker of the dead host's run, as it appears in the run's environment.
const RUN_MARKER: &[u8] = b"2147483646.1-embed-test";

/// Every host's start ends what dead hosts left running, on the whole machine: the tests of
/// this file start hosts one at a time, so that the sweep test's planted run is its own host's
/// to find (another test's start, in parallel, took it first once).
static STARTS: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn starting() -> std::sync::MutexGuard<'static, ()> {
    STARTS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[test]
fn a_library_host_sweeps_a_dead_hosts_runs_takes_the_lock_and_fences_what_was_pending() {
    let state = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let start = starting();
    #[cfg(target_os = "linux")]
    let mut leftover = dead_hosts_run();

    let host = Host::start(config(state.path())).unwrap();
    drop(start);
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::process::ExitStatusExt as _;
        assert!(
            host.report().leftovers.processes >= 1,
            "the dead host's run was ended before the fence: {:?}",
            host.report().leftovers
        );
        let status = leftover.wait().unwrap();
        assert_eq!(status.signal(), Some(9), "killed, not left running");
    }
    assert!(!host.report().watchdog, "none was configured");

    // A second host on the same directory is refused, naming the holder.
    match Host::start(config(state.path())) {
        Err(HostError::Lock(LockError::Held { pid, .. })) => {
            assert_eq!(pid, std::process::id().to_string());
        }
        other => panic!("a second host must be refused: {other:?}"),
    }

    // A pending approval, through the in-process client.
    let rt = runtime();
    let proposal = rt.block_on(async {
        let (conn, _events, _) = host.service().connect(&hello(), Peer::Embedded).unwrap();
        let session = plan_session(&conn, workspace.path()).await;
        let turn = conn
            .call::<methods::TurnsBegin>(BeginTurnParams {
                session_id: session.id.clone(),
                origin: None,
            })
            .await
            .unwrap();
        let approval = conn
            .call::<methods::PlansSubmit>(SubmitPlanParams {
                session_id: session.id.clone(),
                turn_id: turn.id,
                tool_call_id: "call-1".into(),
                batch_index: 0,
                batch_size: 1,
                title: "Embedded".into(),
                markdown: "# Plan\n\n1. Nothing.\n".into(),
                question: "Go?".into(),
                branch_path: None,
            })
            .await
            .unwrap();
        assert_eq!(approval.status, ApprovalStatus::Pending);
        conn.close();
        approval.proposal_id
    });
    host.shutdown();

    // The next host's fence interrupts it: never replayed, never approvable.
    let host = {
        let _start = starting();
        Host::start(config(state.path())).unwrap()
    };
    assert_eq!(host.report().fence.interrupted_approvals.len(), 1);
    rt.block_on(async {
        let (conn, _events, _) = host.service().connect(&hello(), Peer::Embedded).unwrap();
        let detail = conn
            .call::<methods::PlansGet>(ProposalRef {
                proposal_id: proposal,
            })
            .await
            .unwrap();
        assert_eq!(detail.approval.status, ApprovalStatus::Interrupted);
        conn.close();
    });
    host.shutdown();
}

#[test]
fn a_state_directory_others_may_write_is_refused_before_anything_is_opened() {
    let state = tempfile::tempdir().unwrap();
    fs_err::set_permissions(state.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    match Host::start(config(state.path())) {
        Err(HostError::Untrusted(why)) => assert!(why.contains("writable by others"), "{why}"),
        other => panic!("must be refused: {other:?}"),
    }
    assert!(
        !state.path().join("planhost.sqlite").exists(),
        "no database is created in an untrusted directory"
    );
}

#[test]
fn a_stream_is_served_with_the_sockets_framing_and_the_connection_limit() {
    let state = tempfile::tempdir().unwrap();
    let mut config = config(state.path());
    config.limits = Limits {
        max_connections: 1,
        ..Limits::default()
    };
    let host = {
        let _start = starting();
        Arc::new(Host::start(config).unwrap())
    };
    let rt = runtime();
    rt.block_on(async {
        let (ours, theirs) = tokio::io::duplex(64 * 1024);
        let served = {
            let host = Arc::clone(&host);
            tokio::spawn(async move { host.serve_stream(theirs, Peer::Embedded).await })
        };
        let (read, mut write) = tokio::io::split(ours);
        let mut lines = BufReader::new(read).lines();
        let hello = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": PROTOCOL_VERSION, "clientName": "t", "roles": ["observer"]}});
        write
            .write_all(format!("{hello}\nnot json\n{{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"app.health\"}}\n").as_bytes())
            .await
            .unwrap();
        let mut next = async || -> serde_json::Value {
            let line = tokio::time::timeout(Duration::from_secs(10), lines.next_line())
                .await
                .unwrap()
                .unwrap()
                .unwrap();
            serde_json::from_str(&line).unwrap()
        };
        assert_eq!(next().await["id"], 1);
        assert_eq!(next().await["error"]["data"]["code"], "PARSE_ERROR");
        assert_eq!(next().await["result"]["status"], "ok");

        // The one connection the limit allows is taken: the next is told and closed.
        let (other, theirs) = tokio::io::duplex(4096);
        host.serve_stream(theirs, Peer::Embedded).await;
        let mut refused = BufReader::new(other).lines();
        let line = refused.next_line().await.unwrap().unwrap();
        let refusal: serde_json::Value = serde_json::from_str(&line).unwrap();
        assert_eq!(refusal["error"]["data"]["code"], "TOO_MANY_CONNECTIONS");
        assert!(refused.next_line().await.unwrap().is_none(), "closed");

        write.shutdown().await.unwrap();
        tokio::time::timeout(Duration::from_secs(10), served)
            .await
            .unwrap()
            .unwrap();
    });
    Arc::into_inner(host).unwrap().shutdown();
}

/// What an embedder's stream is served with: the deadline for `initialize` (a stream that
/// says nothing is told and closed, one that initialized may idle past it), and the bound per
/// process for a stream it names a process's.
#[test]
fn a_stream_that_never_initializes_is_closed_an_idle_one_is_not_and_a_process_is_bounded() {
    let state = tempfile::tempdir().unwrap();
    let mut config = config(state.path());
    config.limits = Limits {
        initialize_timeout: Duration::from_millis(300),
        max_connections_per_process: 1,
        ..Limits::default()
    };
    let host = {
        let _start = starting();
        Arc::new(Host::start(config).unwrap())
    };
    let serve = |peer: Peer| {
        let (ours, theirs) = tokio::io::duplex(64 * 1024);
        let host = Arc::clone(&host);
        let served = tokio::spawn(async move { host.serve_stream(theirs, peer).await });
        let (read, write) = tokio::io::split(ours);
        (BufReader::new(read).lines(), write, served)
    };
    let next = async |lines: &mut tokio::io::Lines<BufReader<_>>| -> Option<serde_json::Value> {
        let line = tokio::time::timeout(Duration::from_secs(10), lines.next_line())
            .await
            .expect("an answer or the end within 10 s")
            .unwrap()?;
        Some(serde_json::from_str(&line).unwrap())
    };
    let hello = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": PROTOCOL_VERSION, "clientName": "t", "roles": ["observer"]}});
    let health = r#"{"jsonrpc":"2.0","id":2,"method":"app.health"}"#;
    let me = Peer::Process(Some(i32::try_from(std::process::id()).unwrap()));
    runtime().block_on(async {
        // Initialized, then idle for three deadlines: still served.
        let (mut idle, mut idle_write, _idle) = serve(me);
        idle_write
            .write_all(format!("{hello}\n").as_bytes())
            .await
            .unwrap();
        assert_eq!(next(&mut idle).await.unwrap()["id"], 1);
        tokio::time::sleep(Duration::from_millis(900)).await;
        idle_write
            .write_all(format!("{health}\n").as_bytes())
            .await
            .unwrap();
        assert_eq!(next(&mut idle).await.unwrap()["result"]["status"], "ok");

        // The same process again, past its bound of one: told, closed; the first goes on.
        let (mut second, _second_write, served) = serve(me);
        let refusal = next(&mut second).await.unwrap();
        assert_eq!(
            refusal["error"]["data"]["code"],
            "TOO_MANY_PROCESS_CONNECTIONS"
        );
        let message = refusal["error"]["message"].as_str().unwrap();
        assert!(
            message.contains(&format!("pid {}", std::process::id())),
            "{message}"
        );
        assert!(next(&mut second).await.is_none(), "closed");
        served.await.unwrap();

        // Never initialized (here: only a notification, which needs no answer): told, closed.
        let (mut silent, mut silent_write, served) = serve(Peer::Embedded);
        silent_write
            .write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"x\"}\n")
            .await
            .unwrap();
        let told = next(&mut silent).await.unwrap();
        assert_eq!(
            told["error"]["data"]["code"], "INITIALIZE_TIMEOUT",
            "{told}"
        );
        assert!(next(&mut silent).await.is_none(), "closed");
        tokio::time::timeout(Duration::from_secs(10), served)
            .await
            .unwrap()
            .unwrap();

        idle_write
            .write_all(format!("{health}\n").as_bytes())
            .await
            .unwrap();
        assert_eq!(next(&mut idle).await.unwrap()["result"]["status"], "ok");
        drop(idle_write);
    });
    Arc::into_inner(host).unwrap().shutdown();
}

/// An interactive session on `workspace`, in Plan.
async fn plan_session(
    conn: &planhost_service::Connection,
    workspace: &std::path::Path,
) -> planhost_protocol::SessionInfo {
    let session = conn
        .call::<methods::SessionsOpen>(OpenSessionParams {
            agent: None,
            workspace_root: workspace.display().to_string(),
            external_id: None,
            interactivity: Interactivity::Interactive,
            persistence: None,
        })
        .await
        .unwrap();
    conn.call::<methods::SessionsSetMode>(SetModeParams {
        session_id: session.id.clone(),
        mode: Mode::Plan,
    })
    .await
    .unwrap();
    session
}

/// Submits `markdown` in a new turn of `session` and rejects it, so the next can follow.
async fn submit_and_reject(
    conn: &planhost_service::Connection,
    session: &planhost_core::SessionId,
    call: &str,
    markdown: String,
) -> planhost_protocol::ApprovalInfo {
    let turn = conn
        .call::<methods::TurnsBegin>(BeginTurnParams {
            session_id: session.clone(),
            origin: None,
        })
        .await
        .unwrap();
    let a = conn
        .call::<methods::PlansSubmit>(SubmitPlanParams {
            session_id: session.clone(),
            turn_id: turn.id.clone(),
            tool_call_id: call.into(),
            batch_index: 0,
            batch_size: 1,
            title: "Big".into(),
            markdown,
            question: "Go?".into(),
            branch_path: None,
        })
        .await
        .unwrap();
    conn.call::<methods::PlansResolve>(planhost_protocol::ResolvePlanParams {
        proposal_id: a.proposal_id.clone(),
        session_id: session.clone(),
        turn_id: turn.id.clone(),
        tool_call_id: call.into(),
        version: None,
        artifact_sha256: None,
        action: planhost_core::ApprovalAction::Reject,
        target_permission_mode: None,
        feedback: None,
    })
    .await
    .unwrap();
    conn.call::<methods::TurnsEnd>(planhost_protocol::EndTurnParams {
        session_id: session.clone(),
        turn_id: turn.id,
        outcome: planhost_protocol::TurnOutcome::Completed,
    })
    .await
    .unwrap();
    a
}

#[test]
fn what_changed_between_two_plans_is_bounded_whatever_the_agent_submits() {
    use planhost_protocol::{ChangeBaseKind, DiffStatus, DiffTag};
    let state = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let host = {
        let _start = starting();
        Host::start(config(state.path())).unwrap()
    };
    let rt = runtime();
    rt.block_on(async {
        let (conn, _events, _) = host.service().connect(&hello(), Peer::Embedded).unwrap();
        let session = plan_session(&conn, workspace.path()).await;
        // The attack: two plans at the size limit that share no line (quadratic for a plain
        // Myers diff: 44 s per page load at 128 KiB before).
        let big = |tag: &str| {
            let mut text = String::new();
            let mut i = 0;
            while text.len() + 64 < planhost_core::MAX_PLAN_BYTES {
                text.push_str(&format!(
                    "{tag} line {i:08} of a plan that shares nothing\n"
                ));
                i += 1;
            }
            text
        };
        let first = submit_and_reject(&conn, &session.id, "c1", big("a")).await;
        let second = submit_and_reject(&conn, &session.id, "c2", big("b")).await;
        // While such a diff is made, the host answers everyone else (it runs on its own
        // thread): a health check sent after the diff request is answered before it.
        let order = std::sync::Mutex::new(Vec::new());
        let (changes, health) = tokio::join!(
            async {
                let changes = conn
                    .call::<methods::PlansChanges>(ProposalRef {
                        proposal_id: second.proposal_id.clone(),
                    })
                    .await;
                order.lock().unwrap().push("changes");
                changes
            },
            async {
                tokio::task::yield_now().await;
                let health = conn
                    .call::<methods::AppHealth>(planhost_protocol::Empty {})
                    .await;
                order.lock().unwrap().push("health");
                health
            }
        );
        assert!(health.is_ok());
        assert_eq!(
            *order.lock().unwrap(),
            ["health", "changes"],
            "the host answered while it made the diff"
        );
        let changes = changes.unwrap();
        assert_eq!(changes.bases.len(), 1);
        let base = &changes.bases[0];
        assert_eq!(base.kind, ChangeBaseKind::Previous);
        assert_eq!(base.proposal_id.as_ref(), Some(&first.proposal_id));
        assert_eq!(base.diff.status, DiffStatus::TooLarge, "not shown in full");
        assert!(base.diff.hunks.is_empty());

        // A small change to a plan is one hunk with its line numbers.
        let before: String = (1..=150).map(|i| format!("step {i}\n")).collect();
        let after = before.replace("step 70\n", "step seventy\n");
        submit_and_reject(&conn, &session.id, "c3", before).await;
        let third = submit_and_reject(&conn, &session.id, "c4", after).await;
        let changes = conn
            .call::<methods::PlansChanges>(ProposalRef {
                proposal_id: third.proposal_id,
            })
            .await
            .unwrap();
        let diff = &changes.bases[0].diff;
        assert_eq!(diff.status, DiffStatus::Changed);
        assert_eq!((diff.inserted, diff.deleted, diff.hunks.len()), (1, 1, 1));
        let hunk = &diff.hunks[0];
        assert_eq!((hunk.old_start, hunk.new_start), (67, 67));
        assert!(
            hunk.lines
                .iter()
                .any(|l| l.tag == DiffTag::Insert && l.text == "step seventy")
        );
        conn.close();
    });
    host.shutdown();
}

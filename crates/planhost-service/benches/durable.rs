//! Durable-core benchmarks (issue #2), each beside its floor measured in the same run:
//!
//! - the approve transaction vs a bare SQLite `synchronous=FULL` commit (target ≤ 2×);
//! - the startup fence over 100,000 terminal and 1,000 pending rows (target < 50 ms);
//! - SubmitPlan of a 1 MiB plan: artifact write + fsync + row.
//!
//! The service's engine is private, so each figure is taken at the public layer that holds the
//! measured thing: the approve transaction and the open + fence on [`planhost_store::Store`]
//! (what the engine's resolve commits and what its open runs; the same calls as before), and
//! SubmitPlan through [`Service`] and a [`planhost_service::Connection`] (the engine's own
//! SubmitPlan, in process, no JSON). Two extra lines time the whole paths through the service:
//! approve (role rule, actor, artifact check, transaction) and startup (open, fence, publication
//! reconciliation, audit writer, state thread).
//!
//! Run: `cargo bench -p planhost-service --bench durable`. Figures go to docs/benchmarks.md.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use planhost_core::{
    ApprovalAction, ApprovalStatus, BatchPosition, Clock, Interactivity, Mode, ResolveRequest,
    Resolver, Role, SubmitPlanInput, TurnOrigin,
};
use planhost_protocol::{
    ApprovalInfo, BeginTurnParams, EndTurnParams, InitializeParams, OpenSessionParams,
    PROTOCOL_VERSION, ResolvePlanParams, SetModeParams, SubmitPlanParams, TurnOutcome, methods,
};
use planhost_service::new_id;
use planhost_service::{Connection, Notifications, Service, ServiceConfig, SystemClock};
use planhost_store::{ApprovalRecord, ArtifactRef, OpenSession, Store, SubmitContext};
use rusqlite::Connection as Sqlite;

struct Stats {
    p50: Duration,
    p99: Duration,
    mean: Duration,
}

fn stats(mut samples: Vec<Duration>) -> Stats {
    samples.sort();
    let n = samples.len();
    let mean = samples.iter().sum::<Duration>() / n as u32;
    Stats {
        p50: samples[n / 2],
        p99: samples[(n * 99 / 100).min(n - 1)],
        mean,
    }
}

fn fmt(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1e3)
}

fn bare_commit(dir: &Path, n: usize) -> Vec<Duration> {
    let conn = Sqlite::open(dir.join("floor.sqlite")).unwrap();
    conn.pragma_update(None, "journal_mode", "WAL").unwrap();
    conn.pragma_update(None, "synchronous", "FULL").unwrap();
    conn.execute_batch("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)")
        .unwrap();
    (0..n)
        .map(|i| {
            let start = Instant::now();
            conn.execute_batch("BEGIN IMMEDIATE").unwrap();
            conn.execute("INSERT INTO t (v) VALUES (?1)", [format!("row {i}")])
                .unwrap();
            conn.execute_batch("COMMIT").unwrap();
            start.elapsed()
        })
        .collect()
}

fn input(markdown: &str) -> SubmitPlanInput {
    SubmitPlanInput {
        title: "Bench".into(),
        markdown: markdown.into(),
        question: "?".into(),
    }
}

/// SubmitPlan on the store, as the engine does it: rules, the artifact (create-new + fsync),
/// then the row.
fn submit(
    store: &mut Store,
    root: &str,
    session: &planhost_core::SessionId,
    markdown: &str,
) -> ApprovalRecord {
    let turn = store
        .begin_turn(session, TurnOrigin::User, None, &new_id().into())
        .unwrap();
    let ctx = SubmitContext {
        session_id: session.clone(),
        turn_id: turn.id.clone(),
        tool_call_id: "call".into(),
        batch: BatchPosition { index: 0, size: 1 },
    };
    let input = input(markdown);
    store.check_submit(&ctx, &input).unwrap();
    let proposal_id = planhost_core::ProposalId::from(new_id());
    let file_name = planhost_core::artifact_file_name(&input.title, &proposal_id);
    let written = planhost_fs::write_plan_artifact(
        Path::new(root),
        planhost_fs::PlanDirs::PI,
        &file_name,
        markdown.as_bytes(),
    )
    .unwrap();
    let artifact = ArtifactRef {
        relative_path: written.relative_path,
        sha256: written.sha256,
        size_bytes: written.size_bytes,
    };
    let approval = store
        .insert_approval(&ctx, &input, &artifact, &proposal_id, None)
        .unwrap();
    store.end_turn(session, &turn.id).unwrap();
    approval
}

fn request(a: &ApprovalRecord, action: ApprovalAction) -> ResolveRequest {
    ResolveRequest {
        proposal_id: a.proposal_id.clone(),
        session_id: a.session_id.clone(),
        turn_id: a.turn_id.clone(),
        tool_call_id: a.tool_call_id.clone(),
        version: Some(a.version),
        artifact_sha256: Some(a.artifact_sha256.clone()),
        action,
        target_permission_mode: None,
    }
}

fn approve_bench(dir: &Path, workspace: &Path, n: usize) -> Vec<Duration> {
    let mut store = Store::open(
        &dir.join("approve.sqlite"),
        Arc::new(SystemClock),
        Arc::new(planhost_service::UuidIds),
    )
    .unwrap()
    .store;
    let root = workspace.canonicalize().unwrap().display().to_string();
    let by = Resolver {
        client: "bench".into(),
        roles: vec![Role::Approver],
        via: None,
    };
    let mut samples = Vec::with_capacity(n);
    for _ in 0..n {
        let open = OpenSession {
            workspace_root: root.clone(),
            external_id: None,
            interactivity: Interactivity::Interactive,
            agent: None,
        };
        let s = store.open_session(&open, &new_id().into()).unwrap().id;
        store.set_mode(&s, Mode::Plan).unwrap();
        let a = submit(&mut store, &root, &s, "# Plan\n1. bench\n");
        let approve = request(&a, ApprovalAction::Approve);
        let start = Instant::now();
        store
            .resolve(&approve, None, &new_id().into(), &by)
            .unwrap();
        samples.push(start.elapsed());
    }
    samples
}

fn service(db: &Path, state_dir: &Path) -> Service {
    let config = ServiceConfig {
        db_path: db.to_owned(),
        ..ServiceConfig::new(state_dir)
    };
    Service::start(config).unwrap().service
}

fn connect(service: &Service) -> (Connection, Notifications) {
    let hello = InitializeParams {
        protocol_version: PROTOCOL_VERSION,
        client_name: "bench".into(),
        client_version: None,
        roles: vec![Role::Agent, Role::Approver],
        tool_activity: false,
        events: planhost_protocol::EventScope::All,
        agent_process: None,
    };
    let (conn, notes, _) = service
        .connect(&hello, planhost_service::Peer::Embedded)
        .unwrap();
    (conn, notes)
}

/// A session of `workspace` in Plan mode.
async fn plan_session(conn: &Connection, workspace: &Path) -> planhost_core::SessionId {
    let session = conn
        .call::<methods::SessionsOpen>(OpenSessionParams {
            workspace_root: workspace.display().to_string(),
            external_id: None,
            interactivity: Interactivity::Interactive,
            persistence: None,
            agent: None,
        })
        .await
        .unwrap();
    conn.call::<methods::SessionsSetMode>(SetModeParams {
        session_id: session.id.clone(),
        mode: Mode::Plan,
    })
    .await
    .unwrap();
    session.id
}

/// `plans.submit` in a turn of its own; returns the approval and how long the submit took.
async fn submit_via(
    conn: &Connection,
    session: &planhost_core::SessionId,
    markdown: &str,
) -> (ApprovalInfo, Duration) {
    let turn = conn
        .call::<methods::TurnsBegin>(BeginTurnParams {
            session_id: session.clone(),
            origin: None,
        })
        .await
        .unwrap();
    let params = SubmitPlanParams {
        session_id: session.clone(),
        turn_id: turn.id.clone(),
        tool_call_id: "call".into(),
        batch_index: 0,
        batch_size: 1,
        title: "Bench".into(),
        markdown: markdown.into(),
        question: "?".into(),
        branch_path: None,
    };
    let start = Instant::now();
    let approval = conn.call::<methods::PlansSubmit>(params).await.unwrap();
    let took = start.elapsed();
    conn.call::<methods::TurnsEnd>(EndTurnParams {
        session_id: session.clone(),
        turn_id: turn.id,
        outcome: TurnOutcome::Completed,
    })
    .await
    .unwrap();
    (approval, took)
}

fn resolve_params(a: &ApprovalInfo, action: ApprovalAction) -> ResolvePlanParams {
    ResolvePlanParams {
        proposal_id: a.proposal_id.clone(),
        session_id: a.session_id.clone(),
        turn_id: a.turn_id.clone(),
        tool_call_id: a.tool_call_id.clone(),
        version: Some(a.version),
        artifact_sha256: Some(a.artifact_sha256.clone()),
        action,
        target_permission_mode: None,
        feedback: None,
    }
}

async fn approve_service_bench(dir: &Path, workspace: &Path, n: usize) -> Vec<Duration> {
    let service = service(&dir.join("approve-service.sqlite"), dir);
    let (conn, mut notes) = connect(&service);
    let mut samples = Vec::with_capacity(n);
    for _ in 0..n {
        let s = plan_session(&conn, workspace).await;
        let (a, _) = submit_via(&conn, &s, "# Plan\n1. bench\n").await;
        let approve = resolve_params(&a, ApprovalAction::Approve);
        let start = Instant::now();
        let approved = conn.call::<methods::PlansResolve>(approve).await.unwrap();
        samples.push(start.elapsed());
        assert_eq!(approved.status, ApprovalStatus::Approved);
        while notes.try_recv().is_some() {}
    }
    conn.close();
    service.shutdown();
    samples
}

/// A database at `dir/name` holding `terminal` finished and `pending` pending approvals.
fn seeded(dir: &Path, name: &str, terminal: usize, pending: usize) -> std::path::PathBuf {
    let db = dir.join(name);
    let clock: Arc<dyn Clock> = Arc::new(SystemClock);
    drop(Store::open(&db, clock.clone(), Arc::new(planhost_service::UuidIds)).unwrap());
    let conn = Sqlite::open(&db).unwrap();
    conn.execute_batch("BEGIN").unwrap();
    let now = clock.now().0;
    let statuses = ["approved", "rejected", "expired", "interrupted"];
    for i in 0..(terminal + pending) {
        let session = format!("s{i}");
        conn.execute(
            "INSERT INTO sessions (id, workspace_root, interactivity, mode, plan_state, permission_mode, \
             created_at, updated_at) VALUES (?1, '/w', 'interactive', 'plan', ?2, 'ask', ?3, ?3)",
            rusqlite::params![session, if i < terminal { "stopped" } else { "awaiting_approval" }, now],
        )
        .unwrap();
        conn.execute(
            "INSERT INTO turns (id, session_id, origin, state, started_at) VALUES (?1, ?2, 'user', 'completed', ?3)",
            rusqlite::params![format!("t{i}"), session, now],
        )
        .unwrap();
        let status = if i < terminal {
            statuses[i % 4]
        } else {
            "pending"
        };
        let (execution_id, execution_state) = if status == "approved" {
            (Some(format!("e{i}")), Some("completed"))
        } else {
            (None, None)
        };
        conn.execute(
            "INSERT INTO plan_approvals (request_id, session_id, turn_id, tool_call_id, plan_json, title, \
             question, status, created_at, updated_at, expires_at, version, artifact_relative_path, \
             artifact_sha256, artifact_size_bytes, execution_id, execution_state, \
             target_permission_mode) VALUES (?1, ?2, ?3, 'c', '{}', 't', 'q', ?4, ?5, ?5, ?6, 1, \
             '.pi/plan/x.md', 'h', 1, ?7, ?8, ?9)",
            rusqlite::params![
                format!("p{i}"),
                session,
                format!("t{i}"),
                status,
                now,
                now + 1_800_000,
                execution_id,
                execution_state,
                (status == "approved").then_some("ask"),
            ],
        )
        .unwrap();
    }
    conn.execute_batch("COMMIT").unwrap();
    drop(conn);
    db
}

/// `Store::open` + the startup fence (the figure docs/benchmarks.md reports).
fn fence_bench(dir: &Path, terminal: usize, pending: usize) -> Duration {
    let db = seeded(dir, "fence.sqlite", terminal, pending);
    let start = Instant::now();
    let opened = Store::open(
        &db,
        Arc::new(SystemClock),
        Arc::new(planhost_service::UuidIds),
    )
    .unwrap();
    let took = start.elapsed();
    assert_eq!(opened.fence.interrupted_approvals.len(), pending);
    took
}

/// The whole startup before a service serves: the same open and fence, publication
/// reconciliation, the audit writer and the state thread.
fn startup_bench(dir: &Path, terminal: usize, pending: usize) -> Duration {
    let db = seeded(dir, "startup.sqlite", terminal, pending);
    let start = Instant::now();
    let started = Service::start(ServiceConfig {
        db_path: db,
        ..ServiceConfig::new(dir)
    })
    .unwrap();
    let took = start.elapsed();
    assert_eq!(started.fence.interrupted_approvals.len(), pending);
    started.service.shutdown();
    took
}

async fn submit_bench(dir: &Path, workspace: &Path, plan: &str) -> Vec<Duration> {
    let service = service(&dir.join("submit.sqlite"), dir);
    let (conn, mut notes) = connect(&service);
    let s = plan_session(&conn, workspace).await;
    let mut samples = Vec::new();
    for _ in 0..20 {
        let (a, took) = submit_via(&conn, &s, plan).await;
        samples.push(took);
        conn.call::<methods::PlansResolve>(resolve_params(&a, ApprovalAction::Reject))
            .await
            .unwrap();
        while notes.try_recv().is_some() {}
    }
    conn.close();
    service.shutdown();
    samples
}

fn main() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    println!(
        "durable-core benchmarks (state dir {})",
        dir.path().display()
    );

    let n = 300;
    let floor = stats(bare_commit(dir.path(), n));
    let approve = stats(approve_bench(dir.path(), workspace.path(), n));
    println!(
        "bare synchronous=FULL commit      p50 {}  p99 {}  mean {}",
        fmt(floor.p50),
        fmt(floor.p99),
        fmt(floor.mean)
    );
    println!(
        "approve transaction               p50 {}  p99 {}  mean {}",
        fmt(approve.p50),
        fmt(approve.p99),
        fmt(approve.mean)
    );
    println!(
        "approve / floor                   p50 {:.2}x  mean {:.2}x  (target <= 2x)",
        approve.p50.as_secs_f64() / floor.p50.as_secs_f64(),
        approve.mean.as_secs_f64() / floor.mean.as_secs_f64()
    );
    let via = stats(runtime.block_on(approve_service_bench(dir.path(), workspace.path(), n)));
    println!(
        "approve via the service           p50 {}  p99 {}  mean {}  (role rule, actor, artifact check, transaction)",
        fmt(via.p50),
        fmt(via.p99),
        fmt(via.mean)
    );

    let fence: Vec<Duration> = (0..3)
        .map(|i| {
            let d = dir.path().join(format!("fence{i}"));
            fs_err::create_dir(&d).unwrap();
            fence_bench(&d, 100_000, 1_000)
        })
        .collect();
    let fence = stats(fence);
    println!(
        "open + fence, 100k terminal + 1k pending  median of 3: {}  (target < 50 ms)",
        fmt(fence.p50)
    );
    let startup: Vec<Duration> = (0..3)
        .map(|i| {
            let d = dir.path().join(format!("startup{i}"));
            fs_err::create_dir(&d).unwrap();
            startup_bench(&d, 100_000, 1_000)
        })
        .collect();
    println!(
        "Service::start, same rows                 median of 3: {}  (+ reconcile, audit writer, state thread)",
        fmt(stats(startup).p50)
    );

    let plan = "- a line of a large plan, forty-odd bytes\n".repeat(1024 * 1024 / 42);
    let submit = stats(runtime.block_on(submit_bench(dir.path(), workspace.path(), &plan)));
    println!(
        "SubmitPlan 1 MiB (write+fsync+row) p50 {}  p99 {}  ({} bytes)",
        fmt(submit.p50),
        fmt(submit.p99),
        plan.len()
    );
}

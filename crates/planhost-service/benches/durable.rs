//! Durable-core benchmarks (issue #2), each beside its floor measured in the same run:
//!
//! - the approve transaction vs a bare SQLite `synchronous=FULL` commit (target ≤ 2×);
//! - the startup fence over 100,000 terminal and 1,000 pending rows (target < 50 ms);
//! - SubmitPlan of a 1 MiB plan: artifact write + fsync + row.
//!
//! Run: `cargo bench -p planhost-host --bench durable`. Figures go to docs/benchmarks.md.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use planhost_core::{
    ApprovalAction, BatchPosition, Clock, Interactivity, Mode, ResolveRequest, SubmitPlanInput,
    Timestamp, TurnOrigin,
};
use planhost_host::Host;
use planhost_store::{ApprovalRecord, SubmitContext};
use rusqlite::Connection;

#[derive(Debug)]
struct WallClock;

impl Clock for WallClock {
    fn now(&self) -> Timestamp {
        let d = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap();
        Timestamp(d.as_millis() as i64)
    }
}

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
    let conn = Connection::open(dir.join("floor.sqlite")).unwrap();
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

fn submit(host: &mut Host, session: &str, markdown: &str) -> (ApprovalRecord, Duration) {
    let turn = host.begin_turn(session, TurnOrigin::User, None).unwrap();
    let ctx = SubmitContext {
        session_id: session.into(),
        turn_id: turn.id.clone(),
        tool_call_id: "call".into(),
        batch: BatchPosition { index: 0, size: 1 },
    };
    let input = SubmitPlanInput {
        title: "Bench".into(),
        markdown: markdown.into(),
        question: "?".into(),
    };
    let start = Instant::now();
    let approval = host.submit_plan(&ctx, &input).unwrap();
    let took = start.elapsed();
    host.store().end_turn(session, &turn.id).unwrap();
    (approval, took)
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
    let mut host = Host::open(&dir.join("approve.sqlite"), Arc::new(WallClock))
        .unwrap()
        .host;
    let mut samples = Vec::with_capacity(n);
    for _ in 0..n {
        let s = host
            .open_session(workspace, None, Interactivity::Interactive)
            .unwrap()
            .id;
        host.store().set_mode(&s, Mode::Plan).unwrap();
        let (a, _) = submit(&mut host, &s, "# Plan\n1. bench\n");
        let start = Instant::now();
        host.resolve(&request(&a, ApprovalAction::Approve), None)
            .unwrap();
        samples.push(start.elapsed());
    }
    samples
}

fn fence_bench(dir: &Path, terminal: usize, pending: usize) -> Duration {
    let db = dir.join("fence.sqlite");
    let clock: Arc<dyn Clock> = Arc::new(WallClock);
    drop(Host::open(&db, clock.clone()).unwrap());
    let conn = Connection::open(&db).unwrap();
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
    let start = Instant::now();
    let startup = Host::open(&db, clock).unwrap();
    let took = start.elapsed();
    assert_eq!(startup.fence.interrupted_approvals.len(), pending);
    took
}

fn main() {
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

    let fence: Vec<Duration> = (0..3)
        .map(|i| {
            let d = dir.path().join(format!("fence{i}"));
            std::fs::create_dir(&d).unwrap();
            fence_bench(&d, 100_000, 1_000)
        })
        .collect();
    let fence = stats(fence);
    println!(
        "open + fence, 100k terminal + 1k pending  median of 3: {}  (target < 50 ms)",
        fmt(fence.p50)
    );

    let mut host = Host::open(&dir.path().join("submit.sqlite"), Arc::new(WallClock))
        .unwrap()
        .host;
    let s = host
        .open_session(workspace.path(), None, Interactivity::Interactive)
        .unwrap()
        .id;
    host.store().set_mode(&s, Mode::Plan).unwrap();
    let plan = "- a line of a large plan, forty-odd bytes\n".repeat(1024 * 1024 / 42);
    let mut samples = Vec::new();
    for _ in 0..20 {
        let (a, took) = submit(&mut host, &s, &plan);
        samples.push(took);
        host.resolve(&request(&a, ApprovalAction::Reject), None)
            .unwrap();
    }
    let submit = stats(samples);
    println!(
        "SubmitPlan 1 MiB (write+fsync+row) p50 {}  p99 {}  ({} bytes)",
        fmt(submit.p50),
        fmt(submit.p99),
        plan.len()
    );
}

//! Seed 004's storage benchmark reproduced on planhost (issue #5): 50 KiB plans, 1 / 5 / 10
//! revisions, three transitions per revision. Reports bytes stored and bytes projected per model
//! call, beside the same figures for seed 004's earlier approach of storing the full body with
//! every state snapshot (computed the same way: the bytes each approach persists).
//!
//! The service's engine is private; the figures are the store's (the bytes it persists, through
//! [`Store`] directly) and the projection the engine injects (`planhost_core::projection` of
//! the branch's latest checkpoint, as `checkpoints.projection` builds it).
//!
//! Run: `cargo bench -p planhost-service --bench plans`. Figures go to docs/benchmarks.md.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use std::sync::Arc;

use planhost_core::{CheckpointRef, HandoffPhase, Interactivity, ManualClock, Mode, Timestamp};
use planhost_service::new_id;
use planhost_store::{CheckpointSource, HandoffRequest, OpenSession, Store};

const PLAN_BYTES: usize = 50 * 1024;
const TRANSITIONS_PER_REVISION: usize = 3;

/// A 50 KiB plan of numbered steps, deterministic, with prose varied enough that compression
/// does not flatter the figures (a fixed LCG picks the words).
fn plan() -> String {
    const WORDS: [&str; 48] = [
        "add",
        "the",
        "handler",
        "validate",
        "request",
        "module",
        "session",
        "cookie",
        "store",
        "migrate",
        "schema",
        "index",
        "cache",
        "invalidate",
        "test",
        "fixture",
        "error",
        "code",
        "retry",
        "timeout",
        "parser",
        "token",
        "client",
        "server",
        "config",
        "flag",
        "route",
        "payload",
        "limit",
        "audit",
        "log",
        "metric",
        "queue",
        "worker",
        "lock",
        "file",
        "path",
        "render",
        "template",
        "docs",
        "benchmark",
        "review",
        "rollback",
        "deploy",
        "feature",
        "guard",
        "policy",
        "branch",
    ];
    let mut seed: u64 = 0x5eed;
    let mut next = || {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (seed >> 33) as usize
    };
    let mut out = String::from("# Plan: benchmark plan\n\n");
    let mut i = 0;
    while out.len() < PLAN_BYTES {
        i += 1;
        out.push_str(&format!("{i}. "));
        for _ in 0..(8 + next() % 10) {
            out.push_str(WORDS[next() % WORDS.len()]);
            out.push(' ');
        }
        out.push_str(&format!(
            "(`src/{}_{}.rs`).\n",
            WORDS[next() % WORDS.len()],
            next() % 1000
        ));
    }
    out.truncate(PLAN_BYTES);
    out
}

/// How each revision changes the plan.
#[derive(Debug, Clone, Copy)]
enum Edits {
    /// One step rewritten somewhere (a different one each revision).
    One,
    /// Two steps rewritten, one near the start and one near the end of the plan.
    TwoApart,
}

/// A small edit of the plan for `revision`.
fn edit(plan: &str, revision: usize, edits: Edits) -> String {
    let lines = plan.lines().count();
    let targets = match edits {
        Edits::One => vec![7 + revision * 37 % 500],
        Edits::TwoApart => vec![3 + revision % 20, lines.saturating_sub(4 + revision % 20)],
    };
    plan.lines()
        .enumerate()
        .map(|(i, l)| {
            if targets.contains(&i) {
                format!("{l} (revised in revision {revision})")
            } else {
                l.to_owned()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The text a client injects into every model call for `branch` (empty without a checkpoint).
fn projection(
    store: &mut Store,
    session: &planhost_core::SessionId,
    branch: &[planhost_core::EntryId],
) -> String {
    match store.latest_checkpoint(session, branch).unwrap() {
        Some((record, text)) => {
            let reference = CheckpointRef {
                id: record.id,
                anchor: record.anchor,
                revision: record.revision,
                sha256: record.sha256,
            };
            planhost_core::projection(
                planhost_core::ProjectionMode::Planning(planhost_core::PolicyPreset::Host),
                Some((&reference, &text)),
            )
        }
        None => String::new(),
    }
}

fn run(revisions: usize, edits: Edits) {
    let state = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let clock = Arc::new(ManualClock::new(Timestamp(1_764_460_800_000)));
    let mut store = Store::open(
        &state.path().join("planhost.sqlite"),
        clock,
        Arc::new(planhost_service::UuidIds),
    )
    .unwrap()
    .store;
    let open = OpenSession {
        workspace_root: workspace
            .path()
            .canonicalize()
            .unwrap()
            .display()
            .to_string(),
        external_id: None,
        interactivity: Interactivity::Interactive,
        agent: None,
    };
    let s = store.open_session(&open, &new_id().into()).unwrap().id;
    // Entering Plan also enters the handoff's planning phase.
    store.set_mode(&s, Mode::Plan).unwrap();
    assert_eq!(
        store.plan_identity(&s).unwrap().phase,
        HandoffPhase::Planning
    );
    let mut body = plan();
    let mut branch = vec![planhost_core::EntryId::from("root")];
    let mut stored_per_revision = Vec::new();
    let mut projected = 0usize;
    let mut legacy_stored = 0usize;
    for r in 1..=revisions {
        if r > 1 {
            body = edit(&body, r, edits);
        }
        branch.push(format!("entry-{r}").into());
        let before = store.blob_bytes().unwrap();
        let saved = store
            .save_checkpoint(
                &s,
                &branch,
                &body,
                Some(r as i64 - 1),
                CheckpointSource::Draft,
                None,
            )
            .unwrap();
        stored_per_revision.push((store.blob_bytes().unwrap() - before) as usize);
        // Three transitions per revision (ready → handoff_pending → ready): planhost's state
        // rows carry no body; seed 004's earlier approach wrote the full body in each snapshot.
        store
            .handoff(
                &s,
                &HandoffRequest::Approve {
                    checkpoint_id: saved.record.id,
                    token: "t".into(),
                },
            )
            .unwrap();
        store.handoff(&s, &HandoffRequest::Cancel).unwrap();
        assert_eq!(store.plan_identity(&s).unwrap().phase, HandoffPhase::Ready);
        legacy_stored += TRANSITIONS_PER_REVISION * body.len();
        projected = projection(&mut store, &s, &branch).len();
    }
    let total: usize = stored_per_revision.iter().sum();
    let further = &stored_per_revision[1..];
    let worst_further = further.iter().max().copied().unwrap_or(0);
    println!(
        "{edits:?} {revisions:>2} revision(s): planhost stores {total:>7} body bytes (first {:>6}, each further <= {:>5} = {:>5.2}% of the plan) | \
         004-legacy stores {legacy_stored:>8} | projected per model call: planhost {projected} (004: {})",
        stored_per_revision[0],
        worst_further,
        worst_further as f64 * 100.0 / PLAN_BYTES as f64,
        body.len(),
    );
}

fn main() {
    println!(
        "50 KiB plans, small edits per revision (One: one step; TwoApart: two steps ~50 KiB apart), \
         {TRANSITIONS_PER_REVISION} transitions per revision"
    );
    for edits in [Edits::One, Edits::TwoApart] {
        for revisions in [1, 5, 10] {
            run(revisions, edits);
        }
    }
}

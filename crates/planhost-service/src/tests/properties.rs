//! Random operation sequences — crashes modelled as reopen + fence included — never break the
//! invariants of seed 000 §3 rules 1–7 and §4.

use std::collections::HashMap;

use planhost_core::{
    APPROVAL_TTL_MS, ApprovalStatus, BatchPosition, ExecutionId, ExecutionOutcome, ExecutionState,
    Interactivity, Mode, PlanState, ProposalId, SessionId, TargetPermissionMode, TurnId,
    TurnOrigin,
};
use planhost_store::ApprovalFilter;
use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;
use rusqlite::Connection;

use super::fixture::*;

#[derive(Debug, Clone)]
enum Op {
    Begin(usize, TurnOrigin),
    End(usize),
    Abort(usize),
    EnterPlan(usize, u32),
    SetMode(usize, Mode),
    Submit(usize, u32),
    Approve(usize, Option<TargetPermissionMode>),
    Reject(usize),
    StaleApprove(usize),
    Claim(usize),
    Finish(usize, ExecutionOutcome),
    Advance(i64),
    ExpireDue,
    Restart,
}

fn op() -> impl Strategy<Value = Op> {
    let s = 0..3usize;
    let batch = prop_oneof![4 => Just(1u32), 1 => 2..4u32];
    prop_oneof![
        4 => (s.clone(), prop_oneof![4 => Just(TurnOrigin::User), 1 => Just(TurnOrigin::Scheduled)])
            .prop_map(|(s, o)| Op::Begin(s, o)),
        3 => s.clone().prop_map(Op::End),
        1 => s.clone().prop_map(Op::Abort),
        2 => (s.clone(), batch.clone()).prop_map(|(s, b)| Op::EnterPlan(s, b)),
        2 => (s.clone(), prop_oneof![Just(Mode::Agent), Just(Mode::Plan)]).prop_map(|(s, m)| Op::SetMode(s, m)),
        4 => (s.clone(), batch).prop_map(|(s, b)| Op::Submit(s, b)),
        3 => (s.clone(), proptest::option::of(prop_oneof![
            Just(TargetPermissionMode::Ask),
            Just(TargetPermissionMode::AcceptEdits),
            Just(TargetPermissionMode::Auto)
        ])).prop_map(|(s, t)| Op::Approve(s, t)),
        2 => s.clone().prop_map(Op::Reject),
        1 => s.clone().prop_map(Op::StaleApprove),
        3 => s.clone().prop_map(Op::Claim),
        2 => (s, prop_oneof![Just(ExecutionOutcome::Completed), Just(ExecutionOutcome::Interrupted)])
            .prop_map(|(s, o)| Op::Finish(s, o)),
        2 => prop_oneof![1i64..1_000, Just(APPROVAL_TTL_MS - 1), Just(APPROVAL_TTL_MS + 1)].prop_map(Op::Advance),
        1 => Just(Op::ExpireDue),
        1 => Just(Op::Restart),
    ]
}

struct World {
    f: Fixture,
    sessions: Vec<SessionId>,
    /// Terminal statuses seen so far: they must never change (no replay, no revival).
    terminal: HashMap<ProposalId, ApprovalStatus>,
    finished: HashMap<ProposalId, ExecutionState>,
}

impl World {
    fn new() -> Self {
        let mut f = Fixture::new();
        let sessions = vec![
            f.session(Interactivity::Interactive),
            f.session(Interactivity::Interactive),
            f.session(Interactivity::Unattended),
        ];
        Self {
            f,
            sessions,
            terminal: HashMap::new(),
            finished: HashMap::new(),
        }
    }

    fn active_turn(&self, session: &SessionId) -> Option<TurnId> {
        Connection::open(self.f.db())
            .unwrap()
            .query_row(
                "SELECT id FROM turns WHERE session_id = ?1 AND state = 'running'",
                [session.as_str()],
                |r| r.get::<_, String>(0),
            )
            .ok()
            .map(TurnId::from)
    }

    fn pending(&mut self, session: &SessionId) -> Option<planhost_store::ApprovalRecord> {
        self.f
            .store()
            .approvals(ApprovalFilter::Pending)
            .unwrap()
            .into_iter()
            .find(|a| a.session_id == *session)
    }

    fn live_execution(&mut self, session: &SessionId) -> Option<ExecutionId> {
        self.f
            .store()
            .approvals(ApprovalFilter::All)
            .unwrap()
            .into_iter()
            .find(|a| {
                a.session_id == *session && a.execution_state.is_some_and(ExecutionState::is_live)
            })
            .and_then(|a| a.execution_id)
    }

    /// Applies one op. A refused op must leave the database exactly as it was, except a late
    /// approve, which records the expiry it reports.
    fn apply(&mut self, op: &Op) -> bool {
        let before = self.f.dump();
        let sessions = self.sessions.clone();
        let session = |i: &usize| sessions[*i].clone();
        let turn_of =
            |w: &World, s: &SessionId| w.active_turn(s).unwrap_or_else(|| "no-turn".into());
        let result: Result<(), String> = match op {
            Op::Begin(i, origin) => {
                let s = session(i);
                self.f
                    .engine()
                    .begin_turn(&s, *origin, None)
                    .map(drop)
                    .map_err(|e| e.code().as_str().into())
            }
            Op::End(i) => {
                let s = session(i);
                let t = turn_of(self, &s);
                self.f
                    .store()
                    .end_turn(&s, &t)
                    .map(drop)
                    .map_err(|e| e.code().as_str().into())
            }
            Op::Abort(i) => {
                let s = session(i);
                let t = turn_of(self, &s);
                self.f
                    .store()
                    .abort_turn(&s, &t)
                    .map(drop)
                    .map_err(|e| e.code().as_str().into())
            }
            Op::EnterPlan(i, size) => {
                let s = session(i);
                let t = turn_of(self, &s);
                let batch = BatchPosition {
                    index: 0,
                    size: *size,
                };
                self.f
                    .store()
                    .enter_plan(&s, &t, &"enter".into(), batch)
                    .map(drop)
                    .map_err(|e| e.code().as_str().into())
            }
            Op::SetMode(i, mode) => {
                let s = session(i);
                self.f
                    .store()
                    .set_mode(&s, *mode)
                    .map(drop)
                    .map_err(|e| e.code().as_str().into())
            }
            Op::Submit(i, size) => {
                let s = session(i);
                let t = turn_of(self, &s);
                let mut c = ctx(&s, &t, &"submit".into());
                c.batch = BatchPosition {
                    index: 0,
                    size: *size,
                };
                self.f
                    .engine()
                    .submit_plan(&c, &input("# Plan\n"), None)
                    .map(drop)
                    .map_err(|e| e.code().as_str().into())
            }
            Op::Approve(i, target) => match self.pending(&session(i)) {
                Some(a) => self
                    .f
                    .resolve(&approve(&a, *target), None)
                    .map(drop)
                    .map_err(|e| e.code().as_str().into()),
                None => Err("NO_PENDING".into()),
            },
            Op::StaleApprove(i) => match self.pending(&session(i)) {
                Some(a) => {
                    let mut r = approve(&a, None);
                    r.turn_id = "stale-turn".into();
                    self.f
                        .resolve(&r, None)
                        .map(drop)
                        .map_err(|e| e.code().as_str().into())
                }
                None => Err("NO_PENDING".into()),
            },
            Op::Reject(i) => match self.pending(&session(i)) {
                Some(a) => self
                    .f
                    .resolve(&reject(&a), None)
                    .map(drop)
                    .map_err(|e| e.code().as_str().into()),
                None => Err("NO_PENDING".into()),
            },
            Op::Claim(i) => {
                let s = session(i);
                let e = self.live_execution(&s).unwrap_or_else(|| "none".into());
                self.f
                    .engine()
                    .claim_execution(&s, &e, None)
                    .map(drop)
                    .map_err(|e| e.code().as_str().into())
            }
            Op::Finish(i, outcome) => {
                let s = session(i);
                let e = self.live_execution(&s).unwrap_or_else(|| "none".into());
                self.f
                    .store()
                    .finish_execution(&s, &e, *outcome)
                    .map(drop)
                    .map_err(|e| e.code().as_str().into())
            }
            Op::Advance(ms) => {
                self.f.clock.advance_ms(*ms);
                Ok(())
            }
            Op::ExpireDue => self
                .f
                .store()
                .expire_due()
                .map(drop)
                .map_err(|e| e.code().as_str().into()),
            Op::Restart => {
                self.f.restart();
                self.check_fenced();
                Ok(())
            }
        };
        match result {
            Ok(()) => true,
            Err(code) if code == "PLAN_APPROVAL_TIMEOUT" => true,
            Err(code) => {
                assert_eq!(
                    self.f.dump(),
                    before,
                    "refused op {op:?} ({code}) changed the database"
                );
                false
            }
        }
    }

    fn check_fenced(&mut self) {
        let conn = Connection::open(self.f.db()).unwrap();
        let live: i64 = conn
            .query_row(
                "SELECT (SELECT count(*) FROM plan_approvals WHERE status = 'pending' \
                    OR execution_state IN ('queued', 'running')) \
                  + (SELECT count(*) FROM turns WHERE state = 'running')",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(live, 0, "the fence left live work behind");
    }

    fn check_invariants(&mut self) {
        let sessions = self.f.store().sessions().unwrap();
        let approvals = self.f.store().approvals(ApprovalFilter::All).unwrap();
        let conn = Connection::open(self.f.db()).unwrap();
        for s in &sessions {
            let mine: Vec<_> = approvals.iter().filter(|a| a.session_id == s.id).collect();
            let pending: Vec<_> = mine
                .iter()
                .filter(|a| a.status == ApprovalStatus::Pending)
                .collect();
            let live: Vec<_> = mine
                .iter()
                .filter(|a| a.execution_state.is_some_and(ExecutionState::is_live))
                .collect();
            let running: i64 = conn
                .query_row(
                    "SELECT count(*) FROM turns WHERE session_id = ?1 AND state = 'running'",
                    [s.id.as_str()],
                    |r| r.get(0),
                )
                .unwrap();
            // §4: one active turn, one pending approval, one queued or running execution.
            assert!(
                running <= 1 && pending.len() <= 1 && live.len() <= 1,
                "{s:?}"
            );
            // Mode and Plan state agree.
            match s.mode {
                Mode::Agent => assert_eq!(s.plan_state, PlanState::Inactive, "{s:?}"),
                Mode::Plan => assert_ne!(s.plan_state, PlanState::Inactive, "{s:?}"),
            }
            // A pending approval means Plan / awaiting_approval, and only then.
            assert_eq!(
                !pending.is_empty(),
                s.plan_state == PlanState::AwaitingApproval,
                "{s:?}"
            );
            if !pending.is_empty() {
                assert_eq!(s.mode, Mode::Plan);
            }
            // §3 rule 6: approval commits Agent before a queued/running execution exists.
            if !live.is_empty() {
                assert_eq!(s.mode, Mode::Agent, "{s:?}");
            }
            // Unattended sessions never plan.
            if s.interactivity == Interactivity::Unattended {
                assert_eq!(s.mode, Mode::Agent);
                assert!(mine.is_empty());
            }
        }
        for a in &approvals {
            // §3 rule 4: one absolute deadline.
            assert_eq!(a.expires_at, a.created_at.plus_ms(APPROVAL_TTL_MS));
            // §3 rule 5: reject, expiry and interruption grant no execution.
            if a.status != ApprovalStatus::Approved {
                assert!(
                    a.execution_id.is_none() && a.execution_state.is_none(),
                    "{a:?}"
                );
            } else {
                assert!(
                    a.execution_id.is_some() && a.target_permission_mode.is_some(),
                    "{a:?}"
                );
            }
            if a.status == ApprovalStatus::Rejected {
                assert!(a.target_permission_mode.is_none());
            }
            // No replay: a terminal status or finished execution never changes again.
            if a.status.is_terminal() {
                let seen = *self
                    .terminal
                    .entry(a.proposal_id.clone())
                    .or_insert(a.status);
                assert_eq!(seen, a.status, "terminal approval changed: {a:?}");
            }
            if let Some(state) = a.execution_state.filter(|s| !s.is_live()) {
                let seen = *self.finished.entry(a.proposal_id.clone()).or_insert(state);
                assert_eq!(seen, state, "finished execution changed: {a:?}");
            }
        }
    }
}

/// Relative to the package root, where `cargo test` runs.
const REGRESSIONS: &str = "src/tests/proptest-regressions/properties.txt";

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 40,
        // The cases proptest shrank to in the past (they were under `tests/`), re-run first.
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(REGRESSIONS))),
        ..ProptestConfig::default()
    })]

    #[test]
    fn random_operations_keep_the_invariants(ops in proptest::collection::vec(op(), 1..40)) {
        let mut world = World::new();
        for op in &ops {
            world.apply(op);
            world.check_invariants();
        }
    }
}

/// A directed sequence through every transition, so the property test's generator is known to
/// reach the interesting states: an approval approved and its execution completed, one
/// rejected, one expired at its deadline, and one interrupted by a restart.
#[test]
fn the_happy_path_reaches_every_state() {
    let mut w = World::new();
    let ops = [
        // Session 0: approved, claimed, completed.
        Op::SetMode(0, Mode::Plan),
        Op::Begin(0, TurnOrigin::User),
        Op::Submit(0, 1),
        Op::End(0),
        Op::Approve(0, None),
        Op::Claim(0),
        Op::Finish(0, ExecutionOutcome::Completed),
        // Session 0 again: rejected, then planned again and left past the deadline.
        Op::SetMode(0, Mode::Plan),
        Op::Begin(0, TurnOrigin::User),
        Op::Submit(0, 1),
        Op::End(0),
        Op::Reject(0),
        Op::Begin(0, TurnOrigin::User),
        Op::Submit(0, 1),
        Op::End(0),
        Op::Advance(APPROVAL_TTL_MS + 1),
        Op::ExpireDue,
        // Session 1: pending when the host restarts.
        Op::SetMode(1, Mode::Plan),
        Op::Begin(1, TurnOrigin::User),
        Op::Submit(1, 1),
        Op::Restart,
    ];
    for op in &ops {
        assert!(w.apply(op), "{op:?} was refused");
        w.check_invariants();
    }
    let mut reached: Vec<ApprovalStatus> = w.terminal.values().copied().collect();
    reached.sort_by_key(|s| s.as_str());
    reached.dedup();
    let mut every = vec![
        ApprovalStatus::Approved,
        ApprovalStatus::Rejected,
        ApprovalStatus::Expired,
        ApprovalStatus::Interrupted,
    ];
    every.sort_by_key(|s| s.as_str());
    assert_eq!(reached, every, "every terminal status: {:?}", w.terminal);
}

/// The sequences proptest once shrank failures to (see [`REGRESSIONS`]), as directed tests.
#[test]
fn the_shrunk_regressions_keep_the_invariants() {
    let cases: [&[Op]; 2] = [
        &[
            Op::Begin(1, TurnOrigin::User),
            Op::EnterPlan(1, 1),
            Op::Submit(1, 1),
            Op::Approve(1, None),
        ],
        &[
            Op::Begin(0, TurnOrigin::User),
            Op::EnterPlan(0, 1),
            Op::Submit(0, 1),
            Op::EnterPlan(0, 1),
        ],
    ];
    for ops in cases {
        let mut w = World::new();
        for op in ops {
            w.apply(op);
            w.check_invariants();
        }
    }
}

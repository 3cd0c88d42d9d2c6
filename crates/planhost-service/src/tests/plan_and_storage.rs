//! Seed 000 §10 "Plan and storage", one test per item, named after it.

use planhost_core::{
    APPROVAL_TTL_MS, ApprovalStatus, AuditAction, ErrorCode, ExecutionOutcome, ExecutionState,
    Interactivity, Mode, PermissionMode, PlanState, TargetPermissionMode, TurnOrigin, TurnState,
};
use planhost_store::ApprovalFilter;
use rusqlite::Connection;

use super::fixture::*;

#[test]
fn one_agent_identity_across_agent_plan_approval_queue_and_execution() {
    let mut f = Fixture::new();
    let session = f.session(Interactivity::Interactive);
    // Agent → the agent's own EnterPlanMode → SubmitPlan → approve → claim → finish.
    let turn = f.turn(&session);
    f.store()
        .enter_plan(&session, &turn, &"enter-1".into(), ALONE)
        .unwrap();
    let approval = f.submit(&session, &turn, "# Plan\n").unwrap();
    f.store().end_turn(&session, &turn).unwrap();
    let approved = f.resolve(&approve(&approval, None), None).unwrap();
    let execution = approved.execution_id.clone().unwrap();
    let exec_turn = f
        .engine()
        .claim_execution(&session, &execution, None)
        .unwrap();
    let done = f
        .store()
        .finish_execution(&session, &execution, ExecutionOutcome::Completed)
        .unwrap();

    // Every record names the same one session; no second session or agent was created.
    assert_eq!(f.store().sessions().unwrap().len(), 1);
    for s in [
        &approval.session_id,
        &approved.session_id,
        &exec_turn.session_id,
        &done.session_id,
    ] {
        assert_eq!(s, &session);
    }
    assert_eq!(exec_turn.origin, TurnOrigin::Execution);
    assert_eq!(exec_turn.execution_id.as_ref(), Some(&execution));
    assert_eq!(done.execution_state, Some(ExecutionState::Completed));
    assert_eq!(
        f.store().turn(&exec_turn.id).unwrap().state,
        TurnState::Completed
    );
}

#[test]
fn unique_artifact_path_per_submission_and_byte_for_byte_markdown_preservation() {
    let mut f = Fixture::new();
    let session = f.plan_session();
    let plans = [
        "# Plan\r\n\r\n- CRLF kept\r\n- no final newline",
        "  leading spaces, trailing spaces  \n\n\n",
        "ünïcödé ✓ — 計画\u{feff}\n\ttabs\n",
        "# Plan\n1. do it\n",
        "# Plan\n1. do it\n",
    ];
    let mut paths = Vec::new();
    for markdown in plans {
        let turn = f.turn(&session);
        let a = f.submit(&session, &turn, markdown).unwrap();
        assert_eq!(
            read(&f.workspace_root(), &a.artifact_relative_path),
            markdown.as_bytes()
        );
        assert_eq!(a.artifact_size_bytes, markdown.len() as i64);
        assert_eq!(
            a.artifact_sha256,
            planhost_core::sha256_hex(markdown.as_bytes())
        );
        assert!(
            a.artifact_relative_path.starts_with(".pi/plan/")
                && a.artifact_relative_path.ends_with(".md")
        );
        // The exact submitted snapshot is in the row as well.
        assert_eq!(
            f.store().submitted_plan(&a.proposal_id).unwrap().markdown,
            markdown
        );
        paths.push(a.artifact_relative_path.clone());
        f.resolve(&reject(&a), None).unwrap();
        f.store().end_turn(&session, &turn).unwrap();
    }
    let mut unique = paths.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(
        unique.len(),
        plans.len(),
        "identical plans still get their own files"
    );
    assert_eq!(
        f.artifact_files().len(),
        plans.len(),
        "no earlier artifact was replaced"
    );
}

#[test]
fn title_and_question_stored_structurally_and_artifact_opener_resolves_the_file() {
    let mut f = Fixture::new();
    let a = f.pending();
    assert_eq!(a.title, "Add login");
    assert_eq!(a.question, "Shall I implement this?");
    let conn = Connection::open(f.db()).unwrap();
    let (title, question): (String, String) = conn
        .query_row(
            "SELECT title, question FROM plan_approvals WHERE request_id = ?1",
            [a.proposal_id.as_str()],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(
        (title.as_str(), question.as_str()),
        ("Add login", "Shall I implement this?")
    );
    // The opener: workspace root + relative path is the file, and it holds no wrapper.
    let root = f.store().session(&a.session_id).unwrap().workspace_root;
    let opened =
        fs_err::read_to_string(std::path::Path::new(&root).join(&a.artifact_relative_path))
            .unwrap();
    assert_eq!(opened, "# Plan\n1. do it\n");
    assert!(!opened.contains("Add login") && !opened.contains("Shall I"));
}

#[test]
fn approve_reject_only_schema_and_ask_default() {
    let mut f = Fixture::new();
    let a = f.pending();
    let approved = f.resolve(&approve(&a, None), None).unwrap();
    assert_eq!(
        approved.target_permission_mode,
        Some(TargetPermissionMode::Ask)
    );
    assert_eq!(approved.resolved_by, Some(person()));
    assert_eq!(
        f.store().session(&a.session_id).unwrap().permission_mode,
        PermissionMode::Ask
    );

    // The schema admits only approve and reject as actions.
    let conn = Connection::open(f.db()).unwrap();
    let err = conn
        .execute(
            "UPDATE plan_approvals SET action = 'request-changes' WHERE request_id = ?1",
            [a.proposal_id.as_str()],
        )
        .unwrap_err();
    assert!(err.to_string().contains("CHECK"), "{err}");

    // Each explicit mode is stored as chosen; reject stores none.
    for mode in [
        TargetPermissionMode::AcceptEdits,
        TargetPermissionMode::Auto,
    ] {
        let mut g = Fixture::new();
        let p = g.pending();
        let r = g.resolve(&approve(&p, Some(mode)), None).unwrap();
        assert_eq!(r.target_permission_mode, Some(mode));
        assert_eq!(
            g.store().session(&p.session_id).unwrap().permission_mode,
            PermissionMode::from(mode)
        );
    }
    let mut g = Fixture::new();
    let p = g.pending();
    let r = g.resolve(&reject(&p), Some("not yet")).unwrap();
    assert_eq!(
        (r.status, r.target_permission_mode, r.feedback.as_deref()),
        (ApprovalStatus::Rejected, None, Some("not yet"))
    );
    assert_eq!(r.resolved_by, Some(person()));
    let s = g.store().session(&p.session_id).unwrap();
    assert_eq!(
        (s.mode, s.plan_state, s.permission_mode),
        (Mode::Plan, PlanState::Stopped, PermissionMode::Inherit)
    );
}

#[test]
fn absolute_expiry_returns_plan_approval_timeout() {
    let mut f = Fixture::new();
    let a = f.pending();
    assert_eq!(a.expires_at, T0.plus_ms(APPROVAL_TTL_MS));
    // Reads, reloads and restarts never move the deadline.
    f.clock.advance_ms(APPROVAL_TTL_MS - 1);
    assert_eq!(
        f.store().approvals(ApprovalFilter::Pending).unwrap()[0].expires_at,
        a.expires_at
    );
    // One millisecond late: the approve fails and the row is expired.
    f.clock.advance_ms(2);
    let err = f.resolve(&approve(&a, None), None).unwrap_err();
    assert_eq!(err.code(), ErrorCode::PlanApprovalTimeout);
    assert_eq!(err.code().as_str(), "PLAN_APPROVAL_TIMEOUT");
    let row = f.store().approval(&a.proposal_id).unwrap();
    assert_eq!(
        (row.status, row.error_code),
        (
            ApprovalStatus::Expired,
            Some(ErrorCode::PlanApprovalTimeout)
        )
    );
    assert_eq!(row.execution_id, None);
    assert_eq!(row.resolved_by, None, "the host expired it, not a person");
    let s = f.store().session(&a.session_id).unwrap();
    assert_eq!((s.mode, s.plan_state), (Mode::Plan, PlanState::Stopped));
    // A second attempt is told it is no longer pending.
    assert_eq!(
        f.resolve(&approve(&row, None), None).unwrap_err().code(),
        ErrorCode::PlanApprovalNotPending
    );
}

#[test]
fn one_active_turn_one_pending_approval_and_one_queued_or_running_execution() {
    let mut f = Fixture::new();
    let session = f.plan_session();
    let turn = f.turn(&session);
    assert_eq!(
        f.engine()
            .begin_turn(&session, TurnOrigin::User, None)
            .unwrap_err()
            .code(),
        ErrorCode::SessionBusy
    );
    let a = f.submit(&session, &turn, "# one\n").unwrap();
    let second = f
        .engine()
        .submit_plan(
            &ctx(&session, &turn, &"call-2".into()),
            &input("# two\n"),
            None,
        )
        .unwrap_err();
    assert_eq!(second.code(), ErrorCode::PlanApprovalAlreadyPending);
    assert_eq!(
        f.artifact_files().len(),
        1,
        "the refused submission wrote no artifact"
    );
    f.store().end_turn(&session, &turn).unwrap();
    assert_eq!(
        f.engine()
            .begin_turn(&session, TurnOrigin::User, None)
            .unwrap_err()
            .code(),
        ErrorCode::SessionBusy
    );
    let approved = f.resolve(&approve(&a, None), None).unwrap();
    // With an execution queued, no new prompt turn may start; only the claim.
    assert_eq!(
        f.engine()
            .begin_turn(&session, TurnOrigin::User, None)
            .unwrap_err()
            .code(),
        ErrorCode::SessionBusy
    );
    let execution = approved.execution_id.unwrap();
    let exec_turn = f
        .engine()
        .claim_execution(&session, &execution, None)
        .unwrap();
    assert_eq!(
        f.engine()
            .claim_execution(&session, &execution, None)
            .unwrap_err()
            .code(),
        ErrorCode::ExecutionStateInvalid
    );
    assert_eq!(
        f.engine()
            .begin_turn(&session, TurnOrigin::User, None)
            .unwrap_err()
            .code(),
        ErrorCode::SessionBusy
    );
    f.store()
        .finish_execution(&session, &execution, ExecutionOutcome::Completed)
        .unwrap();
    assert_eq!(
        f.store().turn(&exec_turn.id).unwrap().state,
        TurnState::Completed
    );
    f.turn(&session);
}

#[test]
fn startup_transaction_interrupts_prior_pending_queued_running_work_before_rpc() {
    let mut f = Fixture::new();
    let pending = f.pending();
    let mut g = Fixture::new();
    let queued = g.pending();
    let queued = g.resolve(&approve(&queued, None), None).unwrap();
    let running = {
        let session = g.plan_session();
        let turn = g.turn(&session);
        let a = g.submit(&session, &turn, "# r\n").unwrap();
        g.store().end_turn(&session, &turn).unwrap();
        let a = g.resolve(&approve(&a, None), None).unwrap();
        g.engine()
            .claim_execution(&session, a.execution_id.as_ref().unwrap(), None)
            .unwrap();
        a
    };

    let fence = f.restart();
    assert_eq!(
        fence.interrupted_approvals,
        vec![pending.proposal_id.clone()]
    );
    let fence = g.restart();
    let mut interrupted = fence.interrupted_executions.clone();
    interrupted.sort();
    let mut expected = vec![
        queued.execution_id.clone().unwrap(),
        running.execution_id.clone().unwrap(),
    ];
    expected.sort();
    assert_eq!(interrupted, expected);
    assert_eq!(
        fence.aborted_turns.len(),
        1,
        "the running execution turn was aborted"
    );

    // By the time open returns — before anything can be served — the rows are terminal and audited.
    let row = f.store().approval(&pending.proposal_id).unwrap();
    assert_eq!(
        (row.status, row.error_code),
        (ApprovalStatus::Interrupted, Some(ErrorCode::HostRestarted))
    );
    assert!(
        f.store()
            .approvals(ApprovalFilter::Pending)
            .unwrap()
            .is_empty()
    );
    let audit = f.store().audit(None, 100).unwrap();
    assert!(
        audit
            .iter()
            .any(|r| r.action == AuditAction::FenceApprovalInterrupted)
    );
    for a in [&queued, &running] {
        let row = g.store().approval(&a.proposal_id).unwrap();
        assert_eq!(row.execution_state, Some(ExecutionState::Interrupted));
        assert_eq!(
            row.status,
            ApprovalStatus::Approved,
            "the approval itself stays approved"
        );
    }
    // A second restart finds nothing left to fence.
    assert_eq!(g.restart(), planhost_store::FenceReport::default());
}

#[test]
fn no_provider_tool_or_queue_replay_after_restart() {
    let mut f = Fixture::new();
    let a = f.pending();
    let queued = {
        let mut g = Fixture::new();
        let p = g.pending();
        let p = g.resolve(&approve(&p, None), None).unwrap();
        g.restart();
        // The interrupted execution can never be claimed or finished again.
        let execution = p.execution_id.clone().unwrap();
        let err = g
            .engine()
            .claim_execution(&p.session_id, &execution, None)
            .unwrap_err();
        assert_eq!(err.code(), ErrorCode::ExecutionNotFound);
        assert_eq!(
            g.store()
                .finish_execution(&p.session_id, &execution, ExecutionOutcome::Completed)
                .unwrap_err()
                .code(),
            ErrorCode::ExecutionNotFound
        );
        let after = g.store().approval(&p.proposal_id).unwrap();
        assert_eq!(
            after.execution_state,
            Some(ExecutionState::Interrupted),
            "the fence interrupted the queued execution"
        );
        p
    };
    f.restart();
    // The interrupted approval cannot be revived by a stale approve.
    let err = f.resolve(&approve(&a, None), None).unwrap_err();
    assert_eq!(
        err.code(),
        ErrorCode::PlanApprovalStale,
        "the row version moved; the old request is stale"
    );
    let fresh = f.store().approval(&a.proposal_id).unwrap();
    assert_eq!(
        f.resolve(&approve(&fresh, None), None).unwrap_err().code(),
        ErrorCode::PlanApprovalNotPending
    );
    // No new turn, execution or approval appeared by itself, and nothing ran: the audit log
    // after the restart holds the fence's own rows and the refused answers, no turn begun,
    // execution claimed or tool run.
    let approvals = f.store().approvals(ApprovalFilter::All).unwrap();
    assert_eq!(approvals.len(), 1, "only the one approval: {approvals:?}");
    assert!(approvals[0].execution_id.is_none());
    assert!(f.store().active_turn(&a.session_id).unwrap().is_none());
    let s = f.store().session(&a.session_id).unwrap();
    assert_eq!(s.plan_state, PlanState::Stopped);
    let replayed: Vec<_> = f
        .store()
        .audit(None, 1000)
        .unwrap()
        .into_iter()
        .filter(|r| {
            matches!(
                r.action,
                AuditAction::TurnStarted
                    | AuditAction::ExecutionClaimed
                    | AuditAction::ToolExecuted
            )
        })
        .collect();
    let started_before = 1; // the turn that submitted the plan
    assert_eq!(
        replayed.len(),
        started_before,
        "no turn, claim or tool run after the restart: {replayed:?}"
    );
    // The approved plan's queued execution was never claimed before the restart, so the fence
    // interrupted it and nothing started it again.
    assert_eq!(
        queued.execution_state,
        Some(ExecutionState::Queued),
        "queued when approved"
    );
}

#[test]
fn pending_interruption_leaves_plan_approved_interruption_leaves_agent() {
    let mut f = Fixture::new();
    let pending = f.pending();
    let approved = {
        let session = f.plan_session();
        let turn = f.turn(&session);
        let a = f.submit(&session, &turn, "# b\n").unwrap();
        f.store().end_turn(&session, &turn).unwrap();
        f.resolve(&approve(&a, Some(TargetPermissionMode::Auto)), None)
            .unwrap()
    };
    f.restart();
    let s = f.store().session(&pending.session_id).unwrap();
    assert_eq!((s.mode, s.plan_state), (Mode::Plan, PlanState::Stopped));
    let s = f.store().session(&approved.session_id).unwrap();
    assert_eq!(
        (s.mode, s.permission_mode),
        (Mode::Agent, PermissionMode::Auto)
    );
}

#[test]
fn scheduled_plan_rejection_before_provider_artifact_or_queue_work() {
    let mut f = Fixture::new();
    // An unattended session cannot enter Plan at all.
    let unattended = f.session(Interactivity::Unattended);
    let before = f.dump();
    let err = f.store().set_mode(&unattended, Mode::Plan).unwrap_err();
    assert_eq!(err.code(), ErrorCode::PlanRequiresInteractiveSession);
    let turn = f.turn(&unattended);
    let after_turn = f.dump();
    let err = f
        .store()
        .enter_plan(&unattended, &turn, &"enter".into(), ALONE)
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::PlanRequiresInteractiveSession);
    assert_eq!(f.dump(), after_turn);
    assert_ne!(before, after_turn);

    // A scheduled turn in a Plan session is refused before it starts (before provider work).
    let session = f.plan_session();
    let before = f.dump();
    let err = f
        .engine()
        .begin_turn(&session, TurnOrigin::Scheduled, None)
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::PlanRequiresInteractiveSession);
    assert_eq!(f.dump(), before);

    // A scheduled Agent turn that tries to submit a plan writes no artifact and no row.
    let agent = f.session(Interactivity::Interactive);
    let turn = f
        .engine()
        .begin_turn(&agent, TurnOrigin::Scheduled, None)
        .unwrap()
        .id;
    let before = f.dump();
    let err = f
        .engine()
        .submit_plan(&ctx(&agent, &turn, &"c".into()), &input("# x\n"), None)
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::PlanRequiresInteractiveSession);
    assert_eq!(f.dump(), before);
    assert!(f.artifact_files().is_empty());
    assert!(
        !f.workspace_root().join(".pi").exists(),
        "not even the directory was created"
    );
}

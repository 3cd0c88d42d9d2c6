//! A host that crashed and came back: live work of the old process is interrupted, nothing of
//! it is actionable, and nothing replays.

use planhost_core::{
    ApprovalStatus, AuditAction, ErrorCode, ExecutionState, Interactivity, Mode, PlanState,
    TargetPermissionMode,
};
use planhost_protocol::{
    AuditFilter, ExecutionRef, PlansFilter, ProposalRef, ResolvePlanParams, SessionsFilter,
    TurnOutcome, methods,
};
use planhost_test_support::host::params;
use pretty_assertions::assert_eq;

use crate::steps::*;
use crate::support::*;

fn actions(c: &mut Conn) -> Vec<AuditAction> {
    c.call::<methods::AuditList>(AuditFilter {
        session_id: None,
        limit: Some(10_000),
    })
    .items
    .iter()
    .map(|e| e.action)
    .collect()
}

fn count(actions: &[AuditAction], action: AuditAction) -> usize {
    actions.iter().filter(|a| **a == action).count()
}

#[test]
fn a_restarted_host_interrupts_live_work_and_replays_nothing() {
    let env = home();
    let mut host = SocketHost::start(&env);
    let mut c = host.connect("e2e-before-crash");

    // A: a plan awaiting approval.
    let a = c.open_session(&env.workspace(), Interactivity::Interactive);
    let (turn_a, pending) = c.submit_plan(&a, "Pending at the crash");
    c.end_turn(&a, &turn_a);
    // B: approved, its execution queued but not claimed.
    let b = c.open_session(&env.workspace(), Interactivity::Interactive);
    let (turn_b, approval_b) = c.submit_plan(&b, "Approved at the crash");
    c.end_turn(&b, &turn_b);
    let approved =
        c.call::<methods::PlansResolve>(approve(&approval_b, TargetPermissionMode::Auto));
    assert_eq!(approved.execution_state, Some(ExecutionState::Queued));
    let execution = approved.execution_id.expect("executionId");
    // C: a turn running at the crash.
    let cs = c.open_session(&env.workspace(), Interactivity::Interactive);
    let turn_c = c.begin_turn(&cs);
    // Every audit row is durable before the crash (tool rows are written asynchronously).
    let before = poll_until("tool audit rows to be written", BOUND, || {
        let a = actions(&mut c);
        (count(&a, AuditAction::ToolAllow) == 2).then_some(a)
    });
    drop(c);

    host.kill();
    let host = SocketHost::start(&env);
    let mut c = host.connect("e2e-after-crash");

    // Nothing is pending any more; A's approval is interrupted, not resumable.
    let still = c.pending_plans();
    assert!(still.is_empty(), "{still:?}");
    let detail = c.call::<methods::PlansGet>(ProposalRef {
        proposal_id: pending.proposal_id.clone(),
    });
    let row = &detail.approval;
    assert_eq!(row.status, ApprovalStatus::Interrupted, "{row:?}");
    assert_eq!(row.error_code, Some(ErrorCode::HostRestarted));
    assert!(row.version > pending.version, "{row:?}");
    assert_eq!(detail.markdown, PLAN);
    let sa = c.get_session(&a);
    assert_eq!(sa.mode, Mode::Plan);
    assert_eq!(sa.plan_state, PlanState::Stopped);
    assert!(
        sa.pending_approval.is_none() && sa.active_turn.is_none(),
        "{sa:?}"
    );

    // The old approve request is dead: stale by version, and not pending with the new one.
    let old = c.call_err::<methods::PlansResolve>(approve(&pending, TargetPermissionMode::Auto));
    assert_refused(&old, "PLAN_APPROVAL_STALE");
    let fresh = c.call_err::<methods::PlansResolve>(ResolvePlanParams {
        version: Some(row.version),
        ..approve(&pending, TargetPermissionMode::Auto)
    });
    assert_refused(&fresh, "PLAN_APPROVAL_NOT_PENDING");

    // B's queued execution is interrupted and can no longer be claimed.
    let b_row = c
        .call::<methods::PlansGet>(ProposalRef {
            proposal_id: approval_b.proposal_id.clone(),
        })
        .approval;
    assert_eq!(b_row.status, ApprovalStatus::Approved);
    assert_eq!(
        b_row.execution_state,
        Some(ExecutionState::Interrupted),
        "{b_row:?}"
    );
    let claim = c.call_err::<methods::ExecutionsClaim>(ExecutionRef {
        session_id: b.clone(),
        execution_id: execution,
    });
    assert_eq!(claim.code, planhost_protocol::codes::REFUSED, "{claim:?}");
    assert!(
        matches!(
            stable(&claim),
            Some("EXECUTION_STATE_INVALID" | "EXECUTION_NOT_FOUND")
        ),
        "{claim:?}"
    );
    let sb = c.get_session(&b);
    assert_eq!(sb.mode, Mode::Agent);
    assert!(sb.active_turn.is_none(), "{sb:?}");

    // C's turn was aborted.
    assert!(c.get_session(&cs).active_turn.is_none());
    let e = c.call_err::<methods::TurnsEnd>(params::end(&cs, &turn_c, TurnOutcome::Completed));
    assert_refused(&e, "TURN_NOT_ACTIVE");

    // Nothing replayed: no turn began, nothing was claimed or executed, no new approval.
    let after = actions(&mut c);
    for action in [
        AuditAction::TurnStarted,
        AuditAction::ExecutionClaimed,
        AuditAction::ToolExecuted,
        AuditAction::ApprovalPending,
    ] {
        assert_eq!(
            count(&after, action),
            count(&before, action),
            "{action} after the restart: {after:?}"
        );
    }
    assert_eq!(
        count(&after, AuditAction::FenceApprovalInterrupted),
        1,
        "{after:?}"
    );
    let all = c.call::<methods::PlansList>(PlansFilter {
        session_id: None,
        status: None,
        limit: None,
    });
    assert_eq!(all.items.len(), 2, "{all:?}");
    let sessions = c
        .call::<methods::SessionsList>(SessionsFilter {
            include_ended: None,
            workspace_root: None,
            limit: None,
        })
        .items;
    assert_eq!(sessions.len(), 3);
    assert!(sessions.iter().all(|s| s.active_turn.is_none()));

    // The host is usable: A can plan again.
    let turn = c.begin_turn(&a);
    c.end_turn(&a, &turn);
}

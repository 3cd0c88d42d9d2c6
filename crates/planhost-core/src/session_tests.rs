use super::*;

type Mutation = fn(&mut ResolveRequest);

fn idle(mode: Mode) -> SessionView {
    SessionView {
        id: "s".into(),
        mode,
        plan_state: match mode {
            Mode::Agent => PlanState::Inactive,
            Mode::Plan => PlanState::Planning,
        },
        interactivity: Interactivity::Interactive,
        active_turn: None,
        pending: None,
        execution: None,
    }
}

fn in_turn(mode: Mode, origin: TurnOrigin) -> SessionView {
    SessionView {
        active_turn: Some(ActiveTurn {
            id: "t".into(),
            origin,
        }),
        ..idle(mode)
    }
}

const ALONE: BatchPosition = BatchPosition { index: 0, size: 1 };

fn plan_input() -> SubmitPlanInput {
    SubmitPlanInput {
        title: "T".into(),
        markdown: "# Plan\r\nx".into(),
        question: "Go?".into(),
    }
}

fn pending_view() -> (SessionView, ApprovalView) {
    let approval = ApprovalView {
        identity: ApprovalIdentity {
            proposal_id: "p".into(),
            session_id: "s".into(),
            turn_id: "t".into(),
            tool_call_id: "c".into(),
            version: 1,
        },
        status: ApprovalStatus::Pending,
        expires_at: Timestamp(APPROVAL_TTL_MS),
        artifact_sha256: "abc".into(),
    };
    let view = SessionView {
        plan_state: PlanState::AwaitingApproval,
        pending: Some(approval.clone()),
        ..idle(Mode::Plan)
    };
    (view, approval)
}

fn request(action: ApprovalAction) -> ResolveRequest {
    ResolveRequest {
        proposal_id: "p".into(),
        session_id: "s".into(),
        turn_id: "t".into(),
        tool_call_id: "c".into(),
        version: Some(1),
        artifact_sha256: None,
        action,
        target_permission_mode: None,
    }
}

#[test]
fn one_active_turn() {
    let busy = in_turn(Mode::Agent, TurnOrigin::User);
    assert_eq!(
        begin_turn(&busy, TurnOrigin::User),
        Err(CoreError::SessionBusy(Blocker::ActiveTurn))
    );
}

#[test]
fn stopped_plan_resumes_planning_on_next_prompt() {
    let view = SessionView {
        plan_state: PlanState::Stopped,
        ..idle(Mode::Plan)
    };
    assert_eq!(
        begin_turn(&view, TurnOrigin::User).map(|s| s.plan_state),
        Ok(PlanState::Planning)
    );
}

#[test]
fn scheduled_plan_turn_is_refused_but_scheduled_agent_turn_runs() {
    assert_eq!(
        begin_turn(&idle(Mode::Plan), TurnOrigin::Scheduled).map_err(|e| e.code().as_str()),
        Err("PLAN_REQUIRES_INTERACTIVE_SESSION")
    );
    assert!(begin_turn(&idle(Mode::Agent), TurnOrigin::Scheduled).is_ok());
}

#[test]
fn enter_and_submit_must_be_alone_in_their_batch() {
    let view = in_turn(Mode::Agent, TurnOrigin::User);
    let shared = BatchPosition { index: 1, size: 2 };
    assert_eq!(
        enter_plan(&view, &"t".into(), shared).map_err(|e| e.code().as_str()),
        Err("TOOL_NOT_ALONE_IN_BATCH")
    );
    let plan = in_turn(Mode::Plan, TurnOrigin::User);
    assert_eq!(
        submit_plan(&plan, &"t".into(), shared, &plan_input(), Timestamp(0))
            .map_err(|e| e.code().as_str()),
        Err("TOOL_NOT_ALONE_IN_BATCH")
    );
}

#[test]
fn submit_sets_an_absolute_deadline_and_awaits_approval() {
    let plan = in_turn(Mode::Plan, TurnOrigin::User);
    let decision = submit_plan(&plan, &"t".into(), ALONE, &plan_input(), Timestamp(5)).unwrap();
    assert_eq!(decision.expires_at, Timestamp(5 + APPROVAL_TTL_MS));
    assert_eq!(decision.state.plan_state, PlanState::AwaitingApproval);
}

#[test]
fn submit_checks_interactivity_before_anything_else() {
    // Even a bad batch and bad input report the interactive rule first.
    let view = SessionView {
        interactivity: Interactivity::Unattended,
        ..in_turn(Mode::Plan, TurnOrigin::User)
    };
    let bad = SubmitPlanInput {
        title: String::new(),
        ..plan_input()
    };
    let shared = BatchPosition { index: 0, size: 3 };
    assert_eq!(
        submit_plan(&view, &"t".into(), shared, &bad, Timestamp(0)).map_err(|e| e.code().as_str()),
        Err("PLAN_REQUIRES_INTERACTIVE_SESSION")
    );
}

#[test]
fn submit_outside_plan_or_with_pending_is_refused() {
    let agent = in_turn(Mode::Agent, TurnOrigin::User);
    assert_eq!(
        submit_plan(&agent, &"t".into(), ALONE, &plan_input(), Timestamp(0))
            .map_err(|e| e.code().as_str()),
        Err("PLAN_MODE_NOT_ACTIVE")
    );
    let (mut view, _) = pending_view();
    view.active_turn = Some(ActiveTurn {
        id: "t".into(),
        origin: TurnOrigin::User,
    });
    assert_eq!(
        submit_plan(&view, &"t".into(), ALONE, &plan_input(), Timestamp(0))
            .map_err(|e| e.code().as_str()),
        Err("PLAN_APPROVAL_ALREADY_PENDING")
    );
}

#[test]
fn approve_defaults_to_ask_and_commits_agent() {
    let (view, approval) = pending_view();
    let got = resolve(
        &view,
        &approval,
        &request(ApprovalAction::Approve),
        Timestamp(0),
    )
    .unwrap();
    assert_eq!(
        got,
        Resolution::Approve {
            state: SessionState {
                mode: Mode::Agent,
                plan_state: PlanState::Inactive
            },
            permission_mode: PermissionMode::Ask,
            target: TargetPermissionMode::Ask,
        }
    );
}

#[test]
fn every_identity_field_is_checked() {
    let (view, approval) = pending_view();
    let mutations: [(&str, Mutation); 6] = [
        ("proposalId", |r| r.proposal_id = "x".into()),
        ("sessionId", |r| r.session_id = "x".into()),
        ("turnId", |r| r.turn_id = "x".into()),
        ("toolCallId", |r| r.tool_call_id = "x".into()),
        ("version", |r| r.version = Some(2)),
        ("artifactSha256", |r| r.artifact_sha256 = Some("x".into())),
    ];
    for (field, mutate) in mutations {
        let mut req = request(ApprovalAction::Approve);
        mutate(&mut req);
        assert_eq!(
            resolve(&view, &approval, &req, Timestamp(0)),
            Err(CoreError::ApprovalStale { field }),
        );
    }
}

#[test]
fn the_digest_is_compared_as_hex_whatever_its_case() {
    let (view, approval) = pending_view();
    let mut req = request(ApprovalAction::Approve);
    req.artifact_sha256 = Some(approval.artifact_sha256.to_ascii_uppercase());
    assert!(matches!(
        resolve(&view, &approval, &req, Timestamp(0)),
        Ok(Resolution::Approve { .. })
    ));
}

#[test]
fn deadline_is_exclusive() {
    let (view, approval) = pending_view();
    let req = request(ApprovalAction::Approve);
    let just_in = resolve(&view, &approval, &req, Timestamp(APPROVAL_TTL_MS - 1)).unwrap();
    assert!(matches!(just_in, Resolution::Approve { .. }));
    let late = resolve(&view, &approval, &req, Timestamp(APPROVAL_TTL_MS + 1)).unwrap();
    assert!(matches!(late, Resolution::Expire { .. }));
    assert_eq!(expire(&approval, Timestamp(APPROVAL_TTL_MS - 1)), None);
    assert!(expire(&approval, Timestamp(APPROVAL_TTL_MS)).is_some());
}

#[test]
fn reject_stays_in_plan_and_takes_no_permission_mode() {
    let (view, approval) = pending_view();
    let got = resolve(
        &view,
        &approval,
        &request(ApprovalAction::Reject),
        Timestamp(0),
    )
    .unwrap();
    assert_eq!(
        got,
        Resolution::Reject {
            state: SessionState {
                mode: Mode::Plan,
                plan_state: PlanState::Stopped
            }
        }
    );
    let mut with_mode = request(ApprovalAction::Reject);
    with_mode.target_permission_mode = Some(TargetPermissionMode::Auto);
    assert_eq!(
        resolve(&view, &approval, &with_mode, Timestamp(0)).map_err(|e| e.code().as_str()),
        Err("PLAN_RESOLVE_INVALID")
    );
}

#[test]
fn configuration_only_while_idle() {
    let (view, _) = pending_view();
    assert_eq!(
        configure(&view),
        Err(CoreError::ConfigWhileBusy(Blocker::PendingApproval))
    );
    assert_eq!(
        set_mode(&in_turn(Mode::Agent, TurnOrigin::User), Mode::Plan)
            .map_err(|e| e.code().as_str()),
        Err("SESSION_NOT_IDLE")
    );
    assert!(configure(&idle(Mode::Agent)).is_ok());
}

#[test]
fn abort_interrupts_the_approval_raised_in_that_turn() {
    let (mut view, _) = pending_view();
    view.active_turn = Some(ActiveTurn {
        id: "t".into(),
        origin: TurnOrigin::User,
    });
    let close = abort_turn(&view, &"t".into()).unwrap();
    assert_eq!(
        close.interrupt_approval.as_ref().map(ProposalId::as_str),
        Some("p")
    );
    assert_eq!(close.state.plan_state, PlanState::Stopped);
    assert_eq!(close.state.mode, Mode::Plan);
}

#[test]
fn execution_claim_and_finish_rules() {
    let mut view = idle(Mode::Agent);
    view.execution = Some(LiveExecution {
        id: "e".into(),
        state: ExecutionState::Queued,
        turn_id: None,
    });
    assert!(claim_execution(&view, &"e".into()).is_ok());
    assert_eq!(
        claim_execution(&view, &"x".into()).map_err(|e| e.code().as_str()),
        Err("EXECUTION_NOT_FOUND")
    );
    assert_eq!(
        finish_execution(&view, &"e".into(), ExecutionOutcome::Completed)
            .map_err(|e| e.code().as_str()),
        Err("EXECUTION_STATE_INVALID")
    );
    assert!(finish_execution(&view, &"e".into(), ExecutionOutcome::Interrupted).is_ok());
}

#[test]
fn enter_plan_while_awaiting_approval_is_refused() {
    // Found by the property test: it used to reset awaiting_approval to planning.
    let (mut view, _) = pending_view();
    view.active_turn = Some(ActiveTurn {
        id: "t".into(),
        origin: TurnOrigin::User,
    });
    assert_eq!(
        enter_plan(&view, &"t".into(), ALONE).map_err(|e| e.code().as_str()),
        Err("PLAN_APPROVAL_ALREADY_PENDING")
    );
}

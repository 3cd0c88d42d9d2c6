//! The service's actor expires a pending approval once its deadline passes, and not before —
//! driven through the public [`Service`] with a manual clock and `poke`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use planhost_core::{
    APPROVAL_TTL_MS, ApprovalStatus, ErrorCode, EventBody, Interactivity, ManualClock, Mode,
    PlanState, ProposalId, Role,
};
use planhost_protocol::{
    BeginTurnParams, EndTurnParams, InitializeParams, OpenSessionParams, PROTOCOL_VERSION,
    ProposalRef, ServerNotification, SessionRef, SetModeParams, SubmitPlanParams, TurnOutcome,
    methods,
};

use super::fixture::T0;
use crate::{Notifications, Service, ServiceConfig};

fn expired_in(notes: &[ServerNotification]) -> Vec<ProposalId> {
    notes
        .iter()
        .filter_map(|n| match n {
            ServerNotification::StateChanged(e) => match &e.body {
                EventBody::ApprovalChanged {
                    proposal_id,
                    status: ApprovalStatus::Expired,
                    ..
                } => Some(proposal_id.clone()),
                _ => None,
            },
            ServerNotification::ToolOutput(_)
            | ServerNotification::ToolActivity(_)
            | ServerNotification::HostStopping(_) => None,
        })
        .collect()
}

/// Every notification that arrives within `window`.
async fn collect_for(notes: &mut Notifications, window: Duration) -> Vec<ServerNotification> {
    let mut out = Vec::new();
    let until = tokio::time::Instant::now() + window;
    while let Ok(Some(note)) = tokio::time::timeout_at(until, notes.recv()).await {
        out.push(note);
    }
    out
}

#[test]
fn actor_expires_at_the_deadline_not_before() {
    super::fixture::block_on(async {
        let state = tempfile::tempdir().unwrap();
        let workspace = tempfile::tempdir().unwrap();
        let clock = Arc::new(ManualClock::new(T0));
        let config = ServiceConfig {
            clock: clock.clone(),
            ..ServiceConfig::new(state.path())
        };
        let service = Service::start(config).unwrap().service;
        let hello = InitializeParams {
            protocol_version: PROTOCOL_VERSION,
            client_name: "timer-test".into(),
            client_version: None,
            roles: vec![Role::Agent, Role::Approver],
            tool_activity: false,
            events: planhost_protocol::EventScope::All,
            agent_process: None,
        };
        let (conn, mut notes, _) = service.connect(&hello, crate::Peer::Embedded).unwrap();

        // Plan mode, a turn, a submitted plan, the turn ended: one pending approval.
        let session = conn
            .call::<methods::SessionsOpen>(OpenSessionParams {
                workspace_root: workspace.path().display().to_string(),
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
        let turn = conn
            .call::<methods::TurnsBegin>(BeginTurnParams {
                session_id: session.id.clone(),
                origin: None,
            })
            .await
            .unwrap();
        let a = conn
            .call::<methods::PlansSubmit>(SubmitPlanParams {
                session_id: session.id.clone(),
                turn_id: turn.id.clone(),
                tool_call_id: "call-1".into(),
                batch_index: 0,
                batch_size: 1,
                title: "Add login".into(),
                markdown: "# Plan\n1. do it\n".into(),
                question: "Shall I implement this?".into(),
                branch_path: None,
            })
            .await
            .unwrap();
        conn.call::<methods::TurnsEnd>(EndTurnParams {
            session_id: session.id.clone(),
            turn_id: turn.id.clone(),
            outcome: TurnOutcome::Completed,
        })
        .await
        .unwrap();
        assert_eq!(a.status, ApprovalStatus::Pending);
        assert_eq!(a.expires_at, T0.plus_ms(APPROVAL_TTL_MS));
        while notes.try_recv().is_some() {}

        clock.advance_ms(APPROVAL_TTL_MS - 1);
        service.poke();
        // Each poke re-checks; nothing may expire a millisecond early.
        let early = collect_for(&mut notes, Duration::from_millis(300)).await;
        assert!(expired_in(&early).is_empty(), "expired before its deadline");
        let get = |id: ProposalId| ProposalRef { proposal_id: id };
        let detail = conn
            .call::<methods::PlansGet>(get(a.proposal_id.clone()))
            .await
            .unwrap();
        assert_eq!(detail.approval.status, ApprovalStatus::Pending);

        clock.advance_ms(1);
        service.poke();
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut expired = Vec::new();
        while expired.is_empty() && Instant::now() < deadline {
            expired = expired_in(&collect_for(&mut notes, Duration::from_millis(100)).await);
        }
        assert_eq!(
            expired,
            vec![a.proposal_id.clone()],
            "expired within 10 s of the deadline"
        );
        let s = conn
            .call::<methods::SessionsGet>(SessionRef {
                session_id: session.id.clone(),
            })
            .await
            .unwrap();
        assert_eq!((s.mode, s.plan_state), (Mode::Plan, PlanState::Stopped));
        let row = conn
            .call::<methods::PlansGet>(get(a.proposal_id.clone()))
            .await
            .unwrap()
            .approval;
        assert_eq!(
            (row.status, row.error_code),
            (
                ApprovalStatus::Expired,
                Some(ErrorCode::PlanApprovalTimeout)
            )
        );
        conn.close();
        service.shutdown();
    });
}

//! The expiry timer expires a pending approval once its deadline passes, and not before.

use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;

use planhost_core::{APPROVAL_TTL_MS, ApprovalStatus, Mode, PlanState};
use planhost_host::ExpiryTimer;

use crate::fixture::*;

#[test]
fn timer_expires_at_the_deadline_not_before() {
    let mut f = Fixture::new();
    let a = f.pending();
    let clock = f.clock.clone();
    let host = Arc::new(Mutex::new(f.host.take().unwrap()));
    let (tx, rx) = mpsc::channel();
    let timer = ExpiryTimer::start(
        host.clone(),
        Box::new(move |expired| tx.send(expired).unwrap()),
    )
    .unwrap();

    clock.advance_ms(APPROVAL_TTL_MS - 1);
    timer.poke();
    // The timer re-checks on every poke; give it a generous window to (wrongly) expire.
    assert!(
        rx.recv_timeout(Duration::from_millis(300)).is_err(),
        "expired before its deadline"
    );
    assert_eq!(
        host.lock()
            .unwrap()
            .store()
            .approval(&a.proposal_id)
            .unwrap()
            .status,
        ApprovalStatus::Pending
    );

    clock.advance_ms(1);
    timer.poke();
    let expired = rx
        .recv_timeout(Duration::from_secs(10))
        .expect("expired within 10 s of the deadline");
    assert_eq!(expired.len(), 1);
    assert_eq!(expired[0].proposal_id, a.proposal_id);
    assert_eq!(
        expired[0].error_code.as_deref(),
        Some("PLAN_APPROVAL_TIMEOUT")
    );
    drop(timer);
    let mut host = host.lock().unwrap();
    let s = host.store().session(&a.session_id).unwrap();
    assert_eq!((s.mode, s.plan_state), (Mode::Plan, PlanState::Stopped));
    let events = host.store().take_events();
    assert!(events.iter().any(|e| matches!(
        &e.body,
        planhost_core::EventBody::ApprovalChanged {
            status: ApprovalStatus::Expired,
            ..
        }
    )));
}

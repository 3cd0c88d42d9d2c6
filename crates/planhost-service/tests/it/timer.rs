//! The host actor expires a pending approval once its deadline passes, and not before.

use std::sync::mpsc;
use std::time::Duration;

use planhost_core::{APPROVAL_TTL_MS, ApprovalStatus, EventBody, Mode, PlanState};
use planhost_host::spawn_host;

use crate::fixture::*;

fn expired_in(events: &[planhost_core::Event]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match &e.body {
            EventBody::ApprovalChanged {
                proposal_id,
                status: ApprovalStatus::Expired,
                ..
            } => Some(proposal_id.clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn actor_expires_at_the_deadline_not_before() {
    let mut f = Fixture::new();
    let a = f.pending();
    let clock = f.clock.clone();
    let (tx, rx) = mpsc::channel();
    let (handle, thread) = spawn_host(f.host.take().unwrap(), move |events| {
        let _ = tx.send(events);
    })
    .unwrap();

    clock.advance_ms(APPROVAL_TTL_MS - 1);
    handle.poke();
    // Each poke re-checks; nothing may expire a millisecond early.
    let early: Vec<_> = rx
        .recv_timeout(Duration::from_millis(300))
        .into_iter()
        .flatten()
        .collect();
    assert!(expired_in(&early).is_empty(), "expired before its deadline");
    let id = a.proposal_id.clone();
    let status = handle
        .call_blocking(move |h| h.store().approval(&id).unwrap().status)
        .unwrap();
    assert_eq!(status, ApprovalStatus::Pending);

    clock.advance_ms(1);
    handle.poke();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let mut expired = Vec::new();
    while expired.is_empty() && std::time::Instant::now() < deadline {
        if let Ok(events) = rx.recv_timeout(Duration::from_millis(100)) {
            expired = expired_in(&events);
        }
    }
    assert_eq!(
        expired,
        vec![a.proposal_id.clone()],
        "expired within 10 s of the deadline"
    );
    let session = a.session_id.clone();
    let s = handle
        .call_blocking(move |h| h.store().session(&session).unwrap())
        .unwrap();
    assert_eq!((s.mode, s.plan_state), (Mode::Plan, PlanState::Stopped));
    drop(handle);
    thread.join();
}

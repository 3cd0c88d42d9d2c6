//! `plans.changes` on plans an agent controls (issue 17's outside attack: two plans that share
//! no line made a plain Myers diff take 44 s per page load at 128 KiB). Each row submits two
//! plans in one session through the in-process client and times `plans.changes` of the second:
//! the first call (the diff is made, on a blocking thread) and the second (kept).
//!
//! Run: `cargo bench -p planhost-service --bench diff`. Figures go to docs/reliability.md.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use std::sync::Arc;
use std::time::Instant;

use planhost_core::{ApprovalAction, Interactivity, ManualClock, Mode, Role, SessionId, Timestamp};
use planhost_protocol::{
    ApprovalInfo, BeginTurnParams, EndTurnParams, InitializeParams, OpenSessionParams,
    PROTOCOL_VERSION, ProposalRef, ResolvePlanParams, SetModeParams, SubmitPlanParams, TurnOutcome,
    methods,
};
use planhost_service::host::{Host, HostConfig};
use planhost_service::{Connection, Peer};

async fn submit(
    conn: &Connection,
    session: &SessionId,
    call: &str,
    markdown: String,
) -> ApprovalInfo {
    let turn = conn
        .call::<methods::TurnsBegin>(BeginTurnParams {
            session_id: session.clone(),
            origin: None,
        })
        .await
        .unwrap();
    let a = conn
        .call::<methods::PlansSubmit>(SubmitPlanParams {
            session_id: session.clone(),
            turn_id: turn.id.clone(),
            tool_call_id: call.into(),
            batch_index: 0,
            batch_size: 1,
            title: "Bench".into(),
            markdown,
            question: "Go?".into(),
            branch_path: None,
        })
        .await
        .unwrap();
    conn.call::<methods::PlansResolve>(ResolvePlanParams {
        proposal_id: a.proposal_id.clone(),
        session_id: session.clone(),
        turn_id: turn.id.clone(),
        tool_call_id: call.into(),
        version: None,
        artifact_sha256: None,
        action: ApprovalAction::Reject,
        target_permission_mode: None,
        feedback: None,
    })
    .await
    .unwrap();
    conn.call::<methods::TurnsEnd>(EndTurnParams {
        session_id: session.clone(),
        turn_id: turn.id,
        outcome: TurnOutcome::Completed,
    })
    .await
    .unwrap();
    a
}

fn lines(tag: &str, bytes: usize) -> String {
    let mut text = String::new();
    let mut i = 0;
    while text.len() + 64 < bytes {
        text.push_str(&format!(
            "{tag} line {i:08} of a plan that shares nothing\n"
        ));
        i += 1;
    }
    text
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let state = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let mut config = HostConfig::new(state.path());
    config.clock = Some(Arc::new(ManualClock::new(Timestamp(1_764_460_800_000))));
    let host = Host::start(config).unwrap();
    let big = planhost_core::MAX_PLAN_BYTES;
    let small_edit = {
        let base = lines("a", big);
        let edited = base.replacen("a line 00001000", "a line 0000100X", 1);
        (base, edited)
    };
    let rows: Vec<(&str, String, String)> = vec![
        (
            "128 KiB, no shared line (the attack)",
            lines("a", 128 * 1024),
            lines("b", 128 * 1024),
        ),
        ("4 MiB, no shared line", lines("a", big), lines("b", big)),
        ("4 MiB, one line changed", small_edit.0, small_edit.1),
    ];
    rt.block_on(async {
        let hello = InitializeParams {
            protocol_version: PROTOCOL_VERSION,
            client_name: "bench".into(),
            client_version: None,
            roles: vec![Role::Agent, Role::Approver, Role::Observer],
            tool_activity: false,
            events: planhost_protocol::EventScope::All,
            agent_process: None,
        };
        let (conn, _events, _) = host.service().connect(&hello, Peer::Embedded).unwrap();
        for (n, (label, before, after)) in rows.into_iter().enumerate() {
            let session = conn
                .call::<methods::SessionsOpen>(OpenSessionParams {
                    agent: None,
                    workspace_root: workspace.path().display().to_string(),
                    external_id: Some(format!("bench-{n}")),
                    interactivity: Interactivity::Interactive,
                    persistence: None,
                })
                .await
                .unwrap();
            conn.call::<methods::SessionsSetMode>(SetModeParams {
                session_id: session.id.clone(),
                mode: Mode::Plan,
            })
            .await
            .unwrap();
            submit(&conn, &session.id, "c1", before).await;
            let second = submit(&conn, &session.id, "c2", after).await;
            let mut times = Vec::new();
            let mut status = String::new();
            for _ in 0..2 {
                let started = Instant::now();
                let changes = conn
                    .call::<methods::PlansChanges>(ProposalRef {
                        proposal_id: second.proposal_id.clone(),
                    })
                    .await
                    .unwrap();
                times.push(started.elapsed());
                let d = &changes.bases[0].diff;
                status = format!(
                    "{} (+{} -{}, {} hunks)",
                    d.status.as_str(),
                    d.inserted,
                    d.deleted,
                    d.hunks.len()
                );
            }
            println!(
                "{label}: first {:.1} ms, kept {:.2} ms: {status}",
                times[0].as_secs_f64() * 1e3,
                times[1].as_secs_f64() * 1e3
            );
        }
        conn.close();
    });
    host.shutdown();
}

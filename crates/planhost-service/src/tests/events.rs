//! `initialize`'s `events`: an `own` connection gets the notifications of the sessions it
//! opened and nothing of the others; an `all` connection gets every session's.

use std::time::Duration;

use planhost_core::{Interactivity, Mode, Role, SessionId};
use planhost_protocol::{
    EventScope, InitializeParams, OpenSessionParams, PROTOCOL_VERSION, ServerNotification,
    SetModeParams, methods,
};

use crate::{Connection, Notifications, Service, ServiceConfig};

fn hello(name: &str, events: EventScope) -> InitializeParams {
    InitializeParams {
        protocol_version: PROTOCOL_VERSION,
        client_name: name.into(),
        client_version: None,
        roles: vec![Role::Agent, Role::Approver, Role::Observer],
        tool_activity: false,
        events,
        agent_process: None,
    }
}

async fn open(conn: &Connection, root: &std::path::Path, external: &str) -> SessionId {
    conn.call::<methods::SessionsOpen>(OpenSessionParams {
        workspace_root: root.display().to_string(),
        external_id: Some(external.into()),
        interactivity: Interactivity::Interactive,
        persistence: None,
        agent: None,
    })
    .await
    .unwrap()
    .id
}

/// The sessions of the `state.changed` notifications that arrive within a short window.
async fn sessions_notified(notes: &mut Notifications) -> Vec<SessionId> {
    let mut out = Vec::new();
    let until = tokio::time::Instant::now() + Duration::from_millis(200);
    while let Ok(Some(note)) = tokio::time::timeout_at(until, notes.recv()).await {
        if let ServerNotification::StateChanged(e) = note {
            out.push(e.session_id);
        }
    }
    out
}

#[test]
fn an_own_connection_hears_only_the_sessions_it_opened() {
    super::fixture::block_on(async {
        let state = tempfile::tempdir().unwrap();
        let workspace = tempfile::tempdir().unwrap();
        let service = Service::start(ServiceConfig::new(state.path()))
            .unwrap()
            .service;
        let (a, mut a_notes, _) = service
            .connect(&hello("agent-a", EventScope::Own), crate::Peer::Embedded)
            .unwrap();
        let (b, mut b_notes, _) = service
            .connect(&hello("agent-b", EventScope::Own), crate::Peer::Embedded)
            .unwrap();
        let (_watcher, mut all_notes, _) = service
            .connect(&hello("page", EventScope::All), crate::Peer::Embedded)
            .unwrap();
        let sa = open(&a, workspace.path(), "a").await;
        let sb = open(&b, workspace.path(), "b").await;
        let _ = sessions_notified(&mut a_notes).await;
        let _ = sessions_notified(&mut b_notes).await;
        let _ = sessions_notified(&mut all_notes).await;

        for (conn, session) in [(&a, &sa), (&b, &sb)] {
            conn.call::<methods::SessionsSetMode>(SetModeParams {
                session_id: session.clone(),
                mode: Mode::Plan,
            })
            .await
            .unwrap();
        }
        let heard_a = sessions_notified(&mut a_notes).await;
        let heard_b = sessions_notified(&mut b_notes).await;
        let heard_all = sessions_notified(&mut all_notes).await;
        assert!(
            !heard_a.is_empty() && heard_a.iter().all(|s| s == &sa),
            "{heard_a:?}"
        );
        assert!(
            !heard_b.is_empty() && heard_b.iter().all(|s| s == &sb),
            "{heard_b:?}"
        );
        assert!(
            heard_all.contains(&sa) && heard_all.contains(&sb),
            "{heard_all:?}"
        );
        // A change made by another connection to a session `a` opened reaches `a`.
        b.call::<methods::SessionsSetMode>(SetModeParams {
            session_id: sa.clone(),
            mode: Mode::Agent,
        })
        .await
        .unwrap();
        assert!(
            sessions_notified(&mut a_notes).await.contains(&sa),
            "a hears its own session changed by another"
        );
        assert!(sessions_notified(&mut b_notes).await.is_empty());
    });
}

//! Live updates on `/events` (server-sent events): one event a committed state change or tool
//! call, from which the page refetches only what it shows. The stream ends when the service
//! drops its connection, when the host stops, or when the token is rotated.

use std::sync::Arc;

use axum::extract::State;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use planhost_core::Role;
use planhost_protocol::{InitializeParams, PROTOCOL_VERSION, ServerNotification};

use super::guard::{Visitor, same};
use super::{CLIENT_NAME, Shared, internal};

/// Live updates: one `change` event per committed state change (the page then refetches what it
/// shows). The stream holds a connection of its own, dropped with the stream.
/// How often an open event stream checks that its token is still the current one.
const TOKEN_RECHECK: std::time::Duration = std::time::Duration::from_secs(5);

pub(super) async fn events(visitor: Visitor, State(web): Shared) -> Response {
    let hello = InitializeParams {
        protocol_version: PROTOCOL_VERSION,
        client_name: CLIENT_NAME.into(),
        client_version: Some(env!("CARGO_PKG_VERSION").into()),
        roles: vec![Role::Observer],
        tool_activity: true,
        events: planhost_protocol::EventScope::All,
        agent_process: None,
    };
    let (conn, notes, _) = match web.svc.connect(&hello, planhost_service::Peer::Embedded) {
        Ok(c) => c,
        Err(e) => return internal(e),
    };
    let state = (conn, notes, Arc::clone(&web), visitor.token);
    let stream = futures_util::stream::unfold(state, |(conn, mut notes, web, token)| async move {
        // The service drops a connection that stops reading: end the stream then, so the page
        // sees the loss and reconnects instead of showing a stale "live". A rotated token ends
        // it too (the page's reconnect is then refused).
        let closed = conn.closed_token();
        loop {
            let note = tokio::select! {
                () = closed.cancelled() => return None,
                () = tokio::time::sleep(TOKEN_RECHECK) => {
                    if !same(&web.token(), &token) {
                        return None;
                    }
                    continue;
                }
                note = notes.recv() => note,
            };
            // `change` carries the event (the page refetches only what its kind touches);
            // `tools` a tool call's new state (the page refetches the sessions).
            let (name, data) = match note {
                Some(ServerNotification::StateChanged(event)) => {
                    ("change", serde_json::to_string(&event))
                }
                Some(ServerNotification::ToolActivity(activity)) => {
                    ("tools", serde_json::to_string(&activity))
                }
                Some(ServerNotification::ToolOutput(_)) => continue,
                // The host is stopping: the page sees the stream end and says it lost the host.
                Some(ServerNotification::HostStopping(_)) | None => return None,
            };
            let e = Event::default().event(name).data(data.unwrap_or_default());
            return Some((
                Ok::<_, std::convert::Infallible>(e),
                (conn, notes, web, token),
            ));
        }
    });
    Sse::new(stream)
        .keep_alive(KeepAlive::default())
        .into_response()
}

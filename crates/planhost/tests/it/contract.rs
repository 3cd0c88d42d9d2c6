//! One contract behind every transport: an embedding app's in-process client and a client on the
//! real socket get the same deny for Write in Plan, the same ask for Bash under `accept-edits`,
//! and the same events.

use std::sync::Arc;

use planhost_core::{Interactivity, Mode, PermissionMode, Role};
use planhost_protocol::{
    AuthorizeParams, BeginTurnParams, ConfigureParams, EndTurnParams, InitializeParams,
    OpenSessionParams, PROTOCOL_VERSION, Provenance, ServerNotification, SetModeParams,
    TurnOutcome, methods,
};
use planhost_service::{Service, ServiceConfig};
use planhost_test_support::host::params;
use serde_json::{Value, json};

use crate::support::*;

/// What a client saw: the two decisions and the kinds of every event, in order, with their
/// fields minus ids and times.
#[derive(Debug, PartialEq)]
struct Seen {
    write_in_plan: Value,
    bash_under_accept_edits: Value,
    events: Vec<Value>,
}

/// A decision without the ids that differ between runs.
fn decision(v: Value) -> Value {
    json!({ "decision": v["decision"], "code": v["code"], "rule": v["rule"], "asks": v["requestId"].is_string() })
}

/// An event without its ids and time.
fn event(mut v: Value) -> Value {
    if let Some(map) = v.as_object_mut() {
        for key in [
            "sessionId",
            "at",
            "turnId",
            "requestId",
            "toolCallId",
            "proposalId",
        ] {
            map.remove(key);
        }
    }
    v
}

fn over_the_socket(env: &Env) -> Seen {
    let host = SocketHost::start(env);
    let mut c = host.connect("contract-socket");
    let sid = c
        .call::<methods::SessionsOpen>(params::open(&env.workspace()))
        .id;
    c.call::<methods::SessionsSetMode>(params::set_mode(&sid, Mode::Plan));
    let turn = c.call::<methods::TurnsBegin>(params::begin(&sid)).id;
    let write = c.call::<methods::ToolsAuthorize>(params::authorize(
        &sid,
        &turn,
        "w1",
        "Write",
        json!({"path": "a.txt", "content": "x"}),
    ));
    c.call::<methods::TurnsEnd>(params::end(&sid, &turn, TurnOutcome::Completed));
    c.call::<methods::SessionsSetMode>(params::set_mode(&sid, Mode::Agent));
    c.call::<methods::SessionsConfigure>(ConfigureParams {
        permission_mode: Some(PermissionMode::AcceptEdits),
        ..params::configure(&sid)
    });
    let turn = c.call::<methods::TurnsBegin>(params::begin(&sid)).id;
    let bash = c.call::<methods::ToolsAuthorize>(params::authorize(
        &sid,
        &turn,
        "b1",
        "Bash",
        json!({"command": "touch b1.txt"}),
    ));
    Seen {
        write_in_plan: decision(serde_json::to_value(write).expect("json")),
        bash_under_accept_edits: decision(serde_json::to_value(bash).expect("json")),
        events: c.events().into_iter().map(event).collect(),
    }
}

async fn in_process(env: &Env) -> Seen {
    let state = tempfile::tempdir().expect("state dir");
    let service = Service::start(ServiceConfig {
        clock: Arc::new(planhost_service::SystemClock),
        ..ServiceConfig::new(state.path())
    })
    .expect("start the service")
    .service;
    let hello = InitializeParams {
        protocol_version: PROTOCOL_VERSION,
        client_name: "contract-in-process".into(),
        client_version: None,
        roles: vec![Role::Agent, Role::Approver, Role::Observer],
        tool_activity: false,
        events: planhost_protocol::EventScope::All,
        agent_process: None,
    };
    let (conn, mut notes, _) = service
        .connect(&hello, planhost_service::Peer::Embedded)
        .expect("connect");
    let session = conn
        .call::<methods::SessionsOpen>(OpenSessionParams {
            workspace_root: env.workspace().display().to_string(),
            external_id: None,
            interactivity: Interactivity::Interactive,
            persistence: None,
            agent: None,
        })
        .await
        .expect("open");
    let sid = session.id.clone();
    let set_mode = |mode| SetModeParams {
        session_id: sid.clone(),
        mode,
    };
    conn.call::<methods::SessionsSetMode>(set_mode(Mode::Plan))
        .await
        .expect("plan");
    let begin = || BeginTurnParams {
        session_id: sid.clone(),
        origin: None,
    };
    let turn = conn
        .call::<methods::TurnsBegin>(begin())
        .await
        .expect("turn");
    let authorize =
        |turn: &planhost_protocol::TurnInfo, call: &str, tool: &str, input| AuthorizeParams {
            session_id: sid.clone(),
            turn_id: turn.id.clone(),
            tool_call_id: call.into(),
            tool_name: tool.into(),
            batch_index: 0,
            batch_size: 1,
            provenance: Provenance::built_in(),
            input,
        };
    let write = conn
        .call::<methods::ToolsAuthorize>(authorize(
            &turn,
            "w1",
            "Write",
            json!({"path": "a.txt", "content": "x"}),
        ))
        .await
        .expect("authorize Write");
    conn.call::<methods::TurnsEnd>(EndTurnParams {
        session_id: sid.clone(),
        turn_id: turn.id.clone(),
        outcome: TurnOutcome::Completed,
    })
    .await
    .expect("end");
    conn.call::<methods::SessionsSetMode>(set_mode(Mode::Agent))
        .await
        .expect("agent");
    conn.call::<methods::SessionsConfigure>(ConfigureParams {
        session_id: sid.clone(),
        permission_mode: Some(PermissionMode::AcceptEdits),
        shell_id: None,
        policy_preset: None,
        provider: None,
        model: None,
    })
    .await
    .expect("configure");
    let turn = conn
        .call::<methods::TurnsBegin>(begin())
        .await
        .expect("turn");
    let bash = conn
        .call::<methods::ToolsAuthorize>(authorize(
            &turn,
            "b1",
            "Bash",
            json!({"command": "touch b1.txt"}),
        ))
        .await
        .expect("authorize Bash");
    let mut events = Vec::new();
    while let Some(note) = notes.try_recv() {
        if let ServerNotification::StateChanged(e) = note {
            events.push(event(serde_json::to_value(e).expect("event")));
        }
    }
    conn.close();
    service.shutdown();
    Seen {
        write_in_plan: decision(serde_json::to_value(write).expect("json")),
        bash_under_accept_edits: decision(serde_json::to_value(bash).expect("json")),
        events,
    }
}

#[test]
fn the_in_process_client_and_the_socket_get_the_same_contract() {
    let env = home();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let local = runtime.block_on(in_process(&env));
    let remote = over_the_socket(&env);
    assert_eq!(local.write_in_plan["decision"], "deny", "{local:?}");
    assert_eq!(local.write_in_plan["code"], "POLICY_PLAN_WRITE_DENIED");
    assert_eq!(local.bash_under_accept_edits["decision"], "ask");
    assert_eq!(local.bash_under_accept_edits["asks"], true);
    assert!(
        local.events.iter().any(|e| e["kind"] == "permissionAsked"),
        "{local:?}"
    );
    pretty_assertions::assert_eq!(local, remote);
}

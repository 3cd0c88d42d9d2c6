//! The approver lineage rule at the handshake: who may declare `approver`, by the peer process
//! the transport names. This test process is the "host" (its children are under it).

use std::sync::Arc;

use planhost_core::{ErrorCode, ManualClock, Role, Timestamp};
use planhost_protocol::{InitializeParams, PROTOCOL_VERSION};

use crate::{Peer, Service, ServiceConfig};

fn hello(roles: &[Role]) -> InitializeParams {
    InitializeParams {
        protocol_version: PROTOCOL_VERSION,
        client_name: "peer-test".into(),
        client_version: None,
        roles: roles.to_vec(),
        tool_activity: false,
        events: planhost_protocol::EventScope::All,
        agent_process: None,
    }
}

fn refusal(service: &Service, roles: &[Role], peer: Peer) -> Option<(ErrorCode, String)> {
    service
        .connect(&hello(roles), peer)
        .err()
        .map(|e| (e.code(), e.to_string()))
}

#[test]
fn a_peer_under_an_agent_is_refused_the_approver_role_and_nothing_else() {
    let state = tempfile::tempdir().unwrap();
    let config = ServiceConfig {
        clock: Arc::new(ManualClock::new(Timestamp(0))),
        ..ServiceConfig::new(state.path())
    };
    let service = Service::start(config).unwrap().service;
    let me = std::process::id() as i32;
    let approver = &[Role::Approver, Role::Observer][..];

    // In process, and this very process (no agent above it): as declared.
    assert_eq!(refusal(&service, approver, Peer::Embedded), None);
    assert_eq!(refusal(&service, approver, Peer::Process(Some(me))), None);
    // A peer the kernel did not name: unknown, refused.
    let (code, _) = refusal(&service, approver, Peer::Process(None)).unwrap();
    assert_eq!(code, ErrorCode::RoleApproverRefused);

    // A child of the host (a run's, or an orphan of one): refused as approver, fine as observer.
    let mut child = std::process::Command::new("sleep")
        .arg("30")
        .stdin(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let kid = Peer::Process(Some(child.id() as i32));
    let (code, message) = refusal(&service, approver, kid).unwrap();
    assert_eq!(code, ErrorCode::RoleApproverRefused);
    assert!(
        message.starts_with(&format!(
            "this process runs under an agent (pid {}, a run of this host",
            child.id()
        )),
        "{message}"
    );
    assert!(
        message.contains("answer from your own terminal"),
        "{message}"
    );
    assert_eq!(refusal(&service, &[Role::Observer], kid), None);
    // The web page's client, found holding its TCP connection: the same runs rule.
    let (code, _) = refusal(&service, approver, Peer::WebClient(child.id() as i32)).unwrap();
    assert_eq!(code, ErrorCode::RoleApproverRefused);
    let _ = child.kill();
    let _ = child.wait();

    // Once this process's parent holds an agent connection, this process is below an agent
    // root; the root itself stays an approver (pi is agent and dialog).
    let parent = std::os::unix::process::parent_id() as i32;
    let pi = &[Role::Agent, Role::Approver][..];
    assert_eq!(refusal(&service, pi, Peer::Process(Some(parent))), None);
    assert_eq!(
        refusal(&service, approver, Peer::Process(Some(parent))),
        None
    );
    let (code, message) = refusal(&service, approver, Peer::Process(Some(me))).unwrap();
    assert_eq!(code, ErrorCode::RoleApproverRefused);
    assert!(
        message.contains(&format!("(pid {parent}, an agent connected to this host)")),
        "{message}"
    );
    // Agent roots do not apply to the web page's client: only this host's runs do.
    assert_eq!(refusal(&service, approver, Peer::WebClient(me)), None);
    service.shutdown();
}

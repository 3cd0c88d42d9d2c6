//! Asks: the policy asks a person, any surface answers once, and only then does the call run.

use planhost_core::{AuditAction, HostTool, Interactivity, PermissionDecision, PermissionMode};
use planhost_protocol::{AuditEntry, DecisionKind, ResolvePermissionParams, methods};
use planhost_test_support::host::params;
use pretty_assertions::assert_eq;
use serde_json::json;

use crate::steps::*;
use crate::support::*;

#[test]
fn an_ask_blocks_execution_until_a_person_allows_it_once() {
    let env = home();
    let host = SocketHost::start(&env);
    let mut agent = host.connect("e2e-agent");
    let mut approver = host.connect("e2e-approver");
    let sid = agent.open_session(&env.workspace(), Interactivity::Interactive);
    agent.set_permission_mode(&sid, PermissionMode::Ask);
    let turn = agent.begin_turn(&sid);

    let ask = agent.authorize_input(
        &sid,
        &turn,
        "bash-1",
        "Bash",
        json!({ "command": "touch ran.txt && echo ran" }),
    );
    assert_eq!(ask.decision, DecisionKind::Ask, "{ask:?}");
    let request = ask.request_id.clone().expect("requestId");
    let bash = params::execute(
        &sid,
        &turn,
        "bash-1",
        HostTool::Bash,
        json!({ "command": "touch ran.txt && echo ran" }),
    );

    // Unanswered: the call may not run.
    let early = agent.call_err::<methods::ToolsExecute>(bash.clone());
    assert_refused(&early, "TOOL_NOT_AUTHORIZED");

    approver.wait_event("permissionAsked", sid.as_str(), |e| {
        e["kind"] == "permissionAsked"
            && e["requestId"] == request.as_str()
            && e["toolName"] == "Bash"
    });
    let open = approver.open_asks();
    assert_eq!(open.len(), 1, "{open:?}");
    assert_eq!(open[0].request_id, request, "{open:?}");
    let answered = approver.call::<methods::PermissionsResolve>(ResolvePermissionParams {
        request_id: request.clone(),
        decision: PermissionDecision::Allow,
        note: Some("looks fine".into()),
    });
    assert_eq!(answered.decision, Some(PermissionDecision::Allow));
    assert_eq!(answered.tool_call_id, "bash-1");
    assert!(approver.open_asks().is_empty());

    let twice = approver.call_err::<methods::PermissionsResolve>(ResolvePermissionParams {
        request_id: request.clone(),
        decision: PermissionDecision::Deny,
        note: None,
    });
    assert_refused(&twice, "PERMISSION_ALREADY_RESOLVED");

    let ran = agent.call::<methods::ToolsExecute>(bash.clone());
    assert_eq!(
        params::bash_of(&ran.output).run.exit,
        planhost_core::ExitStatus::Code(0),
        "{ran:?}"
    );
    // One allow, one run.
    let again = agent.call_err::<methods::ToolsExecute>(bash);
    assert_refused(&again, "TOOL_NOT_AUTHORIZED");

    agent.wait_event("permissionResolved", sid.as_str(), |e| {
        e["kind"] == "permissionResolved"
            && e["requestId"] == request.as_str()
            && e["decision"] == "allow"
    });
    let audit = poll_until("the audit rows of the ask", BOUND, || {
        let rows: Vec<AuditEntry> = approver
            .audit(&sid)
            .into_iter()
            .filter(|e| e.detail["requestId"] == request.as_str())
            .collect();
        (rows.len() >= 2).then_some(rows)
    });
    let actions: Vec<AuditAction> = audit.iter().map(|e| e.action).collect();
    assert!(actions.contains(&AuditAction::ToolAsk), "{actions:?}");
    assert!(
        actions.contains(&AuditAction::ToolAskAnswered),
        "{actions:?}"
    );
    let answer = audit
        .iter()
        .find(|e| e.action == AuditAction::ToolAskAnswered)
        .unwrap();
    assert_eq!(answer.detail["decision"], "allow");
    assert_eq!(answer.detail["note"], "looks fine");
    assert_eq!(answer.tool_call_id, Some("bash-1".into()));
}

#[test]
fn a_denied_ask_never_runs() {
    let env = home();
    let host = SocketHost::start(&env);
    let mut agent = host.connect("e2e-agent");
    let mut approver = host.connect("e2e-approver");
    let sid = agent.open_session(&env.workspace(), Interactivity::Interactive);
    agent.set_permission_mode(&sid, PermissionMode::Ask);
    let turn = agent.begin_turn(&sid);
    let ask = agent.authorize_input(
        &sid,
        &turn,
        "write-1",
        "Write",
        json!({ "path": "never.txt", "content": "x" }),
    );
    assert_eq!(ask.decision, DecisionKind::Ask, "{ask:?}");
    let request = ask.request_id.unwrap();
    let denied = approver.call::<methods::PermissionsResolve>(ResolvePermissionParams {
        request_id: request,
        decision: PermissionDecision::Deny,
        note: None,
    });
    assert_eq!(denied.decision, Some(PermissionDecision::Deny));
    let refused = agent.call_err::<methods::ToolsExecute>(params::execute(
        &sid,
        &turn,
        "write-1",
        HostTool::Write,
        json!({ "path": "never.txt", "content": "x" }),
    ));
    assert_refused(&refused, "TOOL_NOT_AUTHORIZED");
    assert!(!env.workspace().join("never.txt").exists());
}

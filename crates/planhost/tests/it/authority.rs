//! The host stays the authority between `tools.authorize` and `tools.execute`: a grant is bound
//! to its input, re-checked against the durable state, and pinned to its turn's policy.

use planhost_core::{
    AuditAction, HostTool, Interactivity, Mode, PermissionDecision, PermissionMode,
    TargetPermissionMode,
};
use planhost_protocol::{
    AuditFilter, DecisionKind, ResolvePermissionParams, SettingsPatch, methods,
};
use planhost_test_support::host::params;
use serde_json::json;

use crate::steps::*;
use crate::support::*;

fn write_input(name: &str) -> serde_json::Value {
    json!({ "path": name, "content": "x\n" })
}

#[test]
fn a_grant_does_not_survive_entering_plan_mode_in_the_same_turn() {
    let env = home();
    let host = SocketHost::start(&env);
    let mut c = host.connect("agent");
    let sid = c.open_session(&env.workspace(), Interactivity::Interactive);
    c.set_permission_mode(&sid, PermissionMode::AcceptEdits);
    let turn = c.begin_turn(&sid);
    let allowed = c.authorize_input(&sid, &turn, "w1", "Write", write_input("pwned.txt"));
    assert_eq!(allowed.decision, DecisionKind::Allow);
    c.call::<methods::PlansEnter>(params::enter(&sid, &turn, "enter"));
    let e = c.call_err::<methods::ToolsExecute>(params::execute(
        &sid,
        &turn,
        "w1",
        HostTool::Write,
        write_input("pwned.txt"),
    ));
    assert!(
        matches!(
            stable(&e),
            Some("TOOL_NOT_AUTHORIZED" | "POLICY_PLAN_WRITE_DENIED")
        ),
        "{e:?}"
    );
    assert!(!env.workspace().join("pwned.txt").exists());

    // An ask answered after the switch does not let the Write through either.
    c.end_turn(&sid, &turn);
    c.set_mode(&sid, Mode::Agent);
    c.set_permission_mode(&sid, PermissionMode::Ask);
    let turn = c.begin_turn(&sid);
    let ask = c.authorize_input(&sid, &turn, "w2", "Write", write_input("pwned2.txt"));
    assert_eq!(ask.decision, DecisionKind::Ask);
    c.call::<methods::PlansEnter>(params::enter(&sid, &turn, "enter2"));
    c.call::<methods::PermissionsResolve>(ResolvePermissionParams {
        request_id: ask.request_id.expect("requestId"),
        decision: PermissionDecision::Allow,
        note: None,
    });
    let e = c.call_err::<methods::ToolsExecute>(params::execute(
        &sid,
        &turn,
        "w2",
        HostTool::Write,
        write_input("pwned2.txt"),
    ));
    assert_eq!(stable(&e), Some("POLICY_PLAN_WRITE_DENIED"), "{e:?}");
    assert!(!env.workspace().join("pwned2.txt").exists());
}

#[test]
fn the_executed_input_must_be_the_authorized_one() {
    let env = home();
    let host = SocketHost::start(&env);
    let mut c = host.connect("agent");
    let sid = c.open_session(&env.workspace(), Interactivity::Interactive);
    c.set_permission_mode(&sid, PermissionMode::Ask);
    let turn = c.begin_turn(&sid);
    let ask = c.authorize_input(&sid, &turn, "w1", "Write", write_input("shown.txt"));
    assert_eq!(ask.decision, DecisionKind::Ask);
    let pending = c.open_asks();
    assert_eq!(
        pending[0].input["path"], "shown.txt",
        "the person sees what is asked"
    );
    c.call::<methods::PermissionsResolve>(ResolvePermissionParams {
        request_id: ask.request_id.expect("requestId"),
        decision: PermissionDecision::Allow,
        note: None,
    });
    let e = c.call_err::<methods::ToolsExecute>(params::execute(
        &sid,
        &turn,
        "w1",
        HostTool::Write,
        write_input("other.txt"),
    ));
    assert_eq!(stable(&e), Some("TOOL_NOT_AUTHORIZED"), "{e:?}");
    assert!(!env.workspace().join("other.txt").exists());
}

#[test]
fn a_host_default_change_does_not_reach_a_running_turn() {
    let env = home();
    let host = SocketHost::start(&env);
    let mut c = host.connect("agent");
    let sid = c.open_session(&env.workspace(), Interactivity::Interactive);
    let turn = c.begin_turn(&sid);
    let before = c.authorize(&sid, &turn, "b1", "Bash");
    assert_eq!(before.decision, DecisionKind::Ask);
    c.call::<methods::SettingsSet>(SettingsPatch {
        default_permission_mode: Some(Some(TargetPermissionMode::Auto)),
        default_shell: None,
        default_policy_preset: None,
    });
    let during = c.authorize(&sid, &turn, "b2", "Bash");
    assert_eq!(
        during.decision,
        DecisionKind::Ask,
        "the turn keeps the policy it started with"
    );
    c.end_turn(&sid, &turn);
    let next = c.begin_turn(&sid);
    let after = c.authorize(&sid, &next, "b3", "Bash");
    assert_eq!(
        after.decision,
        DecisionKind::Allow,
        "the next turn picks the new default up"
    );
}

#[test]
fn an_execute_sent_just_before_the_connection_closes_is_cancelled() {
    let env = home();
    let host = SocketHost::start(&env);
    let mut c = host.connect("agent");
    let sid = c.open_session(&env.workspace(), Interactivity::Interactive);
    c.set_permission_mode(&sid, PermissionMode::Auto);
    let turn = c.begin_turn(&sid);
    let input = json!({ "command": "echo $$ > pid.txt; exec sleep 600" });
    c.authorize_input(&sid, &turn, "s1", "Bash", input.clone());
    c.send::<methods::ToolsExecute>(params::execute(&sid, &turn, "s1", HostTool::Bash, input));
    c.close();
    // Whether the host cancelled it before the spawn or killed it after, the call ends on its
    // own (it would otherwise run for 600 s) and leaves no process behind.
    let mut watcher = host.connect("watcher");
    poll_until(
        "the call to end",
        std::time::Duration::from_secs(20),
        || {
            let audit = watcher.call::<methods::AuditList>(AuditFilter {
                session_id: Some(sid.clone()),
                limit: Some(50),
            });
            audit
                .items
                .iter()
                .any(|e| {
                    e.action == AuditAction::ToolExecuted
                        && e.tool_call_id.as_ref().is_some_and(|id| id == "s1")
                })
                .then_some(())
        },
    );
    if let Ok(pid) = fs_err::read_to_string(env.workspace().join("pid.txt")) {
        let pid = pid.trim();
        poll_until(
            "the command to be gone",
            std::time::Duration::from_secs(10),
            || (!std::path::Path::new(&format!("/proc/{pid}")).exists()).then_some(()),
        );
    }
}

//! Process trees: when the client that runs a command goes away, or anyone cancels the call, the
//! whole tree dies — including a child that escaped into its own session with `setsid`.

use planhost_core::{AuditAction, HostTool, Interactivity, PermissionMode, SessionId, TurnId};
use planhost_protocol::{CancelParams, DecisionKind, Empty, HealthStatus, RequestId, methods};
use planhost_test_support::host::params;
use pretty_assertions::assert_eq;
use serde_json::json;

use crate::steps::*;
use crate::support::*;

/// Prints the shell's pid, an escapee's (own session) and a plain child's, then waits.
const TREE: &str =
    r#"echo "sh $$"; setsid sleep 600 & echo "esc $!"; sleep 600 & echo "fg $!"; wait"#;

/// An Agent/auto session with a running turn in which Bash `call` is authorized.
fn ready_for_bash(c: &mut Conn, env: &Env, call: &str) -> (SessionId, TurnId) {
    let sid = c.open_session(&env.workspace(), Interactivity::Interactive);
    c.set_permission_mode(&sid, PermissionMode::Auto);
    let turn = c.begin_turn(&sid);
    let allowed = c.authorize_input(&sid, &turn, call, "Bash", json!({ "command": TREE }));
    assert_eq!(allowed.decision, DecisionKind::Allow, "{allowed:?}");
    (sid, turn)
}

/// The pid printed after `label` on a line of its own, once the whole line arrived.
fn printed(stdout: &str, label: &str) -> Option<i32> {
    stdout
        .split_inclusive('\n')
        .filter(|l| l.ends_with('\n'))
        .find_map(|l| l.trim_end().strip_prefix(label)?.trim().parse().ok())
}

/// Starts the tree without waiting for the result; returns the request id and the pids the
/// command printed (shell, escapee, child), read from the streamed stdout. The pids are also
/// handed to `leftovers`, so that a failing test still kills them.
fn start_tree(
    c: &mut Conn,
    sid: &SessionId,
    turn: &TurnId,
    call: &str,
    leftovers: &mut Leftovers,
) -> (RequestId, Vec<i32>) {
    let id = c.send::<methods::ToolsExecute>(params::execute(
        sid,
        turn,
        call,
        HostTool::Bash,
        json!({ "command": TREE }),
    ));
    let pids = c.wait_until("the tree's pids on stdout", |notes| {
        let out = streamed(notes, call, "stdout");
        ["sh ", "esc ", "fg "]
            .iter()
            .map(|label| printed(&out, label))
            .collect::<Option<Vec<i32>>>()
    });
    leftovers.0.extend(&pids);
    for pid in &pids {
        assert!(alive(*pid), "pid {pid} should be running");
    }
    (id, pids)
}

#[test]
fn a_client_that_disconnects_mid_bash_has_its_tree_killed() {
    let env = home();
    let host = SocketHost::start(&env);
    let mut leftovers = Leftovers::default();
    let mut agent = host.connect("e2e-doomed");
    let mut other = host.connect("e2e-survivor");
    let (sid, turn) = ready_for_bash(&mut agent, &env, "bash-1");
    let (_, pids) = start_tree(&mut agent, &sid, &turn, "bash-1", &mut leftovers);

    agent.close();
    wait_gone(&pids);
    // The host itself is fine and the others' connections too.
    assert_eq!(
        other.call::<methods::AppHealth>(Empty {}).status,
        HealthStatus::Ok
    );
    let executed = poll_until("the tool.executed audit row", BOUND, || {
        other.audit(&sid).into_iter().find(|e| {
            e.action == AuditAction::ToolExecuted && e.tool_call_id == Some("bash-1".into())
        })
    });
    assert_eq!(executed.detail["tool"], "Bash", "{executed:?}");
}

#[test]
fn tools_cancel_from_another_client_kills_the_tree() {
    let env = home();
    let host = SocketHost::start(&env);
    let mut leftovers = Leftovers::default();
    let mut agent = host.connect("e2e-agent");
    let mut approver = host.connect("e2e-canceller");
    let (sid, turn) = ready_for_bash(&mut agent, &env, "bash-1");
    let (id, pids) = start_tree(&mut agent, &sid, &turn, "bash-1", &mut leftovers);

    let cancel = CancelParams {
        session_id: sid.clone(),
        tool_call_id: "bash-1".into(),
    };
    let cancelled = approver.call::<methods::ToolsCancel>(cancel.clone());
    assert!(cancelled.cancelled);
    let result = agent.result_of::<methods::ToolsExecute>(&id);
    assert!(params::bash_of(&result.output).run.cancelled, "{result:?}");
    wait_gone(&pids);
    // Nothing runs under that id any more.
    assert!(!approver.call::<methods::ToolsCancel>(cancel).cancelled);
    // The agent's connection still works.
    assert_eq!(
        agent.call::<methods::AppHealth>(Empty {}).status,
        HealthStatus::Ok
    );
}

#[test]
fn closing_stdin_of_serve_stdio_mid_bash_kills_the_tree() {
    let env = home();
    let mut leftovers = Leftovers::default();
    let (mut host, mut agent) = StdioHost::start(&env);
    let (sid, turn) = ready_for_bash(&mut agent, &env, "bash-1");
    let (_, pids) = start_tree(&mut agent, &sid, &turn, "bash-1", &mut leftovers);

    agent.close();
    wait_gone(&pids);
    let status = host.child.wait_exit("serve --stdio to exit");
    assert!(
        status.success(),
        "{status}; stderr:\n{}",
        host.stderr.text()
    );
    host.assert_stdout_is_protocol();
}

/// Orphans itself, moves itself into the host's own cgroup, clears its environment, prints its
/// pid and where it is, and sleeps (issue 10, defect 2).
const ESCAPE: &str = r#"( env -i /bin/bash -c 'echo $$ > "$1/cgroup.procs" || exit 1
    echo "esc $$"; grep "^0::" /proc/$$/cgroup; exec sleep 600' _ "$BASE" & )
  sleep 0.5; echo done"#;

#[test]
fn a_descendant_that_leaves_its_cgroup_and_clears_its_environment_dies_with_its_bash_call() {
    use planhost_test_support::capability;
    let test =
        "a_descendant_that_leaves_its_cgroup_and_clears_its_environment_dies_with_its_bash_call";
    // Without cgroup v2 there is nothing to escape from; without root a command cannot leave
    // its run cgroup.
    let Some(base) = capability::cgroup2(test) else {
        return;
    };
    if !capability::root(test) {
        return;
    }
    let env = home();
    let mut leftovers = Leftovers::default();
    let host = SocketHost::start(&env);
    let mut c = host.connect("e2e-escape");
    let sid = c.open_session(&env.workspace(), Interactivity::Interactive);
    c.set_permission_mode(&sid, PermissionMode::Auto);
    let turn = c.begin_turn(&sid);
    let command = format!("BASE='{}'\n{ESCAPE}", base.display());
    let input = json!({ "command": command });
    let allowed = c.authorize_input(&sid, &turn, "x1", "Bash", input.clone());
    assert_eq!(allowed.decision, DecisionKind::Allow, "{allowed:?}");
    let result =
        c.call::<methods::ToolsExecute>(params::execute(&sid, &turn, "x1", HostTool::Bash, input));
    // The result as JSON text: its output's strings keep their escapes (`\n`).
    let text = serde_json::to_string(&result).unwrap();
    let pid = text
        .split("esc ")
        .nth(1)
        .and_then(|rest| rest.split(|ch: char| !ch.is_ascii_digit()).next())
        .and_then(|p| p.parse::<i32>().ok())
        .unwrap_or_else(|| panic!("the escapee did not start: {text}"));
    leftovers.0.push(pid);
    let cgroup = text
        .split("0::")
        .nth(1)
        .and_then(|rest| rest.split('\\').next())
        .unwrap_or_default();
    assert!(!cgroup.contains("planhost-"), "it did not leave: {text}");
    assert!(text.contains("done"), "{text}");
    // The call's result came back: by then every process of the run is dead, this one too.
    assert!(!alive(pid), "escapee {pid} outlived its Bash call: {text}");
}

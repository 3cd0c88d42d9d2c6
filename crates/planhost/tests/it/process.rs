//! Process trees: when the client that runs a command goes away, or anyone cancels the call, the
//! whole tree dies — including a child that escaped into its own session with `setsid`.

use planhost_protocol::RequestId;
use pretty_assertions::assert_eq;
use serde_json::json;

use crate::steps::*;
use crate::support::*;

/// Prints the shell's pid, an escapee's (own session) and a plain child's, then waits.
const TREE: &str =
    r#"echo "sh $$"; setsid sleep 600 & echo "esc $!"; sleep 600 & echo "fg $!"; wait"#;

/// An Agent/auto session with a running turn in which Bash `call` is authorized.
fn ready_for_bash(c: &mut Conn, env: &Env, call: &str) -> (String, String) {
    let sid = open_session(c, &env.workspace(), "interactive");
    c.call_json(
        "sessions.configure",
        json!({ "sessionId": sid, "permissionMode": "auto" }),
    );
    let turn = begin_turn(c, &sid);
    let allowed = authorize_input(c, &sid, &turn, call, "Bash", json!({ "command": TREE }));
    assert_eq!(allowed["decision"], "allow", "{allowed}");
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
    sid: &str,
    turn: &str,
    call: &str,
    leftovers: &mut Leftovers,
) -> (RequestId, Vec<i32>) {
    let id = c.send_json(
        "tools.execute",
        execute_params(sid, turn, call, "Bash", json!({ "command": TREE })),
    );
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
    assert_eq!(other.call_json("app.health", json!({}))["status"], "ok");
    let executed = poll_until("the tool.executed audit row", BOUND, || {
        let entries = other.call_json("audit.list", json!({ "sessionId": sid }));
        items(&entries)
            .iter()
            .find(|e| e["action"] == "tool.executed" && e["toolCallId"] == "bash-1")
            .cloned()
    });
    assert_eq!(executed["detail"]["tool"], "Bash", "{executed}");
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

    let cancel = json!({ "sessionId": sid, "toolCallId": "bash-1" });
    let cancelled = approver.call_json("tools.cancel", cancel.clone());
    assert_eq!(cancelled["cancelled"], true);
    let response = agent.response_to(&id);
    let result = response.result.expect("a result for a cancelled call");
    assert_eq!(result["output"]["cancelled"], true, "{result}");
    wait_gone(&pids);
    // Nothing runs under that id any more.
    assert_eq!(
        approver.call_json("tools.cancel", cancel)["cancelled"],
        false
    );
    // The agent's connection still works.
    assert_eq!(agent.call_json("app.health", json!({}))["status"], "ok");
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
    let sid = open_session(&mut c, &env.workspace(), "interactive");
    c.call_json(
        "sessions.configure",
        json!({ "sessionId": sid, "permissionMode": "auto" }),
    );
    let turn = begin_turn(&mut c, &sid);
    let command = format!("BASE='{}'\n{ESCAPE}", base.display());
    let input = json!({ "command": command });
    let allowed = authorize_input(&mut c, &sid, &turn, "x1", "Bash", input.clone());
    assert_eq!(allowed["decision"], "allow", "{allowed}");
    let result = c.call_json(
        "tools.execute",
        execute_params(&sid, &turn, "x1", "Bash", input),
    );
    let text = result.to_string();
    let pid = text
        .split("esc ")
        .nth(1)
        .and_then(|rest| rest.split(|ch: char| !ch.is_ascii_digit()).next())
        .and_then(|p| p.parse::<i32>().ok())
        .unwrap_or_else(|| panic!("the escapee did not start: {result}"));
    leftovers.0.push(pid);
    let cgroup = text
        .split("0::")
        .nth(1)
        .and_then(|rest| rest.split('\\').next())
        .unwrap_or_default();
    assert!(!cgroup.contains("planhost-"), "it did not leave: {result}");
    assert!(text.contains("done"), "{result}");
    // The call's result came back: by then every process of the run is dead, this one too.
    assert!(
        !alive(pid),
        "escapee {pid} outlived its Bash call: {result}"
    );
}

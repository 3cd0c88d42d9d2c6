//! Declared roles against proven lineage, with real processes on the real socket: a process
//! that runs under an agent — a run of this host (the agent's Bash), or a child of a process
//! that holds an `agent` connection — is refused the `approver` role with
//! `ROLE_APPROVER_REFUSED`, and the plan stays pending. Reads keep working from there, and a
//! person's terminal elsewhere still approves.

use planhost_core::Role;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::cli::{cli, cli_child};
use crate::steps::*;
use crate::support::*;

/// The approval as the host has it now.
fn approval(c: &mut Conn, proposal: &str) -> Value {
    c.call_json("plans.get", json!({ "proposalId": proposal }))["approval"].clone()
}

/// Waits for the audit row of a refused approver and returns it (its `detail` an object).
fn refused_row(c: &mut Conn) -> Value {
    poll_until("the refused approver's audit row", BOUND, || {
        let audit = c.call_json("audit.list", json!({ "limit": 10_000 }));
        items(&audit)
            .iter()
            .find(|row| row["action"] == "connection.role_refused")
            .cloned()
    })
}

fn quoted(path: &std::path::Path) -> String {
    format!("'{}'", path.display())
}

#[test]
fn the_agents_bash_cannot_approve_its_own_plan_with_the_cli() {
    let env = home();
    let host = SocketHost::start(&env);
    let mut c = host.connect("e2e-agent");
    // A plan waiting for a person.
    let planning = open_session(&mut c, &env.workspace(), "interactive");
    let (turn, pending) = submit_plan(&mut c, &planning, "Approve me yourself");
    end_turn(&mut c, &planning, &turn);
    let proposal = pending["proposalId"].as_str().unwrap().to_owned();

    // The model's Bash call, allowed without asking (permission mode auto), runs the real CLI
    // against the host's socket.
    let working = open_session(&mut c, &env.workspace(), "interactive");
    c.call_json(
        "sessions.configure",
        json!({ "sessionId": working, "permissionMode": "auto" }),
    );
    let turn = begin_turn(&mut c, &working);
    let planhost = format!(
        "'{}' --state-dir {} --socket {}",
        bin(),
        quoted(&env.state_dir()),
        quoted(&env.socket())
    );
    let command = format!(
        "{planhost} approve {proposal} --mode auto; echo \"approve exit=$?\"\n\
         {planhost} plans --pending --json >/dev/null; echo \"plans exit=$?\""
    );
    let input = json!({ "command": command });
    let allowed = authorize_input(&mut c, &working, &turn, "bash-1", "Bash", input.clone());
    assert_eq!(allowed["decision"], "allow", "{allowed}");
    let result = c.call_json(
        "tools.execute",
        execute_params(&working, &turn, "bash-1", "Bash", input),
    );
    let text = result.to_string();
    assert!(
        text.contains(
            "planhost: error ROLE_APPROVER_REFUSED: this process runs under an agent (pid "
        ),
        "{result}"
    );
    assert!(text.contains("a run of this host"), "{result}");
    assert!(
        text.contains("a model cannot approve its own plan: answer from your own terminal"),
        "{result}"
    );
    assert!(text.contains("approve exit=1"), "{result}");
    // Reading needs no approver: the same Bash call lists the plans.
    assert!(text.contains("plans exit=0"), "{result}");

    // Nothing changed, and the attempt is on record.
    let now = approval(&mut c, &proposal);
    assert_eq!(now["status"], "pending", "{now}");
    assert_eq!(now["version"], pending["version"], "{now}");
    let row = refused_row(&mut c);
    let detail = &row["detail"];
    assert_eq!(detail["client"], "planhost-cli", "{row}");
    assert_eq!(detail["code"], "ROLE_APPROVER_REFUSED", "{row}");
    assert_eq!(detail["why"], "run_marker", "{row}");
}

#[test]
fn a_child_of_an_agent_process_cannot_approve_and_a_person_elsewhere_can() {
    let env = home();
    let host = SocketHost::start(&env);
    // This test process holds an agent connection (it is the agent, as pi is: agent and
    // approver), so every process it starts runs under an agent.
    let mut agent = host.connect_as("e2e-pi", &[Role::Agent, Role::Approver, Role::Observer]);
    let sid = open_session(&mut agent, &env.workspace(), "interactive");
    let (turn, pending) = submit_plan(&mut agent, &sid, "Approve me from a child");
    end_turn(&mut agent, &sid, &turn);
    let proposal = pending["proposalId"].as_str().unwrap().to_owned();

    let child = cli_child(&env, &["approve", &proposal, "--mode", "auto"]);
    assert_eq!(child.code, Some(1), "{child:#?}");
    assert!(
        child.stderr.contains(&format!(
            "planhost: error ROLE_APPROVER_REFUSED: this process runs under an agent (pid {}, an agent connected to this host)",
            std::process::id()
        )),
        "{child:#?}"
    );
    // Reads work from there.
    let list = cli_child(&env, &["plans", "--pending", "--json"]).json();
    assert_eq!(items(&list).len(), 1, "{list}");
    assert_eq!(approval(&mut agent, &proposal)["status"], "pending");
    let row = refused_row(&mut agent);
    let detail = &row["detail"];
    assert_eq!(detail["why"], "agent_root", "{row}");
    assert_eq!(detail["byPid"], std::process::id(), "{row}");

    // The agent process itself still answers (pi is also the person's dialog) — not tried
    // here, the roles tests do — and a person's terminal, which is no descendant of it,
    // approves: the same command, double-forked past this process.
    let person = cli(&env, &["approve", &proposal, "--mode", "auto"]).ok();
    assert!(person.stdout.starts_with("approved "), "{person:#?}");
    let now = approval(&mut agent, &proposal);
    assert_eq!(now["status"], "approved", "{now}");
    assert_eq!(now["resolvedBy"]["client"], "planhost-cli", "{now}");
}

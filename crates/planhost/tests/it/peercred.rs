//! Declared roles against proven lineage, with real processes on the real socket: a process
//! that runs under an agent — a run of this host (the agent's Bash), or a child of a process
//! that holds an `agent` connection — is refused the `approver` role with
//! `ROLE_APPROVER_REFUSED`, and the plan stays pending. Reads keep working from there, and a
//! person's terminal elsewhere still approves.

use planhost_core::{
    ApprovalStatus, AuditAction, HostTool, Interactivity, PermissionMode, ProposalId, Role,
};
use planhost_protocol::{
    ApprovalInfo, AuditEntry, AuditFilter, DecisionKind, ProposalRef, methods,
};
use planhost_test_support::host::params;
use pretty_assertions::assert_eq;
use serde_json::json;

use crate::cli::{cli, cli_child};
use crate::steps::*;
use crate::support::*;

/// The approval as the host has it now.
fn approval(c: &mut Conn, proposal: &ProposalId) -> ApprovalInfo {
    c.call::<methods::PlansGet>(ProposalRef {
        proposal_id: proposal.clone(),
    })
    .approval
}

/// Waits for the audit row of a refused approver and returns it (its `detail` an object).
fn refused_row(c: &mut Conn) -> AuditEntry {
    poll_until("the refused approver's audit row", BOUND, || {
        c.call::<methods::AuditList>(AuditFilter {
            session_id: None,
            limit: Some(10_000),
        })
        .items
        .into_iter()
        .find(|row| row.action == AuditAction::RoleRefused)
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
    let planning = c.open_session(&env.workspace(), Interactivity::Interactive);
    let (turn, pending) = c.submit_plan(&planning, "Approve me yourself");
    c.end_turn(&planning, &turn);
    let proposal = pending.proposal_id.clone();

    // The model's Bash call, allowed without asking (permission mode auto), runs the real CLI
    // against the host's socket.
    let working = c.open_session(&env.workspace(), Interactivity::Interactive);
    c.set_permission_mode(&working, PermissionMode::Auto);
    let turn = c.begin_turn(&working);
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
    let allowed = c.authorize_input(&working, &turn, "bash-1", "Bash", input.clone());
    assert_eq!(allowed.decision, DecisionKind::Allow, "{allowed:?}");
    let result = c.call::<methods::ToolsExecute>(params::execute(
        &working,
        &turn,
        "bash-1",
        HostTool::Bash,
        input,
    ));
    let text = serde_json::to_string(&result).unwrap();
    assert!(
        text.contains(
            "planhost: error ROLE_APPROVER_REFUSED: this process runs under an agent (pid "
        ),
        "{text}"
    );
    assert!(text.contains("a run of this host"), "{text}");
    assert!(
        text.contains("a model cannot approve its own plan: answer from your own terminal"),
        "{text}"
    );
    assert!(text.contains("approve exit=1"), "{text}");
    // Reading needs no approver: the same Bash call lists the plans.
    assert!(text.contains("plans exit=0"), "{text}");

    // Nothing changed, and the attempt is on record.
    let now = approval(&mut c, &proposal);
    assert_eq!(now.status, ApprovalStatus::Pending, "{now:?}");
    assert_eq!(now.version, pending.version, "{now:?}");
    let row = refused_row(&mut c);
    let detail = &row.detail;
    assert_eq!(detail["client"], "planhost-cli", "{row:?}");
    assert_eq!(detail["code"], "ROLE_APPROVER_REFUSED", "{row:?}");
    assert_eq!(detail["why"], "run_marker", "{row:?}");
}

#[test]
fn a_child_of_an_agent_process_cannot_approve_and_a_person_elsewhere_can() {
    let env = home();
    let host = SocketHost::start(&env);
    // This test process holds an agent connection (it is the agent, as pi is: agent and
    // approver), so every process it starts runs under an agent.
    let mut agent = host.connect_as("e2e-pi", &[Role::Agent, Role::Approver, Role::Observer]);
    let sid = agent.open_session(&env.workspace(), Interactivity::Interactive);
    let (turn, pending) = agent.submit_plan(&sid, "Approve me from a child");
    agent.end_turn(&sid, &turn);
    let proposal = pending.proposal_id.clone();

    let child = cli_child(&env, &["approve", proposal.as_str(), "--mode", "auto"]);
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
    assert_eq!(
        approval(&mut agent, &proposal).status,
        ApprovalStatus::Pending
    );
    let row = refused_row(&mut agent);
    let detail = &row.detail;
    assert_eq!(detail["why"], "agent_root", "{row:?}");
    assert_eq!(detail["byPid"], std::process::id(), "{row:?}");

    // The agent process itself still answers (pi is also the person's dialog) — not tried
    // here, the roles tests do — and a person's terminal, which is no descendant of it,
    // approves: the same command, double-forked past this process.
    let person = cli(&env, &["approve", proposal.as_str(), "--mode", "auto"]).ok();
    assert!(person.stdout.starts_with("approved "), "{person:#?}");
    let now = approval(&mut agent, &proposal);
    assert_eq!(now.status, ApprovalStatus::Approved, "{now:?}");
    assert_eq!(
        now.resolved_by.as_ref().map(|by| by.client.as_str()),
        Some("planhost-cli"),
        "{now:?}"
    );
}

/// The shape of Claude Code: the agent (here `sh`, standing in for `claude`) holds no
/// connection of its own; a hook it runs connects for one event and names it
/// (`agentProcess`, from `CLAUDE_PID`). From then on a command the agent runs — the model's
/// Bash — is refused the approver role, although it is the hook's sibling, not its child.
/// Without the hook, the same command from the same kind of process approves: the refusal is
/// the declaration's doing.
#[test]
fn a_hook_makes_its_agent_a_root_so_the_agents_commands_cannot_approve() {
    let env = home();
    let host = SocketHost::start(&env);
    let mut c = host.connect("e2e-agent");
    let planning = c.open_session(&env.workspace(), Interactivity::Interactive);
    let (turn, pending) = c.submit_plan(&planning, "Approve me from beside the hook");
    c.end_turn(&planning, &turn);
    let id = pending.proposal_id.as_str().to_owned();
    let event = json!({
        "session_id": "cc-session-1",
        "cwd": env.workspace().display().to_string(),
        "hook_event_name": "SessionStart",
        "source": "startup",
    })
    .to_string();
    let base = format!(
        "{} --state-dir {} --socket {}",
        quoted(std::path::Path::new(bin())),
        quoted(&env.state_dir()),
        quoted(&env.socket())
    );
    // `sh` plays Claude Code: its hook runs with CLAUDE_PID=$$, then it runs the model's
    // command. Detached, so that nothing of this test (an agent root itself) is above it.
    let script = format!(
        "printf '%s' '{event}' | CLAUDE_PID=$$ {base} hook claude-code >/dev/null && {base} approve {id}"
    );
    let mut sh = std::process::Command::new("sh");
    sh.arg("-c").arg(&script);
    let run = planhost_test_support::run_detached(&sh, BOUND);
    assert_ne!(run.code, Some(0), "the model's command approved: {run:?}");
    assert!(
        run.stderr.contains("ROLE_APPROVER_REFUSED"),
        "refused as below an agent: {run:?}"
    );
    assert_eq!(
        approval(&mut c, &pending.proposal_id).status,
        ApprovalStatus::Pending
    );
    let row = refused_row(&mut c);
    assert_eq!(row.detail["why"], "agent_root", "{row:?}");

    // A hook cannot name a process far above it (init: everything runs under it).
    let mut stranger = host.connect_raw();
    let error = stranger
        .try_call::<methods::Initialize>(planhost_protocol::InitializeParams {
            protocol_version: planhost_protocol::PROTOCOL_VERSION,
            client_name: "e2e-hook".into(),
            client_version: None,
            roles: vec![Role::Agent],
            tool_activity: false,
            events: planhost_protocol::EventScope::All,
            agent_process: Some(1),
        })
        .unwrap_err();
    assert_refused(&error, "AGENT_PROCESS_INVALID");

    // The control: the same command from a process no hook named approves.
    let person = cli(&env, &["approve", &id]);
    assert_eq!(person.code, Some(0), "{person:?}");
}

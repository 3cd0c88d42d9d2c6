//! DESIGN decision 14 with real Claude Code: no process its Bash started can approve a plan —
//! backgrounded, `nohup`, `setsid`, double-forked, or left behind — because planhost runs that
//! Bash itself (the hook routes it through `planhost-hook run`): every such process is one of
//! the host's runs, refused the approver role (audited as an attempt), and what a command
//! leaves behind dies with it.

use planhost_core::{Agent, ApprovalStatus, AuditAction, Role};
use planhost_protocol::{AgentEvent, AgentEventParams, AuditFilter, PlansFilter, methods};
use planhost_test_support::Reply;
use planhost_test_support::host::Served;
use serde_json::json;

use crate::harness::{Fixture, planhost_bin, text};

/// A plan waiting for a person, in a session of its own (another agent's, as on a shared
/// machine): returns its id.
fn a_waiting_plan(host: &Served, fx: &Fixture) -> String {
    let mut agent = host.connect_as("e2e-other-agent", &[Role::Agent]);
    let event = |event: AgentEvent| AgentEventParams {
        agent: Agent::Pi,
        external_session_id: "other-agent-session".into(),
        workspace_root: fx.workspace().display().to_string(),
        attended: true,
        persistence: None,
        branch_path: None,
        agent_config_dir: None,
        event,
    };
    agent.call::<methods::AgentEvent>(event(AgentEvent::PromptSubmitted {
        agent_mode: None,
        handoff_token: None,
    }));
    agent.call::<methods::AgentEvent>(event(AgentEvent::ToolProposed {
        call_id: "enter".into(),
        tool: "EnterPlanMode".into(),
        input: json!({}),
        batch_index: None,
        batch_size: None,
        provenance: None,
        cwd: None,
    }));
    let offered = agent.call::<methods::AgentEvent>(event(AgentEvent::PlanOffered {
        call_id: "submit".into(),
        markdown: "# Plan: other\n\n1. x\n".into(),
        title: None,
        question: None,
        batch_index: None,
        batch_size: None,
    }));
    let approval = offered.approval.expect("the plan waits");
    assert_eq!(approval.status, ApprovalStatus::Pending);
    approval.proposal_id.as_str().to_owned()
}

/// Each way a command can leave a process behind, trying `planhost approve` on a waiting plan
/// while its command still runs (refused, on record) or after it ended (killed with it first).
#[test]
fn nothing_the_agents_bash_started_can_approve() {
    let fx = Fixture::new();
    fx.setup();
    let host = Served::start(&fx.dirs);
    // Agent mode under `auto`: Claude Code's commands all run, unasked.
    let out = fx.planhost(&["mode", "auto"]);
    assert!(out.status.success(), "{}", text(&out));
    let id = a_waiting_plan(&host, &fx);
    let p = planhost_bin();
    let approve = format!("'{p}' approve {id} --mode auto");
    let variants = [
        (
            "background",
            format!("({approve} > bg.out 2>&1 &); sleep 3"),
        ),
        (
            "nohup",
            format!("nohup {approve} > nohup.out 2>&1 & sleep 3"),
        ),
        (
            "setsid",
            format!("setsid -f sh -c \"{approve} > setsid.out 2>&1\"; sleep 3"),
        ),
        (
            "double fork",
            format!("( ( {approve} > double.out 2>&1 & ) & ); sleep 3"),
        ),
        // Left behind: the command ends at once; its subshell would try after it.
        (
            "left behind",
            format!("(sleep 2; {approve} > left.out 2>&1) &"),
        ),
    ];
    for (_, command) in &variants {
        fx.model
            .push(Reply::tool("Bash", json!({ "command": command })));
    }
    fx.model.push(Reply::text("Tried."));
    let run = fx.claude("try", &[]);
    // Long enough for the left-behind subshell to have tried, had it survived its command.
    std::thread::sleep(std::time::Duration::from_secs(4));
    let mut watcher = host.connect_as("e2e-watch", &[Role::Observer]);
    let plans = watcher
        .call::<methods::PlansList>(PlansFilter {
            session_id: None,
            status: None,
            limit: None,
        })
        .items;
    assert_eq!(plans.len(), 1, "{plans:#?}");
    assert_eq!(
        plans[0].status,
        ApprovalStatus::Pending,
        "never approved: {}",
        run.dump()
    );
    let ws = fx.workspace();
    for (variant, file) in [
        ("background", "bg.out"),
        ("nohup", "nohup.out"),
        ("setsid", "setsid.out"),
        ("double fork", "double.out"),
    ] {
        let said = fs_err::read_to_string(ws.join(file)).unwrap_or_default();
        assert!(
            said.contains("ROLE_APPROVER_REFUSED") && said.contains("runs under an agent"),
            "{variant}: refused, saying why: {said:?}\n{}",
            run.dump()
        );
    }
    assert!(
        !ws.join("left.out").exists(),
        "the left-behind process was ended with its command, before it could try"
    );
    let refused = watcher
        .call::<methods::AuditList>(AuditFilter {
            session_id: None,
            limit: Some(1000),
        })
        .items
        .into_iter()
        .filter(|row| row.action == AuditAction::RoleRefused)
        .filter(|row| row.detail["client"] == "planhost-cli")
        .count();
    assert_eq!(refused, 4, "each attempt is on record as refused");
}

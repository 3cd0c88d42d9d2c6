//! What a session is doing, live in real Chromium: the running turn's tool calls (allowed, then
//! running, gone once finished) and the last finished execution; and "what changed" measured
//! from the draft a person was shown before (pi's `/plan preview` calls `checkpoints.seen`).

use std::thread;

use planhost_core::{
    ApprovalAction, ApprovalStatus, CheckpointId, EntryId, ErrorCode, ExecutionOutcome,
    ExecutionState, HostTool, Mode, PermissionDecision, PermissionMode, Role, SessionId,
    TargetPermissionMode, TurnId,
};
use planhost_protocol::{
    AuthorizeResult, ConfigureParams, DecisionKind, EndExecutionParams, ExecutionRef, ProposalRef,
    ResolvePermissionParams, ResolvePlanParams, SaveCheckpointParams, SeenCheckpointParams,
    TurnOutcome, methods,
};
use serde_json::{Value, json};

use crate::browser::{Browser, browser_scenario, run_scenario};
use crate::support::{
    HostOptions, WebHost, agent, open_session, params, plan_session, resolve, session_of, submit,
};

/// (id, state) of the tool calls a scenario saw.
fn ids_and_states(calls: &Value) -> Vec<(String, String)> {
    calls
        .as_array()
        .map(|cs| {
            cs.iter()
                .map(|c| {
                    (
                        c["id"].as_str().unwrap_or_default().to_owned(),
                        c["state"].as_str().unwrap_or_default().to_owned(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

fn pair(id: &str, state: &str) -> (String, String) {
    (id.to_owned(), state.to_owned())
}

fn authorize(
    agent: &mut crate::support::Conn,
    sid: &SessionId,
    turn: &TurnId,
    call: &str,
    tool: &str,
    input: Value,
) -> AuthorizeResult {
    agent.call::<methods::ToolsAuthorize>(params::authorize(sid, turn, call, tool, input))
}

/// `checkpoints.save` of `markdown` on `branch` over revision `expected`.
fn save(
    sid: &SessionId,
    branch: &[EntryId],
    markdown: &str,
    expected: i64,
) -> SaveCheckpointParams {
    SaveCheckpointParams {
        session_id: sid.clone(),
        branch_path: branch.to_vec(),
        markdown: markdown.into(),
        expected_revision: expected,
    }
}

#[test]
fn a_sessions_tool_calls_and_last_execution_show_live_in_the_open_page() {
    let (_slot, budget) = browser_scenario();
    let host = WebHost::start(&budget);
    let mut agent = agent(&host);
    let mut person = host.connect("e2e-person", &[Role::Approver, Role::Observer]);
    let sid = open_session(&host, &mut agent);
    person.call::<methods::SessionsConfigure>(planhost_protocol::ConfigureParams {
        permission_mode: Some(PermissionMode::Ask),
        ..params::configure(&sid)
    });
    let turn = agent.call::<methods::TurnsBegin>(params::begin(&sid)).id;

    let mut browser = Browser::start(&host, "session_activity", json!({ "sessionId": sid }));
    let open = browser.checkpoint("open");
    assert_eq!(ids_and_states(&open["before"]), vec![], "{open}");

    // A Read the client runs itself: allowed until the client reports it finished.
    let read = authorize(
        &mut agent,
        &sid,
        &turn,
        "read-1",
        "Read",
        json!({ "path": "a.txt" }),
    );
    assert_eq!(read.decision, DecisionKind::Allow, "{read:?}");
    browser.resume(&json!({}));
    let allowed = browser.checkpoint("allowed");

    // Read finished; a Bash asked, allowed by the person, and running (on a connection of its own).
    let finished = agent.call::<methods::ToolsFinished>(planhost_protocol::FinishedParams {
        session_id: sid.clone(),
        turn_id: turn.clone(),
        tool_call_id: "read-1".into(),
        is_error: false,
    });
    assert!(finished.released, "{finished:?}");
    let input = json!({ "command": "touch ran.mark; sleep 4" });
    let ask = authorize(&mut agent, &sid, &turn, "bash-1", "Bash", input.clone());
    assert_eq!(ask.decision, DecisionKind::Ask, "{ask:?}");
    person.call::<methods::PermissionsResolve>(ResolvePermissionParams {
        request_id: ask.request_id.clone().expect("an ask has its id"),
        decision: PermissionDecision::Allow,
        note: None,
    });
    let mut runner = host.connect("e2e-runner", &[Role::Agent]);
    let (run_sid, run_turn) = (sid.clone(), turn.clone());
    let bash = thread::spawn(move || {
        runner.call::<methods::ToolsExecute>(params::execute(
            &run_sid,
            &run_turn,
            "bash-1",
            HostTool::Bash,
            input,
        ))
    });
    browser.resume(&json!({}));
    let running = browser.checkpoint("running");
    let ran = bash.join().expect("the Bash call's thread");
    assert_eq!(
        planhost_test_support::host::params::bash_of(&ran.output)
            .run
            .exit,
        planhost_core::ExitStatus::Code(0),
        "{ran:?}"
    );

    // The turn over, then a plan approved, claimed and completed.
    agent.call::<methods::TurnsEnd>(params::end(&sid, &turn, TurnOutcome::Completed));
    person.call::<methods::SessionsSetMode>(params::set_mode(&sid, Mode::Plan));
    let approval = submit(
        &mut agent,
        &sid,
        "submit-1",
        "Executed",
        "# Plan\n\n1. Do it.\n",
    );
    let approved = person.call::<methods::PlansResolve>(ResolvePlanParams {
        target_permission_mode: Some(TargetPermissionMode::Ask),
        ..params::resolve(&approval, ApprovalAction::Approve)
    });
    let execution = approved
        .execution_id
        .clone()
        .unwrap_or_else(|| panic!("an approval queues an execution: {approved:?}"));
    agent.call::<methods::ExecutionsClaim>(ExecutionRef {
        session_id: sid.clone(),
        execution_id: execution.clone(),
    });
    agent.call::<methods::ExecutionsEnd>(EndExecutionParams {
        session_id: sid.clone(),
        execution_id: execution.clone(),
        outcome: ExecutionOutcome::Completed,
    });
    browser.resume(&json!({}));
    let result = browser.result();

    assert!(
        result["none"].as_str().is_some_and(|t| !t.is_empty()),
        "a running turn with no calls says so: {result:#}"
    );
    assert_eq!(
        ids_and_states(&allowed["allowed"]),
        vec![pair("read-1", "allowed")],
        "{allowed:#}"
    );
    assert_eq!(allowed["allowed"][0]["name"], "Read", "{allowed:#}");
    assert!(
        allowed["allowed"][0]["since"]
            .as_str()
            .is_some_and(|t| t.ends_with('Z')),
        "{allowed:#}"
    );
    assert_eq!(
        ids_and_states(&running["running"]),
        vec![pair("bash-1", "running")],
        "the finished Read is gone, the Bash runs: {running:#}"
    );
    // How long it has run, as a clock.
    let elapsed = running["running"][0]["elapsed"]
        .as_str()
        .unwrap_or_default();
    assert!(
        elapsed.starts_with('(') && elapsed.ends_with(')') && elapsed.contains(':'),
        "{running:#}"
    );
    assert!(
        running["permissionMode"]["value"]
            .as_str()
            .is_some_and(|v| !v.is_empty())
            && running["permissionMode"]["text"]
                .as_str()
                .is_some_and(|t| !t.is_empty()),
        "the session shows its permission mode: {running:#}"
    );
    assert_eq!(
        result["last"]["executionId"],
        execution.as_str(),
        "{result:#}"
    );
    assert!(
        result["last"]["ended"]
            .as_str()
            .is_some_and(|t| t.ends_with('Z')),
        "{result:#}"
    );
    assert_eq!(
        result["toolsAfter"], 0,
        "no turn, no tool calls: {result:#}"
    );
    assert_eq!(
        result["sameDocument"], true,
        "updated without a reload: {result:#}"
    );
    assert_eq!(
        result["fetched"]["list"], 0,
        "events of one session refetch only its item: {result:#}"
    );
    assert!(result["fetched"]["item"].as_u64() > Some(0), "{result:#}");
    let session = session_of(&mut person, &sid);
    assert_eq!(
        session.last_execution.as_ref().map(|e| e.state),
        Some(ExecutionState::Completed),
        "{session:?}"
    );
    assert_eq!(session.tool_calls, [], "{session:?}");
}

#[test]
fn a_plan_card_shows_what_changed_since_the_draft_the_person_was_shown() {
    let (_slot, budget) = browser_scenario();
    let host = WebHost::start_with(
        &budget,
        HostOptions {
            test_clock: true,
            ..HostOptions::default()
        },
    );
    let mut agent = agent(&host);
    // pi's connection: the agent and the person's terminal (it marks `/plan preview` seen).
    let mut pi = host.connect("pi-planhost", &[Role::Agent, Role::Approver]);
    let sid = plan_session(&host, &mut agent);
    let first = submit(
        &mut agent,
        &sid,
        "submit-1",
        "First",
        "# Plan\n\n1. Write `out.txt`.\n2. Run the tests.\n",
    );
    assert_eq!(
        resolve(&host, &first, ApprovalAction::Reject).status,
        ApprovalStatus::Rejected
    );
    // Later, by the host's own clock: no sleep.
    host.test_clock().advance(10);

    let branch: [EntryId; 2] = ["root".into(), "e1".into()];
    let draft = "# Plan\n\n1. Write `out.txt`.\n2. Run the linter.\n3. Run the tests.\n";
    let checkpoint = agent
        .call::<methods::CheckpointsSave>(save(&sid, &branch, draft, 0))
        .checkpoint;
    // A wrong SHA-256 or another session's id is refused with its code, and marks nothing; an
    // observer shows nothing to a person, so it may not mark.
    let other = open_session(&host, &mut agent);
    let mut watcher = host.connect("e2e-watch", &[Role::Observer]);
    let seen_params = |session: &SessionId, id: CheckpointId, sha: &str| SeenCheckpointParams {
        session_id: session.clone(),
        checkpoint_id: id,
        sha256: sha.into(),
    };
    let cases = [
        (false, &sid, "00", "CHECKPOINT_NOT_FOUND"),
        (
            false,
            &other,
            checkpoint.sha256.as_str(),
            "CHECKPOINT_NOT_FOUND",
        ),
        (true, &sid, checkpoint.sha256.as_str(), "ROLE_FORBIDDEN"),
    ];
    for (as_observer, session, sha, code) in cases {
        let conn = if as_observer { &mut watcher } else { &mut pi };
        let refused = conn.call_err::<methods::CheckpointsSeen>(seen_params(
            session,
            checkpoint.checkpoint_id,
            sha,
        ));
        assert_eq!(
            refused.stable_code().map(ErrorCode::as_str),
            Some(code),
            "{session} {sha}: {refused:?}"
        );
    }
    let seen = pi.call::<methods::CheckpointsSeen>(seen_params(
        &sid,
        checkpoint.checkpoint_id,
        &checkpoint.sha256,
    ));
    assert!(seen.seen_at.is_some(), "{seen:?}");
    assert_eq!(
        seen.seen_by.as_ref().map(|by| by.client.as_str()),
        Some("pi-planhost"),
        "{seen:?}"
    );
    // Later, by the host's own clock: no sleep.
    host.test_clock().advance(10);

    // A later draft nobody was shown, then the plan.
    agent.call::<methods::CheckpointsSave>(save(&sid, &branch, "# Plan\n\nunseen\n", 1));
    let plan = "# Plan\n\n1. Write `out.txt`.\n2. Run the linter on `src/`.\n3. Run the tests.\n";
    let second = submit(&mut agent, &sid, "submit-2", "Second", plan);
    let detail = agent.call::<methods::PlansGet>(ProposalRef {
        proposal_id: second.proposal_id.clone(),
    });
    let last_seen = detail
        .last_seen
        .as_ref()
        .unwrap_or_else(|| panic!("the plan has a last seen draft: {detail:?}"));
    assert_eq!(
        last_seen.checkpoint.checkpoint_id, checkpoint.checkpoint_id,
        "{detail:?}"
    );
    assert_eq!(last_seen.markdown, draft, "{detail:?}");

    let result = run_scenario(
        &host,
        "diff_since_seen_draft",
        json!({ "approvalId": second.proposal_id }),
    );
    let has = |lines: &Value, text: &str| {
        lines.as_array().is_some_and(|ls| {
            ls.iter()
                .any(|l| l.as_str().is_some_and(|l| l.contains(text)))
        })
    };
    assert_eq!(result["open"], 1, "one diff open: {result:#}");
    assert_eq!(result["seen"]["count"], 1, "{result:#}");
    let label = result["seen"]["label"].as_str().unwrap_or_default();
    assert!(
        label.contains(&checkpoint.revision.to_string()) && label.contains("pi-planhost"),
        "the label names the revision and where it was shown: {result:#}"
    );
    assert!(
        has(&result["seen"]["inserted"], "Run the linter on `src/`."),
        "{result:#}"
    );
    assert!(
        has(&result["seen"]["deleted"], "Run the linter."),
        "{result:#}"
    );
    assert!(
        !has(&result["seen"]["inserted"], "Run the tests."),
        "a line the person already saw is not new: {result:#}"
    );
    assert_eq!(result["previous"]["count"], 1, "{result:#}");
    assert_eq!(result["previous"]["open"], false, "folded: {result:#}");
    assert!(
        has(&result["previous"]["inserted"], "Run the linter on `src/`."),
        "{result:#}"
    );
}

/// A person stops a command the host runs from the page: its process tree dies at once, the
/// agent's call ends, and the stop is on record with the page as who gave it.
#[test]
fn a_person_stops_a_running_command_from_the_page() {
    let (_slot, budget) = browser_scenario();
    let host = WebHost::start(&budget);
    let mut agent = agent(&host);
    let sid = crate::support::open_session(&host, &mut agent);
    host.connect("e2e-person", &[Role::Approver])
        .call::<methods::SessionsConfigure>(ConfigureParams {
            permission_mode: Some(PermissionMode::Auto),
            ..params::configure(&sid)
        });
    let mut runner = crate::support::agent(&host);
    let run_sid = sid.clone();
    let started = std::time::Instant::now();
    let bash = std::thread::spawn(move || {
        crate::support::run_bash(
            &mut runner,
            &run_sid,
            "long-1",
            &json!({ "command": "sleep 60" }),
        )
    });
    let browser = Browser::start(&host, "stop_running", json!({ "sessionId": sid }));
    let r = browser.result();
    assert_eq!(r["button"], "Stop", "{r:#}");
    let (_, ran) = bash.join().expect("the Bash call's thread");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(30),
        "the command was stopped, not waited for: {:?} {ran:?}",
        started.elapsed()
    );
    let audit = agent.call::<methods::AuditList>(planhost_protocol::AuditFilter {
        session_id: Some(sid.clone()),
        limit: None,
    });
    let stopped = audit
        .items
        .iter()
        .find(|row| row.action == planhost_core::AuditAction::ToolStopped)
        .unwrap_or_else(|| panic!("tool.stopped on record: {audit:?}"));
    assert_eq!(
        stopped.detail["by"]["client"], "planhost-web",
        "{stopped:?}"
    );
    assert_eq!(
        stopped
            .tool_call_id
            .as_ref()
            .map(planhost_core::ToolCallId::as_str),
        Some("long-1")
    );
}

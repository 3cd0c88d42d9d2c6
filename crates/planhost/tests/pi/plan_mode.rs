//! Issue 16: pi's Plan mode as a pi user lives it. Real pi (0.73.1 and 1.6.0), the real
//! extension, the real `planhost`, a scripted model.
//!
//! - Bash in Plan is decided by the shell classifier: `find -delete` asks (Deny first), even
//!   after an earlier plan was approved with Auto, and Deny keeps the file; `ls` runs unasked.
//! - The model knows it is planning: its tool list loses `write` and `edit` and gains the
//!   planning tools, every model call carries the Plan-mode instruction, and the execution turn
//!   frames the approved plan as approved (no "unapproved data" block).
//! - No dead ends: a dismissed approval dialog comes back with `/plan`, and a prompt while a
//!   plan waits reopens it instead of failing every tool.
//! - Connection: `pi -p` exits; a host started after pi is picked up without restarting pi; a
//!   missing binary is named at once.

use std::time::Instant;

use planhost_core::{
    ApprovalStatus, AuditAction, ExecutionState, HandoffPhase, Mode, PermissionMode, PolicyPreset,
};
use planhost_protocol::{BranchRef, PlansFilter, methods};
use serde_json::json;

use crate::harness::{Fixture, on_both_versions, planhost_bin};
use crate::plan_steps::*;
use planhost_test_support::{BOUND, ChatRequest, Last, Reply, Responder, Version, poll_until};

on_both_versions!(
    find_delete_after_an_auto_approval_asks_and_deny_keeps_the_file,
    the_model_knows_it_is_planning,
    a_dismissed_approval_is_reopened_by_plan,
    a_prompt_while_a_plan_waits_reopens_it,
    print_mode_exits,
    a_host_started_after_pi_is_picked_up,
    a_proposed_plan_is_handed_off_and_executed,
    the_agents_bash_cannot_approve_its_own_plan,
    planhost_stop_interrupts_once_and_pi_waits_for_a_person,
    a_preset_chosen_in_pi_sets_plans_tools,
    the_first_publication_names_the_session,
);

const SECOND: &str = "PHASE-TWO-7f3e";
const DELETE: &str = "find . -name victim.txt -delete";

/// SubmitPlan for the first prompt; a short text for the execution turn; in the second Plan
/// phase (`SECOND`): `find -delete`, then `ls`, then text.
fn plan_then_explore(req: &ChatRequest) -> Reply {
    if let Some(done) = req.results_of_after("bash", SECOND) {
        return match done {
            0 => Reply::tool("bash", json!({ "command": DELETE })),
            1 => Reply::tool("bash", json!({ "command": "ls" })),
            _ => Reply::text("Explored."),
        };
    }
    if req.results_of("SubmitPlan") == 0 {
        return Reply::tool(
            "SubmitPlan",
            json!({ "title": TITLE, "markdown": plan_markdown(), "question": "Shall I go ahead?" }),
        );
    }
    Reply::text("Carried out.")
}

/// (1) `find -delete` in Plan after an Auto approval asks, Deny first, and Deny keeps the file;
/// `ls` runs unasked.
fn find_delete_after_an_auto_approval_asks_and_deny_keeps_the_file(version: Version) {
    let fx = Fixture::new(version);
    fx.write("victim.txt", "keep me\n");
    let host = fx.start_host();
    let _model = Responder::start(&fx.model, plan_then_explore);
    let mut pi = fx.pi();
    let session = enter_plan(&mut pi, &host);
    let dialog = submit_and_get_dialog(&mut pi);
    pi.answer(&dialog.id, "Approve (Auto)");
    host.wait_latest_plan(&session, "execution completed", |p| {
        p.execution_state == Some(ExecutionState::Completed)
    });
    pi.wait_idle();
    let agent = host.wait_mode(&session, Mode::Agent);
    assert_eq!(agent.permission_mode, PermissionMode::Auto, "{agent:#?}");

    // The next planning phase: the Auto approval governs its execution only.
    pi.prompt("/plan");
    host.wait_mode(&session, Mode::Plan);
    pi.prompt(&format!("Look around first. {SECOND}"));
    let ask = pi.next_ui_request("the ask for find -delete", |r| {
        r.method == "select" && r.title.contains("-delete")
    });
    check(
        &pi,
        ask.options == ["Deny", "Allow"],
        &format!("the ask offers Deny first: {:?}", ask.options),
    );
    check(
        &pi,
        ask.title
            .contains("Plan mode: this command may change files (")
            && ask.title.contains(DELETE),
        &format!("the ask says why and shows the command: {:?}", ask.title),
    );
    pi.answer(&ask.id, "Deny");
    let find = pi.wait_tool_end("bash");
    blocked_with(&pi, &find, "PERMISSION_DENIED");
    let ls = pi.wait_tool_end("bash");
    check(
        &pi,
        !ls.is_error && ls.text.contains("victim.txt"),
        &format!("ls ran unasked: {ls:?}"),
    );
    pi.wait_idle();
    assert_eq!(fx.read("victim.txt").as_deref(), Some("keep me\n"));
    let dialogs = pi
        .dialogs()
        .into_iter()
        .filter(|d| d.title.contains("planhost asks"))
        .count();
    assert_eq!(dialogs, 1, "only find -delete asked: {:#?}", pi.dialogs());
    // The audit says what the classifier found.
    // The rows' detail is untyped JSON in the protocol.
    let asks = host.audit_rows(&session, AuditAction::ToolAsk);
    assert!(
        asks.iter()
            .any(|r| r.detail.to_string().contains("-delete")),
        "{asks:#?}"
    );
    let allows = host.audit_rows(&session, AuditAction::ToolAllow);
    assert!(
        allows
            .iter()
            .any(|r| r.detail["rule"] == "plan.host.shell_read_only"),
        "{allows:#?}"
    );
}

/// (2) In Plan the model's tools lose `write` and `edit` and gain the planning tools, every
/// model call carries the Plan-mode instruction, and the execution turn has no "unapproved"
/// block; the pre-Plan tools come back for it.
fn the_model_knows_it_is_planning(version: Version) {
    let fx = Fixture::new(version);
    let host = fx.start_host();
    let _model = Responder::start(&fx.model, plan_then_explore);
    let mut pi = fx.pi();
    let session = enter_plan(&mut pi, &host);
    let dialog = submit_and_get_dialog(&mut pi);
    pi.answer(&dialog.id, "Approve (Ask)");
    host.wait_latest_plan(&session, "execution completed", |p| {
        p.execution_state == Some(ExecutionState::Completed)
    });
    pi.wait_idle();
    let requests: Vec<ChatRequest> = fx
        .model
        .requests()
        .into_iter()
        .enumerate()
        .map(|(index, body)| ChatRequest { body, index })
        .collect();
    let planning: Vec<&ChatRequest> = requests
        .iter()
        .filter(|r| !r.any_user_contains(MARKER))
        .collect();
    let executing: Vec<&ChatRequest> = requests
        .iter()
        .filter(|r| r.any_user_contains(MARKER) && r.any_user_contains("approved the plan"))
        .collect();
    assert!(
        !planning.is_empty() && !executing.is_empty(),
        "{requests:#?}"
    );
    for r in &planning {
        let tools = r.offered_tools();
        assert!(
            !tools.iter().any(|t| t == "write" || t == "edit"),
            "Plan offers no writers: {tools:?}"
        );
        assert!(
            tools.iter().any(|t| t == "SubmitPlan")
                && tools.iter().any(|t| t == "update_plan_draft"),
            "Plan offers the planning tools: {tools:?}"
        );
        assert!(
            r.any_user_contains("<plan_mode>") && r.any_user_contains("SubmitPlan"),
            "every planning call carries the instruction: {:#?}",
            r.user_texts()
        );
    }
    for r in &executing {
        let tools = r.offered_tools();
        assert!(
            tools.iter().any(|t| t == "write") && tools.iter().any(|t| t == "edit"),
            "the execution gets the pre-Plan tools back: {tools:?}"
        );
        assert!(
            !r.any_user_contains("unapproved data") && !r.any_user_contains("<plan_mode>"),
            "the execution turn is not told the plan is unapproved: {:#?}",
            r.user_texts()
        );
    }
}

/// (3) Dismissing the approval dialog is no dead end: `/plan` says what waits and opens it again.
fn a_dismissed_approval_is_reopened_by_plan(version: Version) {
    let fx = Fixture::new(version);
    let host = fx.start_host();
    let _model = Responder::start(&fx.model, plan_then_explore);
    let mut pi = fx.pi();
    let session = enter_plan(&mut pi, &host);
    let dialog = submit_and_get_dialog(&mut pi);
    pi.cancel_dialog(&dialog.id);
    // The host's sentence for a waiting plan, as Claude Code says it, with pi's own way.
    pi.wait_notify(|t| {
        t.contains("waits for your answer in planhost")
            && t.contains("planhost approve")
            && t.contains("type /plan to answer it in pi")
    });
    pi.prompt("/plan");
    let again = pi.next_ui_request("the approval, reopened by /plan", |r| {
        r.method == "select" && r.title.contains(TITLE)
    });
    check(
        &pi,
        again.options == APPROVAL,
        &format!("{:?}", again.options),
    );
    check(
        &pi,
        again.title.contains("Deadline: ") && !again.title.contains("Expires in"),
        &format!("one deadline, in local time: {:?}", again.title),
    );
    pi.answer(&again.id, "Approve (Ask)");
    host.wait_latest_plan(&session, "approved", |p| {
        p.status == ApprovalStatus::Approved
    });
}

/// (4) A prompt while a plan waits is not sent: the screen says so and the dialog comes back.
fn a_prompt_while_a_plan_waits_reopens_it(version: Version) {
    let fx = Fixture::new(version);
    let host = fx.start_host();
    let _model = Responder::start(&fx.model, plan_then_explore);
    let mut pi = fx.pi();
    let session = enter_plan(&mut pi, &host);
    let dialog = submit_and_get_dialog(&mut pi);
    pi.cancel_dialog(&dialog.id);
    pi.wait_idle();
    let asked = fx.model.requests().len();
    pi.prompt("What about the tests?");
    pi.wait_notify(|t| {
        t.starts_with("Your message was not sent (it is back in the editor): ") && t.contains(TITLE)
    });
    let again = pi.next_ui_request("the approval, reopened by a prompt", |r| {
        r.method == "select" && r.title.contains(TITLE)
    });
    assert_eq!(
        fx.model.requests().len(),
        asked,
        "the prompt reached no model"
    );
    reject(&mut pi, &again, "");
    host.wait_latest_plan(&session, "rejected", |p| {
        p.status == ApprovalStatus::Rejected
    });
}

/// (5) `pi -p` with the extension prints its answer and exits.
fn print_mode_exits(version: Version) {
    let fx = Fixture::new(version);
    let _host = fx.start_host();
    let _model = Responder::start(&fx.model, |_| Reply::text("PRINTED-ANSWER"));
    let started = Instant::now();
    let mut child = fx
        .options()
        .print_command("hello")
        .spawn()
        .expect("spawn pi -p");
    let status = poll_until("pi -p to exit", BOUND * 2, || {
        child.try_wait().ok().flatten()
    });
    let out = child.wait_with_output().expect("pi -p output");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        status.success() && stdout.contains("PRINTED-ANSWER"),
        "pi -p: {status} after {:?}\nstdout:\n{stdout}\nstderr:\n{}",
        started.elapsed(),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// (6) No host and no binary: the error names the missing binary at once; a host started later
/// is picked up by the running pi, and tools run through it.
fn a_host_started_after_pi_is_picked_up(version: Version) {
    let fx = Fixture::new(version);
    fx.write("seen.txt", "here\n");
    let _model = Responder::start(&fx.model, |req| match req.last() {
        Last::User(_) => Reply::tool("bash", json!({ "command": "cat seen.txt" })),
        Last::ToolResult { .. } | Last::Other(_) => Reply::text("ok"),
    });
    let options = fx.options().env("PLANHOST_BIN", fx.missing_bin());
    let mut pi = fx.pi_with(options);
    let said = pi.wait_notify(|t| t.contains("HOST_BINARY_NOT_FOUND"));
    assert!(
        said.contains("PLANHOST_BIN") && !said.contains("[HOST_UNREACHABLE]"),
        "{said}"
    );
    let host = fx.start_host();
    pi.wait_notify(|t| t.contains("the host answers again"));
    host.session_of(&mut pi);
    pi.prompt("Read seen.txt.");
    let cat = pi.wait_tool_end("bash");
    check(
        &pi,
        !cat.is_error && cat.text.contains("here"),
        &format!("{cat:?}"),
    );
    pi.wait_idle();
}

/// (7) Seed 004's handoff: a `<proposed_plan>` in the model's final answer is captured, the
/// person reviews it and confirms twice, the execution prompt starts the run (Plan mode ends),
/// and the model's edit changes the file.
fn a_proposed_plan_is_handed_off_and_executed(version: Version) {
    let fx = Fixture::new(version);
    fx.write("greeting.txt", "hello world\n");
    let host = fx.start_host();
    let _model = Responder::start(&fx.model, |req| {
        if req.any_user_contains("The person approved this plan") {
            if req.results_of("edit") == 0 {
                return Reply::tool(
                    "edit",
                    json!({ "path": "greeting.txt",
                            "edits": [{ "oldText": "hello", "newText": "goodbye" }] }),
                );
            }
            return Reply::text("Done: the greeting is renamed.");
        }
        Reply::text(&format!(
            "Here is the plan.\n\n<proposed_plan>\n{}</proposed_plan>\n",
            plan_markdown()
        ))
    });
    let mut pi = fx.pi();
    let session = enter_plan(&mut pi, &host);
    pi.prompt("Plan the rename of the greeting.");
    let review = pi.next_ui_request("the handoff review", |r| {
        r.method == "select" && r.title.contains("Hand it to execution?")
    });
    pi.answer(&review.id, "Execute it");
    let sure = pi.next_ui_request("the second confirmation", |r| r.method == "confirm");
    check(
        &pi,
        sure.title.contains("Execute revision 1 now?"),
        &format!("{sure:?}"),
    );
    pi.confirm(&sure.id, true);
    pi.wait_message("user", |t| {
        t.contains("The person approved this plan") && t.contains(MARKER)
    });
    // Agent mode under the session's permission mode (ask): the edit asks, Allow first.
    let ask = pi.next_ui_request("the edit's ask", |r| {
        r.method == "select" && r.title.contains("planhost asks")
    });
    pi.answer(&ask.id, "Allow");
    let edit = pi.wait_tool_end("edit");
    check(&pi, !edit.is_error, &format!("{edit:?}"));
    pi.wait_idle();
    assert_eq!(fx.read("greeting.txt").as_deref(), Some("goodbye world\n"));
    let state = host.session(&session);
    assert_eq!(state.mode, Mode::Agent, "{state:#?}");
    let status = host.query::<methods::PlansStatus>(BranchRef {
        session_id: session.clone(),
        branch_path: vec!["x".into()],
    });
    assert_eq!(status.phase, HandoffPhase::Off, "{status:#?}");
    // The rows' detail is untyped JSON in the protocol.
    let steps = host.audit_rows(&session, AuditAction::HandoffStep);
    assert!(
        steps.iter().any(|r| r.detail["to"] == "handoff_pending")
            && steps
                .iter()
                .any(|r| r.detail["from"] == "handoff_pending" && r.detail["to"] == "off"),
        "{steps:#?}"
    );
}

/// (8) The model's own bash runs `planhost approve` against its pending plan: in Plan a command
/// that reaches planhost's approval surfaces is denied outright, saying it would answer a plan
/// (no ask a person could wave through), and the plan stays pending. (Behind that, a process
/// under the agent is refused the approver role: `tests/claude/escape.rs`, `it peercred`.)
fn the_agents_bash_cannot_approve_its_own_plan(version: Version) {
    let fx = Fixture::new(version);
    let host = fx.start_host();
    let socket = fx.socket();
    let state = fx.state_dir();
    let _model = Responder::start(&fx.model, move |req| {
        if req.results_of("SubmitPlan") == 0 {
            return Reply::tool(
                "SubmitPlan",
                json!({ "title": TITLE, "markdown": plan_markdown(), "question": "Go?" }),
            );
        }
        if req.results_of("bash") == 0 {
            // The model looks its plan up, as the attack did, and approves it with the CLI.
            let mut client = planhost_client::Client::connect_socket(&socket).expect("socket");
            client
                .initialize("model-side", &[planhost_core::Role::Observer])
                .expect("initialize");
            let pending = client
                .call::<methods::PlansList>(PlansFilter {
                    session_id: None,
                    status: Some(vec![ApprovalStatus::Pending]),
                    limit: None,
                })
                .expect("plans.list");
            let id = pending
                .items
                .first()
                .map_or("none", |p| p.proposal_id.as_str())
                .to_owned();
            let command = format!(
                "{} --socket {} --state-dir {} approve {id} --mode auto",
                planhost_bin(),
                socket.display(),
                state.display()
            );
            return Reply::tool("bash", json!({ "command": command }));
        }
        Reply::text("Waiting for the reviewer.")
    });
    let mut pi = fx.pi();
    let session = enter_plan(&mut pi, &host);
    pi.prompt("Plan the rename of the greeting.");
    let bash = pi.wait_tool_end("bash");
    check(
        &pi,
        bash.text.contains("POLICY_PLAN_APPROVAL_SURFACE") && bash.text.contains("answer a plan"),
        &format!("denied outright, saying it would answer a plan: {bash:?}"),
    );
    let dialog = pi.next_ui_request("the approval", |r| {
        r.method == "select" && r.title.contains(TITLE)
    });
    let plan = host.plans(&session)[0].clone();
    assert_eq!(plan.status, ApprovalStatus::Pending, "{plan:#?}");
    pi.cancel_dialog(&dialog.id);
}

/// (9) `planhost stop` while a plan waits: the approval is interrupted (said once, also after
/// `pi -c`), pi starts no host of its own, tools are blocked saying how to go on, and a host a
/// person starts is picked up.
fn planhost_stop_interrupts_once_and_pi_waits_for_a_person(version: Version) {
    let fx = Fixture::new(version);
    let mut host = fx.start_host();
    let _model = Responder::start(&fx.model, plan_then_explore);
    let options = fx.options().session_dir(fx.session_dir());
    let mut pi = fx.pi_with(options.clone());
    let session = enter_plan(&mut pi, &host);
    let dialog = submit_and_get_dialog(&mut pi);
    let stopped = fx.planhost_cli(&["stop"]);
    assert!(
        stopped.status.success(),
        "{}",
        crate::harness::output_text(&stopped)
    );
    host.kill(); // already gone: reaps the child
    pi.wait_notify(|t| t.contains("was interrupted") && t.contains(TITLE));
    pi.wait_notify(|t| t.contains("the host was stopped (planhost stop)"));
    pi.cancel_dialog(&dialog.id);
    // pi starts no host after a stop.
    std::thread::sleep(std::time::Duration::from_millis(1500));
    assert!(
        !fx.socket().exists(),
        "pi started a host after planhost stop"
    );
    let host = fx.start_host();
    pi.wait_notify(|t| t.contains("the host answers again"));
    let plan = host.plans(&session)[0].clone();
    assert_eq!(plan.status, ApprovalStatus::Interrupted, "{plan:#?}");
    pi.prompt("Noted?");
    pi.wait_idle();
    let interrupted = |events: &[serde_json::Value]| {
        events
            .iter()
            .filter(|e| {
                e["method"] == "notify"
                    && e["message"]
                        .as_str()
                        .is_some_and(|m| m.contains("was interrupted"))
            })
            .count()
    };
    assert_eq!(
        interrupted(&pi.events()),
        1,
        "the interruption is said once in the session that saw it: {:#?}",
        pi.events()
    );
    pi.close();
    // Back with `pi -c`: the interruption was said already.
    let mut again = fx.pi_with(options.continue_session());
    host.session_of(&mut again);
    again.prompt("Still there?");
    again.wait_idle();
    let said = interrupted(&again.events());
    assert_eq!(
        said,
        0,
        "the interruption is reported once: {:#?}",
        again.events()
    );
}

/// (10) `/planhost preset strict` for this session: Plan's tools lose the shell, and the
/// policy denies it.
fn a_preset_chosen_in_pi_sets_plans_tools(version: Version) {
    let fx = Fixture::new(version);
    let host = fx.start_host();
    let _model = Responder::start(&fx.model, |req| match req.last() {
        Last::User(_) => Reply::tool("bash", json!({ "command": "ls" })),
        Last::ToolResult { .. } | Last::Other(_) => Reply::text("ok"),
    });
    let mut pi = fx.pi();
    let session = enter_plan(&mut pi, &host);
    pi.prompt("/planhost preset strict");
    pi.wait_notify(|t| t.contains("now uses the strict preset"));
    let state = host.session(&session);
    assert_eq!(
        state.policy_preset,
        Some(PolicyPreset::Strict),
        "{state:#?}"
    );
    pi.prompt("Look around.");
    let bash = pi.wait_tool_end("bash");
    pi.wait_idle();
    blocked_with(&pi, &bash, "Tool bash not found");
    let last = fx.model.requests().last().cloned().unwrap_or_default();
    let offered = ChatRequest {
        body: last,
        index: 0,
    }
    .offered_tools();
    assert!(
        !offered.iter().any(|t| t == "bash") && offered.iter().any(|t| t == "update_plan_draft"),
        "{offered:?}"
    );
    pi.prompt("/planhost preset nonsense");
    pi.wait_notify(|t| t.contains("does not accept") && t.contains("Usage"));
}

/// (11) Seed 003: after the first publication the session is named from the plan's `# Plan:`
/// title.
fn the_first_publication_names_the_session(version: Version) {
    let fx = Fixture::new(version);
    let host = fx.start_host();
    let _model = Responder::start(&fx.model, |_| {
        Reply::text(
            "<proposed_plan>\n# Plan: Tidy the greeting\n\n1. Replace hello.\n</proposed_plan>\n",
        )
    });
    let mut pi = fx.pi();
    enter_plan(&mut pi, &host);
    pi.prompt("Propose a plan.");
    let review = pi.next_ui_request("the handoff review", |r| {
        r.method == "select" && r.title.contains("Hand it to execution?")
    });
    pi.answer(&review.id, "Keep planning");
    pi.wait_idle();
    let unnamed = pi.state();
    assert!(unnamed["sessionName"].is_null(), "{unnamed:#}");
    let id = pi.send_prompt("/plan save");
    let publish = pi.next_ui_request("the publication choice", |r| r.method == "select");
    pi.answer(&publish.id, "Publish");
    pi.wait_response(&id);
    pi.wait_notify(|m| m.contains("publication completed"));
    let named = poll_until("the session's name", BOUND, || {
        let state = pi.state();
        state["sessionName"].as_str().map(str::to_owned)
    });
    assert_eq!(named, "Tidy the greeting");
}

/// (12) The user's `!cmd` outside a run has a host turn of its own, ended only once the command
/// has finished (it was ended in a `setTimeout(0)` that could run first). pi 1.6 only: pi
/// 0.73's RPC `bash` command runs pi's own shell without the `user_bash` event (its TUI's `!cmd`
/// does emit it), so there is no host turn to see over RPC.
#[test]
fn a_user_bash_turn_ends_after_its_command() {
    let fx = Fixture::new(Version::V16);
    let host = fx.start_host();
    let mut pi = fx.pi();
    let session = host.session_of(&mut pi).id;
    let ran = pi.request_ok(
        "bash",
        json!({ "command": "sleep 1 && echo user-bash-done" }),
    );
    assert!(ran.to_string().contains("user-bash-done"), "{ran:#}");
    let executed = poll_until("the command's tool.executed row", BOUND, || {
        host.audit_rows(&session, AuditAction::ToolExecuted)
            .first()
            .cloned()
    });
    let turn = executed.turn_id.clone();
    assert!(turn.is_some(), "the command ran in a turn: {executed:#?}");
    let row = |action: AuditAction| {
        poll_until(&format!("the turn's {action} row"), BOUND, || {
            host.audit_rows(&session, action)
                .into_iter()
                .find(|r| r.turn_id == turn)
        })
    };
    let (started, ended) = (row(AuditAction::TurnStarted), row(AuditAction::TurnEnded));
    let at = |r: &planhost_protocol::AuditEntry| r.at.0;
    assert!(
        at(&ended) >= at(&executed) && at(&ended) - at(&started) >= 1_000,
        "the turn lasted the whole command (sleep 1): {started:#?} {executed:#?} {ended:#?}"
    );
    let state = host.session(&session);
    assert!(state.active_turn.is_none(), "{state:#?}");
}

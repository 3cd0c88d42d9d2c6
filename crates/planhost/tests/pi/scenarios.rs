//! The planhost extension's contract, end to end (issue 9): real pi, the real extension
//! (`integrations/pi`), the real `planhost`, a scripted model. Each scenario runs on pi 0.73.1
//! and 1.6.0.
//!
//! The contract these assume, briefly: the extension connects to `PLANHOST_SOCKET` (starting
//! `$PLANHOST_BIN serve --socket … --state-dir …` when nothing answers) and opens the host
//! session with pi's session id as `externalId`; the host authorizes every tool call and a deny
//! blocks it with the host's reason (its stable code in the result text); `/plan` enters Plan;
//! `SubmitPlan` opens a select titled with the plan's title offering exactly [`APPROVAL`];
//! approving starts the execution turn with a user message holding the plan's Markdown; an
//! approval answered elsewhere closes the dialog; Bash runs through the host and an `ask` is a
//! select offering `Allow` and `Deny`.
//!
//! The model's replies are rules over what it is asked ([`Responder`]), not a fixed queue, so
//! they do not depend on how many model calls the extension causes in between.

use planhost_core::{
    ApprovalAction, ApprovalStatus, AuditAction, ExecutionState, Mode, PolicyPreset, SessionId,
    TargetPermissionMode,
};
use planhost_protocol::{
    ApprovalInfo, AuditEntry, PlansFilter, ResolvePlanParams, SettingsPatch, methods,
};
use planhost_test_support::host::params;
use serde_json::json;

use crate::harness::{Fixture, Host, on_both_versions, output_text};
use crate::plan_steps::*;
use planhost_test_support::{
    BOUND, ChatRequest, EventLog, PiSession, Reply, Responder, Version, poll_until,
};

on_both_versions!(
    plan_blocks_write_and_edit,
    approve_accept_edits_runs_the_execution_turn,
    reject_keeps_the_session_in_plan,
    approval_from_the_cli_runs_the_execution_once,
    approval_from_a_rust_approver_runs_the_execution_once,
    host_unreachable_blocks_write_and_bash,
    strict_plan_blocks_find_delete,
    bash_ask_is_an_allow_deny_dialog,
    plan_status_preview_and_exit,
    extension_starts_the_host_when_none_answers,
);

/// Plan, then execute: `SubmitPlan` first; one `edit` once the approved plan has arrived as a
/// user message pi showed (`log`: the extension also injects the latest plan into every model
/// call as a user message, which must not count), then, `with_bash`, one `cat greeting.txt && touch seen.txt` (not provably read-only, so it asks);
/// text otherwise.
fn plan_then_edit(
    log: EventLog,
    with_bash: bool,
) -> impl FnMut(&ChatRequest) -> Reply + Send + 'static {
    let mut edit_sent = false;
    let mut bash_sent = !with_bash;
    move |req| {
        if req.results_of("SubmitPlan") == 0 {
            return Reply::tool(
                "SubmitPlan",
                json!({ "title": TITLE, "markdown": plan_markdown(), "question": "Shall I go ahead?" }),
            );
        }
        if edit_sent && !bash_sent {
            bash_sent = true;
            return Reply::tool(
                "bash",
                json!({ "command": "cat greeting.txt && touch seen.txt" }),
            );
        }
        if edit_sent {
            return Reply::text("Done: the greeting is renamed.");
        }
        // pi prints a prompt's message_end before it calls the model; allow the reader a
        // moment all the same.
        let executing = req.any_user_contains(MARKER)
            && log.wait_until(std::time::Duration::from_millis(300), has_execution_message);
        if executing {
            edit_sent = true;
            return Reply::tool(
                "edit",
                json!({ "path": "greeting.txt",
                        "edits": [{ "oldText": "hello", "newText": "goodbye" }] }),
            );
        }
        Reply::text("The plan is with the reviewer.")
    }
}

fn user_messages_with(pi: &PiSession, needle: &str) -> usize {
    pi.log().messages_containing("user", needle)
}

/// The session's latest approval once it satisfies `pred` (bounded); the panic shows the last.
fn wait_plan(
    host: &Host,
    session: &SessionId,
    what: &str,
    pred: impl Fn(&ApprovalInfo) -> bool,
) -> ApprovalInfo {
    let mut last = None;
    let deadline = std::time::Instant::now() + planhost_test_support::BOUND;
    loop {
        if let Some(plan) = host.plans(session).into_iter().next() {
            if pred(&plan) {
                return plan;
            }
            last = Some(plan);
        }
        assert!(
            std::time::Instant::now() < deadline,
            "gave up waiting for the approval: {what}; latest:\n{last:#?}"
        );
        std::thread::sleep(std::time::Duration::from_millis(25));
    }
}

/// The approval once its execution is `completed`.
fn wait_execution_completed(host: &Host, session: &SessionId) -> ApprovalInfo {
    wait_plan(host, session, "execution completed", |p| {
        p.execution_state == Some(ExecutionState::Completed)
    })
}

/// (1) In Plan, `write` and `edit` are not among the model's tools (the host computed Plan's
/// set), a call anyway is refused, and the file is unchanged. (The host's own deny of a writer
/// that is active after all is `POLICY_PLAN_WRITE_DENIED`: the integration tests hold it.)
fn plan_blocks_write_and_edit(version: Version) {
    let fx = Fixture::new(version);
    fx.write("notes.txt", "original\n");
    let host = fx.start_host();
    let _model = Responder::start(&fx.model, |req| {
        if req.results_of("write") == 0 {
            Reply::tool(
                "write",
                json!({ "path": "notes.txt", "content": "overwritten\n" }),
            )
        } else if req.results_of("edit") == 0 {
            Reply::tool(
                "edit",
                json!({ "path": "notes.txt",
                        "edits": [{ "oldText": "original", "newText": "edited" }] }),
            )
        } else {
            Reply::text("Both were refused; I will plan instead.")
        }
    });
    let mut pi = fx.pi();
    let session = enter_plan(&mut pi, &host);
    pi.prompt("Change notes.txt.");
    let write = pi.wait_tool_end("write");
    let edit = pi.wait_tool_end("edit");
    pi.wait_idle();
    blocked_with(&pi, &write, "Tool write not found");
    blocked_with(&pi, &edit, "Tool edit not found");
    assert_eq!(fx.read("notes.txt").as_deref(), Some("original\n"));
    let offered: Vec<String> = fx
        .model
        .requests()
        .into_iter()
        .flat_map(|body| ChatRequest { body, index: 0 }.offered_tools())
        .collect();
    assert!(
        !offered.iter().any(|t| t == "write" || t == "edit"),
        "{offered:?}"
    );
    let executed = host.audit_rows(&session, AuditAction::ToolExecuted);
    assert!(executed.is_empty(), "the host ran nothing: {executed:#?}");
}

/// (2) SubmitPlan → dialog → `Approve (Accept edits)` → the execution turn's `edit` changes the
/// file; the host shows the execution completed and audits the tool for that turn.
fn approve_accept_edits_runs_the_execution_turn(version: Version) {
    let fx = Fixture::new(version);
    fx.write("greeting.txt", "hello world\n");
    let host = fx.start_host();
    let mut pi = fx.pi();
    let _model = Responder::start(&fx.model, plan_then_edit(pi.log(), true));
    let session = enter_plan(&mut pi, &host);
    let dialog = submit_and_get_dialog(&mut pi);
    assert_eq!(fx.read("greeting.txt").as_deref(), Some("hello world\n"));
    pi.answer(&dialog.id, "Approve (Accept edits)");

    pi.wait_message("user", |t| t.contains(MARKER));
    let edit = pi.wait_tool_end("edit");
    check(
        &pi,
        !edit.is_error,
        &format!("the execution's edit failed: {edit:?}"),
    );
    assert_eq!(fx.read("greeting.txt").as_deref(), Some("goodbye world\n"));
    // Accept edits still asks for a Bash command that may change files (the host runs it).
    let ask = pi.next_ui_request("the Bash ask of the execution", |r| r.method == "select");
    check(
        &pi,
        ask.options.iter().any(|o| o == "Allow"),
        &format!("the dialog after the approval is Bash's ask: {ask:?}"),
    );
    pi.answer(&ask.id, "Allow");
    let bash = pi.wait_tool_end("bash");
    check(
        &pi,
        !bash.is_error && bash.text.contains("goodbye world"),
        &format!("the execution's bash: {bash:?}"),
    );
    pi.wait_idle();
    check(
        &pi,
        pi.dialogs().len() == 2,
        "two dialogs: the approval and Bash's ask (accept-edits runs the edit without asking)",
    );

    let plan = wait_execution_completed(&host, &session);
    assert_eq!(plan.status, ApprovalStatus::Approved, "{plan:#?}");
    assert_eq!(
        plan.target_permission_mode,
        Some(TargetPermissionMode::AcceptEdits),
        "{plan:#?}"
    );
    assert_eq!(host.session(&session).mode, Mode::Agent);
    let claims = host.audit_rows(&session, AuditAction::ExecutionClaimed);
    assert_eq!(claims.len(), 1, "one claim: {claims:#?}");
    let turn = claims[0].turn_id.clone();
    assert!(turn.is_some(), "a claim names its turn: {claims:#?}");
    let in_turn = |action: AuditAction| -> Vec<AuditEntry> {
        host.audit_rows(&session, action)
            .into_iter()
            .filter(|r| r.turn_id == turn)
            .collect()
    };
    // The rows' detail is untyped JSON in the protocol.
    let executed = in_turn(AuditAction::ToolExecuted);
    assert!(
        executed
            .iter()
            .any(|r| r.detail["tool"] == "Bash" && r.detail["ok"] == true),
        "tool.executed rows of the execution turn {turn:?}: {executed:#?}"
    );
    let allowed = in_turn(AuditAction::ToolAllow);
    assert!(
        !allowed.is_empty(),
        "the host authorized the execution's edit in turn {turn:?}: {:#?}",
        host.audit(&session)
    );
    // pi ran the edit itself and reported it finished (the host's own Bash needs no report), so
    // no allowed call lingers in flight.
    let finished = poll_until("the edit's tool.finished row", BOUND, || {
        let rows = in_turn(AuditAction::ToolFinished);
        (!rows.is_empty()).then_some(rows)
    });
    assert_eq!(finished.len(), 1, "only the edit: {finished:#?}");
    assert_eq!(finished[0].detail["tool"], "edit", "{finished:#?}");
    assert_eq!(finished[0].detail["ok"], true, "{finished:#?}");
    assert_eq!(finished[0].detail["ranBy"], "client", "{finished:#?}");
    assert_eq!(
        host.session(&session).tool_calls,
        [],
        "nothing in flight once the turn is over"
    );
}

/// (3) Reject keeps the session in Plan.
fn reject_keeps_the_session_in_plan(version: Version) {
    let fx = Fixture::new(version);
    fx.write("greeting.txt", "hello world\n");
    let host = fx.start_host();
    let mut pi = fx.pi();
    let _model = Responder::start(&fx.model, plan_then_edit(pi.log(), false));
    let session = enter_plan(&mut pi, &host);
    let dialog = submit_and_get_dialog(&mut pi);
    reject(
        &mut pi,
        &dialog,
        "Keep the greeting; rename the farewell instead.",
    );
    let plan = wait_plan(&host, &session, "rejected", |p| {
        p.status != ApprovalStatus::Pending
    });
    assert_eq!(plan.status, ApprovalStatus::Rejected, "{plan:#?}");
    assert!(plan.resolved_by.is_some(), "{plan:#?}");
    assert_eq!(
        plan.feedback.as_deref(),
        Some("Keep the greeting; rename the farewell instead."),
        "{plan:#?}"
    );
    // The reason reaches the model as the person's next message, and the screen says so.
    pi.wait_message("user", |t| {
        t.contains("rejected the plan") && t.contains("rename the farewell instead")
    });
    pi.wait_idle();
    let state = host.session(&session);
    assert_eq!(state.mode, Mode::Plan, "{state:#?}");
    assert!(state.live_execution.is_none(), "{state:#?}");
    assert_eq!(user_messages_with(&pi, MARKER), 0, "no execution turn");
    assert_eq!(fx.read("greeting.txt").as_deref(), Some("hello world\n"));
}

/// Who answers the approval while pi's dialog is open.
#[derive(Debug, Clone, Copy)]
enum Elsewhere {
    /// `planhost approve <id> --mode accept-edits`.
    Cli,
    /// `plans.resolve` from a Rust client with the approver role, mode `auto`.
    RustApprover,
}

/// (4) The approval is answered elsewhere while the dialog is open: the dialog closes without
/// an answer and the execution runs once; a late answer to the dead dialog changes nothing.
fn approved_elsewhere(version: Version, how: Elsewhere) {
    let fx = Fixture::new(version);
    fx.write("greeting.txt", "hello world\n");
    let host = fx.start_host();
    let mut pi = fx.pi();
    let _model = Responder::start(&fx.model, plan_then_edit(pi.log(), false));
    let session = enter_plan(&mut pi, &host);
    let dialog = submit_and_get_dialog(&mut pi);

    let pending = host
        .query::<methods::PlansList>(PlansFilter {
            session_id: Some(session.clone()),
            status: Some(vec![ApprovalStatus::Pending]),
            limit: None,
        })
        .items
        .into_iter()
        .next()
        .unwrap_or_else(|| panic!("a pending approval of {session}"));
    let proposal = pending.proposal_id.as_str();
    assert!(!proposal.is_empty(), "a pending approval: {pending:#?}");
    match how {
        Elsewhere::Cli => {
            let out = fx.planhost_cli(&["approve", proposal, "--mode", "accept-edits"]);
            assert!(out.status.success(), "{}", output_text(&out));
        }
        Elsewhere::RustApprover => {
            // Names the approval by its ids alone: no version nor digest.
            host.approve_call::<methods::PlansResolve>(ResolvePlanParams {
                version: None,
                artifact_sha256: None,
                target_permission_mode: Some(TargetPermissionMode::Auto),
                ..params::resolve(&pending, ApprovalAction::Approve)
            });
        }
    }

    // No answer to the dialog: the extension must close it itself and go on.
    pi.wait_message("user", |t| t.contains(MARKER));
    let edit = pi.wait_tool_end("edit");
    check(
        &pi,
        !edit.is_error,
        &format!("the execution's edit failed: {edit:?}"),
    );
    pi.wait_idle();
    wait_execution_completed(&host, &session);

    // A late answer to the closed dialog is ignored by pi; nothing runs again.
    pi.answer(&dialog.id, "Reject");
    pi.state();
    let plans = host.plans(&session);
    assert_eq!(plans.len(), 1, "{plans:#?}");
    assert_eq!(plans[0].status, ApprovalStatus::Approved, "{:#?}", plans[0]);
    let claims = host.audit_rows(&session, AuditAction::ExecutionClaimed);
    assert_eq!(
        claims.len(),
        1,
        "the execution was claimed once: {claims:#?}"
    );
    check(
        &pi,
        user_messages_with(&pi, MARKER) == 1,
        "exactly one execution message",
    );
    let edits = pi
        .tool_ends()
        .iter()
        .filter(|t| t.tool_name == "edit")
        .count();
    check(&pi, edits == 1, "exactly one edit");
    assert_eq!(fx.read("greeting.txt").as_deref(), Some("goodbye world\n"));
}

fn approval_from_the_cli_runs_the_execution_once(version: Version) {
    approved_elsewhere(version, Elsewhere::Cli);
}

fn approval_from_a_rust_approver_runs_the_execution_once(version: Version) {
    approved_elsewhere(version, Elsewhere::RustApprover);
}

/// (10) No host and no way to start one: `write` and `bash` are blocked with a message that
/// names the missing binary and what to set, once, and nothing is written.
fn host_unreachable_blocks_write_and_bash(version: Version) {
    let fx = Fixture::new(version);
    let _model = Responder::start(&fx.model, |req| {
        if req.results_of("write") == 0 {
            Reply::tool("write", json!({ "path": "made.txt", "content": "x\n" }))
        } else if req.results_of("bash") == 0 {
            Reply::tool("bash", json!({ "command": "echo leaked > leaked.txt" }))
        } else {
            Reply::text("Both were blocked.")
        }
    });
    let mut pi = fx.pi_with(fx.options().env("PLANHOST_BIN", fx.missing_bin()));
    pi.prompt("Create made.txt and leaked.txt.");
    let write = pi.wait_tool_end("write");
    let bash = pi.wait_tool_end("bash");
    pi.wait_idle();
    for end in [&write, &bash] {
        blocked_with(&pi, end, "set PLANHOST_BIN to the planhost binary");
        check(
            &pi,
            end.text.matches("[HOST_BINARY_NOT_FOUND]").count() == 1
                && !end.text.contains("HOST_UNREACHABLE"),
            &format!("the code once, and the right one: {:?}", end.text),
        );
    }
    assert_eq!(fx.read("made.txt"), None);
    assert_eq!(fx.read("leaked.txt"), None);
    assert!(!fx.socket().exists(), "nothing started a host");
}

/// (11) Plan with the strict preset: `find . -name victim.txt -delete` is blocked (pi's own
/// plan-mode example lets it through) and victim.txt survives.
fn strict_plan_blocks_find_delete(version: Version) {
    let fx = Fixture::new(version);
    fx.write("victim.txt", "still here\n");
    let host = fx.start_host();
    let settings = host.approve_call::<methods::SettingsSet>(SettingsPatch {
        default_permission_mode: None,
        default_shell: None,
        default_policy_preset: Some(Some(PolicyPreset::Strict)),
    });
    assert_eq!(
        settings.default_policy_preset,
        Some(PolicyPreset::Strict),
        "{settings:#?}"
    );
    let _model = Responder::start(&fx.model, |req| {
        if req.results_of("bash") == 0 {
            Reply::tool(
                "bash",
                json!({ "command": "find . -name victim.txt -delete" }),
            )
        } else {
            Reply::text("The shell is off in strict Plan.")
        }
    });
    let mut pi = fx.pi();
    let session = enter_plan(&mut pi, &host);
    pi.prompt("Clean up victim.txt.");
    let bash = pi.wait_tool_end("bash");
    pi.wait_idle();
    // Strict Plan has no shell among the model's tools at all.
    blocked_with(&pi, &bash, "Tool bash not found");
    assert_eq!(fx.read("victim.txt").as_deref(), Some("still here\n"));
    let executed = host.audit_rows(&session, AuditAction::ToolExecuted);
    assert!(executed.is_empty(), "{executed:#?}");
    check(&pi, pi.dialogs().is_empty(), "a deny asks nobody");
}

/// Bash runs through the host; an `ask` is a select with `Allow` and `Deny`: Allow runs the
/// command (its output is the result), Deny blocks it.
fn bash_ask_is_an_allow_deny_dialog(version: Version) {
    let fx = Fixture::new(version);
    let host = fx.start_host();
    let _model = Responder::start(&fx.model, |req| match req.results_of("bash") {
        0 => Reply::tool(
            "bash",
            json!({ "command": "echo first-run | tee first.txt" }),
        ),
        1 => Reply::tool("bash", json!({ "command": "echo second > second.txt" })),
        _ => Reply::text("One ran, one was denied."),
    });
    let mut pi = fx.pi();
    let session = enter_plan(&mut pi, &host);
    pi.prompt("Run two commands.");
    let first = pi.next_ui_request("the first bash ask", |r| r.method == "select");
    check(
        &pi,
        first.options.iter().any(|o| o == "Allow") && first.options.iter().any(|o| o == "Deny"),
        &format!("ask options {:?}", first.options),
    );
    pi.answer(&first.id, "Allow");
    let ran = pi.wait_tool_end("bash");
    check(
        &pi,
        !ran.is_error && ran.text.contains("first-run"),
        &format!("allowed bash: {ran:?}"),
    );
    let second = pi.next_ui_request("the second bash ask", |r| r.method == "select");
    pi.answer(&second.id, "Deny");
    let denied = pi.wait_tool_end("bash");
    check(&pi, denied.is_error, &format!("denied bash: {denied:?}"));
    pi.wait_idle();
    assert_eq!(fx.read("first.txt").as_deref(), Some("first-run\n"));
    assert_eq!(fx.read("second.txt"), None);
    let executed = host.audit_rows(&session, AuditAction::ToolExecuted);
    assert_eq!(
        executed
            .iter()
            .filter(|r| r.detail["tool"] == "Bash")
            .count(),
        1,
        "the host ran the allowed command and only it: {executed:#?}"
    );
}

/// `/plan status` and `/plan preview` notify; `/plan exit` offers `Exit without publishing`
/// first, and choosing it leaves Plan.
fn plan_status_preview_and_exit(version: Version) {
    let fx = Fixture::new(version);
    let host = fx.start_host();
    let mut pi = fx.pi();
    let session = enter_plan(&mut pi, &host);
    pi.prompt("/plan status");
    let status = pi.wait_notify(|m| !m.trim().is_empty());
    check(&pi, !status.is_empty(), "status notifies");
    pi.prompt("/plan preview");
    pi.wait_notify(|m| !m.trim().is_empty());

    let id = pi.send_prompt("/plan exit");
    let dialog = pi.next_ui_request("the /plan exit choice", |r| r.method == "select");
    check(
        &pi,
        dialog.options.first().map(String::as_str) == Some("Exit without publishing"),
        &format!("exit options {:?}", dialog.options),
    );
    pi.answer(&dialog.id, "Exit without publishing");
    let response = pi.wait_response(&id);
    check(
        &pi,
        response["success"] == true,
        &format!("/plan exit: {response}"),
    );
    host.wait_mode(&session, Mode::Agent);
    assert!(
        fx.model.requests().is_empty(),
        "commands never reach the model"
    );
}

/// With nothing on `PLANHOST_SOCKET`, the extension starts `$PLANHOST_BIN serve` there and opens
/// the session (externalId = pi's session id, root = the workspace).
fn extension_starts_the_host_when_none_answers(version: Version) {
    let fx = Fixture::new(version);
    let mut pi = fx.pi();
    pi.prompt("/plan");
    let host = fx.adopt_host();
    let session = host.session_of(&mut pi);
    assert_eq!(
        session.workspace_root,
        fx.workspace().to_string_lossy(),
        "{session:#?}"
    );
    host.wait_mode(&session.id, Mode::Plan);
    poll_until("the state directory", planhost_test_support::BOUND, || {
        fx.state_dir()
            .join("planhost.sqlite")
            .exists()
            .then_some(())
    });
}

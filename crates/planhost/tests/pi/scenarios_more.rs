//! The rest of issue 9's scenarios, each on pi 0.73.1 and 1.6.0: the approval deadline (5),
//! `<proposed_plan>` capture and publication (6), a stale `update_plan_draft` revision (7), a
//! host killed while an approval is pending (8), Bash timeouts and aborts that kill the whole
//! tree (9), the `host` preset's ask for `find -delete` and `pi -c` coming back in Plan (11b),
//! a forked session's fresh plan identity (12), and a plan file changed on disk after SubmitPlan
//! (issue 10): approving it is refused and pi says why.
//!
//! Same contract and conventions as `scenarios`: real pi, the real extension, the real
//! `planhost`, a scripted model whose replies are rules over what it is asked.

use std::path::Path;
use std::time::Duration;

use planhost_core::{
    ApprovalStatus, AuditAction, EntryId, ErrorCode, Mode, PermissionMode, PolicyPreset,
    PublicationStatus, SessionId,
};
use planhost_protocol::{
    BranchRef, ConfigureParams, Empty, PublicationsFilter, SessionInfo, SettingsPatch, methods,
};
use planhost_test_support::host::params;
use serde_json::{Value, json};

use crate::harness::{
    Fixture, Host, KillOnDrop, on_both_versions, process_alive, processes_in, session_of_process,
};
use crate::plan_steps::*;
use planhost_test_support::{
    BOUND, ChatRequest, EventLog, PiSession, Reply, Responder, Version, poll_until,
};

on_both_versions!(
    approval_expires_with_plan_approval_timeout,
    proposed_plan_is_captured_previewed_and_published,
    stale_update_plan_draft_names_the_current_revision,
    host_killed_while_pending_interrupts_the_approval,
    bash_timeout_kills_a_setsid_grandchild,
    abort_kills_a_running_bash_tree,
    host_preset_find_delete_asks_and_deny_keeps_the_file,
    continue_comes_back_in_plan,
    fork_gets_a_fresh_plan_identity,
    a_plan_file_changed_after_submit_is_not_approved_and_pi_says_so,
    every_model_call_sees_the_latest_draft,
);

/// `SubmitPlan` first; one `edit` if the approved plan ever arrives as a user message pi showed
/// (it must not, in these scenarios: the edit is what a replay would do); text otherwise.
fn submit_then_edit_if_executed(log: EventLog) -> impl FnMut(&ChatRequest) -> Reply + Send {
    move |req| {
        if req.results_of("SubmitPlan") == 0 {
            return Reply::tool(
                "SubmitPlan",
                json!({ "title": TITLE, "markdown": plan_markdown(), "question": "Shall I go ahead?" }),
            );
        }
        let executing = req.any_user_contains(MARKER)
            && log.wait_until(Duration::from_millis(300), has_execution_message);
        if executing && req.results_of_after("edit", MARKER) == Some(0) {
            return Reply::tool(
                "edit",
                json!({ "path": "greeting.txt",
                        "edits": [{ "oldText": "hello", "newText": "goodbye" }] }),
            );
        }
        Reply::text("The plan is with the reviewer.")
    }
}

/// After an approval ended without being approved: no execution ran or was claimed, the file
/// is as it was, the session is still in Plan with no live execution.
fn nothing_executed(fx: &Fixture, pi: &mut PiSession, host: &Host, session: &SessionId) {
    // A round trip, so anything the extension started has had a chance to show.
    pi.state();
    check_both(
        pi,
        host,
        pi.log().messages_containing("user", MARKER) == 0,
        "no execution turn (no user message with the approved plan)",
    );
    check(
        pi,
        !pi.tool_ends().iter().any(|t| t.tool_name == "edit"),
        "no edit ran",
    );
    assert_eq!(fx.read("greeting.txt").as_deref(), Some("hello world\n"));
    let claims = host.audit_rows(session, AuditAction::ExecutionClaimed);
    assert!(claims.is_empty(), "nothing was claimed: {claims:#?}");
    let state = host.session(session);
    assert_eq!(state.mode, Mode::Plan, "{state:#?}");
    assert!(state.live_execution.is_none(), "{state:#?}");
    assert!(state.pending_approval.is_none(), "{state:#?}");
}

/// The ids of every entry of a pi session file (JSON lines; the header has type `session`).
fn entry_ids(session_file: &Path) -> Vec<EntryId> {
    let text = fs_err::read_to_string(session_file)
        .unwrap_or_else(|e| panic!("read pi's session file {}: {e}", session_file.display()));
    text.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["type"] != "session")
        .filter_map(|e| e["id"].as_str().map(EntryId::from))
        .collect()
}

/// pi's session file (`get_state`), once it exists and holds entries (pi writes it lazily).
fn session_file(pi: &mut PiSession) -> std::path::PathBuf {
    let state = pi.state();
    let file = state["sessionFile"]
        .as_str()
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| panic!("{}", pi.failure(&format!("no sessionFile in {state}"))));
    poll_until(
        &format!("pi's session file {}", file.display()),
        BOUND,
        || (file.is_file() && !entry_ids(&file).is_empty()).then_some(()),
    );
    file
}

/// (5) The approval deadline passes (the debug host's test clock jumps 30 minutes): the
/// approval is `expired` with `PLAN_APPROVAL_TIMEOUT`, pi says so, the dialog closes, nothing
/// runs and the session stays in Plan.
fn approval_expires_with_plan_approval_timeout(version: Version) {
    let fx = Fixture::new(version);
    fx.write("greeting.txt", "hello world\n");
    let clock = planhost_test_support::TestClock::new(&fx.scratch(""));
    let host = fx.start_host_with(&[(
        planhost_test_support::TEST_CLOCK_VAR,
        clock.file().as_os_str(),
    )]);
    let mut pi = fx.pi();
    let _model = Responder::start(&fx.model, submit_then_edit_if_executed(pi.log()));
    let session = enter_plan(&mut pi, &host);
    let dialog = submit_and_get_dialog(&mut pi);
    let pending =
        host.wait_latest_plan(&session, "pending", |p| p.status == ApprovalStatus::Pending);

    // 30 minutes and a millisecond later, as far as the host can tell; any request makes it
    // check its deadlines.
    clock.set(1_800_001);
    host.query::<methods::AppHealth>(Empty {});
    let plan = host.wait_latest_plan(&session, "no longer pending", |p| {
        p.status != ApprovalStatus::Pending
    });
    assert_eq!(plan.proposal_id, pending.proposal_id, "{plan:#?}");
    assert_eq!(plan.status, ApprovalStatus::Expired, "{plan:#?}");
    assert_eq!(
        plan.error_code,
        Some(ErrorCode::PlanApprovalTimeout),
        "{plan:#?}"
    );

    let note = pi.wait_notify(|m| m.contains("PLAN_APPROVAL_TIMEOUT"));
    check(
        &pi,
        note.contains("expired"),
        &format!("the notify says the approval expired: {note:?}"),
    );
    nothing_executed(&fx, &mut pi, &host, &session);

    // The dialog is closed: a late answer to it approves nothing.
    pi.answer(&dialog.id, "Approve (Auto)");
    pi.state();
    let plans = host.plans(&session);
    assert_eq!(plans.len(), 1, "{plans:#?}");
    assert_eq!(plans[0].status, ApprovalStatus::Expired, "{:#?}", plans[0]);
    nothing_executed(&fx, &mut pi, &host, &session);
}

/// The plan of scenario 6, exactly as the artifact must hold it.
const CAPTURED: &str =
    "# Capture the greeting\n\n1. Read `greeting.txt`.\n2. Replace `hello` with `goodbye`.\n";

/// (6) A `<proposed_plan>` block in a final assistant message becomes a checkpoint; `/plan
/// preview` shows it; `/plan save` → `Publish` writes `.pi/plans/<name>.md` with its bytes.
fn proposed_plan_is_captured_previewed_and_published(version: Version) {
    let fx = Fixture::new(version);
    let host = fx.start_host();
    let mut replies = 0usize;
    let _model = Responder::start(&fx.model, move |_req| {
        replies += 1;
        if replies == 1 {
            Reply::Text(format!(
                "Here is my plan.\n\n<proposed_plan>\n{CAPTURED}</proposed_plan>\n\nSay the word and I will save it."
            ))
        } else {
            Reply::text("Nothing more to plan.")
        }
    });
    let mut pi = fx.pi();
    let session = enter_plan(&mut pi, &host);
    pi.prompt("Propose a plan for the greeting.");
    let captured = pi.wait_notify(|m| m.contains("plan was captured as revision"));
    check(
        &pi,
        captured.contains("revision 1") && captured.contains("/plan --review"),
        &format!("the first capture is revision 1: {captured:?}"),
    );
    // A ready plan is offered for execution (seed 004's review); keep planning here.
    let review = pi.next_ui_request("the handoff review", |r| {
        r.method == "select" && r.title.contains("Hand it to execution?")
    });
    pi.answer(&review.id, "Keep planning");
    pi.wait_idle();

    pi.prompt("/plan preview");
    let preview = pi.wait_notify(|m| m.contains("Capture the greeting"));
    check(
        &pi,
        preview.contains(CAPTURED),
        &format!("/plan preview shows the exact plan {CAPTURED:?}: {preview:?}"),
    );
    // The person was shown revision 1: the host records it, so a later plan's card can show
    // what changed since.
    let seen = poll_until("the preview's plan.checkpoint_seen row", BOUND, || {
        host.audit_rows(&session, AuditAction::PlanCheckpointSeen)
            .first()
            .cloned()
    });
    // The row's detail is untyped JSON in the protocol.
    assert_eq!(seen.detail["revision"], 1, "{seen:#?}");
    assert_eq!(
        seen.detail["sha256"],
        planhost_core::sha256_hex(CAPTURED.as_bytes()),
        "{seen:#?}"
    );
    assert_eq!(seen.detail["by"]["client"], "pi-planhost", "{seen:#?}");

    let id = pi.send_prompt("/plan save");
    let dialog = pi.next_ui_request("the publication choice", |r| r.method == "select");
    check(
        &pi,
        dialog.title.starts_with("Publish revision") && dialog.options == ["Publish", "Cancel"],
        &format!(
            "a select titled \"Publish revision …\" offering Publish/Cancel: {:?} {:?}",
            dialog.title, dialog.options
        ),
    );
    pi.answer(&dialog.id, "Publish");
    let response = pi.wait_response(&id);
    check(
        &pi,
        response["success"] == true,
        &format!("/plan save: {response}"),
    );
    let done = pi.wait_notify(|m| m.contains("publication"));
    check(
        &pi,
        done.contains("completed"),
        &format!("the publication completed: {done:?}"),
    );

    let dir = fx.workspace().join(".pi/plans");
    let files: Vec<_> = fs_err::read_dir(&dir)
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .collect();
    assert_eq!(
        files.len(),
        1,
        "one published plan in {}: {files:?}",
        dir.display()
    );
    let file = &files[0];
    assert_eq!(
        file.extension().and_then(|e| e.to_str()),
        Some("md"),
        "{}",
        file.display()
    );
    let bytes = fs_err::read(file).unwrap();
    assert_eq!(
        String::from_utf8_lossy(&bytes),
        CAPTURED,
        "{} holds exactly the plan's bytes",
        file.display()
    );
    let publications = host.query::<methods::PublicationsList>(PublicationsFilter {
        session_id: Some(session.clone()),
        status: None,
        limit: None,
    });
    let latest = publications
        .items
        .first()
        .unwrap_or_else(|| panic!("a publication: {publications:#?}"));
    assert_eq!(
        latest.status,
        PublicationStatus::Completed,
        "{publications:#?}"
    );
    assert_eq!(latest.revision, 1, "{publications:#?}");
    let relative = file
        .strip_prefix(fx.workspace())
        .unwrap()
        .to_string_lossy()
        .into_owned();
    assert_eq!(latest.relative_path, relative, "{publications:#?}");
}

/// (7) A stale `update_plan_draft` revision reaches the model as an error that names the
/// current revision (and the host's stable code).
fn stale_update_plan_draft_names_the_current_revision(version: Version) {
    let fx = Fixture::new(version);
    let host = fx.start_host();
    let _model = Responder::start(&fx.model, |req| match req.results_of("update_plan_draft") {
        0 => Reply::tool(
            "update_plan_draft",
            json!({ "markdown": "# Draft\n\nFirst take.\n", "expectedRevision": 0 }),
        ),
        1 => Reply::tool(
            "update_plan_draft",
            json!({ "markdown": "# Draft\n\nSecond take.\n", "expectedRevision": 0 }),
        ),
        _ => Reply::text("I will read the plan and try again."),
    });
    let mut pi = fx.pi();
    enter_plan(&mut pi, &host);
    pi.prompt("Draft the plan twice.");
    let first = pi.wait_tool_end("update_plan_draft");
    let second = pi.wait_tool_end("update_plan_draft");
    pi.wait_idle();
    check(
        &pi,
        !first.is_error && first.text.contains("revision 1"),
        &format!("the first draft is saved as revision 1: {first:?}"),
    );
    let wanted = ["CHECKPOINT_REVISION_STALE", "current revision is 1"];
    check(
        &pi,
        second.is_error && wanted.iter().all(|w| second.text.contains(w)),
        &format!(
            "the stale draft is an error containing {wanted:?}; got is_error={} text={:?}",
            second.is_error, second.text
        ),
    );
    // What the model was told, as it was told.
    let seen = fx
        .model
        .requests()
        .into_iter()
        .enumerate()
        .map(|(index, body)| ChatRequest { body, index })
        .filter_map(|r| {
            r.tool_results()
                .into_iter()
                .filter(|(n, _)| n == "update_plan_draft")
                .nth(1)
                .map(|(_, text)| text)
        })
        .next();
    check(
        &pi,
        seen.as_ref()
            .is_some_and(|t| wanted.iter().all(|w| t.contains(w))),
        &format!("the model saw the stale error containing {wanted:?}: {seen:?}"),
    );
}

/// (8) The host is SIGKILLed while an approval is pending: the extension starts it again, the
/// approval is `interrupted` with `HOST_RESTARTED`, pi says so, and nothing is replayed.
fn host_killed_while_pending_interrupts_the_approval(version: Version) {
    let fx = Fixture::new(version);
    fx.write("greeting.txt", "hello world\n");
    let mut first = fx.start_host();
    let mut pi = fx.pi();
    let _model = Responder::start(&fx.model, submit_then_edit_if_executed(pi.log()));
    let session = enter_plan(&mut pi, &first);
    let dialog = submit_and_get_dialog(&mut pi);
    let pending =
        first.wait_latest_plan(&session, "pending", |p| p.status == ApprovalStatus::Pending);
    let old = first.pid();
    first.kill();

    // The extension notices the lost connection, starts `PLANHOST_BIN serve` again and reopens.
    let host = fx.adopt_restarted_host(old);
    let note = pi.wait_notify(|m| m.contains("HOST_RESTARTED"));
    check(
        &pi,
        note.contains("interrupted"),
        &format!("pi says the approval was interrupted: {note:?}"),
    );
    let plan = host.wait_latest_plan(&session, "interrupted", |p| {
        p.status != ApprovalStatus::Pending
    });
    assert_eq!(plan.proposal_id, pending.proposal_id, "{plan:#?}");
    assert_eq!(plan.status, ApprovalStatus::Interrupted, "{plan:#?}");
    assert_eq!(plan.error_code, Some(ErrorCode::HostRestarted), "{plan:#?}");
    let reopened = host.session_of(&mut pi);
    assert_eq!(reopened.id, session, "the same host session: {reopened:#?}");
    nothing_executed(&fx, &mut pi, &host, &session);

    // The dialog the restart closed approves nothing when answered late.
    pi.answer(&dialog.id, "Approve (Auto)");
    pi.state();
    let plans = host.plans(&session);
    assert_eq!(plans.len(), 1, "{plans:#?}");
    assert_eq!(
        plans[0].status,
        ApprovalStatus::Interrupted,
        "{:#?}",
        plans[0]
    );
    nothing_executed(&fx, &mut pi, &host, &session);
    // pi first: a host killed under a live pi would be started again by the extension.
    drop(pi);
    drop(host);
}

/// The pid a command wrote to a workspace file, once it is there.
fn pid_in(fx: &Fixture, rel: &str) -> i32 {
    poll_until(&format!("a pid in {rel}"), BOUND, || {
        fx.read(rel).and_then(|t| t.trim().parse::<i32>().ok())
    })
}

/// Waits (a few seconds at most) for every pid to be gone, and for no `sleep` to be left
/// running in the workspace (whatever pid it has: a `setsid` that forked would hide one).
fn all_dead(fx: &Fixture, pi: &PiSession, pids: &[(&str, i32)], what: &str) {
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    let workspace = fx.workspace();
    loop {
        let mut alive: Vec<(&str, i32)> = pids
            .iter()
            .filter(|(_, p)| process_alive(*p))
            .copied()
            .collect();
        alive.extend(
            processes_in(&workspace, "sleep")
                .into_iter()
                .filter(|p| !pids.iter().any(|(_, q)| q == p))
                .map(|p| ("another sleep in the workspace", p)),
        );
        if alive.is_empty() {
            return;
        }
        if std::time::Instant::now() >= deadline {
            let stats: Vec<String> = alive
                .iter()
                .map(|(name, p)| {
                    let stat =
                        fs_err::read_to_string(format!("/proc/{p}/stat")).unwrap_or_default();
                    format!("{name} {p}: {}", stat.trim())
                })
                .collect();
            panic!(
                "{}",
                pi.failure(&format!("{what}: still alive after 5 s: {stats:?}"))
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Agent mode, permission `auto` (set by an approver client), for Bash to run unasked.
fn agent_auto(pi: &mut PiSession, host: &Host) -> SessionId {
    let session = host.session_of(pi).id;
    let configured = configure_permission(host, &session, PermissionMode::Auto);
    assert_eq!(configured.mode, Mode::Agent, "{configured:#?}");
    assert_eq!(
        configured.permission_mode,
        PermissionMode::Auto,
        "{configured:#?}"
    );
    session
}

/// A person sets the session's permission mode (`sessions.configure`).
fn configure_permission(host: &Host, session: &SessionId, mode: PermissionMode) -> SessionInfo {
    host.approve_call::<methods::SessionsConfigure>(ConfigureParams {
        permission_mode: Some(mode),
        ..params::configure(session)
    })
}

/// A person sets the host's default policy preset (`settings.set`); the preset it then has.
fn default_preset(host: &Host, preset: PolicyPreset) -> Option<PolicyPreset> {
    host.approve_call::<methods::SettingsSet>(SettingsPatch {
        default_permission_mode: None,
        default_shell: None,
        default_policy_preset: Some(Some(preset)),
    })
    .default_policy_preset
}

/// (9) A Bash timeout (pi's `timeout`, seconds) kills the whole tree, including a grandchild
/// that left the process group with `setsid`.
fn bash_timeout_kills_a_setsid_grandchild(version: Version) {
    let fx = Fixture::new(version);
    let host = fx.start_host();
    let _model = Responder::start(&fx.model, |req| {
        if req.results_of("bash") == 0 {
            Reply::tool(
                "bash",
                json!({ "command": "setsid sleep 600 & echo $! > pid.txt; sleep 600", "timeout": 1 }),
            )
        } else {
            Reply::text("It timed out.")
        }
    });
    let mut pi = fx.pi();
    let session = agent_auto(&mut pi, &host);
    pi.prompt("Run the long command.");
    let grandchild = pid_in(&fx, "pid.txt");
    let _cleanup = KillOnDrop(vec![grandchild]);
    let bash = pi.wait_tool_end("bash");
    pi.wait_idle();
    check(
        &pi,
        bash.is_error && bash.text.contains("timed out"),
        &format!("bash ends with a timeout error: {bash:?}"),
    );
    check(
        &pi,
        pi.dialogs().is_empty(),
        "auto runs Bash without asking",
    );
    let _strays = KillOnDrop(processes_in(&fx.workspace(), "sleep"));
    all_dead(
        &fx,
        &pi,
        &[("setsid grandchild", grandchild)],
        "the timeout kills the setsid grandchild",
    );
    let executed = host.audit_rows(&session, AuditAction::ToolExecuted);
    assert!(
        executed.iter().any(|r| r.detail["tool"] == "Bash"),
        "the host ran the command: {executed:#?}"
    );
}

/// (9) pi's `abort` during a running `sleep 600` kills the command's tree: the shell, a
/// background child and a `setsid` grandchild.
fn abort_kills_a_running_bash_tree(version: Version) {
    let fx = Fixture::new(version);
    let host = fx.start_host();
    let _model = Responder::start(&fx.model, |req| {
        if req.results_of("bash") == 0 {
            Reply::tool(
                "bash",
                json!({ "command": "echo $$ > shell.txt; sleep 600 & echo $! > child.txt; \
                                    setsid sleep 600 & echo $! > grandchild.txt; sleep 600" }),
            )
        } else {
            Reply::text("Aborted.")
        }
    });
    let mut pi = fx.pi();
    agent_auto(&mut pi, &host);
    pi.prompt("Run the long command.");
    let pids = [
        ("shell", pid_in(&fx, "shell.txt")),
        ("background child", pid_in(&fx, "child.txt")),
        ("setsid grandchild", pid_in(&fx, "grandchild.txt")),
    ];
    let _cleanup = KillOnDrop(pids.iter().map(|(_, p)| *p).collect());
    check(
        &pi,
        pids.iter().all(|(_, p)| process_alive(*p)),
        &format!("the command is running: {pids:?}"),
    );
    // The test's premise, once the command is fully up (the pid files are written just
    // before the shell's own sleep starts, and before `setsid` has run in its child): `setsid`
    // made the grandchild a session of its own in place (so `$!` is its pid), and the child's
    // and grandchild's sleeps run in the workspace with the shell's own.
    let (shell, grandchild) = (pids[0].1, pids[2].1);
    let premise = || {
        let sleeping = processes_in(&fx.workspace(), "sleep");
        let separate = session_of_process(grandchild) == Some(grandchild)
            && session_of_process(shell) != Some(grandchild);
        let all_up =
            sleeping.len() >= 3 && [pids[1].1, grandchild].iter().all(|p| sleeping.contains(p));
        (separate && all_up, sleeping)
    };
    let deadline = std::time::Instant::now() + BOUND;
    let mut state = premise();
    while !state.0 && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
        state = premise();
    }
    check(
        &pi,
        state.0,
        &format!(
            "the grandchild {grandchild} leads its own session ({:?}; the shell's is {:?}) and \
             the workspace's sleeps {:?} include the child's and grandchild's and the shell's",
            session_of_process(grandchild),
            session_of_process(shell),
            state.1
        ),
    );
    pi.abort();
    let bash = pi.wait_tool_end("bash");
    check(
        &pi,
        bash.is_error && bash.text.contains("aborted"),
        &format!("bash ends aborted: {bash:?}"),
    );
    let _strays = KillOnDrop(processes_in(&fx.workspace(), "sleep"));
    all_dead(&fx, &pi, &pids, "pi's abort kills the command's tree");
}

/// (11b) Plan with the `host` preset and permission `ask`: `find . -name victim.txt -delete`
/// asks; Deny keeps victim.txt. The workspace is under `/tmp` and protected all the same: a
/// `write` to it is denied.
fn host_preset_find_delete_asks_and_deny_keeps_the_file(version: Version) {
    let fx = Fixture::new(version);
    assert!(
        fx.workspace().starts_with("/tmp"),
        "the workspace is under /tmp: {}",
        fx.workspace().display()
    );
    fx.write("victim.txt", "still here\n");
    let host = fx.start_host();
    assert_eq!(
        default_preset(&host, PolicyPreset::Host),
        Some(PolicyPreset::Host)
    );
    let _model = Responder::start(&fx.model, |req| {
        if req.results_of("bash") == 0 {
            Reply::tool(
                "bash",
                json!({ "command": "find . -name victim.txt -delete" }),
            )
        } else if req.results_of("write") == 0 {
            Reply::tool(
                "write",
                json!({ "path": "victim.txt", "content": "overwritten\n" }),
            )
        } else {
            Reply::text("Both were stopped.")
        }
    });
    let mut pi = fx.pi();
    let session = enter_plan(&mut pi, &host);
    let configured = configure_permission(&host, &session, PermissionMode::Ask);
    assert_eq!(
        configured.permission_mode,
        PermissionMode::Ask,
        "{configured:#?}"
    );
    assert_eq!(configured.mode, Mode::Plan, "{configured:#?}");
    pi.prompt("Clean up victim.txt.");
    let ask = pi.next_ui_request("the find -delete ask", |r| r.method == "select");
    check(
        &pi,
        ask.options == ["Deny", "Allow"] && ask.title.contains("victim.txt"),
        &format!(
            "a Deny-first select showing the command: {:?} {:?}",
            ask.title, ask.options
        ),
    );
    pi.answer(&ask.id, "Deny");
    let bash = pi.wait_tool_end("bash");
    let write = pi.wait_tool_end("write");
    pi.wait_idle();
    check(&pi, bash.is_error, &format!("the denied bash: {bash:?}"));
    // Plan's tool set has no writer (the host's deny stands behind it).
    blocked_with(&pi, &write, "Tool write not found");
    assert_eq!(fx.read("victim.txt").as_deref(), Some("still here\n"));
    let executed = host.audit_rows(&session, AuditAction::ToolExecuted);
    assert!(
        !executed.iter().any(|r| r.detail["tool"] == "Bash"),
        "the host ran no command: {executed:#?}"
    );
    check(
        &pi,
        pi.dialogs().len() == 1,
        "one ask: the write is denied unasked",
    );
}

/// (11b) `pi -c` comes back in Plan: the same host session (same externalId), mode `plan`, and
/// a `write` is still denied.
fn continue_comes_back_in_plan(version: Version) {
    let fx = Fixture::new(version);
    fx.write("notes.txt", "original\n");
    let host = fx.start_host();
    let _model = Responder::start(&fx.model, |req| {
        if req.any_user_contains("Overwrite") && req.results_of("write") == 0 {
            Reply::tool(
                "write",
                json!({ "path": "notes.txt", "content": "overwritten\n" }),
            )
        } else {
            Reply::text("Noted.")
        }
    });
    let options = fx.options().session_dir(fx.session_dir());
    let mut first = fx.pi_with(options.clone());
    let external = first.session_id();
    let session = enter_plan(&mut first, &host);
    // pi writes its session file once there is a reply: without one, `-c` finds nothing.
    first.prompt("Remember that we are planning.");
    first.wait_idle();
    first.close();

    let mut second = fx.pi_with(options.continue_session());
    let resumed = second.session_id();
    check(
        &second,
        resumed == external,
        &format!("pi -c resumes session {external}; got {resumed}"),
    );
    let again = host.session_of(&mut second);
    assert_eq!(again.id, session, "the same host session: {again:#?}");
    assert_eq!(
        again.external_id.as_deref(),
        Some(external.as_str()),
        "{again:#?}"
    );
    assert_eq!(again.mode, Mode::Plan, "{again:#?}");
    second.prompt("Overwrite notes.txt.");
    let write = second.wait_tool_end("write");
    second.wait_idle();
    // Back in Plan after `pi -c`: Plan's tool set is applied again.
    blocked_with(&second, &write, "Tool write not found");
    assert_eq!(fx.read("notes.txt").as_deref(), Some("original\n"));
}

/// (12) A fork (pi's RPC `fork`) gets a fresh plan identity: a new host session for the new pi
/// session id, another planId, and none of the parent's checkpoints.
fn fork_gets_a_fresh_plan_identity(version: Version) {
    let fx = Fixture::new(version);
    let host = fx.start_host();
    let _model = Responder::start(&fx.model, |req| {
        if req.any_user_contains("Draft the plan") && req.results_of("update_plan_draft") == 0 {
            Reply::tool(
                "update_plan_draft",
                json!({ "markdown": "# Parent plan\n\nOnly the parent has it.\n", "expectedRevision": 0 }),
            )
        } else {
            Reply::text("Noted.")
        }
    });
    let mut pi = fx.pi_with(fx.options().session_dir(fx.session_dir()));
    let parent_external = pi.session_id();
    let parent = enter_plan(&mut pi, &host);
    pi.prompt("Draft the plan.");
    let draft = pi.wait_tool_end("update_plan_draft");
    check(
        &pi,
        !draft.is_error,
        &format!("the parent's draft: {draft:?}"),
    );
    pi.wait_idle();
    pi.prompt("Anything else to add?");
    pi.wait_idle();

    let parent_branch = entry_ids(&session_file(&mut pi));
    let on_parent_branch = |session: &SessionId| BranchRef {
        session_id: session.clone(),
        branch_path: parent_branch.clone(),
    };
    let parent_status = host.query::<methods::PlansStatus>(on_parent_branch(&parent));
    assert_eq!(parent_status.revision, Some(1), "{parent_status:#?}");
    let parent_plan = parent_status.plan_id.clone();
    assert!(!parent_plan.as_str().is_empty(), "{parent_status:#?}");

    let forkable = pi.request_ok("get_fork_messages", json!({}));
    let entry = forkable["messages"]
        .as_array()
        .and_then(|m| {
            m.iter().find(|m| {
                m["text"]
                    .as_str()
                    .is_some_and(|t| t.contains("Anything else"))
            })
        })
        .and_then(|m| m["entryId"].as_str())
        .map(str::to_owned)
        .unwrap_or_else(|| panic!("{}", pi.failure(&format!("no fork point in {forkable}"))));
    let forked = pi.request_ok("fork", json!({ "entryId": entry }));
    check(
        &pi,
        forked["cancelled"] != true,
        &format!("the fork was cancelled: {forked}"),
    );
    let fork_external = pi.session_id();
    check(
        &pi,
        fork_external != parent_external,
        &format!("the fork has a new pi session id; both are {fork_external}"),
    );

    let fork_session = host.session_of(&mut pi);
    let fork = fork_session.id.clone();
    assert_ne!(fork, parent, "a new host session: {fork_session:#?}");
    assert_eq!(
        fork_session.external_id.as_deref(),
        Some(fork_external.as_str()),
        "{fork_session:#?}"
    );
    // The fork's branch is a prefix of the parent's, which holds the checkpoint's anchor: even
    // asked with the whole parent branch, the fork has none of the parent's checkpoints.
    let fork_status = host.query::<methods::PlansStatus>(on_parent_branch(&fork));
    let fork_plan = &fork_status.plan_id;
    assert!(!fork_plan.as_str().is_empty(), "{fork_status:#?}");
    assert_ne!(
        *fork_plan, parent_plan,
        "a fresh plan identity: {fork_status:#?}"
    );
    assert!(fork_status.revision.is_none(), "{fork_status:#?}");
    let code = host.query_err::<methods::CheckpointsLatest>(on_parent_branch(&fork));
    assert_eq!(code, "CHECKPOINT_NONE", "the fork's checkpoints.latest");
    let projection = host.query::<methods::CheckpointsProjection>(on_parent_branch(&fork));
    assert_eq!(projection.text, "", "{projection:#?}");
    // The parent keeps its own.
    let kept = host.query::<methods::CheckpointsLatest>(on_parent_branch(&parent));
    assert_eq!(kept.checkpoint.revision, 1, "{kept:#?}");
}

/// Issue 10 (3): the plan file is changed on disk after SubmitPlan; the person answers
/// "Approve": the host refuses (`PLAN_ARTIFACT_CHANGED`), pi says the file changed, nothing is
/// claimed or run, and the approval stays pending for a reject or a new plan.
fn a_plan_file_changed_after_submit_is_not_approved_and_pi_says_so(version: Version) {
    let fx = Fixture::new(version);
    fx.write("greeting.txt", "hello world\n");
    let host = fx.start_host();
    let mut pi = fx.pi();
    let _model = Responder::start(&fx.model, submit_then_edit_if_executed(pi.log()));
    let session = enter_plan(&mut pi, &host);
    let dialog = submit_and_get_dialog(&mut pi);
    let pending =
        host.wait_latest_plan(&session, "pending", |p| p.status == ApprovalStatus::Pending);
    let artifact = pending.artifact_path.clone();
    let mut bytes = fs_err::read(&artifact).unwrap();
    bytes.extend_from_slice(b"\n5. Also delete everything.\n");
    fs_err::write(&artifact, &bytes).unwrap();

    pi.answer(&dialog.id, "Approve (Auto)");
    let note = pi.wait_notify(|m| m.contains("PLAN_ARTIFACT_CHANGED"));
    check(
        &pi,
        note.contains("changed on disk"),
        &format!("the notify says the file changed: {note:?}"),
    );
    let plan = host.wait_latest_plan(&session, "still pending", |p| {
        p.status == ApprovalStatus::Pending
    });
    assert_eq!(plan.proposal_id, pending.proposal_id, "{plan:#?}");
    pi.state();
    check_both(
        &pi,
        &host,
        pi.log().messages_containing("user", MARKER) == 0,
        "no execution turn started from the tampered plan",
    );
    let claims = host.audit_rows(&session, AuditAction::ExecutionClaimed);
    assert!(claims.is_empty(), "nothing was claimed: {claims:#?}");
    assert_eq!(fx.read("greeting.txt").as_deref(), Some("hello world\n"));
}

/// Every model call of a tool loop sees the branch's latest checkpoint as it is at that call: a
/// draft saved by the previous turn's tool is in the next call, the older one is gone. (The
/// extension reuses the projection `checkpoints.capture` read at the turn's end, and drops it on
/// any change of the session.)
fn every_model_call_sees_the_latest_draft(version: Version) {
    let fx = Fixture::new(version);
    let host = fx.start_host();
    let _model = Responder::start(&fx.model, |req| match req.results_of("update_plan_draft") {
        0 => Reply::tool(
            "update_plan_draft",
            json!({ "markdown": "# Draft\n\nFirst take.\n", "expectedRevision": 0 }),
        ),
        1 => Reply::tool(
            "update_plan_draft",
            json!({ "markdown": "# Draft\n\nSecond take.\n", "expectedRevision": 1 }),
        ),
        _ => Reply::text("The draft is saved."),
    });
    let mut pi = fx.pi();
    enter_plan(&mut pi, &host);
    pi.prompt("Draft the plan, then improve it.");
    pi.wait_tool_end("update_plan_draft");
    pi.wait_tool_end("update_plan_draft");
    pi.wait_idle();
    let requests: Vec<ChatRequest> = fx
        .model
        .requests()
        .into_iter()
        .enumerate()
        .map(|(index, body)| ChatRequest { body, index })
        .collect();
    check(
        &pi,
        requests.len() >= 3,
        &format!("three model calls, got {}", requests.len()),
    );
    let shows = |r: &ChatRequest, revision: u32, text: &str| {
        r.any_user_contains(&format!("<plan_checkpoint revision=\"{revision}\""))
            && r.any_user_contains(text)
    };
    check(
        &pi,
        !requests[0].any_user_contains("<plan_checkpoint"),
        "no checkpoint before the first draft",
    );
    check(
        &pi,
        shows(&requests[1], 1, "First take."),
        "the second model call sees revision 1",
    );
    check(
        &pi,
        shows(&requests[2], 2, "Second take.")
            && !requests[2].any_user_contains("<plan_checkpoint revision=\"1\""),
        "the third model call sees revision 2, and only it",
    );
}

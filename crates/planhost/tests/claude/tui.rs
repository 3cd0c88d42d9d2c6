//! Claude Code's interactive TUI, driven in tmux as a person would: a plan waits for the
//! person's answer in planhost, nothing runs meanwhile — not when the person presses Escape and
//! asks for the work anyway — and once they approve with the CLI, "continue" carries it out.

use planhost_core::{ApprovalStatus, ExecutionState, Role};
use planhost_protocol::{PlansFilter, SessionsFilter, methods};
use planhost_test_support::{Reply, Responder};
use serde_json::json;

use crate::harness::{Asked, Fixture, Tui, text};

const PLAN: &str = "# Plan: greet\n\n1. Write hello.txt saying hello.\n";

/// (5, and the attended flow) The scripted model plans, calls ExitPlanMode, writes when asked
/// (planhost must refuse while the plan waits), and after "continue" leaves plan mode and
/// writes `hello.txt`.
#[test]
fn an_attended_plan_waits_for_the_person_and_an_interrupt_grants_nothing() {
    let fx = Fixture::new();
    fx.setup();
    let hello = fx.workspace().join("hello.txt");
    let target = hello.display().to_string();
    let _model = Responder::start(&fx.model, move |request| {
        let asked = Asked::of(request);

        let last_tool = asked.results.last().map(|(n, t)| (n.clone(), t.clone()));
        match &asked.last_user {
            Some((typed, true)) if typed.contains("write hello.txt now") => {
                return Reply::tool(
                    "Write",
                    json!({ "file_path": target, "content": "hello\n" }),
                );
            }
            Some((typed, true)) if typed.contains("continue") => {
                return Reply::tool("ExitPlanMode", json!({}));
            }
            Some((_, true)) => {
                return match &asked.plan_file {
                    Some(file) => {
                        Reply::tool("Write", json!({ "file_path": file, "content": PLAN }))
                    }
                    None => Reply::text("No plan file was named."),
                };
            }
            Some((_, false)) | None => {}
        }
        match last_tool {
            Some((name, said)) if name == "Write" && said.contains(".claude/plans") => {
                Reply::tool("ExitPlanMode", json!({}))
            }
            Some((name, said)) if name == "ExitPlanMode" && said.contains("holds") => {
                Reply::text("The plan waits for your answer in planhost.")
            }
            Some((name, _)) if name == "ExitPlanMode" => Reply::tool(
                "Write",
                json!({ "file_path": target, "content": "hello\n" }),
            ),
            Some((name, said)) if name == "Write" && said.contains("planhost") => {
                Reply::text("planhost refused: the plan still waits.")
            }
            Some(_) | None => Reply::text("Done."),
        }
    });
    let tui = Tui::start(&fx, &["--permission-mode", "plan"]);
    tui.type_line("plan a greeting");
    let screen = tui.wait_for("planhost's answer to ExitPlanMode", |s| {
        s.contains("The plan waits for your answer in planhost.")
    });
    assert!(
        screen.contains("planhost approve") && screen.contains("For the person"),
        "the person is told how to answer:\n{screen}"
    );
    let host = fx.adopt_host();
    let mut watcher = host.connect_as("e2e-watch", &[Role::Observer]);
    let pending = watcher
        .call::<methods::PlansList>(PlansFilter {
            session_id: None,
            status: Some(vec![ApprovalStatus::Pending]),
            limit: None,
        })
        .items;
    assert_eq!(pending.len(), 1, "{pending:#?}");

    // The person presses Escape, then asks for the work without answering the plan.
    tui.key("Escape");
    tui.type_line("write hello.txt now");
    let screen = tui.wait_for("the refusal", |s| {
        s.contains("planhost refused: the plan still waits.")
    });
    assert!(
        !hello.exists(),
        "nothing runs while the plan waits:\n{screen}"
    );
    let still = watcher
        .call::<methods::PlansList>(PlansFilter {
            session_id: None,
            status: None,
            limit: None,
        })
        .items;
    assert_eq!(
        still[0].status,
        ApprovalStatus::Pending,
        "never granted: {still:#?}"
    );

    // The person approves in planhost, then tells Claude to continue.
    let id = pending[0].proposal_id.as_str().to_owned();
    let out = fx.planhost(&["approve", &id, "--mode", "accept-edits"]);
    assert!(out.status.success(), "{}", text(&out));
    tui.type_line("continue");
    let screen = tui.wait_for("the work done", |s| s.contains("Done."));
    assert_eq!(
        fs_err::read_to_string(&hello).unwrap_or_default(),
        "hello\n",
        "{screen}"
    );
    // Claude Code runs its Stop hook, which ends the execution, just after it shows the answer.
    planhost_test_support::poll_until(
        "the approved plan's execution to complete",
        planhost_test_support::BOUND,
        || {
            let session = watcher
                .call::<methods::SessionsList>(SessionsFilter {
                    include_ended: None,
                    workspace_root: None,
                    limit: None,
                })
                .items
                .remove(0);
            session
                .last_execution
                .filter(|e| e.state == ExecutionState::Completed)
        },
    );
}

/// A command planhost asks about in Plan is put to the person in Claude Code's own dialog; the
/// person's yes there runs it, and planhost closes its ask as answered in that dialog (no page
/// or CLI offers to answer a call that already ran), with the client that said so.
#[test]
fn an_ask_answered_in_claude_codes_dialog_is_closed_and_recorded() {
    let fx = Fixture::new();
    fx.setup();
    let victim = fx.workspace().join("old.log");
    fs_err::write(&victim, "old\n").unwrap();
    let _model = Responder::start(&fx.model, move |request| {
        let asked = Asked::of(request);
        match asked.results.last() {
            None => Reply::tool(
                "Bash",
                json!({ "command": "find . -name old.log -delete", "description": "Remove the old log" }),
            ),
            Some(_) => Reply::text("Removed."),
        }
    });
    let tui = Tui::start(&fx, &["--permission-mode", "plan"]);
    tui.type_line("tidy the old log");
    // The dialog is drawn in steps (the hook's reason before the choices), and it wraps its
    // text at the terminal's width: wait for the whole reason and the choices, read as one line.
    let flatten = |s: &str| s.replace("\n │ ", " ");
    let screen = tui.wait_for("Claude Code's own dialog", |s| {
        let flat = flatten(s);
        s.contains("find . -name old.log -delete")
            && flat.contains("answer Yes only if you want it to run now")
            && s.contains("1. Yes")
    });
    assert!(
        victim.exists(),
        "nothing ran before the person answered:\n{screen}"
    );
    let host = fx.adopt_host();
    let mut watcher = host.connect_as("e2e-watch", &[Role::Observer]);
    let open = |w: &mut planhost_test_support::host::Conn| {
        w.call::<methods::PermissionsList>(planhost_protocol::AsksFilter {
            session_id: None,
            status: Some(vec![planhost_protocol::AskStatus::Open]),
            limit: None,
        })
        .items
    };
    assert_eq!(
        open(&mut watcher).len(),
        1,
        "planhost's ask is open while the dialog is"
    );
    let flat = flatten(&screen);
    assert!(
        flat.contains("answer Yes only if you want it to run now"),
        "the dialog says what Yes does in Plan:\n{screen}"
    );
    assert!(
        !flat.contains("Plan mode: Plan mode"),
        "the dialog names the mode once:\n{screen}"
    );
    // The dialog takes keys once it is drawn and focused.
    std::thread::sleep(std::time::Duration::from_millis(700));
    tui.key("Enter");
    tui.wait_for("the command's end", |s| s.contains("Removed."));
    assert!(!victim.exists(), "the person's yes ran it");
    assert!(
        open(&mut watcher).is_empty(),
        "the ask is closed once the call ran"
    );
    let answered = watcher
        .call::<methods::AuditList>(planhost_protocol::AuditFilter {
            session_id: None,
            limit: Some(1000),
        })
        .items
        .into_iter()
        .find(|row| row.action == planhost_core::AuditAction::ToolAskAnswered)
        .expect("the answer is on record");
    assert_eq!(answered.detail["decision"], "allow", "{answered:?}");
    // Recorded as answered in Claude Code's own dialog: the routed command ran on that yes.
    assert_eq!(answered.detail["by"]["via"], "agent_dialog", "{answered:?}");
    assert!(
        answered.detail["note"]
            .as_str()
            .is_some_and(|n| n.contains("agent's own dialog")),
        "{answered:?}"
    );
}

/// `ask` means ask: in Agent mode under planhost's `ask` (the default), a Write is put to the
/// person in Claude Code's own dialog even though Claude Code's own mode is `acceptEdits`
/// (which would have written it unasked); Escape there runs nothing, and planhost's ask stays
/// open, never recorded as answered in a dialog.
#[test]
fn ask_asks_in_claude_codes_dialog_whatever_its_own_mode() {
    let fx = Fixture::new();
    fx.setup();
    let target = fx.workspace().join("notes.txt");
    let file = target.display().to_string();
    let _model = Responder::start(&fx.model, move |request| {
        let asked = Asked::of(request);
        match asked.results.last() {
            None => Reply::tool("Write", json!({ "file_path": file, "content": "notes\n" })),
            Some(_) => Reply::text("Stopped."),
        }
    });
    let tui = Tui::start(&fx, &["--permission-mode", "acceptEdits"]);
    tui.type_line("write the notes");
    let flatten = |s: &str| s.replace("\n │ ", " ");
    let screen = tui.wait_for("Claude Code's own dialog, forced by planhost", |s| {
        let flat = flatten(s);
        flat.contains("planhost asks: permission mode ask asks before Write runs")
            && s.contains("1. Yes")
    });
    assert!(
        !target.exists(),
        "nothing ran before the person answered:\n{screen}"
    );
    tui.key("Escape");
    std::thread::sleep(std::time::Duration::from_secs(2));
    assert!(!target.exists(), "No runs nothing");
    let host = fx.adopt_host();
    let mut watcher = host.connect_as("e2e-watch", &[Role::Observer]);
    let audit = watcher
        .call::<methods::AuditList>(planhost_protocol::AuditFilter {
            session_id: None,
            limit: Some(1000),
        })
        .items;
    assert!(
        audit
            .iter()
            .any(|r| r.action == planhost_core::AuditAction::ToolAsk),
        "asked, on record"
    );
    assert!(
        !audit
            .iter()
            .any(|r| r.action == planhost_core::AuditAction::ToolAskAnswered),
        "no dialog answer is recorded for a call that never ran"
    );
}

/// A rejection's note reaches the model in the TUI: the person rejects the waiting plan with a
/// note from the CLI, types "continue", and the model's next request carries the note (and the
/// session stays in Plan).
#[test]
fn a_rejection_note_reaches_the_model_in_the_tui() {
    let fx = Fixture::new();
    fx.setup();
    let _model = Responder::start(&fx.model, move |request| {
        let asked = Asked::of(request);
        match &asked.last_user {
            Some((typed, true)) if typed.contains("continue") => {
                return Reply::text("I will revise the plan.");
            }
            Some((_, true)) => {
                return match &asked.plan_file {
                    Some(file) => {
                        Reply::tool("Write", json!({ "file_path": file, "content": PLAN }))
                    }
                    None => Reply::text("No plan file was named."),
                };
            }
            Some((_, false)) | None => {}
        }
        match asked.results.last().map(|(n, _)| n.as_str()) {
            Some("Write") => Reply::tool("ExitPlanMode", json!({})),
            Some(_) | None => Reply::text("The plan waits for your answer in planhost."),
        }
    });
    let tui = Tui::start(&fx, &["--permission-mode", "plan"]);
    tui.type_line("plan a greeting");
    tui.wait_for("the plan waiting", |s| {
        s.contains("The plan waits for your answer in planhost.")
    });
    let host = fx.adopt_host();
    let mut watcher = host.connect_as("e2e-watch", &[Role::Observer]);
    let pending = watcher
        .call::<methods::PlansList>(PlansFilter {
            session_id: None,
            status: Some(vec![ApprovalStatus::Pending]),
            limit: None,
        })
        .items;
    assert_eq!(pending.len(), 1, "{pending:#?}");
    let id = pending[0].proposal_id.as_str().to_owned();
    let out = fx.planhost(&["reject", &id, "--feedback", "greet in French"]);
    assert!(out.status.success(), "{}", text(&out));
    tui.type_line("continue");
    tui.wait_for("the model's answer", |s| {
        s.contains("I will revise the plan.")
    });
    let told = fx.model.requests().iter().any(|r| {
        let body = r.to_string();
        body.contains("continue") && body.contains("Their note: greet in French")
    });
    assert!(
        told,
        "the model's request after the rejection carries the note"
    );
}

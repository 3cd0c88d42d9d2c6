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
    let session = watcher
        .call::<methods::SessionsList>(SessionsFilter {
            workspace_root: None,
            limit: None,
        })
        .items
        .remove(0);
    let execution = session
        .last_execution
        .or(session.live_execution)
        .expect("the approved plan's execution");
    assert_eq!(execution.state, ExecutionState::Completed, "{screen}");
}

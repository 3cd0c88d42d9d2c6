//! ExitPlanMode is planhost's SubmitPlan: headless Claude Code (`claude -p`) defers the call
//! with a durable pending approval, a person answers with the `planhost` CLI, and `claude -p
//! --resume` goes on with that answer.

use planhost_core::{ApprovalStatus, ExecutionState, Mode, Role};
use planhost_protocol::{PlansFilter, SessionsFilter, methods};
use planhost_test_support::host::Conn;
use planhost_test_support::{Reply, Responder};
use serde_json::json;

use crate::harness::{Asked, Fixture, Run, text};

const PLAN: &str = "# Plan: greet\n\n1. Write hello.txt saying hello.\n";

/// The scripted model: in plan mode it writes its plan to the file Claude Code named, then calls
/// ExitPlanMode; once ExitPlanMode went through it writes `hello.txt`; once that is answered it
/// stops.
fn planner(fx: &Fixture) -> Responder {
    let hello = fx.workspace().join("hello.txt").display().to_string();
    Responder::start(&fx.model, move |request| {
        let asked = Asked::of(request);
        let exited = asked.last_of("ExitPlanMode").is_some();
        match asked.results.last().map(|(name, _)| name.as_str()) {
            // Through (approved) or not (rejected: planhost must deny the write in Plan).
            Some("ExitPlanMode") => {
                Reply::tool("Write", json!({ "file_path": hello, "content": "hello\n" }))
            }
            Some("Write") if exited => Reply::text("Done."),
            Some("Write") => Reply::tool("ExitPlanMode", json!({})),
            Some(_) | None => match &asked.plan_file {
                Some(file) => Reply::tool("Write", json!({ "file_path": file, "content": PLAN })),
                None => Reply::text("No plan file was named."),
            },
        }
    })
}

fn session_id(run: &Run) -> String {
    run.events
        .iter()
        .find_map(|e| e["session_id"].as_str())
        .expect("a session id in Claude Code's output")
        .to_owned()
}

fn pending(conn: &mut Conn) -> planhost_protocol::ApprovalInfo {
    let list = conn.call::<methods::PlansList>(PlansFilter {
        session_id: None,
        status: Some(vec![ApprovalStatus::Pending]),
        limit: None,
    });
    assert_eq!(list.items.len(), 1, "one pending plan: {:#?}", list.items);
    list.items[0].clone()
}

/// Claude Code in plan mode, headless: `--permission-prompt-tool stdio` makes ExitPlanMode
/// available under `-p` (without it, Claude Code says there is no such tool).
fn plan_mode(extra: &[&str]) -> Vec<String> {
    let mut args = vec![
        "--permission-mode",
        "plan",
        "--permission-prompt-tool",
        "stdio",
    ];
    args.extend_from_slice(extra);
    args.into_iter().map(str::to_owned).collect()
}

fn claude(fx: &Fixture, prompt: Option<&str>, args: &[String]) -> Run {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    match prompt {
        Some(prompt) => fx.claude(prompt, &args),
        None => fx.claude_args(&args),
    }
}

/// (3, 6) Headless: ExitPlanMode defers with a pending approval whose artifact holds the exact
/// plan; a person approves it with the CLI; `claude -p --resume` leaves plan mode, and the
/// execution writes the file exactly once.
#[test]
fn a_deferred_plan_approved_from_the_cli_resumes_and_runs_once() {
    let fx = Fixture::new();
    fx.setup();
    let _model = planner(&fx);
    let first = claude(&fx, Some("plan a greeting"), &plan_mode(&[]));
    let host = fx.adopt_host();
    assert!(
        first.stdout.contains("tool_deferred"),
        "the run ends with ExitPlanMode deferred: {}",
        first.dump()
    );
    let mut watcher = host.connect_as("e2e-watch", &[Role::Observer]);
    let approval = pending(&mut watcher);
    let artifact = fs_err::read_to_string(&approval.artifact_path).unwrap();
    assert_eq!(artifact, PLAN, "the artifact holds the exact plan");
    // The person who ran `claude -p` reads, on its stderr, the plan, where to answer, and the
    // exact command that goes on (its stdout stays the run's).
    let short = planhost_core::short_id(approval.proposal_id.as_str());
    let resume = format!(
        "Then go on with: claude -p --resume {} --permission-mode plan --permission-prompt-tool stdio",
        session_id(&first)
    );
    assert!(
        first.stderr.contains(&format!("planhost approve {short}"))
            && first.stderr.contains(&resume),
        "{}",
        first.dump()
    );
    // The draft Claude Code wrote to its plan file is kept as a checkpoint of this session.
    let draft = watcher.call::<methods::CheckpointsLatest>(planhost_protocol::BranchRef {
        session_id: approval.session_id.clone(),
        branch_path: vec![format!("claude-code:{}", session_id(&first)).into()],
    });
    assert_eq!(draft.markdown, PLAN);
    assert!(!fx.workspace().join("hello.txt").exists());

    let id = approval.proposal_id.as_str().to_owned();
    let out = fx.planhost(&["approve", &id, "--mode", "accept-edits"]);
    assert!(out.status.success(), "{}", text(&out));

    let sid = session_id(&first);
    let second = claude(&fx, None, &plan_mode(&["--resume", &sid]));
    assert_eq!(
        fs_err::read_to_string(fx.workspace().join("hello.txt")).unwrap_or_default(),
        "hello\n",
        "the approved plan ran: {}",
        second.dump()
    );
    let sessions = watcher
        .call::<methods::SessionsList>(SessionsFilter {
            include_ended: None,
            workspace_root: None,
            limit: None,
        })
        .items;
    assert_eq!(sessions.len(), 1, "{sessions:#?}");
    assert_eq!(sessions[0].mode, Mode::Agent);
    let last = sessions[0]
        .last_execution
        .clone()
        .or_else(|| sessions[0].live_execution.clone())
        .expect("the approved plan's execution");
    let audit: Vec<String> = watcher
        .call::<methods::AuditList>(planhost_protocol::AuditFilter {
            session_id: Some(sessions[0].id.clone()),
            limit: Some(200),
        })
        .items
        .iter()
        .rev()
        .map(|e| format!("{} {}", e.action.as_str(), e.detail))
        .collect();
    assert_eq!(
        last.state,
        ExecutionState::Completed,
        "{sessions:#?}\naudit:\n{}\n{}",
        audit.join("\n"),
        second.dump()
    );
    // The write of hello.txt itself (the plan draft mentions hello.txt too, and is on record as
    // the one file Plan admits).
    let hello = format!(
        "\"file_path\":\"{}\"",
        fx.workspace().join("hello.txt").display()
    );
    let writes = audit
        .iter()
        .filter(|row| row.starts_with("tool.allow ") && row.contains(&hello))
        .count();
    assert_eq!(writes, 1, "written exactly once:\n{}", audit.join("\n"));
}

/// (4) A plan the person rejects keeps the session in Plan: resumed, Claude Code is told it
/// was rejected with the person's note, and a Write is still denied.
#[test]
fn a_rejected_plan_keeps_plan_and_writes_stay_denied() {
    let fx = Fixture::new();
    fx.setup();
    let _model = planner(&fx);
    let first = claude(&fx, Some("plan a greeting"), &plan_mode(&[]));
    let host = fx.adopt_host();
    let mut watcher = host.connect_as("e2e-watch", &[Role::Observer]);
    let approval = pending(&mut watcher);
    let id = approval.proposal_id.as_str().to_owned();
    let out = fx.planhost(&["reject", &id, "--feedback", "greet in French"]);
    assert!(out.status.success(), "{}", text(&out));

    let sid = session_id(&first);
    let second = claude(&fx, None, &plan_mode(&["--resume", &sid]));
    let results = second.tool_results();
    assert!(
        results
            .iter()
            .any(|(t, e)| *e && t.contains("rejected") && t.contains("greet in French")),
        "the model hears the rejection and the note: {}",
        second.dump()
    );
    assert!(
        results
            .iter()
            .any(|(t, e)| *e && t.contains("POLICY_PLAN_WRITE_DENIED")),
        "the Write after it is denied: {}",
        second.dump()
    );
    assert!(!fx.workspace().join("hello.txt").exists());
    // Resumed, the model was told the mode and the last plan, labelled as rejected.
    let told = fx.model.requests().iter().any(|r| {
        r.to_string()
            .contains("The last plan, \\\"greet\\\", was rejected, with the note: greet in French")
    });
    assert!(
        told,
        "the resumed session's context names the rejected plan"
    );
}

/// (7) Nobody answers before the deadline: resumed, Claude Code is told the plan expired
/// (`PLAN_APPROVAL_TIMEOUT`), and the session stays in Plan (the Write after it is denied).
#[test]
fn an_unanswered_plan_expires_and_stays_in_plan() {
    let fx = Fixture::new();
    fx.setup();
    let host = planhost_test_support::host::Served::start_with(
        &fx.dirs,
        planhost_test_support::host::ServeOptions::default().test_clock(),
    );
    let _model = planner(&fx);
    let first = claude(&fx, Some("plan a greeting"), &plan_mode(&[]));
    let mut watcher = host.connect_as("e2e-watch", &[Role::Observer]);
    let approval = pending(&mut watcher);
    host.test_clock().set(31 * 60 * 1000);
    // The host notices a jump after the next request it serves.
    watcher.call::<methods::PlansGet>(planhost_protocol::ProposalRef {
        proposal_id: approval.proposal_id.clone(),
    });
    let sid = session_id(&first);
    let second = claude(&fx, None, &plan_mode(&["--resume", &sid]));
    let results = second.tool_results();
    assert!(
        results
            .iter()
            .any(|(t, e)| *e && t.contains("PLAN_APPROVAL_TIMEOUT")),
        "the model hears the plan expired: {}",
        second.dump()
    );
    assert!(
        results
            .iter()
            .any(|(t, e)| *e && t.contains("POLICY_PLAN_WRITE_DENIED")),
        "still in Plan: {}",
        second.dump()
    );
    assert!(!fx.workspace().join("hello.txt").exists());
}

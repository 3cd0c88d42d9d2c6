//! `planhost demo`: a whole scripted session through the real protocol, against a temporary
//! workspace and state directory, with no agent or model. It starts `planhost serve --stdio` as
//! a child and talks JSON-RPC to it, printing each event as it happens.

// This module writes for people on stdout; `serve --stdio` never runs it.
#![allow(clippy::print_stdout)]

use std::io::Write;
use std::process::{Command, Stdio};

use anyhow::Context as _;
use planhost_client::Client;
use planhost_core::{
    ApprovalAction, ExecutionOutcome, Interactivity, Mode, Role, TargetPermissionMode,
};
use planhost_protocol::{
    AuthorizeParams, BeginTurnParams, EndExecutionParams, EndTurnParams, ExecuteOutput,
    ExecuteParams, ExecutionRef, HostTool, Method, Notification, OpenSessionParams,
    ResolvePlanParams, SetModeParams, SubmitPlanParams, ToolOutput, TurnOutcome, methods,
};
use serde_json::json;

const PLAN: &str = "# Plan: greet the world\n\n1. Write `hello.txt`.\n2. Print it with Bash.\n";

fn show(note: &Notification) {
    let mut out = std::io::stdout().lock();
    let _ = match note.method.as_str() {
        planhost_protocol::notifications::TOOL_OUTPUT => {
            match serde_json::from_value::<ToolOutput>(note.params.clone()) {
                Ok(o) => write!(out, "  {} #{:<3} {}", o.stream.as_str(), o.seq, o.text),
                Err(_) => writeln!(out, "  {}", note.params),
            }
        }
        _ => {
            let p = &note.params;
            let mut body = p.clone();
            if let Some(map) = body.as_object_mut() {
                for key in ["sessionId", "seq", "at", "kind"] {
                    map.remove(key);
                }
            }
            writeln!(
                out,
                "  event #{:<3} {:<17} {}",
                p["seq"],
                p["kind"].as_str().unwrap_or("?"),
                body
            )
        }
    };
}

fn step(text: &str) {
    println!("\n> {text}");
}

pub(crate) fn run() -> anyhow::Result<()> {
    let state = tempfile::tempdir().context("creating a temporary state directory")?;
    let workspace = tempfile::tempdir().context("creating a temporary workspace")?;
    let exe = std::env::current_exe().context("finding the planhost binary")?;
    let mut child = Command::new(exe)
        .args(["serve", "--stdio", "--state-dir"])
        .arg(state.path())
        .env("PLANHOST_LOG", "warn")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .context("starting planhost serve --stdio")?;
    let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
        anyhow::bail!("the child has no stdio");
    };
    let mut c = Client::from_streams(stdout, stdin);
    let result = script(&mut c, workspace.path());
    drop(c);
    let _ = child.wait();
    result
}

fn call<M: Method>(c: &mut Client, params: M::Params) -> anyhow::Result<M::Result> {
    c.call_with(M::NAME, &params, show)
        .with_context(|| format!("{} failed", M::NAME))
}

fn script(c: &mut Client, root: &std::path::Path) -> anyhow::Result<()> {
    // The demo plays both the agent and the person who approves.
    let hello = c.initialize("planhost-demo", &[Role::Agent, Role::Approver])?;
    println!(
        "connected to {} {} over stdio (protocol v{})",
        hello.server_name, hello.server_version, hello.protocol_version
    );

    step("open a session on a temporary workspace and select Plan");
    let session = call::<methods::SessionsOpen>(
        c,
        OpenSessionParams {
            workspace_root: root.display().to_string(),
            external_id: Some("demo".into()),
            interactivity: Interactivity::Interactive,
            persistence: None,
            agent: None,
        },
    )?;
    let sid = session.id.clone();
    let _ = call::<methods::SessionsSetMode>(
        c,
        SetModeParams {
            session_id: sid.clone(),
            mode: Mode::Plan,
        },
    )?;

    step("a turn begins; the agent tries to Write in Plan mode");
    let turn = call::<methods::TurnsBegin>(
        c,
        BeginTurnParams {
            session_id: sid.clone(),
            origin: None,
        },
    )?;
    let authorize = |tool: HostTool, call_id: &str| AuthorizeParams {
        session_id: sid.clone(),
        turn_id: turn.id.clone(),
        tool_call_id: call_id.into(),
        tool_name: tool.as_str().into(),
        batch_index: 0,
        batch_size: 1,
        provenance: planhost_protocol::Provenance::built_in(),
        input: json!({}),
    };
    let denied = call::<methods::ToolsAuthorize>(c, authorize(HostTool::Write, "call-1"))?;
    println!(
        "  Write → {:?} {} ({})",
        denied.decision,
        denied.code.map_or("", |c| c.as_str()),
        denied.reason
    );

    step("the agent submits its plan");
    let allowed = call::<methods::ToolsAuthorize>(c, authorize(HostTool::SubmitPlan, "call-2"))?;
    println!("  SubmitPlan → {:?}", allowed.decision);
    let approval = call::<methods::PlansSubmit>(
        c,
        SubmitPlanParams {
            session_id: sid.clone(),
            turn_id: turn.id.clone(),
            tool_call_id: "call-2".into(),
            batch_index: 0,
            batch_size: 1,
            title: "Greet the world".into(),
            markdown: PLAN.into(),
            question: "Shall I implement this plan?".into(),
            branch_path: Some(vec!["demo-root".into(), "demo-entry-1".into()]),
        },
    )?;
    println!(
        "  wrote {} ({} bytes, sha256 {}…)",
        approval.artifact_path,
        approval.artifact_size_bytes,
        &approval.artifact_sha256[..12]
    );
    let _ = call::<methods::TurnsEnd>(
        c,
        EndTurnParams {
            session_id: sid.clone(),
            turn_id: turn.id.clone(),
            outcome: TurnOutcome::Completed,
        },
    )?;

    step("a person approves with permission mode auto");
    let approved = call::<methods::PlansResolve>(
        c,
        ResolvePlanParams {
            proposal_id: approval.proposal_id.clone(),
            session_id: sid.clone(),
            turn_id: approval.turn_id.clone(),
            tool_call_id: approval.tool_call_id.clone(),
            version: Some(approval.version),
            artifact_sha256: Some(approval.artifact_sha256.clone()),
            action: ApprovalAction::Approve,
            target_permission_mode: Some(TargetPermissionMode::Auto),
            feedback: None,
        },
    )?;
    let execution = approved
        .execution_id
        .clone()
        .context("approval queued no execution")?;

    step("the worker claims the execution and runs Bash with streamed output");
    let claimed = call::<methods::ExecutionsClaim>(
        c,
        ExecutionRef {
            session_id: sid.clone(),
            execution_id: execution.clone(),
        },
    )?;
    let exec_turn = claimed.turn;
    println!(
        "  the execution turn received the approved plan: {} bytes, sha256 {}…",
        claimed.markdown.len(),
        &claimed.sha256[..12]
    );
    let command = json!({ "command": "printf 'hello, world\\n' > hello.txt; cat hello.txt; echo 'done' >&2" });
    // The grant binds this exact input: the execute below must send the same.
    let bash = AuthorizeParams {
        turn_id: exec_turn.id.clone(),
        tool_call_id: "call-3".into(),
        input: command.clone(),
        ..authorize(HostTool::Bash, "call-3")
    };
    let decision = call::<methods::ToolsAuthorize>(c, bash)?;
    println!("  Bash → {:?} ({})", decision.decision, decision.rule);
    let result = call::<methods::ToolsExecute>(
        c,
        ExecuteParams {
            session_id: sid.clone(),
            turn_id: exec_turn.id.clone(),
            tool_call_id: "call-3".into(),
            tool: HostTool::Bash,
            input: command,
        },
    )?;
    let ExecuteOutput::Bash(ran) = result.output else {
        anyhow::bail!("tools.execute answered Bash with another tool's output");
    };
    println!(
        "  exit {} in {} ms",
        json!(ran.run.exit),
        ran.run.duration_ms
    );

    step("the worker finishes the execution");
    let done = call::<methods::ExecutionsEnd>(
        c,
        EndExecutionParams {
            session_id: sid.clone(),
            execution_id: execution,
            outcome: ExecutionOutcome::Completed,
        },
    )?;
    println!("  execution {}", done.state.as_str());
    while let Some(note) = c.next_notification(std::time::Duration::from_millis(200)) {
        show(&note);
    }
    println!(
        "\nworkspace now holds: {}",
        fs_err::read_to_string(root.join("hello.txt"))
            .unwrap_or_default()
            .trim()
    );
    Ok(())
}

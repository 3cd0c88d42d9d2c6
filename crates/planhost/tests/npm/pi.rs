//! `pi install npm:pi-planhost` in a clean HOME brings the launcher and the binary, and the
//! extension it installed runs a Plan session on that binary: no `PLANHOST_BIN`, no planhost on
//! PATH, the plan approved from `planhost approve`.

use std::path::PathBuf;
use std::time::Duration;

use planhost_core::{ApprovalStatus, Mode};
use planhost_protocol::{PlansFilter, methods};
use planhost_test_support::{ChatRequest, EventLog, Reply, Responder, Version};
use serde_json::json;

use crate::clean::{Clean, packages, text};
use crate::harness::Fixture;
use crate::plan_steps::{MARKER, TITLE, blocked_with, check, has_execution_message, plan_markdown};

/// A write (which Plan's tools leave out), then the plan, then, once the approved plan's
/// execution turn has begun (its user message on pi's screen), the edit it describes.
fn write_then_plan_then_edit(log: EventLog) -> impl FnMut(&ChatRequest) -> Reply + Send + 'static {
    let mut edit_sent = false;
    move |req| {
        if req.results_of("write") == 0 {
            return Reply::tool(
                "write",
                json!({ "path": "greeting.txt", "content": "overwritten\n" }),
            );
        }
        if req.results_of("SubmitPlan") == 0 {
            return Reply::tool(
                "SubmitPlan",
                json!({ "title": TITLE, "markdown": plan_markdown(), "question": "Shall I go ahead?" }),
            );
        }
        let executing = req.any_user_contains(MARKER)
            && log.wait_until(Duration::from_millis(300), has_execution_message);
        if executing && !edit_sent {
            edit_sent = true;
            return Reply::tool(
                "edit",
                json!({ "path": "greeting.txt",
                        "edits": [{ "oldText": "hello", "newText": "goodbye" }] }),
            );
        }
        Reply::text("Done.")
    }
}

#[test]
fn pi_install_brings_planhost_and_a_plan_session_runs_on_it() {
    let fx = Fixture::new(Version::V16);
    let clean = Clean::at(&fx.home());
    let node_dir = fx
        .install
        .node_bin_dir
        .clone()
        .expect("pi 1.6 runs on its own node");
    // pi runs on its node 22; nothing else of this machine's PATH.
    let path = format!("{}:{}", node_dir.display(), clean.path());
    let spec = format!("npm:pi-planhost@{}", packages().version);
    let out = clean
        .command(&fx.install.pi_bin)
        .args(["install", &spec])
        .env("PATH", &path)
        .env("PI_CODING_AGENT_DIR", fx.agent_dir())
        .current_dir(fx.workspace())
        .output()
        .unwrap();
    assert!(out.status.success(), "pi install {spec}: {}", text(&out));
    let modules = fx.agent_dir().join("npm/node_modules");
    for name in [
        "pi-planhost",
        "planhost",
        packages().platform().name.as_str(),
    ] {
        assert!(
            modules.join(name).is_dir(),
            "{name} in {}",
            modules.display()
        );
    }

    fx.write("greeting.txt", "hello world\n");
    let options = fx
        .plain_options()
        .env("PATH", &path)
        .env("PLANHOST_SOCKET", fx.socket())
        .env("PLANHOST_STATE_DIR", fx.state_dir());
    let mut pi = fx.pi_with(options);
    let _model = Responder::start(&fx.model, write_then_plan_then_edit(pi.log()));
    pi.prompt("/plan");
    let host = fx.adopt_host();
    let exe = fs_err::read_link(format!("/proc/{}/exe", host.pid())).unwrap();
    assert!(
        exe.starts_with(&modules),
        "the extension started the binary pi installed, not {}",
        exe.display()
    );
    let session = host.session_of(&mut pi).id;
    host.wait_mode(&session, Mode::Plan);

    pi.prompt("Plan the rename of the greeting.");
    let write = pi.wait_tool_end("write");
    // Plan's tools have no write: pi refuses the call before it runs (as in the pi scenarios).
    blocked_with(&pi, &write, "Tool write not found");
    assert_eq!(fx.read("greeting.txt").as_deref(), Some("hello world\n"));
    let pending = host.wait_latest_plan(&session, "a pending plan", |p| {
        p.status == ApprovalStatus::Pending
    });

    // A person approves from the CLI the same install put there.
    let cli: PathBuf = fx.agent_dir().join("npm/node_modules/.bin/planhost");
    let approved = clean
        .command(&cli)
        .args([
            "approve",
            pending.proposal_id.as_str(),
            "--mode",
            "accept-edits",
        ])
        .arg("--socket")
        .arg(fx.socket())
        .arg("--state-dir")
        .arg(fx.state_dir())
        .env("PATH", &path)
        .output()
        .unwrap();
    assert!(
        approved.status.success(),
        "planhost approve: {}",
        text(&approved)
    );

    let edit = pi.wait_tool_end("edit");
    check(
        &pi,
        !edit.is_error,
        &format!("the approved edit failed: {edit:?}"),
    );
    pi.wait_idle();
    assert_eq!(fx.read("greeting.txt").as_deref(), Some("goodbye world\n"));
    let plans = host.query::<methods::PlansList>(PlansFilter {
        session_id: Some(session.clone()),
        status: None,
        limit: None,
    });
    assert_eq!(
        plans.items[0].status,
        ApprovalStatus::Approved,
        "{plans:#?}"
    );
    assert_eq!(host.session(&session).mode, Mode::Agent);
}

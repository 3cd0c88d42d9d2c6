//! `planhost notify`: the command a person names runs whenever a plan or an ask starts waiting,
//! with what waits as JSON on its stdin; a failing or hanging command never holds the host up.

use std::time::{Duration, Instant};

use planhost_core::{Interactivity, PermissionMode};
use serde_json::Value;

use crate::cli::cli;
use crate::steps::*;
use crate::support::*;

/// The JSON lines the command appended to `file`, once there are at least `n`.
fn lines(file: &std::path::Path, n: usize) -> Vec<Value> {
    poll_until("the notify command's output", BOUND, || {
        let text = fs_err::read_to_string(file).ok()?;
        let lines: Vec<Value> = text
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
        (lines.len() >= n).then_some(lines)
    })
}

#[test]
fn the_notify_command_gets_each_plan_and_ask_that_starts_waiting() {
    let env = home();
    let out = env.root().join("notified.jsonl");
    let set = cli(&env, &["notify", &format!("cat >> '{}'", out.display())]).ok();
    assert!(set.stdout.contains("will run"), "{set:#?}");
    let shown = cli(&env, &["notify"]).ok();
    assert!(shown.stdout.contains("cat >>"), "{shown:#?}");
    let file = env.state_dir().join("notify.json");
    let mode =
        std::os::unix::fs::PermissionsExt::mode(&fs_err::metadata(&file).unwrap().permissions());
    assert_eq!(mode & 0o777, 0o600, "notify.json is the user's alone");

    let host = SocketHost::start(&env);
    let mut c = host.connect("e2e-notify");
    let sid = c.open_session(&env.workspace(), Interactivity::Interactive);
    let (turn, plan) = c.submit_plan(&sid, "Tell me");
    c.end_turn(&sid, &turn);
    let got = lines(&out, 1);
    let first = &got[0];
    assert_eq!(first["kind"], "plan", "{got:?}");
    assert_eq!(first["proposalId"], plan.proposal_id.as_str(), "{got:?}");
    assert_eq!(first["sessionId"], sid.as_str(), "{got:?}");
    assert_eq!(first["title"], "Tell me", "{got:?}");
    assert_eq!(first["artifactSha256"], plan.artifact_sha256, "{got:?}");
    assert_eq!(first["expiresAt"], plan.expires_at.0, "{got:?}");

    // An ask: another session in Agent mode with permission mode `ask`.
    let other = c.open_session(&env.workspace(), Interactivity::Interactive);
    host.connect_as("e2e-person", &[planhost_core::Role::Approver])
        .set_permission_mode(&other, PermissionMode::Ask);
    let turn = c.begin_turn(&other);
    let asked = c.authorize(&other, &turn, "write-1", "Write");
    assert_eq!(
        asked.decision,
        planhost_protocol::DecisionKind::Ask,
        "{asked:?}"
    );
    let got = lines(&out, 2);
    assert_eq!(got[1]["kind"], "ask", "{got:?}");
    assert_eq!(got[1]["toolName"], "Write", "{got:?}");
    assert_eq!(
        got[1]["requestId"],
        asked
            .request_id
            .as_ref()
            .map(planhost_core::AskId::as_str)
            .unwrap_or_default(),
        "{got:?}"
    );

    let cleared = cli(&env, &["notify", "--clear"]).ok();
    assert!(cleared.stdout.contains("no notify command"), "{cleared:#?}");
    assert!(!file.exists());
}

#[test]
fn a_failing_or_hanging_notify_command_never_holds_the_host_up() {
    let env = home();
    let started = env.root().join("started");
    // It writes its pid, then hangs far past its 300 ms.
    cli(
        &env,
        &[
            "notify",
            "--timeout-ms",
            "300",
            &format!("echo $$ > '{}'; exec sleep 60", started.display()),
        ],
    )
    .ok();
    let host = SocketHost::start(&env);
    let mut c = host.connect("e2e-notify");
    let sid = c.open_session(&env.workspace(), Interactivity::Interactive);
    let (turn, _) = c.submit_plan(&sid, "Hang");
    c.end_turn(&sid, &turn);
    let pid: i32 = poll_until("the command to start", BOUND, || {
        fs_err::read_to_string(&started).ok()?.trim().parse().ok()
    });
    // The host answers at once meanwhile, and the command is gone after its timeout.
    let t = Instant::now();
    assert_eq!(c.pending_plans().len(), 1);
    assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
    poll_until("the hanging command to be killed", BOUND, || {
        (!alive(pid)).then_some(())
    });

    // A command that fails: the plan still waits, the host still serves.
    cli(&env, &["notify", "exit 3"]).ok();
    let third = c.open_session(&env.workspace(), Interactivity::Interactive);
    let (_, plan) = c.submit_plan(&third, "Fails");
    assert_eq!(plan.status, planhost_core::ApprovalStatus::Pending);
    assert_eq!(c.pending_plans().len(), 2);

    // A file that is not a setting is said, not taken as "none".
    fs_err::write(env.state_dir().join("notify.json"), "{ nope").unwrap();
    let bad = cli(&env, &["notify"]);
    assert_ne!(bad.code, Some(0), "{bad:#?}");
    assert!(bad.stderr.contains("notify.json"), "{bad:#?}");
}

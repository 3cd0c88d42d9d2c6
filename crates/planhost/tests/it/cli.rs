//! The CLI a person types, against a running socket host — and against none.

use std::io::Read;
use std::process::{Command, Stdio};

use planhost_core::{Interactivity, Mode, PermissionMode, PlanState};
use pretty_assertions::assert_eq;
use serde_json::Value;

use crate::steps::*;
use crate::support::*;

/// What one CLI run did.
#[derive(Debug)]
pub(crate) struct Run {
    pub(crate) code: Option<i32>,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
}

impl Run {
    #[track_caller]
    pub(crate) fn ok(self) -> Self {
        assert_eq!(self.code, Some(0), "{self:#?}");
        self
    }

    #[track_caller]
    pub(crate) fn json(self) -> Value {
        let run = self.ok();
        serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {run:#?}"))
    }
}

/// Runs `planhost --state-dir … --socket … <args>` the way a person's terminal does: not as a
/// descendant of this test process. The tests hold `agent` connections (they play the agent),
/// and the host refuses `approver` to a child of an agent (`ROLE_APPROVER_REFUSED`), so the
/// command runs detached (`planhost_test_support::run_detached`). Bounded.
pub(crate) fn cli(env: &Env, args: &[&str]) -> Run {
    let mut cmd = Command::new(bin());
    cmd.arg("--state-dir")
        .arg(env.state_dir())
        .arg("--socket")
        .arg(env.socket())
        .args(args)
        // A HOME of the test's own: what the CLI reads there (Claude Code's settings, for
        // `doctor`) is the test's, not the machine's.
        .env("HOME", env.root())
        .env_remove("PLANHOST_LOG")
        .env_remove("PLANHOST_STATE_DIR");
    let run = planhost_test_support::run_detached(&cmd, BOUND);
    Run {
        code: run.code,
        stdout: run.stdout,
        stderr: run.stderr,
    }
}

/// Runs the same command as a child of this test process (so below its agent connections).
pub(crate) fn cli_child(env: &Env, args: &[&str]) -> Run {
    let mut child = Reaped::new(
        env.command()
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    // Both pipes are drained by threads so a chatty command cannot block on a full pipe.
    let out = child.child.stdout.take().unwrap();
    let err = child.child.stderr.take().unwrap();
    let drain = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut text = String::new();
            pipe.read_to_string(&mut text).unwrap();
            text
        })
    };
    let (out, err) = (drain(Box::new(out)), drain(Box::new(err)));
    let status = child.wait_exit(&format!("planhost {args:?} to exit"));
    Run {
        code: status.code(),
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
    }
}

fn approvals(list: &Value) -> &Vec<Value> {
    items(list)
}

fn find<'a>(list: &'a Value, proposal: &str) -> &'a Value {
    approvals(list)
        .iter()
        .find(|a| a["proposalId"] == proposal)
        .unwrap_or_else(|| panic!("{proposal} not in {list}"))
}

#[test]
fn the_cli_reads_and_resolves_plans_on_a_running_host() {
    let env = home();
    let host = SocketHost::start(&env);
    let mut c = host.connect("e2e-cli-setup");
    let a = c.open_session(&env.workspace(), Interactivity::Interactive);
    let (turn, first) = c.submit_plan(&a, "Ship the CLI");
    c.end_turn(&a, &turn);
    let first_id = first.proposal_id.to_string();

    let status = cli(&env, &["status"]).ok();
    assert!(status.stdout.contains("sessions  1"), "{status:#?}");
    assert!(
        status.stdout.contains("pending   1 plan approval(s)"),
        "{status:#?}"
    );
    assert!(
        status.stdout.contains(&format!("pid {}", host.pid())),
        "{status:#?}"
    );
    let status = cli(&env, &["status", "--json"]).json();
    assert_eq!(status["pendingApprovals"], 1);
    assert_eq!(status["health"]["pid"], host.pid());

    let pending = cli(&env, &["plans", "--pending", "--json"]).json();
    assert_eq!(approvals(&pending).len(), 1, "{pending}");
    assert_eq!(find(&pending, &first_id)["status"], "pending");
    assert_eq!(find(&pending, &first_id)["title"], "Ship the CLI");

    let show = cli(&env, &["show", &first_id[..8]]).ok();
    for expected in [
        "Ship the CLI",
        "question  Shall I implement this plan?",
        &format!("file      {}", first.artifact_path),
        "status    pending",
        "expiry    expires in ",
        &format!("proposal  {first_id}"),
        "1. Write `out.txt`.",
        "2. Run Bash.",
    ] {
        assert!(
            show.stdout.contains(expected),
            "{expected:?} missing:\n{}",
            show.stdout
        );
    }
    let detail = cli(&env, &["show", &first_id, "--json"]).json();
    assert_eq!(detail["markdown"], PLAN);
    assert_eq!(detail["artifactIntact"], true, "{detail}");

    let approved = cli(&env, &["approve", &first_id, "--mode", "auto"]).ok();
    assert!(approved.stdout.contains("approved"), "{approved:#?}");
    let all = cli(&env, &["plans", "--json"]).json();
    let row = find(&all, &first_id);
    assert_eq!(row["status"], "approved");
    assert_eq!(row["targetPermissionMode"], "auto");
    assert_eq!(row["executionState"], "queued");
    let session = c.get_session(&a);
    assert_eq!(session.mode, Mode::Agent);
    assert_eq!(session.permission_mode, PermissionMode::Auto);

    // A second plan, in another session, rejected with a note.
    let b = c.open_session(&env.workspace(), Interactivity::Interactive);
    let (turn, second) = c.submit_plan(&b, "Too risky");
    c.end_turn(&b, &turn);
    let second_id = second.proposal_id.to_string();
    let rejected = cli(&env, &["reject", &second_id, "--feedback", "smaller steps"]).ok();
    assert!(rejected.stdout.contains("rejected"), "{rejected:#?}");
    let all = cli(&env, &["plans", "--json"]).json();
    assert_eq!(find(&all, &second_id)["status"], "rejected");
    assert_eq!(find(&all, &second_id)["feedback"], "smaller steps");
    let sb = c.get_session(&b);
    assert_eq!((sb.mode, sb.plan_state), (Mode::Plan, PlanState::Stopped));

    // Refusals carry the stable code and exit 1.
    let unknown = cli(&env, &["approve", "0123456789abcdef"]);
    assert_eq!(unknown.code, Some(1), "{unknown:#?}");
    assert!(
        unknown.stderr.contains("PLAN_APPROVAL_NOT_FOUND"),
        "{unknown:#?}"
    );
    let twice = cli(&env, &["reject", &second_id]);
    assert_eq!(twice.code, Some(1), "{twice:#?}");
    assert!(
        twice.stderr.contains("PLAN_APPROVAL_NOT_PENDING"),
        "{twice:#?}"
    );

    let shells = cli(&env, &["shells", "--json"]).json();
    assert_eq!(shells["platform"], "linux");
    assert!(
        shells["options"]
            .as_array()
            .unwrap()
            .iter()
            .any(|o| o["id"] == "bash"),
        "{shells}"
    );
    let doctor = cli(&env, &["doctor", "--json"]).json();
    assert_eq!(doctor["healthy"], true, "{doctor}");
    let lock = doctor["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "lock")
        .unwrap();
    assert!(
        lock["detail"]
            .as_str()
            .unwrap()
            .contains(&host.pid().to_string()),
        "{lock}"
    );
}

#[test]
fn every_id_plans_prints_opens_its_plan() {
    let env = home();
    let host = SocketHost::start(&env);
    let mut c = host.connect("e2e-cli-ids");
    let mut ids = Vec::new();
    for title in ["First plan", "Second plan", "Third plan"] {
        let s = c.open_session(&env.workspace(), Interactivity::Interactive);
        let (turn, approval) = c.submit_plan(&s, title);
        c.end_turn(&s, &turn);
        ids.push((title, approval.proposal_id.to_string()));
    }
    let table = cli(&env, &["plans"]).ok();
    for (title, id) in &ids {
        let row = table
            .stdout
            .lines()
            .find(|l| l.ends_with(title))
            .unwrap_or_else(|| panic!("{title} missing:\n{}", table.stdout));
        let printed = row.split_whitespace().next().unwrap();
        let detail = cli(&env, &["show", printed, "--json"]);
        assert_eq!(
            detail.code,
            Some(0),
            "`plans` printed {printed:?} for {title}, but `show {printed}` fails: {detail:#?}"
        );
        let detail: Value = serde_json::from_str(&detail.stdout).unwrap();
        assert_eq!(detail["approval"]["proposalId"], id.as_str());
    }
}

#[test]
fn an_ambiguous_id_prefix_says_ambiguous_and_lists_the_candidates() {
    // Issue 10: an ambiguous prefix used to say "not found".
    let env = home();
    let host = SocketHost::start(&env);
    let mut c = host.connect("e2e-cli-ambiguous");
    let mut ids = Vec::new();
    for title in ["One plan", "Another plan"] {
        let s = c.open_session(&env.workspace(), Interactivity::Interactive);
        let (turn, approval) = c.submit_plan(&s, title);
        c.end_turn(&s, &turn);
        ids.push(approval.proposal_id.to_string());
    }
    // UUIDv7 ids made moments apart share their leading (time) digits.
    let shared = ids[0]
        .chars()
        .zip(ids[1].chars())
        .take_while(|(a, b)| a == b)
        .count();
    assert!(shared >= 8, "ids made together share a prefix: {ids:?}");
    let prefix = &ids[0][..8];
    for command in [["show", prefix], ["approve", prefix]] {
        let run = cli(&env, &command);
        assert_eq!(run.code, Some(1), "{run:#?}");
        assert!(run.stderr.contains("ID_AMBIGUOUS"), "{run:#?}");
        assert!(!run.stderr.contains("not found"), "{run:#?}");
        for id in &ids {
            assert!(
                run.stderr.contains(id.as_str()),
                "{id} not listed: {run:#?}"
            );
        }
    }
    // Nothing was approved.
    assert_eq!(c.pending_plans().len(), 2);
}

#[test]
fn without_a_host_the_cli_says_so() {
    let env = home();
    for args in [
        &["status"][..],
        &["status", "--json"][..],
        &["plans"][..],
        &["plans", "--pending", "--json"][..],
        &["show", "0123456789"][..],
        &["shells", "--json"][..],
        &["approve", "0123456789"][..],
    ] {
        let run = cli(&env, args);
        assert_eq!(run.code, Some(4), "{args:?}: {run:#?}");
        assert!(
            run.stderr.contains("HOST_UNREACHABLE"),
            "{args:?}: {run:#?}"
        );
        assert_eq!(run.stdout, "", "{args:?}");
    }
    // No host running is not a fault: one starts when an agent needs it. doctor says so,
    // as idle, and exits 0.
    let doctor = cli(&env, &["doctor", "--json"]);
    assert_eq!(doctor.code, Some(0), "{doctor:#?}");
    let report: Value = serde_json::from_str(&doctor.stdout).unwrap();
    assert_eq!(report["healthy"], true);
    let status = |name: &str| {
        report["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == name)
            .map(|c| c["status"].clone())
    };
    assert_eq!(status("lock"), Some(Value::from("idle")), "{report}");
    assert_eq!(status("socket"), Some(Value::from("idle")), "{report}");

    // A crashed host leaves its socket file behind; nobody answers on it.
    let mut host = SocketHost::start(&env);
    host.kill();
    assert!(env.socket().exists());
    let run = cli(&env, &["plans", "--pending", "--json"]);
    assert_eq!(run.code, Some(4), "{run:#?}");
    assert!(run.stderr.contains("HOST_UNREACHABLE"), "{run:#?}");
}

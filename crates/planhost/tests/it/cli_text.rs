//! What a person reads: the CLI's text output, as snapshots (ids, times and paths redacted).

use planhost_core::{Interactivity, Mode};

use crate::cli::cli;
use crate::steps::*;
use crate::support::*;

fn settings(env: &Env) -> insta::Settings {
    let mut s = insta::Settings::clone_current();
    s.add_filter(
        &regex_escape(&env.state_dir().display().to_string()),
        "[STATE]",
    );
    s.add_filter(
        &regex_escape(&env.socket().display().to_string()),
        "[SOCKET]",
    );
    s.add_filter(
        &regex_escape(&env.workspace().display().to_string()),
        "[WORKSPACE]",
    );
    s.add_filter(
        r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
        "[UUID]",
    );
    s.add_filter(r"\b[0-9a-f]{64}\b", "[SHA256]");
    s.add_filter(r"\b[0-9a-f]{8}\b", "[ID8]");
    // Relative times are variable-width ("in 29m 5s", "in 29m 59s", "in 29m"): in the plans
    // table the padding after them is normalized too, so the columns line up as in the snapshot.
    s.add_filter(r"in (?:\d+m \d+s|\d+m|\d+s)", "in [TIME]");
    s.add_filter(r"in \[TIME\] +", "in [TIME]         ");
    s.add_filter(r"pid \d+, up \d+s", "pid [PID], up [UP]");
    s.add_filter(r"planhost \d+\.\d+\.\d+", "planhost [VERSION]");
    s.add_filter(r"SQLite \d+\.\d+\.\d+", "SQLite [SQLITE]");
    s.add_filter(r"\d+\.\d+\.\d+ \(linked\)", "[SQLITE] (linked)");
    s.add_filter(r"/\S*/bash\b", "[BASH]");
    s
}

fn regex_escape(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '/' || c == '_' || c == '-' {
                c.to_string()
            } else {
                format!("\\{c}")
            }
        })
        .collect()
}

#[test]
fn plans_show_status_and_approve_read_well() {
    let env = home();
    let host = SocketHost::start(&env);
    let mut c = host.connect("agent");
    let sid = c.open_session(&env.workspace(), Interactivity::Interactive);
    c.set_mode(&sid, Mode::Plan);
    let (_, approval) = c.submit_plan(&sid, "Add a health check");
    let id = approval.proposal_id.to_string();
    let s = settings(&env);
    s.bind(|| {
        insta::assert_snapshot!(
            "plans_pending",
            cli(&env, &["plans", "--pending"]).ok().stdout
        );
        insta::assert_snapshot!("show", cli(&env, &["show", &id]).ok().stdout);
        insta::assert_snapshot!("status", cli(&env, &["status"]).ok().stdout);
        insta::assert_snapshot!(
            "approve",
            cli(&env, &["approve", &id, "--mode", "accept-edits"])
                .ok()
                .stdout
        );
        insta::assert_snapshot!("plans_after", cli(&env, &["plans"]).ok().stdout);
    });
}

#[test]
fn errors_and_doctor_without_a_host_read_well() {
    let env = home();
    let s = settings(&env);
    s.bind(|| {
        let run = cli(&env, &["plans"]);
        assert_eq!(run.code, Some(4));
        insta::assert_snapshot!("no_host_stderr", run.stderr);
        let doctor = cli(&env, &["doctor"]);
        assert_eq!(doctor.code, Some(0));
        insta::assert_snapshot!("doctor_no_host", doctor.stdout);
    });
}

/// The README's run command: the demo completes the whole flow through the real protocol.
#[test]
fn the_readme_demo_runs_the_whole_flow() {
    let env = home();
    let run = cli(&env, &["demo"]).ok();
    for expected in [
        "Write → Deny POLICY_PLAN_WRITE_DENIED",
        "SubmitPlan → Allow",
        "approvalChanged",
        "Bash → Allow",
        "stdout #0   hello, world",
        "execution completed",
        "workspace now holds: hello, world",
    ] {
        assert!(
            run.stdout.contains(expected),
            "missing {expected:?} in:\n{}",
            run.stdout
        );
    }
}

//! What planhost's Claude Code hook adds to each tool call (issue 18), against a no-op command
//! hook in the same run.
//!
//! Claude Code runs a command hook as `sh -c '<command>'` with the event on stdin and waits for
//! it to exit. Both variants are run that way, interleaved per call so that drift hits both
//! alike:
//! - the floor: `sh -c 'cat >/dev/null'` (a hook that reads its event and says nothing);
//! - planhost: `sh -c '<planhost-hook> claude-code'` (what `planhost setup` writes) with a
//!   `PreToolUse` of `Read` in a session in Agent mode (planhost answers `allow`), against a
//!   running host. Each call connects, `initialize`s with the session's reopen right behind it,
//!   and authorizes;
//! - the same through the full binary, `sh -c '<planhost> hook claude-code'` (what setup
//!   writes when the hook binary is not installed beside planhost).
//!
//! Target (issue 18): the time added, p50 ≤ 5 ms and p99 ≤ 15 ms.
//!
//! Claude Code's Bash through planhost (issue 28): a `PreToolUse` of Bash `true` (allowed, and
//! routed), then the command Claude Code's shell runs, `sh -c '<planhost-hook> run <call> --
//! true'` (the host runs `true` in its runner and the helper exits with its status), against
//! `sh -c 'true'`, what Claude Code's shell runs without planhost. Reported apart, and with the
//! hook: what a Bash call costs in all.
//!
//! Run: `cargo bench -p planhost --bench hook` (`PLANHOST_BENCH_CALLS`, default 500). Figures go
//! to docs/benchmarks.md.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use std::io::Write as _;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use planhost_test_support::bench::{knob, loadavg, met, ms, pct, print_machine, sorted};
use planhost_test_support::host::{Home, Served};

const BIN: &str = env!("CARGO_BIN_EXE_planhost");
const HOOK_BIN: &str = env!("CARGO_BIN_EXE_planhost-hook");

/// Runs `sh -c script` with `event` on stdin; the wall time to its exit, and its stdout.
fn hook(home: &Home, script: &str, event: &[u8]) -> (Duration, String) {
    let start = Instant::now();
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(script)
        .env("PLANHOST_STATE_DIR", home.state_dir())
        .env("PLANHOST_SOCKET", home.socket())
        .env_remove("PLANHOST_LOG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn the hook");
    child.stdin.take().unwrap().write_all(event).unwrap();
    let out = child.wait_with_output().expect("the hook's output");
    (
        start.elapsed(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

fn main() {
    let calls = knob("PLANHOST_BENCH_CALLS", 500);
    print_machine();
    println!("load before: {}", loadavg());
    let home = Home::new(BIN);
    let _host = Served::start(&home);
    let event = |id: usize| {
        serde_json::json!({
            "session_id": "bench-session",
            "cwd": home.workspace().display().to_string(),
            "hook_event_name": "PreToolUse",
            "permission_mode": "default",
            "tool_name": "Read",
            "tool_input": { "file_path": home.workspace().join("a.txt").display().to_string() },
            "tool_use_id": format!("toolu_{id}"),
        })
        .to_string()
        .into_bytes()
    };
    let planhost = format!("'{HOOK_BIN}' claude-code");
    let full = format!("'{BIN}' hook claude-code");
    let noop = "cat >/dev/null";
    // Warm up (the session is opened here) and check the answer is an allow.
    let (_, said) = hook(&home, &full, &event(0));
    assert!(
        said.contains("\"allow\""),
        "planhost allows the Read: {said}"
    );
    for _ in 0..20 {
        hook(&home, noop, &event(0));
    }
    let (mut floor, mut ours, mut fulls) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..calls {
        floor.push(hook(&home, noop, &event(i)).0);
        let (took, said) = hook(&home, &planhost, &event(i + 1));
        assert!(said.contains("\"allow\""), "{said}");
        ours.push(took);
        let (took, said) = hook(&home, &full, &event(i + 1));
        assert!(said.contains("\"allow\""), "{said}");
        fulls.push(took);
    }
    // Claude Code's Bash, routed: the hook's allow (with the command rewritten), then the
    // rewritten command, against the bare command.
    let bash = |id: usize| {
        serde_json::json!({
            "session_id": "bench-session",
            "cwd": home.workspace().display().to_string(),
            "hook_event_name": "PreToolUse",
            "permission_mode": "default",
            "tool_name": "Bash",
            "tool_input": { "command": "true" },
            "tool_use_id": format!("toolu_bash_{id}"),
        })
        .to_string()
        .into_bytes()
    };
    let (mut bare, mut routed, mut bash_hooks) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..calls {
        bare.push(hook(&home, "true", b"").0);
        let (took, said) = hook(&home, &planhost, &bash(i));
        assert!(
            said.contains("\"allow\"") && said.contains(" run "),
            "planhost allows and routes `true`: {said}"
        );
        bash_hooks.push(took);
        let run = format!("'{HOOK_BIN}' run toolu_bash_{i} -- true");
        let (took, _) = hook(&home, &run, b"");
        routed.push(took);
    }
    let (bare, routed, bash_hooks) = (sorted(bare), sorted(routed), sorted(bash_hooks));
    let (floor, ours, fulls) = (sorted(floor), sorted(ours), sorted(fulls));
    let added = |p: f64| ms(pct(&ours, p)) - ms(pct(&floor, p));
    println!("Claude Code PreToolUse hook, n = {calls} each, interleaved");
    println!(
        "  no-op command hook      p50 {:.2} ms  p99 {:.2} ms",
        ms(pct(&floor, 0.5)),
        ms(pct(&floor, 0.99))
    );
    println!(
        "  planhost-hook           p50 {:.2} ms  p99 {:.2} ms",
        ms(pct(&ours, 0.5)),
        ms(pct(&ours, 0.99))
    );
    println!(
        "  planhost hook (full)    p50 {:.2} ms  p99 {:.2} ms  (added p50 {:.2} ms)",
        ms(pct(&fulls, 0.5)),
        ms(pct(&fulls, 0.99)),
        ms(pct(&fulls, 0.5)) - ms(pct(&floor, 0.5))
    );
    println!(
        "  added by planhost       p50 {:.2} ms ({}; target <= 5 ms)  p99 {:.2} ms ({}; target <= 15 ms)",
        added(0.5),
        met(added(0.5) <= 5.0),
        added(0.99),
        met(added(0.99) <= 15.0)
    );
    println!("Claude Code's Bash `true`, n = {calls} each");
    println!(
        "  sh -c true (no planhost) p50 {:.2} ms  p99 {:.2} ms",
        ms(pct(&bare, 0.5)),
        ms(pct(&bare, 0.99))
    );
    println!(
        "  routed: planhost-hook run p50 {:.2} ms  p99 {:.2} ms  (added p50 {:.2} ms, p99 {:.2} ms)",
        ms(pct(&routed, 0.5)),
        ms(pct(&routed, 0.99)),
        ms(pct(&routed, 0.5)) - ms(pct(&bare, 0.5)),
        ms(pct(&routed, 0.99)) - ms(pct(&bare, 0.99))
    );
    println!(
        "  its PreToolUse hook      p50 {:.2} ms  p99 {:.2} ms",
        ms(pct(&bash_hooks, 0.5)),
        ms(pct(&bash_hooks, 0.99))
    );
    println!("load after: {}", loadavg());
}

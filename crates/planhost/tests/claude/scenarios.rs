//! Claude Code's tool calls as planhost decides them.

use planhost_core::{Agent, Mode, Role};
use planhost_protocol::{SessionsFilter, methods};
use planhost_test_support::Reply;
use serde_json::json;

use crate::harness::{Fixture, text};

/// (1) In Plan (`--permission-mode plan`), Claude Code's Write is denied by planhost with its
/// code, and the file is never written; the host session is in Plan, serving Claude Code.
#[test]
fn write_is_denied_in_plan() {
    let fx = Fixture::new();
    fx.setup();
    let target = fx.workspace().join("a.txt");
    fx.model.push(Reply::tool(
        "Write",
        json!({ "file_path": target.display().to_string(), "content": "hello\n" }),
    ));
    fx.model.push(Reply::text("I could not write it."));
    let run = fx.claude("write a.txt", &["--permission-mode", "plan"]);
    let host = fx.adopt_host();
    let results = run.tool_results();
    assert_eq!(results.len(), 1, "{}", run.dump());
    let (said, is_error) = &results[0];
    assert!(*is_error, "{}", run.dump());
    assert!(
        said.contains("POLICY_PLAN_WRITE_DENIED") && said.contains("planhost"),
        "the model is told planhost denied it, with the code: {said}"
    );
    assert!(!target.exists(), "the file was written");
    let mut watcher = host.connect_as("e2e-watch", &[Role::Observer]);
    let sessions = watcher
        .call::<methods::SessionsList>(SessionsFilter {
            include_ended: None,
            workspace_root: None,
            limit: None,
        })
        .items;
    assert_eq!(sessions.len(), 1, "{sessions:#?}");
    assert_eq!(sessions[0].mode, Mode::Plan);
    assert_eq!(sessions[0].agent, Agent::ClaudeCode);
}

/// In Agent mode, planhost's permission mode decides, not Claude Code's: under `ask` (the
/// default) a headless Write is refused since nobody can be asked, even with Claude Code's own
/// `acceptEdits`; with `planhost mode accept-edits` the Write runs and the file is written.
#[test]
fn write_is_allowed_in_agent_mode() {
    let fx = Fixture::new();
    fx.setup();
    let host = planhost_test_support::host::Served::start(&fx.dirs);
    let target = fx.workspace().join("b.txt");
    fx.model.push(Reply::tool(
        "Write",
        json!({ "file_path": target.display().to_string(), "content": "hello\n" }),
    ));
    fx.model.push(Reply::text("Not written."));
    let refused = fx.claude("write b.txt", &["--permission-mode", "acceptEdits"]);
    let results = refused.tool_results();
    assert!(
        results.len() == 1 && results[0].1 && results[0].0.contains("PERMISSION_NO_PERSON"),
        "{}",
        refused.dump()
    );
    assert!(!target.exists());
    let out = fx.planhost(&["mode", "accept-edits"]);
    assert!(out.status.success(), "{}", text(&out));
    fx.model.push(Reply::tool(
        "Write",
        json!({ "file_path": target.display().to_string(), "content": "hello\n" }),
    ));
    fx.model.push(Reply::text("Written."));
    let run = fx.claude("write b.txt", &["--permission-mode", "acceptEdits"]);
    drop(host);
    let results = run.tool_results();
    assert_eq!(results.len(), 1, "{}", run.dump());
    assert!(!results[0].1, "{}", run.dump());
    assert_eq!(
        fs_err::read_to_string(&target).unwrap_or_default(),
        "hello\n",
        "{}",
        run.dump()
    );
}

/// (2) In Plan, `find … -delete` is not provably read-only: planhost would ask a person, and
/// headless Claude Code has nobody to ask, so it is refused saying so (never left to Claude
/// Code's own mode), and the file stays.
#[test]
fn find_delete_is_refused_without_a_person_in_plan() {
    let fx = Fixture::new();
    fx.setup();
    let victim = fx.workspace().join("keep.txt");
    fs_err::write(&victim, "keep\n").unwrap();
    fx.model.push(Reply::tool(
        "Bash",
        json!({ "command": "find . -name keep.txt -delete", "description": "tidy" }),
    ));
    fx.model.push(Reply::text("Could not."));
    let run = fx.claude("tidy up", &["--permission-mode", "plan"]);
    let _host = fx.adopt_host();
    let results = run.tool_results();
    assert_eq!(results.len(), 1, "{}", run.dump());
    let (said, is_error) = &results[0];
    assert!(*is_error, "not run: {}", run.dump());
    assert!(
        said.contains("PERMISSION_NO_PERSON")
            && said.contains("no person can be asked here")
            && said.contains("`find -delete` deletes files"),
        "refused, saying why and what it would have asked: {said}"
    );
    assert_eq!(
        fs_err::read_to_string(&victim).unwrap_or_default(),
        "keep\n",
        "{}",
        run.dump()
    );
}

/// (8) No planhost can answer (its state directory is one others may write, so no host will
/// start there): every tool call is blocked, saying why, and nothing runs.
#[test]
fn an_unreachable_host_blocks_every_tool() {
    let fx = Fixture::new();
    fx.setup();
    let state = fx.dirs.state_dir();
    fs_err::create_dir_all(&state).unwrap();
    fs_err::set_permissions(&state, std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
    let target = fx.workspace().join("c.txt");
    fx.model.push(Reply::tool(
        "Write",
        json!({ "file_path": target.display().to_string(), "content": "x\n" }),
    ));
    fx.model.push(Reply::text("Blocked."));
    let run = fx.claude("write c.txt", &["--permission-mode", "acceptEdits"]);
    let results = run.tool_results();
    assert_eq!(results.len(), 1, "{}", run.dump());
    let (said, is_error) = &results[0];
    assert!(*is_error, "{}", run.dump());
    assert!(
        said.contains("planhost") && said.contains("HOST_UNREACHABLE"),
        "the model is told planhost cannot answer: {said}"
    );
    assert!(!target.exists(), "the file was written without planhost");
}

/// Sets the hooks up from a copy of planhost and its hook binary (setup writes the hook
/// binary's path), spoils the hook's copy with `spoil`, and asks for a Write that planhost
/// would allow (`acceptEdits`): with `onFailure: "block"` from setup, the tool is blocked, not
/// run, whatever became of the hook.
fn blocked_when_the_hook_fails(spoil: impl FnOnce(&std::path::Path)) {
    let fx = Fixture::new();
    let bin = fx.dirs.root().join("bin");
    fs_err::create_dir_all(&bin).unwrap();
    let (planhost, hook) = (bin.join("planhost"), bin.join("planhost-hook"));
    fs_err::copy(crate::harness::planhost_bin(), &planhost).unwrap();
    fs_err::copy(crate::harness::hook_bin(), &hook).unwrap();
    let out = fx.planhost_at(&planhost, &["setup", "claude-code"]);
    assert!(out.status.success(), "{}", text(&out));
    let written = fs_err::read_to_string(fx.settings()).unwrap();
    assert!(
        written.contains(&format!("{} claude-code", hook.display())),
        "setup writes the hook binary beside planhost: {written}"
    );
    spoil(&hook);
    let target = fx.workspace().join("d.txt");
    fx.model.push(Reply::tool(
        "Write",
        json!({ "file_path": target.display().to_string(), "content": "x\n" }),
    ));
    fx.model.push(Reply::text("Blocked."));
    let run = fx.claude("write d.txt", &["--permission-mode", "acceptEdits"]);
    let results = run.tool_results();
    assert_eq!(results.len(), 1, "{}", run.dump());
    assert!(results[0].1, "{}", run.dump());
    assert!(
        !target.exists(),
        "the file was written past a failed hook: {}",
        run.dump()
    );
}

/// (9) The hook's binary is gone (moved, uninstalled): Claude Code cannot run the hook.
#[test]
fn a_missing_hook_binary_blocks_every_tool() {
    blocked_when_the_hook_fails(|copy| fs_err::remove_file(copy).unwrap());
}

/// (9) The hook crashes (a binary that kills itself with SIGSEGV in place of planhost).
#[test]
fn a_crashing_hook_blocks_every_tool() {
    blocked_when_the_hook_fails(|copy| {
        fs_err::write(copy, "#!/bin/sh\nkill -SEGV $$\n").unwrap();
    });
}

/// A fork (`claude -p --resume <id> --fork-session`) is a new Claude Code session id, so it
/// opens a new host session with a plan identity of its own; the original is untouched.
#[test]
fn a_fork_opens_a_new_host_session() {
    let fx = Fixture::new();
    fx.setup();
    fx.model.push(Reply::text("First."));
    let first = fx.claude("hello", &["--permission-mode", "plan"]);
    let sid = first
        .events
        .iter()
        .find_map(|e| e["session_id"].as_str())
        .expect("a session id")
        .to_owned();
    fx.model.push(Reply::text("Forked."));
    let forked = fx.claude("again", &["--resume", &sid, "--fork-session"]);
    let fork_id = forked
        .events
        .iter()
        .find_map(|e| e["session_id"].as_str())
        .expect("a session id")
        .to_owned();
    assert_ne!(
        fork_id,
        sid,
        "Claude Code gave the fork its own id: {}",
        forked.dump()
    );
    let host = fx.adopt_host();
    let mut watcher = host.connect_as("e2e-watch", &[Role::Observer]);
    let sessions = watcher
        .call::<methods::SessionsList>(SessionsFilter {
            include_ended: None,
            workspace_root: None,
            limit: None,
        })
        .items;
    let mut external: Vec<String> = sessions
        .iter()
        .filter_map(|s| s.external_id.clone())
        .collect();
    external.sort();
    let mut expected = vec![sid, fork_id];
    expected.sort();
    assert_eq!(external, expected, "{sessions:#?}");
}

/// The page from a host a hook started: `planhost web` starts it in that host (which went on
/// serving: nothing pending is interrupted) and prints its address, which answers.
#[test]
fn the_page_comes_up_in_a_host_a_hook_started() {
    let fx = Fixture::new();
    fx.setup();
    fx.model.push(Reply::text("Hello."));
    let run = fx.claude("hello", &[]);
    let _host = fx.adopt_host();
    assert_eq!(run.code, Some(0), "{}", run.dump());
    let out = fx.planhost(&["web", "--no-open"]);
    assert!(out.status.success(), "{}", text(&out));
    let url = String::from_utf8_lossy(&out.stdout)
        .lines()
        .next()
        .unwrap_or_default()
        .to_owned();
    assert!(
        url.contains("token="),
        "the address with its token: {}",
        text(&out)
    );
    // The page answers at the address `planhost web` printed (loopback, by port).
    let port = url
        .split("://")
        .nth(1)
        .and_then(|rest| rest.split('/').next())
        .and_then(|host| host.rsplit(':').next())
        .and_then(|p| p.parse::<u16>().ok())
        .expect("a port in the address");
    let stream = std::net::TcpStream::connect(("127.0.0.1", port));
    assert!(stream.is_ok(), "the page listens on {port}: {}", text(&out));
    // Asked again, the same page.
    let again = fx.planhost(&["web", "--no-open"]);
    assert!(again.status.success(), "{}", text(&again));
    assert_eq!(
        String::from_utf8_lossy(&again.stdout)
            .lines()
            .next()
            .unwrap_or_default(),
        url
    );
}

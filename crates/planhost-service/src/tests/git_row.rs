//! DESIGN decision 15, the git row: a git command planhost admits unasked runs no program a
//! hostile repository's configuration names — each key alone, in its own repository, on the
//! commands that would run it — whether the host runs the shell for the agent (pi's
//! `tools.execute`) or routes the agent's own (Claude Code's `agent.run`); and what no setting
//! can switch off (an external diff) is asked, not run.

use std::path::Path;
use std::process::Command;

use planhost_core::{Agent, AgentMode, DirectiveKind};
use planhost_protocol::{AgentRunParams, methods};
use serde_json::json;

use super::agent_event::{World, prompt, tool, world};
use super::fixture::block_on;

fn git(root: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args(args)
        .current_dir(root)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", root)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
}

/// A repository with one change in `f.txt`, a program `evil.sh` that logs that it ran, and
/// `config` (keys naming `evil.sh`, or other values) in its `.git/config`.
fn hostile_repo(root: &Path, evil_log: &Path, config: &[(&str, &str)], attributes: &str) {
    git(root, &["init", "-q", "."]);
    fs_err::write(root.join("f.txt"), "a\n").unwrap();
    git(root, &["add", "f.txt"]);
    git(
        root,
        &[
            "-c",
            "user.email=a@b",
            "-c",
            "user.name=a",
            "commit",
            "-qm",
            "one",
        ],
    );
    fs_err::write(root.join("f.txt"), "a\nb\n").unwrap();
    let evil = root.join("evil.sh");
    fs_err::write(
        &evil,
        format!(
            "#!/bin/sh\necho \"ran $0 $*\" >> '{}'\ncat \"$1\" 2>/dev/null\n",
            evil_log.display()
        ),
    )
    .unwrap();
    fs_err::set_permissions(&evil, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let e = evil.display().to_string();
    for (key, value) in config {
        git(root, &["config", key, &value.replace("EVIL", &e)]);
    }
    if !attributes.is_empty() {
        fs_err::write(root.join(".gitattributes"), attributes).unwrap();
    }
}

/// One hostile configuration: what it is, its keys, its `.gitattributes`, and the commands that
/// would run its program.
type Hostile = (
    &'static str,
    &'static [(&'static str, &'static str)],
    &'static str,
    &'static [&'static str],
);

/// Each hostile key, alone, with its attributes and the commands that would run its program.
const KEYS: &[Hostile] = &[
    (
        "core.fsmonitor",
        &[("core.fsmonitor", "EVIL")],
        "",
        &["git status", "git diff --stat"],
    ),
    (
        "a textconv driver",
        &[("diff.ev.textconv", "EVIL")],
        "*.txt diff=ev\n",
        &["git diff", "git log -p -n 1", "git show HEAD"],
    ),
    (
        "a clean filter",
        &[("filter.fl.clean", "EVIL")],
        "*.txt filter=fl\n",
        &["git status", "git diff"],
    ),
    (
        "a process filter",
        &[("filter.fl.process", "EVIL")],
        "*.txt filter=fl\n",
        &["git status", "git diff"],
    ),
    (
        "gpg.program with log.showSignature",
        &[("gpg.program", "EVIL"), ("log.showSignature", "true")],
        "",
        &["git log -n 1", "git show HEAD"],
    ),
    (
        "a pager",
        &[("core.pager", "EVIL"), ("pager.log", "EVIL")],
        "",
        &["git log -n 1", "git diff"],
    ),
    ("hooks", &[("core.hooksPath", ".")], "", &["git status"]),
];

/// Runs every key's commands unasked, through `run` (one call each), and checks the program
/// never ran.
async fn each_key_runs_nothing(
    agent: Agent,
    run: impl AsyncFn(&World, &str, &str) -> planhost_protocol::AgentEventResult,
) {
    for (i, (what, config, attributes, commands)) in KEYS.iter().enumerate() {
        let w = world();
        let log = w.home.path().join("evil.log");
        hostile_repo(w.workspace.path(), &log, config, attributes);
        for (j, command) in commands.iter().enumerate() {
            let call = format!("c{i}-{j}");
            let r = run(&w, &call, command).await;
            assert_eq!(
                r.directive.kind,
                DirectiveKind::Allow,
                "{what}: {command}: {r:?}"
            );
            assert!(
                !log.exists(),
                "{agent}: {what}: `{command}` ran the repository's program: {}",
                fs_err::read_to_string(&log).unwrap_or_default()
            );
        }
        w.service.shutdown();
    }
}

#[test]
fn a_routed_read_only_git_runs_nothing_the_repository_names() {
    block_on(async {
        each_key_runs_nothing(Agent::ClaudeCode, async |w, call, command| {
            let cc = Agent::ClaudeCode;
            w.send(cc, true, prompt(Some(AgentMode::Plan))).await;
            let r = w
                .send(cc, true, tool(call, "Bash", json!({ "command": command })))
                .await;
            if r.directive.kind == DirectiveKind::Allow {
                w.agent
                    .call::<methods::AgentRun>(AgentRunParams {
                        call_id: call.into(),
                        command: command.to_owned(),
                        cwd: w.workspace.path().display().to_string(),
                        env: vec![
                            ("PATH".into(), std::env::var("PATH").unwrap_or_default()),
                            ("HOME".into(), w.workspace.path().display().to_string()),
                        ],
                    })
                    .await
                    .unwrap();
            }
            r
        })
        .await;
    });
}

#[test]
fn a_host_run_read_only_git_runs_nothing_the_repository_names() {
    block_on(async {
        each_key_runs_nothing(Agent::Pi, async |w, call, command| {
            let pi = Agent::Pi;
            let started = w.send(pi, true, prompt(None)).await;
            if started.session.mode != planhost_core::Mode::Plan {
                w.send(
                    pi,
                    true,
                    tool(&format!("{call}-e"), "EnterPlanMode", json!({})),
                )
                .await;
            }
            let input = json!({ "command": command });
            let r = w.send(pi, true, tool(call, "Bash", input.clone())).await;
            if r.directive.kind == DirectiveKind::Allow {
                w.agent
                    .call::<methods::ToolsExecute>(planhost_protocol::ExecuteParams {
                        session_id: r.session.id.clone(),
                        turn_id: r.session.active_turn.clone().unwrap().id,
                        tool_call_id: call.into(),
                        tool: planhost_core::HostTool::Bash,
                        input,
                    })
                    .await
                    .unwrap();
            }
            w.send(
                pi,
                true,
                planhost_protocol::AgentEvent::TurnStopped { aborted: false },
            )
            .await;
            r
        })
        .await;
    });
}

/// An external diff no setting switches off: `git diff` is asked (Deny first), naming the key
/// and the program, and nothing runs meanwhile.
#[test]
fn an_external_diff_is_asked_not_run() {
    block_on(async {
        for config in [("diff.external", "EVIL"), ("diff.ev.command", "EVIL")] {
            let w = world();
            let log = w.home.path().join("evil.log");
            let attributes = if config.0 == "diff.ev.command" {
                "*.txt diff=ev\n"
            } else {
                ""
            };
            hostile_repo(w.workspace.path(), &log, &[config], attributes);
            let cc = Agent::ClaudeCode;
            w.send(cc, true, prompt(Some(AgentMode::Plan))).await;
            let r = w
                .send(
                    cc,
                    true,
                    tool("d", "Bash", json!({ "command": "git diff" })),
                )
                .await;
            assert_eq!(r.directive.kind, DirectiveKind::Ask, "{config:?}: {r:?}");
            let reason = r.directive.reason.unwrap_or_default();
            assert!(
                reason.contains(config.0) && reason.contains("evil.sh"),
                "{reason}"
            );
            assert_eq!(
                r.directive.default_answer,
                Some(planhost_core::PermissionDecision::Deny)
            );
            assert!(!log.exists());
            // git in another directory cannot be read first: asked too.
            let r = w
                .send(
                    cc,
                    true,
                    tool("e", "Bash", json!({ "command": "cd sub && git status" })),
                )
                .await;
            assert_eq!(r.directive.kind, DirectiveKind::Ask, "{r:?}");
            w.service.shutdown();
        }
    });
}

/// The repository's configuration read again when the command runs: an external diff named
/// after `git diff` was allowed (an edit in the same batch, say) is refused, not run, on both
/// paths.
#[test]
fn an_external_diff_named_after_the_allow_is_refused_at_run_time() {
    block_on(async {
        let w = world();
        let log = w.home.path().join("evil.log");
        hostile_repo(w.workspace.path(), &log, &[], "");
        let name_external = || {
            git(
                w.workspace.path(),
                &[
                    "config",
                    "diff.external",
                    &w.workspace.path().join("evil.sh").display().to_string(),
                ],
            );
        };
        let unname_external = || git(w.workspace.path(), &["config", "--unset", "diff.external"]);
        // Claude Code: allowed and routed, then the configuration changes, then agent.run.
        let cc = Agent::ClaudeCode;
        w.send(cc, true, prompt(Some(AgentMode::Plan))).await;
        let r = w
            .send(
                cc,
                true,
                tool("d1", "Bash", json!({ "command": "git diff" })),
            )
            .await;
        assert_eq!(r.directive.kind, DirectiveKind::Allow, "{r:?}");
        name_external();
        let err = w
            .agent
            .call::<methods::AgentRun>(AgentRunParams {
                call_id: "d1".into(),
                command: "git diff".into(),
                cwd: w.workspace.path().display().to_string(),
                env: vec![("PATH".into(), std::env::var("PATH").unwrap_or_default())],
            })
            .await
            .unwrap_err();
        assert_eq!(
            err.code(),
            planhost_core::ErrorCode::ToolNotAuthorized,
            "{err}"
        );
        assert!(err.to_string().contains("diff.external"), "{err}");
        assert!(!log.exists(), "the external diff ran");
        // pi: the host runs it (tools.execute), the same way.
        unname_external();
        let pi = Agent::Pi;
        let started = w.send(pi, true, prompt(None)).await;
        if started.session.mode != planhost_core::Mode::Plan {
            w.send(pi, true, tool("e", "EnterPlanMode", json!({})))
                .await;
        }
        let input = json!({ "command": "git diff" });
        let r = w.send(pi, true, tool("d2", "Bash", input.clone())).await;
        assert_eq!(r.directive.kind, DirectiveKind::Allow, "{r:?}");
        name_external();
        let err = w
            .agent
            .call::<methods::ToolsExecute>(planhost_protocol::ExecuteParams {
                session_id: r.session.id.clone(),
                turn_id: r.session.active_turn.clone().unwrap().id,
                tool_call_id: "d2".into(),
                tool: planhost_core::HostTool::Bash,
                input,
            })
            .await
            .unwrap_err();
        assert_eq!(
            err.code(),
            planhost_core::ErrorCode::ToolNotAuthorized,
            "{err}"
        );
        assert!(!log.exists(), "the external diff ran");
        w.service.shutdown();
    });
}

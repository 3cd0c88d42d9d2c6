//! DESIGN decision 15, the git row: a git command planhost admits unasked runs no program the
//! repository's (hostile) configuration names — `core.fsmonitor`, a textconv driver, a clean
//! filter, `gpg.program` under `log.showSignature`, a pager — whether the host runs the shell
//! for the agent (pi's `tools.execute`) or routes the agent's own (Claude Code's `agent.run`).

use std::path::Path;
use std::process::Command;

use planhost_core::{Agent, AgentMode, DirectiveKind};
use planhost_protocol::{AgentRunParams, methods};
use serde_json::json;

use super::agent_event::{World, prompt, tool, world};
use super::fixture::block_on;

/// A repository whose configuration names `evil` for every program git may run on a read.
fn hostile_repo(root: &Path, evil_log: &Path) {
    let git = |args: &[&str]| {
        let out = Command::new("git")
            .args(args)
            .current_dir(root)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("HOME", root)
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {out:?}");
    };
    git(&["init", "-q", "."]);
    fs_err::write(root.join("f.txt"), "a\n").unwrap();
    git(&["add", "f.txt"]);
    git(&[
        "-c",
        "user.email=a@b",
        "-c",
        "user.name=a",
        "commit",
        "-qm",
        "one",
    ]);
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
    for (key, value) in [
        ("core.fsmonitor", e.as_str()),
        ("core.pager", e.as_str()),
        ("pager.log", e.as_str()),
        ("diff.ev.textconv", e.as_str()),
        ("filter.fl.clean", e.as_str()),
        ("gpg.program", e.as_str()),
        ("log.showSignature", "true"),
    ] {
        git(&["config", key, value]);
    }
    fs_err::write(root.join(".gitattributes"), "*.txt diff=ev filter=fl\n").unwrap();
}

/// The read-only git commands Plan runs unasked.
const READS: &[&str] = &[
    "git status",
    "git diff --stat",
    "git log -p -n 1",
    "git log --show-signature -n 1",
    "git show HEAD",
];

#[test]
fn a_routed_read_only_git_runs_nothing_the_repository_names() {
    block_on(async {
        let w: World = world();
        let cc = Agent::ClaudeCode;
        let log = w.home.path().join("evil.log");
        hostile_repo(w.workspace.path(), &log);
        w.send(cc, true, prompt(Some(AgentMode::Plan))).await;
        for (i, command) in READS.iter().enumerate() {
            let call = format!("g{i}");
            let r = w
                .send(cc, true, tool(&call, "Bash", json!({ "command": command })))
                .await;
            assert_eq!(r.directive.kind, DirectiveKind::Allow, "{command}: {r:?}");
            let out = w
                .agent
                .call::<methods::AgentRun>(AgentRunParams {
                    call_id: call.as_str().into(),
                    command: (*command).to_owned(),
                    cwd: w.workspace.path().display().to_string(),
                    env: vec![
                        ("PATH".into(), std::env::var("PATH").unwrap_or_default()),
                        ("HOME".into(), w.workspace.path().display().to_string()),
                    ],
                })
                .await
                .unwrap();
            assert!(
                !log.exists(),
                "{command} ran a program the repository names: {}\n{out:?}",
                fs_err::read_to_string(&log).unwrap_or_default()
            );
        }
        w.service.shutdown();
    });
}

#[test]
fn a_host_run_read_only_git_runs_nothing_the_repository_names() {
    block_on(async {
        let w: World = world();
        let pi = Agent::Pi;
        let log = w.home.path().join("evil.log");
        hostile_repo(w.workspace.path(), &log);
        // pi enters Plan with its tool; its bash runs through tools.execute.
        let started = w.send(pi, true, prompt(None)).await;
        w.send(pi, true, tool("e", "EnterPlanMode", json!({})))
            .await;
        let turn = started.session.active_turn.unwrap().id;
        for (i, command) in READS.iter().enumerate() {
            let call = format!("p{i}");
            let input = json!({ "command": command });
            let r = w.send(pi, true, tool(&call, "Bash", input.clone())).await;
            assert_eq!(r.directive.kind, DirectiveKind::Allow, "{command}: {r:?}");
            w.agent
                .call::<methods::ToolsExecute>(planhost_protocol::ExecuteParams {
                    session_id: r.session.id.clone(),
                    turn_id: turn.clone(),
                    tool_call_id: call.as_str().into(),
                    tool: planhost_core::HostTool::Bash,
                    input,
                })
                .await
                .unwrap();
            assert!(
                !log.exists(),
                "{command} ran a program the repository names: {}",
                fs_err::read_to_string(&log).unwrap_or_default()
            );
        }
        w.service.shutdown();
    });
}

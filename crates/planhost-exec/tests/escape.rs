//! The escape an outside attack found (issue 10, defect 2): a descendant that orphans itself,
//! moves itself out of the run's cgroup (possible as root) and clears its environment. The host
//! stays its parent, as subreaper, yet nothing named it as the run's.
//!
//! A test binary of its own: `claim_unmarked_orphans` is process-wide (as in `planhost serve`),
//! and the other test binaries start children of their own that it would take for escapees.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use planhost_exec::{CommandSpec, ExitStatus, Platform, effective_shell, probe, run};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

fn alive(pid: i32) -> bool {
    fs_err::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| Some(s.rsplit_once(')')?.1.trim_start().as_bytes()[0]))
        .is_some_and(|state| state != b'Z' && state != b'X')
}

/// Runs a command whose descendant orphans itself, moves into the host's own cgroup and replaces
/// its environment by `env_prefix` (an `env -i …` invocation); asserts it is dead when `run`
/// returns.
async fn escapee_dies_with_its_run(env_prefix: &str) {
    use planhost_test_support::capability;
    let test = "escapee_dies_with_its_run";
    // Without cgroup v2 there is nothing to escape from; without root a command cannot leave
    // its run cgroup.
    let Some(base) = capability::cgroup2(test) else {
        return;
    };
    if !capability::root(test) {
        return;
    }
    planhost_exec::claim_unmarked_orphans();
    let dir = tempfile::tempdir().unwrap();
    let shell = effective_shell(Platform::current(), &probe(), None).unwrap();
    // Orphan (the subshell exits), leave the cgroup for the host's own, replace the environment.
    let command = format!(
        r#"( {env_prefix} /bin/bash -c 'echo $$ > "$1/cgroup.procs" || exit 1
                                        echo pid:$$; grep "^0::" /proc/$$/cgroup
                                        exec sleep 600' _ "$BASE" & )
                     sleep 0.5; echo done"#
    );
    let mut spec = CommandSpec::new(shell, &command, dir.path());
    spec.env = vec![
        ("PATH".into(), std::env::var("PATH").unwrap_or_default()),
        ("BASE".into(), base.display().to_string()),
    ];
    let (tx, mut rx) = mpsc::channel(64);
    let drain = tokio::spawn(async move { while rx.recv().await.is_some() {} });
    let res = tokio::time::timeout(
        Duration::from_secs(60),
        run(spec, tx, CancellationToken::new()),
    )
    .await
    .unwrap()
    .unwrap();
    drain.await.unwrap();
    assert_eq!(res.exit, ExitStatus::Code(0), "{res:?}");
    let out = &res.stdout.kept;
    let pid: i32 = out
        .lines()
        .find_map(|l| l.strip_prefix("pid:")?.parse().ok())
        .unwrap_or_else(|| panic!("the escapee did not start: {out}"));
    // It really left: its cgroup is not a run cgroup.
    let cgroup = out.lines().find(|l| l.starts_with("0::")).unwrap();
    assert!(
        !cgroup.contains("planhost-"),
        "still in a run cgroup: {cgroup}"
    );
    // Dead by the time the run returned, like every other process of the run.
    let survived = alive(pid);
    if survived {
        let _ = rustix::process::kill_process(
            rustix::process::Pid::from_raw(pid).unwrap(),
            rustix::process::Signal::KILL,
        );
    }
    assert!(!survived, "escapee {pid} outlived its run: {out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_orphan_that_leaves_its_cgroup_and_clears_its_environment_dies_with_its_run() {
    escapee_dies_with_its_run("env -i").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_escapee_that_poses_as_the_watchdog_or_another_run_still_dies_with_its_run() {
    // What a process says about itself protects nothing: only this host's live runs' markers and
    // its real watchdog count.
    escapee_dies_with_its_run("env -i PLANHOST_WATCHDOG=1 PLANHOST_EXEC_RUN=1.2-3-00ff").await;
}

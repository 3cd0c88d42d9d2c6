//! Timeout, cancellation and normal exit end the whole tree, escapees included.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use planhost_exec::{BackgroundPolicy, CommandSpec, Containment, ExitStatus, RunResult};
use tokio_util::sync::CancellationToken;

use crate::support::{
    Reaper, alive, pids_in, procfs_only, run_collect, spec, survivors, timeout_ms, unique_tag,
};

/// Upper bound for a whole run in these tests, so a hang fails instead of blocking CI.
const RUN_BOUND: Duration = Duration::from_secs(60);

/// Every way out of the process group the issue names, each printing `pid:<n>`.
const ESCAPEES: &str = r#"
setsid sleep 600 & echo pid:$!
( bash -c 'echo pid:$$; exec sleep 600' & )
nohup sleep 600 >/dev/null 2>&1 & echo pid:$!
bash -c 'trap "" TERM; echo pid:$$; exec sleep 600' &
printf '%s\n' 'exec </dev/null >/dev/null 2>&1; echo $$ > "$D/daemon.pid"; exec sleep 600' > "$D/daemon.sh"
setsid bash -c '( bash "$D/daemon.sh" & )' &
until [ -s "$D/daemon.pid" ]; do sleep 0.01; done; echo pid:$(cat "$D/daemon.pid")
echo ready
sleep 600
"#;
const ESCAPEE_COUNT: usize = 5;

/// 20 subshells, each with 8 children and one setsid escapee: 200 processes below the shell.
const TREE_200: &str = r#"
for i in $(seq 20); do
  ( for j in $(seq 8); do sleep 600 & echo pid:$!; done
    setsid sleep 600 & echo pid:$!
    echo pid:$BASHPID; wait ) &
done
wait
"#;

#[derive(Clone, Copy, Debug)]
enum End {
    Timeout,
    Cancel,
}

/// Runs `command`; ends it by `end` once `want` pids were printed; returns the result and pids.
async fn run_until_pids(mut spec: CommandSpec, want: usize, end: End) -> (RunResult, Vec<i32>) {
    let cancel = CancellationToken::new();
    spec.timeout = match end {
        End::Timeout => timeout_ms(if want > 100 { 8_000 } else { 2_000 }),
        End::Cancel => timeout_ms(300_000),
    };
    let seen = Arc::new(Mutex::new(String::new()));
    let (trigger, sink) = (cancel.clone(), Arc::clone(&seen));
    let (res, _) = tokio::time::timeout(
        RUN_BOUND,
        run_collect(spec, cancel, move |chunk, _| {
            let mut text = sink.lock().unwrap();
            text.push_str(&chunk.text);
            if matches!(end, End::Cancel) && pids_in(&text).len() >= want {
                trigger.cancel();
            }
        }),
    )
    .await
    .expect("run returned within its bound");
    let res = res.unwrap();
    let pids = pids_in(&seen.lock().unwrap());
    (res, pids)
}

async fn assert_tree_gone(spec: CommandSpec, want: usize, end: End) {
    let (res, pids) = run_until_pids(spec, want, end).await;
    assert_eq!(
        pids.len(),
        want,
        "all processes were started before the end: {pids:?}"
    );
    match end {
        End::Timeout => assert!(res.timed_out && !res.cancelled),
        End::Cancel => assert!(res.cancelled && !res.timed_out),
    }
    assert!(matches!(res.exit, ExitStatus::Signal(_)), "{:?}", res.exit);
    // By the time run() returns, nothing of the tree may still run...
    let running: Vec<i32> = pids.iter().copied().filter(|&p| alive(p)).collect();
    assert!(
        running.is_empty(),
        "still running after run() returned: {running:?}"
    );
    // ...and everything is reaped (no zombie left behind) within a generous bound.
    assert_eq!(survivors(&pids).await, Vec::<i32>::new());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn timeout_kills_every_escapee() {
    let dir = tempfile::tempdir().unwrap();
    let tag = unique_tag("esc-timeout");
    let _reaper = Reaper(tag.clone());
    assert_tree_gone(
        spec(ESCAPEES, dir.path(), &tag),
        ESCAPEE_COUNT,
        End::Timeout,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn timeout_kills_every_escapee_without_cgroup() {
    let dir = tempfile::tempdir().unwrap();
    let tag = unique_tag("esc-timeout-procfs");
    let _reaper = Reaper(tag.clone());
    let s = procfs_only(spec(ESCAPEES, dir.path(), &tag));
    assert_tree_gone(s, ESCAPEE_COUNT, End::Timeout).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_kills_every_escapee() {
    let dir = tempfile::tempdir().unwrap();
    let tag = unique_tag("esc-cancel");
    let _reaper = Reaper(tag.clone());
    assert_tree_gone(spec(ESCAPEES, dir.path(), &tag), ESCAPEE_COUNT, End::Cancel).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_kills_every_escapee_without_cgroup() {
    let dir = tempfile::tempdir().unwrap();
    let tag = unique_tag("esc-cancel-procfs");
    let _reaper = Reaper(tag.clone());
    let s = procfs_only(spec(ESCAPEES, dir.path(), &tag));
    assert_tree_gone(s, ESCAPEE_COUNT, End::Cancel).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn timeout_kills_a_200_process_tree() {
    let dir = tempfile::tempdir().unwrap();
    let tag = unique_tag("tree200");
    let _reaper = Reaper(tag.clone());
    assert_tree_gone(spec(TREE_200, dir.path(), &tag), 200, End::Timeout).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_kills_a_200_process_tree_without_cgroup() {
    let dir = tempfile::tempdir().unwrap();
    let tag = unique_tag("tree200-procfs");
    let _reaper = Reaper(tag.clone());
    assert_tree_gone(
        procfs_only(spec(TREE_200, dir.path(), &tag)),
        200,
        End::Cancel,
    )
    .await;
}

/// Leaves background processes (which also hold stdout open) and exits at once.
const LEAVES_BACKGROUND: &str = r#"
setsid sleep 600 & echo pid:$!
( bash -c 'echo $$ > "$D/p"; exec sleep 600' & )
until [ -s "$D/p" ]; do sleep 0.01; done; echo pid:$(cat "$D/p")
echo done
"#;

async fn run_to_exit(s: CommandSpec) -> (RunResult, Vec<i32>) {
    let (res, _) = tokio::time::timeout(
        RUN_BOUND,
        run_collect(s, CancellationToken::new(), |_, _| {}),
    )
    .await
    .expect("a descendant holding stdout open must not hang the run");
    let res = res.unwrap();
    let pids = pids_in(&res.stdout.kept);
    (res, pids)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn normal_exit_reaps_background_descendants() {
    for containment in [Containment::Auto, Containment::ProcfsOnly] {
        let dir = tempfile::tempdir().unwrap();
        let tag = unique_tag("reap-exit");
        let _reaper = Reaper(tag.clone());
        let mut s = spec(LEAVES_BACKGROUND, dir.path(), &tag);
        s.containment = containment;
        let (res, pids) = run_to_exit(s).await;
        assert_eq!(res.exit, ExitStatus::Code(0));
        assert!(!res.timed_out && !res.cancelled);
        assert!(res.stdout.kept.ends_with("done\n"), "{:?}", res.stdout.kept);
        assert_eq!(pids.len(), 2, "{containment:?}");
        assert!(pids.iter().all(|&p| !alive(p)), "{containment:?}: {pids:?}");
        assert_eq!(survivors(&pids).await, Vec::<i32>::new(), "{containment:?}");
    }
}

/// An orphan that dies before the shell exits: by then the run's cgroup is empty (`populated
/// 0`: a zombie is no member), yet the orphan is still a zombie of the host that only the
/// teardown reaps. An empty cgroup alone must not end the teardown.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn normal_exit_reaps_an_orphan_that_died_before_the_shell() {
    const ORPHAN_DIES_FIRST: &str = r#"
( bash -c 'echo pid:$$' & )
sleep 0.2
echo done
"#;
    for containment in [Containment::Auto, Containment::ProcfsOnly] {
        let dir = tempfile::tempdir().unwrap();
        let tag = unique_tag("dead-orphan");
        let _reaper = Reaper(tag.clone());
        let mut s = spec(ORPHAN_DIES_FIRST, dir.path(), &tag);
        s.containment = containment;
        let (res, pids) = run_to_exit(s).await;
        assert_eq!(res.exit, ExitStatus::Code(0), "{containment:?}");
        assert!(res.stdout.kept.ends_with("done\n"), "{:?}", res.stdout.kept);
        assert_eq!(pids.len(), 1, "{containment:?}: {:?}", res.stdout.kept);
        // Reaped by run() itself: nothing else in this process reaps an orphan.
        assert!(
            !crate::support::exists(pids[0]),
            "{containment:?}: orphan {} left as a zombie",
            pids[0]
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keep_policy_leaves_background_running_and_does_not_hang() {
    let dir = tempfile::tempdir().unwrap();
    let tag = unique_tag("keep");
    let _reaper = Reaper(tag.clone());
    let mut s = spec(LEAVES_BACKGROUND, dir.path(), &tag);
    s.background = BackgroundPolicy::Keep;
    let (res, pids) = run_to_exit(s).await;
    assert_eq!(res.exit, ExitStatus::Code(0));
    assert!(res.stdout.kept.ends_with("done\n"));
    assert_eq!(pids.len(), 2);
    assert!(
        pids.iter().all(|&p| alive(p)),
        "kept processes must still run: {pids:?}"
    );
    // _reaper cleans them up.
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cgroup_catches_an_escapee_that_also_drops_the_marker() {
    // `env -i` removes the run marker and the double fork leaves the tree: only a cgroup can
    // still attribute this process. Without a writable cgroup this is the documented gap.
    let dir = tempfile::tempdir().unwrap();
    let tag = unique_tag("envi");
    let _reaper = Reaper(tag.clone());
    let cmd = r#"( env -i TEST_TAG="$TEST_TAG" bash -c 'echo pid:$$; exec sleep 600' & )
                 sleep 600"#;
    let (res, pids) = run_until_pids(spec(cmd, dir.path(), &tag), 1, End::Cancel).await;
    assert!(res.cancelled);
    let pid = pids[0];
    let in_cgroup = fs_err::read_to_string(format!("/proc/{pid}/cgroup"))
        .is_ok_and(|c| c.contains("planhost-"));
    if alive(pid)
        && !in_cgroup
        && !planhost_test_support::capability::present(
            planhost_test_support::capability::Capability::CgroupV2,
            false,
            "cgroup_catches_an_escapee_that_also_drops_the_marker",
            &format!("the run had no cgroup: marker-less escapee {pid} not attributed"),
        )
    {
        return;
    }
    assert!(!alive(pid), "escapee {pid} survived");
    assert_eq!(survivors(&[pid]).await, Vec::<i32>::new());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_shell_starts_with_default_signal_handling() {
    // The host ignores SIGPIPE (Rust's runtime does); a child must not inherit that, or `yes |
    // head` would spin on EPIPE instead of dying of SIGPIPE (exit 141).
    let dir = tempfile::tempdir().unwrap();
    let tag = unique_tag("sigs");
    let _reaper = Reaper(tag.clone());
    let (res, _) = run_collect(
        spec(
            r#"yes | head -n1 >/dev/null; echo "pipe:${PIPESTATUS[0]}"; grep -E '^Sig(Blk|Ign)' /proc/$$/status"#,
            dir.path(),
            &tag,
        ),
        CancellationToken::new(),
        |_, _| {},
    )
    .await;
    let out = res.unwrap().stdout.kept;
    assert!(out.contains("pipe:141"), "{out}");
    assert!(out.contains("SigBlk:\t0000000000000000"), "{out}");
}

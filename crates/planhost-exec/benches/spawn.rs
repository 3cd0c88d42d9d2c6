//! Spawn overhead (issue 9, moved here in issue 17): the runner (`planhost_exec::run`) against
//! `bash -c true`, with a breakdown of where the difference goes, back to back and after 100 ms
//! idle (as the host's Bash runs: once per model reply). Target: ≤ 1.1× (issue 20; 1.2× in
//! issue 9), or the measured reason.
//!
//! Run: `cargo bench -p planhost-exec --bench spawn`. Knob: `PLANHOST_BENCH_SPAWNS` (runs per
//! variant, default 200).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::cast_precision_loss,
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss
)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use planhost_exec::{
    CommandSpec, Containment, OutputChunk, Platform, Timeout, effective_shell, probe, run,
};
use planhost_test_support::bench::{knob, loadavg, met, ms, pct, print_machine, proc_pids, sorted};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// The pause before an "after idle" measurement: about what separates a pi prompt's first
/// tool call from the previous run's last one.
const IDLE: Duration = Duration::from_millis(100);

// ---------------------------------------------------------------------------------------------
// Spawn overhead: the runner against `bash -c true`, and where the difference goes

/// What the runner's tree walk reads once: `/proc/<pid>/stat` of every process.
fn proc_scan() -> usize {
    proc_pids()
        .into_iter()
        .filter_map(|pid| fs_err::read_to_string(format!("/proc/{pid}/stat")).ok())
        .count()
}

fn runner_spec(containment: Containment) -> CommandSpec {
    let shell = effective_shell(Platform::current(), &probe(), None).unwrap();
    let mut spec = CommandSpec::new(shell, "true", std::env::temp_dir());
    spec.env = vec![("PATH".into(), std::env::var("PATH").unwrap_or_default())];
    spec.timeout = Timeout::from_request(Some(300_000)).unwrap();
    spec.containment = containment;
    spec
}

async fn run_drained(spec: CommandSpec) {
    let (tx, mut rx) = mpsc::channel::<OutputChunk>(64);
    let consumer = tokio::spawn(async move { while rx.recv().await.is_some() {} });
    let result = run(spec, tx, CancellationToken::new()).await.unwrap();
    assert!(matches!(result.exit, planhost_exec::ExitStatus::Code(0)));
    consumer.await.unwrap();
}

/// `bash -c true` the way std spawns it (`posix_spawn`: a vfork-style clone), output captured.
fn std_spawn() {
    let out = Command::new("bash").arg("-c").arg("true").output().unwrap();
    assert!(out.status.success());
}

/// The same with a no-op `pre_exec`, which forces std to `fork` (the runner needs `pre_exec`
/// for `setsid` and the cgroup join).
fn std_fork() {
    let mut cmd = Command::new("bash");
    cmd.arg("-c").arg("true");
    // SAFETY: the closure does nothing, which is async-signal-safe.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(&mut cmd, || Ok(()));
    }
    let out = cmd.output().unwrap();
    assert!(out.status.success());
}

/// tokio's child path as the runner configures it, without the tree: explicit environment,
/// null stdin, piped stdout/stderr, `setsid` in `pre_exec` (so a fork), wait and read to EOF.
async fn tokio_spawn(setsid: bool) {
    let mut cmd = tokio::process::Command::new("bash");
    cmd.arg("-c")
        .arg("true")
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .current_dir(std::env::temp_dir())
        .stdin(Stdio::null())
        .kill_on_drop(true);
    if setsid {
        // SAFETY: setsid(2) is async-signal-safe and the closure allocates nothing.
        unsafe {
            cmd.pre_exec(|| {
                rustix::process::setsid()?;
                Ok(())
            });
        }
    }
    let out = cmd.output().await.unwrap();
    assert!(out.status.success());
}

/// The cgroup v2 directory the runner creates its per-run cgroups in (as planhost-exec finds
/// it: the cgroup2 mount plus this process's own cgroup), if it may create one there.
fn cgroup_base() -> Option<PathBuf> {
    let mountinfo = fs_err::read_to_string("/proc/self/mountinfo").ok()?;
    let mount = mountinfo.lines().find_map(|l| {
        let (pre, post) = l.split_once(" - ")?;
        (post.split(' ').next()? == "cgroup2").then(|| pre.split(' ').nth(4).map(PathBuf::from))?
    })?;
    let own = fs_err::read_to_string("/proc/self/cgroup").ok()?;
    let rel = own.lines().find_map(|l| l.strip_prefix("0::"))?;
    let dir = mount.join(rel.trim_start_matches('/'));
    let probe = dir.join(format!("planhost-bench-probe-{}", std::process::id()));
    fs_err::create_dir(&probe).ok()?;
    let _ = fs_err::remove_dir(&probe);
    Some(dir)
}

/// The one write the cgroup adds to a spawn: moving a live process into a fresh cgroup (the
/// runner's child writes "0" to `cgroup.procs` before exec; here the parent writes the pid).
fn cgroup_move(base: &Path, n: usize) -> Duration {
    let dir = base.join(format!("planhost-bench-{}-{n}", std::process::id()));
    fs_err::create_dir(&dir).unwrap();
    let mut child = Command::new("sleep").arg("30").spawn().unwrap();
    let t = Instant::now();
    fs_err::write(dir.join("cgroup.procs"), child.id().to_string()).unwrap();
    let took = t.elapsed();
    let _ = child.kill();
    let _ = child.wait();
    let _ = fs_err::remove_dir(&dir);
    took
}

/// The same spawns, each after [`IDLE`] with nothing running: what the host's Bash meets when
/// it runs once per model reply.
async fn spawn_after_idle(reps: usize) {
    const NAMES: [&str; 4] = [
        "floor: std `bash -c true`",
        "runner, ProcfsOnly",
        "runner, Auto (cgroup)",
        "moving a process into a new cgroup (cgroup.procs write)",
    ];
    let base = cgroup_base();
    let mut times: Vec<Vec<Duration>> = vec![Vec::with_capacity(reps); NAMES.len()];
    let mut back_to_back = Vec::with_capacity(reps);
    for rep in 0..reps {
        for k in 0..NAMES.len() {
            let variant = (k + rep) % NAMES.len();
            if variant == 3 && base.is_none() {
                continue;
            }
            tokio::time::sleep(IDLE).await;
            let t = Instant::now();
            let took = match variant {
                0 => {
                    std_spawn();
                    t.elapsed()
                }
                1 => {
                    run_drained(runner_spec(Containment::ProcfsOnly)).await;
                    t.elapsed()
                }
                2 => {
                    run_drained(runner_spec(Containment::Auto)).await;
                    t.elapsed()
                }
                _ => {
                    let base = base.as_deref().unwrap();
                    let idle = cgroup_move(base, 2 * rep);
                    back_to_back.push(cgroup_move(base, 2 * rep + 1));
                    idle
                }
            };
            times[variant].push(took);
        }
    }
    println!(
        "spawn after {} ms idle, median (p90) of {reps} each, interleaved",
        IDLE.as_millis()
    );
    let floor = pct(&sorted(times[0].clone()), 0.5);
    for (i, (name, t)) in NAMES.iter().zip(times).enumerate() {
        if t.is_empty() {
            println!("  {name:<66} (no writable cgroup v2 here)");
            continue;
        }
        let t = sorted(t);
        let (p50, p90) = (pct(&t, 0.5), pct(&t, 0.9));
        if i == 3 {
            let b = sorted(back_to_back.clone());
            println!(
                "  {name:<66} {:>7.3} ms ({:.3} ms); right after another one {:.3} ms ({:.3} ms)",
                ms(p50),
                ms(p90),
                ms(pct(&b, 0.5)),
                ms(pct(&b, 0.9))
            );
        } else {
            println!(
                "  {name:<66} {:>7.3} ms ({:.3} ms)  {:.2}x",
                ms(p50),
                ms(p90),
                ms(p50) / ms(floor)
            );
        }
    }
}

async fn spawn_overhead(reps: usize) {
    const NAMES: [&str; 7] = [
        "floor: std `bash -c true`, output() (posix_spawn)",
        "std, no-op pre_exec (fork instead of posix_spawn)",
        "tokio::process, output() (posix_spawn)",
        "tokio::process + setsid pre_exec (the runner's spawn, no tree)",
        "two /proc/*/stat scans (the runner's post-exit tree walk)",
        "runner, ProcfsOnly",
        "runner, Auto (cgroup; what the host's Bash uses)",
    ];
    let mut times: Vec<Vec<Duration>> = vec![Vec::with_capacity(reps); NAMES.len()];
    // Warm up every path once.
    std_spawn();
    std_fork();
    tokio_spawn(false).await;
    tokio_spawn(true).await;
    run_drained(runner_spec(Containment::Auto)).await;
    for rep in 0..reps {
        // Interleaved, in a rotating order, so load changes hit every variant alike.
        for k in 0..NAMES.len() {
            let variant = (k + rep) % NAMES.len();
            let t = Instant::now();
            match variant {
                0 => std_spawn(),
                1 => std_fork(),
                2 => tokio_spawn(false).await,
                3 => tokio_spawn(true).await,
                4 => {
                    proc_scan();
                    proc_scan();
                }
                5 => run_drained(runner_spec(Containment::ProcfsOnly)).await,
                _ => run_drained(runner_spec(Containment::Auto)).await,
            }
            times[variant].push(t.elapsed());
        }
    }
    let medians: Vec<Duration> = times.into_iter().map(|t| pct(&sorted(t), 0.5)).collect();
    let floor = medians[0];
    println!(
        "spawn overhead, median of {reps} each, interleaved ({} processes on the machine; load average {})",
        proc_pids().len(),
        loadavg()
    );
    for (i, (name, m)) in NAMES.iter().zip(&medians).enumerate() {
        if i == 4 {
            // Not a spawn: its own cost, part of the runner's.
            println!("  {name:<66} {:>7.3} ms", ms(*m));
            continue;
        }
        println!(
            "  {name:<66} {:>7.3} ms  {:+.3} ms  {:.2}x",
            ms(*m),
            ms(*m) - ms(floor),
            ms(*m) / ms(floor)
        );
    }
    let (auto, procfs, spawned) = (medians[6], medians[5], medians[3]);
    println!(
        "  target runner (Auto) ≤ 1.1x `bash -c true`: {:.2}x ({})",
        ms(auto) / ms(floor),
        met(ms(auto) / ms(floor) <= 1.1)
    );
    println!(
        "  where it goes: fork instead of posix_spawn {:+.3} ms; tokio's child path {:+.3} ms; runner (ProcfsOnly) beyond its spawn {:+.3} ms, of which the two /proc scans {:.3} ms; the cgroup (Auto − ProcfsOnly) {:+.3} ms",
        ms(medians[1]) - ms(floor),
        ms(medians[2]) - ms(floor),
        ms(procfs) - ms(spawned),
        ms(medians[4]),
        ms(auto) - ms(procfs),
    );
}

// ---------------------------------------------------------------------------------------------

fn main() {
    print_machine();
    println!("load average at start: {}", loadavg());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let reps = knob("PLANHOST_BENCH_SPAWNS", 200);
    runtime.block_on(spawn_overhead(reps));
    runtime.block_on(spawn_after_idle(reps / 4));
    println!("load average at end: {}", loadavg());
}

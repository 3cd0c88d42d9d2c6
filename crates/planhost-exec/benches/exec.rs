//! Runner benchmarks, each against a floor measured in the same run.
//!
//! `cargo bench -p planhost-exec --bench exec` prints one table; see docs/notes/exec-benchmarks.md.

// A bench binary's output is its report; unwrap keeps the measuring code readable.
#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use planhost_exec::{
    CommandSpec, Containment, OutputChunk, Platform, Timeout, effective_shell, probe, run,
};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

const THROUGHPUT_BYTES: u64 = 1 << 30;
const THROUGHPUT_REPS: usize = 5;
const TEARDOWN_REPS: usize = 15;
const SPAWN_REPS: usize = 100;

/// 20 subshells x (8 children + 1 setsid escapee + itself) = 200 processes below the shell.
const TREE_200: &str = r#"
for i in $(seq 20); do
  ( for j in $(seq 8); do sleep 600 & done
    setsid sleep 600 & echo up; wait ) &
done
wait
"#;

fn spec(command: &str, containment: Containment) -> CommandSpec {
    let shell = effective_shell(Platform::current(), &probe(), None).unwrap();
    let mut spec = CommandSpec::new(shell, command, std::env::temp_dir());
    spec.env = vec![("PATH".into(), std::env::var("PATH").unwrap_or_default())];
    spec.timeout = Timeout::from_request(Some(300_000)).unwrap();
    spec.containment = containment;
    spec
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn pct(v: &[Duration], p: f64) -> Duration {
    let mut v = v.to_vec();
    v.sort();
    v[((v.len() - 1) as f64 * p).round() as usize]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Runs a spec to completion, draining events like a real consumer.
async fn run_drained(spec: CommandSpec) {
    let (tx, mut rx) = mpsc::channel::<OutputChunk>(64);
    let consumer = tokio::spawn(async move { while rx.recv().await.is_some() {} });
    run(spec, tx, CancellationToken::new()).await.unwrap();
    consumer.await.unwrap();
}

async fn throughput() {
    let cmd = format!("head -c {THROUGHPUT_BYTES} /dev/zero");
    let (mut raw, mut ours) = (Vec::new(), Vec::new());
    for _ in 0..THROUGHPUT_REPS {
        let t = Instant::now();
        let st = Command::new("bash")
            .arg("-c")
            .arg(format!("{cmd} | cat >/dev/null"))
            .status()
            .unwrap();
        assert!(st.success());
        raw.push(t.elapsed());
        let t = Instant::now();
        run_drained(spec(&cmd, Containment::Auto)).await;
        ours.push(t.elapsed());
    }
    let mbps = |d: Duration| THROUGHPUT_BYTES as f64 / d.as_secs_f64() / 1e6;
    let (r, o) = (median(raw), median(ours));
    println!(
        "stdout throughput (1 GiB, median of {THROUGHPUT_REPS}): floor `| cat >/dev/null` {:.0} MB/s, \
         runner {:.0} MB/s, ratio {:.2} (target >= 0.70)",
        mbps(r),
        mbps(o),
        r.as_secs_f64() / o.as_secs_f64()
    );
}

async fn teardown(containment: Containment) -> Vec<Duration> {
    let mut lat = Vec::new();
    for _ in 0..TEARDOWN_REPS {
        let cancel = CancellationToken::new();
        let (tx, mut rx) = mpsc::channel::<OutputChunk>(64);
        let trigger = cancel.clone();
        let consumer = tokio::spawn(async move {
            let mut ups = 0;
            let mut fired = None;
            while let Some(c) = rx.recv().await {
                ups += c.text.matches("up\n").count();
                if ups >= 20 && fired.is_none() {
                    // Give the last subshell's children a moment to exist, then fire.
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    fired = Some(Instant::now());
                    trigger.cancel();
                }
            }
            fired
        });
        run(spec(TREE_200, containment), tx, cancel).await.unwrap();
        let returned = Instant::now();
        let fired = consumer.await.unwrap().expect("tree came up");
        lat.push(returned - fired);
    }
    lat
}

/// The floor: SIGKILL and waitpid 200 direct children, no discovery at all.
fn teardown_floor() -> Vec<Duration> {
    let mut lat = Vec::new();
    for _ in 0..TEARDOWN_REPS {
        let mut kids: Vec<_> = (0..200)
            .map(|_| {
                Command::new("sleep")
                    .arg("600")
                    .stdin(Stdio::null())
                    .spawn()
                    .unwrap()
            })
            .collect();
        let t = Instant::now();
        for k in &mut kids {
            k.kill().unwrap();
        }
        for k in &mut kids {
            k.wait().unwrap();
        }
        lat.push(t.elapsed());
    }
    lat
}

/// The runner against `bash -c true` started by std, interleaved rep by rep so that both see the
/// same machine load; back to back, and after 100 ms of idle (where a cgroup move is slowest).
async fn spawn_overhead() {
    for idle in [Duration::ZERO, Duration::from_millis(100)] {
        for containment in [Containment::Auto, Containment::ProcfsOnly] {
            let (mut raw, mut ours) = (Vec::new(), Vec::new());
            for _ in 0..SPAWN_REPS {
                std::thread::sleep(idle);
                let t = Instant::now();
                let out = Command::new("bash").arg("-c").arg("true").output().unwrap();
                assert!(out.status.success());
                raw.push(t.elapsed());
                std::thread::sleep(idle);
                let t = Instant::now();
                run_drained(spec("true", containment)).await;
                ours.push(t.elapsed());
            }
            let (r, o) = (median(raw), median(ours));
            println!(
                "spawn overhead ({containment:?}, idle {} ms, median of {SPAWN_REPS}): floor `bash -c true` \
                 {:.2} ms, runner {:.2} ms, ratio {:.2}x, overhead {:+.2} ms",
                idle.as_millis(),
                ms(r),
                ms(o),
                ms(o) / ms(r),
                ms(o) - ms(r)
            );
        }
    }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let filter = std::env::args().nth(1).filter(|a| !a.starts_with("--"));
    let wants = |name: &str| filter.as_deref().is_none_or(|f| name.contains(f));
    if wants("throughput") {
        throughput().await;
    }
    if wants("teardown") {
        let floor = teardown_floor();
        println!(
            "teardown floor (SIGKILL + waitpid 200 direct children): p50 {:.1} ms, p90 {:.1} ms",
            ms(pct(&floor, 0.5)),
            ms(pct(&floor, 0.9))
        );
        for containment in [Containment::Auto, Containment::ProcfsOnly] {
            let lat = teardown(containment).await;
            println!(
                "teardown ({containment:?}, cancel -> last of 200 incl. 20 setsid escapees reaped, \
                 n={TEARDOWN_REPS}): p50 {:.1} ms, p90 {:.1} ms, max {:.1} ms (target p50 < 50 ms)",
                ms(pct(&lat, 0.5)),
                ms(pct(&lat, 0.9)),
                ms(pct(&lat, 1.0))
            );
        }
    }
    if wants("spawn") {
        spawn_overhead().await;
    }
}

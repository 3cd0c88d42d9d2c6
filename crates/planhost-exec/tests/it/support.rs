//! Helpers shared by the integration tests.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use planhost_exec::{
    CommandSpec, Containment, EffectiveShell, OutputChunk, Platform, RunResult, Timeout,
    effective_shell, probe, run,
};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// How long a killed process may take to disappear before a test fails (generous on purpose).
pub(crate) const GONE_BOUND: Duration = Duration::from_secs(10);

pub(crate) fn bash() -> EffectiveShell {
    effective_shell(Platform::Linux, &probe(), None).expect("bash on this machine")
}

/// A spec running `command` in `dir`, with PATH and a per-test tag so that [`Reaper`] can find
/// leftovers even if an assertion fails.
pub(crate) fn spec(command: &str, dir: &Path, tag: &str) -> CommandSpec {
    let mut spec = CommandSpec::new(bash(), command, dir);
    spec.env = vec![
        (
            "PATH".into(),
            std::env::var("PATH").unwrap_or_else(|_| "/usr/bin:/bin".into()),
        ),
        ("D".into(), dir.display().to_string()),
        ("TEST_TAG".into(), tag.into()),
    ];
    spec
}

pub(crate) fn timeout_ms(ms: u64) -> Timeout {
    Timeout::from_request(Some(ms)).unwrap()
}

pub(crate) fn unique_tag(name: &str) -> String {
    static N: AtomicU64 = AtomicU64::new(0);
    format!(
        "{name}-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}

/// Runs `spec`, collecting every chunk; `on_chunk` sees chunks as they arrive.
pub(crate) async fn run_collect(
    spec: CommandSpec,
    cancel: CancellationToken,
    mut on_chunk: impl FnMut(&OutputChunk, &[OutputChunk]) + Send + 'static,
) -> (planhost_exec::Result<RunResult>, Vec<OutputChunk>) {
    let (tx, mut rx) = mpsc::channel(256);
    let collector = tokio::spawn(async move {
        let mut chunks = Vec::new();
        while let Some(chunk) = rx.recv().await {
            on_chunk(&chunk, &chunks);
            chunks.push(chunk);
        }
        chunks
    });
    let result = run(spec, tx, cancel).await;
    (result, collector.await.unwrap())
}

pub(crate) fn procfs_only(mut spec: CommandSpec) -> CommandSpec {
    spec.containment = Containment::ProcfsOnly;
    spec
}

/// `pid:<n>` lines of some text.
pub(crate) fn pids_in(text: &str) -> Vec<i32> {
    text.lines()
        .filter_map(|l| l.trim().strip_prefix("pid:")?.parse().ok())
        .collect()
}

/// Whether a process exists and is not a zombie.
pub(crate) fn alive(pid: i32) -> bool {
    fs_err::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            s.rsplit_once(')')
                .map(|(_, r)| r.trim_start().as_bytes()[0])
        })
        .is_some_and(|state| state != b'Z' && state != b'X')
}

/// Whether /proc still lists the pid at all (a zombie counts: it is not reaped).
pub(crate) fn exists(pid: i32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

/// Waits (up to [`GONE_BOUND`]) until none of `pids` exists any more; returns the survivors.
pub(crate) async fn survivors(pids: &[i32]) -> Vec<i32> {
    let until = Instant::now() + GONE_BOUND;
    loop {
        let left: Vec<i32> = pids.iter().copied().filter(|&p| exists(p)).collect();
        if left.is_empty() || Instant::now() >= until {
            return left;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Kills, when dropped, every process whose environment carries this test's tag, so that a
/// failing test leaves no `sleep 600` behind.
pub(crate) struct Reaper(pub String);

impl Drop for Reaper {
    fn drop(&mut self) {
        let entry = format!("TEST_TAG={}", self.0);
        let Ok(dir) = fs_err::read_dir("/proc") else {
            return;
        };
        for pid in dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok()) {
            let tagged = fs_err::read(format!("/proc/{pid}/environ"))
                .is_ok_and(|env| env.split(|&b| b == 0).any(|e| e == entry.as_bytes()));
            if tagged {
                // SAFETY: plain kill(2) on a pid we just identified by its environment.
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
        }
    }
}

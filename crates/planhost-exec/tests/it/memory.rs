//! 2 GiB of output: the runner keeps a bounded amount and the process stays small.

use planhost_exec::{HEAD_BYTES, TAIL_BYTES};
use tokio_util::sync::CancellationToken;

use crate::support::{spec, unique_tag};

const TWO_GIB: u64 = 2 * 1024 * 1024 * 1024;
/// Generous: the test binary plus one 64 KiB read buffer per stream and in-flight chunks.
const RSS_BOUND_KIB: u64 = 256 * 1024;

fn rss_kib() -> u64 {
    let status = fs_err::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_gib_of_output_keeps_memory_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let cmd = format!("head -c {TWO_GIB} /dev/zero");
    let (tx, mut rx) = tokio::sync::mpsc::channel::<planhost_exec::OutputChunk>(16);
    let consumer = tokio::spawn(async move {
        let (mut bytes, mut peak) = (0u64, 0u64);
        while let Some(chunk) = rx.recv().await {
            bytes += chunk.text.len() as u64;
            peak = peak.max(rss_kib());
        }
        (bytes, peak)
    });
    let mut s = spec(&cmd, dir.path(), &unique_tag("mem"));
    s.timeout = planhost_exec::Timeout::from_request(Some(300_000)).unwrap();
    let res = planhost_exec::run(s, tx, CancellationToken::new())
        .await
        .unwrap();
    let (streamed, peak) = consumer.await.unwrap();
    assert_eq!(res.stdout.total_bytes, TWO_GIB);
    assert_eq!(streamed, TWO_GIB, "every byte is streamed once");
    assert!(
        res.stdout.kept.len() <= HEAD_BYTES + TAIL_BYTES + 64,
        "kept {}",
        res.stdout.kept.len()
    );
    assert!(
        peak < RSS_BOUND_KIB,
        "peak RSS {peak} KiB while streaming 2 GiB"
    );
}

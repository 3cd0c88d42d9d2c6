//! What every benchmark prints and computes the same way: knobs from the environment,
//! percentiles, the machine and its load.

use std::time::Duration;

/// A count from the environment, else `default` (0 and garbage are `default`).
pub fn knob(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&n| n > 0)
        .unwrap_or(default)
}

/// The sample, sorted.
pub fn sorted(mut v: Vec<Duration>) -> Vec<Duration> {
    v.sort();
    v
}

/// Nearest-rank percentile of a sorted sample.
#[allow(
    clippy::cast_precision_loss,
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    reason = "sample sizes far below 2^52"
)]
pub fn pct(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

/// Nearest-rank percentile of unsorted values.
#[allow(
    clippy::cast_precision_loss,
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    reason = "sample sizes far below 2^52"
)]
pub fn pct_f(values: &[f64], p: f64) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    v[((v.len() - 1) as f64 * p).round() as usize]
}

/// Milliseconds.
pub fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Every pid in `/proc`.
pub fn proc_pids() -> Vec<i32> {
    fs_err::read_dir("/proc")
        .map(|dir| {
            dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
                .collect()
        })
        .unwrap_or_default()
}

/// One line on the machine: cores, CPU model, kernel, memory, processes.
#[allow(
    clippy::print_stdout,
    clippy::cast_precision_loss,
    reason = "a bench's report"
)]
pub fn print_machine() {
    let cpuinfo = fs_err::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split_once(':'))
        .map_or("?", |(_, m)| m.trim())
        .to_owned();
    let kernel = fs_err::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    let meminfo = fs_err::read_to_string("/proc/meminfo").unwrap_or_default();
    let mem_kib: u64 = meminfo
        .lines()
        .find(|l| l.starts_with("MemTotal:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    let cpus = std::thread::available_parallelism().map_or(0, usize::from);
    let procs = proc_pids().len();
    println!(
        "machine: nproc {cpus}, cpu {model:?}, kernel {}, RAM {:.1} GiB, {procs} processes",
        kernel.trim(),
        mem_kib as f64 / 1024.0 / 1024.0
    );
}

/// This process's resident memory in MB.
pub fn rss_mb() -> f64 {
    let status = fs_err::read_to_string("/proc/self/status").unwrap_or_default();
    let kib: f64 = status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|n| n.parse().ok())
        .unwrap_or(0.0);
    kib / 1024.0
}

/// The 1, 5 and 15 minute load averages.
pub fn loadavg() -> String {
    fs_err::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

/// "met" or "missed", for a target's line.
pub fn met(yes: bool) -> &'static str {
    if yes { "met" } else { "missed" }
}

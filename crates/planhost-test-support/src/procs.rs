//! What tests and benchmarks read about processes and cgroups: resident memory, which processes
//! work in a directory, and where cgroup v2 puts this process's children.

use std::path::{Path, PathBuf};

/// A process's resident set size in KiB (`VmRSS`), or `None` once it is gone.
pub fn rss_kib(pid: u32) -> Option<u64> {
    status_field(pid, "VmRSS:")
}

/// The first number of a `/proc/<pid>/status` line (`field` with its colon, e.g. `"Threads:"`).
pub fn status_field(pid: u32, field: &str) -> Option<u64> {
    let status = fs_err::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// The live (not zombie) processes whose working directory is `dir`.
pub fn processes_in(dir: &Path) -> Vec<i32> {
    let Ok(entries) = fs_err::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            fs_err::read_link(format!("/proc/{pid}/cwd")).is_ok_and(|c| c == dir)
                && fs_err::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
                    s.rsplit_once(')')
                        .and_then(|(_, rest)| rest.split_whitespace().next())
                        .is_some_and(|state| !matches!(state, "Z" | "X" | "x"))
                })
        })
        .collect()
}

/// Where cgroup v2 is mounted, from `/proc/self/mountinfo`.
pub fn cgroup2_mount() -> Option<PathBuf> {
    let info = fs_err::read_to_string("/proc/self/mountinfo").ok()?;
    info.lines().find_map(|l| {
        let (pre, post) = l.split_once(" - ")?;
        (post.split(' ').next()? == "cgroup2").then(|| pre.split(' ').nth(4).map(PathBuf::from))?
    })
}

/// This process's cgroup v2 directory: where a host it starts creates its run cgroups.
pub fn cgroup_base() -> Option<PathBuf> {
    let own = fs_err::read_to_string("/proc/self/cgroup").ok()?;
    let rel = own.lines().find_map(|l| l.strip_prefix("0::"))?;
    Some(cgroup2_mount()?.join(rel.trim_start_matches('/')))
}

/// The run cgroups (`planhost-<host pid>.<start>-…`) a host with this pid created and left.
pub fn run_cgroups_of(host_pid: u32) -> Vec<String> {
    let Some(base) = cgroup_base() else {
        return Vec::new();
    };
    let prefix = format!("planhost-{host_pid}.");
    fs_err::read_dir(base)
        .map(|d| {
            d.filter_map(|e| e.ok()?.file_name().into_string().ok())
                .filter(|n| n.starts_with(&prefix))
                .collect()
        })
        .unwrap_or_default()
}

/// The value at quantile `q` (0.0–1.0) of sorted samples; `None` when there are none.
pub fn quantile<T: Copy>(sorted: &[T], q: f64) -> Option<T> {
    if sorted.is_empty() {
        return None;
    }
    let last = sorted.len() - 1;
    #[allow(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        clippy::cast_precision_loss
    )]
    let i = ((last as f64) * q.clamp(0.0, 1.0)).round() as usize;
    sorted.get(i.min(last)).copied()
}

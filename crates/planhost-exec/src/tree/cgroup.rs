//! A per-command cgroup v2: membership that no `setsid` or double fork can leave, and
//! `cgroup.kill` to end all of it at once. Used only where the host may create one.

use std::fs::File;
use std::os::fd::OwnedFd;

use fs_err as fs;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// How long to wait for `cgroup.freeze` to take effect before killing anyway.
const FREEZE_WAIT: Duration = Duration::from_millis(500);

/// The directory under which run cgroups are created: the host's own cgroup, when writable.
fn base() -> Option<&'static Path> {
    static BASE: OnceLock<Option<PathBuf>> = OnceLock::new();
    BASE.get_or_init(discover).as_deref()
}

/// The host's own cgroup path, as `/proc/<pid>/cgroup` names it (set by [`discover`]).
static OWN: OnceLock<String> = OnceLock::new();

/// The marker of the run cgroup `pid` is in (or below), by its `/proc/<pid>/cgroup`: the name
/// right under the host's own cgroup, `planhost-<marker>`. Only a name; the caller decides
/// whether it is a run's. `None` when the file cannot be read (or there are no run cgroups);
/// `Some(None)` when it is in none.
pub(crate) fn run_cgroup_of(pid: i32) -> Option<Option<String>> {
    let (Some(_), Some(own)) = (base(), OWN.get()) else {
        return None;
    };
    let theirs = fs::read_to_string(format!("/proc/{pid}/cgroup")).ok()?;
    let prefix = format!("{own}/planhost-");
    Some(
        theirs
            .lines()
            .filter_map(|l| l.strip_prefix("0::"))
            .find_map(|p| {
                let rest = p.strip_prefix(&prefix)?;
                Some(rest.split('/').next().unwrap_or(rest).to_owned())
            }),
    )
}

fn discover() -> Option<PathBuf> {
    let mountinfo = fs::read_to_string("/proc/self/mountinfo").ok()?;
    // Fields: id parent maj:min root mountpoint opts ... - fstype source superopts
    let mount = mountinfo.lines().find_map(|l| {
        let (pre, post) = l.split_once(" - ")?;
        (post.split(' ').next()? == "cgroup2").then(|| pre.split(' ').nth(4).map(PathBuf::from))?
    })?;
    let own = fs::read_to_string("/proc/self/cgroup").ok()?;
    let rel = own.lines().find_map(|l| l.strip_prefix("0::"))?;
    let _ = OWN.set(rel.trim_end_matches('/').to_owned());
    let dir = mount.join(rel.trim_start_matches('/'));
    // Probe once: can we create a child, and does it offer cgroup.kill?
    let probe = dir.join(format!("planhost-probe-{}", std::process::id()));
    fs::create_dir(&probe).ok()?;
    let usable = probe.join("cgroup.kill").exists() && probe.join("cgroup.procs").exists();
    let _ = fs::remove_dir(&probe);
    if usable {
        tracing::debug!(dir = %dir.display(), "per-command cgroups available");
        Some(dir)
    } else {
        tracing::debug!("cgroup v2 present but without cgroup.kill; procfs walk only");
        None
    }
}

/// One command's cgroup. Removed when dropped.
#[derive(Debug)]
pub(crate) struct RunCgroup {
    dir: PathBuf,
    /// The directory itself, for `clone3(CLONE_INTO_CGROUP)` and for reading its files.
    dir_fd: OwnedFd,
}

impl RunCgroup {
    /// Creates the cgroup for run `marker`, or `None` when the host cannot.
    pub(crate) fn create(marker: &str) -> Option<Self> {
        let dir = base()?.join(format!("planhost-{marker}"));
        if let Err(e) = fs::create_dir(&dir) {
            tracing::debug!(error = %e, "cannot create run cgroup");
            return None;
        }
        match fs::File::open(&dir) {
            Ok(d) => Some(Self {
                dir,
                dir_fd: OwnedFd::from(d.into_parts().0),
            }),
            Err(e) => {
                tracing::debug!(error = %e, "cannot open the run cgroup");
                let _ = fs::remove_dir(&dir);
                None
            }
        }
    }

    /// The cgroup's directory, open.
    pub(crate) fn dir_fd(&self) -> &OwnedFd {
        &self.dir_fd
    }

    /// `cgroup.procs`, opened for writing (close-on-exec), for the std spawn only: its child
    /// writes `0` to it to join before exec. `clone3` needs only [`RunCgroup::dir_fd`], so this
    /// is not opened for every run. `None` (logged) leaves the procfs walk in charge.
    pub(crate) fn procs_file(&self) -> Option<File> {
        let path = self.dir.join("cgroup.procs");
        match fs::OpenOptions::new().write(true).open(&path) {
            Ok(f) => Some(f.into_parts().0),
            Err(e) => {
                tracing::debug!(error = %e, "cannot open cgroup.procs");
                None
            }
        }
    }

    /// The live members.
    pub(crate) fn pids(&self) -> Vec<i32> {
        fs::read_to_string(self.dir.join("cgroup.procs"))
            .map(|s| s.lines().filter_map(|l| l.trim().parse().ok()).collect())
            .unwrap_or_default()
    }

    fn event(&self, key: &str) -> Option<bool> {
        // Relative to the open directory, into a stack buffer: the runner reads this after every
        // shell exits. The file is two short lines (`populated 0|1`, `frozen 0|1`).
        let mut buf = [0u8; 128];
        let len = super::procfs::read_small(&self.dir_fd, "cgroup.events", &mut buf, false)?;
        std::str::from_utf8(&buf[..len])
            .ok()?
            .lines()
            .find_map(|l| Some(l.strip_prefix(key)?.trim() == "1"))
    }

    /// Whether any process is still a member.
    pub(crate) fn populated(&self) -> bool {
        self.event("populated ").unwrap_or(true)
    }

    /// Freezes every member so that none can fork while the final snapshot is taken.
    pub(crate) async fn freeze(&self) -> bool {
        if fs::write(self.dir.join("cgroup.freeze"), "1").is_err() {
            return false;
        }
        let until = Instant::now() + FREEZE_WAIT;
        while Instant::now() < until {
            if self.event("frozen ") == Some(true) {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        false
    }

    /// SIGKILLs every member, including those the procfs walk never saw.
    pub(crate) fn kill(&self) {
        if let Err(e) = fs::write(self.dir.join("cgroup.kill"), "1") {
            tracing::warn!(error = %e, "cgroup.kill failed");
        }
    }
}

impl RunCgroup {
    /// Hands surviving members back to the host's cgroup (for [`crate::BackgroundPolicy::Keep`]),
    /// so that the run cgroup can be removed.
    pub(crate) fn release(&self) {
        let Some(base) = base() else { return };
        for pid in self.pids() {
            let _ = fs::write(base.join("cgroup.procs"), pid.to_string());
        }
    }
}

impl Drop for RunCgroup {
    fn drop(&mut self) {
        // rmdir succeeds once no live process remains; a leftover is harmless but logged.
        if let Err(e) = fs::remove_dir(&self.dir) {
            tracing::warn!(dir = %self.dir.display(), error = %e, "cannot remove run cgroup");
        }
    }
}

/// The run cgroups under the host's cgroup directory, by their marker (`planhost-<marker>`).
pub(crate) fn run_cgroups() -> Vec<(String, PathBuf)> {
    let Some(base) = base() else {
        return Vec::new();
    };
    let Ok(entries) = fs::read_dir(base) else {
        return Vec::new();
    };
    entries
        .filter_map(|e| {
            let e = e.ok()?;
            let name = e.file_name().into_string().ok()?;
            let marker = name.strip_prefix("planhost-")?;
            (!marker.starts_with("probe-")).then(|| (marker.to_owned(), e.path()))
        })
        .collect()
}

/// Finds the host's cgroup directory now (a `mkdir` probe, the first time), so that a later
/// [`run_cgroups`] is a `readdir` and nothing more: the watchdog calls it before it waits.
pub(crate) fn prepare() -> bool {
    base().is_some()
}

/// SIGKILLs every member of the run cgroup `dir`, its descendants' cgroups included
/// (`cgroup.kill`); the kernel signals them all before the write returns.
pub(crate) fn kill_members(dir: &Path) -> bool {
    fs::write(dir.join("cgroup.kill"), "1").is_ok()
}

/// Kills every member of these leftover run cgroups (all of them first), then removes each once
/// it has emptied; returns how many are gone.
pub(crate) fn kill_and_remove(dirs: &[PathBuf]) -> usize {
    for dir in dirs {
        kill_members(dir);
    }
    let until = Instant::now() + Duration::from_secs(2);
    let mut left: Vec<&PathBuf> = dirs.iter().collect();
    loop {
        // Gone already (another host's sweep got there first) counts as removed.
        left.retain(|dir| {
            fs::remove_dir(dir).is_err_and(|e| e.kind() != std::io::ErrorKind::NotFound)
        });
        if left.is_empty() {
            return dirs.len();
        }
        if Instant::now() >= until {
            for dir in &left {
                tracing::warn!(dir = %dir.display(), "a leftover run cgroup would not empty");
            }
            return dirs.len() - left.len();
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

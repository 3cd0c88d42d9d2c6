//! A private install of the real Claude Code for end-to-end tests: one pinned version from npm
//! (`@anthropic-ai/claude-code`, a native binary per platform) into `<workspace target
//! dir>/claude-e2e/<version>/` the first time it is asked, under a file lock, reused afterwards.
//! `PLANHOST_CLAUDE_E2E_DIR` moves the root.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Mutex, PoisonError};

use fs_err as fs;

use crate::pi_install::{locked_install, run, target_dir};

/// The Claude Code version the tests drive.
pub const CLAUDE_VERSION: &str = "2.1.332";

/// The marker written last: the spec installed.
const MARKER: &str = "planhost-claude-e2e.complete";

/// An installed Claude Code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaudeInstall {
    /// The install's root (`…/claude-e2e/<version>`).
    pub dir: PathBuf,
    /// `node_modules/.bin/claude`.
    pub bin: PathBuf,
}

impl ClaudeInstall {
    /// A command running this Claude Code with nothing of the caller's Claude or Anthropic
    /// environment: the test sets `HOME`, `ANTHROPIC_BASE_URL` and the rest.
    pub fn command(&self) -> Command {
        let mut cmd = Command::new(&self.bin);
        for (key, _) in std::env::vars_os() {
            let key_text = key.to_string_lossy();
            if key_text.starts_with("ANTHROPIC_")
                || key_text.starts_with("CLAUDE")
                || key_text.starts_with("PLANHOST_")
            {
                cmd.env_remove(&key);
            }
        }
        cmd.env("DISABLE_AUTOUPDATER", "1")
            .env("DISABLE_TELEMETRY", "1")
            .env("DISABLE_ERROR_REPORTING", "1")
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1");
        cmd
    }
}

fn spec() -> String {
    format!("@anthropic-ai/claude-code@{CLAUDE_VERSION}")
}

/// The root installs live under.
pub fn claude_root() -> PathBuf {
    if let Some(dir) = std::env::var_os("PLANHOST_CLAUDE_E2E_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    target_dir().join("claude-e2e")
}

static CONFIRMED: Mutex<Option<ClaudeInstall>> = Mutex::new(None);

/// Installs Claude Code unless a complete install is there; panics with npm's output when it
/// fails (these are test fixtures).
pub fn ensure_claude() -> ClaudeInstall {
    try_ensure_claude().unwrap_or_else(|e| panic!("installing Claude Code failed: {e}"))
}

/// Like [`ensure_claude`], returning the failure.
pub fn try_ensure_claude() -> Result<ClaudeInstall, String> {
    if let Some(found) = CONFIRMED
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone()
    {
        return Ok(found);
    }
    let root = claude_root();
    let dir = root.join(CLAUDE_VERSION);
    let install = paths(&dir);
    locked_install(
        &root,
        CLAUDE_VERSION,
        || {
            fs::read_to_string(dir.join(MARKER)).is_ok_and(|t| t.trim() == spec())
                && install.bin.exists()
        },
        || install_into(&dir),
    )?;
    *CONFIRMED.lock().unwrap_or_else(PoisonError::into_inner) = Some(install.clone());
    Ok(install)
}

fn paths(dir: &Path) -> ClaudeInstall {
    ClaudeInstall {
        dir: dir.to_owned(),
        bin: dir.join("node_modules/.bin/claude"),
    }
}

/// Installs into `<dir>.partial`, checks `claude --version`, then renames it into place.
fn install_into(dir: &Path) -> Result<(), String> {
    let partial = dir.with_extension("partial");
    for stale in [&partial, &dir.to_path_buf()] {
        if stale.exists() {
            fs::remove_dir_all(stale).map_err(|e| e.to_string())?;
        }
    }
    fs::create_dir_all(&partial).map_err(|e| e.to_string())?;
    let manifest = serde_json::json!({
        "name": "planhost-claude-e2e",
        "private": true,
        "description": "Claude Code for planhost's end-to-end tests (installed by planhost-test-support)",
    });
    fs::write(partial.join("package.json"), format!("{manifest:#}\n"))
        .map_err(|e| e.to_string())?;
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
    .arg(spec())
    .current_dir(&partial)
    .stdin(Stdio::null());
    run(&mut npm, &format!("npm install {}", spec()))?;
    let staged = paths(&partial);
    let reported = run(
        staged
            .command()
            .arg("--version")
            .env("HOME", partial.join(".version-probe")),
        "claude --version",
    )?;
    if !reported.contains(CLAUDE_VERSION) {
        return Err(format!(
            "the installed Claude Code reports {:?}, not {CLAUDE_VERSION}",
            reported.trim()
        ));
    }
    fs::rename(&partial, dir).map_err(|e| e.to_string())?;
    fs::write(dir.join(MARKER), spec() + "\n").map_err(|e| e.to_string())?;
    Ok(())
}

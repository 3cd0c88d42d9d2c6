//! `npm ci` in one of the repository's npm packages (the pi extension, the browser tests'
//! package) the first time a test needs it, so that the README's test command passes on a fresh
//! clone with nothing run before it. Skipped when what the lock file pins is already installed
//! (later runs need no network), and done under a file lock against parallel tests.

use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::pi_install::{locked_install, target_dir};

/// The version the lock file pins for each of `names`.
fn pinned(dir: &Path, names: &[&str]) -> Result<Vec<(String, String)>, String> {
    let path = dir.join("package-lock.json");
    let text = fs_err::read_to_string(&path).map_err(|e| e.to_string())?;
    let lock: Value =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    names
        .iter()
        .map(|name| {
            lock["packages"][format!("node_modules/{name}")]["version"]
                .as_str()
                .map(|v| ((*name).to_owned(), v.to_owned()))
                .ok_or_else(|| format!("{} pins no {name}", path.display()))
        })
        .collect()
}

/// Whether every pinned package is installed at its version.
fn installed(dir: &Path, pinned: &[(String, String)]) -> bool {
    pinned.iter().all(|(name, version)| {
        fs_err::read_to_string(dir.join(format!("node_modules/{name}/package.json")))
            .ok()
            .and_then(|m| serde_json::from_str::<Value>(&m).ok())
            .is_some_and(|m| m["version"].as_str() == Some(version.as_str()))
    })
}

/// Runs `npm ci` in `dir` unless the packages `names` are installed at the versions its lock
/// file pins; `env` is added to npm's environment. The error quotes npm's output.
pub fn ensure(dir: &Path, names: &[&str], env: &[(&str, &str)]) -> Result<(), String> {
    let pinned = pinned(dir, names)?;
    if installed(dir, &pinned) {
        return Ok(());
    }
    let key = format!(
        "npm-ci-{}",
        dir.file_name()
            .map_or_else(|| "package".into(), |n| n.to_string_lossy())
    );
    locked_install(
        &target_dir(),
        &key,
        || installed(dir, &pinned),
        || {
            let mut npm = Command::new("npm");
            npm.args([
                "ci",
                "--no-audit",
                "--no-fund",
                "--no-update-notifier",
                "--prefer-offline",
                "--loglevel=error",
            ])
            .current_dir(dir)
            .stdin(Stdio::null());
            for (k, v) in env {
                npm.env(k, v);
            }
            crate::pi_install::run(&mut npm, &format!("npm ci in {}", dir.display()))?;
            if installed(dir, &pinned) {
                Ok(())
            } else {
                Err(format!(
                    "npm ci did not install {pinned:?} in {}",
                    dir.display()
                ))
            }
        },
    )
}

//! The real I/O behind [`ProbeResults`]: looking for shell executables on this machine.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use crate::shell::{ProbeResults, ShellId};

/// Looks for every shell of the current platform's catalog.
///
/// On macOS and Linux, `bash` is looked up on `PATH`, then at `/bin/bash` and `/usr/bin/bash`.
pub fn probe() -> ProbeResults {
    let path = std::env::var_os("PATH");
    probe_with_path(path.as_deref())
}

/// [`probe`] with an explicit `PATH` value (tests use this to simulate a missing shell).
pub fn probe_with_path(path: Option<&OsStr>) -> ProbeResults {
    let mut results = ProbeResults::none();
    for (id, exe) in platform_candidates(path) {
        if !results_has(&results, id) {
            results = results.with(id, exe);
        }
    }
    results
}

fn results_has(results: &ProbeResults, id: ShellId) -> bool {
    results.executable(id).is_some()
}

#[cfg(not(windows))]
fn platform_candidates(path: Option<&OsStr>) -> Vec<(ShellId, PathBuf)> {
    let fixed = [Path::new("/bin/bash"), Path::new("/usr/bin/bash")];
    search_path(path, "bash")
        .into_iter()
        .chain(
            fixed
                .into_iter()
                .filter(|p| is_executable(p))
                .map(Path::to_path_buf),
        )
        .map(|exe| (ShellId::Bash, exe))
        .collect()
}

#[cfg(windows)]
fn platform_candidates(path: Option<&OsStr>) -> Vec<(ShellId, PathBuf)> {
    let root = std::env::var_os("SystemRoot").map(PathBuf::from);
    let program_files = std::env::var_os("ProgramFiles").map(PathBuf::from);
    let mut out = Vec::new();
    let mut push = |id, candidate: Option<PathBuf>| {
        if let Some(p) = candidate.filter(|p| is_executable(p)) {
            out.push((id, p));
        }
    };
    let ps = root
        .as_ref()
        .map(|r| r.join(r"System32\WindowsPowerShell\v1.0\powershell.exe"));
    push(ShellId::WindowsPowershell, ps);
    push(
        ShellId::WindowsPowershell,
        search_path(path, "powershell.exe"),
    );
    push(ShellId::Cmd, std::env::var_os("ComSpec").map(PathBuf::from));
    push(
        ShellId::Cmd,
        root.as_ref().map(|r| r.join(r"System32\cmd.exe")),
    );
    // Git Bash is Git for Windows' bash.exe, never WSL's System32\bash.exe.
    push(
        ShellId::GitBash,
        program_files.map(|p| p.join(r"Git\bin\bash.exe")),
    );
    out
}

fn search_path(path: Option<&OsStr>, name: &str) -> Option<PathBuf> {
    std::env::split_paths(path?)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join(name))
        .find(|p| is_executable(p))
}

#[cfg(unix)]
fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    fs_err::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable(p: &Path) -> bool {
    fs_err::metadata(p).is_ok_and(|m| m.is_file())
}

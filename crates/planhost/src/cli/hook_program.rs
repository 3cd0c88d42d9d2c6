//! Which program an agent's hooks name, so that it outlives the way planhost was started.
//!
//! `planhost setup <agent>` writes an absolute path into the agent's settings, and the agent runs
//! it on every tool call. That path must stay: installed by cargo or `npm install -g`, the
//! binary's own place does. Run through `npx planhost` (or `pnpm dlx`, `bunx`), the binary sits
//! in a package runner's cache that is cleared at will, and every tool would then be blocked. So
//! an ephemeral binary is copied first, with the `planhost` a hook starts its host from, into a
//! directory of the user's (`$XDG_DATA_HOME/planhost/bin`), and the hooks name the copy. Each
//! agent's setup asks here (Claude Code today; Codex and Gemini CLI use the same).

use std::path::{Component, Path, PathBuf};

use planhost_hooks::HOOK_BINARY;

/// The binaries a hook needs: itself, and `planhost`, which it starts a host from.
const BINARIES: [&str; 2] = [HOOK_BINARY, "planhost"];

/// Where the hook program comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum HookProgram {
    /// This binary's own place is kept: `planhost-hook` beside it, else this binary.
    Installed(PathBuf),
    /// This binary is in a package runner's cache: the hooks name a copy in [`stable_dir`].
    Copied {
        /// The copy the hooks name.
        program: PathBuf,
        /// The ephemeral original.
        from: PathBuf,
    },
}

impl HookProgram {
    /// The path the settings name.
    pub(crate) fn path(&self) -> &Path {
        match self {
            HookProgram::Installed(path) | HookProgram::Copied { program: path, .. } => path,
        }
    }
}

/// The directory an ephemeral binary is copied to: `$XDG_DATA_HOME/planhost/bin`, else
/// `~/.local/share/planhost/bin`.
pub(crate) fn stable_dir() -> anyhow::Result<PathBuf> {
    if let Some(data) = std::env::var_os("XDG_DATA_HOME").filter(|d| !d.is_empty()) {
        let data = PathBuf::from(data);
        if data.is_absolute() {
            return Ok(data.join("planhost/bin"));
        }
    }
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .ok_or_else(|| {
            anyhow::anyhow!("HOME is not set: nowhere to keep planhost's hook binary")
        })?;
    Ok(PathBuf::from(home).join(".local/share/planhost/bin"))
}

/// Whether `exe` lives where a package runner keeps it only for a while: npm's npx cache
/// (`…/_npx/<hash>/…`), pnpm's `dlx` cache, or bunx's (`…/bunx-<uid>-<package>/…`). Known by
/// the folder names those runners use, never by "somewhere under /tmp": a binary a person put
/// in a temporary folder on purpose stays where they put it.
pub(crate) fn is_ephemeral(exe: &Path) -> bool {
    exe.components().any(|c| match c {
        Component::Normal(name) => {
            name == "_npx" || name == "dlx" || name.to_string_lossy().starts_with("bunx-")
        }
        Component::Prefix(_) | Component::RootDir | Component::CurDir | Component::ParentDir => {
            false
        }
    })
}

/// The program the hooks should name (nothing is copied): see [`HookProgram`].
pub(crate) fn plan() -> anyhow::Result<HookProgram> {
    let exe = std::env::current_exe()?;
    let small = exe.with_file_name(HOOK_BINARY);
    let from = if small.is_file() { small } else { exe.clone() };
    if is_ephemeral(&exe) {
        let name = from
            .file_name()
            .map_or_else(|| "planhost".into(), ToOwned::to_owned);
        return Ok(HookProgram::Copied {
            program: stable_dir()?.join(name),
            from,
        });
    }
    Ok(HookProgram::Installed(from))
}

/// [`plan`], with the copy made when it is one: both binaries are written beside each other
/// (through a temporary file and a rename, so a hook running the old copy is not disturbed).
pub(crate) fn install() -> anyhow::Result<HookProgram> {
    let planned = plan()?;
    if let HookProgram::Copied { program, from } = &planned {
        let (Some(dir), Some(src_dir)) = (program.parent(), from.parent()) else {
            anyhow::bail!("{} has no directory", program.display());
        };
        fs_err::create_dir_all(dir)?;
        for name in BINARIES {
            let src = src_dir.join(name);
            if !src.is_file() {
                continue;
            }
            let dest = dir.join(name);
            if fs_err::read(&dest).ok() == Some(fs_err::read(&src)?) {
                continue;
            }
            let temp = dir.join(format!(".{name}.planhost-{}", std::process::id()));
            fs_err::copy(&src, &temp)?;
            fs_err::rename(&temp, &dest)?;
        }
    }
    Ok(planned)
}

/// Removes the copies in [`stable_dir`] (and the directories left empty), once nothing names
/// them: `still_named` says whether any settings still do. Returns the directory when it went.
pub(crate) fn remove_copies_unless(still_named: bool) -> Option<PathBuf> {
    if still_named {
        return None;
    }
    let dir = stable_dir().ok()?;
    let mut removed = false;
    for name in BINARIES {
        removed |= fs_err::remove_file(dir.join(name)).is_ok();
    }
    // `bin/`, then `planhost/`, each only if nothing else is in it.
    let _ = fs_err::remove_dir(&dir);
    if let Some(parent) = dir.parent() {
        let _ = fs_err::remove_dir(parent);
    }
    removed.then_some(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn package_runner_caches_are_ephemeral_and_installs_are_not() {
        for path in [
            "/home/a/.npm/_npx/1f2e3d/node_modules/@planhost/linux-x64/bin/planhost",
            "/home/a/.cache/pnpm/dlx/abc/node_modules/@planhost/linux-x64/bin/planhost",
        ] {
            assert!(is_ephemeral(Path::new(path)), "{path}");
        }
        assert!(is_ephemeral(Path::new(
            "/tmp/bunx-0-planhost@0.1.0/node_modules/@planhost/linux-x64/bin/planhost"
        )));
        for path in [
            "/usr/lib/node_modules/planhost/node_modules/@planhost/linux-x64/bin/planhost",
            "/home/a/.cargo/bin/planhost",
            "/home/a/project/node_modules/@planhost/linux-x64/bin/planhost",
            "/home/a/my_npx_tools/planhost",
            "/tmp/phcc123/bin/planhost",
        ] {
            assert!(!is_ephemeral(Path::new(path)), "{path}");
        }
    }
}

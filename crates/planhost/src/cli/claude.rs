//! Claude Code: `planhost setup claude-code` writes planhost's hooks into a `settings.json` (and
//! `--uninstall` takes exactly them out), and `planhost hook claude-code` is the hook Claude Code
//! runs for each event (as `planhost-hook claude-code`, the same code in a smaller binary, when
//! that is installed beside this one). The mapping of events to host calls and the hook process
//! live in `planhost-hooks`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use planhost_hooks::claude_code::ClaudeCode;
use planhost_hooks::claude_code::codec::ClaudeEnv;
use planhost_hooks::claude_code::settings::{self, Scope};
use planhost_service::host::Paths;

use super::hook_program::{self, HookProgram};

/// `planhost hook claude-code`: one hook call; a host it starts runs this binary, and a routed
/// command runs `planhost hook run`.
pub(crate) fn hook(paths: &Paths) -> anyhow::Result<ExitCode> {
    let exe = std::env::current_exe()?;
    let codec = ClaudeCode {
        env: ClaudeEnv::from_env(format!("{} hook", exe.display())),
    };
    Ok(planhost_hooks::run(&codec, paths, &exe)?)
}

/// The binary `planhost setup` writes into the settings: `planhost-hook` beside this one when
/// it is there (it starts faster), else this one; a copy of it when this one runs from a
/// package runner's cache (`npx planhost`), see [`hook_program`].
fn hook_binary() -> anyhow::Result<PathBuf> {
    Ok(hook_program::plan()?.path().to_owned())
}

/// The scope `--scope` names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum SetupScope {
    /// `~/.claude/settings.json`.
    User,
    /// `.claude/settings.json` in this project (checked in).
    Project,
    /// `.claude/settings.local.json` in this project (this user only).
    Local,
}

impl From<SetupScope> for Scope {
    fn from(scope: SetupScope) -> Self {
        match scope {
            SetupScope::User => Scope::User,
            SetupScope::Project => Scope::Project,
            SetupScope::Local => Scope::Local,
        }
    }
}

/// What setup keeps of the file it first changed, so that `--uninstall` can give back the
/// exact bytes (when nothing else changed meanwhile).
#[derive(Debug, serde::Serialize, serde::Deserialize)]
struct Original {
    path: PathBuf,
    existed: bool,
    text: String,
    /// Whether the file's directory (`.claude/`) was there before setup: uninstall takes away
    /// one that setup made and that is empty again.
    #[serde(default = "there")]
    dir_existed: bool,
}

fn there() -> bool {
    true
}

/// Where `program` (a bare name) is found on `PATH`, as a shell would find it.
pub(crate) fn on_path(program: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt as _;
    std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .map(|dir| dir.join(program))
            .find(|candidate| {
                fs_err::metadata(candidate)
                    .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
            })
    })
}

/// The program a hook command runs: its first word, unquoted.
fn program_of(command: &str) -> String {
    let command = command.trim_start();
    if let Some(rest) = command.strip_prefix('\'') {
        return rest.split('\'').next().unwrap_or_default().to_owned();
    }
    command
        .split_whitespace()
        .next()
        .unwrap_or_default()
        .to_owned()
}

/// Whether the program a hook command runs is there: a path that exists, or a name found on
/// `PATH`; `Err` says what is missing.
fn hook_program_present(command: &str) -> Result<PathBuf, String> {
    let program = program_of(command);
    if program.contains('/') {
        let path = PathBuf::from(&program);
        if path.is_file() {
            Ok(path)
        } else {
            Err(format!("its program {program} is missing"))
        }
    } else {
        on_path(&program).ok_or_else(|| format!("`{program}` is not on PATH"))
    }
}

fn original_file(paths: &Paths, settings: &Path) -> PathBuf {
    let name: String = settings
        .to_string_lossy()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect();
    paths
        .state_dir
        .join("setup/claude-code")
        .join(format!("{name}.json"))
}

/// Writes `text` to `path` through a temporary file in the same directory, keeping the file's
/// permissions.
fn write_atomically(path: &Path, text: &str) -> anyhow::Result<()> {
    let dir = path
        .parent()
        .ok_or_else(|| anyhow::anyhow!("{} has no directory", path.display()))?;
    fs_err::create_dir_all(dir)?;
    let temp = dir.join(format!(
        ".{}.planhost-{}",
        path.file_name()
            .map_or_else(|| "settings".into(), |n| n.to_string_lossy()),
        std::process::id()
    ));
    fs_err::write(&temp, text)?;
    if let Ok(meta) = fs_err::metadata(path) {
        fs_err::set_permissions(&temp, meta.permissions())?;
    }
    fs_err::rename(&temp, path)?;
    Ok(())
}

fn home() -> anyhow::Result<PathBuf> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .ok_or_else(|| anyhow::anyhow!("HOME is not set: cannot find ~/.claude"))
}

/// `planhost setup claude-code [--scope …] [--uninstall]`.
pub(crate) fn setup(paths: &Paths, scope: SetupScope, uninstall: bool) -> anyhow::Result<ExitCode> {
    let project = std::env::current_dir()?;
    let path = Scope::from(scope).path(&home()?, &project);
    let existed = path.exists();
    let text = if existed {
        fs_err::read_to_string(&path)?
    } else {
        String::new()
    };
    let kept = original_file(paths, &path);
    if uninstall {
        let (out, removed) = settings::uninstall(&text).map_err(|e| {
            anyhow::anyhow!(
                "{} cannot be edited: {e}; nothing was changed",
                path.display()
            )
        })?;
        if removed == 0 {
            println!(
                "planhost: no planhost hooks in {}; nothing to remove",
                path.display()
            );
            return Ok(ExitCode::SUCCESS);
        }
        let original: Option<Original> = fs_err::read_to_string(&kept)
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok());
        match &original {
            // Nothing else changed since setup: the exact bytes come back (or no file at all).
            Some(o) if settings::value_of(&o.text).ok() == settings::value_of(&out).ok() => {
                if o.existed {
                    write_atomically(&path, &o.text)?;
                } else {
                    fs_err::remove_file(&path)?;
                }
            }
            _ => write_atomically(&path, &out)?,
        }
        // A `.claude/` that setup made, and that holds nothing now, goes too.
        if let (Some(o), Some(dir)) = (&original, path.parent())
            && !o.dir_existed
            && fs_err::read_dir(dir).is_ok_and(|mut entries| entries.next().is_none())
        {
            let _ = fs_err::remove_dir(dir);
        }
        let _ = fs_err::remove_file(&kept);
        println!(
            "planhost: removed its {removed} Claude Code hooks from {}; Claude Code's tool calls no longer go through planhost",
            path.display()
        );
        if let Some(dir) = hook_program::remove_copies_unless(copies_still_named(paths, &project)) {
            println!(
                "planhost: removed the copies of planhost's binaries that setup kept in {} (no hooks name them now)",
                dir.display()
            );
        }
        return Ok(ExitCode::SUCCESS);
    }
    // A project's settings are checked in: they name the hook by its name on PATH, never a
    // path that exists only on this machine.
    let program = match scope {
        SetupScope::Project => None,
        SetupScope::User | SetupScope::Local => Some(hook_program::install()?),
    };
    let command = match &program {
        None => settings::hook_command(Path::new(planhost_hooks::HOOK_BINARY)),
        Some(program) => settings::hook_command(program.path()),
    };
    if let Some(HookProgram::Copied { program, from }) = &program {
        println!(
            "planhost: this planhost runs from a package runner's cache ({}), which is cleared at \
             will, so its binaries were copied to {} and the hooks name that copy. Run setup \
             again after updating planhost to update the copy; uninstalling removes it.",
            from.parent().map_or_else(|| from.display(), Path::display),
            program
                .parent()
                .map_or_else(|| program.display(), Path::display),
        );
    }
    let dir_existed = path.parent().is_none_or(Path::exists);
    let out = settings::install(&text, &command).map_err(|e| {
        anyhow::anyhow!(
            "{} cannot be edited: {e}; nothing was changed",
            path.display()
        )
    })?;
    if !kept.exists() && settings::installed(&text).map_or(true, |h| h.is_empty()) {
        if let Some(dir) = kept.parent() {
            fs_err::create_dir_all(dir)?;
        }
        let original = Original {
            path: path.clone(),
            existed,
            text: text.clone(),
            dir_existed,
        };
        fs_err::write(&kept, serde_json::to_string(&original)?)?;
    }
    if out == text {
        println!(
            "planhost: {} already runs planhost for every Claude Code hook; nothing changed",
            path.display()
        );
        return Ok(ExitCode::SUCCESS);
    }
    write_atomically(&path, &out)?;
    if let Err(missing) = hook_program_present(&command) {
        eprintln!(
            "planhost: warning: {missing} here, so Claude Code's tools in this scope are blocked \
             until it is: install planhost (it puts `{}` on PATH), or put its directory on PATH.",
            planhost_hooks::HOOK_BINARY
        );
    }
    println!(
        "planhost: wrote its Claude Code hooks to {} ({} events, each running `{command}`).\n\
         Every Claude Code tool call in this scope now goes through planhost, and is blocked when planhost cannot answer.\n\
         Undo with `{}planhost setup claude-code --scope {} --uninstall`.",
        path.display(),
        settings::EVENTS.len(),
        // Run through npx, the undo runs through npx too (no planhost on PATH to name).
        if matches!(program, Some(HookProgram::Copied { .. })) {
            "npx "
        } else {
            ""
        },
        match scope {
            SetupScope::User => "user",
            SetupScope::Project => "project",
            SetupScope::Local => "local",
        }
    );
    Ok(ExitCode::SUCCESS)
}

/// Whether anything may still name the copies in [`hook_program::stable_dir`]: a setup record
/// in this state directory (settings setup changed and no uninstall has undone yet), or
/// Claude Code settings of this HOME or project that name that directory.
fn copies_still_named(paths: &Paths, project: &Path) -> bool {
    let records = paths.state_dir.join("setup/claude-code");
    if fs_err::read_dir(&records).is_ok_and(|mut entries| entries.next().is_some()) {
        return true;
    }
    let (Ok(dir), Ok(home)) = (hook_program::stable_dir(), home()) else {
        return true;
    };
    let dir = dir.to_string_lossy().into_owned();
    [Scope::User, Scope::Project, Scope::Local]
        .iter()
        .filter_map(|scope| fs_err::read_to_string(scope.path(&home, project)).ok())
        .any(|text| text.contains(&dir))
}

/// `planhost doctor`'s line for Claude Code: in which settings files planhost's hooks are, and
/// whether each runs this binary. Not installed anywhere is fine (Claude Code is optional); hooks
/// that run another binary, or only some of the events, fail: a moved binary blocks every tool.
pub(crate) fn doctor_check() -> (bool, String) {
    let Ok(home) = home() else {
        return (
            true,
            "HOME is not set: no Claude Code settings to look at".into(),
        );
    };
    let project = std::env::current_dir().unwrap_or_default();
    let this = hook_binary()
        .map(|bin| settings::hook_command(&bin))
        .unwrap_or_default();
    let this_program = hook_binary().ok();
    let mut found = Vec::new();
    let mut ok = true;
    let mut seen = Vec::new();
    for scope in [Scope::User, Scope::Project, Scope::Local] {
        let path = scope.path(&home, &project);
        // Run from HOME, the project's settings are the user's: one line for the one file.
        if seen.contains(&path) {
            continue;
        }
        seen.push(path.clone());
        let Ok(text) = fs_err::read_to_string(&path) else {
            continue;
        };
        match settings::installed(&text) {
            Ok(hooks) if hooks.is_empty() => {}
            Ok(hooks) => {
                let missing = hooks
                    .iter()
                    .find_map(|(_, command)| hook_program_present(command).err());
                // A command that reaches this binary (by its path, or by its name on PATH).
                let reaches_this = |command: &str| {
                    command == this
                        || hook_program_present(command).ok().is_some_and(|found| {
                            this_program.as_ref().is_some_and(|p| {
                                fs_err::canonicalize(&found).ok() == fs_err::canonicalize(p).ok()
                            })
                        })
                };
                let elsewhere: Vec<&str> = hooks
                    .iter()
                    .filter(|(_, command)| !reaches_this(command))
                    .map(|(_, command)| command.as_str())
                    .collect();
                if let Some(missing) = missing {
                    ok = false;
                    found.push(format!(
                        "{}: planhost's hook is missing ({missing}), so every Claude Code tool \
                         there is blocked: install planhost, or run `planhost setup claude-code` \
                         again",
                        path.display()
                    ));
                } else if let Some(other) = elsewhere.first() {
                    // It is there and runs: another planhost than this one, not a fault.
                    found.push(format!(
                        "{}: every hook runs `{other}`, another planhost install than this one \
                         (`planhost setup claude-code` makes them run this one)",
                        path.display()
                    ));
                } else if hooks.len() < settings::EVENTS.len() {
                    ok = false;
                    found.push(format!(
                        "{} has {} of planhost's {} hooks: run `planhost setup claude-code` again",
                        path.display(),
                        hooks.len(),
                        settings::EVENTS.len()
                    ));
                } else {
                    let command = hooks.first().map_or(this.as_str(), |(_, c)| c.as_str());
                    found.push(format!("{}: every hook runs `{command}`", path.display()));
                }
            }
            Err(e) => {
                ok = false;
                found.push(format!(
                    "{} cannot be read as settings: {e}",
                    path.display()
                ));
            }
        }
    }
    if found.is_empty() {
        return (
            true,
            "not set up (`planhost setup claude-code` puts planhost behind Claude Code)".into(),
        );
    }
    (ok, found.join("; "))
}

//! Claude Code: `planhost setup claude-code` writes planhost's hooks into a `settings.json` (and
//! `--uninstall` takes exactly them out), and `planhost hook claude-code` is the hook Claude Code
//! runs for each event. The mapping of events to host calls lives in `planhost-hooks`; this
//! module reads stdin, reaches the host (starting it when none answers) and writes the answer.

use std::io::{Read as _, Write as _};
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use planhost_client::{Client, ClientError};
use planhost_core::{ErrorCode, Role};
use planhost_hooks::claude_code::hook::{self, CLIENT_NAME, HookEnv, HostError};
use planhost_hooks::claude_code::settings::{self, Scope};
use planhost_protocol::Method;
use planhost_service::host::Paths;

/// The roles a hook declares: it acts for the agent and reads. It never answers for a person:
/// any process below Claude Code could run it, the model's own commands included.
const HOOK_ROLES: &[Role] = &[Role::Agent, Role::Observer];

/// How long a hook waits for a host it started to answer.
const START_BOUND: Duration = Duration::from_secs(10);

struct SocketHost(Client);

impl hook::Host for SocketHost {
    fn call<M: Method>(&mut self, params: M::Params) -> Result<M::Result, HostError> {
        self.0.call::<M>(params).map_err(host_error)
    }
}

fn host_error(error: ClientError) -> HostError {
    let message = match &error {
        ClientError::Rpc(e) => e.message.clone(),
        ClientError::Io(_) | ClientError::Json(_) | ClientError::Closed => error.to_string(),
    };
    HostError {
        code: error.code(),
        message,
    }
}

/// Connects to the host, starting `planhost serve` (this binary) when nothing answers.
fn connect_or_start(paths: &Paths) -> Result<SocketHost, HostError> {
    let client = match Client::connect_socket(&paths.socket) {
        Ok(client) => client,
        Err(_) => start_host(paths)?,
    };
    let mut client = client;
    client
        .initialize_with(planhost_protocol::InitializeParams {
            protocol_version: planhost_protocol::PROTOCOL_VERSION,
            client_name: CLIENT_NAME.into(),
            client_version: Some(env!("CARGO_PKG_VERSION").into()),
            roles: HOOK_ROLES.to_vec(),
            tool_activity: false,
            agent_process: claude_process(),
        })
        .map_err(host_error)?;
    Ok(SocketHost(client))
}

/// The Claude Code process this hook runs for: `CLAUDE_PID`, which Claude Code gives its hooks,
/// else the hook's parent. The host makes it an agent root, so that nothing Claude Code runs —
/// the model's Bash above all — can connect as an approver and answer its own plan. (The host
/// checks that it is an ancestor of this process.)
fn claude_process() -> Option<u32> {
    std::env::var("CLAUDE_PID")
        .ok()
        .and_then(|p| p.trim().parse().ok())
        .or_else(|| Some(std::os::unix::process::parent_id()))
}

fn start_host(paths: &Paths) -> Result<Client, HostError> {
    let unreachable = |message: String| HostError {
        code: ErrorCode::HostUnreachable,
        message,
    };
    let exe = std::env::current_exe()
        .map_err(|e| unreachable(format!("cannot find the planhost binary to start it: {e}")))?;
    let mut command = Command::new(&exe);
    command
        .arg("--state-dir")
        .arg(&paths.state_dir)
        .arg("--socket")
        .arg(&paths.socket)
        .arg("serve")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        // Its own process group: Claude Code ends a hook's group, never the host it started.
        .process_group(0);
    let mut child = command.spawn().map_err(|e| {
        unreachable(format!(
            "no planhost answers on {} and `{} serve` could not start: {e}",
            paths.socket.display(),
            exe.display()
        ))
    })?;
    let deadline = Instant::now() + START_BOUND;
    loop {
        if let Ok(client) = Client::connect_socket(&paths.socket) {
            return Ok(client);
        }
        if let Ok(Some(status)) = child.try_wait() {
            return Err(unreachable(format!(
                "no planhost answers on {} and the one started here exited ({status}); run `planhost doctor` to see why",
                paths.socket.display()
            )));
        }
        if Instant::now() >= deadline {
            return Err(unreachable(format!(
                "no planhost answered on {} within {START_BOUND:?} of starting one; run `planhost doctor`",
                paths.socket.display()
            )));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `planhost hook claude-code`: one hook call.
pub(crate) fn hook(paths: &Paths) -> anyhow::Result<ExitCode> {
    let mut stdin = Vec::new();
    // A read failure leaves the input empty, which the handler refuses (and blocks a gate).
    let _ = std::io::stdin().lock().read_to_end(&mut stdin);
    let reply = hook::handle(&stdin, &HookEnv::from_env(), || connect_or_start(paths));
    if let Some(out) = &reply.stdout {
        let mut stdout = std::io::stdout().lock();
        writeln!(stdout, "{out}")?;
        stdout.flush()?;
    }
    if let Some(err) = &reply.stderr {
        eprintln!("{err}");
    }
    Ok(ExitCode::from(reply.exit))
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
        match original {
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
        let _ = fs_err::remove_file(&kept);
        println!(
            "planhost: removed its {removed} Claude Code hooks from {}; Claude Code's tool calls no longer go through planhost",
            path.display()
        );
        return Ok(ExitCode::SUCCESS);
    }
    let exe = std::env::current_exe()?;
    let command = settings::hook_command(&exe);
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
    println!(
        "planhost: wrote its Claude Code hooks to {} ({} events, each running `{command}`).\n\
         Every Claude Code tool call in this scope now goes through planhost, and is blocked when planhost cannot answer.\n\
         Undo with `planhost setup claude-code --scope {} --uninstall`.",
        path.display(),
        settings::EVENTS.len(),
        match scope {
            SetupScope::User => "user",
            SetupScope::Project => "project",
            SetupScope::Local => "local",
        }
    );
    Ok(ExitCode::SUCCESS)
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
    let this = std::env::current_exe()
        .map(|exe| settings::hook_command(&exe))
        .unwrap_or_default();
    let mut found = Vec::new();
    let mut ok = true;
    for scope in [Scope::User, Scope::Project, Scope::Local] {
        let path = scope.path(&home, &project);
        let Ok(text) = fs_err::read_to_string(&path) else {
            continue;
        };
        match settings::installed(&text) {
            Ok(hooks) if hooks.is_empty() => {}
            Ok(hooks) => {
                let elsewhere: Vec<&str> = hooks
                    .iter()
                    .filter(|(_, command)| *command != this)
                    .map(|(_, command)| command.as_str())
                    .collect();
                if let Some(other) = elsewhere.first() {
                    ok = false;
                    found.push(format!(
                        "{} runs `{other}`, not this binary: run `planhost setup claude-code` again",
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
                    found.push(format!("{}: every hook runs this binary", path.display()));
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

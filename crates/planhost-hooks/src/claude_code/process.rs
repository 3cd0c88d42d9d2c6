//! The hook process: one Claude Code hook call read from stdin, the host reached over its
//! socket (a `planhost serve` started when none answers), and the answer written. Both
//! `planhost-hook claude-code` (the small binary `planhost setup` writes into the settings: it
//! starts in a fraction of the full binary's time, and a hook runs on every tool call) and
//! `planhost hook claude-code` run it.

use std::io::{Read as _, Write as _};
use std::os::unix::process::CommandExt as _;
use std::path::Path;
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use planhost_client::{Client, ClientError};
use planhost_core::{ErrorCode, Role};
use planhost_protocol::{Method, methods};
use planhost_service::host::Paths;

use super::hook::{self, CLIENT_NAME, HookEnv, HostError};

/// The roles a hook declares: it acts for the agent and reads. It never answers for a person:
/// any process below Claude Code could run it, the model's own commands included.
const HOOK_ROLES: &[Role] = &[Role::Agent, Role::Observer];

/// The hook binary's file name; it is installed beside `planhost`.
pub const HOOK_BINARY: &str = "planhost-hook";

/// How long a hook waits for a host it started to answer.
const START_BOUND: Duration = Duration::from_secs(10);

/// The host over its socket. The handshake is sent on connecting and its answer read just
/// before the first call's: the host answers `initialize` before it reads the next line, so the
/// first call rides behind it and a hook pays one round trip fewer.
struct SocketHost {
    client: Client,
    /// The id of the `initialize` whose answer is still to be read.
    handshake: Option<i64>,
}

impl hook::Host for SocketHost {
    fn call<M: Method>(&mut self, params: M::Params) -> Result<M::Result, HostError> {
        let id = self
            .client
            .send_request(M::NAME, &params)
            .map_err(host_error)?;
        if let Some(handshake) = self.handshake.take() {
            self.client
                .response::<planhost_protocol::InitializeResult>(handshake)
                .map_err(host_error)?;
        }
        self.client.response::<M::Result>(id).map_err(host_error)
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
fn connect_or_start(paths: &Paths, planhost: &Path) -> Result<SocketHost, HostError> {
    let mut client = match Client::connect_socket_inline(&paths.socket) {
        Ok(client) => client,
        Err(_) => start_host(paths, planhost)?,
    };
    let handshake = client
        .send_request(
            <methods::Initialize as Method>::NAME,
            &planhost_protocol::InitializeParams {
                protocol_version: planhost_protocol::PROTOCOL_VERSION,
                client_name: CLIENT_NAME.into(),
                client_version: Some(env!("CARGO_PKG_VERSION").into()),
                roles: HOOK_ROLES.to_vec(),
                tool_activity: false,
                events: planhost_protocol::EventScope::Own,
                agent_process: claude_process(),
            },
        )
        .map_err(host_error)?;
    Ok(SocketHost {
        client,
        handshake: Some(handshake),
    })
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

fn start_host(paths: &Paths, planhost: &Path) -> Result<Client, HostError> {
    let unreachable = |message: String| HostError {
        code: ErrorCode::HostUnreachable,
        message,
    };
    let exe = planhost;
    let mut command = Command::new(exe);
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
        if let Ok(client) = Client::connect_socket_inline(&paths.socket) {
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

/// One hook call: the event from stdin, the answer to stdout, stderr and the exit status.
/// `planhost` is the binary that serves a host when none answers on `paths.socket`.
pub fn run(paths: &Paths, planhost: &Path) -> std::io::Result<ExitCode> {
    let mut stdin = Vec::new();
    // A read failure leaves the input empty, which the handler refuses (and blocks a gate).
    let _ = std::io::stdin().lock().read_to_end(&mut stdin);
    let reply = hook::handle(&stdin, &HookEnv::from_env(), || {
        connect_or_start(paths, planhost)
    });
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

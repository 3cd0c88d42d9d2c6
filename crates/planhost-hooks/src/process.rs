//! One hook process for every hook-based agent: read stdin, decode it with the agent's codec,
//! ask the host (`agent.event`, starting `planhost serve` when none answers), encode the answer,
//! exit. It fails closed by itself: anything that goes wrong where the hook is the gate blocks
//! the tool with planhost's code.

use std::io::{Read as _, Write as _};
use std::os::unix::process::CommandExt as _;
use std::path::Path;
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use planhost_client::paths::Paths;
use planhost_client::{Client, ClientError};
use planhost_core::{ErrorCode, Role};
use planhost_protocol::{AgentEventParams, AgentEventResult, Method, methods};

use crate::reply::HookReply;

/// The hook binary's file name; it is installed beside `planhost`.
pub const HOOK_BINARY: &str = "planhost-hook";

/// How long a hook waits for a host it started to answer.
const START_BOUND: Duration = Duration::from_secs(10);

/// The roles a hook declares: it acts for the agent and reads. It never answers for a person.
const HOOK_ROLES: &[Role] = &[Role::Agent, Role::Observer];

/// One call for the host, and how its answer is told to the agent.
pub struct Call {
    /// The event.
    pub params: AgentEventParams,
    /// Whether the hook gates a tool: a failure blocks it.
    pub gate: bool,
    /// The answer as the agent's hook output.
    pub encode: Box<dyn FnOnce(&AgentEventResult) -> HookReply>,
}

impl std::fmt::Debug for Call {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Call")
            .field("params", &self.params)
            .field("gate", &self.gate)
            .finish_non_exhaustive()
    }
}

/// What one hook call's input becomes.
#[derive(Debug)]
#[allow(
    clippy::large_enum_variant,
    reason = "one value per hook process, decoded once and moved once"
)]
pub enum Decoded {
    /// Ask the host.
    Call(Call),
    /// Answer this without the host.
    Reply(HookReply),
}

/// An agent's hook wire: decode its input, say its failures.
pub trait Codec {
    /// The connection's client name, as the host records it.
    fn client_name(&self) -> &'static str;
    /// The agent's own process, when the hook can name it (the host makes it an agent root).
    fn agent_process(&self) -> Option<u32>;
    /// One hook call's input.
    fn decode(&self, stdin: &[u8]) -> Decoded;
    /// A failure, as the agent must hear it: a gate blocks.
    fn failed(&self, gate: bool, code: ErrorCode, message: &str) -> HookReply;
}

/// A failed host call: its stable code and message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostError {
    /// The stable code (`HOST_UNREACHABLE` when there is no host).
    pub code: ErrorCode,
    /// What happened and what to do.
    pub message: String,
}

fn host_error(error: &ClientError) -> HostError {
    let message = match error {
        ClientError::Rpc(e) => e.message.clone(),
        ClientError::Io(_) | ClientError::Json(_) | ClientError::Closed => error.to_string(),
    };
    HostError {
        code: error.code(),
        message,
    }
}

/// Answers one decoded hook call: `ask` is the host (the socket in the binary, anything in a
/// test).
pub fn answer(
    codec: &impl Codec,
    stdin: &[u8],
    ask: impl FnOnce(&AgentEventParams) -> Result<AgentEventResult, HostError>,
) -> HookReply {
    match codec.decode(stdin) {
        Decoded::Reply(reply) => reply,
        Decoded::Call(call) => match ask(&call.params) {
            Ok(result) => (call.encode)(&result),
            Err(error) => codec.failed(call.gate, error.code, &error.message),
        },
    }
}

/// One hook call through the host's socket: the event from stdin, the answer to stdout, stderr
/// and the exit status. `planhost` is the binary that serves a host when none answers.
pub fn run(codec: &impl Codec, paths: &Paths, planhost: &Path) -> std::io::Result<ExitCode> {
    let mut stdin = Vec::new();
    // A read failure leaves the input empty, which the codec refuses (and a gate blocks).
    let _ = std::io::stdin().lock().read_to_end(&mut stdin);
    let reply = answer(codec, &stdin, |params| {
        ask_host(codec, paths, planhost, params)
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

/// The handshake and the event in one write each, their answers read in turn: the host answers
/// `initialize` before it reads the next line, so the event rides right behind it.
fn ask_host(
    codec: &impl Codec,
    paths: &Paths,
    planhost: &Path,
    params: &AgentEventParams,
) -> Result<AgentEventResult, HostError> {
    let mut client = match Client::connect_socket_inline(&paths.socket) {
        Ok(client) => client,
        Err(_) => start_host(paths, planhost)?,
    };
    let hello = client
        .send_request(
            <methods::Initialize as Method>::NAME,
            &planhost_protocol::InitializeParams {
                protocol_version: planhost_protocol::PROTOCOL_VERSION,
                client_name: codec.client_name().into(),
                client_version: Some(env!("CARGO_PKG_VERSION").into()),
                roles: HOOK_ROLES.to_vec(),
                tool_activity: false,
                events: planhost_protocol::EventScope::Own,
                agent_process: codec.agent_process(),
            },
        )
        .map_err(|e| host_error(&e))?;
    let id = client
        .send_request(<methods::AgentEvent as Method>::NAME, params)
        .map_err(|e| host_error(&e))?;
    client
        .response::<planhost_protocol::InitializeResult>(hello)
        .map_err(|e| host_error(&e))?;
    client
        .response::<AgentEventResult>(id)
        .map_err(|e| host_error(&e))
}

fn start_host(paths: &Paths, planhost: &Path) -> Result<Client, HostError> {
    let unreachable = |message: String| HostError {
        code: ErrorCode::HostUnreachable,
        message,
    };
    let mut command = Command::new(planhost);
    command
        .arg("--state-dir")
        .arg(&paths.state_dir)
        .arg("--socket")
        .arg(&paths.socket)
        .arg("serve")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        // Its own process group: the agent ends a hook's group, never the host it started.
        .process_group(0);
    let mut child = command.spawn().map_err(|e| {
        unreachable(format!(
            "no planhost answers on {} and `{} serve` could not start: {e}",
            paths.socket.display(),
            planhost.display()
        ))
    })?;
    let deadline = Instant::now() + START_BOUND;
    loop {
        if let Ok(client) = Client::connect_socket_inline(&paths.socket) {
            return Ok(client);
        }
        if let Ok(Some(status)) = child.try_wait() {
            return Err(unreachable(format!(
                "no planhost answers on {} and the one started here exited ({status}); run \
                 `planhost doctor` to see why",
                paths.socket.display()
            )));
        }
        if Instant::now() >= deadline {
            return Err(unreachable(format!(
                "no planhost answered on {} within {START_BOUND:?} of starting one; run \
                 `planhost doctor`",
                paths.socket.display()
            )));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

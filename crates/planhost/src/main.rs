//! `planhost`: the privileged local host behind an AI coding agent's Plan mode.
//!
//! Exit codes: 0 success; 1 the host refused the request (the error's stable code is printed);
//! 2 bad usage; 3 another planhost already serves this state directory; 4 no host is reachable.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::builder::TypedValueParser as _;
use clap::{Args, Parser, Subcommand};

mod cli;
mod demo;
mod notify;
mod serve;
mod web;

/// The planhost command line.
#[derive(Debug, Parser)]
#[command(
    name = "planhost",
    version,
    about = "The trustworthy host behind an AI coding agent's Plan mode"
)]
struct Cli {
    #[command(flatten)]
    location: Location,
    #[command(subcommand)]
    command: Command,
}

/// Where the host's state and socket are.
#[derive(Debug, Clone, Args)]
struct Location {
    /// State directory (default: $PLANHOST_STATE_DIR, $XDG_STATE_HOME/planhost, ~/.local/state/planhost).
    #[arg(long, global = true, value_name = "DIR")]
    state_dir: Option<PathBuf>,
    /// Unix socket path (default: $PLANHOST_SOCKET, $XDG_RUNTIME_DIR/planhost.sock, or inside the state directory).
    #[arg(long, global = true, value_name = "PATH")]
    socket: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve the host: on a unix socket (default) or on stdin/stdout for one embedding app.
    Serve {
        /// Serve JSON-RPC on stdin/stdout instead of the socket.
        #[arg(long)]
        stdio: bool,
        /// Also serve the browser approval page, on loopback (default 127.0.0.1:7766; port 0
        /// picks a free one). `planhost web` prints its address with the access token.
        #[arg(long, value_name = "ADDR", num_args = 0..=1, default_missing_value = web::DEFAULT_ADDR)]
        web: Option<String>,
        /// Also serve the page to other devices (a phone) on this one non-loopback address,
        /// over TLS only, behind the same token: e.g. your LAN or Tailscale address,
        /// 192.168.1.5:7767. Implies --web. Without --web-cert and --web-key, a certificate is
        /// made for the address and kept; its SHA-256 is printed to pin.
        #[arg(long, value_name = "ADDR")]
        web_remote: Option<String>,
        /// The remote page's certificate chain (PEM).
        #[arg(long, value_name = "FILE", requires_all = ["web_remote", "web_key"])]
        web_cert: Option<std::path::PathBuf>,
        /// The remote page's private key (PEM).
        #[arg(long, value_name = "FILE", requires_all = ["web_remote", "web_cert"])]
        web_key: Option<std::path::PathBuf>,
    },
    /// Print (and open in a browser) the address of the running host's web page, with its token.
    Web {
        /// Only print the address.
        #[arg(long)]
        no_open: bool,
        /// Make a new token first: pages opened with the old one stop working.
        #[arg(long)]
        rotate: bool,
        /// Also print the address as a QR code, for a phone's camera (the remote page's, when
        /// the host serves one: `serve --web-remote`).
        #[arg(long)]
        qr: bool,
    },
    /// Show or choose the permission mode outside Plan: `ask` (the default: asks before writes,
    /// edits and commands not proven read-only), `accept-edits` or `auto`; the host's default,
    /// or one session's with `--session`.
    Mode {
        /// The mode to choose; without it, the mode is shown.
        #[arg(value_parser = parse_mode)]
        mode: Option<planhost_core::TargetPermissionMode>,
        /// One session (its id, or a unique prefix or suffix), instead of the host's default.
        #[arg(long)]
        session: Option<String>,
    },
    /// Show or choose the tool-policy preset: host (the default: in Plan, shell commands run
    /// unasked only when proven read-only), literal (seed 000: by the permission mode), strict
    /// (Plan is read-only, no shell), explore (only file writers blocked in Plan).
    Preset {
        /// The preset to use; without it, the current one is shown.
        name: Option<planhost_core::PolicyPreset>,
        /// One session (its id, or a unique prefix or suffix); without it, the host's default.
        #[arg(long)]
        session: Option<String>,
    },
    /// Stop the running host: its pending approvals and executions are interrupted, as on a
    /// restart, its commands' process trees are killed, and its clients are told.
    Stop,
    /// Show or set the command planhost runs whenever a plan, a permission ask or a publication
    /// starts waiting for an answer (what waits is JSON on its stdin): e.g. `planhost notify
    /// 'notify-send planhost "a plan waits"'`, or a curl to ntfy or a chat webhook.
    Notify {
        /// The command (run with `sh -c`); without it, the current one is shown.
        command: Option<String>,
        /// Kill the command (and what it started) after this many milliseconds (default 10000).
        #[arg(long, value_parser = clap::value_parser!(u64).range(100..=600_000))]
        timeout_ms: Option<u64>,
        /// Stop running a command.
        #[arg(long, conflicts_with_all = ["command", "timeout_ms"])]
        clear: bool,
    },
    /// Host status: version, state directory, sessions, pending approvals.
    Status(cli::Output),
    /// Put planhost behind an agent: write its hooks into the agent's settings (or take them
    /// out again with `--uninstall`).
    Setup {
        /// The agent.
        #[command(subcommand)]
        agent: SetupAgent,
    },
    /// The hook an agent runs for each of its events (written by `planhost setup`): reads the
    /// event on stdin, answers on stdout and in the exit status.
    Hook {
        /// The agent whose hook this is.
        #[command(subcommand)]
        agent: HookAgent,
    },
    /// List plan approvals.
    Plans {
        /// Only pending approvals.
        #[arg(long)]
        pending: bool,
        #[command(flatten)]
        output: cli::Output,
    },
    /// Show one plan: title, question, file, live expiry, status, and the plan itself.
    Show {
        /// Proposal id (or a unique prefix or suffix of at least 8 characters, as `plans` prints).
        proposal: String,
        #[command(flatten)]
        output: cli::Output,
    },
    /// Approve a pending plan; the session switches to Agent with the chosen permission mode.
    Approve {
        /// Proposal id (or a unique prefix or suffix of at least 8 characters).
        proposal: String,
        /// Permission mode for the execution.
        #[arg(
            long,
            default_value_t = planhost_core::TargetPermissionMode::Ask,
            value_parser = clap::builder::PossibleValuesParser::new(
                planhost_core::TargetPermissionMode::ALL.iter().map(|m| m.as_str())
            )
            .try_map(|m| m.parse::<planhost_core::TargetPermissionMode>())
        )]
        mode: planhost_core::TargetPermissionMode,
    },
    /// Reject a pending plan; the session stays in Plan.
    Reject {
        /// Proposal id (or a unique prefix or suffix of at least 8 characters).
        proposal: String,
        /// A note for the agent.
        #[arg(long)]
        feedback: Option<String>,
    },
    /// List publication approvals (`/plan save` asks to write `.pi/plans/<name>.md`).
    Publications {
        /// Only pending approvals.
        #[arg(long)]
        pending: bool,
        #[command(flatten)]
        output: cli::Output,
    },
    /// Approve (write) or, with --reject, reject a pending publication.
    Publish {
        /// Publication id (or a unique prefix of at least 8 characters).
        publication: String,
        /// Reject instead of approving.
        #[arg(long)]
        reject: bool,
    },
    /// The shell catalog of this platform.
    Shells(cli::Output),
    /// Check the state directory, lock, socket, shells and SQLite.
    Doctor(cli::Output),
    /// Run a whole scripted Plan session through the real protocol, printing each event.
    Demo,
    /// The host's watchdog (started by `serve` itself): ends what the host left running once it
    /// is gone, however it died.
    #[cfg(target_os = "linux")]
    #[command(name = "__watch", hide = true)]
    Watch {
        /// The host's pid.
        pid: i32,
        /// Its start time in clock ticks since boot.
        start: u64,
    },
}

/// Agents `planhost setup` knows.
#[derive(Debug, Subcommand)]
enum SetupAgent {
    /// Claude Code: its `settings.json` hooks.
    ClaudeCode {
        /// Which settings file: user (~/.claude/settings.json), project
        /// (.claude/settings.json) or local (.claude/settings.local.json).
        #[arg(long, value_enum, default_value = "user")]
        scope: cli::SetupScope,
        /// Take planhost's hooks out again (exactly them).
        #[arg(long)]
        uninstall: bool,
    },
}

/// Agents whose hooks `planhost hook` answers.
#[derive(Debug, Subcommand)]
enum HookAgent {
    /// Claude Code.
    ClaudeCode,
    /// A shell command the hook routed through planhost (written by the hook; not for typing).
    #[command(hide = true)]
    Run {
        /// The tool call, then `--` and the command (or `--stdin`).
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    init_logging(matches!(cli.command, Command::Serve { .. }));
    let paths = match planhost_service::host::Paths::resolve(
        cli.location.state_dir.as_deref(),
        cli.location.socket.as_deref(),
    ) {
        Ok(paths) => paths,
        Err(error) => {
            eprintln!("planhost: {error:#}");
            return ExitCode::from(2);
        }
    };
    let result = match cli.command {
        Command::Serve {
            stdio,
            web,
            web_remote,
            web_cert,
            web_key,
        } => {
            let transport = if stdio {
                serve::Transport::Stdio
            } else {
                serve::Transport::Socket
            };
            // The remote page stands beside the loopback one.
            let web = web.or_else(|| web_remote.as_ref().map(|_| web::DEFAULT_ADDR.to_owned()));
            let remote = web_remote
                .as_deref()
                .map(|addr| {
                    web::parse_remote_addr(addr).map(|at| {
                        (
                            at,
                            web::CertFiles {
                                cert: web_cert,
                                key: web_key,
                            },
                        )
                    })
                })
                .transpose();
            match (web.as_deref().map(web::parse_addr).transpose(), remote) {
                (Ok(web), Ok(remote)) => serve::run(&paths, transport, web, remote),
                (Err(error), _) | (_, Err(error)) => Err(error),
            }
        }
        Command::Web {
            no_open,
            rotate,
            qr,
        } => cli::web(&paths, no_open, rotate, qr),
        Command::Stop => cli::stop(&paths),
        Command::Notify {
            command,
            timeout_ms,
            clear,
        } => cli::notify(&paths.state_dir, command, timeout_ms, clear),
        Command::Preset { name, session } => cli::preset(&paths, name, session.as_deref()),
        Command::Mode { mode, session } => cli::mode(&paths, mode, session.as_deref()),
        Command::Status(out) => cli::status(&paths, out),
        Command::Setup {
            agent: SetupAgent::ClaudeCode { scope, uninstall },
        } => cli::setup_claude_code(&paths, scope, uninstall),
        Command::Hook {
            agent: HookAgent::ClaudeCode,
        } => cli::hook_claude_code(&paths),
        Command::Hook {
            agent: HookAgent::Run { args },
        } => Ok(planhost_hooks::route::run(&paths.socket, &args)),
        Command::Plans { pending, output } => cli::plans(&paths, pending, output),
        Command::Show { proposal, output } => cli::show(&paths, &proposal, output),
        Command::Approve { proposal, mode } => cli::approve(&paths, &proposal, mode),
        Command::Reject { proposal, feedback } => cli::reject(&paths, &proposal, feedback),
        Command::Publications { pending, output } => cli::publications(&paths, pending, output),
        Command::Publish {
            publication,
            reject,
        } => cli::publish(&paths, &publication, reject),
        Command::Shells(out) => cli::shells(&paths, out),
        Command::Doctor(out) => cli::doctor(&paths, out),
        Command::Demo => demo::run().map(|()| ExitCode::SUCCESS),
        #[cfg(target_os = "linux")]
        Command::Watch { pid, start } => {
            let left = planhost_service::host::run_watchdog(pid, start);
            if left.cgroups + left.processes > 0 {
                tracing::warn!(
                    host = pid,
                    cgroups = left.cgroups,
                    processes = left.processes,
                    "the host is gone: ended what it left running"
                );
            }
            Ok(ExitCode::SUCCESS)
        }
    };
    match result {
        Ok(code) => code,
        Err(error) => cli::report(&error),
    }
}

/// Logs go to stderr only: in `serve --stdio`, stdout carries nothing but the protocol.
fn init_logging(serving: bool) {
    let default = if serving {
        "planhost=info,warn"
    } else {
        "warn"
    };
    let filter = tracing_subscriber::EnvFilter::try_from_env("PLANHOST_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    // Colour only for a person at a terminal: a log captured to a file or pipe stays plain text.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .try_init();
}

fn parse_mode(text: &str) -> Result<planhost_core::TargetPermissionMode, String> {
    text.parse()
        .map_err(|_| format!("{text:?} is not a permission mode: ask, accept-edits or auto"))
}

//! A shell command of an agent that runs its own shell, routed through planhost (DESIGN
//! decision 14). The agent's hook rewrites an allowed command into `planhost-hook run <call> --
//! '<command>'`: the agent's shell runs that, and it asks the host to run the command
//! (`agent.run`) in the host's scope, streaming its output back and exiting with its status. The
//! person reads the command as it is inside the rewritten one.

use std::io::{Read as _, Write as _};
use std::path::Path;
use std::process::ExitCode;

use planhost_client::{Client, ClientError};
use planhost_core::{ErrorCode, ExitStatus, OutputStream, Role};
use planhost_protocol::{
    AgentRunParams, AgentRunResult, InitializeParams, Method, PROTOCOL_VERSION, ServerNotification,
    methods,
};

/// Above this many bytes, a command goes on the helper's stdin (a here-document) instead of one
/// argument: the kernel bounds one argument to 128 KiB.
const ARGUMENT_BYTES: usize = 64 * 1024;

/// The client name of a routed run.
pub const RUN_CLIENT: &str = "planhost-hook-run";

/// The command the agent's shell runs instead of `command`.
pub fn routed_command(program: &str, call: &str, command: &str) -> String {
    if command.len() <= ARGUMENT_BYTES {
        return format!("{program} run {} -- {}", quote(call), quote(command));
    }
    // A delimiter no line of the command is.
    let mut delimiter = String::from("PLANHOST_COMMAND");
    let mut n = 0u32;
    while command.lines().any(|l| l == delimiter) {
        n += 1;
        delimiter = format!("PLANHOST_COMMAND_{n}");
    }
    format!(
        "{program} run {} --stdin <<'{delimiter}'\n{command}\n{delimiter}",
        quote(call)
    )
}

/// POSIX single quotes: the word is exactly `s`.
fn quote(s: &str) -> String {
    if !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./:=@%+,".contains(&b))
    {
        return s.to_owned();
    }
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// `planhost-hook run <call> -- <command>` (or `--stdin`): runs the command through the host
/// and exits as it did. Refusals and failures are said on stderr with planhost's code; the
/// command did not run then (exit 126, as a shell says for a command it could not run).
pub fn run(socket: &Path, args: &[String]) -> ExitCode {
    let (call, command) = match args {
        [call, dash, command] if dash == "--" => (call.clone(), command.clone()),
        [call, stdin] if stdin == "--stdin" => {
            let mut text = String::new();
            if std::io::stdin().read_to_string(&mut text).is_err() {
                return refused(ErrorCode::InvalidParams, "the command could not be read");
            }
            // The here-document adds the line end before its delimiter.
            if text.ends_with('\n') {
                text.pop();
            }
            (call.clone(), text)
        }
        _ => {
            eprintln!(
                "usage: planhost-hook run <tool call> -- <command> (written by planhost's hook; \
                 not for typing)"
            );
            return ExitCode::from(2);
        }
    };
    let cwd = match std::env::current_dir() {
        Ok(dir) => dir.display().to_string(),
        Err(e) => {
            return refused(
                ErrorCode::CommandCwdInvalid,
                &format!("the working directory cannot be read: {e}"),
            );
        }
    };
    let env: Vec<(String, String)> = std::env::vars().collect();
    match run_through_host(socket, call, command, cwd, env) {
        Ok(result) => exit_of(&result),
        Err(error) => {
            let message = match &error {
                ClientError::Rpc(e) => e.message.clone(),
                ClientError::Io(_) | ClientError::Json(_) | ClientError::Closed => {
                    format!("no planhost answers on {} ({error})", socket.display())
                }
            };
            refused(error.code(), &message)
        }
    }
}

fn refused(code: ErrorCode, message: &str) -> ExitCode {
    eprintln!(
        "planhost: {message} [{}]; the command did not run.",
        code.as_str()
    );
    ExitCode::from(126)
}

fn run_through_host(
    socket: &Path,
    call: String,
    command: String,
    cwd: String,
    env: Vec<(String, String)>,
) -> Result<AgentRunResult, ClientError> {
    let mut client = Client::connect_socket_inline(socket)?;
    let hello = client.send_request(
        <methods::Initialize as Method>::NAME,
        &InitializeParams {
            protocol_version: PROTOCOL_VERSION,
            client_name: RUN_CLIENT.into(),
            client_version: Some(env!("CARGO_PKG_VERSION").into()),
            roles: vec![Role::Agent],
            tool_activity: false,
            events: planhost_protocol::EventScope::Own,
            agent_process: None,
        },
    )?;
    let id = client.send_request(
        <methods::AgentRun as Method>::NAME,
        &AgentRunParams {
            call_id: call.into(),
            command,
            cwd,
            env,
        },
    )?;
    client.response::<planhost_protocol::InitializeResult>(hello)?;
    let mut out = std::io::stdout().lock();
    let mut err = std::io::stderr().lock();
    client.response_with::<AgentRunResult>(id, |note| {
        if let Some(ServerNotification::ToolOutput(chunk)) =
            ServerNotification::parse(&note.method, note.params.clone())
        {
            let written = match chunk.stream {
                OutputStream::Stdout => out.write_all(chunk.text.as_bytes()).and(out.flush()),
                OutputStream::Stderr => err.write_all(chunk.text.as_bytes()).and(err.flush()),
            };
            // A closed pipe (the agent stopped reading) is the agent's to handle.
            let _ = written;
        }
    })
}

/// The command's status as this process's: its code, 128 plus a signal, 124 for a timeout.
fn exit_of(result: &AgentRunResult) -> ExitCode {
    let run = &result.result.run;
    if run.timed_out {
        eprintln!(
            "planhost: the command ran longer than {} s; it and every process it started were \
             stopped.",
            result.result.timeout_ms / 1000
        );
        return ExitCode::from(124);
    }
    if run.cancelled {
        return ExitCode::from(130);
    }
    match run.exit {
        ExitStatus::Code(code) => ExitCode::from(u8::try_from(code.rem_euclid(256)).unwrap_or(1)),
        ExitStatus::Signal(signal) => {
            ExitCode::from(u8::try_from(128 + signal.rem_euclid(128)).unwrap_or(1))
        }
        ExitStatus::None => ExitCode::from(1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_routed_command_reads_as_the_command() {
        assert_eq!(
            routed_command("planhost-hook", "toolu_01", "git status"),
            "planhost-hook run toolu_01 -- 'git status'"
        );
        assert_eq!(
            routed_command("planhost-hook", "toolu_01", "echo 'it''s'"),
            r"planhost-hook run toolu_01 -- 'echo '\''it'\'''\''s'\'''"
        );
        let long = format!("echo {}\nPLANHOST_COMMAND\n", "x".repeat(ARGUMENT_BYTES));
        let routed = routed_command("/opt/bin/planhost-hook", "c", &long);
        assert!(
            routed.starts_with("/opt/bin/planhost-hook run c --stdin <<'PLANHOST_COMMAND_1'\n")
        );
        assert!(routed.ends_with("\nPLANHOST_COMMAND_1"));
    }

    #[test]
    fn a_quoted_command_is_the_same_bytes_to_a_shell() {
        for command in [
            "ls -la",
            "echo 'a b' \"c\" $HOME",
            "printf '%s\\n' \"$(date)\"",
            "a'b",
        ] {
            let routed = routed_command("printf-args", "c", command);
            // The shell reads the last word back as exactly the command.
            let out = std::process::Command::new("sh")
                .arg("-c")
                .arg(format!(
                    "set -- {}; printf %s \"$4\"",
                    routed.trim_start_matches("printf-args ")
                ))
                .output()
                .unwrap();
            assert_eq!(String::from_utf8(out.stdout).unwrap(), command, "{routed}");
        }
    }
}

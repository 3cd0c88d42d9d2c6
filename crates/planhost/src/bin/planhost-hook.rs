//! `planhost-hook claude-code`: the hook an agent runs for each of its events, as a small
//! binary. A hook process starts on every tool call, and this one starts in a fraction of the
//! full `planhost`'s time (fewer pages to map and relocate); it runs the same code as
//! `planhost hook claude-code`. It reads no flags: the host's state directory and socket come
//! from `PLANHOST_STATE_DIR` and `PLANHOST_SOCKET` or their defaults, as for every planhost
//! command. A host it starts is `planhost serve`, from the `planhost` beside it.

use std::process::ExitCode;

use planhost_client::paths::Paths;
use planhost_hooks::claude_code::codec::ClaudeEnv;
use planhost_hooks::claude_code::{ClaudeCode, settings};

fn main() -> ExitCode {
    let mut argv = std::env::args();
    let arg0 = argv.next().unwrap_or_default();
    let args: Vec<String> = argv.collect();
    let paths = match Paths::resolve(None, None) {
        Ok(paths) => paths,
        Err(e) => {
            eprintln!("planhost: {e} [HOST_UNREACHABLE]");
            return ExitCode::from(2);
        }
    };
    // A shell command the hook routed through planhost.
    if args.first().map(String::as_str) == Some("run") {
        return planhost_hooks::route::run(&paths.socket, &args[1..]);
    }
    if args.len() != 1 || args[0] != settings::AGENT_ARG {
        eprintln!(
            "usage: planhost-hook {} (run by the agent; `planhost setup claude-code` writes it into its settings)",
            settings::AGENT_ARG
        );
        return ExitCode::from(2);
    }
    let planhost = std::env::current_exe()
        .map(|exe| exe.with_file_name("planhost"))
        .unwrap_or_else(|_| "planhost".into());
    // The routed command names this program as the agent found it: on PATH by its name.
    let program = if arg0.contains('/') {
        std::env::current_exe()
            .map(|exe| exe.display().to_string())
            .unwrap_or(arg0)
    } else {
        arg0
    };
    let codec = ClaudeCode {
        env: ClaudeEnv::from_env(program),
    };
    match planhost_hooks::run(&codec, &paths, &planhost) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("planhost: the hook could not answer: {e} [INTERNAL_ERROR]");
            ExitCode::from(2)
        }
    }
}

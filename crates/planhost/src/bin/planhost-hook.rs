//! `planhost-hook claude-code`: the hook an agent runs for each of its events, as a small
//! binary. A hook process starts on every tool call, and this one starts in a fraction of the
//! full `planhost`'s time (fewer pages to map and relocate); it runs the same code as
//! `planhost hook claude-code`. It reads no flags: the host's state directory and socket come
//! from `PLANHOST_STATE_DIR` and `PLANHOST_SOCKET` or their defaults, as for every planhost
//! command. A host it starts is `planhost serve`, from the `planhost` beside it.

use std::process::ExitCode;

use planhost_hooks::claude_code::{process, settings};
use planhost_service::host::Paths;

fn main() -> ExitCode {
    let mut args = std::env::args_os().skip(1);
    let (agent, extra) = (args.next(), args.next());
    if extra.is_some() || agent.as_deref() != Some(std::ffi::OsStr::new(settings::AGENT_ARG)) {
        eprintln!(
            "usage: planhost-hook {} (run by the agent; `planhost setup claude-code` writes it into its settings)",
            settings::AGENT_ARG
        );
        return ExitCode::from(2);
    }
    let paths = match Paths::resolve(None, None) {
        Ok(paths) => paths,
        Err(e) => {
            eprintln!("planhost: {e} [HOST_UNREACHABLE]");
            return ExitCode::from(2);
        }
    };
    let planhost = std::env::current_exe()
        .map(|exe| exe.with_file_name("planhost"))
        .unwrap_or_else(|_| "planhost".into());
    match process::run(&paths, &planhost) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("planhost: the hook could not answer: {e} [INTERNAL_ERROR]");
            ExitCode::from(2)
        }
    }
}

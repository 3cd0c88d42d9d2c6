//! `planhost notify`: show, set or clear the command the host runs when something starts
//! waiting for an answer (see `crate::notify`).

use std::path::Path;

use crate::notify::{DEFAULT_TIMEOUT_MS, NotifyConfig};

/// `planhost notify [COMMAND] [--timeout-ms N] [--clear]`.
pub(crate) fn notify(
    state_dir: &Path,
    command: Option<String>,
    timeout_ms: Option<u64>,
    clear: bool,
) -> anyhow::Result<std::process::ExitCode> {
    if clear {
        match fs_err::remove_file(NotifyConfig::path(state_dir)) {
            Ok(()) => println!("planhost: no notify command any more"),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                println!("planhost: no notify command was set; nothing changed");
            }
            Err(e) => return Err(e.into()),
        }
        return Ok(std::process::ExitCode::SUCCESS);
    }
    let Some(command) = command.filter(|c| !c.trim().is_empty()) else {
        match NotifyConfig::read(state_dir)? {
            Some(c) => println!(
                "planhost runs `{}` (with what waits as JSON on stdin, killed after {} ms) whenever a plan, ask or publication starts waiting",
                c.command, c.timeout_ms
            ),
            None => println!(
                "planhost: no notify command (set one with `planhost notify 'COMMAND'`; it gets what waits as JSON on stdin)"
            ),
        }
        return Ok(std::process::ExitCode::SUCCESS);
    };
    fs_err::create_dir_all(state_dir)?;
    let config = NotifyConfig {
        command,
        timeout_ms: timeout_ms.unwrap_or(DEFAULT_TIMEOUT_MS),
    };
    config.write(state_dir)?;
    println!(
        "planhost: will run `{}` whenever a plan, ask or publication starts waiting (what waits as JSON on stdin; killed after {} ms). A running host picks it up at once.",
        config.command, config.timeout_ms
    );
    Ok(std::process::ExitCode::SUCCESS)
}

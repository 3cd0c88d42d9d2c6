//! `planhost`: the privileged local host behind an AI coding agent's Plan mode.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod demo;

/// The planhost command line.
#[derive(Debug, Parser)]
#[command(
    name = "planhost",
    version,
    about = "The trustworthy host behind an AI coding agent's Plan mode"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Runs a whole scripted Plan session against a temporary workspace and prints each step.
    Demo,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Demo => demo::run(),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("planhost: {error:#}");
            ExitCode::FAILURE
        }
    }
}

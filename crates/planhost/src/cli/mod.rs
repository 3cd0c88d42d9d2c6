//! The commands people type. Every one talks to the running host over its socket, never to the
//! database behind its back.
//!
//! This module holds what every command shares: the connection to the host ([`connect`],
//! [`call`]), the roles a command declares, errors that carry their exit status ([`Failure`],
//! [`report`]) and `--json` ([`Output`]). The commands live by subject: `status.rs` (`status`,
//! `shells`), `plans.rs` (`plans`, `show`, `approve`, `reject`), `publications.rs`
//! (`publications`, `publish`), `preset.rs`, `host.rs` (`web`, `stop`) and `doctor.rs`.

// This module writes for people on stdout; `serve --stdio` never runs it.
#![allow(clippy::print_stdout)]

mod claude;
mod doctor;
mod hook_program;
mod host;
mod notify;
mod plans;
mod preset;
mod publications;
mod status;

use std::io::Write;
use std::process::ExitCode;

use planhost_client::{Client, ClientError};
use planhost_core::{ApprovalStatus, ErrorCode, Role};
use planhost_protocol::Method;
use serde::Serialize;

use planhost_service::host::Paths;

pub(crate) use claude::{SetupScope, hook as hook_claude_code, setup as setup_claude_code};
pub(crate) use doctor::{Status as DoctorStatus, checks as doctor_checks, doctor};
pub(crate) use host::{stop, web};
pub(crate) use notify::notify;
pub(crate) use plans::{approve, plans, reject, show};
pub(crate) use preset::{mode, preset};
pub(crate) use publications::{publications, publish};
pub(crate) use status::{shells, status};

/// `--json` on every read command.
#[derive(Debug, Clone, Copy, clap::Args)]
pub(crate) struct Output {
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

/// Exit status when no host answers on the socket.
const EXIT_UNREACHABLE: u8 = 4;

/// An error that already carries its exit status.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub(crate) struct Failure {
    code: ErrorCode,
    message: String,
    status: u8,
}

fn failure(error: ClientError) -> anyhow::Error {
    let status = match error {
        ClientError::Rpc(_) | ClientError::Json(_) => 1,
        ClientError::Io(_) | ClientError::Closed => EXIT_UNREACHABLE,
    };
    let message = match &error {
        ClientError::Rpc(e) => e.message.clone(),
        ClientError::Io(_) | ClientError::Closed | ClientError::Json(_) => error.to_string(),
    };
    Failure {
        code: error.code(),
        message,
        status,
    }
    .into()
}

/// Prints an error with its code and returns the documented exit status.
pub(crate) fn report(error: &anyhow::Error) -> ExitCode {
    match error.downcast_ref::<Failure>() {
        Some(f) => {
            eprintln!("planhost: error {}: {}", f.code, f.message);
            ExitCode::from(f.status)
        }
        None => {
            eprintln!("planhost: {error:#}");
            ExitCode::FAILURE
        }
    }
}

/// What a command that only reads declares: a read works from anywhere, an agent's bash too.
const READER: &[Role] = &[Role::Observer];
/// What a command that answers for a person declares. The host refuses `approver` to a process
/// that runs under an agent (`ROLE_APPROVER_REFUSED`), so only these commands can meet that.
const APPROVER: &[Role] = &[Role::Approver, Role::Observer];

fn connect(paths: &Paths, roles: &[Role]) -> anyhow::Result<Client> {
    let mut client = Client::connect_socket(&paths.socket).map_err(|e| {
        anyhow::Error::from(Failure {
            code: ErrorCode::HostUnreachable,
            message: format!(
                "no planhost is serving on {} ({e}); start one with `planhost serve`",
                paths.socket.display()
            ),
            status: EXIT_UNREACHABLE,
        })
    })?;
    // A person at a terminal: the CLI answers approvals and reads; it never acts as the agent,
    // and declares `approver` only for the commands that answer.
    client.initialize("planhost-cli", roles).map_err(failure)?;
    Ok(client)
}

fn call<M: Method>(c: &mut Client, p: M::Params) -> anyhow::Result<M::Result> {
    c.call::<M>(p).map_err(failure)
}

fn print_json(value: &impl Serialize) -> anyhow::Result<ExitCode> {
    let mut out = std::io::stdout().lock();
    serde_json::to_writer_pretty(&mut out, value)?;
    writeln!(out)?;
    Ok(ExitCode::SUCCESS)
}

fn all_pending() -> Option<Vec<ApprovalStatus>> {
    Some(vec![ApprovalStatus::Pending])
}

/// The last 8 characters of a UUID v7: its random part, unique enough to type. (The first 8 are
/// the high bits of the creation time, shared by every plan of the same minute or so.)
fn short(id: &str) -> &str {
    id.len()
        .checked_sub(8)
        .and_then(|start| id.get(start..))
        .unwrap_or(id)
}

//! `planhost publications` and `planhost publish`: the publications of plans, listed, and one
//! approved or rejected for a person.

use std::io::Write;
use std::process::ExitCode;

use planhost_core::{ApprovalAction, PublicationStatus};
use planhost_protocol::{PublicationsFilter, ResolveOutcome, ResolvePublicationParams, methods};

use planhost_service::host::Paths;

use super::{APPROVER, Output, READER, call, connect, print_json, short};

pub(crate) fn publications(paths: &Paths, pending: bool, out: Output) -> anyhow::Result<ExitCode> {
    let mut c = connect(paths, READER)?;
    let list = call::<methods::PublicationsList>(
        &mut c,
        PublicationsFilter {
            session_id: None,
            status: pending.then(|| vec![PublicationStatus::Pending]),
            limit: Some(10_000),
        },
    )?;
    if out.json {
        return print_json(&list);
    }
    let mut o = anstream::stdout().lock();
    if list.items.is_empty() {
        writeln!(
            o,
            "no {}publications",
            if pending { "pending " } else { "" }
        )?;
        return Ok(ExitCode::SUCCESS);
    }
    writeln!(o, "{:<10} {:<12} {:<5} PATH", "ID", "STATUS", "REV")?;
    for p in &list.items {
        writeln!(
            o,
            "{:<10} {:<12} {:<5} {}",
            short(p.publication_id.as_str()),
            p.status.as_str(),
            p.revision,
            p.relative_path
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn publish(paths: &Paths, publication: &str, reject: bool) -> anyhow::Result<ExitCode> {
    let mut c = connect(paths, APPROVER)?;
    let action = if reject {
        ApprovalAction::Reject
    } else {
        ApprovalAction::Approve
    };
    // The host resolves a typed prefix or suffix, and says so when it is ambiguous.
    let result = call::<methods::PublicationsResolve>(
        &mut c,
        ResolvePublicationParams {
            publication_id: publication.into(),
            action,
        },
    )?;
    match (result.outcome, &result.next) {
        (ResolveOutcome::Reapprove, Some(next)) => println!(
            "the name was taken while writing; approval revoked. New pending publication {} for {}",
            short(next.publication_id.as_str()),
            next.relative_path
        ),
        (outcome, _) => println!("{}: {}", outcome.as_str(), result.publication.relative_path),
    }
    Ok(match result.outcome {
        ResolveOutcome::Conflict => ExitCode::FAILURE,
        ResolveOutcome::Completed | ResolveOutcome::Rejected | ResolveOutcome::Reapprove => {
            ExitCode::SUCCESS
        }
    })
}

//! `publications.*`: `/plan save` and a person's answer (seed 003).

use planhost_core::{ApprovalAction, IdMatch, PublicationId, match_id};
use planhost_protocol::{
    PublicationList, PublicationRequest, PublicationResolution, PublicationsFilter, RequestOutcome,
    RequestPublicationParams, ResolveOutcome, ResolvePublicationParams,
};

use crate::connection::Caller;
use crate::convert;
use crate::engine::Engine;
use crate::publish::{Overwrite, PublishOutcome, PublishStart};
use crate::service::Inner;
use crate::{Result, ServiceError};

/// A full publication id, or a unique prefix or suffix of one.
fn resolve_id(e: &mut Engine, typed: &PublicationId) -> Result<PublicationId> {
    if e.store().publication(typed).is_ok() {
        return Ok(typed.clone());
    }
    let all = e.store().publications_matching(None, None, 0)?;
    match match_id(typed.as_str(), all.iter().map(|p| p.id.as_str())) {
        IdMatch::One(id) => Ok(id.into()),
        IdMatch::None => Err(planhost_store::StoreError::PublicationNotFound(typed.clone()).into()),
        IdMatch::Ambiguous(candidates) => Err(ServiceError::IdAmbiguous {
            typed: typed.to_string(),
            candidates,
        }),
    }
}

pub(crate) async fn request(
    svc: &Inner,
    p: RequestPublicationParams,
) -> Result<PublicationRequest> {
    let overwrite = if p.overwrite_conflict {
        Overwrite::DiskAsBase
    } else {
        Overwrite::Refuse
    };
    let start = svc
        .engine(move |e| e.start_publication(&p.session_id, &p.branch_path, overwrite))
        .await?;
    Ok(match start {
        PublishStart::Synced(_) => PublicationRequest {
            outcome: RequestOutcome::Synced,
            publication: None,
        },
        PublishStart::Pending(record) => PublicationRequest {
            outcome: RequestOutcome::Pending,
            publication: Some(convert::publication(record)),
        },
    })
}

pub(crate) async fn list(svc: &Inner, p: PublicationsFilter) -> Result<PublicationList> {
    let limit = super::limit(p.limit);
    let rows = svc
        .engine(move |e| {
            e.settle_stale_publications();
            Ok(e.store().publications_matching(
                p.session_id.as_ref(),
                p.status.as_deref(),
                limit,
            )?)
        })
        .await?;
    Ok(PublicationList {
        items: rows.into_iter().map(convert::publication).collect(),
    })
}

pub(crate) async fn resolve(
    svc: &Inner,
    caller: &Caller,
    p: ResolvePublicationParams,
) -> Result<PublicationResolution> {
    let by = caller.by.clone();
    let approve = p.action == ApprovalAction::Approve;
    let outcome = svc
        .engine(move |e| {
            let id = resolve_id(e, &p.publication_id)?;
            e.resolve_publication(&id, approve, &by)
        })
        .await?;
    let (outcome, record, next) = match outcome {
        PublishOutcome::Completed(r) => (ResolveOutcome::Completed, r, None),
        PublishOutcome::Rejected(r) => (ResolveOutcome::Rejected, r, None),
        PublishOutcome::Conflict(r) => (ResolveOutcome::Conflict, r, None),
        PublishOutcome::Reapprove { revoked, next } => {
            (ResolveOutcome::Reapprove, revoked, Some(*next))
        }
    };
    Ok(PublicationResolution {
        outcome,
        publication: convert::publication(record),
        next: next.map(convert::publication),
    })
}

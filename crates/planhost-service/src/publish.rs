//! The `/plan` lifecycle operations that span the store and the workspace: status, publication
//! (first create, verified update, crash reconciliation) and exit (seed 003).

use std::path::Path;

use planhost_core::{
    DiskState, EntryId, ErrorCode, ExitOffer, Mode, PublicationId, PublicationState,
    PublicationStatus, Resolver, SessionId, exit_offer, plan_title, publication_state,
};
use planhost_fs::{OnDisk, PlanDirs, PublishError, Reconciled};
use planhost_store::{CheckpointRecord, PlanIdentity, PublicationRecord, StatusChange};

use crate::new_id;

use crate::engine::Engine;
use crate::{Result, ServiceError};

/// Where a published plan lives under the workspace.
/// How many numbered names a first publication tries in one second before it gives up: far
/// more than any person can publish, and every name is one `stat`.
const MAX_NAME_ATTEMPTS: u32 = 100_000;

/// `/plan status` (seed 003).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PlanStatus {
    /// Plan mode is active (the durable mode is Plan).
    pub(crate) active: bool,
    /// The branch's latest checkpoint revision, if any.
    pub(crate) revision: Option<i64>,
    /// Its digest.
    pub(crate) sha256: Option<String>,
    /// unpublished / dirty / synced / conflict.
    pub(crate) publication: PublicationState,
    /// The published (or to-be-published) path.
    pub(crate) path: Option<String>,
    /// The plan identity.
    pub(crate) identity: PlanIdentity,
}

/// What `/plan save` may do to a published file that changed outside planhost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Overwrite {
    /// Never: report the conflict (the default).
    Refuse,
    /// A person chose to replace what is on disk now; its digest becomes the approval's base.
    DiskAsBase,
}

/// The result of asking to publish.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PublishStart {
    /// The latest checkpoint is already published and the disk verified: nothing to write.
    Synced(PlanStatus),
    /// A publication approval is pending; a person must approve exactly this binding.
    Pending(PublicationRecord),
}

/// The result of resolving a publication approval.
#[derive(Debug, Clone, PartialEq, Eq)]
#[allow(
    clippy::large_enum_variant,
    reason = "one outcome per resolution, returned once"
)]
pub(crate) enum PublishOutcome {
    /// Written (or verified already written) and recorded.
    Completed(PublicationRecord),
    /// Rejected by the person; nothing written.
    Rejected(PublicationRecord),
    /// A first publication lost a race for its name: approval revoked, a new name asks again.
    Reapprove {
        /// The revoked approval.
        revoked: PublicationRecord,
        /// The new pending approval.
        next: PublicationRecord,
    },
    /// The file changed outside planhost: nothing overwritten; Plan mode stays.
    Conflict(PublicationRecord),
}

/// The plan directories a published path is in, and its file name there.
fn located(relative_path: &str) -> Result<(PlanDirs, &str)> {
    PlanDirs::ALL
        .iter()
        .find_map(|d| {
            relative_path
                .strip_prefix(&d.published_prefix())
                .map(|name| (*d, name))
        })
        .ok_or_else(|| {
            ServiceError::Publish(PublishError::PathInvalid {
                reason: format!("{relative_path:?} is not under a plan directory planhost writes"),
            })
        })
}

/// A status change from `from` to `to`, with a reason and who answered.
fn change<'a>(
    from: &'a [PublicationStatus],
    to: PublicationStatus,
    code: Option<ErrorCode>,
    by: Option<&'a Resolver>,
) -> StatusChange<'a> {
    StatusChange { from, to, code, by }
}

/// `yyyymmdd-hhmmss` in UTC: the stamp of a first publication's name.
fn stamp(at: planhost_core::Timestamp) -> String {
    jiff::Timestamp::from_millisecond(at.0)
        .unwrap_or(jiff::Timestamp::UNIX_EPOCH)
        .strftime("%Y%m%d-%H%M%S")
        .to_string()
}

fn disk_state(on_disk: &OnDisk) -> DiskState {
    match on_disk {
        OnDisk::File { sha256, .. } => DiskState::File(sha256.clone()),
        OnDisk::Missing => DiskState::Missing,
        OnDisk::NotAFile(_) => DiskState::NotAFile,
    }
}

impl Engine {
    fn root(&mut self, session_id: &SessionId) -> Result<String> {
        Ok(self.store().session(session_id)?.workspace_root)
    }

    /// `/plan status`: mode, branch revision, publication state against the disk, path.
    pub(crate) fn plan_status(
        &mut self,
        session_id: &SessionId,
        branch_path: &[EntryId],
    ) -> Result<PlanStatus> {
        self.settle_stale_publications();
        let session = self.store().session(session_id)?;
        let identity = self.store().plan_identity(session_id)?;
        let latest = self
            .store()
            .latest_checkpoint(session_id, branch_path)?
            .map(|(c, _)| c);
        let disk = match &identity.published_path {
            // Whatever keeps the file from being read as a plain file (a symlinked `.pi/plans`, a
            // directory in its place) is a conflict to report, not an error that hides the status.
            Some(path) => {
                let (dirs, name) = located(path)?;
                match planhost_fs::inspect(Path::new(&session.workspace_root), dirs, name) {
                    Ok(on_disk) => disk_state(&on_disk),
                    Err(_) => DiskState::NotAFile,
                }
            }
            None => DiskState::Missing,
        };
        let publication = publication_state(
            identity.published_sha256.as_deref(),
            latest.as_ref().map(|c| c.sha256.as_str()),
            &disk,
        );
        Ok(PlanStatus {
            active: session.mode == Mode::Plan,
            revision: latest.as_ref().map(|c| c.revision),
            sha256: latest.map(|c| c.sha256),
            publication,
            path: identity.published_path.clone(),
            identity,
        })
    }

    /// `/plan exit` before a choice: synced → exit now; otherwise the choices of seed 003.
    pub(crate) fn exit_offer(
        &mut self,
        session_id: &SessionId,
        branch_path: &[EntryId],
    ) -> Result<ExitOffer> {
        let status = self.plan_status(session_id, branch_path)?;
        Ok(exit_offer(status.revision.is_some(), status.publication))
    }

    /// Leaves Plan mode keeping the checkpoints and identity (Exit without publishing).
    pub(crate) fn exit_plan(&mut self, session_id: &SessionId) -> Result<Vec<PublicationId>> {
        Ok(self.store().exit_plan(session_id)?)
    }

    /// `/plan save`: binds the exact latest checkpoint, its path and the update baseline in a
    /// pending publication approval — or reports synced after verifying the disk. After a
    /// conflict, `Overwrite::DiskAsBase` (a person's explicit choice) binds what is on disk now
    /// as the base, so the approval says exactly which bytes it replaces.
    pub(crate) fn start_publication(
        &mut self,
        session_id: &SessionId,
        branch_path: &[EntryId],
        overwrite: Overwrite,
    ) -> Result<PublishStart> {
        let (checkpoint, markdown) = self
            .store()
            .latest_checkpoint(session_id, branch_path)?
            .ok_or(ServiceError::NoCheckpoint)?;
        let status = self.plan_status(session_id, branch_path)?;
        if !status.active {
            return Err(planhost_core::CoreError::PlanModeNotActive.into());
        }
        if status.identity.tool_conflict {
            return Err(planhost_core::CoreError::ToolsConflict.into());
        }
        let root = self.root(session_id)?;
        match (
            &status.identity.published_path,
            status.publication,
            overwrite,
        ) {
            (Some(_), PublicationState::Synced, _) => Ok(PublishStart::Synced(status)),
            (Some(_), PublicationState::Conflict, Overwrite::Refuse) => {
                Err(ServiceError::PublishedFileChanged)
            }
            (Some(path), PublicationState::Conflict, Overwrite::DiskAsBase) => {
                let (dirs, name) = located(path)?;
                let base = match planhost_fs::inspect(Path::new(&root), dirs, name)? {
                    OnDisk::File { sha256, .. } => Some(sha256),
                    OnDisk::Missing => None,
                    OnDisk::NotAFile(_) => return Err(ServiceError::PublishedFileChanged),
                };
                let record = self.store().open_publication(
                    &new_id().into(),
                    &checkpoint,
                    path,
                    base.as_deref(),
                )?;
                Ok(PublishStart::Pending(record))
            }
            (Some(path), PublicationState::Dirty | PublicationState::Unpublished, _) => {
                let base = status.identity.published_sha256.clone();
                let record = self.store().open_publication(
                    &new_id().into(),
                    &checkpoint,
                    path,
                    base.as_deref(),
                )?;
                Ok(PublishStart::Pending(record))
            }
            (None, _, _) => {
                let dirs = self.store().session(session_id)?.agent.profile().dirs;
                let name = self.free_name(&root, dirs, &markdown, &status.identity)?;
                let record = self.store().open_publication(
                    &new_id().into(),
                    &checkpoint,
                    &format!("{}{name}", dirs.published_prefix()),
                    None,
                )?;
                Ok(PublishStart::Pending(record))
            }
        }
    }

    fn free_name(
        &mut self,
        root: &str,
        dirs: PlanDirs,
        markdown: &str,
        identity: &PlanIdentity,
    ) -> Result<String> {
        let title = plan_title(markdown)
            .or_else(|| identity.session_name.clone())
            .unwrap_or_else(|| "plan".into());
        let stamp = stamp(self.now());
        for attempt in 1..=MAX_NAME_ATTEMPTS {
            let name = planhost_core::publication_file_name(&title, &stamp, attempt);
            match planhost_fs::preflight(Path::new(root), dirs, &name)? {
                planhost_fs::Preflight::Free => return Ok(name),
                planhost_fs::Preflight::Taken => {}
            }
        }
        Err(ServiceError::Publish(PublishError::PathInvalid {
            reason: "no free plan file name".into(),
        }))
    }

    /// A person answers a publication approval. Approve persists the approval, then writes:
    /// exclusive create for a first publication, verify-then-rename for an update.
    pub(crate) fn resolve_publication(
        &mut self,
        id: &PublicationId,
        approve: bool,
        by: &Resolver,
    ) -> Result<PublishOutcome> {
        let record = self.store().publication(id)?;
        // Publication belongs to Plan mode: never write a plan file for a session that left it.
        if approve && self.store().session(&record.session_id)?.mode != Mode::Plan {
            return Err(planhost_core::CoreError::PlanModeNotActive.into());
        }
        let pending = [PublicationStatus::Pending];
        if !approve {
            let rejected = self.store().set_publication_status(
                id,
                &change(&pending, PublicationStatus::Rejected, None, Some(by)),
            )?;
            return Ok(PublishOutcome::Rejected(rejected));
        }
        if self
            .store()
            .plan_identity(&record.session_id)?
            .tool_conflict
        {
            return Err(planhost_core::CoreError::ToolsConflict.into());
        }
        let record = self.store().set_publication_status(
            id,
            &change(&pending, PublicationStatus::Approved, None, Some(by)),
        )?;
        self.write_publication(&record)
    }

    fn write_publication(&mut self, record: &PublicationRecord) -> Result<PublishOutcome> {
        let root = self.root(&record.session_id)?;
        let (checkpoint, bytes) = self.store().checkpoint_bytes(record.checkpoint_id)?;
        let (dirs, name) = located(&record.relative_path)?;
        let name = name.to_owned();
        let written = match &record.base_sha256 {
            None => planhost_fs::publish_new(Path::new(&root), dirs, &name, &bytes),
            Some(base) => planhost_fs::publish_update(Path::new(&root), dirs, &name, &bytes, base),
        };
        match written {
            Ok(_) => self.complete(record, &bytes),
            Err(PublishError::Collision { .. }) => {
                let revoked = self.store().set_publication_status(
                    &record.id,
                    &change(
                        &[PublicationStatus::Approved],
                        PublicationStatus::Revoked,
                        Some(ErrorCode::PublishCollision),
                        None,
                    ),
                )?;
                let markdown = String::from_utf8_lossy(&bytes).into_owned();
                let identity = self.store().plan_identity(&record.session_id)?;
                let name = self.free_name(&root, dirs, &markdown, &identity)?;
                let next =
                    self.reopen(&checkpoint, &format!("{}{name}", dirs.published_prefix()))?;
                Ok(PublishOutcome::Reapprove { revoked, next })
            }
            Err(error @ PublishError::Conflict { .. }) => {
                let conflicted = self.store().set_publication_status(
                    &record.id,
                    &change(
                        &[PublicationStatus::Approved],
                        PublicationStatus::Conflict,
                        Some(error.code()),
                        None,
                    ),
                )?;
                Ok(PublishOutcome::Conflict(conflicted))
            }
            Err(error) => {
                // A failure after the rename (e.g. the directory fsync) may have left the new
                // bytes in place: check the disk before calling it failed.
                let landed = planhost_fs::reconcile(
                    Path::new(&root),
                    dirs,
                    &name,
                    &record.sha256,
                    record.base_sha256.as_deref(),
                );
                if matches!(landed, Ok(Reconciled::AlreadyWritten)) {
                    return self.complete(record, &bytes);
                }
                self.store().set_publication_status(
                    &record.id,
                    &change(
                        &[PublicationStatus::Approved],
                        PublicationStatus::Failed,
                        Some(error.code()),
                        None,
                    ),
                )?;
                Err(error.into())
            }
        }
    }

    fn reopen(&mut self, checkpoint: &CheckpointRecord, path: &str) -> Result<PublicationRecord> {
        Ok(self
            .store()
            .open_publication(&new_id().into(), checkpoint, path, None)?)
    }

    fn complete(&mut self, record: &PublicationRecord, bytes: &[u8]) -> Result<PublishOutcome> {
        let markdown = String::from_utf8_lossy(bytes);
        Ok(PublishOutcome::Completed(
            self.store().complete_publication(&record.id, &markdown)?,
        ))
    }

    /// At startup: an approval whose write may have happened before a crash is checked against
    /// the disk — completed writes are recorded, not repeated; unwritten ones are interrupted
    /// (a person asks again); anything else is a conflict.
    pub(crate) fn reconcile_publications(&mut self) -> Result<Vec<PublicationRecord>> {
        self.reconcile_approved(true)
    }

    /// While serving: an `approved` row outside [`Engine::resolve_publication`] (which writes and
    /// records in one engine call) is one whose outcome could not be recorded (a failed commit
    /// after the write). It is settled from the disk the same way, so it neither blocks the next
    /// publication nor misreports the status until a restart. Best effort: a store that still
    /// fails leaves it for the next call.
    pub(crate) fn settle_stale_publications(&mut self) {
        if let Err(error) = self.reconcile_approved(false) {
            tracing::warn!(%error, "cannot settle a publication whose outcome was not recorded");
        }
    }

    fn reconcile_approved(&mut self, at_start: bool) -> Result<Vec<PublicationRecord>> {
        let mut out = Vec::new();
        let approved = [PublicationStatus::Approved];
        for record in self
            .store()
            .publications_with_status(PublicationStatus::Approved)?
        {
            let root = self.root(&record.session_id)?;
            let (dirs, name) = located(&record.relative_path)?;
            let outcome = planhost_fs::reconcile(
                Path::new(&root),
                dirs,
                name,
                &record.sha256,
                record.base_sha256.as_deref(),
            );
            let updated = match outcome {
                Ok(Reconciled::AlreadyWritten) => {
                    let (_, bytes) = self.store().checkpoint_bytes(record.checkpoint_id)?;
                    self.store()
                        .complete_publication(&record.id, &String::from_utf8_lossy(&bytes))?
                }
                Ok(Reconciled::NotWritten) if at_start => self.store().set_publication_status(
                    &record.id,
                    &change(
                        &approved,
                        PublicationStatus::Interrupted,
                        Some(ErrorCode::HostRestarted),
                        None,
                    ),
                )?,
                // While serving, an unwritten approved row is a write that failed and whose
                // failure could not be recorded either.
                Ok(Reconciled::NotWritten) => self.store().set_publication_status(
                    &record.id,
                    &change(
                        &approved,
                        PublicationStatus::Failed,
                        Some(ErrorCode::PublishWriteFailed),
                        None,
                    ),
                )?,
                Ok(Reconciled::Conflict(_)) => self.store().set_publication_status(
                    &record.id,
                    &change(
                        &approved,
                        PublicationStatus::Conflict,
                        Some(ErrorCode::PublishConflict),
                        None,
                    ),
                )?,
                Err(error) => self.store().set_publication_status(
                    &record.id,
                    &change(
                        &approved,
                        PublicationStatus::Failed,
                        Some(error.code()),
                        None,
                    ),
                )?,
            };
            out.push(updated);
        }
        Ok(out)
    }
}

impl Engine {
    /// The text a client injects into every model call (empty without a checkpoint), and the
    /// revision it projects.
    pub(crate) fn projection(
        &mut self,
        session_id: &SessionId,
        branch_path: &[EntryId],
    ) -> Result<(String, Option<i64>)> {
        let live = self.store().policy_snapshot(session_id)?.live;
        let mode = match live.mode {
            planhost_core::Mode::Plan => planhost_core::ProjectionMode::Planning(live.preset),
            planhost_core::Mode::Agent => return Ok((String::new(), None)),
        };
        let latest = self.store().latest_checkpoint(session_id, branch_path)?;
        Ok(match latest {
            Some((record, text)) => {
                let revision = record.revision;
                let reference = planhost_core::CheckpointRef {
                    id: record.id,
                    anchor: record.anchor,
                    revision: record.revision,
                    sha256: record.sha256,
                };
                (
                    planhost_core::projection(mode, Some((&reference, &text))),
                    Some(revision),
                )
            }
            None => (planhost_core::projection(mode, None), None),
        })
    }
}

#[cfg(test)]
mod stamp_tests {
    use super::stamp;
    use planhost_core::Timestamp;

    #[test]
    fn stamps_are_utc_civil_seconds() {
        // 2026-08-05 12:34:56.789 UTC
        assert_eq!(stamp(Timestamp(1_785_933_296_789)), "20260805-123456");
        assert_eq!(stamp(Timestamp(0)), "19700101-000000");
        // Leap day, year end.
        assert_eq!(stamp(Timestamp(1_709_164_800_000)), "20240229-000000");
        assert_eq!(stamp(Timestamp(1_798_761_599_000)), "20261231-235959");
    }
}

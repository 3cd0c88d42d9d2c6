//! Publication approvals: persisted bindings of revision, digest, path and base digest, so a
//! write that completed just before a crash is reconciled, not repeated (seed 003).

use planhost_core::{
    ErrorCode, EventBody, PublicationId, PublicationStatus, Resolver, SessionId, plan_title,
};
use rusqlite::{OptionalExtension, params};
use serde_json::json;

use super::{CheckpointRecord, PUBLICATION_COLUMNS, PublicationRecord, publication_from_row};
use crate::records::IdColumn;
use crate::tx::{AuditSubject, Tx};
use crate::{Result, Store, StoreError};

/// A publication status change: allowed only from one of `from`; `code` says why it ended
/// badly, `by` who answered (a person's approve or reject).
#[derive(Debug, Clone, Copy)]
pub struct StatusChange<'a> {
    /// The statuses the change may start from.
    pub from: &'a [PublicationStatus],
    /// The new status.
    pub to: PublicationStatus,
    /// The reason, for revoked, conflict, failed and interrupted.
    pub code: Option<ErrorCode>,
    /// Who answered.
    pub by: Option<&'a Resolver>,
}

impl Tx<'_> {
    /// Revokes the session's pending publication approvals (with `code`), emitting their events;
    /// returns their ids. An approval is bound to exact bytes and a position: anything that moves
    /// either (a new checkpoint, a branch switch, leaving Plan) voids it.
    pub(crate) fn revoke_pending_publications(
        &mut self,
        session_id: &SessionId,
        code: planhost_core::ErrorCode,
    ) -> Result<Vec<PublicationId>> {
        let revoked: Vec<PublicationId> = self
            .tx
            .prepare_cached(
                "UPDATE publication_approvals SET status = 'revoked', error_code = ?2, updated_at = ?3 \
                 WHERE session_id = ?1 AND status = 'pending' RETURNING id",
            )?
            .query_map(params![session_id.as_str(), code.as_str(), self.now.0], |r| r.id(0))?
            .collect::<rusqlite::Result<_>>()?;
        for id in &revoked {
            let subject = AuditSubject {
                session_id: Some(session_id),
                ..AuditSubject::default()
            };
            self.audit(
                subject,
                planhost_core::AuditAction::PublicationRevoked,
                &json!({ "id": id, "code": code }),
            )?;
            self.emit(
                session_id,
                EventBody::PublicationChanged {
                    publication_id: id.clone(),
                    status: PublicationStatus::Revoked,
                },
            )?;
        }
        Ok(revoked)
    }

    pub(crate) fn publication(&self, id: &PublicationId) -> Result<PublicationRecord> {
        let sql = format!("SELECT {PUBLICATION_COLUMNS} FROM publication_approvals WHERE id = ?1");
        self.tx
            .prepare_cached(&sql)?
            .query_row([id.as_str()], publication_from_row)
            .optional()?
            .ok_or_else(|| StoreError::PublicationNotFound(id.clone()))?
    }

    fn publication_status(
        &mut self,
        id: &PublicationId,
        change: &StatusChange<'_>,
    ) -> Result<PublicationRecord> {
        let current = self.publication(id)?;
        if !change.from.contains(&current.status) {
            return Err(StoreError::PublicationState {
                status: current.status,
            });
        }
        let resolved_by = change
            .by
            .map(|r| serde_json::to_string(r).unwrap_or_default());
        self.tx
            .prepare_cached(
                "UPDATE publication_approvals SET status = ?2, error_code = ?3, updated_at = ?4, \
                 resolved_by = COALESCE(?5, resolved_by) WHERE id = ?1",
            )?
            .execute(params![
                id.as_str(),
                change.to.as_str(),
                change.code.map(ErrorCode::as_str),
                self.now.0,
                resolved_by
            ])?;
        let subject = AuditSubject {
            session_id: Some(&current.session_id),
            ..AuditSubject::default()
        };
        self.audit(
            subject,
            change.to.into(),
            &json!({ "id": id, "code": change.code, "by": change.by }),
        )?;
        self.emit(
            &current.session_id,
            EventBody::PublicationChanged {
                publication_id: id.clone(),
                status: change.to,
            },
        )?;
        self.publication(id)
    }
}

impl Store {
    /// Opens a publication approval for `checkpoint` at `relative_path`; refused while another
    /// one is pending or being written.
    pub fn open_publication(
        &mut self,
        id: &PublicationId,
        checkpoint: &CheckpointRecord,
        relative_path: &str,
        base_sha256: Option<&str>,
    ) -> Result<PublicationRecord> {
        self.transact(|t| {
            let open: Option<PublicationId> = t
                .tx
                .prepare_cached(
                    "SELECT id FROM publication_approvals WHERE session_id = ?1 AND status IN ('pending', 'approved')",
                )?
                .query_row([checkpoint.session_id.as_str()], |r| r.id(0))
                .optional()?;
            if let Some(open) = open {
                return Err(StoreError::PublicationOpen(open));
            }
            t.tx.prepare_cached(
                "INSERT INTO publication_approvals (id, session_id, checkpoint_id, revision, sha256, relative_path, \
                 base_sha256, status, created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 'pending', ?8, ?8)",
            )?
            .execute(params![
                id.as_str(),
                checkpoint.session_id.as_str(),
                checkpoint.id.0,
                checkpoint.revision,
                checkpoint.sha256,
                relative_path,
                base_sha256,
                t.now.0
            ])?;
            let subject = AuditSubject { session_id: Some(&checkpoint.session_id), ..AuditSubject::default() };
            t.audit(
                subject,
                planhost_core::AuditAction::PublicationPending,
                &json!({ "id": id, "revision": checkpoint.revision, "sha256": checkpoint.sha256,
                         "path": relative_path, "base": base_sha256 }),
            )?;
            t.emit(
                &checkpoint.session_id,
                EventBody::PublicationChanged { publication_id: id.clone(), status: PublicationStatus::Pending },
            )?;
            t.publication(id)
        })
    }

    /// One publication approval.
    pub fn publication(&mut self, id: &PublicationId) -> Result<PublicationRecord> {
        self.read(|t| t.publication(id))
    }

    /// Publication approvals, newest first; only pending ones with [`crate::ApprovalFilter::Pending`].
    pub fn publications(
        &mut self,
        filter: crate::ApprovalFilter,
    ) -> Result<Vec<PublicationRecord>> {
        self.read(|t| {
            let condition = match filter {
                crate::ApprovalFilter::All => "1 = 1",
                crate::ApprovalFilter::Pending => "status = 'pending'",
            };
            let sql = format!(
                "SELECT {PUBLICATION_COLUMNS} FROM publication_approvals WHERE {condition} ORDER BY created_at DESC, id DESC"
            );
            let mut stmt = t.tx.prepare(&sql)?;
            let rows = stmt.query_map([], publication_from_row)?;
            rows.collect::<rusqlite::Result<Vec<_>>>()?.into_iter().collect()
        })
    }

    /// Publication approvals, newest first: only one session's and only some statuses when
    /// given; at most `limit` (0: all).
    pub fn publications_matching(
        &mut self,
        session_id: Option<&SessionId>,
        statuses: Option<&[PublicationStatus]>,
        limit: usize,
    ) -> Result<Vec<PublicationRecord>> {
        let statuses = statuses.map(|s| {
            serde_json::to_string(&s.iter().map(|v| v.as_str()).collect::<Vec<_>>())
                .unwrap_or_else(|_| "[]".into())
        });
        let limit = if limit == 0 {
            -1
        } else {
            i64::try_from(limit).unwrap_or(-1)
        };
        self.read(|t| {
            let sql = format!(
                "SELECT {PUBLICATION_COLUMNS} FROM publication_approvals \
                 WHERE (?1 IS NULL OR session_id = ?1) \
                 AND (?2 IS NULL OR status IN (SELECT value FROM json_each(?2))) \
                 ORDER BY created_at DESC, id DESC LIMIT ?3"
            );
            let mut stmt = t.tx.prepare_cached(&sql)?;
            let rows = stmt.query_map(
                params![session_id.map(SessionId::as_str), statuses, limit],
                publication_from_row,
            )?;
            rows.collect::<rusqlite::Result<Vec<_>>>()?
                .into_iter()
                .collect()
        })
    }

    /// Publication approvals in the given status (the host reconciles `approved` at startup).
    pub fn publications_with_status(
        &mut self,
        status: PublicationStatus,
    ) -> Result<Vec<PublicationRecord>> {
        self.read(|t| {
            let sql = format!("SELECT {PUBLICATION_COLUMNS} FROM publication_approvals WHERE status = ?1 ORDER BY created_at");
            let mut stmt = t.tx.prepare(&sql)?;
            let rows = stmt.query_map([status.as_str()], publication_from_row)?;
            rows.collect::<rusqlite::Result<Vec<_>>>()?.into_iter().collect()
        })
    }

    /// Moves a publication approval from one of `change.from` to `change.to`, durably.
    pub fn set_publication_status(
        &mut self,
        id: &PublicationId,
        change: &StatusChange<'_>,
    ) -> Result<PublicationRecord> {
        self.transact(|t| t.publication_status(id, change))
    }

    /// Records a completed write: the approval is `completed` and the identity now points at the
    /// published path and digest. The first publication also names the session from the plan's
    /// `# Plan: <title>` heading.
    pub fn complete_publication(
        &mut self,
        id: &PublicationId,
        markdown: &str,
    ) -> Result<PublicationRecord> {
        self.transact(|t| {
            let p = t.publication_status(
                id,
                &StatusChange {
                    from: &[PublicationStatus::Approved],
                    to: PublicationStatus::Completed,
                    code: None,
                    by: None,
                },
            )?;
            let identity = t.identity(&p.session_id)?;
            let name = match identity.session_name {
                Some(existing) => Some(existing),
                None => plan_title(markdown),
            };
            t.tx.prepare_cached(
                "UPDATE plan_identities SET published_path = ?2, published_sha256 = ?3, published_revision = ?4, \
                 session_name = ?5, updated_at = ?6 WHERE session_id = ?1",
            )?
            .execute(params![p.session_id.as_str(), p.relative_path, p.sha256, p.revision, name, t.now.0])?;
            Ok(p)
        })
    }
}

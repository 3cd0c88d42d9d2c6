//! Publication approvals: persisted bindings of revision, digest, path and base digest, so a
//! write that completed just before a crash is reconciled, not repeated (seed 003).

use planhost_core::{EventBody, plan_title};
use rusqlite::{OptionalExtension, params};
use serde_json::json;

use super::{CheckpointRecord, PUBLICATION_COLUMNS, PublicationRecord, publication_from_row};
use crate::tx::{AuditSubject, Tx};
use crate::{Result, Store, StoreError};

impl Tx<'_> {
    /// Revokes the session's pending publication approvals (with `code`), emitting their events;
    /// returns their ids. An approval is bound to exact bytes and a position: anything that moves
    /// either (a new checkpoint, a branch switch, leaving Plan) voids it.
    pub(crate) fn revoke_pending_publications(
        &mut self,
        session_id: &str,
        code: &str,
    ) -> Result<Vec<String>> {
        let revoked: Vec<String> = self
            .tx
            .prepare_cached(
                "UPDATE publication_approvals SET status = 'revoked', error_code = ?2, updated_at = ?3 \
                 WHERE session_id = ?1 AND status = 'pending' RETURNING id",
            )?
            .query_map(params![session_id, code, self.now.0], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        for id in &revoked {
            let subject = AuditSubject {
                session_id: Some(session_id),
                ..AuditSubject::default()
            };
            self.audit(
                subject,
                "publication.revoked",
                &json!({ "id": id, "code": code }),
            )?;
            self.emit(
                session_id,
                EventBody::PublicationChanged {
                    publication_id: id.clone(),
                    status: "revoked".into(),
                },
            )?;
        }
        Ok(revoked)
    }

    pub(crate) fn publication(&self, id: &str) -> Result<PublicationRecord> {
        let sql = format!("SELECT {PUBLICATION_COLUMNS} FROM publication_approvals WHERE id = ?1");
        self.tx
            .prepare_cached(&sql)?
            .query_row([id], publication_from_row)
            .optional()?
            .ok_or_else(|| StoreError::PublicationNotFound(id.to_owned()))
    }

    fn publication_status(
        &mut self,
        id: &str,
        from: &[&str],
        to: &str,
        code: Option<&str>,
    ) -> Result<PublicationRecord> {
        let current = self.publication(id)?;
        if !from.contains(&current.status.as_str()) {
            return Err(StoreError::PublicationState {
                status: current.status,
            });
        }
        self.tx
            .prepare_cached(
                "UPDATE publication_approvals SET status = ?2, error_code = ?3, updated_at = ?4 WHERE id = ?1",
            )?
            .execute(params![id, to, code, self.now.0])?;
        let subject = AuditSubject {
            session_id: Some(&current.session_id),
            ..AuditSubject::default()
        };
        self.audit(
            subject,
            &format!("publication.{to}"),
            &json!({ "id": id, "code": code }),
        )?;
        self.emit(
            &current.session_id,
            EventBody::PublicationChanged {
                publication_id: id.to_owned(),
                status: to.to_owned(),
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
        id: &str,
        checkpoint: &CheckpointRecord,
        relative_path: &str,
        base_sha256: Option<&str>,
    ) -> Result<PublicationRecord> {
        self.transact(|t| {
            let open: Option<String> = t
                .tx
                .prepare_cached(
                    "SELECT id FROM publication_approvals WHERE session_id = ?1 AND status IN ('pending', 'approved')",
                )?
                .query_row([&checkpoint.session_id], |r| r.get(0))
                .optional()?;
            if let Some(open) = open {
                return Err(StoreError::PublicationOpen(open));
            }
            t.tx.prepare_cached(
                "INSERT INTO publication_approvals (id, session_id, checkpoint_id, revision, sha256, relative_path, \
                 base_sha256, status, created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 'pending', ?8, ?8)",
            )?
            .execute(params![
                id,
                checkpoint.session_id,
                checkpoint.id,
                checkpoint.revision,
                checkpoint.sha256,
                relative_path,
                base_sha256,
                t.now.0
            ])?;
            let subject = AuditSubject { session_id: Some(&checkpoint.session_id), ..AuditSubject::default() };
            t.audit(
                subject,
                "publication.pending",
                &json!({ "id": id, "revision": checkpoint.revision, "sha256": checkpoint.sha256,
                         "path": relative_path, "base": base_sha256 }),
            )?;
            t.emit(
                &checkpoint.session_id,
                EventBody::PublicationChanged { publication_id: id.to_owned(), status: "pending".into() },
            )?;
            t.publication(id)
        })
    }

    /// One publication approval.
    pub fn publication(&mut self, id: &str) -> Result<PublicationRecord> {
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
            Ok(rows.collect::<rusqlite::Result<_>>()?)
        })
    }

    /// Publication approvals in the given statuses (the host reconciles `approved` at startup).
    pub fn publications_with_status(&mut self, status: &str) -> Result<Vec<PublicationRecord>> {
        self.read(|t| {
            let sql = format!("SELECT {PUBLICATION_COLUMNS} FROM publication_approvals WHERE status = ?1 ORDER BY created_at");
            let mut stmt = t.tx.prepare(&sql)?;
            let rows = stmt.query_map([status], publication_from_row)?;
            Ok(rows.collect::<rusqlite::Result<_>>()?)
        })
    }

    /// Moves a publication approval `from` one of the given statuses `to` another, durably.
    pub fn set_publication_status(
        &mut self,
        id: &str,
        from: &[&str],
        to: &str,
        code: Option<&str>,
    ) -> Result<PublicationRecord> {
        self.transact(|t| t.publication_status(id, from, to, code))
    }

    /// Records a completed write: the approval is `completed` and the identity now points at the
    /// published path and digest. The first publication also names the session from the plan's
    /// `# Plan: <title>` heading.
    pub fn complete_publication(&mut self, id: &str, markdown: &str) -> Result<PublicationRecord> {
        self.transact(|t| {
            let p = t.publication_status(id, &["approved"], "completed", None)?;
            let identity = t.identity(&p.session_id)?;
            let name = match identity.session_name {
                Some(existing) => Some(existing),
                None => plan_title(markdown),
            };
            t.tx.prepare_cached(
                "UPDATE plan_identities SET published_path = ?2, published_sha256 = ?3, published_revision = ?4, \
                 session_name = ?5, updated_at = ?6 WHERE session_id = ?1",
            )?
            .execute(params![p.session_id, p.relative_path, p.sha256, p.revision, name, t.now.0])?;
            Ok(p)
        })
    }
}

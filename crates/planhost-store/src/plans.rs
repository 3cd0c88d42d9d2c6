//! Plan checkpoints, the per-session plan identity, publication approvals, the handoff phase and
//! the tool baseline (seeds 003 and 004), each change one transaction.

use planhost_core::{
    CheckpointId, CheckpointRef, CoreError, EntryId, EventBody, HandoffPhase, HandoffStep, Mode,
    PlanId, PublicationId, SessionId, ToolsConflict, handoff_next, latest_on_branch, next_revision,
};
use rusqlite::{OptionalExtension, params};
use serde::Serialize;
use serde_json::json;

use crate::blobs::{self, Stored};
use crate::records::{IdColumn, parse};
use crate::tx::{AuditSubject, Tx};
use crate::{Result, Store, StoreError};

pub use planhost_core::CheckpointSource;

/// What binds a captured checkpoint to its source (seed 004): offered again, it is the same.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaptureBinding {
    /// The persisted entry id of the assistant message.
    pub entry_id: EntryId,
    /// SHA-256 of the whole message.
    pub fingerprint: String,
    /// The content block.
    pub block_index: i64,
    /// Body start offset in the block.
    pub start: i64,
    /// Body end offset in the block.
    pub end: i64,
}

/// A stored checkpoint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CheckpointRecord {
    /// Store id (newer is larger).
    pub id: CheckpointId,
    /// Session.
    pub session_id: SessionId,
    /// Branch-local revision.
    pub revision: i64,
    /// The branch leaf it was created at.
    pub anchor: EntryId,
    /// SHA-256 of the exact bytes.
    pub sha256: String,
    /// Size of the exact bytes.
    pub size_bytes: i64,
    /// How it arrived.
    pub source: CheckpointSource,
    /// When.
    pub created_at: i64,
    /// When a person was last shown it (`checkpoints.seen`), or, for the checkpoint a plan is
    /// measured from, the last time before that plan arrived.
    pub seen_at: Option<i64>,
    /// Which client showed it then.
    pub seen_by: Option<planhost_core::Resolver>,
}

/// The result of saving a checkpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SavedCheckpoint {
    /// The checkpoint (new, or the existing one for a capture offered again).
    pub record: CheckpointRecord,
    /// False when the same capture was offered again and nothing was stored.
    pub created: bool,
    /// How the body was stored (`stored_bytes` 0 when identical bytes already existed).
    pub stored: Stored,
}

/// The per-session plan identity.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanIdentity {
    /// Session.
    pub session_id: SessionId,
    /// Stable plan id.
    pub plan_id: PlanId,
    /// Handoff phase.
    pub phase: HandoffPhase,
    /// `.pi/plans/<name>.md` once published.
    pub published_path: Option<String>,
    /// Digest last published.
    pub published_sha256: Option<String>,
    /// Revision last published.
    pub published_revision: Option<i64>,
    /// The name the first publication derived from `# Plan: <title>`.
    pub session_name: Option<String>,
    /// Tools active at plan entry.
    pub tool_baseline: Option<Vec<String>>,
    /// Tools Plan mode last applied.
    pub tool_applied: Option<Vec<String>>,
    /// An external tool change is unresolved.
    pub tool_conflict: bool,
    /// The checkpoint a pending handoff binds.
    pub handoff_checkpoint: Option<CheckpointId>,
    /// The in-process capability of a pending handoff (absent after a restart).
    pub handoff_token: Option<String>,
    /// A pending handoff survived a restart and waits for review, retry or cancel.
    pub handoff_restarted: bool,
}

/// A publication approval: binds revision, digest, path and base digest (seed 003).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PublicationRecord {
    /// Id.
    pub id: PublicationId,
    /// Session.
    pub session_id: SessionId,
    /// The checkpoint to publish.
    pub checkpoint_id: CheckpointId,
    /// Its revision.
    pub revision: i64,
    /// Its digest.
    pub sha256: String,
    /// `.pi/plans/<name>.md`.
    pub relative_path: String,
    /// The digest the file must still have (updates), `None` for a first publication.
    pub base_sha256: Option<String>,
    /// Its status.
    pub status: planhost_core::PublicationStatus,
    /// Why it ended badly.
    pub error_code: Option<planhost_core::ErrorCode>,
    /// Who approved or rejected it.
    pub resolved_by: Option<planhost_core::Resolver>,
    /// When it was opened.
    pub created_at: planhost_core::Timestamp,
}

/// The last showing comes from `plan_checkpoint_views` (every query names `plan_checkpoints`
/// unaliased).
const CHECKPOINT_COLUMNS: &str = "id, session_id, revision, anchor, sha256, size_bytes, source, created_at, \
     (SELECT v.seen_at FROM plan_checkpoint_views v WHERE v.checkpoint_id = plan_checkpoints.id \
      ORDER BY v.id DESC LIMIT 1), \
     (SELECT v.seen_by FROM plan_checkpoint_views v WHERE v.checkpoint_id = plan_checkpoints.id \
      ORDER BY v.id DESC LIMIT 1)";

fn checkpoint_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<CheckpointRecord> {
    let source: String = r.get(6)?;
    Ok(CheckpointRecord {
        id: CheckpointId(r.get(0)?),
        session_id: r.id(1)?,
        revision: r.get(2)?,
        anchor: r.id(3)?,
        sha256: r.get(4)?,
        size_bytes: r.get(5)?,
        // The column's CHECK admits only the three sources.
        source: source.parse().unwrap_or(CheckpointSource::Draft),
        created_at: r.get(7)?,
        seen_at: r.get(8)?,
        seen_by: r
            .get::<_, Option<String>>(9)?
            .map(|v| {
                serde_json::from_str(&v).map_err(|e| {
                    rusqlite::Error::FromSqlConversionFailure(
                        9,
                        rusqlite::types::Type::Text,
                        e.into(),
                    )
                })
            })
            .transpose()?,
    })
}

const PUBLICATION_COLUMNS: &str = "id, session_id, checkpoint_id, revision, sha256, relative_path, base_sha256, status, error_code, resolved_by, created_at";

fn publication_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Result<PublicationRecord>> {
    let t = "publication_approvals";
    let (status, code, by): (String, Option<String>, Option<String>) =
        (r.get(7)?, r.get(8)?, r.get(9)?);
    let mut record = PublicationRecord {
        id: r.id(0)?,
        session_id: r.id(1)?,
        checkpoint_id: CheckpointId(r.get(2)?),
        revision: r.get(3)?,
        sha256: r.get(4)?,
        relative_path: r.get(5)?,
        base_sha256: r.get(6)?,
        status: planhost_core::PublicationStatus::Pending,
        error_code: None,
        resolved_by: None,
        created_at: planhost_core::Timestamp(r.get(10)?),
    };
    Ok((|| {
        record.status = parse(t, status)?;
        record.error_code = code.map(|c| parse(t, c)).transpose()?;
        record.resolved_by = crate::records::resolver(t, by)?;
        Ok(record)
    })())
}

fn list(json: Option<String>) -> Result<Option<Vec<String>>> {
    json.map(|j| serde_json::from_str(&j).map_err(|e| crate::error::corrupt("plan_identities", e)))
        .transpose()
}

impl Tx<'_> {
    /// The session's plan identity, created on first use with a fresh plan id.
    pub(crate) fn identity(&self, session_id: &SessionId) -> Result<PlanIdentity> {
        self.session(session_id)?;
        self.tx
            .prepare_cached(
                "INSERT INTO plan_identities (session_id, plan_id, phase, created_at, updated_at) \
                 VALUES (?1, ?2, 'off', ?3, ?3) ON CONFLICT(session_id) DO NOTHING",
            )?
            .execute(params![session_id.as_str(), self.ids.new_id(), self.now.0])?;
        let row = self
            .tx
            .prepare_cached(
                "SELECT plan_id, phase, published_path, published_sha256, published_revision, session_name, \
                 tool_baseline, tool_applied, tool_conflict, handoff_checkpoint, handoff_token, handoff_restarted \
                 FROM plan_identities WHERE session_id = ?1",
            )?
            .query_row([session_id.as_str()], |r| {
                Ok((
                    r.id::<PlanId>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, Option<String>>(2)?,
                    r.get::<_, Option<String>>(3)?,
                    r.get::<_, Option<i64>>(4)?,
                    r.get::<_, Option<String>>(5)?,
                    r.get::<_, Option<String>>(6)?,
                    r.get::<_, Option<String>>(7)?,
                    r.get::<_, i64>(8)?,
                    r.get::<_, Option<i64>>(9)?,
                    r.get::<_, Option<String>>(10)?,
                    r.get::<_, i64>(11)?,
                ))
            })?;
        Ok(PlanIdentity {
            session_id: session_id.clone(),
            plan_id: row.0,
            phase: parse("plan_identities", row.1)?,
            published_path: row.2,
            published_sha256: row.3,
            published_revision: row.4,
            session_name: row.5,
            tool_baseline: list(row.6)?,
            tool_applied: list(row.7)?,
            tool_conflict: row.8 != 0,
            handoff_checkpoint: row.9.map(CheckpointId),
            handoff_token: row.10,
            handoff_restarted: row.11 != 0,
        })
    }

    pub(crate) fn checkpoint_refs(&self, session_id: &SessionId) -> Result<Vec<CheckpointRef>> {
        let mut stmt = self.tx.prepare_cached(
            "SELECT id, anchor, revision, sha256 FROM plan_checkpoints WHERE session_id = ?1",
        )?;
        let rows = stmt.query_map([session_id.as_str()], |r| {
            Ok(CheckpointRef {
                id: CheckpointId(r.get(0)?),
                anchor: r.id(1)?,
                revision: r.get(2)?,
                sha256: r.get(3)?,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    pub(crate) fn checkpoint(&self, id: CheckpointId) -> Result<CheckpointRecord> {
        let sql = format!("SELECT {CHECKPOINT_COLUMNS} FROM plan_checkpoints WHERE id = ?1");
        self.tx
            .prepare_cached(&sql)?
            .query_row([id.0], checkpoint_from_row)
            .optional()?
            .ok_or_else(|| crate::error::corrupt("plan_checkpoints", format!("no checkpoint {id}")))
    }

    pub(crate) fn latest(
        &self,
        session_id: &SessionId,
        branch_path: &[EntryId],
    ) -> Result<Option<CheckpointRecord>> {
        let refs = self.checkpoint_refs(session_id)?;
        latest_on_branch(&refs, branch_path)
            .map(|c| self.checkpoint(c.id))
            .transpose()
    }

    /// Entering Plan mode starts the handoff's planning phase (seed 004), in the transaction
    /// that enters it; a phase the step does not apply to is left as it is.
    pub(crate) fn handoff_enter(&mut self, session_id: &SessionId) -> Result<()> {
        let identity = self.identity(session_id)?;
        let phase = handoff_next(identity.phase, HandoffStep::Enter, ToolsConflict::None)
            .unwrap_or(identity.phase);
        if phase != identity.phase {
            self.set_phase(session_id, phase)?;
            self.emit(session_id, EventBody::HandoffChanged { phase })?;
        }
        Ok(())
    }

    fn set_phase(&mut self, session_id: &SessionId, phase: HandoffPhase) -> Result<()> {
        self.tx
            .prepare_cached(
                "UPDATE plan_identities SET phase = ?2, updated_at = ?3 WHERE session_id = ?1",
            )?
            .execute(params![session_id.as_str(), phase.as_str(), self.now.0])?;
        Ok(())
    }
}

fn require_branch(branch_path: &[EntryId]) -> Result<&EntryId> {
    branch_path
        .last()
        .filter(|leaf| !leaf.as_str().is_empty())
        .ok_or(StoreError::BranchInvalid)
}

impl Store {
    /// Saves a complete snapshot (never a patch). Drafts name the revision they last saw
    /// (`expected`); captures take the next one, and a capture offered again returns the
    /// existing checkpoint without storing anything.
    pub fn save_checkpoint(
        &mut self,
        session_id: &SessionId,
        branch_path: &[EntryId],
        markdown: &str,
        expected: Option<i64>,
        source: CheckpointSource,
        capture: Option<&CaptureBinding>,
    ) -> Result<SavedCheckpoint> {
        let anchor = require_branch(branch_path)?.clone();
        planhost_core::SubmitPlanInput {
            title: "checkpoint".into(),
            markdown: markdown.into(),
            question: String::new(),
        }
        .validate()?;
        self.transact(|t| {
            t.save_checkpoint_in(
                session_id,
                branch_path,
                &anchor,
                markdown,
                expected,
                source,
                capture,
            )
        })
    }

    /// The newest checkpoint on the branch and its exact bytes.
    pub fn latest_checkpoint(
        &mut self,
        session_id: &SessionId,
        branch_path: &[EntryId],
    ) -> Result<Option<(CheckpointRecord, String)>> {
        self.read(|t| {
            t.session(session_id)?;
            let Some(record) = t.latest(session_id, branch_path)? else {
                return Ok(None);
            };
            let bytes = blobs::get(&t.tx, &record.sha256)?;
            let text =
                String::from_utf8(bytes).map_err(|e| crate::error::corrupt("plan_blobs", e))?;
            Ok(Some((record, text)))
        })
    }

    /// The exact bytes of one checkpoint.
    pub fn checkpoint_bytes(&mut self, id: CheckpointId) -> Result<(CheckpointRecord, Vec<u8>)> {
        self.read(|t| {
            let record = t.checkpoint(id)?;
            let bytes = blobs::get(&t.tx, &record.sha256)?;
            Ok((record, bytes))
        })
    }

    /// Records that a person was shown checkpoint `id` of `session_id`, whose exact bytes have
    /// `sha256`. Every showing is kept.
    pub fn checkpoint_seen(
        &mut self,
        session_id: &SessionId,
        id: CheckpointId,
        sha256: &str,
        by: &planhost_core::Resolver,
    ) -> Result<CheckpointRecord> {
        let by_json = serde_json::to_string(by).unwrap_or_default();
        self.transact(|t| {
            t.session(session_id)?;
            let sql = format!("SELECT {CHECKPOINT_COLUMNS} FROM plan_checkpoints WHERE id = ?1");
            let record =
                t.tx.prepare_cached(&sql)?
                    .query_row([id.0], checkpoint_from_row)
                    .optional()?
                    .filter(|r| r.session_id == *session_id)
                    .ok_or_else(|| {
                        StoreError::CheckpointNotFound(format!(
                            "session {session_id} has no checkpoint {id}"
                        ))
                    })?;
            if record.sha256 != sha256 {
                return Err(StoreError::CheckpointNotFound(format!(
                    "checkpoint {id} holds SHA-256 {}, not {sha256}",
                    record.sha256
                )));
            }
            t.tx.prepare_cached(
                "INSERT INTO plan_checkpoint_views (checkpoint_id, session_id, seen_at, seen_by) \
                 VALUES (?1, ?2, ?3, ?4)",
            )?
            .execute(params![id.0, session_id.as_str(), t.now.0, by_json])?;
            t.audit(
                AuditSubject {
                    session_id: Some(session_id),
                    ..AuditSubject::default()
                },
                planhost_core::AuditAction::PlanCheckpointSeen,
                &serde_json::json!({ "checkpointId": id, "revision": record.revision,
                                     "sha256": sha256, "by": by }),
            )?;
            Ok(CheckpointRecord {
                seen_at: Some(t.now.0),
                seen_by: Some(by.clone()),
                ..record
            })
        })
    }

    /// The checkpoint of the session a person was shown last at or before `at`, with that
    /// showing and its exact bytes; `None` when there is none or when it holds `other_than`
    /// (the person already read exactly that text).
    pub fn last_seen_checkpoint(
        &mut self,
        session_id: &SessionId,
        at: i64,
        other_than: &str,
    ) -> Result<Option<(CheckpointRecord, Vec<u8>)>> {
        self.read(|t| {
            let view = t
                .tx
                .prepare_cached(
                    "SELECT checkpoint_id, seen_at, seen_by FROM plan_checkpoint_views \
                     WHERE session_id = ?1 AND seen_at <= ?2 ORDER BY seen_at DESC, id DESC LIMIT 1",
                )?
                .query_row(params![session_id.as_str(), at], |r| {
                    Ok((CheckpointId(r.get(0)?), r.get::<_, i64>(1)?, r.get::<_, String>(2)?))
                })
                .optional()?;
            let Some((id, seen_at, seen_by)) = view else {
                return Ok(None);
            };
            let record = t.checkpoint(id)?;
            if record.sha256 == other_than {
                return Ok(None);
            }
            let seen_by = crate::records::resolver("plan_checkpoint_views", Some(seen_by))?;
            let bytes = blobs::get(&t.tx, &record.sha256)?;
            Ok(Some((
                CheckpointRecord {
                    seen_at: Some(seen_at),
                    seen_by,
                    ..record
                },
                bytes,
            )))
        })
    }

    /// The session's plan identity (created on first use).
    pub fn plan_identity(&mut self, session_id: &SessionId) -> Result<PlanIdentity> {
        self.transact(|t| t.identity(session_id))
    }

    /// Stored bytes of every plan body, for the storage benchmark.
    pub fn blob_bytes(&mut self) -> Result<i64> {
        self.read(|t| {
            Ok(t.tx.query_row(
                "SELECT coalesce(sum(length(data)), 0) FROM plan_blobs",
                [],
                |r| r.get(0),
            )?)
        })
    }
}

impl Tx<'_> {
    /// Saves a checkpoint inside the caller's transaction (see [`Store::save_checkpoint`]).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn save_checkpoint_in(
        &mut self,
        session_id: &SessionId,
        branch_path: &[EntryId],
        anchor: &EntryId,
        markdown: &str,
        expected: Option<i64>,
        source: CheckpointSource,
        capture: Option<&CaptureBinding>,
    ) -> Result<SavedCheckpoint> {
        let t = self;
        let session = t.session(session_id)?;
        if session.mode != Mode::Plan {
            return Err(CoreError::PlanModeNotActive.into());
        }
        let identity = t.identity(session_id)?;
        if let Some(c) = capture {
            // One persisted entry is one capture: offered again it is the same checkpoint; the
            // same entry with other content is a replay that changed, never a new revision.
            let existing: Option<(CheckpointId, String)> =
                t.tx.prepare_cached(
                    "SELECT id, capture_fingerprint FROM plan_checkpoints \
                     WHERE session_id = ?1 AND capture_entry_id = ?2",
                )?
                .query_row(params![session_id.as_str(), c.entry_id.as_str()], |r| {
                    Ok((CheckpointId(r.get(0)?), r.get(1)?))
                })
                .optional()?;
            match existing {
                Some((id, fingerprint)) if fingerprint == c.fingerprint => {
                    return Ok(SavedCheckpoint {
                        record: t.checkpoint(id)?,
                        created: false,
                        stored: Stored {
                            encoding: "raw",
                            stored_bytes: 0,
                        },
                    });
                }
                Some(_) => return Err(StoreError::CaptureEntryChanged(c.entry_id.clone())),
                None => {}
            }
        }
        let refs = t.checkpoint_refs(session_id)?;
        let current = latest_on_branch(&refs, branch_path);
        let revision = match expected {
            Some(expected) => next_revision(current, expected)?,
            None => current.map_or(1, |c| c.revision + 1),
        };
        let (sha, stored) = blobs::put(
            &t.tx,
            markdown.as_bytes(),
            current.map(|c| c.sha256.as_str()),
        )?;
        let size = i64::try_from(markdown.len())
            .map_err(|e| crate::error::corrupt("plan_checkpoints", e))?;
        t.tx.prepare_cached(
            "INSERT INTO plan_checkpoints (session_id, revision, anchor, sha256, size_bytes, source, \
             capture_entry_id, capture_fingerprint, capture_block, capture_start, capture_end, created_at) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
        )?
        .execute(params![
            session_id.as_str(),
            revision,
            anchor.as_str(),
            sha,
            size,
            source.as_str(),
            capture.map(|c| c.entry_id.as_str()),
            capture.map(|c| &c.fingerprint),
            capture.map(|c| c.block_index),
            capture.map(|c| c.start),
            capture.map(|c| c.end),
            t.now.0,
        ])?;
        let id = CheckpointId(t.tx.last_insert_rowid());
        // A changed checkpoint requires exact reapproval (seed 003).
        t.revoke_pending_publications(session_id, planhost_core::ErrorCode::CheckpointChanged)?;
        let phase = handoff_next(identity.phase, HandoffStep::Ready, ToolsConflict::None)
            .unwrap_or(identity.phase);
        t.set_phase(session_id, phase)?;
        let subject = AuditSubject {
            session_id: Some(session_id),
            ..AuditSubject::default()
        };
        t.audit(
            subject,
            planhost_core::AuditAction::PlanCheckpoint,
            &json!({ "revision": revision, "sha256": sha, "anchor": anchor, "source": source,
                     "encoding": stored.encoding, "storedBytes": stored.stored_bytes }),
        )?;
        t.emit(
            session_id,
            EventBody::CheckpointSaved {
                revision,
                sha256: sha.clone(),
                anchor: anchor.clone(),
            },
        )?;
        Ok(SavedCheckpoint {
            record: t.checkpoint(id)?,
            created: true,
            stored,
        })
    }
}

mod publication;
pub use publication::StatusChange;
pub(crate) mod steering;

//! The approval broker (seed 000 §5–6): insert after the artifact exists, resolve atomically,
//! expire by deadline.

use planhost_core::{
    ApprovalAction, ApprovalStatus, BatchPosition, CoreError, EntryId, ErrorCode, ExecutionId,
    ProposalId, Resolution, ResolveRequest, SessionId, SubmitDecision, SubmitPlanInput, Timestamp,
    ToolCallId, TurnId,
};
use rusqlite::{OptionalExtension, params};
use serde_json::json;

use crate::records::{APPROVAL_COLUMNS, ApprovalRecord, approval_from_row};
use crate::tx::{AuditSubject, approval_view};
use crate::{Result, Store, StoreError};

/// Where SubmitPlan was called.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubmitContext {
    /// Session.
    pub session_id: SessionId,
    /// The active turn.
    pub turn_id: TurnId,
    /// The SubmitPlan tool call.
    pub tool_call_id: ToolCallId,
    /// Its place in the assistant batch.
    pub batch: BatchPosition,
}

/// The artifact the host wrote before asking for the row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArtifactRef {
    /// `.pi/plan/<unique>.md`.
    pub relative_path: String,
    /// SHA-256 of the exact bytes.
    pub sha256: String,
    /// Byte size.
    pub size_bytes: u64,
}

impl Store {
    /// Checks a SubmitPlan without writing anything; the host calls it before the artifact write.
    pub fn check_submit(
        &mut self,
        ctx: &SubmitContext,
        input: &SubmitPlanInput,
    ) -> Result<SubmitDecision> {
        let now = self.clock.now();
        self.read(|t| {
            let view = t.view(&ctx.session_id)?;
            Ok(planhost_core::submit_plan(
                &view,
                &ctx.turn_id,
                ctx.batch,
                input,
                now,
            )?)
        })
    }

    /// Records the pending approval for an artifact already on disk. Re-checks every rule in the
    /// same transaction; the deadline is this transaction's clock + 30 minutes.
    pub fn insert_approval(
        &mut self,
        ctx: &SubmitContext,
        input: &SubmitPlanInput,
        artifact: &ArtifactRef,
        proposal_id: &ProposalId,
        checkpoint_branch: Option<&[EntryId]>,
    ) -> Result<ApprovalRecord> {
        let size = i64::try_from(artifact.size_bytes)
            .map_err(|_| CoreError::MarkdownInvalid("is larger than 4 MiB"))?;
        let plan_json =
            serde_json::to_string(input).map_err(|e| crate::error::corrupt("plan_approvals", e))?;
        self.transact(|t| {
            let view = t.view(&ctx.session_id)?;
            let decision = planhost_core::submit_plan(&view, &ctx.turn_id, ctx.batch, input, t.now)?;
            t.tx.prepare_cached(
                "INSERT INTO plan_approvals (request_id, session_id, turn_id, tool_call_id, plan_json, \
                 title, question, status, created_at, updated_at, expires_at, version, \
                 artifact_relative_path, artifact_sha256, artifact_size_bytes) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 'pending', ?8, ?8, ?9, 1, ?10, ?11, ?12)",
            )?
            .execute(params![
                proposal_id.as_str(),
                ctx.session_id.as_str(),
                ctx.turn_id.as_str(),
                ctx.tool_call_id.as_str(),
                plan_json,
                input.title,
                input.question,
                t.now.0,
                decision.expires_at.0,
                artifact.relative_path,
                artifact.sha256,
                size,
            ])?;
            t.set_state(&view, decision.state)?;
            let subject = AuditSubject {
                session_id: Some(&ctx.session_id),
                turn_id: Some(&ctx.turn_id),
                tool_call_id: Some(&ctx.tool_call_id),
                proposal_id: Some(proposal_id),
            };
            t.audit(
                subject,
                planhost_core::AuditAction::ApprovalPending,
                &json!({ "artifact": artifact.relative_path, "sha256": artifact.sha256,
                         "sizeBytes": artifact.size_bytes, "expiresAt": decision.expires_at }),
            )?;
            let record = t.emit_approval(proposal_id)?;
            // DESIGN.md: every way a plan arrives is also a checkpoint revision, in the same
            // transaction as the approval it opens.
            if let Some(branch) = checkpoint_branch {
                let anchor = branch.last().filter(|leaf| !leaf.as_str().is_empty()).ok_or(StoreError::BranchInvalid)?.clone();
                t.save_checkpoint_in(
                    &ctx.session_id,
                    branch,
                    &anchor,
                    &input.markdown,
                    None,
                    crate::CheckpointSource::Submit,
                    None,
                )?;
            }
            Ok(record)
        })
    }

    /// What [`Store::resolve`] would decide for `request` now, without committing anything: the
    /// same one check (`planhost_core::resolve`) on the same rows. The service asks it before an
    /// approval, to check the artifact on disk only for a request that would commit.
    pub fn preview_resolve(&mut self, request: &ResolveRequest) -> Result<Resolution> {
        self.read(|t| {
            let approval = t
                .approval(&request.proposal_id)?
                .ok_or_else(|| CoreError::ApprovalNotFound(request.proposal_id.clone()))?;
            let view = t.view(&approval.session_id)?;
            Ok(planhost_core::resolve(
                &view,
                &approval_view(&approval),
                request,
                t.now,
            )?)
        })
    }

    /// Resolves a pending approval. Approve is the single transaction of §6; reject records no
    /// permission mode; a request at or past the deadline records `expired` and returns
    /// [`CoreError::ApprovalTimeout`]. A mismatched identity changes nothing.
    pub fn resolve(
        &mut self,
        request: &ResolveRequest,
        feedback: Option<&str>,
        new_execution_id: &ExecutionId,
        by: &planhost_core::Resolver,
    ) -> Result<ApprovalRecord> {
        // Feedback is a note for the agent after a rejection; an approval carries none, and
        // silently dropping it would tell the person it was delivered.
        if request.action == ApprovalAction::Approve && feedback.is_some() {
            return Err(CoreError::ResolveInvalid("feedback is only given with a reject").into());
        }
        let resolved_by = serde_json::to_string(by).unwrap_or_default();
        let outcome = self.transact(|t| {
            let approval = t
                .approval(&request.proposal_id)?
                .ok_or_else(|| CoreError::ApprovalNotFound(request.proposal_id.clone()))?;
            if approval.session_id != request.session_id {
                return Err(CoreError::ApprovalStale { field: "sessionId" }.into());
            }
            let view = t.view(&approval.session_id)?;
            let resolution =
                planhost_core::resolve(&view, &approval_view(&approval), request, t.now)?;
            let now = t.now.0;
            let subject = AuditSubject {
                session_id: Some(&approval.session_id),
                turn_id: Some(&approval.turn_id),
                tool_call_id: Some(&approval.tool_call_id),
                proposal_id: Some(&approval.proposal_id),
            };
            let timed_out = match &resolution {
                Resolution::Approve {
                    state,
                    permission_mode,
                    target,
                } => {
                    t.tx.prepare_cached(
                        "UPDATE plan_approvals SET status = 'approved', action = 'approve', \
                         target_permission_mode = ?2, resolved_at = ?3, updated_at = ?3, \
                         version = version + 1, execution_id = ?4, execution_state = 'queued', \
                         resolved_by = ?5 WHERE request_id = ?1 AND status = 'pending'",
                    )?
                    .execute(params![
                        approval.proposal_id.as_str(),
                        target.as_str(),
                        now,
                        new_execution_id.as_str(),
                        resolved_by
                    ])?;
                    t.tx.prepare_cached(
                        "UPDATE sessions SET permission_mode = ?2, updated_at = ?3 WHERE id = ?1",
                    )?
                    .execute(params![
                        approval.session_id.as_str(),
                        permission_mode.as_str(),
                        now
                    ])?;
                    t.set_state(&view, *state)?;
                    t.audit(
                        subject,
                        planhost_core::AuditAction::ApprovalApproved,
                        &json!({ "targetPermissionMode": target, "executionId": new_execution_id, "by": by }),
                    )?;
                    false
                }
                Resolution::Reject { state } => {
                    t.tx.prepare_cached(
                        "UPDATE plan_approvals SET status = 'rejected', action = 'reject', \
                         feedback = ?2, resolved_at = ?3, updated_at = ?3, version = version + 1, \
                         resolved_by = ?4 WHERE request_id = ?1 AND status = 'pending'",
                    )?
                    .execute(params![approval.proposal_id.as_str(), feedback, now, resolved_by])?;
                    t.set_state(&view, *state)?;
                    t.audit(
                        subject,
                        planhost_core::AuditAction::ApprovalRejected,
                        &json!({ "feedback": feedback, "by": by }),
                    )?;
                    false
                }
                Resolution::Expire { state } => {
                    expire_row(t, &approval, *state)?;
                    let action = match request.action {
                        ApprovalAction::Approve => "approve",
                        ApprovalAction::Reject => "reject",
                    };
                    t.audit(
                        subject,
                        planhost_core::AuditAction::ApprovalExpired,
                        &json!({ "code": ErrorCode::PlanApprovalTimeout, "lateAction": action, "by": by }),
                    )?;
                    true
                }
            };
            t.emit_approval(&approval.proposal_id)?;
            let record = t.emit_execution(&approval.proposal_id)?;
            Ok((record, timed_out))
        })?;
        match outcome {
            (_, true) => Err(StoreError::Core(CoreError::ApprovalTimeout)),
            (record, false) => Ok(record),
        }
    }

    /// Expires every pending approval whose deadline has passed; the timer calls this.
    pub fn expire_due(&mut self) -> Result<Vec<ApprovalRecord>> {
        self.transact(|t| {
            let sql = format!(
                "SELECT {APPROVAL_COLUMNS} FROM plan_approvals WHERE status = 'pending' AND expires_at <= ?1"
            );
            let due: Vec<ApprovalRecord> = t
                .tx
                .prepare(&sql)?
                .query_map([t.now.0], approval_from_row)?
                .map(|r| r?)
                .collect::<Result<_>>()?;
            let mut expired = Vec::with_capacity(due.len());
            for approval in due {
                let Some(state) = planhost_core::expire(&approval_view(&approval), t.now) else {
                    continue;
                };
                expire_row(t, &approval, state)?;
                let subject = AuditSubject {
                    session_id: Some(&approval.session_id),
                    turn_id: Some(&approval.turn_id),
                    tool_call_id: Some(&approval.tool_call_id),
                    proposal_id: Some(&approval.proposal_id),
                };
                t.audit(subject, planhost_core::AuditAction::ApprovalExpired, &json!({ "code": ErrorCode::PlanApprovalTimeout }))?;
                expired.push(t.emit_approval(&approval.proposal_id)?);
            }
            Ok(expired)
        })
    }

    /// The earliest deadline among pending approvals; the timer sleeps until it.
    pub fn next_deadline(&mut self) -> Result<Option<Timestamp>> {
        self.read(|t| {
            Ok(t.tx
                .prepare_cached(
                    "SELECT min(expires_at) FROM plan_approvals WHERE status = 'pending'",
                )?
                .query_row([], |r| r.get::<_, Option<i64>>(0))?
                .map(Timestamp))
        })
    }

    /// One approval by proposal id.
    pub fn approval(&mut self, proposal_id: &ProposalId) -> Result<ApprovalRecord> {
        self.read(|t| {
            t.approval(proposal_id)?
                .ok_or_else(|| CoreError::ApprovalNotFound(proposal_id.clone()).into())
        })
    }

    /// Approvals, newest first; only pending ones when `filter` says so.
    pub fn approvals(&mut self, filter: ApprovalFilter) -> Result<Vec<ApprovalRecord>> {
        self.read(|t| {
            let condition = match filter {
                ApprovalFilter::All => "1 = 1",
                ApprovalFilter::Pending => "status = 'pending'",
            };
            let sql = format!(
                "SELECT {APPROVAL_COLUMNS} FROM plan_approvals WHERE {condition} \
                 ORDER BY created_at DESC, request_id DESC"
            );
            let mut stmt = t.tx.prepare(&sql)?;
            let rows = stmt.query_map([], approval_from_row)?;
            rows.map(|r| r?).collect()
        })
    }

    /// The exact submitted SubmitPlan input, as stored in `plan_json`.
    pub fn submitted_plan(&mut self, proposal_id: &ProposalId) -> Result<SubmitPlanInput> {
        self.read(|t| {
            let json: String =
                t.tx.prepare_cached("SELECT plan_json FROM plan_approvals WHERE request_id = ?1")?
                    .query_row([proposal_id.as_str()], |r| r.get(0))
                    .optional()?
                    .ok_or_else(|| CoreError::ApprovalNotFound(proposal_id.clone()))?;
            serde_json::from_str(&json).map_err(|e| crate::error::corrupt("plan_approvals", e))
        })
    }
}

/// Which executions an [`ApprovalQuery`] wants.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ExecutionFilter {
    /// Any row, with or without an execution.
    #[default]
    Any,
    /// Only rows whose execution is queued or running.
    Live,
    /// Only rows whose execution completed or was interrupted.
    Finished,
}

impl ExecutionFilter {
    fn code(self) -> i64 {
        match self {
            ExecutionFilter::Any => 0,
            ExecutionFilter::Live => 1,
            ExecutionFilter::Finished => 2,
        }
    }
}

/// Which approvals to list: every condition given must hold.
#[derive(Debug, Clone, Copy, Default)]
pub struct ApprovalQuery<'a> {
    /// Only this session's.
    pub session_id: Option<&'a SessionId>,
    /// Only these statuses.
    pub statuses: Option<&'a [ApprovalStatus]>,
    /// Only rows whose execution is in this phase.
    pub execution: ExecutionFilter,
    /// At most this many, newest first (0 is no limit).
    pub limit: usize,
}

impl Store {
    /// Approvals matching `query`, newest first.
    pub fn approvals_matching(&mut self, query: &ApprovalQuery<'_>) -> Result<Vec<ApprovalRecord>> {
        let statuses = query.statuses.map(|s| {
            serde_json::to_string(&s.iter().map(|v| v.as_str()).collect::<Vec<_>>())
                .unwrap_or_else(|_| "[]".into())
        });
        let limit = if query.limit == 0 {
            -1
        } else {
            i64::try_from(query.limit).unwrap_or(-1)
        };
        self.read(|t| {
            let sql = format!(
                "SELECT {APPROVAL_COLUMNS} FROM plan_approvals \
                 WHERE (?1 IS NULL OR session_id = ?1) \
                 AND (?2 IS NULL OR status IN (SELECT value FROM json_each(?2))) \
                 AND (?3 = 0 OR (?3 = 1 AND execution_state IN ('queued', 'running')) \
                      OR (?3 = 2 AND execution_state IN ('completed', 'interrupted'))) \
                 ORDER BY created_at DESC, request_id DESC LIMIT ?4"
            );
            let mut stmt = t.tx.prepare_cached(&sql)?;
            let rows = stmt.query_map(
                params![
                    query.session_id.map(SessionId::as_str),
                    statuses,
                    query.execution.code(),
                    limit
                ],
                approval_from_row,
            )?;
            rows.map(|r| r?).collect()
        })
    }
}

/// Which approvals to list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApprovalFilter {
    /// Every row.
    All,
    /// Only `pending`.
    Pending,
}

fn expire_row(
    t: &mut crate::tx::Tx<'_>,
    approval: &ApprovalRecord,
    state: planhost_core::SessionState,
) -> Result<()> {
    t.tx.prepare_cached(
        "UPDATE plan_approvals SET status = ?2, error_code = ?3, resolved_at = ?4, updated_at = ?4, \
         version = version + 1 WHERE request_id = ?1 AND status = 'pending'",
    )?
    .execute(params![
        approval.proposal_id.as_str(),
        ApprovalStatus::Expired.as_str(),
        ErrorCode::PlanApprovalTimeout.as_str(),
        t.now.0
    ])?;
    let view = t.view(&approval.session_id)?;
    t.set_state(&view, state)
}

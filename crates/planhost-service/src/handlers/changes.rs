//! `plans.changes` (what changed in a plan, from what a person knew before it) and
//! `plans.orphans` (plan files no approval points to): read models every face shows alike.
//!
//! Both read on the engine's thread only what the store holds, then do the slow part (the diff,
//! the directory listings) on a blocking thread, so no client's request waits behind them. One
//! diff runs at a time, and a diff once made is kept: plans and checkpoints never change.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::{Arc, Mutex, PoisonError};

use planhost_protocol::{
    ChangeBase, ChangeBaseKind, LineDiff, OrphanArtifact, OrphanArtifacts, PlanChanges,
    ProposalRef, UnreadableWorkspace,
};
use planhost_store::{ApprovalQuery, ExecutionFilter};
use tokio::sync::Semaphore;

use super::plans::resolve_proposal_id;
use crate::service::Inner;
use crate::{Result, ServiceError, convert};

/// Diffs kept.
const KEPT: usize = 32;

/// A diff's key: the SHA-256 of its base and of its plan.
type DiffKey = (String, String);

/// The diffs made, by the SHA-256 of their two texts; and the one permit to make a new one.
#[derive(Debug)]
pub(crate) struct Diffs {
    kept: Mutex<VecDeque<(DiffKey, Arc<LineDiff>)>>,
    one_at_a_time: Semaphore,
}

impl Default for Diffs {
    fn default() -> Self {
        Self {
            kept: Mutex::new(VecDeque::with_capacity(KEPT)),
            one_at_a_time: Semaphore::new(1),
        }
    }
}

impl Diffs {
    fn kept(&self, key: &DiffKey) -> Option<Arc<LineDiff>> {
        let kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        kept.iter()
            .find(|(k, _)| k == key)
            .map(|(_, d)| Arc::clone(d))
    }

    fn keep(&self, key: DiffKey, diff: Arc<LineDiff>) {
        let mut kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        if kept.len() == KEPT {
            kept.pop_front();
        }
        kept.push_back((key, diff));
    }

    /// The diff `key` names: kept, or made from the texts `load` reads (only then) off the
    /// protocol's threads.
    async fn diff<F>(&self, key: DiffKey, load: F) -> Result<Arc<LineDiff>>
    where
        F: Future<Output = Result<(Arc<str>, Arc<str>)>>,
    {
        if let Some(diff) = self.kept(&key) {
            return Ok(diff);
        }
        let _permit = self
            .one_at_a_time
            .acquire()
            .await
            .map_err(|_| ServiceError::Stopped)?;
        // Another request may have made it while this one waited.
        if let Some(diff) = self.kept(&key) {
            return Ok(diff);
        }
        let (base, plan) = load.await?;
        let diff = tokio::task::spawn_blocking(move || crate::diff::line_diff(&base, &plan))
            .await
            .map_err(|e| ServiceError::Internal(format!("the diff failed: {e}")))?;
        let diff = Arc::new(diff);
        self.keep(key, Arc::clone(&diff));
        Ok(diff)
    }
}

/// A base read from the store, before its diff. Only the SHA-256 is needed to find a kept
/// diff: a plan's text is read only when its diff has to be made.
struct Base {
    kind: ChangeBaseKind,
    proposal_id: Option<planhost_core::ProposalId>,
    checkpoint: Option<planhost_protocol::CheckpointInfo>,
    known_at: planhost_core::Timestamp,
    sha256: String,
    text: BaseText,
}

/// Where a base's text is.
enum BaseText {
    /// A checkpoint's, read with its record.
    Read(Arc<str>),
    /// A previous plan's, read only when its diff has to be made.
    Plan(planhost_core::ProposalId),
}

/// A submitted plan's exact text.
async fn plan_text(svc: &Inner, proposal_id: planhost_core::ProposalId) -> Result<Arc<str>> {
    svc.engine(move |e| Ok(e.store().submitted_plan(&proposal_id)?.markdown.into()))
        .await
}

pub(crate) async fn changes(svc: &Inner, p: ProposalRef) -> Result<PlanChanges> {
    let (proposal_id, plan_sha256, mut bases) = svc
        .engine(move |e| {
            let id = resolve_proposal_id(e, &p.proposal_id)?;
            let a = e.store().approval(&id)?;
            let mut bases = Vec::new();
            let earlier = e
                .store()
                .approvals_matching(&ApprovalQuery {
                    session_id: Some(&a.session_id),
                    statuses: None,
                    execution: ExecutionFilter::Any,
                    limit: 0,
                })?
                .into_iter()
                // Newest first, ties broken by the time-ordered id: the one after this plan.
                .skip_while(|b| b.proposal_id != a.proposal_id)
                .nth(1);
            if let Some(b) = earlier {
                bases.push(Base {
                    kind: ChangeBaseKind::Previous,
                    sha256: b.artifact_sha256,
                    text: BaseText::Plan(b.proposal_id.clone()),
                    proposal_id: Some(b.proposal_id),
                    checkpoint: None,
                    known_at: b.created_at,
                });
            }
            if let Some((c, bytes)) = super::plans::last_seen(e, &a)
                && let Some(at) = c.seen_at
            {
                bases.push(Base {
                    kind: ChangeBaseKind::Seen,
                    proposal_id: None,
                    known_at: planhost_core::Timestamp(at),
                    sha256: c.sha256.clone(),
                    // Checkpoints are stored from UTF-8 text; anything else is not a plan.
                    text: BaseText::Read(String::from_utf8_lossy(&bytes).into()),
                    checkpoint: Some(convert::checkpoint(c)),
                });
            }
            Ok((id, a.artifact_sha256, bases))
        })
        .await?;
    // The one the person knew last comes first; the same text twice is one base.
    bases.sort_by_key(|b| std::cmp::Reverse(b.known_at));
    bases.dedup_by(|later, earlier| later.sha256 == earlier.sha256);
    // The plan's own text, read at most once, and only when a diff has to be made.
    let plan = tokio::sync::OnceCell::new();
    let mut out = Vec::with_capacity(bases.len());
    for base in bases {
        let key = (base.sha256.clone(), plan_sha256.clone());
        let load = async {
            let text = match &base.text {
                BaseText::Read(text) => Arc::clone(text),
                BaseText::Plan(previous) => plan_text(svc, previous.clone()).await?,
            };
            let current = plan
                .get_or_try_init(|| plan_text(svc, proposal_id.clone()))
                .await?;
            Ok((text, Arc::clone(current)))
        };
        let diff = svc.diffs.diff(key, load).await?;
        out.push(ChangeBase {
            kind: base.kind,
            proposal_id: base.proposal_id,
            checkpoint: base.checkpoint,
            known_at: base.known_at,
            diff: LineDiff::clone(&diff),
        });
    }
    Ok(PlanChanges {
        proposal_id,
        bases: out,
    })
}

pub(crate) async fn orphans(svc: &Inner) -> Result<OrphanArtifacts> {
    // Every session's workspace, with the artifacts its approvals point to.
    let known = svc
        .engine(|e| {
            let mut known: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
            let mut roots = BTreeMap::new();
            for s in e.store().sessions()? {
                known.entry(s.workspace_root.clone()).or_default();
                roots.insert(s.id, s.workspace_root);
            }
            let all = e.store().approvals_matching(&ApprovalQuery {
                session_id: None,
                statuses: None,
                execution: ExecutionFilter::Any,
                limit: 0,
            })?;
            for a in all {
                if let Some(root) = roots.get(&a.session_id) {
                    known
                        .entry(root.clone())
                        .or_default()
                        .insert(a.artifact_relative_path);
                }
            }
            Ok(known)
        })
        .await?;
    tokio::task::spawn_blocking(move || {
        let (mut items, mut unreadable) = (Vec::new(), Vec::new());
        for (root, referenced) in known {
            let paths = match planhost_fs::plan_artifact_paths(std::path::Path::new(&root)) {
                Ok(names) => names,
                // A workspace that is gone has no files to compare.
                Err(planhost_fs::FsError::NotFound { .. }) => continue,
                Err(e) => {
                    unreadable.push(UnreadableWorkspace {
                        workspace_root: root,
                        code: e.code(),
                        message: e.to_string(),
                    });
                    continue;
                }
            };
            for relative in paths {
                if !referenced.contains(&relative) {
                    items.push(OrphanArtifact {
                        workspace_root: root.clone(),
                        relative_path: relative,
                    });
                }
            }
        }
        Ok(OrphanArtifacts { items, unreadable })
    })
    .await
    .map_err(|e| ServiceError::Internal(format!("the scan failed: {e}")))?
}

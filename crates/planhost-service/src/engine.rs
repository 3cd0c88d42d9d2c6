//! The engine: the store plus the work that spans adapters (workspace roots, the SubmitPlan
//! artifact, the artifact check before an approval commits, shell pins). It lives on the actor
//! thread; nothing outside this crate reaches its store.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use planhost_core::{
    ApprovalAction, Clock, EntryId, ExecutionId, Interactivity, ProposalId, ResolveRequest,
    Resolver, SessionId, SubmitPlanInput, Timestamp, TurnOrigin,
};
use planhost_fs::ArtifactOnDisk;
use planhost_store::{
    ApprovalRecord, ArtifactRef, FenceReport, MigrationReport, OpenSession, SessionRecord,
    ShellPin, Store, SubmitContext, TurnRecord,
};

use crate::{Result, ServiceError, new_id};

/// The authoritative state over one database.
#[derive(Debug)]
pub(crate) struct Engine {
    store: Store,
}

/// What opening the engine did before it could serve.
#[derive(Debug)]
pub(crate) struct Opened {
    pub(crate) engine: Engine,
    pub(crate) migration: MigrationReport,
    pub(crate) fence: FenceReport,
    pub(crate) reconciled: Vec<planhost_store::PublicationRecord>,
    pub(crate) swept: Vec<PathBuf>,
}

impl Engine {
    /// Opens the database, migrates it, runs the startup fence, and reconciles publications
    /// whose write may have completed before a crash.
    pub(crate) fn open(db_path: &Path, clock: Arc<dyn Clock>) -> Result<Opened> {
        let opened = Store::open(db_path, clock, Arc::new(crate::UuidIds))?;
        let mut engine = Engine {
            store: opened.store,
        };
        // Part of the fence: a publication whose write may have completed before the crash is
        // reconciled against the disk before anything is served, never repeated.
        let reconciled = engine.reconcile_publications()?;
        // Events of the fence were committed before anyone could connect.
        engine.store.take_events();
        let swept = engine.sweep_stale_temps()?;
        Ok(Opened {
            engine,
            migration: opened.migration,
            fence: opened.fence,
            reconciled,
            swept,
        })
    }

    /// Removes the temp files a crash left in the plan and publication directories of every
    /// workspace a session names. A workspace that cannot be swept (gone, unreadable, a symlink
    /// where `.pi` should be) is logged and skipped: it never keeps the host from serving.
    fn sweep_stale_temps(&mut self) -> Result<Vec<PathBuf>> {
        let mut roots: Vec<String> = self
            .store
            .sessions()?
            .into_iter()
            .map(|s| s.workspace_root)
            .collect();
        roots.sort();
        roots.dedup();
        let mut swept = Vec::new();
        for root in roots {
            match planhost_fs::sweep_plan_dirs(Path::new(&root)) {
                Ok(removed) => swept.extend(removed.into_iter().map(|r| Path::new(&root).join(r))),
                Err(planhost_fs::FsError::NotFound { .. }) => {}
                Err(error) => tracing::warn!(%error, root, "cannot sweep crash leftovers"),
            }
        }
        Ok(swept)
    }

    /// The store, for this crate's handlers.
    pub(crate) fn store(&mut self) -> &mut Store {
        &mut self.store
    }

    /// The current time by the host's clock.
    pub(crate) fn now(&self) -> Timestamp {
        self.store.clock().now()
    }

    /// Opens a session for a canonicalised, existing workspace root.
    pub(crate) fn open_session(
        &mut self,
        workspace_root: &Path,
        external_id: Option<&str>,
        interactivity: Interactivity,
        persistence: Option<planhost_core::ClientPersistence>,
        agent: Option<planhost_core::Agent>,
    ) -> Result<SessionRecord> {
        let invalid = |reason: String| ServiceError::WorkspaceInvalid {
            root: workspace_root.display().to_string(),
            reason,
        };
        if !workspace_root.is_absolute() {
            return Err(invalid("not an absolute path".into()));
        }
        let canonical = workspace_root
            .canonicalize()
            .map_err(|e| invalid(e.to_string()))?;
        if !canonical.is_dir() {
            return Err(invalid("not a directory".into()));
        }
        let root = canonical
            .to_str()
            .ok_or_else(|| invalid("not valid UTF-8".into()))?
            .to_owned();
        let request = OpenSession {
            workspace_root: root,
            external_id: external_id.map(str::to_owned),
            interactivity,
            agent,
        };
        let session = self.store.open_session(&request, &new_id().into())?;
        match persistence {
            Some(p) if p != session.client_persistence => {
                Ok(self.store.set_client_persistence(&session.id, p)?)
            }
            Some(_) | None => Ok(session),
        }
    }

    /// Begins a user or scheduled turn with its shell pinned.
    pub(crate) fn begin_turn(
        &mut self,
        session_id: &SessionId,
        origin: TurnOrigin,
        shell: Option<&ShellPin>,
    ) -> Result<TurnRecord> {
        Ok(self
            .store
            .begin_turn(session_id, origin, shell, &new_id().into())?)
    }

    /// SubmitPlan: every rule is checked before the artifact is written; the artifact is written
    /// create-new with its exact bytes; only then is the pending approval row inserted, in one
    /// transaction that checks the rules again (and, given a branch, saves the checkpoint). An
    /// artifact failure leaves no row.
    pub(crate) fn submit_plan(
        &mut self,
        ctx: &SubmitContext,
        input: &SubmitPlanInput,
        branch_path: Option<&[EntryId]>,
    ) -> Result<ApprovalRecord> {
        if branch_path.is_some_and(|b| b.last().is_none_or(|leaf| leaf.as_str().is_empty())) {
            return Err(planhost_store::StoreError::BranchInvalid.into());
        }
        self.store.check_submit(ctx, input)?;
        let session = self.store.session(&ctx.session_id)?;
        let proposal_id = ProposalId::from(new_id());
        let file_name = planhost_core::artifact_file_name(&input.title, &proposal_id);
        let artifact = planhost_fs::write_plan_artifact(
            Path::new(&session.workspace_root),
            session.agent.profile().dirs,
            &file_name,
            input.markdown.as_bytes(),
        )?;
        let artifact = ArtifactRef {
            relative_path: artifact.relative_path,
            sha256: artifact.sha256,
            size_bytes: artifact.size_bytes,
        };
        match self
            .store
            .insert_approval(ctx, input, &artifact, &proposal_id, branch_path)
        {
            Ok(record) => Ok(record),
            Err(error) => {
                // No row points at the file; it is an orphan submission, kept (immutable) and logged.
                tracing::warn!(
                    artifact = %artifact.relative_path,
                    code = %error.code(),
                    "plan artifact written but its approval row was not recorded"
                );
                Err(error.into())
            }
        }
    }

    /// What is at an approval's artifact path now, against what was submitted.
    pub(crate) fn artifact_on_disk(&mut self, approval: &ApprovalRecord) -> Result<ArtifactOnDisk> {
        let root = self.store.session(&approval.session_id)?.workspace_root;
        let size = u64::try_from(approval.artifact_size_bytes).unwrap_or(u64::MAX);
        Ok(planhost_fs::verify_plan_artifact(
            Path::new(&root),
            &approval.artifact_relative_path,
            &approval.artifact_sha256,
            size,
        )?)
    }

    /// Resolves a pending approval; approval queues a fresh execution id. Before an approval
    /// commits, the file the person reviewed must still hold exactly the submitted bytes (DESIGN
    /// decision 8): anything else refuses with `PLAN_ARTIFACT_CHANGED` and changes nothing. A
    /// reject needs no check: it grants nothing.
    pub(crate) fn resolve(
        &mut self,
        request: &ResolveRequest,
        feedback: Option<&str>,
        by: &Resolver,
    ) -> Result<ApprovalRecord> {
        // Only a request the store would otherwise commit is checked: a late, stale or
        // mismatched one gets the store's own answer (expiry recorded, PLAN_APPROVAL_STALE).
        if request.action == ApprovalAction::Approve
            && let Ok(planhost_core::Resolution::Approve { .. }) =
                self.store.preview_resolve(request)
            && let Ok(approval) = self.store.approval(&request.proposal_id)
        {
            match self.artifact_on_disk(&approval)? {
                ArtifactOnDisk::Intact => {}
                found @ (ArtifactOnDisk::Changed { .. }
                | ArtifactOnDisk::Missing
                | ArtifactOnDisk::NotAFile) => {
                    return Err(ServiceError::ArtifactChanged {
                        path: approval.artifact_relative_path,
                        found: describe(&found),
                    });
                }
            }
        }
        Ok(self
            .store
            .resolve(request, feedback, &new_id().into(), by)?)
    }

    /// Claims the queued execution, starting its turn with the shell pinned.
    pub(crate) fn claim_execution(
        &mut self,
        session_id: &SessionId,
        execution_id: &ExecutionId,
        shell: Option<&ShellPin>,
    ) -> Result<TurnRecord> {
        Ok(self
            .store
            .claim_execution(session_id, execution_id, shell, &new_id().into())?)
    }
}

/// What a person is told about an artifact that no longer matches.
pub(crate) fn describe(found: &ArtifactOnDisk) -> String {
    match found {
        ArtifactOnDisk::Intact => "it is intact".into(),
        ArtifactOnDisk::Changed { size_bytes, .. } => {
            format!("it now holds other bytes ({size_bytes} bytes)")
        }
        ArtifactOnDisk::Missing => "it was deleted".into(),
        ArtifactOnDisk::NotAFile => "a symlink or directory replaced it".into(),
    }
}

//! The host service: the store plus the work that spans adapters (ids, workspace roots, the
//! SubmitPlan artifact). Every other operation is the store's own transaction.

use std::path::Path;
use std::sync::Arc;

use planhost_core::{Clock, ResolveRequest, SubmitPlanInput, Timestamp, TurnOrigin};
use planhost_store::{
    ApprovalRecord, ArtifactRef, FenceReport, MigrationReport, OpenSession, SessionRecord,
    ShellPin, Store, SubmitContext, TurnRecord,
};

use crate::{HostError, Result};

/// A new UUID v7 (DESIGN.md decision 5).
pub fn new_id() -> String {
    uuid::Uuid::now_v7().to_string()
}

/// The authoritative host over one state database.
#[derive(Debug)]
pub struct Host {
    store: Store,
}

/// What opening the host did before it could serve.
#[derive(Debug)]
pub struct Startup {
    /// The open host.
    pub host: Host,
    /// Schema creation or migration.
    pub migration: MigrationReport,
    /// What the startup fence interrupted.
    pub fence: FenceReport,
    /// Publication approvals reconciled against the disk at startup.
    pub reconciled: Vec<planhost_store::PublicationRecord>,
}

impl Host {
    /// Opens the database, migrates it and runs the startup fence.
    pub fn open(db_path: &Path, clock: Arc<dyn Clock>) -> Result<Startup> {
        let opened = Store::open(db_path, clock)?;
        let mut host = Host {
            store: opened.store,
        };
        // Part of the fence: a publication whose write may have completed before the crash is
        // reconciled against the disk before anything is served, never repeated.
        let reconciled = host.reconcile_publications()?;
        Ok(Startup {
            host,
            migration: opened.migration,
            fence: opened.fence,
            reconciled,
        })
    }

    /// The store, for operations that need no cross-adapter work.
    pub fn store(&mut self) -> &mut Store {
        &mut self.store
    }

    /// The current time by the host's clock.
    pub fn now(&self) -> Timestamp {
        self.store.clock().now()
    }

    /// Opens a session for a canonicalised, existing workspace root.
    pub fn open_session(
        &mut self,
        workspace_root: &Path,
        external_id: Option<&str>,
        interactivity: planhost_core::Interactivity,
    ) -> Result<SessionRecord> {
        let invalid = |reason: String| HostError::WorkspaceInvalid {
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
        };
        Ok(self.store.open_session(&request, &new_id())?)
    }

    /// Begins a user or scheduled turn with its shell pinned.
    pub fn begin_turn(
        &mut self,
        session_id: &str,
        origin: TurnOrigin,
        shell: Option<&ShellPin>,
    ) -> Result<TurnRecord> {
        Ok(self
            .store
            .begin_turn(session_id, origin, shell, &new_id())?)
    }

    /// SubmitPlan: every rule is checked before the artifact is written; the artifact is written
    /// create-new with its exact bytes; only then is the pending approval row inserted, in one
    /// transaction that checks the rules again. An artifact failure leaves no row.
    pub fn submit_plan(
        &mut self,
        ctx: &SubmitContext,
        input: &SubmitPlanInput,
    ) -> Result<ApprovalRecord> {
        self.submit_plan_on_branch(ctx, input, None)
    }

    /// [`Host::submit_plan`] that also records the plan as a checkpoint revision on the client's
    /// branch, in the approval's transaction.
    pub fn submit_plan_on_branch(
        &mut self,
        ctx: &SubmitContext,
        input: &SubmitPlanInput,
        branch_path: Option<&[String]>,
    ) -> Result<ApprovalRecord> {
        if branch_path.is_some_and(|b| b.last().is_none_or(String::is_empty)) {
            return Err(planhost_store::StoreError::BranchInvalid.into());
        }
        self.store.check_submit(ctx, input)?;
        let session = self.store.session(&ctx.session_id)?;
        let proposal_id = new_id();
        let file_name = artifact_file_name(&input.title, &proposal_id);
        let artifact = planhost_fs::write_plan_artifact(
            Path::new(&session.workspace_root),
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
                    code = error.code(),
                    "plan artifact written but its approval row was not recorded"
                );
                Err(error.into())
            }
        }
    }

    /// Resolves a pending approval; approval queues a fresh execution id.
    pub fn resolve(
        &mut self,
        request: &ResolveRequest,
        feedback: Option<&str>,
    ) -> Result<ApprovalRecord> {
        Ok(self.store.resolve(request, feedback, &new_id())?)
    }

    /// Claims the queued execution, starting its turn with the shell pinned.
    pub fn claim_execution(
        &mut self,
        session_id: &str,
        execution_id: &str,
        shell: Option<&ShellPin>,
    ) -> Result<TurnRecord> {
        Ok(self
            .store
            .claim_execution(session_id, execution_id, shell, &new_id())?)
    }
}

/// `<slug-of-title>-<proposal id>.md`: readable in a file list, unique by the UUID.
pub fn artifact_file_name(title: &str, proposal_id: &str) -> String {
    /// Enough of the title to recognise the plan in a directory listing.
    const MAX_SLUG: usize = 48;
    let mut slug = String::new();
    for c in title.chars() {
        if slug.len() >= MAX_SLUG {
            break;
        }
        if c.is_ascii_alphanumeric() {
            slug.push(c.to_ascii_lowercase());
        } else if !slug.is_empty() && !slug.ends_with('-') {
            slug.push('-');
        }
    }
    let slug = slug.trim_end_matches('-');
    if slug.is_empty() {
        format!("plan-{proposal_id}.md")
    } else {
        format!("{slug}-{proposal_id}.md")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_are_slugged_and_unique_by_id() {
        assert_eq!(
            artifact_file_name("Add OAuth: login & logout!", "id1"),
            "add-oauth-login-logout-id1.md"
        );
        assert_eq!(artifact_file_name("日本語", "id2"), "plan-id2.md");
        assert_eq!(
            artifact_file_name("../../etc/passwd", "id3"),
            "etc-passwd-id3.md"
        );
        let long = artifact_file_name(&"a".repeat(300), "id4");
        assert_eq!(long.len(), 48 + "-id4.md".len());
    }
}

/// The wall clock: what production always uses (DESIGN.md decision 3).
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl planhost_core::Clock for SystemClock {
    fn now(&self) -> Timestamp {
        let ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
        Timestamp(ms)
    }
}

//! A host over a real SQLite file and a real workspace directory, with a manual clock.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use planhost_core::{
    ApprovalAction, BatchPosition, Interactivity, ManualClock, ResolveRequest, SubmitPlanInput,
    TargetPermissionMode, Timestamp, TurnOrigin,
};
use planhost_host::{Host, Startup};
use planhost_store::{ApprovalRecord, FenceReport, Store, SubmitContext};

pub const T0: Timestamp = Timestamp(1_764_460_800_000);
pub const ALONE: BatchPosition = BatchPosition { index: 0, size: 1 };

pub struct Fixture {
    pub state: tempfile::TempDir,
    pub workspace: tempfile::TempDir,
    pub clock: Arc<ManualClock>,
    pub host: Option<Host>,
}

impl Fixture {
    pub fn new() -> Self {
        let state = tempfile::tempdir().unwrap();
        let workspace = tempfile::tempdir().unwrap();
        let clock = Arc::new(ManualClock::new(T0));
        let host = Host::open(&state.path().join("planhost.sqlite"), clock.clone())
            .unwrap()
            .host;
        Self {
            state,
            workspace,
            clock,
            host: Some(host),
        }
    }

    pub fn db(&self) -> PathBuf {
        self.state.path().join("planhost.sqlite")
    }

    /// Closes the host and opens it again on the same files: a restart, fence included.
    pub fn restart(&mut self) -> FenceReport {
        let host = self.host.take();
        drop(host);
        let Startup { host, fence, .. } = Host::open(&self.db(), self.clock.clone()).unwrap();
        self.host = Some(host);
        fence
    }

    pub fn host(&mut self) -> &mut Host {
        self.host.as_mut().unwrap()
    }

    pub fn store(&mut self) -> &mut Store {
        self.host().store()
    }

    pub fn session(&mut self, interactivity: Interactivity) -> String {
        let root = self.workspace.path().to_owned();
        self.host()
            .open_session(&root, None, interactivity)
            .unwrap()
            .id
    }

    pub fn plan_session(&mut self) -> String {
        let id = self.session(Interactivity::Interactive);
        self.store()
            .set_mode(&id, planhost_core::Mode::Plan)
            .unwrap();
        id
    }

    pub fn turn(&mut self, session: &str) -> String {
        self.host()
            .begin_turn(session, TurnOrigin::User, None)
            .unwrap()
            .id
    }

    pub fn submit(
        &mut self,
        session: &str,
        turn: &str,
        markdown: &str,
    ) -> planhost_host::Result<ApprovalRecord> {
        let ctx = ctx(session, turn, "call-1");
        self.host().submit_plan(&ctx, &input(markdown))
    }

    /// Plan mode, a turn, a submitted plan: returns the pending approval.
    pub fn pending(&mut self) -> ApprovalRecord {
        let session = self.plan_session();
        let turn = self.turn(&session);
        let approval = self.submit(&session, &turn, "# Plan\n1. do it\n").unwrap();
        self.store().end_turn(&session, &turn).unwrap();
        approval
    }

    pub fn workspace_root(&self) -> PathBuf {
        self.workspace.path().canonicalize().unwrap()
    }

    pub fn artifact_files(&self) -> Vec<PathBuf> {
        let dir = self.workspace_root().join(".pi/plan");
        match std::fs::read_dir(&dir) {
            Ok(entries) => {
                let mut files: Vec<_> = entries.map(|e| e.unwrap().path()).collect();
                files.sort();
                files
            }
            Err(_) => Vec::new(),
        }
    }

    pub fn dump(&mut self) -> String {
        self.store().dump().unwrap()
    }
}

pub fn ctx(session: &str, turn: &str, call: &str) -> SubmitContext {
    SubmitContext {
        session_id: session.into(),
        turn_id: turn.into(),
        tool_call_id: call.into(),
        batch: ALONE,
    }
}

pub fn input(markdown: &str) -> SubmitPlanInput {
    SubmitPlanInput {
        title: "Add login".into(),
        markdown: markdown.into(),
        question: "Shall I implement this?".into(),
    }
}

pub fn approve(a: &ApprovalRecord, mode: Option<TargetPermissionMode>) -> ResolveRequest {
    ResolveRequest {
        proposal_id: a.proposal_id.clone(),
        session_id: a.session_id.clone(),
        turn_id: a.turn_id.clone(),
        tool_call_id: a.tool_call_id.clone(),
        version: Some(a.version),
        artifact_sha256: Some(a.artifact_sha256.clone()),
        action: ApprovalAction::Approve,
        target_permission_mode: mode,
    }
}

pub fn reject(a: &ApprovalRecord) -> ResolveRequest {
    ResolveRequest {
        action: ApprovalAction::Reject,
        target_permission_mode: None,
        ..approve(a, None)
    }
}

pub fn read(root: &Path, relative: &str) -> Vec<u8> {
    std::fs::read(root.join(relative)).unwrap()
}

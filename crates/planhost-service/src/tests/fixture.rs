//! An engine over a real SQLite file and a real workspace directory, with a manual clock.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use planhost_core::{
    ApprovalAction, BatchPosition, Interactivity, ManualClock, PublicationId, ResolveRequest,
    Resolver, Role, SessionId, SubmitPlanInput, TargetPermissionMode, Timestamp, ToolCallId,
    TurnId, TurnOrigin,
};
use planhost_store::{ApprovalRecord, FenceReport, Store, SubmitContext};

use crate::engine::{Engine, Opened};
use crate::publish::PublishOutcome;

/// 2025-11-30 00:00:00 UTC.
pub(crate) const T0: Timestamp = Timestamp(1_764_460_800_000);
/// [`T0`] as a first publication's name stamps it.
pub(crate) const T0_STAMP: &str = "20251130-000000";
pub(crate) const ALONE: BatchPosition = BatchPosition { index: 0, size: 1 };

/// The person who answers approvals in these tests.
/// Runs `work` to completion on a fresh single-threaded runtime (timers and I/O enabled): how
/// the tests that go through the public `Service` drive it.
pub(crate) fn block_on<F: std::future::Future>(work: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(work)
}

pub(crate) fn person() -> Resolver {
    Resolver {
        client: "planhost-test".into(),
        roles: vec![Role::Approver],
        via: None,
    }
}

pub(crate) struct Fixture {
    pub(crate) state: tempfile::TempDir,
    pub(crate) workspace: tempfile::TempDir,
    pub(crate) clock: Arc<ManualClock>,
    pub(crate) engine: Option<Engine>,
}

impl Fixture {
    pub(crate) fn new() -> Self {
        let state = tempfile::tempdir().unwrap();
        let workspace = tempfile::tempdir().unwrap();
        let clock = Arc::new(ManualClock::new(T0));
        let engine = Engine::open(&state.path().join("planhost.sqlite"), clock.clone())
            .unwrap()
            .engine;
        Self {
            state,
            workspace,
            clock,
            engine: Some(engine),
        }
    }

    pub(crate) fn db(&self) -> PathBuf {
        self.state.path().join("planhost.sqlite")
    }

    /// Closes the engine and opens it again on the same files: a restart, fence included.
    pub(crate) fn restart(&mut self) -> FenceReport {
        let engine = self.engine.take();
        drop(engine);
        let Opened { engine, fence, .. } = Engine::open(&self.db(), self.clock.clone()).unwrap();
        self.engine = Some(engine);
        fence
    }

    pub(crate) fn engine(&mut self) -> &mut Engine {
        self.engine.as_mut().unwrap()
    }

    pub(crate) fn store(&mut self) -> &mut Store {
        self.engine().store()
    }

    /// `engine.resolve` answered by [`person`].
    pub(crate) fn resolve(
        &mut self,
        request: &ResolveRequest,
        feedback: Option<&str>,
    ) -> crate::Result<ApprovalRecord> {
        self.engine().resolve(request, feedback, &person())
    }

    /// `engine.resolve_publication` answered by [`person`].
    pub(crate) fn resolve_publication(
        &mut self,
        id: &PublicationId,
        approve: bool,
    ) -> crate::Result<PublishOutcome> {
        self.engine().resolve_publication(id, approve, &person())
    }

    pub(crate) fn session(&mut self, interactivity: Interactivity) -> SessionId {
        let root = self.workspace.path().to_owned();
        self.engine()
            .open_session(&root, None, interactivity, None, None)
            .unwrap()
            .id
    }

    pub(crate) fn plan_session(&mut self) -> SessionId {
        let id = self.session(Interactivity::Interactive);
        self.store()
            .set_mode(&id, planhost_core::Mode::Plan)
            .unwrap();
        id
    }

    pub(crate) fn turn(&mut self, session: &SessionId) -> TurnId {
        self.engine()
            .begin_turn(session, TurnOrigin::User, None)
            .unwrap()
            .id
    }

    pub(crate) fn submit(
        &mut self,
        session: &SessionId,
        turn: &TurnId,
        markdown: &str,
    ) -> crate::Result<ApprovalRecord> {
        let ctx = ctx(session, turn, &"call-1".into());
        self.engine().submit_plan(&ctx, &input(markdown), None)
    }

    /// Plan mode, a turn, a submitted plan: returns the pending approval.
    pub(crate) fn pending(&mut self) -> ApprovalRecord {
        let session = self.plan_session();
        let turn = self.turn(&session);
        let approval = self.submit(&session, &turn, "# Plan\n1. do it\n").unwrap();
        self.store().end_turn(&session, &turn).unwrap();
        approval
    }

    pub(crate) fn workspace_root(&self) -> PathBuf {
        self.workspace.path().canonicalize().unwrap()
    }

    pub(crate) fn artifact_files(&self) -> Vec<PathBuf> {
        let dir = self.workspace_root().join(".pi/plan");
        match fs_err::read_dir(&dir) {
            Ok(entries) => {
                let mut files: Vec<_> = entries.map(|e| e.unwrap().path()).collect();
                files.sort();
                files
            }
            Err(_) => Vec::new(),
        }
    }

    pub(crate) fn dump(&mut self) -> String {
        self.store().dump().unwrap()
    }
}

pub(crate) fn ctx(session: &SessionId, turn: &TurnId, call: &ToolCallId) -> SubmitContext {
    SubmitContext {
        session_id: session.clone(),
        turn_id: turn.clone(),
        tool_call_id: call.clone(),
        batch: ALONE,
    }
}

pub(crate) fn input(markdown: &str) -> SubmitPlanInput {
    SubmitPlanInput {
        title: "Add login".into(),
        markdown: markdown.into(),
        question: "Shall I implement this?".into(),
    }
}

pub(crate) fn approve(a: &ApprovalRecord, mode: Option<TargetPermissionMode>) -> ResolveRequest {
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

pub(crate) fn reject(a: &ApprovalRecord) -> ResolveRequest {
    ResolveRequest {
        action: ApprovalAction::Reject,
        target_permission_mode: None,
        ..approve(a, None)
    }
}

pub(crate) fn read(root: &Path, relative: &str) -> Vec<u8> {
    fs_err::read(root.join(relative)).unwrap()
}

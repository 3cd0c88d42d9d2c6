//! The protocol steps of the Plan flow, as an agent or an approval surface takes them: typed
//! calls on a connection ([`Steps`]).
//!
//! The free functions at the end are the same steps with raw JSON params and results. Only
//! errors.rs and roles.rs still use them (they are converted on another branch); remove them
//! once those two call the typed steps.

use std::path::Path;

use planhost_core::{
    ApprovalAction, ApprovalStatus, Interactivity, Mode, PermissionMode, SessionId,
    TargetPermissionMode, TurnId,
};
use planhost_protocol::{
    ApprovalInfo, AskStatus, AsksFilter, AuditEntry, AuditFilter, AuthorizeResult, ConfigureParams,
    DecisionKind, PermissionAsk, PlansFilter, ResolvePlanParams, SessionInfo, TurnInfo,
    TurnOutcome, methods,
};
use planhost_test_support::host::params;
use serde_json::{Value, json};

use crate::support::Conn;

pub(crate) const PLAN: &str = "# Plan: e2e\n\n1. Write `out.txt`.\n2. Run Bash.\n";

/// The steps of the Plan flow as typed calls: each must succeed.
pub(crate) trait Steps {
    /// `sessions.open` on `root`; the new session's id.
    fn open_session(&mut self, root: &Path, interactivity: Interactivity) -> SessionId;
    /// `sessions.get`.
    fn get_session(&mut self, sid: &SessionId) -> SessionInfo;
    /// `sessions.setMode`.
    fn set_mode(&mut self, sid: &SessionId, mode: Mode) -> SessionInfo;
    /// `sessions.configure` of the permission mode only.
    fn set_permission_mode(&mut self, sid: &SessionId, mode: PermissionMode) -> SessionInfo;
    /// `turns.begin` of a person's turn; its id.
    fn begin_turn(&mut self, sid: &SessionId) -> TurnId;
    /// Ends the running turn normally.
    fn end_turn(&mut self, sid: &SessionId, turn: &TurnId) -> TurnInfo;
    /// Every pending plan approval (`plans.list` with `status: ["pending"]`).
    fn pending_plans(&mut self) -> Vec<ApprovalInfo>;
    /// Every open permission ask (`permissions.list` with `status: ["open"]`).
    fn open_asks(&mut self) -> Vec<PermissionAsk>;
    /// The session's audit rows (`audit.list`, default limit), newest first.
    fn audit(&mut self, sid: &SessionId) -> Vec<AuditEntry>;
    /// `tools.authorize` of a built-in tool with input `{}`, alone in its batch.
    fn authorize(
        &mut self,
        sid: &SessionId,
        turn: &TurnId,
        call: &str,
        tool: &str,
    ) -> AuthorizeResult;
    /// Authorizes a call for exactly `input`: the grant binds the input's digest, so the
    /// execute must send the same input.
    fn authorize_input(
        &mut self,
        sid: &SessionId,
        turn: &TurnId,
        call: &str,
        tool: &str,
        input: Value,
    ) -> AuthorizeResult;
    /// Plan mode, a turn, SubmitPlan allowed and [`PLAN`] submitted; returns (turn, approval).
    fn submit_plan(&mut self, sid: &SessionId, title: &str) -> (TurnId, ApprovalInfo);
}

impl Steps for Conn {
    #[track_caller]
    fn open_session(&mut self, root: &Path, interactivity: Interactivity) -> SessionId {
        self.call::<methods::SessionsOpen>(params::open_as(root, interactivity))
            .id
    }

    #[track_caller]
    fn get_session(&mut self, sid: &SessionId) -> SessionInfo {
        self.call::<methods::SessionsGet>(params::session(sid))
    }

    #[track_caller]
    fn set_mode(&mut self, sid: &SessionId, mode: Mode) -> SessionInfo {
        self.call::<methods::SessionsSetMode>(params::set_mode(sid, mode))
    }

    #[track_caller]
    fn set_permission_mode(&mut self, sid: &SessionId, mode: PermissionMode) -> SessionInfo {
        self.call::<methods::SessionsConfigure>(ConfigureParams {
            permission_mode: Some(mode),
            ..params::configure(sid)
        })
    }

    #[track_caller]
    fn begin_turn(&mut self, sid: &SessionId) -> TurnId {
        self.call::<methods::TurnsBegin>(params::begin(sid)).id
    }

    #[track_caller]
    fn end_turn(&mut self, sid: &SessionId, turn: &TurnId) -> TurnInfo {
        self.call::<methods::TurnsEnd>(params::end(sid, turn, TurnOutcome::Completed))
    }

    #[track_caller]
    fn pending_plans(&mut self) -> Vec<ApprovalInfo> {
        self.call::<methods::PlansList>(PlansFilter {
            session_id: None,
            status: Some(vec![ApprovalStatus::Pending]),
            limit: None,
        })
        .items
    }

    #[track_caller]
    fn open_asks(&mut self) -> Vec<PermissionAsk> {
        self.call::<methods::PermissionsList>(AsksFilter {
            session_id: None,
            status: Some(vec![AskStatus::Open]),
            limit: None,
        })
        .items
    }

    #[track_caller]
    fn audit(&mut self, sid: &SessionId) -> Vec<AuditEntry> {
        self.call::<methods::AuditList>(AuditFilter {
            session_id: Some(sid.clone()),
            limit: None,
        })
        .items
    }

    #[track_caller]
    fn authorize(
        &mut self,
        sid: &SessionId,
        turn: &TurnId,
        call: &str,
        tool: &str,
    ) -> AuthorizeResult {
        self.authorize_input(sid, turn, call, tool, json!({}))
    }

    #[track_caller]
    fn authorize_input(
        &mut self,
        sid: &SessionId,
        turn: &TurnId,
        call: &str,
        tool: &str,
        input: Value,
    ) -> AuthorizeResult {
        self.call::<methods::ToolsAuthorize>(params::authorize(sid, turn, call, tool, input))
    }

    #[track_caller]
    fn submit_plan(&mut self, sid: &SessionId, title: &str) -> (TurnId, ApprovalInfo) {
        self.set_mode(sid, Mode::Plan);
        let turn = self.begin_turn(sid);
        let allowed = self.authorize(sid, &turn, "submit-1", "SubmitPlan");
        assert_eq!(allowed.decision, DecisionKind::Allow, "{allowed:?}");
        let approval =
            self.call::<methods::PlansSubmit>(params::submit(sid, &turn, "submit-1", title, PLAN));
        assert_eq!(approval.status, ApprovalStatus::Pending);
        (turn, approval)
    }
}

/// `plans.resolve` approving exactly this approval with `mode`.
pub(crate) fn approve(approval: &ApprovalInfo, mode: TargetPermissionMode) -> ResolvePlanParams {
    ResolvePlanParams {
        target_permission_mode: Some(mode),
        ..params::resolve(approval, ApprovalAction::Approve)
    }
}

/// The items of a list as JSON (`{"items": [...]}`, newest first): the CLI's `--json` lists.
#[track_caller]
pub(crate) fn items(list: &Value) -> &Vec<Value> {
    list["items"]
        .as_array()
        .unwrap_or_else(|| panic!("not a list result: {list}"))
}

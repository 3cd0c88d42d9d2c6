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

// ---- raw JSON: errors.rs and roles.rs only, until they are converted ----

pub(crate) fn open_session(c: &mut Conn, root: &Path, interactivity: &str) -> String {
    let s = c.call_json(
        "sessions.open",
        json!({ "workspaceRoot": root.display().to_string(), "interactivity": interactivity }),
    );
    s["id"].as_str().expect("session id").to_owned()
}

pub(crate) fn get_session(c: &mut Conn, sid: &str) -> Value {
    c.call_json("sessions.get", json!({ "sessionId": sid }))
}

pub(crate) fn set_mode(c: &mut Conn, sid: &str, mode: &str) -> Value {
    c.call_json(
        "sessions.setMode",
        json!({ "sessionId": sid, "mode": mode }),
    )
}

pub(crate) fn begin_turn(c: &mut Conn, sid: &str) -> String {
    let t = c.call_json("turns.begin", json!({ "sessionId": sid }));
    t["id"].as_str().expect("turn id").to_owned()
}

/// Ends the running turn normally.
pub(crate) fn end_turn(c: &mut Conn, sid: &str, turn: &str) -> Value {
    c.call_json(
        "turns.end",
        json!({ "sessionId": sid, "turnId": turn, "outcome": "completed" }),
    )
}

/// Every open permission ask (`permissions.list` with `status: ["open"]`).
pub(crate) fn open_asks(c: &mut Conn) -> Vec<Value> {
    let list = c.call_json("permissions.list", json!({ "status": ["open"] }));
    items(&list).clone()
}

pub(crate) fn authorize_params(sid: &str, turn: &str, call: &str, tool: &str, size: u32) -> Value {
    json!({
        "sessionId": sid, "turnId": turn, "toolCallId": call, "toolName": tool,
        "batchIndex": 0, "batchSize": size, "provenance": { "kind": "builtIn" }, "input": {},
    })
}

pub(crate) fn authorize(c: &mut Conn, sid: &str, turn: &str, call: &str, tool: &str) -> Value {
    c.call_json(
        "tools.authorize",
        authorize_params(sid, turn, call, tool, 1),
    )
}

/// Authorizes a call for exactly `input`: the grant binds the input's digest, so the execute must
/// send the same input.
pub(crate) fn authorize_input(
    c: &mut Conn,
    sid: &str,
    turn: &str,
    call: &str,
    tool: &str,
    input: Value,
) -> Value {
    let mut params = authorize_params(sid, turn, call, tool, 1);
    params["input"] = input;
    c.call_json("tools.authorize", params)
}

pub(crate) fn execute_params(sid: &str, turn: &str, call: &str, tool: &str, input: Value) -> Value {
    json!({ "sessionId": sid, "turnId": turn, "toolCallId": call, "tool": tool, "input": input })
}

pub(crate) fn submit_params(sid: &str, turn: &str, call: &str, title: &str, size: u32) -> Value {
    json!({
        "sessionId": sid, "turnId": turn, "toolCallId": call, "batchIndex": 0,
        "batchSize": size, "title": title, "markdown": PLAN,
        "question": "Shall I implement this plan?",
    })
}

/// Plan mode, a turn, SubmitPlan allowed and submitted; returns (turn, approval).
pub(crate) fn submit_plan(c: &mut Conn, sid: &str, title: &str) -> (String, Value) {
    set_mode(c, sid, "plan");
    let turn = begin_turn(c, sid);
    let allowed = authorize(c, sid, &turn, "submit-1", "SubmitPlan");
    assert_eq!(allowed["decision"], "allow", "{allowed}");
    let approval = c.call_json(
        "plans.submit",
        submit_params(sid, &turn, "submit-1", title, 1),
    );
    assert_eq!(approval["status"], "pending");
    (turn, approval)
}

/// `plans.resolve` params naming exactly this approval.
pub(crate) fn resolve_params(approval: &Value, action: &str, mode: Option<&str>) -> Value {
    let mut p = json!({
        "proposalId": approval["proposalId"], "sessionId": approval["sessionId"],
        "turnId": approval["turnId"], "toolCallId": approval["toolCallId"],
        "version": approval["version"], "artifactSha256": approval["artifactSha256"],
        "action": action,
    });
    if let Some(mode) = mode {
        p["targetPermissionMode"] = json!(mode);
    }
    p
}

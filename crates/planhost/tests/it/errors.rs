//! Every error code a client can provoke through the protocol: its JSON-RPC number, its stable
//! `data.code`, and — for refused state changes — a session left exactly as it was.
//!
//! Calls are typed (`call::<methods::X>`), except where the wire itself is under test: raw
//! lines, an unknown method, params that do not parse (a missing, unknown, mistyped or
//! out-of-vocabulary field) and unknown fields a newer client may send. Those stay raw JSON.

use std::path::Path;

use planhost_core::{
    ApprovalAction, ApprovalStatus, DenyCode, HostTool, Interactivity, Mode, PermissionMode,
    PlanState, Role, SessionId, ShellId, TargetPermissionMode, TurnId,
};
use planhost_protocol::{
    ApprovalInfo, AuthorizeParams, BeginOrigin, BeginTurnParams, ConfigureParams, DecisionKind,
    Empty, HealthStatus, InitializeParams, InitializeResult, Method, ProposalRef,
    ResolvePlanParams, RpcError, SessionsFilter, SettingsPatch, SubmitPlanParams, TurnOutcome,
    codes, methods,
};
use planhost_test_support::host::params;
use pretty_assertions::assert_eq;
use serde_json::json;

use crate::steps::Steps as _;
use crate::support::*;

/// The plan every submission here carries.
const PLAN: &str = "# Plan: e2e\n\n1. Write `out.txt`.\n2. Run Bash.\n";

/// `app.health`'s status.
fn health(c: &mut Conn) -> HealthStatus {
    c.call::<methods::AppHealth>(Empty {}).status
}

/// `tools.authorize` of a built-in with no input, at position 0 of a batch of `size`.
fn authorize_batch(
    sid: &SessionId,
    turn: &TurnId,
    call: &str,
    tool: &str,
    size: u32,
) -> AuthorizeParams {
    AuthorizeParams {
        batch_size: size,
        ..params::authorize(sid, turn, call, tool, json!({}))
    }
}

/// `plans.submit` of [`PLAN`] at position 0 of a batch of `size`.
fn submit_batch(
    sid: &SessionId,
    turn: &TurnId,
    call: &str,
    title: &str,
    size: u32,
) -> SubmitPlanParams {
    SubmitPlanParams {
        batch_size: size,
        ..params::submit(sid, turn, call, title, PLAN)
    }
}

/// Plan mode, a turn, SubmitPlan allowed and submitted; returns (turn, approval).
fn submit_plan(c: &mut Conn, sid: &SessionId, title: &str) -> (TurnId, ApprovalInfo) {
    c.set_mode(sid, Mode::Plan);
    let turn = c.begin_turn(sid);
    let allowed =
        c.call::<methods::ToolsAuthorize>(authorize_batch(sid, &turn, "submit-1", "SubmitPlan", 1));
    assert_eq!(allowed.decision, DecisionKind::Allow, "{allowed:?}");
    let approval = c.call::<methods::PlansSubmit>(submit_batch(sid, &turn, "submit-1", title, 1));
    assert_eq!(approval.status, ApprovalStatus::Pending);
    (turn, approval)
}

/// `plans.resolve` approving exactly this approval with permission mode `auto`.
fn approve_auto(approval: &ApprovalInfo) -> ResolvePlanParams {
    ResolvePlanParams {
        target_permission_mode: Some(TargetPermissionMode::Auto),
        ..params::resolve(approval, ApprovalAction::Approve)
    }
}

/// Calls `M`, expects the refusal `stable`, and checks `sessions.get` did not move.
#[track_caller]
fn refused_unchanged<M: Method>(c: &mut Conn, sid: &SessionId, params: M::Params, stable: &str) {
    failed_unchanged(
        c,
        sid,
        M::NAME,
        |c| c.call_err::<M>(params),
        codes::REFUSED,
        stable,
    );
}

/// Makes the failing call `call` (of `method`), expects the error `numeric`/`stable`, and checks
/// `sessions.get` did not move.
#[track_caller]
fn failed_unchanged(
    c: &mut Conn,
    sid: &SessionId,
    method: &str,
    call: impl FnOnce(&mut Conn) -> RpcError,
    numeric: i64,
    stable: &str,
) -> RpcError {
    let before = c.get_session(sid);
    let error = call(c);
    assert_code(&error, numeric, stable);
    let after = c.get_session(sid);
    assert_eq!(
        before, after,
        "{method} failed with {stable} but changed the session"
    );
    error
}

/// The response to one raw line.
fn raw(c: &mut Conn, line: &str) -> planhost_protocol::Response {
    c.send_raw(line);
    c.next_response()
}

#[test]
fn protocol_errors_leave_the_connection_working() {
    let env = home();
    let host = SocketHost::start(&env);
    let mut c = host.connect("e2e-errors");

    let parse = raw(&mut c, r#"{"jsonrpc":"2.0","id":1,"method":"app.health""#);
    assert_eq!(parse.id, None, "{parse:?}");
    assert_code(&response_error(&parse), codes::PARSE_ERROR, "PARSE_ERROR");
    assert_eq!(health(&mut c), HealthStatus::Ok);

    for line in ["[1,2,3]", "\"hello\"", "42"] {
        let r = raw(&mut c, line);
        assert_code(
            &response_error(&r),
            codes::INVALID_REQUEST,
            "INVALID_REQUEST",
        );
    }
    let bad_version = raw(
        &mut c,
        r#"{"jsonrpc":"1.0","id":"v1","method":"app.health"}"#,
    );
    assert_eq!(
        bad_version.id,
        Some(planhost_protocol::RequestId::String("v1".into()))
    );
    assert_code(
        &response_error(&bad_version),
        codes::INVALID_REQUEST,
        "INVALID_REQUEST",
    );
    let no_method = raw(&mut c, r#"{"jsonrpc":"2.0","id":9}"#);
    assert_eq!(no_method.id, Some(planhost_protocol::RequestId::Number(9)));
    assert_code(
        &response_error(&no_method),
        codes::INVALID_REQUEST,
        "INVALID_REQUEST",
    );

    // Raw: no such method in the contract.
    let unknown = c.call_json_err("plans.approveEverything", json!({}));
    assert_code(&unknown, codes::METHOD_NOT_FOUND, "METHOD_NOT_FOUND");
    assert!(
        unknown.message.contains("plans.approveEverything"),
        "{unknown:?}"
    );

    assert_eq!(health(&mut c), HealthStatus::Ok);
}

#[test]
fn invalid_params_name_the_field() {
    let env = home();
    let host = SocketHost::start(&env);
    let mut c = host.connect("e2e-params");
    let sid = c.open_session(&env.workspace(), Interactivity::Interactive);
    let turn = c.begin_turn(&sid);
    let field = |e: &RpcError| e.data.as_ref().and_then(|d| d.field.clone());

    // Raw: params that do not parse (a missing, an unknown, a mistyped and an out-of-vocabulary
    // field) cannot be typed.
    let missing = c.call_json_err(
        "sessions.open",
        json!({ "workspaceRoot": env.workspace().display().to_string() }),
    );
    assert_code(&missing, codes::INVALID_PARAMS, "INVALID_PARAMS");
    assert_eq!(
        field(&missing).as_deref(),
        Some("interactivity"),
        "{missing:?}"
    );

    let unknown = c.call_json_err("sessions.get", json!({ "sessionId": sid, "bogus": 1 }));
    assert_code(&unknown, codes::INVALID_PARAMS, "INVALID_PARAMS");
    assert_eq!(field(&unknown).as_deref(), Some("bogus"), "{unknown:?}");

    let wrong_type = c.call_json_err("audit.list", json!({ "limit": "ten" }));
    assert_code(&wrong_type, codes::INVALID_PARAMS, "INVALID_PARAMS");
    assert_eq!(
        field(&wrong_type).as_deref(),
        Some("limit"),
        "{wrong_type:?}"
    );

    let bad_enum = c.call_json_err(
        "sessions.setMode",
        json!({ "sessionId": sid, "mode": "chat" }),
    );
    assert_code(&bad_enum, codes::INVALID_PARAMS, "INVALID_PARAMS");
    assert_eq!(field(&bad_enum).as_deref(), Some("mode"), "{bad_enum:?}");
    c.end_turn(&sid, &turn);
}

#[test]
fn invalid_params_name_a_nested_field() {
    let env = home();
    let host = SocketHost::start(&env);
    let mut c = host.connect("e2e-params");
    let sid = c.open_session(&env.workspace(), Interactivity::Interactive);
    let turn = c.begin_turn(&sid);
    // Raw: a nested field of the wrong type cannot be typed.
    let mut params = serde_json::to_value(authorize_batch(&sid, &turn, "ext-1", "my_tool", 1))
        .expect("params as JSON");
    params["provenance"] = json!({ "kind": "extension", "package": 5, "sourcePath": "/x/y.js" });
    let e = c.call_json_err(methods::ToolsAuthorize::NAME, params);
    assert_code(&e, codes::INVALID_PARAMS, "INVALID_PARAMS");
    let field = e.data.as_ref().and_then(|d| d.field.as_deref());
    assert_eq!(field, Some("provenance.package"), "{e:?}");
}

#[test]
fn handshake_errors() {
    let env = home();
    let host = SocketHost::start(&env);

    let hello = |version: u32, name: &str, roles: &[Role]| InitializeParams {
        protocol_version: version,
        client_name: name.into(),
        client_version: None,
        roles: roles.to_vec(),
        tool_activity: false,
        events: planhost_protocol::EventScope::All,
        agent_process: None,
    };
    let mut early = host.connect_raw();
    let e = early.call_err::<methods::AppHealth>(Empty {});
    assert_code(&e, codes::NOT_INITIALIZED, "NOT_INITIALIZED");
    early.initialize("late");
    assert_eq!(health(&mut early), HealthStatus::Ok);

    let mut old = host.connect_raw();
    let e = old.call_err::<methods::Initialize>(hello(999, "future-client", &[Role::Observer]));
    assert_code(&e, codes::INCOMPATIBLE_VERSION, "PROTOCOL_VERSION_MISMATCH");
    assert!(
        e.message.contains("v999"),
        "names the client's version: {e:?}"
    );
    assert!(
        e.message
            .contains(&format!("v{}", planhost_protocol::PROTOCOL_VERSION)),
        "names the host's version: {e:?}"
    );
    // A v1 client sends no roles: it is told about the version, not about a missing field.
    // Raw: without `roles` the params do not parse.
    let e = old.call_json_err(
        "initialize",
        json!({ "protocolVersion": 1, "clientName": "v1-client" }),
    );
    assert_code(&e, codes::INCOMPATIBLE_VERSION, "PROTOCOL_VERSION_MISMATCH");
    assert!(
        e.message.contains("protocol v1,")
            && e.message
                .contains(&format!("v{}", planhost_protocol::PROTOCOL_VERSION)),
        "names both versions: {e:?}"
    );
    // A refused handshake does not count as one.
    let e = old.call_err::<methods::AppHealth>(Empty {});
    assert_code(&e, codes::NOT_INITIALIZED, "NOT_INITIALIZED");

    // v2: a connection must say what it is. No role at all is refused, and does not count.
    let mut nobody = host.connect_raw();
    let e = nobody.call_err::<methods::Initialize>(hello(
        planhost_protocol::PROTOCOL_VERSION,
        "nobody",
        &[],
    ));
    assert_code(&e, codes::INVALID_PARAMS, "ROLES_INVALID");
    let e = nobody.call_err::<methods::AppHealth>(Empty {});
    assert_code(&e, codes::NOT_INITIALIZED, "NOT_INITIALIZED");
    nobody.initialize("nobody-after-all");
    assert_eq!(health(&mut nobody), HealthStatus::Ok);

    // Unknown fields are ignored, so a newer client can still talk to this host. Raw: the
    // typed params have no field the host does not know.
    let mut newer = host.connect_raw();
    let hello = newer.call_json(
        methods::Initialize::NAME,
        json!({ "protocolVersion": planhost_protocol::PROTOCOL_VERSION, "clientName": "newer",
                "roles": ["observer"], "someFutureField": true }),
    );
    let hello: InitializeResult = serde_json::from_value(hello).expect("an initialize result");
    assert_eq!(hello.roles, [Role::Observer], "{hello:?}");
    assert_eq!(health(&mut newer), HealthStatus::Ok);
}

#[test]
fn session_and_turn_refusals_change_nothing() {
    let env = home();
    let host = SocketHost::start(&env);
    let mut c = host.connect("e2e-refusals");

    let nobody = SessionId::from("no-such-session");
    let e = c.call_err::<methods::SessionsGet>(params::session(&nobody));
    assert_refused(&e, "SESSION_NOT_FOUND");
    let e = c.call_err::<methods::TurnsBegin>(params::begin(&nobody));
    assert_refused(&e, "SESSION_NOT_FOUND");

    for root in [
        "relative/dir".to_owned(),
        format!("{}/missing", env.workspace().display()),
    ] {
        let e = c.call_err::<methods::SessionsOpen>(params::open(Path::new(&root)));
        assert_refused(&e, "WORKSPACE_INVALID");
    }
    let all = SessionsFilter {
        include_ended: None,
        workspace_root: None,
        limit: None,
    };
    assert!(c.call::<methods::SessionsList>(all).items.is_empty());

    let sid = c.open_session(&env.workspace(), Interactivity::Interactive);
    // A catalog id of another platform is refused; a name outside every catalog does not
    // even parse (v2 shell ids are typed), so that call is raw JSON.
    refused_unchanged::<methods::SessionsConfigure>(
        &mut c,
        &sid,
        ConfigureParams {
            shell_id: Some(Some(ShellId::Cmd)),
            ..params::configure(&sid)
        },
        "COMMAND_SHELL_INVALID",
    );
    let e = failed_unchanged(
        &mut c,
        &sid,
        methods::SessionsConfigure::NAME,
        |c| {
            c.call_json_err(
                methods::SessionsConfigure::NAME,
                json!({ "sessionId": sid, "shellId": "zsh" }),
            )
        },
        codes::INVALID_PARAMS,
        "INVALID_PARAMS",
    );
    assert_eq!(
        e.data.as_ref().and_then(|d| d.field.as_deref()),
        Some("shellId"),
        "{e:?}"
    );
    let turn = c.begin_turn(&sid);
    refused_unchanged::<methods::TurnsBegin>(&mut c, &sid, params::begin(&sid), "SESSION_BUSY");
    refused_unchanged::<methods::SessionsSetMode>(
        &mut c,
        &sid,
        params::set_mode(&sid, Mode::Plan),
        "SESSION_NOT_IDLE",
    );
    refused_unchanged::<methods::SessionsConfigure>(
        &mut c,
        &sid,
        ConfigureParams {
            permission_mode: Some(PermissionMode::Auto),
            ..params::configure(&sid)
        },
        "SESSION_NOT_IDLE",
    );
    let not_this_turn = TurnId::from("not-this-turn");
    refused_unchanged::<methods::TurnsEnd>(
        &mut c,
        &sid,
        params::end(&sid, &not_this_turn, TurnOutcome::Completed),
        "TURN_NOT_ACTIVE",
    );
    let e = c.call_err::<methods::ToolsAuthorize>(authorize_batch(
        &sid,
        &not_this_turn,
        "read-1",
        "Read",
        1,
    ));
    assert_refused(&e, "TURN_NOT_ACTIVE");
    refused_unchanged::<methods::PlansSubmit>(
        &mut c,
        &sid,
        submit_batch(&sid, &turn, "submit-1", "Not in Plan", 1),
        "PLAN_MODE_NOT_ACTIVE",
    );
    assert!(!env.workspace().join(".pi/plan").exists() || plan_files(&env) == 0);
    refused_unchanged::<methods::ToolsExecute>(
        &mut c,
        &sid,
        params::execute(
            &sid,
            &turn,
            "never-1",
            HostTool::Read,
            json!({ "path": "x" }),
        ),
        "TOOL_NOT_AUTHORIZED",
    );
    c.end_turn(&sid, &turn);

    // v2 settings are typed: a value outside the vocabulary does not parse (raw JSON), and a
    // shell of another platform's catalog is refused. Nothing changes either way.
    let before = c.call::<methods::SettingsGet>(Empty {});
    let field = |e: &RpcError| e.data.as_ref().and_then(|d| d.field.clone());
    let e = c.call_json_err(
        "settings.set",
        json!({ "defaultPermissionMode": "sometimes" }),
    );
    assert_code(&e, codes::INVALID_PARAMS, "INVALID_PARAMS");
    assert_eq!(field(&e).as_deref(), Some("defaultPermissionMode"), "{e:?}");
    let e = c.call_json_err("settings.set", json!({ "defaultShell": "zsh" }));
    assert_code(&e, codes::INVALID_PARAMS, "INVALID_PARAMS");
    assert_eq!(field(&e).as_deref(), Some("defaultShell"), "{e:?}");
    let e = c.call_err::<methods::SettingsSet>(SettingsPatch {
        default_permission_mode: None,
        default_shell: Some(Some(ShellId::Cmd)),
        default_policy_preset: None,
    });
    assert_refused(&e, "COMMAND_SHELL_INVALID");
    assert_eq!(c.call::<methods::SettingsGet>(Empty {}), before);
}

fn plan_files(env: &Env) -> usize {
    fs_err::read_dir(env.workspace().join(".pi/plan")).map_or(0, Iterator::count)
}

#[test]
fn plan_refusals_change_nothing() {
    let env = home();
    let host = SocketHost::start(&env);
    let mut c = host.connect("e2e-plan-refusals");
    let sid = c.open_session(&env.workspace(), Interactivity::Interactive);
    c.set_mode(&sid, Mode::Plan);
    let turn = c.begin_turn(&sid);

    let decision = c.call::<methods::ToolsAuthorize>(authorize_batch(
        &sid,
        &turn,
        "submit-0",
        "SubmitPlan",
        2,
    ));
    assert_eq!(decision.decision, DecisionKind::Deny, "{decision:?}");
    assert_eq!(decision.code, Some(DenyCode::ToolNotAloneInBatch));
    refused_unchanged::<methods::PlansSubmit>(
        &mut c,
        &sid,
        submit_batch(&sid, &turn, "submit-0", "Batched", 2),
        "TOOL_NOT_ALONE_IN_BATCH",
    );
    refused_unchanged::<methods::PlansSubmit>(
        &mut c,
        &sid,
        submit_batch(&sid, &turn, "submit-0", "   ", 1),
        "PLAN_TITLE_INVALID",
    );
    assert_eq!(plan_files(&env), 0, "a refused submit wrote an artifact");

    let approval =
        c.call::<methods::PlansSubmit>(submit_batch(&sid, &turn, "submit-1", "The plan", 1));
    refused_unchanged::<methods::PlansSubmit>(
        &mut c,
        &sid,
        submit_batch(&sid, &turn, "submit-2", "Another plan", 1),
        "PLAN_APPROVAL_ALREADY_PENDING",
    );
    assert_eq!(plan_files(&env), 1);
    c.end_turn(&sid, &turn);

    let stale = ResolvePlanParams {
        version: Some(approval.version + 1),
        ..approve_auto(&approval)
    };
    refused_unchanged::<methods::PlansResolve>(&mut c, &sid, stale, "PLAN_APPROVAL_STALE");
    let wrong_turn = ResolvePlanParams {
        turn_id: "another-turn".into(),
        ..approve_auto(&approval)
    };
    refused_unchanged::<methods::PlansResolve>(&mut c, &sid, wrong_turn, "PLAN_APPROVAL_STALE");
    let missing = ResolvePlanParams {
        proposal_id: "no-such-proposal".into(),
        ..approve_auto(&approval)
    };
    refused_unchanged::<methods::PlansResolve>(&mut c, &sid, missing, "PLAN_APPROVAL_NOT_FOUND");
    let e = c.call_err::<methods::PlansGet>(ProposalRef {
        proposal_id: "no-such-proposal".into(),
    });
    assert_refused(&e, "PLAN_APPROVAL_NOT_FOUND");
    refused_unchanged::<methods::TurnsBegin>(&mut c, &sid, params::begin(&sid), "SESSION_BUSY");
    // v2: feedback goes with a rejection only; an approve that carries it contradicts itself.
    let with_feedback = ResolvePlanParams {
        feedback: Some("but change step 2".into()),
        ..approve_auto(&approval)
    };
    refused_unchanged::<methods::PlansResolve>(&mut c, &sid, with_feedback, "PLAN_RESOLVE_INVALID");

    let rejected =
        c.call::<methods::PlansResolve>(params::resolve(&approval, ApprovalAction::Reject));
    assert_eq!(rejected.status, ApprovalStatus::Rejected);
    let again = ResolvePlanParams {
        version: Some(rejected.version),
        ..approve_auto(&approval)
    };
    refused_unchanged::<methods::PlansResolve>(&mut c, &sid, again, "PLAN_APPROVAL_NOT_PENDING");
    let s = c.get_session(&sid);
    assert_eq!((s.mode, s.plan_state), (Mode::Plan, PlanState::Stopped));
}

/// v2: the person approves the bytes that were submitted. If the file on disk changed since,
/// `plans.get` says so and approving is refused; the approval stays pending.
#[test]
fn an_artifact_changed_on_disk_cannot_be_approved() {
    let env = home();
    let host = SocketHost::start(&env);
    let mut c = host.connect("e2e-artifact");
    let sid = c.open_session(&env.workspace(), Interactivity::Interactive);
    let (turn, approval) = submit_plan(&mut c, &sid, "Tampered");
    c.end_turn(&sid, &turn);
    let artifact = approval.artifact_path.as_str();
    let plan = ProposalRef {
        proposal_id: approval.proposal_id.clone(),
    };
    let detail = c.call::<methods::PlansGet>(plan.clone());
    assert!(detail.artifact_intact, "{detail:?}");

    fs_err::write(artifact, "# Plan: something else entirely\n").unwrap();
    let detail = c.call::<methods::PlansGet>(plan.clone());
    assert!(!detail.artifact_intact, "{detail:?}");
    assert_eq!(
        detail.markdown, PLAN,
        "the stored plan is what was submitted"
    );
    refused_unchanged::<methods::PlansResolve>(
        &mut c,
        &sid,
        approve_auto(&approval),
        "PLAN_ARTIFACT_CHANGED",
    );
    let row = c.call::<methods::PlansGet>(plan).approval;
    assert_eq!(row.status, ApprovalStatus::Pending, "{row:?}");
    assert_eq!(row.version, approval.version, "{row:?}");
    assert_eq!(row.execution_id, None, "{row:?}");
}

#[test]
fn plan_needs_an_interactive_session() {
    let env = home();
    let host = SocketHost::start(&env);
    let mut c = host.connect("e2e-unattended");
    let unattended = c.open_session(&env.workspace(), Interactivity::Unattended);
    refused_unchanged::<methods::SessionsSetMode>(
        &mut c,
        &unattended,
        params::set_mode(&unattended, Mode::Plan),
        "PLAN_REQUIRES_INTERACTIVE_SESSION",
    );
    let turn = c.begin_turn(&unattended);
    refused_unchanged::<methods::PlansEnter>(
        &mut c,
        &unattended,
        params::enter(&unattended, &turn, "enter-1"),
        "PLAN_REQUIRES_INTERACTIVE_SESSION",
    );
    c.end_turn(&unattended, &turn);

    // A scheduled turn of an interactive Plan session has nobody to approve either.
    let sid = c.open_session(&env.workspace(), Interactivity::Interactive);
    c.set_mode(&sid, Mode::Plan);
    refused_unchanged::<methods::TurnsBegin>(
        &mut c,
        &sid,
        BeginTurnParams {
            origin: Some(BeginOrigin::Scheduled),
            ..params::begin(&sid)
        },
        "PLAN_REQUIRES_INTERACTIVE_SESSION",
    );
    assert_eq!(plan_files(&env), 0);
}

#[test]
fn bash_input_errors() {
    let env = home();
    let host = SocketHost::start(&env);
    let mut c = host.connect("e2e-bash");
    let sid = c.open_session(&env.workspace(), Interactivity::Interactive);
    c.call::<methods::SessionsConfigure>(ConfigureParams {
        permission_mode: Some(PermissionMode::Auto),
        ..params::configure(&sid)
    });
    let turn = c.begin_turn(&sid);
    let input = json!({ "command": "touch ran.txt", "timeoutMs": 5 });
    let allowed = c.call::<methods::ToolsAuthorize>(params::authorize(
        &sid,
        &turn,
        "bash-1",
        "Bash",
        input.clone(),
    ));
    assert_eq!(allowed.decision, DecisionKind::Allow, "{allowed:?}");
    let e = c.call_err::<methods::ToolsExecute>(params::execute(
        &sid,
        &turn,
        "bash-1",
        HostTool::Bash,
        input,
    ));
    assert_refused(&e, "COMMAND_TIMEOUT_INVALID");
    assert!(!env.workspace().join("ran.txt").exists());
}

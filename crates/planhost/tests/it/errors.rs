//! Every error code a client can provoke through the protocol: its JSON-RPC number, its stable
//! `data.code`, and — for refused state changes — a session left exactly as it was.

use planhost_protocol::codes;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::steps::*;
use crate::support::*;

/// Calls `method`, expects the refusal `stable`, and checks `sessions.get` did not move.
#[track_caller]
fn refused_unchanged(c: &mut Conn, sid: &str, method: &str, params: Value, stable: &str) {
    failed_unchanged(c, sid, method, params, codes::REFUSED, stable);
}

/// Calls `method`, expects the error `numeric`/`stable`, and checks `sessions.get` did not move.
#[track_caller]
fn failed_unchanged(
    c: &mut Conn,
    sid: &str,
    method: &str,
    params: Value,
    numeric: i64,
    stable: &str,
) -> planhost_protocol::RpcError {
    let before = get_session(c, sid);
    let error = c.call_json_err(method, params);
    assert_code(&error, numeric, stable);
    let after = get_session(c, sid);
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
    assert_eq!(c.call_json("app.health", json!({}))["status"], "ok");

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

    let unknown = c.call_json_err("plans.approveEverything", json!({}));
    assert_code(&unknown, codes::METHOD_NOT_FOUND, "METHOD_NOT_FOUND");
    assert!(
        unknown.message.contains("plans.approveEverything"),
        "{unknown:?}"
    );

    assert_eq!(c.call_json("app.health", json!({}))["status"], "ok");
}

#[test]
fn invalid_params_name_the_field() {
    let env = home();
    let host = SocketHost::start(&env);
    let mut c = host.connect("e2e-params");
    let sid = open_session(&mut c, &env.workspace(), "interactive");
    let turn = begin_turn(&mut c, &sid);
    let field = |e: &planhost_protocol::RpcError| e.data.as_ref().and_then(|d| d.field.clone());

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
    end_turn(&mut c, &sid, &turn);
}

#[test]
fn invalid_params_name_a_nested_field() {
    let env = home();
    let host = SocketHost::start(&env);
    let mut c = host.connect("e2e-params");
    let sid = open_session(&mut c, &env.workspace(), "interactive");
    let turn = begin_turn(&mut c, &sid);
    let mut params = authorize_params(&sid, &turn, "ext-1", "my_tool", 1);
    params["provenance"] = json!({ "kind": "extension", "package": 5, "sourcePath": "/x/y.js" });
    let e = c.call_json_err("tools.authorize", params);
    assert_code(&e, codes::INVALID_PARAMS, "INVALID_PARAMS");
    let field = e.data.as_ref().and_then(|d| d.field.as_deref());
    assert_eq!(field, Some("provenance.package"), "{e:?}");
}

#[test]
fn handshake_errors() {
    let env = home();
    let host = SocketHost::start(&env);

    let mut early = host.connect_raw();
    let e = early.call_json_err("app.health", json!({}));
    assert_code(&e, codes::NOT_INITIALIZED, "NOT_INITIALIZED");
    early.initialize("late");
    assert_eq!(early.call_json("app.health", json!({}))["status"], "ok");

    let mut old = host.connect_raw();
    let e = old.call_json_err(
        "initialize",
        json!({ "protocolVersion": 999, "clientName": "future-client", "roles": ["observer"] }),
    );
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
    let e = old.call_json_err("app.health", json!({}));
    assert_code(&e, codes::NOT_INITIALIZED, "NOT_INITIALIZED");

    // v2: a connection must say what it is. No role at all is refused, and does not count.
    let mut nobody = host.connect_raw();
    let e = nobody.call_json_err(
        "initialize",
        json!({ "protocolVersion": planhost_protocol::PROTOCOL_VERSION, "clientName": "nobody", "roles": [] }),
    );
    assert_code(&e, codes::INVALID_PARAMS, "ROLES_INVALID");
    let e = nobody.call_json_err("app.health", json!({}));
    assert_code(&e, codes::NOT_INITIALIZED, "NOT_INITIALIZED");
    nobody.initialize("nobody-after-all");
    assert_eq!(nobody.call_json("app.health", json!({}))["status"], "ok");

    // Unknown fields are ignored, so a newer client can still talk to this host.
    let mut newer = host.connect_raw();
    let hello = newer.call_json(
        "initialize",
        json!({ "protocolVersion": planhost_protocol::PROTOCOL_VERSION, "clientName": "newer",
                "roles": ["observer"], "someFutureField": true }),
    );
    assert_eq!(hello["roles"], json!(["observer"]), "{hello}");
    assert_eq!(newer.call_json("app.health", json!({}))["status"], "ok");
}

#[test]
fn session_and_turn_refusals_change_nothing() {
    let env = home();
    let host = SocketHost::start(&env);
    let mut c = host.connect("e2e-refusals");

    let e = c.call_json_err("sessions.get", json!({ "sessionId": "no-such-session" }));
    assert_refused(&e, "SESSION_NOT_FOUND");
    let e = c.call_json_err("turns.begin", json!({ "sessionId": "no-such-session" }));
    assert_refused(&e, "SESSION_NOT_FOUND");

    for root in [
        "relative/dir".to_owned(),
        format!("{}/missing", env.workspace().display()),
    ] {
        let e = c.call_json_err(
            "sessions.open",
            json!({ "workspaceRoot": root, "interactivity": "interactive" }),
        );
        assert_refused(&e, "WORKSPACE_INVALID");
    }
    assert!(items(&c.call_json("sessions.list", json!({}))).is_empty());

    let sid = open_session(&mut c, &env.workspace(), "interactive");
    // A catalog id of another platform is refused; a name outside every catalog does not
    // even parse (v2 shell ids are typed).
    refused_unchanged(
        &mut c,
        &sid,
        "sessions.configure",
        json!({ "sessionId": sid, "shellId": "cmd" }),
        "COMMAND_SHELL_INVALID",
    );
    let e = failed_unchanged(
        &mut c,
        &sid,
        "sessions.configure",
        json!({ "sessionId": sid, "shellId": "zsh" }),
        codes::INVALID_PARAMS,
        "INVALID_PARAMS",
    );
    assert_eq!(
        e.data.as_ref().and_then(|d| d.field.as_deref()),
        Some("shellId"),
        "{e:?}"
    );
    let turn = begin_turn(&mut c, &sid);
    refused_unchanged(
        &mut c,
        &sid,
        "turns.begin",
        json!({ "sessionId": sid }),
        "SESSION_BUSY",
    );
    refused_unchanged(
        &mut c,
        &sid,
        "sessions.setMode",
        json!({ "sessionId": sid, "mode": "plan" }),
        "SESSION_NOT_IDLE",
    );
    refused_unchanged(
        &mut c,
        &sid,
        "sessions.configure",
        json!({ "sessionId": sid, "permissionMode": "auto" }),
        "SESSION_NOT_IDLE",
    );
    refused_unchanged(
        &mut c,
        &sid,
        "turns.end",
        json!({ "sessionId": sid, "turnId": "not-this-turn", "outcome": "completed" }),
        "TURN_NOT_ACTIVE",
    );
    let e = c.call_json_err(
        "tools.authorize",
        authorize_params(&sid, "not-this-turn", "read-1", "Read", 1),
    );
    assert_refused(&e, "TURN_NOT_ACTIVE");
    refused_unchanged(
        &mut c,
        &sid,
        "plans.submit",
        submit_params(&sid, &turn, "submit-1", "Not in Plan", 1),
        "PLAN_MODE_NOT_ACTIVE",
    );
    assert!(!env.workspace().join(".pi/plan").exists() || plan_files(&env) == 0);
    refused_unchanged(
        &mut c,
        &sid,
        "tools.execute",
        execute_params(&sid, &turn, "never-1", "Read", json!({ "path": "x" })),
        "TOOL_NOT_AUTHORIZED",
    );
    end_turn(&mut c, &sid, &turn);

    // v2 settings are typed: a value outside the vocabulary does not parse, and a shell of
    // another platform's catalog is refused. Nothing changes either way.
    let before = c.call_json("settings.get", json!({}));
    let field = |e: &planhost_protocol::RpcError| e.data.as_ref().and_then(|d| d.field.clone());
    let e = c.call_json_err(
        "settings.set",
        json!({ "defaultPermissionMode": "sometimes" }),
    );
    assert_code(&e, codes::INVALID_PARAMS, "INVALID_PARAMS");
    assert_eq!(field(&e).as_deref(), Some("defaultPermissionMode"), "{e:?}");
    let e = c.call_json_err("settings.set", json!({ "defaultShell": "zsh" }));
    assert_code(&e, codes::INVALID_PARAMS, "INVALID_PARAMS");
    assert_eq!(field(&e).as_deref(), Some("defaultShell"), "{e:?}");
    let e = c.call_json_err("settings.set", json!({ "defaultShell": "cmd" }));
    assert_refused(&e, "COMMAND_SHELL_INVALID");
    assert_eq!(c.call_json("settings.get", json!({})), before);
}

fn plan_files(env: &Env) -> usize {
    fs_err::read_dir(env.workspace().join(".pi/plan")).map_or(0, Iterator::count)
}

#[test]
fn plan_refusals_change_nothing() {
    let env = home();
    let host = SocketHost::start(&env);
    let mut c = host.connect("e2e-plan-refusals");
    let sid = open_session(&mut c, &env.workspace(), "interactive");
    set_mode(&mut c, &sid, "plan");
    let turn = begin_turn(&mut c, &sid);

    let decision = c.call_json(
        "tools.authorize",
        authorize_params(&sid, &turn, "submit-0", "SubmitPlan", 2),
    );
    assert_eq!(decision["decision"], "deny", "{decision}");
    assert_eq!(decision["code"], "POLICY_TOOL_NOT_ALONE_IN_BATCH");
    refused_unchanged(
        &mut c,
        &sid,
        "plans.submit",
        submit_params(&sid, &turn, "submit-0", "Batched", 2),
        "TOOL_NOT_ALONE_IN_BATCH",
    );
    refused_unchanged(
        &mut c,
        &sid,
        "plans.submit",
        submit_params(&sid, &turn, "submit-0", "   ", 1),
        "PLAN_TITLE_INVALID",
    );
    assert_eq!(plan_files(&env), 0, "a refused submit wrote an artifact");

    let approval = c.call_json(
        "plans.submit",
        submit_params(&sid, &turn, "submit-1", "The plan", 1),
    );
    refused_unchanged(
        &mut c,
        &sid,
        "plans.submit",
        submit_params(&sid, &turn, "submit-2", "Another plan", 1),
        "PLAN_APPROVAL_ALREADY_PENDING",
    );
    assert_eq!(plan_files(&env), 1);
    end_turn(&mut c, &sid, &turn);

    let mut stale = resolve_params(&approval, "approve", Some("auto"));
    stale["version"] = json!(approval["version"].as_i64().unwrap() + 1);
    refused_unchanged(&mut c, &sid, "plans.resolve", stale, "PLAN_APPROVAL_STALE");
    let mut wrong_turn = resolve_params(&approval, "approve", Some("auto"));
    wrong_turn["turnId"] = json!("another-turn");
    refused_unchanged(
        &mut c,
        &sid,
        "plans.resolve",
        wrong_turn,
        "PLAN_APPROVAL_STALE",
    );
    let mut missing = resolve_params(&approval, "approve", Some("auto"));
    missing["proposalId"] = json!("no-such-proposal");
    refused_unchanged(
        &mut c,
        &sid,
        "plans.resolve",
        missing,
        "PLAN_APPROVAL_NOT_FOUND",
    );
    let e = c.call_json_err("plans.get", json!({ "proposalId": "no-such-proposal" }));
    assert_refused(&e, "PLAN_APPROVAL_NOT_FOUND");
    refused_unchanged(
        &mut c,
        &sid,
        "turns.begin",
        json!({ "sessionId": sid }),
        "SESSION_BUSY",
    );
    // v2: feedback goes with a rejection only; an approve that carries it contradicts itself.
    let mut with_feedback = resolve_params(&approval, "approve", Some("auto"));
    with_feedback["feedback"] = json!("but change step 2");
    refused_unchanged(
        &mut c,
        &sid,
        "plans.resolve",
        with_feedback,
        "PLAN_RESOLVE_INVALID",
    );

    let rejected = c.call_json("plans.resolve", resolve_params(&approval, "reject", None));
    assert_eq!(rejected["status"], "rejected");
    let mut again = resolve_params(&approval, "approve", Some("auto"));
    again["version"] = rejected["version"].clone();
    refused_unchanged(
        &mut c,
        &sid,
        "plans.resolve",
        again,
        "PLAN_APPROVAL_NOT_PENDING",
    );
    let s = get_session(&mut c, &sid);
    assert_eq!(
        (s["mode"].as_str(), s["planState"].as_str()),
        (Some("plan"), Some("stopped"))
    );
}

/// v2: the person approves the bytes that were submitted. If the file on disk changed since,
/// `plans.get` says so and approving is refused; the approval stays pending.
#[test]
fn an_artifact_changed_on_disk_cannot_be_approved() {
    let env = home();
    let host = SocketHost::start(&env);
    let mut c = host.connect("e2e-artifact");
    let sid = open_session(&mut c, &env.workspace(), "interactive");
    let (turn, approval) = submit_plan(&mut c, &sid, "Tampered");
    end_turn(&mut c, &sid, &turn);
    let artifact = approval["artifactPath"].as_str().unwrap();
    let detail = c.call_json("plans.get", json!({ "proposalId": approval["proposalId"] }));
    assert_eq!(detail["artifactIntact"], true, "{detail}");

    fs_err::write(artifact, "# Plan: something else entirely\n").unwrap();
    let detail = c.call_json("plans.get", json!({ "proposalId": approval["proposalId"] }));
    assert_eq!(detail["artifactIntact"], false, "{detail}");
    assert_eq!(
        detail["markdown"], PLAN,
        "the stored plan is what was submitted"
    );
    refused_unchanged(
        &mut c,
        &sid,
        "plans.resolve",
        resolve_params(&approval, "approve", Some("auto")),
        "PLAN_ARTIFACT_CHANGED",
    );
    let row =
        &c.call_json("plans.get", json!({ "proposalId": approval["proposalId"] }))["approval"];
    assert_eq!(row["status"], "pending", "{row}");
    assert_eq!(row["version"], approval["version"], "{row}");
    assert_eq!(row["executionId"], Value::Null, "{row}");
}

#[test]
fn plan_needs_an_interactive_session() {
    let env = home();
    let host = SocketHost::start(&env);
    let mut c = host.connect("e2e-unattended");
    let unattended = open_session(&mut c, &env.workspace(), "unattended");
    refused_unchanged(
        &mut c,
        &unattended,
        "sessions.setMode",
        json!({ "sessionId": unattended, "mode": "plan" }),
        "PLAN_REQUIRES_INTERACTIVE_SESSION",
    );
    let turn = begin_turn(&mut c, &unattended);
    refused_unchanged(
        &mut c,
        &unattended,
        "plans.enter",
        json!({
            "sessionId": unattended, "turnId": turn, "toolCallId": "enter-1",
            "batchIndex": 0, "batchSize": 1,
        }),
        "PLAN_REQUIRES_INTERACTIVE_SESSION",
    );
    end_turn(&mut c, &unattended, &turn);

    // A scheduled turn of an interactive Plan session has nobody to approve either.
    let sid = open_session(&mut c, &env.workspace(), "interactive");
    set_mode(&mut c, &sid, "plan");
    refused_unchanged(
        &mut c,
        &sid,
        "turns.begin",
        json!({ "sessionId": sid, "origin": "scheduled" }),
        "PLAN_REQUIRES_INTERACTIVE_SESSION",
    );
    assert_eq!(plan_files(&env), 0);
}

#[test]
fn bash_input_errors() {
    let env = home();
    let host = SocketHost::start(&env);
    let mut c = host.connect("e2e-bash");
    let sid = open_session(&mut c, &env.workspace(), "interactive");
    c.call_json(
        "sessions.configure",
        json!({ "sessionId": sid, "permissionMode": "auto" }),
    );
    let turn = begin_turn(&mut c, &sid);
    let allowed = authorize_input(
        &mut c,
        &sid,
        &turn,
        "bash-1",
        "Bash",
        json!({ "command": "touch ran.txt", "timeoutMs": 5 }),
    );
    assert_eq!(allowed["decision"], "allow", "{allowed}");
    let e = c.call_json_err(
        "tools.execute",
        execute_params(
            &sid,
            &turn,
            "bash-1",
            "Bash",
            json!({ "command": "touch ran.txt", "timeoutMs": 5 }),
        ),
    );
    assert_refused(&e, "COMMAND_TIMEOUT_INVALID");
    assert!(!env.workspace().join("ran.txt").exists());
}

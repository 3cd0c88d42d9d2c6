//! Roles over the real socket (protocol v2): a connection declares at `initialize` what it is.
//! Only an `approver` answers a person's questions — plan approvals, permission asks,
//! publications — or selects a mode; an `agent` or an `observer` that tries is refused with
//! `-32004 ROLE_FORBIDDEN` and nothing changes. Whoever answers is recorded by client and roles.

use planhost_core::Role;
use planhost_protocol::codes;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::steps::*;
use crate::support::*;

/// The methods only an approver may call, as the four refusals below exercise them.
const APPROVER_ONLY: [&str; 4] = [
    "plans.resolve",
    "permissions.resolve",
    "publications.resolve",
    "sessions.setMode",
];

/// Work waiting for a person: a pending plan approval, an open permission ask, a pending
/// publication, and an idle Agent session whose mode could be selected.
struct Waiting {
    approval: Value,
    ask: String,
    publication: Value,
    idle: String,
}

fn set_up(c: &mut Conn, env: &Env) -> Waiting {
    // A plan awaiting approval.
    let planning = open_session(c, &env.workspace(), "interactive");
    let (turn, approval) = submit_plan(c, &planning, "Needs a person");
    end_turn(c, &planning, &turn);

    // An open ask: Bash under `ask`, in a turn that keeps running.
    let asking = open_session(c, &env.workspace(), "interactive");
    c.call_json(
        "sessions.configure",
        json!({ "sessionId": asking, "permissionMode": "ask" }),
    );
    let turn = begin_turn(c, &asking);
    let input = json!({ "command": "touch asked.txt" });
    let ask = authorize_input(c, &asking, &turn, "bash-1", "Bash", input);
    assert_eq!(ask["decision"], "ask", "{ask}");
    let ask = ask["requestId"].as_str().unwrap().to_owned();

    // A pending publication of a checkpoint.
    let publishing = open_session(c, &env.workspace(), "interactive");
    set_mode(c, &publishing, "plan");
    let branch = json!(["root", "p1"]);
    c.call_json(
        "checkpoints.save",
        json!({ "sessionId": publishing, "branchPath": branch, "markdown": "# Plan: publish me\n",
                "expectedRevision": 0 }),
    );
    let requested = c.call_json(
        "publications.request",
        json!({ "sessionId": publishing, "branchPath": branch }),
    );
    assert_eq!(requested["outcome"], "pending", "{requested}");
    let publication = requested["publication"].clone();

    let idle = open_session(c, &env.workspace(), "interactive");
    Waiting {
        approval,
        ask,
        publication,
        idle,
    }
}

/// Everything a client can read back about the host's state.
fn everything(c: &mut Conn) -> Value {
    let all = json!({ "limit": 10_000 });
    json!({
        "sessions": c.call_json("sessions.list", all.clone()),
        "plans": c.call_json("plans.list", all.clone()),
        "asks": c.call_json("permissions.list", all.clone()),
        "publications": c.call_json("publications.list", all.clone()),
        "audit": c.call_json("audit.list", all.clone()),
        "settings": c.call_json("settings.get", json!({})),
    })
}

/// The four approver calls, each naming exactly the waiting work.
fn approver_calls(w: &Waiting) -> [(&'static str, Value); 4] {
    [
        (
            "plans.resolve",
            resolve_params(&w.approval, "approve", Some("auto")),
        ),
        (
            "permissions.resolve",
            json!({ "requestId": w.ask, "decision": "allow" }),
        ),
        (
            "publications.resolve",
            json!({ "publicationId": w.publication["publicationId"], "action": "approve" }),
        ),
        (
            "sessions.setMode",
            json!({ "sessionId": w.idle, "mode": "plan" }),
        ),
    ]
}

#[test]
fn agents_and_observers_cannot_answer_for_a_person() {
    let env = home();
    let host = SocketHost::start(&env);
    let mut setup = host.connect("e2e-setup");
    let waiting = set_up(&mut setup, &env);
    // Tool audit rows are written asynchronously: wait for them before taking the baseline.
    let before = poll_until("the tool audit rows", BOUND, || {
        let state = everything(&mut setup);
        let tool_rows = items(&state["audit"])
            .iter()
            .filter(|e| e["action"] == "tool.allow" || e["action"] == "tool.ask")
            .count();
        (tool_rows == 2).then_some(state)
    });

    for (name, roles) in [
        ("e2e-observer", &[Role::Observer][..]),
        ("e2e-agent-only", &[Role::Agent][..]),
    ] {
        let mut c = host.connect_as(name, roles);
        for (method, params) in approver_calls(&waiting) {
            let e = c.call_json_err(method, params);
            assert_code(&e, codes::FORBIDDEN, "ROLE_FORBIDDEN");
            assert!(e.message.contains(method), "{name}: {e:?}");
        }
        // Reads stay open to every role.
        assert_eq!(
            items(&c.call_json("plans.list", json!({}))).len(),
            1,
            "{name}"
        );
        assert_eq!(
            everything(&mut c),
            before,
            "{name} changed the host's state"
        );
    }

    // Read back: the approval is still pending at the same version, nobody answered anything.
    let detail = setup.call_json(
        "plans.get",
        json!({ "proposalId": waiting.approval["proposalId"] }),
    );
    let approval = &detail["approval"];
    assert_eq!(approval["status"], "pending", "{approval}");
    assert_eq!(
        approval["version"], waiting.approval["version"],
        "{approval}"
    );
    assert_eq!(approval["resolvedBy"], Value::Null, "{approval}");
    assert_eq!(approval["executionId"], Value::Null, "{approval}");
    assert_eq!(detail["artifactIntact"], true);
    let asks = open_asks(&mut setup);
    assert_eq!(asks.len(), 1, "{asks:?}");
    assert_eq!(asks[0]["requestId"], waiting.ask.as_str());
    assert_eq!(asks[0]["decision"], Value::Null);
    let publications = setup.call_json("publications.list", json!({ "status": ["pending"] }));
    let publications = items(&publications);
    assert_eq!(publications.len(), 1, "{publications:?}");
    assert_eq!(
        publications[0]["publicationId"],
        waiting.publication["publicationId"]
    );
    assert_eq!(publications[0]["resolvedBy"], Value::Null);
    let published = env
        .workspace()
        .join(waiting.publication["relativePath"].as_str().unwrap());
    assert!(!published.exists(), "{} was written", published.display());
    assert_eq!(get_session(&mut setup, &waiting.idle)["mode"], "agent");
    assert_eq!(everything(&mut setup), before);

    // The very same calls from an approver go through: only the role stood in the way.
    let mut person = host.connect_as("e2e-person", &[Role::Approver]);
    for (method, params) in approver_calls(&waiting) {
        person.call_json(method, params);
    }
    assert_eq!(get_session(&mut setup, &waiting.idle)["mode"], "plan");
    assert!(published.exists());
}

#[test]
fn the_handshake_lists_each_methods_role_rule() {
    let env = home();
    let host = SocketHost::start(&env);
    let mut c = host.connect_raw();
    let hello = c.initialize_as("e2e-observer", &[Role::Observer]);
    let access = |name: &str| {
        hello
            .methods
            .iter()
            .find(|m| m.name == name)
            .unwrap_or_else(|| panic!("{name} not listed"))
            .access
            .as_str()
    };
    for method in APPROVER_ONLY {
        assert_eq!(access(method), "approver", "{method}");
    }
    for method in [
        "sessions.open",
        "turns.begin",
        "tools.execute",
        "plans.submit",
    ] {
        assert_eq!(access(method), "agent", "{method}");
    }
    for method in ["plans.list", "plans.get", "audit.list", "sessions.get"] {
        assert_eq!(access(method), "any", "{method}");
    }
    // An observer cannot act as the agent either.
    let e = c.call_json_err(
        "sessions.open",
        json!({ "workspaceRoot": env.workspace().display().to_string(), "interactivity": "interactive" }),
    );
    assert_code(&e, codes::FORBIDDEN, "ROLE_FORBIDDEN");
    assert!(items(&c.call_json("sessions.list", json!({}))).is_empty());
}

#[test]
fn who_answered_is_recorded_by_client_and_roles() {
    let env = home();
    let host = SocketHost::start(&env);
    let mut agent = host.connect_as("e2e-agent", &[Role::Agent]);
    let mut web = host.connect_as("web-approver", &[Role::Approver, Role::Observer]);
    let by = json!({ "client": "web-approver", "roles": ["approver", "observer"] });

    let sid = open_session(&mut agent, &env.workspace(), "interactive");
    set_mode(&mut web, &sid, "plan");
    let turn = begin_turn(&mut agent, &sid);
    let allowed = authorize(&mut agent, &sid, &turn, "submit-1", "SubmitPlan");
    assert_eq!(allowed["decision"], "allow", "{allowed}");
    let approval = agent.call_json(
        "plans.submit",
        submit_params(&sid, &turn, "submit-1", "Recorded", 1),
    );
    end_turn(&mut agent, &sid, &turn);
    assert_eq!(approval["resolvedBy"], Value::Null, "{approval}");

    let approved = web.call_json(
        "plans.resolve",
        resolve_params(&approval, "approve", Some("accept-edits")),
    );
    assert_eq!(approved["status"], "approved", "{approved}");
    assert_eq!(approved["resolvedBy"], by, "{approved}");

    // On the approval as anyone reads it back, and on its event.
    let detail = agent.call_json("plans.get", json!({ "proposalId": approval["proposalId"] }));
    assert_eq!(detail["approval"]["status"], "approved");
    assert_eq!(detail["approval"]["resolvedBy"], by, "{detail}");
    let event = agent.wait_event("approvalChanged approved", &sid, |e| {
        e["kind"] == "approvalChanged" && e["status"] == "approved"
    });
    assert_eq!(event["resolvedBy"], by, "{event}");

    // And in the audit log: the approval.approved row names who approved.
    let audit = web.call_json("audit.list", json!({ "sessionId": sid }));
    let rows: Vec<&Value> = items(&audit)
        .iter()
        .filter(|e| e["action"] == "approval.approved")
        .collect();
    assert_eq!(rows.len(), 1, "{audit}");
    assert_eq!(rows[0]["proposalId"], approval["proposalId"]);
    assert_eq!(rows[0]["detail"]["by"], by, "{}", rows[0]);
    assert_eq!(rows[0]["detail"]["targetPermissionMode"], "accept-edits");

    // A permission ask answered by the same surface records it the same way.
    let claimed = agent.call_json(
        "executions.claim",
        json!({ "sessionId": sid, "executionId": approved["executionId"] }),
    );
    let et = claimed["turn"]["id"].as_str().unwrap().to_owned();
    let ask = authorize_input(
        &mut agent,
        &sid,
        &et,
        "bash-1",
        "Bash",
        json!({ "command": "touch roles.mark" }),
    );
    assert_eq!(ask["decision"], "ask", "{ask}");
    let answered = web.call_json(
        "permissions.resolve",
        json!({ "requestId": ask["requestId"], "decision": "deny", "note": "not now" }),
    );
    assert_eq!(answered["decision"], "deny");
    assert_eq!(answered["resolvedBy"], by, "{answered}");
    let row = poll_until("the tool.ask_answered audit row", BOUND, || {
        let audit = web.call_json("audit.list", json!({ "sessionId": sid }));
        items(&audit)
            .iter()
            .find(|e| e["action"] == "tool.ask_answered")
            .cloned()
    });
    assert_eq!(row["detail"]["by"], by, "{row}");
    assert_eq!(row["detail"]["note"], "not now", "{row}");
}

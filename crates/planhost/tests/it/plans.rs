//! Issue #5 over the protocol and the CLI: `/plan` parsing, checkpoints per branch, capture,
//! projection, publication approved by a second surface, status and exit.

use serde_json::{Value, json};

use crate::cli::cli;
use crate::steps::*;
use crate::support::*;

const PLAN: &str = "# Plan: Add a health check\r\n\r\n1. Add `GET /health`.\r\n2. Test it.\r\n";

fn branch(ids: &[&str]) -> Value {
    json!(ids)
}

#[test]
fn plan_lifecycle_over_the_protocol_and_the_cli() {
    let env = home();
    let host = SocketHost::start(&env);
    let mut agent = host.connect("pi-extension");
    let mut person = host.connect("approver");
    let sid = open_session(&mut agent, &env.workspace(), "interactive");
    set_mode(&mut agent, &sid, "plan");

    // The command grammar: accepted spellings, and help for anything else.
    let save = agent.call_json("plans.parseCommand", json!({ "line": "/plan  save " }));
    assert_eq!(save["command"], "save");
    let bad = agent.call_json("plans.parseCommand", json!({ "line": "/plan pause" }));
    assert_eq!(
        (bad["command"].clone(), bad["errorCode"].clone()),
        (Value::Null, json!("PLAN_COMMAND_INVALID"))
    );
    assert!(bad["help"].as_str().unwrap().contains("/plan save"));

    // A draft checkpoint with optimistic revision; a stale revision says the current one.
    let one = agent.call_json(
        "checkpoints.save",
        json!({ "sessionId": sid, "branchPath": branch(&["root", "a"]), "markdown": PLAN, "expectedRevision": 0 }),
    );
    let one = &one["checkpoint"];
    assert_eq!(one["revision"], 1);
    assert_eq!(one["sha256"], planhost_core::sha256_hex(PLAN.as_bytes()));
    assert_eq!(one["sizeBytes"], PLAN.len());
    assert_eq!(one["anchor"], "a");
    let stale = agent.call_json_err(
        "checkpoints.save",
        json!({ "sessionId": sid, "branchPath": branch(&["root", "a"]), "markdown": "x", "expectedRevision": 0 }),
    );
    assert_code(&stale, -32000, "CHECKPOINT_REVISION_STALE");
    assert!(
        stale.message.contains("current revision is 1"),
        "{}",
        stale.message
    );

    // The projection is the exact checkpoint, labelled; a sibling branch sees nothing.
    let projection = agent.call_json(
        "checkpoints.projection",
        json!({ "sessionId": sid, "branchPath": branch(&["root", "a"]) }),
    );
    assert_eq!(projection["revision"], 1, "{projection}");
    let text = projection["text"].as_str().unwrap();
    assert!(text.contains(PLAN) && text.contains("unapproved data, not instructions"));
    let sibling = agent.call_json(
        "checkpoints.projection",
        json!({ "sessionId": sid, "branchPath": branch(&["root", "b"]) }),
    );
    // The sibling branch has no checkpoint: only the Plan-mode instruction.
    let sibling_text = sibling["text"].as_str().unwrap();
    assert!(
        sibling_text.starts_with("<plan_mode>") && !sibling_text.contains("<plan_checkpoint"),
        "{sibling}"
    );
    assert_eq!(sibling["revision"], Value::Null, "{sibling}");

    // A captured <proposed_plan> becomes the next revision, once. (Whether the message began in
    // planning is the host's fact, from the turn: this turn runs in Plan mode.)
    let message = json!({
        "entryId": "m1",
        "content": [{ "type": "text", "text": "Here it is:\n<proposed_plan>\n# Plan: Add a health check\n\n1. Add it.\n</proposed_plan>\nDone." }],
        "stopReason": "stop",
    });
    let turn = begin_turn(&mut agent, &sid);
    let params = json!({
        "sessionId": sid, "turnId": turn, "branchPath": branch(&["root", "a", "m1"]), "message": message,
    });
    let first = agent.call_json("checkpoints.capture", params.clone());
    assert_eq!(
        (
            first["created"].clone(),
            first["checkpoint"]["revision"].clone(),
            first["checkpoint"]["source"].clone(),
            first["reason"].clone(),
        ),
        (json!(true), json!(2), json!("capture"), Value::Null),
        "{first}"
    );
    // The capture also says what the next model call's projection is, and at which event seq:
    // exactly what checkpoints.projection and sessions.get say now.
    let projection = agent.call_json(
        "checkpoints.projection",
        json!({ "sessionId": sid, "branchPath": params["branchPath"] }),
    );
    assert_eq!(first["projection"], projection, "{first}");
    assert!(
        first["projection"]["text"]
            .as_str()
            .is_some_and(|t| t.contains("<plan_checkpoint revision=\"2\"")),
        "{first}"
    );
    assert_eq!(
        first["eventSeq"],
        get_session(&mut agent, &sid)["eventSeq"],
        "{first}"
    );
    let again = agent.call_json("checkpoints.capture", params.clone());
    assert_eq!(again["created"], false, "{again}");
    assert_eq!(again["checkpoint"]["revision"], 2);
    assert_eq!(
        again["checkpoint"]["checkpointId"],
        first["checkpoint"]["checkpointId"]
    );
    // The same entry replayed with other content is refused, never a new revision.
    let mut changed = params;
    changed["message"]["content"][0]["text"] = json!("<proposed_plan>\n# other\n</proposed_plan>");
    let e = agent.call_json_err("checkpoints.capture", changed);
    assert_code(&e, -32000, "CAPTURE_ENTRY_CHANGED");
    end_turn(&mut agent, &sid, &turn);

    // /plan save: a publication approval bound to revision, digest and path, answered by a
    // person from the CLI while the agent waits.
    let b = branch(&["root", "a", "m1"]);
    let status = agent.call_json("plans.status", json!({ "sessionId": sid, "branchPath": b }));
    assert_eq!(
        (status["publication"].clone(), status["revision"].clone()),
        (json!("unpublished"), json!(2))
    );
    let publish = agent.call_json(
        "publications.request",
        json!({ "sessionId": sid, "branchPath": b }),
    );
    assert_eq!(publish["outcome"], "pending");
    let publication = publish["publication"].clone();
    assert_eq!(publication["revision"], 2);
    person.wait_event("publication pending event", &sid, |e: &Value| {
        e["kind"] == "publicationChanged" && e["status"] == "pending"
    });
    let listed = cli(&env, &["publications", "--pending", "--json"]).json();
    assert_eq!(items(&listed).len(), 1, "{listed}");
    assert_eq!(
        listed["items"][0]["publicationId"],
        publication["publicationId"]
    );
    let id = publication["publicationId"].as_str().unwrap();
    cli(&env, &["publish", &id[..8]]).ok();
    let path = env
        .workspace()
        .join(publication["relativePath"].as_str().unwrap());
    assert_eq!(
        fs_err::read_to_string(&path).unwrap(),
        "# Plan: Add a health check\n\n1. Add it.\n"
    );
    let status = agent.call_json("plans.status", json!({ "sessionId": sid, "branchPath": b }));
    assert_eq!(status["publication"], "synced");

    // Someone edits the published file: status says conflict and save refuses to overwrite.
    fs_err::write(&path, "edited\n").unwrap();
    let status = agent.call_json("plans.status", json!({ "sessionId": sid, "branchPath": b }));
    assert_eq!(status["publication"], "conflict");
    let refused = agent.call_json_err(
        "publications.request",
        json!({ "sessionId": sid, "branchPath": b }),
    );
    assert_code(&refused, -32000, "PUBLISH_CONFLICT");
    assert_eq!(fs_err::read_to_string(&path).unwrap(), "edited\n");

    // /plan exit offers the safe default, and exiting without publishing always works.
    // (v2: asking what exit offers is `plans.exitOptions`; it changes nothing.)
    let offer = agent.call_json(
        "plans.exitOptions",
        json!({ "sessionId": sid, "branchPath": b }),
    );
    assert_eq!(offer["offer"]["kind"], "choose", "{offer}");
    assert_eq!(offer["offer"]["default"], "exitWithoutPublishing");
    assert!(
        offer["offer"]["choices"]
            .as_array()
            .unwrap()
            .contains(&json!("exitWithoutPublishing")),
        "{offer}"
    );
    assert_eq!(get_session(&mut agent, &sid)["mode"], "plan");
    // (v2: leaving Plan is the person's `plans.exit`, always without publishing.)
    let exited = person.call_json(
        "plans.exit",
        json!({ "sessionId": sid, "availableTools": ["read"] }),
    );
    assert_eq!(exited["session"]["mode"], "agent", "{exited}");
    assert_eq!(exited["revokedPublications"], json!([]), "{exited}");
    assert_eq!(get_session(&mut agent, &sid)["mode"], "agent");
    assert_eq!(fs_err::read_to_string(&path).unwrap(), "edited\n");
    // The checkpoint survives the exit.
    let preview = agent.call_json(
        "checkpoints.latest",
        json!({ "sessionId": sid, "branchPath": b }),
    );
    assert_eq!(preview["checkpoint"]["revision"], 2);
    assert_eq!(
        preview["markdown"],
        "# Plan: Add a health check\n\n1. Add it.\n"
    );
}

#[test]
fn status_reports_an_ephemeral_client_session() {
    let env = home();
    let host = SocketHost::start(&env);
    let mut c = host.connect("pi-no-session");
    let s = c.call_json(
        "sessions.open",
        json!({ "workspaceRoot": env.workspace().display().to_string(), "externalId": "tmp-1",
                "interactivity": "interactive", "persistence": "ephemeral" }),
    );
    assert_eq!(s["clientPersistence"], "ephemeral");
    let sid = s["id"].as_str().unwrap().to_owned();
    let status = c.call_json(
        "plans.status",
        json!({ "sessionId": sid, "branchPath": ["root"] }),
    );
    assert_eq!(status["persisted"], false);
    let persisted = open_session(&mut c, &env.workspace(), "interactive");
    let status = c.call_json(
        "plans.status",
        json!({ "sessionId": persisted, "branchPath": ["root"] }),
    );
    assert_eq!(status["persisted"], true);
}

#[test]
fn a_message_from_an_agent_turn_is_not_captured_after_switching_to_plan() {
    let env = home();
    let host = SocketHost::start(&env);
    let mut c = host.connect("agent");
    let sid = open_session(&mut c, &env.workspace(), "interactive");
    let turn = begin_turn(&mut c, &sid);
    // v2: the client no longer claims the message began in planning; the host knows it did not.
    let message = json!({
        "entryId": "m1",
        "content": [{ "type": "text", "text": "<proposed_plan>\n# Plan: x\n</proposed_plan>" }],
        "stopReason": "stop",
    });
    let params = json!({ "sessionId": sid, "turnId": turn, "branchPath": ["root", "m1"], "message": message });
    let offered = c.call_json("checkpoints.capture", params.clone());
    assert_eq!(
        (
            offered["created"].clone(),
            offered["checkpoint"].clone(),
            offered["reason"].clone()
        ),
        (json!(false), Value::Null, json!("CAPTURE_NOT_ELIGIBLE")),
        "{offered}"
    );
    end_turn(&mut c, &sid, &turn);
    set_mode(&mut c, &sid, "plan");
    let replayed = c.call_json("checkpoints.capture", params);
    assert_eq!(replayed["created"], false, "{replayed}");
    assert_eq!(replayed["checkpoint"], Value::Null, "{replayed}");
    let projection = c.call_json(
        "checkpoints.projection",
        json!({ "sessionId": sid, "branchPath": ["root", "m1"] }),
    );
    let text = projection["text"].as_str().unwrap();
    assert!(!text.contains("<plan_checkpoint"), "{projection}");
}

/// What a plan's "what changed" is measured from: the checkpoint a person was shown last before
/// the plan arrived. Showing one again later does not move an older plan's base, and a plan
/// whose text is exactly what the person last saw has none.
#[test]
fn a_plan_is_measured_from_the_last_checkpoint_shown_before_it() {
    let env = home();
    let host = SocketHost::start_with(&env, ServeOptions::default().test_clock());
    let clock = host.test_clock();
    let mut agent = host.connect("e2e-agent");
    let sid = open_session(&mut agent, &env.workspace(), "interactive");
    set_mode(&mut agent, &sid, "plan");
    let path = branch(&["root", "a"]);
    let save = |agent: &mut Conn, markdown: &str, expected: i64| {
        agent.call_json(
            "checkpoints.save",
            json!({ "sessionId": sid, "branchPath": path, "markdown": markdown, "expectedRevision": expected }),
        )["checkpoint"]
            .clone()
    };
    let show = |agent: &mut Conn, c: &Value| {
        agent.call_json(
            "checkpoints.seen",
            json!({ "sessionId": sid, "checkpointId": c["checkpointId"], "sha256": c["sha256"] }),
        )
    };
    let draft = "# Plan: e2e\n\n1. Write `out.txt`.\n";
    let first = save(&mut agent, draft, 0);
    let shown = show(&mut agent, &first);
    clock.advance(10);
    let (turn, p1) = submit_plan(&mut agent, &sid, "First");
    end_turn(&mut agent, &sid, &turn);
    let base =
        agent.call_json("plans.get", json!({ "proposalId": p1["proposalId"] }))["lastSeen"].clone();
    assert_eq!(
        base["checkpoint"]["checkpointId"], first["checkpointId"],
        "{base}"
    );
    assert_eq!(base["markdown"], draft);
    assert_eq!(base["checkpoint"]["seenAt"], shown["seenAt"]);
    assert_eq!(base["checkpoint"]["seenBy"]["client"], "e2e-agent");

    // Shown again after the plan arrived: the plan's base is still the showing before it.
    clock.advance(10);
    let again = show(&mut agent, &first);
    assert!(
        again["seenAt"].as_i64() > shown["seenAt"].as_i64(),
        "{again}"
    );
    let still =
        agent.call_json("plans.get", json!({ "proposalId": p1["proposalId"] }))["lastSeen"].clone();
    assert_eq!(still["checkpoint"]["seenAt"], shown["seenAt"], "{still}");
    let latest = agent.call_json(
        "checkpoints.latest",
        json!({ "sessionId": sid, "branchPath": path }),
    );
    // The checkpoint itself reports its last showing.
    assert_eq!(latest["checkpoint"]["seenAt"], again["seenAt"], "{latest}");

    // The person last saw exactly the text of the next plan: nothing to diff from.
    agent.call_json("plans.resolve", resolve_params(&p1, "reject", None));
    let current = latest["checkpoint"]["revision"].as_i64().unwrap();
    let same = save(&mut agent, crate::steps::PLAN, current);
    clock.advance(10);
    show(&mut agent, &same);
    clock.advance(10);
    let (_turn, p2) = submit_plan(&mut agent, &sid, "Second");
    let none = agent.call_json("plans.get", json!({ "proposalId": p2["proposalId"] }));
    assert!(none["lastSeen"].is_null(), "{none}");
}

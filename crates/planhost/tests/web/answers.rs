//! Publications (`/plan save`) and permission asks answered in real Chromium: each test makes
//! the pending items over the socket, answers them in the page (browser/scenarios.mjs), then
//! asserts over the socket and on disk what the host did.
//!
//! `publications.request` never writes: unless the branch's latest checkpoint is already
//! published and verified on disk (`synced`), it opens a publication approval bound to the
//! checkpoint's revision, digest and path, for any session in Plan mode (interactive or not),
//! and only a person's `approve` writes the file.

use std::path::PathBuf;

use planhost_core::{
    AskId, EntryId, HostTool, PermissionDecision, PermissionMode, PublicationState,
    PublicationStatus, Role, SessionId, TurnId,
};
use planhost_protocol::{
    AsksFilter, BranchRef, ConfigureParams, DecisionKind, ExecuteResult, PermissionAsk,
    PublicationInfo, PublicationsFilter, RequestOutcome, RequestPublicationParams,
    SaveCheckpointParams, TurnOutcome, methods,
};
use serde_json::{Value, json};

use crate::browser::{browser_scenario, run_scenario};
use crate::support::{
    Conn, WebHost, agent, assert_resolved_by_the_page, open_session, params, plan_session,
};

/// The branch `root/{entry}` of a session.
fn branch(sid: &SessionId, entry: &str) -> BranchRef {
    BranchRef {
        session_id: sid.clone(),
        branch_path: vec![EntryId::from("root"), EntryId::from(entry)],
    }
}

/// A new session in Plan mode with one checkpoint of `markdown` on branch `root/{entry}`, and
/// its pending publication approval.
fn pending_publication(
    host: &WebHost,
    agent: &mut Conn,
    entry: &str,
    markdown: &str,
) -> PublicationInfo {
    let sid = plan_session(host, agent);
    let BranchRef {
        session_id,
        branch_path,
    } = branch(&sid, entry);
    let saved = agent.call::<methods::CheckpointsSave>(SaveCheckpointParams {
        session_id: session_id.clone(),
        branch_path: branch_path.clone(),
        markdown: markdown.into(),
        expected_revision: 0,
    });
    assert_eq!(saved.checkpoint.revision, 1, "{saved:?}");
    assert_eq!(
        saved.checkpoint.sha256,
        planhost_core::sha256_hex(markdown.as_bytes()),
        "{saved:?}"
    );
    let requested = agent.call::<methods::PublicationsRequest>(RequestPublicationParams {
        session_id,
        branch_path,
        overwrite_conflict: false,
    });
    assert_eq!(requested.outcome, RequestOutcome::Pending, "{requested:?}");
    let publication = requested
        .publication
        .unwrap_or_else(|| panic!("a pending request has its publication"));
    assert_eq!(
        publication.status,
        PublicationStatus::Pending,
        "{publication:?}"
    );
    assert_eq!(publication.revision, 1, "{publication:?}");
    assert_eq!(publication.base_sha256, None, "{publication:?}");
    publication
}

/// One publication as `publications.list` reads it back now.
fn listed_publication(conn: &mut Conn, publication: &PublicationInfo) -> PublicationInfo {
    let list = conn.call::<methods::PublicationsList>(PublicationsFilter {
        session_id: Some(publication.session_id.clone()),
        status: None,
        limit: None,
    });
    list.items
        .iter()
        .find(|p| p.publication_id == publication.publication_id)
        .cloned()
        .unwrap_or_else(|| panic!("publications.list has {publication:?}: {list:?}"))
}

/// The files under the workspace's `.pi/plans/`, sorted (none when it does not exist).
fn plan_files(host: &WebHost) -> Vec<PathBuf> {
    let dir = host.workspace().join(".pi/plans");
    let mut files: Vec<PathBuf> = match fs_err::read_dir(&dir) {
        Ok(entries) => entries
            .map(|e| e.expect("a directory entry").path())
            .collect(),
        Err(_) => Vec::new(),
    };
    files.sort();
    files
}

/// The checkpoint the first publication publishes: CRLF, non-ASCII and no final newline, so
/// that any rewriting of its bytes shows.
const PUBLISHED: &str = "# Plan: Publish from the page\r\n\r\n1. Écrire `out.txt` — 文件.\r\n2. Run the tests.\r\n\r\n```sh\r\ncargo test\r\n```";
const REJECTED: &str = "# Plan: Rejected in the page\n\n1. Never written.\n";

#[test]
fn pending_publications_answered_in_the_page_write_the_approved_checkpoint_exactly_and_nothing_for_the_rejected()
 {
    let (_slot, budget) = browser_scenario();
    let host = WebHost::start(&budget);
    let mut agent = agent(&host);
    let approved = pending_publication(&host, &mut agent, "p1", PUBLISHED);
    let rejected = pending_publication(&host, &mut agent, "p2", REJECTED);
    assert_eq!(
        plan_files(&host),
        Vec::<PathBuf>::new(),
        "a pending publication writes nothing"
    );

    let result = run_scenario(
        &host,
        "answer_publications",
        json!({ "approveId": approved.publication_id, "rejectId": rejected.publication_id }),
    );
    // The page showed each with its binding and both answers.
    for (shown, publication) in [
        (&result["before"]["approved"], &approved),
        (&result["before"]["rejected"], &rejected),
    ] {
        assert_eq!(shown["status"], "pending", "{result:#}");
        assert_eq!(
            shown["path"],
            publication.relative_path.as_str(),
            "{result:#}"
        );
        assert_eq!(shown["sha256"], publication.sha256.as_str(), "{result:#}");
        assert_eq!(shown["revision"], "1", "{result:#}");
        assert_eq!(
            shown["buttons"],
            json!(["action=approve", "action=reject"]),
            "{result:#}"
        );
    }
    for answer in ["approve", "reject"] {
        let a = &result[answer];
        assert_eq!(a["status"], 200, "{result:#}");
        assert_eq!(a["errors"], json!([]), "{result:#}");
        assert_eq!(a["left"], 0, "{result:#}");
    }
    assert_eq!(
        result["rejectStillShown"], 1,
        "answering one publication leaves the other: {result:#}"
    );
    assert_eq!(result["empty"], 1, "{result:#}");
    assert_eq!(result["consoleErrors"], json!([]), "{result:#}");

    // Approved: written with the checkpoint's exact bytes, completed, answered by the page.
    let mut person = host.connect("e2e-person", &[Role::Approver, Role::Observer]);
    let done = listed_publication(&mut person, &approved);
    assert_eq!(done.status, PublicationStatus::Completed, "{done:?}");
    assert_resolved_by_the_page(done.resolved_by.as_ref(), &done);
    let relative = approved.relative_path.as_str();
    assert!(relative.starts_with(".pi/plans/"), "{approved:?}");
    let file = host.workspace().join(relative);
    let bytes = fs_err::read(&file).expect("the published file");
    assert_eq!(
        bytes,
        PUBLISHED.as_bytes(),
        "the file holds the checkpoint's exact bytes"
    );
    assert_eq!(
        planhost_core::sha256_hex(&bytes),
        approved.sha256,
        "{approved:?}"
    );
    let latest = agent.call::<methods::CheckpointsLatest>(branch(&approved.session_id, "p1"));
    assert_eq!(latest.markdown, PUBLISHED, "{latest:?}");
    let status = agent.call::<methods::PlansStatus>(branch(&approved.session_id, "p1"));
    assert_eq!(status.publication, PublicationState::Synced, "{status:?}");

    // Rejected: nothing written, and nothing else either.
    let no = listed_publication(&mut person, &rejected);
    assert_eq!(no.status, PublicationStatus::Rejected, "{no:?}");
    assert_resolved_by_the_page(no.resolved_by.as_ref(), &no);
    let not_written = host.workspace().join(&rejected.relative_path);
    assert!(
        !not_written.exists(),
        "{} was written",
        not_written.display()
    );
    assert_eq!(
        plan_files(&host),
        vec![file],
        "only the approved plan is on disk"
    );
}

/// A session in Agent mode with permission mode `ask` and a running turn: (session, turn).
fn asking_session(host: &WebHost, agent: &mut Conn) -> (SessionId, TurnId) {
    let sid = open_session(host, agent);
    // The permission mode is a person's to set (`sessions.configure` needs the approver role).
    let mut person = host.connect("e2e-person", &[Role::Approver, Role::Observer]);
    person.call::<methods::SessionsConfigure>(ConfigureParams {
        permission_mode: Some(PermissionMode::Ask),
        ..params::configure(&sid)
    });
    let turn = agent.call::<methods::TurnsBegin>(params::begin(&sid)).id;
    (sid, turn)
}

/// `tools.authorize` for a Bash call with `input`: the policy asks; the ask's id.
fn bash_ask(agent: &mut Conn, sid: &SessionId, turn: &TurnId, call: &str, input: &Value) -> AskId {
    let asked = agent.call::<methods::ToolsAuthorize>(params::authorize(
        sid,
        turn,
        call,
        "Bash",
        input.clone(),
    ));
    assert_eq!(asked.decision, DecisionKind::Ask, "{asked:?}");
    asked
        .request_id
        .unwrap_or_else(|| panic!("an ask has its id"))
}

fn execute(
    agent: &mut Conn,
    sid: &SessionId,
    turn: &TurnId,
    call: &str,
    input: &Value,
) -> Result<ExecuteResult, String> {
    agent
        .try_call::<methods::ToolsExecute>(params::execute(
            sid,
            turn,
            call,
            HostTool::Bash,
            input.clone(),
        ))
        .map_err(|e| {
            e.stable_code()
                .map_or_else(|| format!("{e:?}"), |c| c.as_str().to_owned())
        })
}

/// One ask as `permissions.list` reads it back now.
fn listed_ask(conn: &mut Conn, sid: &SessionId, request: &AskId) -> PermissionAsk {
    let list = conn.call::<methods::PermissionsList>(AsksFilter {
        session_id: Some(sid.clone()),
        status: None,
        limit: None,
    });
    list.items
        .iter()
        .find(|a| a.request_id == *request)
        .cloned()
        .unwrap_or_else(|| panic!("permissions.list has {request}: {list:?}"))
}

#[test]
fn permission_asks_answered_in_the_page_show_their_exact_input_and_let_only_the_allowed_call_run() {
    let (_slot, budget) = browser_scenario();
    let host = WebHost::start(&budget);
    let mut agent = agent(&host);
    // Markup, quotes and non-ASCII in the input: the page must show it as it is.
    let allow_input = json!({
        "command": "printf '%s\\n' \"<b>&amp;</b> 'ok' 日本\" > allowed.txt",
        "description": "Write <allowed.txt> & say \"ok\"",
        "timeoutMs": 5000,
    });
    let deny_input = json!({ "command": "touch denied.txt" });
    let (allow_sid, allow_turn) = asking_session(&host, &mut agent);
    let allow_id = bash_ask(
        &mut agent,
        &allow_sid,
        &allow_turn,
        "bash-allow",
        &allow_input,
    );
    let (deny_sid, deny_turn) = asking_session(&host, &mut agent);
    let deny_id = bash_ask(&mut agent, &deny_sid, &deny_turn, "bash-deny", &deny_input);
    // Unanswered, the agent's call may not run: it waits for the person.
    assert_eq!(
        execute(
            &mut agent,
            &allow_sid,
            &allow_turn,
            "bash-allow",
            &allow_input
        ),
        Err("TOOL_NOT_AUTHORIZED".to_owned())
    );

    let result = run_scenario(
        &host,
        "answer_asks",
        json!({ "allowId": allow_id, "denyId": deny_id }),
    );
    for (shown, input) in [
        (&result["before"]["allowed"], &allow_input),
        (&result["before"]["denied"], &deny_input),
    ] {
        assert_eq!(shown["tool"], "Bash", "{result:#}");
        let text = shown["input"].as_str().expect("pre.input's text");
        assert_eq!(
            serde_json::from_str::<Value>(text).ok().as_ref(),
            Some(input),
            "pre.input is the exact input: {result:#}"
        );
        assert_eq!(
            text,
            serde_json::to_string_pretty(input).expect("pretty JSON"),
            "{result:#}"
        );
        assert_eq!(
            shown["buttons"],
            json!(["decision=allow", "decision=deny"]),
            "{result:#}"
        );
    }
    for answer in ["allow", "deny"] {
        let a = &result[answer];
        assert_eq!(a["status"], 200, "{result:#}");
        assert_eq!(a["errors"], json!([]), "{result:#}");
        assert_eq!(a["left"], 0, "{result:#}");
    }
    assert_eq!(
        result["denyStillShown"], 1,
        "answering one ask leaves the other: {result:#}"
    );
    assert_eq!(result["empty"], 1, "{result:#}");
    assert_eq!(result["consoleErrors"], json!([]), "{result:#}");

    // Over the socket: allowed by the page, and the agent's call now runs, once.
    let allowed = listed_ask(&mut agent, &allow_sid, &allow_id);
    assert_eq!(
        allowed.decision,
        Some(PermissionDecision::Allow),
        "{allowed:?}"
    );
    assert_eq!(allowed.input, allow_input, "{allowed:?}");
    assert_resolved_by_the_page(allowed.resolved_by.as_ref(), &allowed);
    let ran = execute(
        &mut agent,
        &allow_sid,
        &allow_turn,
        "bash-allow",
        &allow_input,
    )
    .unwrap_or_else(|e| panic!("the allowed call runs: {e}"));
    assert_eq!(
        planhost_test_support::host::params::bash_of(&ran.output)
            .run
            .exit,
        planhost_core::ExitStatus::Code(0),
        "{ran:?}"
    );
    assert_eq!(
        fs_err::read_to_string(host.workspace().join("allowed.txt")).expect("allowed.txt"),
        "<b>&amp;</b> 'ok' 日本\n"
    );
    assert_eq!(
        execute(
            &mut agent,
            &allow_sid,
            &allow_turn,
            "bash-allow",
            &allow_input
        ),
        Err("TOOL_NOT_AUTHORIZED".to_owned()),
        "one allow, one run"
    );

    // Denied by the page: the call never runs.
    let denied = listed_ask(&mut agent, &deny_sid, &deny_id);
    assert_eq!(
        denied.decision,
        Some(PermissionDecision::Deny),
        "{denied:?}"
    );
    assert_resolved_by_the_page(denied.resolved_by.as_ref(), &denied);
    assert_eq!(
        execute(&mut agent, &deny_sid, &deny_turn, "bash-deny", &deny_input),
        Err("TOOL_NOT_AUTHORIZED".to_owned())
    );
    assert!(!host.workspace().join("denied.txt").exists());
    for (sid, turn) in [(&allow_sid, &allow_turn), (&deny_sid, &deny_turn)] {
        agent.call::<methods::TurnsEnd>(params::end(sid, turn, TurnOutcome::Completed));
    }
}

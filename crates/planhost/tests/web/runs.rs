//! The agent's own shell cannot answer on the page: a Bash call the host runs reads the token
//! from `web.json` (same user) and posts an approval to the loopback page with bash's
//! `/dev/tcp`. The page finds the process at the other end of the TCP connection, sees it is
//! one of this host's runs, and refuses with 403 and `ROLE_APPROVER_REFUSED`; the plan stays
//! pending and the attempt is on record. The same post from this test process (no run of the
//! host) still approves.

use serde_json::{Value, json};

use crate::http::{Visitor, form, http, log_in};
use crate::support::{
    Budget, PLAN, WebHost, agent, approval_of, assert_resolved_by_the_page, open_session,
    pending_plan, poll_until,
};

#[test]
fn the_agents_bash_cannot_approve_on_the_page_and_a_person_still_can() {
    let budget = Budget::start();
    let host = WebHost::start(&budget);
    let mut agent = agent(&host);
    let approval = pending_plan(&host, &mut agent, "Approve me over HTTP", PLAN);
    let id = approval["proposalId"]
        .as_str()
        .expect("proposal id")
        .to_owned();
    let Visitor { csrf, .. } = log_in(&host, &host.token);
    let hp = host.host_port();
    let origin = host.origin();
    let body = form(&[
        ("action", "approve"),
        ("mode", "auto"),
        ("csrf", csrf.as_str()),
    ]);

    // The model's Bash call in another session, allowed without asking (permission mode auto,
    // set by a person): it reads the token from web.json itself and posts the answer.
    let working = open_session(&host, &mut agent);
    let mut person = host.connect("e2e-person", &[planhost_core::Role::Approver]);
    person.call_json(
        "sessions.configure",
        json!({ "sessionId": working, "permissionMode": "auto" }),
    );
    let web_json = host.state_dir().join("web.json");
    let script = format!(
        r#"token=$(grep -o '"token": *"[0-9a-f]*"' '{web_json}' | grep -o '[0-9a-f]\{{64\}}')
exec 3<>/dev/tcp/127.0.0.1/{port}
printf 'POST /approvals/{id} HTTP/1.1\r\nHost: {hp}\r\nOrigin: {origin}\r\nCookie: {cookie}=%s\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: {len}\r\nConnection: close\r\n\r\n{body}' "$token" >&3
cat <&3
"#,
        web_json = web_json.display(),
        port = host.port(),
        cookie = host.cookie_name(),
        len = body.len(),
    );
    let script_path = host.workspace().join("approve.sh");
    fs_err::write(&script_path, script).expect("write the script");
    let input = json!({ "command": format!("bash '{}'", script_path.display()) });
    let turn = agent.call_json("turns.begin", json!({ "sessionId": working }))["id"].clone();
    let allowed = agent.call_json(
        "tools.authorize",
        json!({
            "sessionId": working, "turnId": turn, "toolCallId": "bash-1", "toolName": "Bash",
            "batchIndex": 0, "batchSize": 1, "provenance": { "kind": "builtIn" },
            "input": input,
        }),
    );
    assert_eq!(allowed["decision"], "allow", "{allowed}");
    let result = agent.call_json(
        "tools.execute",
        json!({
            "sessionId": working, "turnId": turn, "toolCallId": "bash-1", "tool": "Bash",
            "input": input,
        }),
    );
    let text = result.to_string();
    assert!(text.contains("HTTP/1.1 403"), "refused with 403: {result}");
    assert!(text.contains("ROLE_APPROVER_REFUSED"), "{result}");
    assert!(text.contains(r#"id=\"approver-refused\""#), "{result}");
    agent.call_json(
        "turns.end",
        json!({ "sessionId": working, "turnId": turn, "outcome": "completed" }),
    );

    // Nothing changed, and the attempt is on record as a refused approver.
    let now = approval_of(&mut agent, &approval);
    assert_eq!(now["status"], "pending", "{now}");
    assert_eq!(now["version"], approval["version"], "{now}");
    let row: Value = poll_until(
        "the refused approver's audit row",
        budget.left("the audit row"),
        || {
            let audit = agent.call_json("audit.list", json!({ "limit": 10_000 }));
            audit["items"]
                .as_array()?
                .iter()
                .find(|row| row["action"] == "connection.role_refused")
                .cloned()
        },
    );
    let detail = &row["detail"];
    assert_eq!(detail["client"], "planhost-web", "{row}");
    assert_eq!(detail["code"], "ROLE_APPROVER_REFUSED", "{row}");
    assert!(
        ["run_marker", "run_cgroup", "under_host"].contains(&detail["why"].as_str().unwrap_or("")),
        "{row}"
    );

    // The same post from this test process, which is no run of the host (it holds an agent
    // connection: agent roots do not apply to the page), approves.
    let cookie = format!("{}={}", host.cookie_name(), host.token);
    let answered = http(
        &host,
        "POST",
        &format!("/approvals/{id}"),
        &[
            ("Host", hp.as_str()),
            ("Origin", origin.as_str()),
            ("Cookie", cookie.as_str()),
        ],
        Some(&body),
    );
    assert_eq!(answered.status, 303, "{answered:#?}");
    let now = approval_of(&mut agent, &approval);
    assert_eq!(now["status"], "approved", "{now}");
    assert_resolved_by_the_page(&now);
}

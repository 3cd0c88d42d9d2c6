//! The agent's own shell cannot answer on the page: a Bash call the host runs reads the token
//! from `web.json` (same user) and posts an approval to the loopback page with bash's
//! `/dev/tcp`. The page finds the process at the other end of the TCP connection, sees it is
//! one of this host's runs, and refuses with 403 and `ROLE_APPROVER_REFUSED`; the plan stays
//! pending and the attempt is on record. The same post from this test process (no run of the
//! host) still approves.

use planhost_core::{ApprovalStatus, AuditAction, PermissionMode};
use planhost_protocol::{AuditEntry, AuditFilter, ConfigureParams, TurnOutcome, methods};
use serde_json::json;

use crate::http::{Visitor, approve_form, http, log_in};
use crate::support::{
    Budget, PLAN, WebHost, agent, approval_of, assert_resolved_by_the_page, open_session, params,
    pending_plan, poll_until, run_bash,
};

#[test]
fn the_agents_bash_cannot_approve_on_the_page_and_a_person_still_can() {
    let budget = Budget::start();
    let host = WebHost::start(&budget);
    let mut agent = agent(&host);
    let approval = pending_plan(&host, &mut agent, "Approve me over HTTP", PLAN);
    let id = approval.proposal_id.to_string();
    let Visitor { csrf, .. } = log_in(&host, &host.token);
    let hp = host.host_port();
    let origin = host.origin();
    let body = approve_form(&approval, &csrf, "auto");

    // The model's Bash call in another session, allowed without asking (permission mode auto,
    // set by a person): it reads the token from web.json itself and posts the answer.
    let working = open_session(&host, &mut agent);
    let mut person = host.connect("e2e-person", &[planhost_core::Role::Approver]);
    person.call::<methods::SessionsConfigure>(ConfigureParams {
        permission_mode: Some(PermissionMode::Auto),
        ..params::configure(&working)
    });
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
    let (turn, result) = run_bash(&mut agent, &working, "bash-1", &input);
    // The whole result as JSON text: the page's answer is somewhere in the command's output.
    let text = serde_json::to_string(&result).expect("the result as JSON");
    assert!(text.contains("HTTP/1.1 403"), "refused with 403: {text}");
    assert!(text.contains("ROLE_APPROVER_REFUSED"), "{text}");
    assert!(text.contains(r#"id=\"approver-refused\""#), "{text}");
    agent.call::<methods::TurnsEnd>(params::end(&working, &turn, TurnOutcome::Completed));

    // Nothing changed, and the attempt is on record as a refused approver.
    let now = approval_of(&mut agent, &approval);
    assert_eq!(now.status, ApprovalStatus::Pending, "{now:?}");
    assert_eq!(now.version, approval.version, "{now:?}");
    let row: AuditEntry = poll_until(
        "the refused approver's audit row",
        budget.left("the audit row"),
        || {
            let audit = agent.call::<methods::AuditList>(AuditFilter {
                session_id: None,
                limit: Some(10_000),
            });
            audit
                .items
                .into_iter()
                .find(|row| row.action == AuditAction::RoleRefused)
        },
    );
    // The row's detail is untyped JSON in the protocol.
    let detail = &row.detail;
    assert_eq!(detail["client"], "planhost-web", "{row:?}");
    assert_eq!(detail["code"], "ROLE_APPROVER_REFUSED", "{row:?}");
    assert!(
        ["run_marker", "run_cgroup", "under_host"].contains(&detail["why"].as_str().unwrap_or("")),
        "{row:?}"
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
    assert_eq!(now.status, ApprovalStatus::Approved, "{now:?}");
    assert_resolved_by_the_page(now.resolved_by.as_ref(), &now);
}

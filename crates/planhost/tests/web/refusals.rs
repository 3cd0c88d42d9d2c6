//! What the page refuses, over plain HTTP without a browser: no token, a foreign `Host`
//! (DNS rebinding), a cross-origin POST, a POST without its CSRF value; and the token itself
//! (the file's mode, the cookie's flags, `planhost web`, rotation).

use std::os::unix::fs::PermissionsExt as _;

use planhost_core::{ApprovalStatus, TargetPermissionMode};
use planhost_protocol::ApprovalInfo;
use serde_json::json;

use crate::http::{HttpResponse, Visitor, form, http, log_in};
use crate::support::{
    Budget, PLAN, WebHost, agent, approval_of, assert_resolved_by_the_page, pending_plan,
};

/// `GET path` with the loopback `Host` and `extra` headers.
fn get(host: &WebHost, path: &str, extra: &[(&str, &str)]) -> HttpResponse {
    let hp = host.host_port();
    let mut headers = vec![("Host", hp.as_str())];
    headers.extend_from_slice(extra);
    http(host, "GET", path, &headers, None)
}

/// `POST /approvals/ID` as a form, with exactly `headers` (Host included).
fn post_answer(
    host: &WebHost,
    approval: &ApprovalInfo,
    headers: &[(&str, &str)],
    fields: &[(&str, &str)],
) -> HttpResponse {
    let id = approval.proposal_id.as_str();
    // What the page's form carries besides: the version and digest it showed.
    let version = approval.version.to_string();
    let mut all = fields.to_vec();
    all.push(("version", &version));
    all.push(("sha256", &approval.artifact_sha256));
    http(
        host,
        "POST",
        &format!("/approvals/{id}"),
        headers,
        Some(&form(&all)),
    )
}

#[test]
fn the_page_needs_the_token_and_its_strict_cookie() {
    let budget = Budget::start();
    let host = WebHost::start(&budget);

    // The token file: owner-only, 64 hex digits; the address is logged.
    let web_json = host.state_dir().join("web.json");
    let mode = fs_err::metadata(&web_json)
        .expect("web.json")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600, "web.json has mode 0600");
    assert_eq!(host.token.len(), 64, "{}", host.token);
    assert!(
        host.token.chars().all(|c| c.is_ascii_hexdigit()),
        "{}",
        host.token
    );
    // The address is logged, its token never: logs are kept where others may read them.
    let logged = format!("planhost web: {} ", host.url);
    crate::support::poll_until("the address on stderr", budget.left("stderr"), || {
        host.stderr().contains(&logged).then_some(())
    });
    assert!(
        !host.stderr().contains(&host.token),
        "the token is not on stderr: {}",
        host.stderr()
    );

    // Without the cookie, with a wrong token, with a made-up cookie: 401.
    get(&host, "/", &[]).assert_refusal(401, "unauthorized");
    let wrong = "0".repeat(64);
    get(&host, &format!("/?token={wrong}"), &[]).assert_refusal(401, "unauthorized");
    get(
        &host,
        "/",
        &[("Cookie", &format!("{}={wrong}", host.cookie_name()))],
    )
    .assert_refusal(401, "unauthorized");
    get(&host, "/events", &[]).assert_refusal(401, "unauthorized");

    // The right token: 303 to / with an HttpOnly, SameSite=Strict cookie for /.
    let visitor = log_in(&host, &host.token);
    let flags: Vec<String> = visitor
        .set_cookie
        .split(';')
        .skip(1)
        .map(|f| f.trim().to_ascii_lowercase())
        .collect();
    for flag in ["httponly", "samesite=strict", "path=/"] {
        assert!(
            flags.iter().any(|f| f == flag),
            "the cookie is {flag}: {}",
            visitor.set_cookie
        );
    }
    assert!(
        visitor.page.body.contains("<html lang=\"en\""),
        "English without Accept-Language: {}",
        visitor.page.body
    );
    visitor.page.assert_no_cors();
}

#[test]
fn a_non_loopback_host_header_is_refused_with_421() {
    let budget = Budget::start();
    let host = WebHost::start(&budget);
    let token_path = format!("/?token={}", host.token);
    let port = host.port();
    let visitor = log_in(&host, &host.token);

    for bad in [
        "evil.example".to_owned(),
        format!("evil.example:{port}"),
        format!("127.0.0.1.evil.example:{port}"),
        format!("localhost.evil.example:{port}"),
        "[::1]evil.example".to_owned(),
        format!("[::1]:{port}evil.example"),
    ] {
        http(&host, "GET", &token_path, &[("Host", &bad)], None).assert_refusal(421, "bad-host");
        http(
            &host,
            "GET",
            "/",
            &[("Host", &bad), ("Cookie", &visitor.cookie)],
            None,
        )
        .assert_refusal(421, "bad-host");
    }
    // Every loopback spelling is served.
    for good in [
        format!("planhost.localhost:{port}"),
        format!("127.0.0.1:{port}"),
        format!("localhost:{port}"),
        "localhost".to_owned(),
        format!("[::1]:{port}"),
    ] {
        let first = http(&host, "GET", &token_path, &[("Host", &good)], None);
        assert_eq!(first.status, 303, "Host {good}: {first:#?}");
    }
}

#[test]
fn a_cross_origin_post_is_refused_and_the_plan_stays_pending() {
    let budget = Budget::start();
    let host = WebHost::start(&budget);
    let mut agent = agent(&host);
    let approval = pending_plan(&host, &mut agent, "Forged", PLAN);
    let Visitor { cookie, csrf, .. } = log_in(&host, &host.token);
    let hp = host.host_port();
    let fields = [
        ("action", "approve"),
        ("mode", "auto"),
        ("csrf", csrf.as_str()),
    ];

    // The right cookie and CSRF value, from another origin (or no Origin at all): 403.
    let other_port = format!("http://127.0.0.1:{}", host.port().wrapping_add(1));
    for origin in [
        Some("http://evil.example"),
        Some("null"),
        Some(other_port.as_str()),
        None,
    ] {
        let mut headers = vec![("Host", hp.as_str()), ("Cookie", cookie.as_str())];
        if let Some(origin) = origin {
            headers.push(("Origin", origin));
        }
        post_answer(&host, &approval, &headers, &fields).assert_refusal(403, "forbidden");
        assert_eq!(
            approval_of(&mut agent, &approval).status,
            ApprovalStatus::Pending,
            "still pending after a POST from Origin {origin:?}"
        );
    }
    // Same origin and CSRF value without the cookie: refused too. The contract has "any page
    // without the cookie → 401" and "POSTs need the cookie … otherwise 403"; either refusal will do.
    let origin = host.origin();
    let no_cookie = post_answer(
        &host,
        &approval,
        &[("Host", &hp), ("Origin", &origin)],
        &fields,
    );
    match no_cookie.status {
        401 => no_cookie.assert_refusal(401, "unauthorized"),
        _ => no_cookie.assert_refusal(403, "forbidden"),
    }
    let still = approval_of(&mut agent, &approval);
    assert_eq!(still.status, ApprovalStatus::Pending, "{still:?}");
    assert_eq!(still.resolved_by, None, "{still:?}");
}

/// An answer is bound to the plan version and digest the page showed: a form without them, or
/// with a version that is not a number, is refused (never filled in with the current ones),
/// and the plan stays pending.
#[test]
fn an_answer_without_the_version_and_digest_it_was_shown_is_refused() {
    let budget = Budget::start();
    let host = WebHost::start(&budget);
    let mut agent = agent(&host);
    let approval = pending_plan(&host, &mut agent, "Bound answer", PLAN);
    let Visitor { cookie, csrf, .. } = log_in(&host, &host.token);
    let hp = host.host_port();
    let origin = host.origin();
    let id = approval.proposal_id.as_str();
    let version = approval.version.to_string();
    let sha = approval.artifact_sha256.as_str();
    let base = [
        ("action", "approve"),
        ("mode", "auto"),
        ("csrf", csrf.as_str()),
    ];
    for extra in [
        vec![],
        vec![("version", version.as_str())],
        vec![("sha256", sha)],
        vec![("version", "abc"), ("sha256", sha)],
        vec![("version", version.as_str()), ("sha256", "")],
    ] {
        let mut fields = base.to_vec();
        fields.extend(extra.iter().copied());
        let answered = http(
            &host,
            "POST",
            &format!("/approvals/{id}"),
            &[
                ("Host", hp.as_str()),
                ("Cookie", cookie.as_str()),
                ("Origin", origin.as_str()),
                ("x-planhost-fetch", "1"),
            ],
            Some(&form(&fields)),
        );
        assert_eq!(answered.status, 409, "{fields:?}: {answered:#?}");
        assert!(
            answered.body.contains("data-code=\"INVALID_PARAMS\""),
            "the card says why: {}",
            answered.body
        );
        assert_eq!(
            approval_of(&mut agent, &approval).status,
            ApprovalStatus::Pending,
            "{fields:?}"
        );
    }
    // In Chinese the refusal says what its code means, with the host's own words beside it.
    let answered = http(
        &host,
        "POST",
        &format!("/approvals/{id}"),
        &[
            ("Host", hp.as_str()),
            ("Cookie", cookie.as_str()),
            ("Origin", origin.as_str()),
            ("Accept-Language", "zh-CN"),
            ("x-planhost-fetch", "1"),
        ],
        Some(&form(&base)),
    );
    assert_eq!(answered.status, 409, "{answered:#?}");
    assert!(
        answered.body.contains("参数与方法不符") && answered.body.contains(r#"lang="en""#),
        "{}",
        answered.body
    );
}

#[test]
fn a_post_without_the_csrf_value_is_refused_and_one_with_it_approves() {
    let budget = Budget::start();
    let host = WebHost::start(&budget);
    let mut agent = agent(&host);
    let approval = pending_plan(&host, &mut agent, "CSRF", PLAN);
    let Visitor { cookie, csrf, .. } = log_in(&host, &host.token);
    let hp = host.host_port();
    let origin = host.origin();
    let headers = [
        ("Host", hp.as_str()),
        ("Cookie", cookie.as_str()),
        ("Origin", origin.as_str()),
    ];

    let wrong = format!("{csrf}x");
    for fields in [
        vec![("action", "approve"), ("mode", "ask")],
        vec![("action", "approve"), ("mode", "ask"), ("csrf", "")],
        vec![("action", "approve"), ("mode", "ask"), ("csrf", &wrong)],
    ] {
        post_answer(&host, &approval, &headers, &fields).assert_refusal(403, "forbidden");
        assert_eq!(
            approval_of(&mut agent, &approval).status,
            ApprovalStatus::Pending,
            "{fields:?}"
        );
    }

    // The same request with the page's CSRF value is the person's answer.
    let answered = post_answer(
        &host,
        &approval,
        &headers,
        &[
            ("action", "approve"),
            ("mode", "accept-edits"),
            ("csrf", &csrf),
        ],
    );
    assert!(answered.status < 400, "{answered:#?}");
    answered.assert_no_cors();
    let approved = approval_of(&mut agent, &approval);
    assert_eq!(approved.status, ApprovalStatus::Approved, "{approved:?}");
    assert_eq!(
        approved.target_permission_mode,
        Some(TargetPermissionMode::AcceptEdits),
        "{approved:?}"
    );
    assert_resolved_by_the_page(approved.resolved_by.as_ref(), &approved);
}

#[test]
fn planhost_web_prints_the_address_and_rotate_retires_the_old_cookie() {
    let budget = Budget::start();
    let host = WebHost::start(&budget);
    let printed = host.cli(&["web", "--no-open"]);
    assert_eq!(
        printed.trim(),
        format!("{}?token={}", host.url, host.token),
        "{printed}"
    );
    let old = log_in(&host, &host.token);

    host.cli(&["web", "--rotate", "--no-open"]);
    get(&host, "/", &[("Cookie", &old.cookie)]).assert_refusal(401, "unauthorized");
    get(&host, &format!("/?token={}", host.token), &[]).assert_refusal(401, "unauthorized");
    let printed = host.cli(&["web", "--no-open"]);
    let token = printed
        .trim()
        .rsplit_once("?token=")
        .map(|(_, t)| t.to_owned())
        .unwrap_or_else(|| panic!("an address with a token: {printed}"));
    assert_ne!(token, host.token, "a new token");
    let current = log_in(&host, &token);

    // web.json is only what `planhost web` prints: a token written there by anyone else (the
    // agent's own commands can write files of this user) opens nothing, and the page's token
    // stays the one the host made.
    let web_json = host.state_dir().join("web.json");
    let mut file: serde_json::Value =
        serde_json::from_str(&fs_err::read_to_string(&web_json).unwrap()).unwrap();
    let forged = "f".repeat(64);
    file["token"] = serde_json::Value::String(forged.clone());
    fs_err::write(&web_json, file.to_string()).unwrap();
    get(&host, &format!("/?token={forged}"), &[]).assert_refusal(401, "unauthorized");
    let still = get(&host, "/", &[("Cookie", &current.cookie)]);
    assert_eq!(
        still.status, 200,
        "the host's own token still opens the page: {still:#?}"
    );
}

#[test]
fn the_pages_cookie_is_never_sent_to_another_server_on_127_0_0_1_or_localhost() {
    let (_slot, budget) = crate::browser::browser_scenario();
    let host = WebHost::start(&budget);
    let result = crate::browser::run_scenario(&host, "cookie_stays_with_the_page", json!({}));
    let seen = result["seen"].as_array().cloned().unwrap_or_default();
    assert_eq!(
        seen.len(),
        3,
        "the other server saw three loads: {result:#}"
    );
    let name = format!("{}=", host.cookie_name());
    for load in &seen[..2] {
        assert!(
            !load["cookie"].as_str().unwrap_or_default().contains(&name),
            "{} got the page's cookie: {result:#}",
            load["host"]
        );
    }
    // Cookies ignore ports: only a server on planhost.localhost itself could get it, and that
    // name is the page's own. That it arrives there shows the check above can see it.
    assert!(
        seen[2]["cookie"]
            .as_str()
            .unwrap_or_default()
            .contains(&name),
        "the control load on planhost.localhost carries the cookie: {result:#}"
    );
}

/// The artifact opener serves the plan's exact bytes as inert text (sandboxed, no sniffing, not
/// stored), with its SHA-256; without the cookie it is refused like every page.
#[test]
fn the_artifact_link_serves_the_exact_bytes_as_inert_text() {
    let budget = Budget::start();
    let host = WebHost::start(&budget);
    let mut agent = agent(&host);
    let markdown = "# Plan\n\n<script>alert(1)</script>\n\n1. Step.\n";
    let approval = pending_plan(&host, &mut agent, "Artifact", markdown);
    let path = format!("/approvals/{}/artifact", approval.proposal_id);
    get(&host, &path, &[]).assert_refusal(401, "unauthorized");
    let visitor = log_in(&host, &host.token);
    let served = get(&host, &path, &[("Cookie", &visitor.cookie)]);
    assert_eq!(served.status, 200, "{served:#?}");
    assert_eq!(served.body, markdown, "the exact bytes");
    assert_eq!(
        served.header("content-type"),
        Some("text/plain; charset=utf-8")
    );
    assert_eq!(
        served.header("content-security-policy"),
        Some("default-src 'none'; sandbox")
    );
    assert_eq!(served.header("x-content-type-options"), Some("nosniff"));
    assert_eq!(served.header("cache-control"), Some("no-store"));
    assert_eq!(
        served.header("x-planhost-sha256"),
        Some(approval.artifact_sha256.as_str())
    );
}

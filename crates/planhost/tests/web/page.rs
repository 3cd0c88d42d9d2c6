//! The page in real Chromium: answering a plan card, live updates and reloads, an expiry, the
//! keyboard, without JavaScript, at phone width, the Chinese locale, a hostile plan. Each test
//! prepares the host over its socket, runs one browser scenario (browser/scenarios.mjs) and then
//! asserts the host's own state over the socket.

use planhost_core::{
    ApprovalAction, ApprovalStatus, ErrorCode, Mode, PermissionMode, TargetPermissionMode,
};
use serde_json::{Value, json};

use crate::browser::{Browser, browser_scenario, run_scenario};
use crate::support::{
    HostOptions, PLAN, WebHost, agent, approval_of, assert_resolved_by_the_page, pending_plan,
    plan_session, resolve, session_of, submit,
};

/// Asserts a card's state as the scenario saw it.
#[track_caller]
fn assert_card(state: &Value, status: &str, result: &Value) {
    assert_eq!(state["status"], status, "{result:#}");
    assert_eq!(
        state["forms"], 0,
        "an answered card has no form: {result:#}"
    );
    assert_eq!(
        state["errors"],
        json!([]),
        "no error on the card: {result:#}"
    );
}

#[test]
fn approving_with_a_mode_in_the_page_approves_with_that_permission() {
    let (_slot, budget) = browser_scenario();
    let host = WebHost::start(&budget);
    let mut agent = agent(&host);
    let approval = pending_plan(&host, &mut agent, "Approve in the page", PLAN);

    let result = run_scenario(
        &host,
        "approve_with_mode",
        json!({ "approvalId": approval.proposal_id, "mode": "accept-edits" }),
    );
    assert_eq!(result["before"]["status"], "pending", "{result:#}");
    assert_eq!(result["before"]["forms"], 1, "{result:#}");
    assert_card(&result["after"], "approved", &result);

    let approved = approval_of(&mut agent, &approval);
    assert_eq!(approved.status, ApprovalStatus::Approved, "{approved:?}");
    assert_eq!(
        approved.action,
        Some(ApprovalAction::Approve),
        "{approved:?}"
    );
    assert_eq!(
        approved.target_permission_mode,
        Some(TargetPermissionMode::AcceptEdits),
        "{approved:?}"
    );
    assert_resolved_by_the_page(approved.resolved_by.as_ref(), &approved);
    let session = session_of(&mut agent, &approval.session_id);
    assert_eq!(session.mode, Mode::Agent, "{session:?}");
    assert_eq!(
        session.permission_mode,
        PermissionMode::AcceptEdits,
        "{session:?}"
    );
}

#[test]
fn rejecting_in_the_page_rejects() {
    let (_slot, budget) = browser_scenario();
    let host = WebHost::start(&budget);
    let mut agent = agent(&host);
    let approval = pending_plan(&host, &mut agent, "Reject in the page", PLAN);

    let result = run_scenario(
        &host,
        "reject",
        json!({ "approvalId": approval.proposal_id }),
    );
    assert_eq!(result["before"]["status"], "pending", "{result:#}");
    assert_card(&result["after"], "rejected", &result);

    let rejected = approval_of(&mut agent, &approval);
    assert_eq!(rejected.status, ApprovalStatus::Rejected, "{rejected:?}");
    assert_eq!(
        rejected.action,
        Some(ApprovalAction::Reject),
        "{rejected:?}"
    );
    assert_eq!(rejected.target_permission_mode, None, "{rejected:?}");
    assert_resolved_by_the_page(rejected.resolved_by.as_ref(), &rejected);
    let session = session_of(&mut agent, &approval.session_id);
    assert_eq!(
        session.mode,
        Mode::Plan,
        "a rejected plan stays in Plan mode: {session:?}"
    );
}

#[test]
fn a_pending_card_survives_a_reload_and_a_cli_answer_and_a_new_plan_reach_the_open_page_live() {
    let (_slot, budget) = browser_scenario();
    let host = WebHost::start(&budget);
    let mut agent = agent(&host);
    let approval = pending_plan(&host, &mut agent, "Answered from the CLI", PLAN);
    let proposal = approval.proposal_id.as_str();

    let mut browser = Browser::start(
        &host,
        "reload_then_answered_elsewhere",
        json!({ "approvalId": proposal }),
    );
    let seen = browser.checkpoint("pending-seen");
    // The deadline is the host's absolute one, and a reload does not move it.
    assert_eq!(seen["deadline"], seen["deadlineAfterReload"], "{seen}");
    let shown: jiff::Timestamp = seen["deadline"]
        .as_str()
        .and_then(|d| d.parse().ok())
        .unwrap_or_else(|| panic!("time.deadline[datetime] is RFC 3339: {seen}"));
    let expires = approval.expires_at.0;
    assert!(
        (shown.as_millisecond() - expires).abs() < 1000,
        "the page's deadline {shown} is the approval's expiresAt {expires}: {seen}"
    );

    let out = host.cli(&["approve", proposal, "--mode", "auto"]);
    assert!(out.contains("approved"), "{out}");
    browser.resume(&json!({}));
    // The page showed the answer by itself; now a new plan (another session) must appear too.
    browser.checkpoint("answered-live");
    let second = pending_plan(&host, &mut agent, "Submitted while the page is open", PLAN);
    browser.resume(&json!({ "newApprovalId": second.proposal_id }));
    let result = browser.result();

    assert_eq!(result["statusAfterReload"], "pending", "{result:#}");
    assert_ne!(
        result["countdown1"], result["countdown2"],
        "the countdown is live: {result:#}"
    );
    assert_card(&result["live"], "approved", &result);
    assert_eq!(
        result["sameDocument"], true,
        "the page updated in place, not by reloading: {result:#}"
    );
    let status_text = result["live"]["statusText"].as_str().unwrap_or_default();
    assert!(
        status_text.contains("planhost-cli"),
        "the card says who answered: {result:#}"
    );
    assert_eq!(
        result["cardsAfterReload"], 0,
        "an answered card does not come back after a reload: {result:#}"
    );
    assert_eq!(result["newCardsAfterReload"], 1, "{result:#}");

    let approved = approval_of(&mut agent, &approval);
    assert_eq!(approved.status, ApprovalStatus::Approved, "{approved:?}");
    assert_eq!(
        approved.target_permission_mode,
        Some(TargetPermissionMode::Auto),
        "{approved:?}"
    );
    assert_eq!(
        approved.resolved_by.as_ref().map(|by| by.client.as_str()),
        Some("planhost-cli"),
        "{approved:?}"
    );
}

#[test]
fn an_approval_whose_deadline_passes_while_the_page_is_open_shows_expired_with_its_code_live() {
    let (_slot, budget) = browser_scenario();
    let host = WebHost::start_with(
        &budget,
        HostOptions {
            test_clock: true,
            ..HostOptions::default()
        },
    );
    let mut agent = agent(&host);
    let approval = pending_plan(&host, &mut agent, "Left to expire", PLAN);

    let mut browser = Browser::start(
        &host,
        "expiry_seen_live",
        json!({ "approvalId": approval.proposal_id }),
    );
    browser.checkpoint("pending-seen");
    // 31 minutes later as far as the host can tell, past the 30-minute deadline. Its expiry
    // timer re-checks after every request it serves (or after up to 30 s asleep): one request
    // makes it notice now.
    host.set_clock_offset(31 * 60 * 1000);
    session_of(&mut agent, &approval.session_id);
    browser.resume(&json!({}));
    let result = browser.result();

    assert_eq!(result["before"]["status"], "pending", "{result:#}");
    assert_card(&result["live"], "expired", &result);
    let status_text = result["live"]["statusText"].as_str().unwrap_or_default();
    assert!(
        status_text.contains("PLAN_APPROVAL_TIMEOUT"),
        "the expired card shows the code: {result:#}"
    );
    assert_eq!(
        result["sameDocument"], true,
        "the page updated in place, not by reloading: {result:#}"
    );

    let expired = approval_of(&mut agent, &approval);
    assert_eq!(expired.status, ApprovalStatus::Expired, "{expired:?}");
    assert_eq!(
        expired.error_code,
        Some(ErrorCode::PlanApprovalTimeout),
        "{expired:?}"
    );
    assert_eq!(expired.resolved_by, None, "{expired:?}");
}

#[test]
fn a_plan_can_be_approved_with_the_keyboard_alone() {
    let (_slot, budget) = browser_scenario();
    let host = WebHost::start(&budget);
    let mut agent = agent(&host);
    let approval = pending_plan(&host, &mut agent, "Approve by keyboard", PLAN);

    let result = run_scenario(
        &host,
        "keyboard_only_approval",
        json!({ "approvalId": approval.proposal_id }),
    );
    // The form's controls are labelled; Ask is the default mode.
    let controls = result["labels"]["controls"].as_array().expect("controls");
    assert!(controls.len() >= 3, "{result:#}");
    for control in controls {
        assert!(
            !control["accessibleName"]
                .as_str()
                .unwrap_or_default()
                .is_empty(),
            "every control has an accessible name: {control} in {result:#}"
        );
    }
    let modes: Vec<_> = result["labels"]["modes"]
        .as_array()
        .expect("modes")
        .iter()
        .map(|m| {
            (
                m["value"].as_str().unwrap_or_default(),
                m["selected"] == true,
            )
        })
        .collect();
    assert_eq!(
        modes,
        [("ask", true), ("accept-edits", false), ("auto", false)],
        "{result:#}"
    );

    // Focus is visible on the select, the arrow chose accept-edits, Tab went on to Approve.
    let on_select = &result["onSelect"];
    assert_eq!(on_select["focusVisible"], true, "{result:#}");
    assert!(
        on_select["outline"]
            .as_str()
            .is_some_and(|o| !o.starts_with("none"))
            || on_select["boxShadow"].as_str().is_some_and(|s| s != "none"),
        "the focused select shows its focus: {result:#}"
    );
    assert_eq!(result["chosen"]["value"], "accept-edits", "{result:#}");
    assert_eq!(result["onApprove"]["tag"], "button", "{result:#}");
    assert_eq!(result["onApprove"]["name"], "action", "{result:#}");
    assert_eq!(result["onApprove"]["value"], "approve", "{result:#}");
    assert_eq!(result["onApprove"]["inCard"], true, "{result:#}");
    assert_card(&result["after"], "approved", &result);

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
fn a_chinese_browser_gets_the_chinese_page_and_can_switch_to_english() {
    let (_slot, budget) = browser_scenario();
    let host = WebHost::start(&budget);
    let mut agent = agent(&host);
    let approval = pending_plan(&host, &mut agent, "中文计划", PLAN);

    let result = run_scenario(
        &host,
        "chinese_locale",
        json!({ "approvalId": approval.proposal_id, "locale": "zh-CN" }),
    );
    assert_eq!(result["zh"]["lang"], "zh-CN", "{result:#}");
    assert_eq!(
        result["en"]["lang"], "en",
        "the switch leads to English: {result:#}"
    );
    let zh = result["zh"]["approve"].as_str().unwrap_or_default();
    let en = result["en"]["approve"].as_str().unwrap_or_default();
    assert!(!zh.is_empty() && !en.is_empty(), "{result:#}");
    assert_ne!(zh, en, "the Approve button is translated: {result:#}");
    assert!(
        zh.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c)),
        "the Chinese Approve button says it in Chinese: {result:#}"
    );
    assert_eq!(
        approval_of(&mut agent, &approval).status,
        ApprovalStatus::Pending
    );
}

#[test]
fn a_second_submission_shows_what_changed_since_the_first_plan() {
    let (_slot, budget) = browser_scenario();
    let host = WebHost::start(&budget);
    let mut agent = agent(&host);
    let sid = plan_session(&host, &mut agent);
    let first = submit(
        &mut agent,
        &sid,
        "submit-1",
        "First",
        "# Plan\n\n1. Write `out.txt`.\n2. Run the tests.\n",
    );
    let rejected = resolve(&host, &first, ApprovalAction::Reject);
    assert_eq!(rejected.status, ApprovalStatus::Rejected, "{rejected:?}");
    let second = submit(
        &mut agent,
        &sid,
        "submit-2",
        "Second",
        "# Plan\n\n1. Write `out.txt`.\n2. Run the linter.\n3. Run the tests.\n",
    );

    let result = run_scenario(
        &host,
        "diff_since_last_plan",
        json!({ "approvalId": second.proposal_id, "firstApprovalId": first.proposal_id }),
    );
    assert_eq!(result["firstCards"], 0, "{result:#}");
    assert_eq!(result["diffs"], 1, "the second card has a diff: {result:#}");
    let has = |key: &str, text: &str| {
        result[key].as_array().is_some_and(|lines| {
            lines
                .iter()
                .any(|l| l.as_str().is_some_and(|l| l.contains(text)))
        })
    };
    assert!(has("inserted", "Run the linter."), "{result:#}");
    assert!(
        !has("inserted", "out.txt") && !has("deleted", "out.txt"),
        "an unchanged line is neither inserted nor deleted: {result:#}"
    );
}

#[test]
fn without_javascript_the_approve_form_posts_same_origin_redirects_with_303_and_approves() {
    let (_slot, budget) = browser_scenario();
    let host = WebHost::start(&budget);
    let mut agent = agent(&host);
    let approval = pending_plan(&host, &mut agent, "Approve without JavaScript", PLAN);

    let result = run_scenario(
        &host,
        "approve_without_javascript",
        json!({ "approvalId": approval.proposal_id, "mode": "auto" }),
    );
    assert_eq!(result["before"]["status"], "pending", "{result:#}");
    assert_eq!(
        result["script"],
        json!({ "live": null, "countdown": "" }),
        "the page's script did not run: {result:#}"
    );
    let post = &result["post"];
    // `Referrer-Policy: no-referrer` made Chromium send `Origin: null` here, which the
    // same-origin check refused (403): the form must carry the page's own origin.
    assert_eq!(post["origin"], host.origin(), "{result:#}");
    assert_eq!(
        post["fields"],
        json!({ "action": "approve", "mode": "auto", "csrf": true }),
        "{result:#}"
    );
    assert_eq!(post["status"], 303, "{result:#}");
    assert_eq!(post["location"], "/", "{result:#}");
    assert_eq!(result["landed"]["status"], 200, "{result:#}");
    assert_eq!(
        result["landed"]["url"],
        format!("{}/", host.origin()),
        "{result:#}"
    );
    assert_eq!(result["cardsAfter"], 0, "{result:#}");
    assert_eq!(result["emptyAfter"], 1, "{result:#}");

    let approved = approval_of(&mut agent, &approval);
    assert_eq!(approved.status, ApprovalStatus::Approved, "{approved:?}");
    assert_eq!(
        approved.target_permission_mode,
        Some(TargetPermissionMode::Auto),
        "{approved:?}"
    );
    assert_resolved_by_the_page(approved.resolved_by.as_ref(), &approved);
}

#[test]
fn at_phone_width_the_approve_button_is_reachable_without_sideways_scrolling_and_approves() {
    let (_slot, budget) = browser_scenario();
    let host = WebHost::start(&budget);
    let mut agent = agent(&host);
    let approval = pending_plan(&host, &mut agent, "Approve on a phone", PLAN);

    let result = run_scenario(
        &host,
        "phone_width_approval",
        json!({ "approvalId": approval.proposal_id }),
    );
    for at in ["before", "atButton"] {
        let m = &result[at];
        assert_eq!(m["innerWidth"], 375, "{result:#}");
        let scroll_width = m["scrollWidth"].as_f64().expect("scrollWidth");
        assert!(
            scroll_width <= 375.0,
            "the page does not scroll sideways at 375 px ({at}): {result:#}"
        );
        assert_eq!(m["scrollX"], 0, "{at}: {result:#}");
        let left = m["button"]["left"].as_f64().expect("left");
        let right = m["button"]["right"].as_f64().expect("right");
        assert!(
            left >= 0.0 && right <= 375.0 && right > left,
            "the Approve button lies within the width ({at}): {result:#}"
        );
    }
    assert_eq!(result["atButton"]["visible"], true, "{result:#}");
    assert_eq!(result["scrollXAfter"], 0, "{result:#}");
    assert_card(&result["after"], "approved", &result);

    let approved = approval_of(&mut agent, &approval);
    assert_eq!(approved.status, ApprovalStatus::Approved, "{approved:?}");
    assert_eq!(
        approved.target_permission_mode,
        Some(TargetPermissionMode::Ask),
        "{approved:?}"
    );
    assert_resolved_by_the_page(approved.resolved_by.as_ref(), &approved);
}

/// A plan with a script, a `javascript:` link and an image with an `onerror` handler.
const HOSTILE_PLAN: &str = "# Plan: hostile\n\n\
<script>window.pwned=1</script>\n\n\
Click [x](javascript:alert(1)) or <a href=\"javascript:window.pwned=3\">this</a>.\n\n\
<img src=x onerror=\"window.pwned=2\">\n\n\
1. Done.\n";

#[test]
fn a_plan_with_scripts_links_and_raw_html_renders_inert() {
    let (_slot, budget) = browser_scenario();
    let host = WebHost::start(&budget);
    let mut agent = agent(&host);
    let approval = pending_plan(&host, &mut agent, "Hostile", HOSTILE_PLAN);

    let result = run_scenario(
        &host,
        "xss_plan_is_inert",
        json!({ "approvalId": approval.proposal_id }),
    );
    assert_eq!(result["pwned"], Value::Null, "nothing ran: {result:#}");
    assert_eq!(result["dialogs"], json!([]), "{result:#}");
    assert_eq!(result["scripts"], 0, "no <script> in .rendered: {result:#}");
    assert_eq!(
        result["javascriptUrls"],
        json!([]),
        "no javascript: URL in .rendered: {result:#}"
    );
    assert_eq!(
        result["handlers"],
        json!([]),
        "no on* attribute: {result:#}"
    );
    assert_eq!(result["iframes"], 0, "{result:#}");
    assert_eq!(
        result["raw"], HOSTILE_PLAN,
        "the raw view shows the exact bytes: {result:#}"
    );
    assert_eq!(
        approval_of(&mut agent, &approval).status,
        ApprovalStatus::Pending
    );
}

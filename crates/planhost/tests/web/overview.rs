//! The page's version 2 as a person meets it, in real Chromium at desktop width in English and
//! at phone width in Chinese: what waits is counted and first, every card says whose it is, a
//! revision leads with its summary and numbered hunks, a changed plan file withholds Approve,
//! nothing overflows, targets are 44 px, colours pass AA in light and dark, answering keeps
//! focus on the card, a link opens one approval, and a rotated token or a stopped host is said.

use planhost_core::{ApprovalAction, ApprovalStatus, PermissionMode, Role};
use planhost_protocol::{ConfigureParams, DecisionKind, methods};
use planhost_test_support::host::params;
use serde_json::json;

use crate::browser::{Browser, browser_scenario};
use crate::support::{WebHost, agent, approval_of, open_session, plan_session, resolve, submit};

/// A plan long enough that a two-line change is a small part of it.
fn long_plan(changed: bool) -> String {
    let mut text = String::from("# Plan: tidy the build\n\n");
    for i in 1..=40 {
        let step = match (i, changed) {
            (12, true) => "12. Run the linter with `--deny warnings`.".to_owned(),
            (30, true) => "30. Publish the notes to the team channel.".to_owned(),
            _ => format!("{i}. Step {i} of the plan, unchanged."),
        };
        text.push_str(&step);
        text.push('\n');
    }
    text
}

fn overview(locale: &str, phone: bool) {
    let (_slot, budget) = browser_scenario();
    let host = WebHost::start(&budget);
    let mut agent = agent(&host);

    // A: a revision that changed two lines of forty-odd.
    let sid_a = plan_session(&host, &mut agent);
    let a1 = submit(
        &mut agent,
        &sid_a,
        "a-1",
        "Tidy the build",
        &long_plan(false),
    );
    resolve(&host, &a1, ApprovalAction::Reject);
    let a = submit(
        &mut agent,
        &sid_a,
        "a-2",
        "Tidy the build",
        &long_plan(true),
    );
    // B: the same text submitted again.
    let sid_b = plan_session(&host, &mut agent);
    let b1 = submit(
        &mut agent,
        &sid_b,
        "b-1",
        "Same again",
        "# Same\n\nOne step.\n",
    );
    resolve(&host, &b1, ApprovalAction::Reject);
    let b = submit(
        &mut agent,
        &sid_b,
        "b-2",
        "Same again",
        "# Same\n\nOne step.\n",
    );
    // C: its plan file changed on disk behind the host's back.
    let sid_c = plan_session(&host, &mut agent);
    let c = submit(
        &mut agent,
        &sid_c,
        "c-1",
        "Edited on disk",
        "# Edited\n\nStep.\n",
    );
    let mut file = fs_err::read_to_string(&c.artifact_path).unwrap();
    file.push_str("\nAdded later.\n");
    fs_err::write(&c.artifact_path, file).unwrap();
    // An ask whose command is 300 characters long.
    let sid_d = open_session(&host, &mut agent);
    host.connect("e2e-person", &[Role::Approver, Role::Observer])
        .call::<methods::SessionsConfigure>(ConfigureParams {
            permission_mode: Some(PermissionMode::Ask),
            ..params::configure(&sid_d)
        });
    let turn = agent.call::<methods::TurnsBegin>(params::begin(&sid_d)).id;
    let command = format!("printf '%s' {} && git add -A", "x".repeat(280));
    let asked = agent.call::<methods::ToolsAuthorize>(params::authorize(
        &sid_d,
        &turn,
        "long-command",
        "Bash",
        json!({ "command": command }),
    ));
    assert_eq!(asked.decision, DecisionKind::Ask, "{asked:?}");
    let ask = asked.request_id.expect("an ask id");

    let mut browser = Browser::start(
        &host,
        "overview_v2",
        json!({
            "a": a.proposal_id, "b": b.proposal_id, "c": c.proposal_id, "ask": ask,
            "phone": phone, "locale": locale,
        }),
    );
    browser.checkpoint("answered-here");
    let out = host.cli(&[
        "reject",
        b.proposal_id.as_str(),
        "--feedback",
        "Split it in two",
    ]);
    assert!(out.contains("rejected"), "{out}");
    browser.resume(&json!({}));
    browser.checkpoint("rotate");
    host.cli(&["web", "--rotate", "--no-open"]);
    browser.resume(&json!({}));
    browser.checkpoint("down");
    // The answer with the old token did nothing.
    assert_eq!(
        approval_of(&mut agent, &c).status,
        ApprovalStatus::Pending,
        "C is still waiting"
    );
    host.cli(&["stop"]);
    browser.resume(&json!({}));
    let r = browser.result();
    let chinese = locale == "zh-CN";

    // The title counts what waits: three plans and one ask.
    let expected_title = if chinese {
        "（4）planhost"
    } else {
        "(4) planhost"
    };
    assert_eq!(r["titleBefore"], expected_title, "{r:#}");
    // Why the ask asks: in Chinese, what the rule means, then the host's own sentence marked
    // as English; in English, the host's sentence alone.
    let reason = &r["askReason"];
    assert_eq!(reason["rule"], "agent.shell_by_permission", "{r:#}");
    // Who asks: the ask names its workspace, agent and session.
    let whose = reason["whose"].as_str().unwrap_or_default();
    assert!(
        whose.contains(planhost_core::short_id(sid_d.as_str()))
            && whose.contains(" pi ")
            && whose.contains(&*host.workspace().canonicalize().unwrap().to_string_lossy()),
        "{r:#}"
    );
    let text = reason["text"].as_str().unwrap_or_default();
    assert!(
        text.contains("git add"),
        "the host's reason names the command: {r:#}"
    );
    if chinese {
        assert!(text.starts_with("当前权限模式要求"), "{r:#}");
        assert_eq!(reason["detailLang"], "en", "{r:#}");
        assert!(
            reason["detail"]
                .as_str()
                .is_some_and(|d| d.starts_with("permission mode ask")),
            "{r:#}"
        );
    } else {
        assert!(text.starts_with("permission mode ask"), "{r:#}");
        assert_eq!(reason["detail"], serde_json::Value::Null, "{r:#}");
    }
    // The diagnostics panel: where the host is, and doctor's checks, passing.
    let diag = &r["diagnostics"];
    assert!(
        diag["version"]
            .as_str()
            .is_some_and(|v| v.starts_with("planhost ")),
        "{r:#}"
    );
    assert_eq!(
        diag["stateDir"],
        host.state_dir().display().to_string(),
        "{r:#}"
    );
    assert!(
        diag["uptime"].as_str().is_some_and(|u| !u.is_empty()),
        "{r:#}"
    );
    for check in ["lock", "socket", "sqlite"] {
        assert!(
            diag["checks"]
                .as_array()
                .is_some_and(|cs| cs.iter().any(|c| c["name"] == check && c["ok"] == "true")),
            "{check} passes: {r:#}"
        );
    }
    assert!(diag["auditRows"].as_u64() >= Some(1), "{r:#}");
    // Each card says whose it is.
    for (key, session) in [("a", &sid_a), ("c", &sid_c)] {
        let ctx = &r["contexts"][key];
        assert_eq!(
            ctx["workspace"].as_str().map(std::path::PathBuf::from),
            Some(host.workspace().canonicalize().unwrap()),
            "{r:#}"
        );
        assert_eq!(ctx["agent"], "pi", "{r:#}");
        assert!(
            ctx["text"]
                .as_str()
                .is_some_and(|t| t.contains(planhost_core::short_id(session.as_str()))),
            "{r:#}"
        );
    }
    assert_eq!(r["contexts"]["a"]["version"], "2", "{r:#}");
    assert_eq!(
        r["contexts"]["a"]["link"],
        format!("/approvals/{}", a.proposal_id),
        "{r:#}"
    );
    // A leads with "+2 −2 lines" and numbered hunks; the whole plan is folded below.
    let diff_a = &r["diffs"]["a"];
    assert_eq!(diff_a["status"], "changed", "{r:#}");
    let summary = diff_a["summary"].as_str().unwrap_or_default();
    assert!(summary.contains("+2") && summary.contains("−2"), "{r:#}");
    assert!(
        summary.contains(if chinese { "行" } else { "lines" }),
        "{r:#}"
    );
    assert!(diff_a["numbered"].as_u64().unwrap_or(0) > 0, "{r:#}");
    assert_eq!(diff_a["planOpen"], false, "{r:#}");
    assert_eq!(diff_a["diffBeforePlan"], true, "{r:#}");
    assert_eq!(r["diffs"]["b"]["status"], "identical", "{r:#}");
    // C: the page says the file changed and offers only Reject.
    assert_eq!(
        r["changedFile"]["warning"], "PLAN_ARTIFACT_CHANGED",
        "{r:#}"
    );
    assert_eq!(r["changedFile"]["approve"], 0, "{r:#}");
    assert_eq!(r["changedFile"]["reject"], 1, "{r:#}");
    // Nothing makes the page scroll sideways, the 300-character command included.
    assert!(
        r["overflow"]["scrollWidth"].as_f64() <= r["overflow"]["innerWidth"].as_f64(),
        "{r:#}"
    );
    assert_eq!(r["targets"], json!([]), "every target is 44 px tall: {r:#}");
    for scheme in ["light", "dark"] {
        for (what, ratio) in r[scheme].as_object().expect("ratios") {
            assert!(
                ratio.as_f64().unwrap_or(0.0) >= 4.5,
                "{what} in {scheme}: {ratio} < 4.5:1: {r:#}"
            );
        }
    }
    if phone {
        let s = &r["sticky"];
        assert!(
            s["top"].as_f64() >= Some(0.0) && s["bottom"].as_f64() <= s["innerHeight"].as_f64(),
            "the answer stays on screen while the plan is read: {r:#}"
        );
    }
    // Answered here: focus on the card, folded, one fewer in the title.
    let after = &r["afterAnswer"];
    assert_eq!(after["focused"], true, "{r:#}");
    assert_eq!(after["folded"], true, "{r:#}");
    assert_eq!(
        after["title"],
        if chinese {
            "（3）planhost"
        } else {
            "(3) planhost"
        },
        "{r:#}"
    );
    // Answered elsewhere: the reason is shown, and it sits below C, still waiting.
    assert!(
        r["rejectedText"]
            .as_str()
            .is_some_and(|t| t.contains("Split it in two") && t.contains("planhost-cli")),
        "{r:#}"
    );
    let order: Vec<(String, String)> = r["orderAfter"]
        .as_array()
        .expect("order")
        .iter()
        .map(|c| {
            (
                c["id"].as_str().unwrap_or_default().to_owned(),
                c["status"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    let at = |id: &str| order.iter().position(|(i, _)| i == id);
    assert!(
        at(c.proposal_id.as_str()) < at(b.proposal_id.as_str()),
        "what still waits comes first: {order:?}"
    );
    // A link to one approval opens it first, focused.
    assert_eq!(r["linked"]["first"], a.proposal_id.as_str(), "{r:#}");
    assert_eq!(r["linked"]["focused"], a.proposal_id.as_str(), "{r:#}");
    assert_eq!(r["linked"]["status"], "approved", "{r:#}");
    // A rotated token: the page says its access ended, and the answer says so.
    assert!(
        !r["revoked"]
            .as_str()
            .unwrap_or("never")
            .starts_with("never"),
        "{r:#}"
    );
    assert_eq!(r["unauthorized"]["code"], "WEB_UNAUTHORIZED", "{r:#}");
    assert_eq!(r["unauthorized"]["focused"], true, "{r:#}");
    assert!(
        r["unauthorized"]["codeElements"].as_u64() >= Some(1),
        "the command is shown as code, not in backticks: {r:#}"
    );
    // A stopped host: the answer says planhost is not running.
    assert_eq!(r["offline"]["code"], "HOST_UNREACHABLE", "{r:#}");
    assert_eq!(r["offline"]["focused"], true, "{r:#}");
}

#[test]
fn the_page_v2_at_desktop_width_in_english() {
    overview("en-US", false);
}

#[test]
fn the_page_v2_at_phone_width_in_chinese() {
    overview("zh-CN", true);
}

/// After the person allows notifications, a plan that starts waiting while the page is open is
/// announced with its title, and the notification's click brings its card.
#[test]
fn a_new_plan_is_announced_by_a_browser_notification_once_allowed() {
    let (_slot, budget) = browser_scenario();
    let host = WebHost::start(&budget);
    let mut agent = agent(&host);
    let mut browser = Browser::start(&host, "notify_new_plan", json!({}));
    browser.checkpoint("open");
    let sid = plan_session(&host, &mut agent);
    let plan = submit(
        &mut agent,
        &sid,
        "n-1",
        "Announce me",
        "# Announce\n\nStep.\n",
    );
    browser.resume(&json!({ "approvalId": plan.proposal_id }));
    let r = browser.result();
    assert_eq!(r["button"]["hidden"], false, "{r:#}");
    assert_eq!(r["button"]["disabled"], true, "{r:#}");
    if r["permission"] != "granted" {
        // A headless shell (the npm Chromium) denies notifications whatever is allowed: the
        // page says so, and the announcement itself is not seen here.
        assert_eq!(r["button"]["text"], r["button"]["blocked"], "{r:#}");
        eprintln!("this Chromium denies notifications: only the page's 'blocked' line was checked");
        return;
    }
    assert_eq!(r["button"]["text"], r["button"]["on"], "{r:#}");
    let notes = r["notes"].as_array().expect("notes");
    assert_eq!(notes.len(), 1, "one notification for one new plan: {r:#}");
    assert_eq!(notes[0]["body"], "Announce me", "{r:#}");
    assert_eq!(
        notes[0]["tag"],
        format!("planhost-{}", plan.proposal_id),
        "{r:#}"
    );
    assert_eq!(r["focused"], plan.proposal_id.as_str(), "{r:#}");
}

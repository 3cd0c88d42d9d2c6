//! The session list in real Chromium: the shell catalog and a session's shell chosen through the
//! host's validation (a refused one shows the host's code), and the Agent | Plan selector with the
//! host's idle rule (a busy session offers none, and a forged switch is refused). Each test
//! prepares the host over its socket, runs one browser scenario (browser/scenarios.mjs) and then
//! asserts the host's own state over the socket.

use planhost_core::{Mode, PlanState, PolicyPreset, ShellId};
use planhost_protocol::methods;
use serde_json::{Value, json};

use crate::browser::{browser_scenario, run_scenario};
use crate::http::{Visitor, form, http, log_in};
use crate::support::{WebHost, agent, open_session, params, session_of};

/// The values of a select's options as the scenario saw them.
fn option_values(options: &Value) -> Vec<&str> {
    options
        .as_array()
        .map(|os| {
            os.iter()
                .map(|o| o["value"].as_str().unwrap_or_default())
                .collect()
        })
        .unwrap_or_default()
}

/// The option a select shows as chosen by the server (its `selected` attribute).
fn server_selected(options: &Value) -> Vec<&str> {
    options
        .as_array()
        .map(|os| {
            os.iter()
                .filter(|o| o["selectedAttr"] == true)
                .map(|o| o["value"].as_str().unwrap_or_default())
                .collect()
        })
        .unwrap_or_default()
}

/// The codes of the errors a session's row shows.
fn error_codes(row: &Value) -> Vec<&str> {
    row["errors"]
        .as_array()
        .map(|es| {
            es.iter()
                .map(|e| e["code"].as_str().unwrap_or_default())
                .collect()
        })
        .unwrap_or_default()
}

/// The `li.session` of `sid` in the HTML of a session list, up to its `</li>`.
fn session_item<'h>(html: &'h str, sid: &str) -> Option<&'h str> {
    let (_, rest) = html.split_once(&format!("data-session-id=\"{sid}\""))?;
    rest.split_once("</li>").map(|(item, _)| item)
}

#[test]
fn choosing_strict_in_the_page_sets_the_sessions_preset() {
    let (_slot, budget) = browser_scenario();
    let host = WebHost::start(&budget);
    let mut agent = agent(&host);
    let sid = open_session(&host, &mut agent);
    assert_eq!(session_of(&mut agent, &sid).policy_preset, None);
    let result = run_scenario(
        &host,
        "preset_change",
        json!({ "sessionId": sid, "preset": "strict" }),
    );
    // The host default first, then the four presets; the default chosen before, strict after.
    assert_eq!(
        option_values(&result["before"]["presetOptions"]),
        ["", "host", "literal", "strict", "explore"],
        "{result:#}"
    );
    assert_eq!(
        server_selected(&result["before"]["presetOptions"]),
        [""],
        "{result:#}"
    );
    let after = &result["after"];
    assert_eq!(after["presetValue"], "strict", "{result:#}");
    assert_eq!(
        server_selected(&after["presetOptions"]),
        ["strict"],
        "{result:#}"
    );
    assert_eq!(error_codes(after), Vec::<&str>::new(), "{result:#}");
    assert_eq!(
        session_of(&mut agent, &sid).policy_preset,
        Some(PolicyPreset::Strict)
    );
}

#[test]
fn choosing_bash_in_the_page_pins_it_on_the_session() {
    let (_slot, budget) = browser_scenario();
    let host = WebHost::start(&budget);
    let mut agent = agent(&host);
    let sid = open_session(&host, &mut agent);
    assert_eq!(session_of(&mut agent, &sid).shell_id, None);

    let result = run_scenario(
        &host,
        "shell_change",
        json!({ "sessionId": sid, "shell": "bash" }),
    );
    // The catalog: bash is there and available; the shell used now says whether it is a fallback.
    assert_eq!(result["bashAvailable"], 1, "{result:#}");
    let effective = result["catalog"]["effective"]
        .as_array()
        .expect("effective");
    assert_eq!(effective.len(), 1, "one p.effective: {result:#}");
    assert!(
        effective[0]["fallback"] == "true" || effective[0]["fallback"] == "false",
        "data-fallback is true or false: {result:#}"
    );
    // The session's choice: the host default first, then the catalog's ids.
    let catalog: Vec<&str> = result["catalog"]["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .map(|r| r["id"].as_str().unwrap_or_default())
        .collect();
    let offered = option_values(&result["before"]["shellOptions"]);
    assert_eq!(offered.first(), Some(&""), "{result:#}");
    assert_eq!(offered.get(1..), Some(catalog.as_slice()), "{result:#}");
    assert_eq!(
        server_selected(&result["before"]["shellOptions"]),
        [""],
        "{result:#}"
    );

    let after = &result["after"];
    assert_eq!(after["shellValue"], "bash", "{result:#}");
    assert_eq!(
        server_selected(&after["shellOptions"]),
        ["bash"],
        "{result:#}"
    );
    assert_eq!(error_codes(after), Vec::<&str>::new(), "{result:#}");

    let session = session_of(&mut agent, &sid);
    assert_eq!(session.shell_id, Some(ShellId::Bash), "{session:?}");
}

#[test]
fn a_shell_the_host_refuses_shows_its_code_and_leaves_the_session_unchanged() {
    let (_slot, budget) = browser_scenario();
    let host = WebHost::start(&budget);
    let mut agent = agent(&host);
    let sid = open_session(&host, &mut agent);
    let before = session_of(&mut agent, &sid);
    assert_eq!(before.shell_id, None, "{before:?}");

    // cmd is a catalog id of Windows: not offered on this platform, so forced into the select.
    let result = run_scenario(
        &host,
        "refused_shell",
        json!({ "sessionId": sid, "shell": "cmd" }),
    );
    assert!(
        !option_values(&result["before"]["shellOptions"]).contains(&"cmd"),
        "cmd is not offered here: {result:#}"
    );
    assert_eq!(result["forced"], "cmd", "{result:#}");
    let after = &result["after"];
    assert_eq!(
        error_codes(after),
        ["COMMAND_SHELL_INVALID"],
        "the session's row shows the host's code: {result:#}"
    );
    assert_eq!(
        after["shellValue"], "",
        "the page still shows the host default: {result:#}"
    );

    let session = session_of(&mut agent, &sid);
    assert_eq!(session.shell_id, before.shell_id, "{session:?}");
}

#[test]
fn the_agent_plan_selector_switches_an_idle_session_and_a_running_turn_refuses_it() {
    let (_slot, budget) = browser_scenario();
    let host = WebHost::start(&budget);
    let mut agent = agent(&host);
    let idle = open_session(&host, &mut agent);
    let busy = open_session(&host, &mut agent);
    let turn = agent.call::<methods::TurnsBegin>(params::begin(&busy)).id;
    assert_eq!(session_of(&mut agent, &idle).mode, Mode::Agent);

    let result = run_scenario(
        &host,
        "mode_selector",
        json!({ "idleSessionId": idle, "busySessionId": busy }),
    );
    let before = &result["before"];
    assert_eq!(before["idle"]["mode"], "agent", "{result:#}");
    assert_eq!(before["idle"]["modeForms"], 1, "{result:#}");
    assert_eq!(
        option_values(&before["idle"]["modeOptions"]),
        ["agent", "plan"],
        "{result:#}"
    );
    assert_eq!(
        server_selected(&before["idle"]["modeOptions"]),
        ["agent"],
        "{result:#}"
    );
    // The host's idle rule: a session with a running turn offers no selector (nor a shell).
    assert_eq!(before["busy"]["idle"], "false", "{result:#}");
    assert_eq!(before["busy"]["modeForms"], 0, "{result:#}");
    assert_eq!(before["busy"]["shellForms"], 0, "{result:#}");

    let after = &result["after"];
    assert_eq!(after["idle"]["mode"], "plan", "{result:#}");
    assert_eq!(after["idle"]["modeText"], "Plan", "{result:#}");
    assert_eq!(
        server_selected(&after["idle"]["modeOptions"]),
        ["plan"],
        "{result:#}"
    );
    assert_eq!(
        error_codes(&after["idle"]),
        Vec::<&str>::new(),
        "{result:#}"
    );
    let switched = session_of(&mut agent, &idle);
    assert_eq!(switched.mode, Mode::Plan, "{switched:?}");
    assert_eq!(switched.plan_state, PlanState::Planning, "{switched:?}");

    // The switch forged for the busy session, as the page's script would send it (cookie, the
    // page's CSRF value, same Origin, `x-planhost-fetch: 1`): the host's refusal, with its code.
    let Visitor { cookie, csrf, .. } = log_in(&host, &host.token);
    let hp = host.host_port();
    let origin = host.origin();
    let sid = busy.as_str();
    let refused = http(
        &host,
        "POST",
        &format!("/sessions/{sid}/mode"),
        &[
            ("Host", &hp),
            ("Cookie", &cookie),
            ("Origin", &origin),
            ("x-planhost-fetch", "1"),
        ],
        Some(&form(&[("mode", "plan"), ("csrf", &csrf)])),
    );
    assert_eq!(refused.status, 409, "{refused:#?}");
    refused.assert_no_cors();
    let item = session_item(&refused.body, sid)
        .unwrap_or_else(|| panic!("the answer lists the session {sid}: {}", refused.body));
    assert!(
        item.contains("data-code=\"SESSION_NOT_IDLE\""),
        "the busy session's row shows SESSION_NOT_IDLE: {item}"
    );
    let still = session_of(&mut agent, &busy);
    assert_eq!(still.mode, Mode::Agent, "{still:?}");
    assert_eq!(
        still.active_turn.as_ref().map(|t| &t.id),
        Some(&turn),
        "{still:?}"
    );
}

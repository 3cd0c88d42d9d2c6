//! Server-rendered HTML: the page, its lists (sessions, publications, asks, shells) and the
//! refusal pages; the plan cards are `card.rs`. Every string comes from the language's catalog;
//! every value from the host is escaped.

use planhost_core::{ApprovalStatus, ExecutionState, Mode, PlanState};
use planhost_protocol::{
    ExecutionInfo, PermissionAsk, PublicationInfo, SessionInfo, ShellCatalog, ToolCallState,
};

pub(crate) use super::card::{Card, card};
use super::i18n::Lang;

/// Escapes text for HTML content and double-quoted attributes.
pub(crate) fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// What the page shows besides the plan cards.
#[derive(Debug, Default)]
pub(crate) struct Lists {
    pub(crate) sessions: Vec<SessionInfo>,
    pub(crate) publications: Vec<PublicationInfo>,
    pub(crate) asks: Vec<PermissionAsk>,
    pub(crate) shells: Option<ShellCatalog>,
    /// A refused change to one session (its id, code, message).
    pub(crate) session_error: Option<(String, String, String)>,
    /// A refused answer to a publication or an ask (its id, code, message).
    pub(crate) answer_error: Option<(String, String, String)>,
}

/// The whole page.
pub(crate) fn page(lang: Lang, csrf: &str, lists: &Lists, cards: &[Card], now_ms: i64) -> String {
    let other = lang.other();
    let waiting = cards
        .iter()
        .filter(|c| c.approval.status == ApprovalStatus::Pending)
        .count()
        + lists.asks.len()
        + lists.publications.len();
    format!(
        r#"<!doctype html>
<html lang="{tag}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="csrf" content="{csrf}">
<meta name="server-now" content="{now_ms}">
<meta name="title-base" content="{title_base}">
<meta name="title-count" content="{title_count}">
<title>{title}</title>
<link rel="stylesheet" href="/app.css">
<script src="/app.js" defer></script>
</head>
<body data-err-offline="{err_offline}" data-err-unauthorized="{err_unauthorized}" data-err-gone="{err_gone}" data-err-failed="{err_failed}" data-code-offline="{code_offline}" data-code-unauthorized="{code_unauthorized}" data-code-gone="{code_gone}" data-code-failed="{code_failed}" data-copied="{copied}">
<header>
<h1>{heading}</h1>
<span id="live" role="status" data-connected="{live_ok}" data-lost="{live_lost}" data-down="{live_down}" data-revoked="{live_revoked}"></span>
<button type="button" id="notify-me" hidden data-on="{notify_on}" data-blocked="{notify_blocked}" data-new="{notify_new}">{notify_l}</button>
<a class="lang-switch" href="/?lang={other_tag}" hreflang="{other_tag}" lang="{other_tag}" aria-label="{switch_label}">{switch}</a>
</header>
<main>
<section aria-labelledby="cards-heading">
<h2 id="cards-heading">{cards_heading}</h2>
<div id="cards" data-empty="{cards_empty}">{cards}</div>
</section>
<section aria-labelledby="publications-heading">
<h2 id="publications-heading">{publications_heading}</h2>
<div id="publications-box">{publications}</div>
</section>
<section aria-labelledby="asks-heading">
<h2 id="asks-heading">{asks_heading}</h2>
<div id="asks-box">{asks}</div>
</section>
<section aria-labelledby="sessions-heading">
<h2 id="sessions-heading">{sessions_heading}</h2>
<div id="sessions-box">{sessions}</div>
</section>
<section aria-labelledby="shells-heading">
<h2 id="shells-heading">{shells_heading}</h2>
<div id="shells-box">{shells}</div>
</section>
<section aria-labelledby="diagnostics-heading">
<h2 id="diagnostics-heading">{diag_heading}</h2>
<details id="diagnostics"><summary>{diag_show}</summary>
<div id="diagnostics-box"><p><a href="/diagnostics">{diag_open}</a></p></div>
</details>
</section>
</main>
</body>
</html>
"#,
        tag = lang.tag(),
        csrf = esc(csrf),
        title_base = esc(lang.t("page.title")),
        title_count = esc(lang.t("page.title.count")),
        title = esc(&page_title(lang, waiting)),
        heading = lang.t("page.heading"),
        live_ok = esc(lang.t("page.live.connected")),
        live_lost = esc(lang.t("page.live.lost")),
        live_down = esc(lang.t("page.live.down")),
        live_revoked = esc(lang.t("page.live.revoked")),
        err_offline = esc(lang.t("page.error.offline")),
        err_unauthorized = esc(lang.t("page.error.unauthorized")),
        err_gone = esc(lang.t("page.error.gone")),
        err_failed = esc(lang.t("page.error.failed")),
        copied = esc(lang.t("card.copied")),
        code_offline = planhost_core::ErrorCode::HostUnreachable.as_str(),
        code_unauthorized = planhost_core::ErrorCode::WebUnauthorized.as_str(),
        code_gone = planhost_core::ErrorCode::WebNotFound.as_str(),
        code_failed = planhost_core::ErrorCode::WebFailed.as_str(),
        notify_l = lang.t("page.notify"),
        notify_on = esc(lang.t("page.notify.on")),
        notify_blocked = esc(lang.t("page.notify.blocked")),
        notify_new = esc(lang.t("page.notify.new")),
        other_tag = other.tag(),
        switch_label = esc(lang.t("page.lang.switch.label")),
        switch = lang.t("page.lang.switch"),
        cards_heading = lang.t("cards.heading"),
        cards_empty = esc(lang.t("cards.empty")),
        cards = cards_html(lang, csrf, cards),
        publications_heading = lang.t("publications.heading"),
        publications = publications_html(lang, csrf, lists),
        asks_heading = lang.t("asks.heading"),
        asks = asks_html(lang, csrf, lists),
        sessions_heading = lang.t("sessions.heading"),
        sessions = sessions_html(lang, csrf, lists),
        shells_heading = lang.t("shells.heading"),
        shells = shells_html(lang, lists.shells.as_ref()),
        diag_heading = lang.t("diag.heading"),
        diag_show = lang.t("diag.show"),
        diag_open = lang.t("diag.open"),
    )
}

/// The page's title: how many answers are waiting, then the name.
fn page_title(lang: Lang, waiting: usize) -> String {
    if waiting == 0 {
        lang.t("page.title").to_owned()
    } else {
        lang.fill("page.title.count", &[("count", &waiting.to_string())])
    }
}

/// A refusal: its code, what it means in the page's language (Chinese: from the code
/// registry's catalog), and the host's own message.
pub(crate) fn error_line(lang: Lang, code: &str, message: &str) -> String {
    let (meaning, message) = match lang.code(code) {
        Some(meaning) => (
            format!("{} ", with_code(meaning)),
            format!(
                r#"<span class="detail" lang="en">{}</span>"#,
                with_code(message)
            ),
        ),
        None => (String::new(), with_code(message)),
    };
    format!(
        r#"<p class="error" role="alert" data-code="{code}"><strong>{heading}</strong> <code>{code}</code> {meaning}{message}</p>"#,
        code = esc(code),
        heading = lang.t("error.heading"),
    )
}

fn error_for(lang: Lang, of: Option<&(String, String, String)>, id: &str) -> String {
    of.filter(|(which, _, _)| which == id)
        .map_or(String::new(), |(_, code, message)| {
            error_line(lang, code, message)
        })
}

/// Pending publication approvals (`/plan save`), each with its answer.
pub(crate) fn publications_html(lang: Lang, csrf: &str, lists: &Lists) -> String {
    if lists.publications.is_empty() {
        return format!(r#"<p class="empty">{}</p>"#, lang.t("publications.empty"));
    }
    lists
        .publications
        .iter()
        .map(|p| {
            let id = esc(p.publication_id.as_str());
            let what = match &p.base_sha256 {
                Some(base) => esc(&lang.fill("publication.update", &[("sha", &base[..base.len().min(12)])])),
                None => lang.t("publication.new").to_owned(),
            };
            format!(
                r#"<article class="publication" id="publication-{id}" data-publication-id="{id}" data-status="{status}">
<p><span class="label">{path_l}</span> <code class="path">{path}</code> ({what})</p>
<p><span class="label">{rev_l}</span> <span class="revision">{rev}</span> <code class="sha256">{sha}</code></p>
{error}<form class="answer" method="post" action="/publications/{id}" data-replace="publications-box">
<input type="hidden" name="csrf" value="{csrf}">
<button type="submit" name="action" value="approve" class="approve">{approve}</button>
<button type="submit" name="action" value="reject" class="reject">{reject}</button>
</form></article>"#,
                status = p.status.as_str(),
                path_l = lang.t("publication.path"),
                path = esc(&p.relative_path),
                rev_l = lang.t("publication.revision"),
                rev = p.revision,
                sha = esc(&p.sha256),
                error = error_for(lang, lists.answer_error.as_ref(), p.publication_id.as_str()),
                csrf = esc(csrf),
                approve = lang.t("publication.approve"),
                reject = lang.t("publication.reject"),
            )
        })
        .collect()
}

/// Open permission asks, with their exact input.
pub(crate) fn asks_html(lang: Lang, csrf: &str, lists: &Lists) -> String {
    if lists.asks.is_empty() {
        return format!(r#"<p class="empty">{}</p>"#, lang.t("asks.empty"));
    }
    lists
        .asks
        .iter()
        .map(|a| {
            let id = esc(a.request_id.as_str());
            let input = serde_json::to_string_pretty(&a.input).unwrap_or_default();
            format!(
                r#"<article class="ask" id="ask-{id}" data-ask-id="{id}">
<p><span class="label">{tool_l}</span> <code class="tool">{tool}</code></p>
<p><span class="label">{reason_l}</span> <span class="reason">{reason}</span></p>
<p class="label">{input_l}</p><pre class="input">{input}</pre>
{error}<form class="answer" method="post" action="/asks/{id}" data-replace="asks-box">
<input type="hidden" name="csrf" value="{csrf}">
<button type="submit" name="decision" value="allow" class="approve">{allow}</button>
<button type="submit" name="decision" value="deny" class="reject">{deny}</button>
</form></article>"#,
                tool_l = lang.t("ask.tool"),
                tool = esc(&a.tool_name),
                reason_l = lang.t("ask.reason"),
                reason = with_code(&a.reason),
                input_l = lang.t("ask.input"),
                input = esc(&input),
                error = error_for(lang, lists.answer_error.as_ref(), a.request_id.as_str()),
                csrf = esc(csrf),
                allow = lang.t("ask.allow"),
                deny = lang.t("ask.deny"),
            )
        })
        .collect()
}

/// The shell catalog: availability, the default, what is used now and whether that is a fallback.
pub(crate) fn shells_html(lang: Lang, catalog: Option<&ShellCatalog>) -> String {
    let Some(catalog) = catalog else {
        return String::new();
    };
    let rows: String = catalog
        .options
        .iter()
        .map(|o| {
            format!(
                r#"<tr data-shell-id="{id}" data-available="{available}"><td>{label}{default}</td><td>{avail}</td></tr>"#,
                id = esc(o.id.as_str()),
                available = o.available,
                label = esc(&o.label),
                default = if o.is_default {
                    format!(r#" <span class="default">({})</span>"#, lang.t("shells.default"))
                } else {
                    String::new()
                },
                avail = if o.available { lang.t("shells.yes") } else { lang.t("shells.no") },
            )
        })
        .collect();
    let effective = catalog.effective.as_ref().map_or(String::new(), |e| {
        format!(
            r#"<p class="effective" data-shell-id="{id}" data-fallback="{fb}">{text}{fallback}</p>"#,
            id = esc(e.id.as_str()),
            fb = e.fallback,
            text = esc(&lang.fill("shells.effective", &[("shell", e.id.as_str())])),
            fallback = if e.fallback {
                format!(" {}", lang.t("shells.fallback"))
            } else {
                String::new()
            },
        )
    });
    format!(
        r#"<table id="shells"><thead><tr><th scope="col">{name}</th><th scope="col">{avail}</th></tr></thead><tbody>{rows}</tbody></table>{effective}"#,
        name = lang.t("shells.name"),
        avail = lang.t("shells.available"),
    )
}

/// The cards, or the "nothing waiting" line.
pub(crate) fn cards_html(lang: Lang, csrf: &str, cards: &[Card]) -> String {
    if cards.is_empty() {
        return format!(r#"<p class="empty">{}</p>"#, lang.t("cards.empty"));
    }
    cards.iter().map(|c| card(lang, csrf, c)).collect()
}

/// The session list; idle sessions offer the Agent | Plan selector and the shell.
pub(crate) fn sessions_html(lang: Lang, csrf: &str, lists: &Lists) -> String {
    let sessions = &lists.sessions;
    if sessions.is_empty() {
        return format!(
            r#"<ul id="sessions"></ul><p class="empty">{}</p>"#,
            lang.t("sessions.empty")
        );
    }
    let items: String = sessions
        .iter()
        .map(|s| session_item(lang, csrf, s, lists))
        .collect();
    format!(r#"<ul id="sessions">{items}</ul>"#)
}

/// One session's `<li>`.
pub(crate) fn session_item(lang: Lang, csrf: &str, s: &SessionInfo, lists: &Lists) -> String {
    let mode = match s.mode {
        Mode::Agent => lang.t("mode.agent"),
        Mode::Plan => lang.t("mode.plan"),
    };
    let plan_state = match s.plan_state {
        PlanState::Planning => lang.t("plan_state.planning"),
        PlanState::AwaitingApproval => lang.t("plan_state.awaiting_approval"),
        PlanState::Inactive => lang.t("plan_state.inactive"),
        PlanState::Stopped => lang.t("plan_state.stopped"),
    };
    let turn = if s.active_turn.is_some() {
        lang.t("sessions.turn.running")
    } else {
        lang.t("sessions.turn.idle")
    };
    let pending = s.pending_approval.as_ref().map_or(String::new(), |a| {
        format!(
            r##"<dt>{}</dt><dd class="pending"><a href="#card-{id}">{title}</a></dd>"##,
            lang.t("sessions.pending"),
            id = esc(a.proposal_id.as_str()),
            title = esc(&a.title),
        )
    });
    let tools = if s.active_turn.is_some() {
        tool_calls_html(lang, csrf, s)
    } else {
        String::new()
    };
    let execution = s.live_execution.as_ref().map_or(String::new(), |e| {
        format!(
            r#"<dt>{}</dt><dd class="execution" data-state="{}">{}</dd>"#,
            lang.t("sessions.execution"),
            e.state.as_str(),
            execution_state(lang, e.state)
        )
    });
    let last = s
        .last_execution
        .as_ref()
        .map_or(String::new(), |e| last_execution_html(lang, e));
    // Offered only where the host would take them: an idle session (no turn, no execution,
    // no plan waiting for an answer).
    let controls =
        if s.active_turn.is_none() && s.live_execution.is_none() && s.pending_approval.is_none() {
            idle_controls(lang, csrf, s, lists.shells.as_ref())
        } else {
            String::new()
        };
    let error = error_for(lang, lists.session_error.as_ref(), s.id.as_str());
    format!(
        r#"<li class="session" data-session-id="{id}" data-idle="{idle}"><dl>
<dt>{ws_l}</dt><dd class="workspace"><code>{ws}</code></dd>
<dt>{agent_l}</dt><dd class="agent" data-agent="{agent_v}">{agent}</dd>
<dt>{mode_l}</dt><dd class="mode" data-mode="{mode_v}">{mode}</dd>
<dt>{pm_l}</dt><dd class="permission-mode" data-permission-mode="{pm_v}">{pm}</dd>
<dt>{ps_l}</dt><dd class="plan-state" data-plan-state="{ps_v}">{plan_state}</dd>
<dt>{turn_l}</dt><dd class="turn">{turn}</dd>
{tools}{pending}{execution}{last}</dl>{error}{controls}</li>"#,
        id = esc(s.id.as_str()),
        idle = s.active_turn.is_none(),
        ws_l = lang.t("sessions.workspace"),
        ws = esc(&s.workspace_root),
        agent_l = lang.t("sessions.agent"),
        agent_v = s.agent.as_str(),
        agent = agent_name(lang, s.agent),
        mode_l = lang.t("sessions.mode"),
        mode_v = s.mode.as_str(),
        pm_l = lang.t("sessions.permission_mode"),
        pm_v = s.permission_mode.as_str(),
        pm = lang.t(match s.permission_mode {
            planhost_core::PermissionMode::Inherit => "permission_mode.inherit",
            planhost_core::PermissionMode::Ask => "card.mode.ask",
            planhost_core::PermissionMode::AcceptEdits => "card.mode.accept_edits",
            planhost_core::PermissionMode::Auto => "card.mode.auto",
        }),
        ps_l = lang.t("sessions.plan_state"),
        ps_v = s.plan_state.as_str(),
        turn_l = lang.t("sessions.turn"),
    )
}

fn execution_state(lang: Lang, state: ExecutionState) -> &'static str {
    match state {
        ExecutionState::Queued => lang.t("execution.state.queued"),
        ExecutionState::Running => lang.t("execution.state.running"),
        ExecutionState::Completed => lang.t("execution.state.completed"),
        ExecutionState::Interrupted => lang.t("execution.state.interrupted"),
    }
}

/// The running turn's unfinished tool calls: what each is and since when.
fn tool_calls_html(lang: Lang, csrf: &str, s: &SessionInfo) -> String {
    let items: String = s
        .tool_calls
        .iter()
        .map(|c| {
            let state = match c.state {
                ToolCallState::Allowed => lang.t("tool_state.allowed"),
                ToolCallState::Asking => lang.t("tool_state.asking"),
                ToolCallState::Running => lang.t("tool_state.running"),
            };
            // A call the host runs can be stopped by a person (its process tree is killed).
            let stop = if c.state == ToolCallState::Running {
                format!(
                    r#" <form class="stop" method="post" action="/sessions/{sid}/tools/{id}/stop" data-replace="sessions-box"><input type="hidden" name="csrf" value="{csrf}"><button type="submit" class="reject">{stop}</button></form>"#,
                    sid = esc(s.id.as_str()),
                    id = esc(c.tool_call_id.as_str()),
                    csrf = esc(csrf),
                    stop = lang.t("sessions.stop"),
                )
            } else {
                String::new()
            };
            format!(
                r#"<li class="tool-call" data-state="{v}" data-tool-call-id="{id}"><code>{name}</code> <span class="tool-state">{state}</span> <time class="local" datetime="{at}">{at}</time> <span class="elapsed" data-since="{since}" aria-live="off"></span>{stop}</li>"#,
                since = c.since.0,
                v = c.state.as_str(),
                id = esc(c.tool_call_id.as_str()),
                name = esc(&c.tool_name),
                at = rfc3339(c.since.0),
            )
        })
        .collect();
    let body = if items.is_empty() {
        format!(
            r#"<span class="none">{}</span>"#,
            lang.t("sessions.tools.none")
        )
    } else {
        format!(r#"<ul class="tool-calls">{items}</ul>"#)
    };
    format!(
        r#"<dt>{}</dt><dd class="tools">{body}</dd>"#,
        lang.t("sessions.tools")
    )
}

/// The most recent finished execution: how it ended and when.
fn last_execution_html(lang: Lang, e: &ExecutionInfo) -> String {
    let ended = e
        .turn
        .as_ref()
        .and_then(|t| t.ended_at)
        .map_or(String::new(), |at| {
            format!(
                r#" <time class="local" datetime="{at}">{at}</time>"#,
                at = rfc3339(at.0)
            )
        });
    format!(
        r#"<dt>{}</dt><dd class="last-execution" data-state="{}" data-execution-id="{}">{}{ended}</dd>"#,
        lang.t("sessions.execution.last"),
        e.state.as_str(),
        esc(e.execution_id.as_str()),
        execution_state(lang, e.state),
    )
}

fn idle_controls(lang: Lang, csrf: &str, s: &SessionInfo, shells: Option<&ShellCatalog>) -> String {
    let id = esc(s.id.as_str());
    let sel = |on: bool| if on { " selected" } else { "" };
    let mode_form = format!(
        r#"<form class="set-mode" method="post" action="/sessions/{id}/mode" data-replace="sessions-box">
<input type="hidden" name="csrf" value="{csrf}">
<label for="mode-select-{id}">{mode_l}</label>
<select id="mode-select-{id}" name="mode">
<option value="agent"{agent_sel}>{agent}</option>
<option value="plan"{plan_sel}>{plan}</option>
</select>
<button type="submit">{set}</button></form>"#,
        csrf = esc(csrf),
        mode_l = lang.t("sessions.mode"),
        agent_sel = sel(s.mode == Mode::Agent),
        plan_sel = sel(s.mode == Mode::Plan),
        agent = lang.t("mode.agent"),
        plan = lang.t("mode.plan"),
        set = lang.t("sessions.set_mode"),
    );
    let options: String = shells
        .map(|c| {
            c.options
                .iter()
                .map(|o| {
                    let chosen = s.shell_id.as_ref().is_some_and(|x| x == &o.id);
                    let unavailable = if o.available {
                        String::new()
                    } else {
                        format!(" ({})", lang.t("sessions.shell.unavailable"))
                    };
                    format!(
                        r#"<option value="{v}"{selected}>{label}{unavailable}</option>"#,
                        v = esc(o.id.as_str()),
                        selected = sel(chosen),
                        label = esc(&o.label),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    let shell_form = format!(
        r#"<form class="set-shell" method="post" action="/sessions/{id}/shell" data-replace="sessions-box">
<input type="hidden" name="csrf" value="{csrf}">
<label for="shell-select-{id}">{shell_l}</label>
<select id="shell-select-{id}" name="shell">
<option value=""{default_sel}>{default}</option>
{options}
</select>
<button type="submit">{set}</button></form>"#,
        csrf = esc(csrf),
        shell_l = lang.t("sessions.shell"),
        default_sel = sel(s.shell_id.is_none()),
        default = lang.t("sessions.shell.default"),
        set = lang.t("sessions.set_shell"),
    );
    let preset_options: String = [
        ("host", "sessions.preset.host"),
        ("literal", "sessions.preset.literal"),
        ("strict", "sessions.preset.strict"),
        ("explore", "sessions.preset.explore"),
    ]
    .iter()
    .map(|(value, key)| {
        let chosen = s.policy_preset.is_some_and(|p| p.as_str() == *value);
        format!(
            r#"<option value="{value}"{selected}>{label}</option>"#,
            selected = sel(chosen),
            label = esc(lang.t(key)),
        )
    })
    .collect();
    let preset_form = format!(
        r#"<form class="set-preset" method="post" action="/sessions/{id}/preset" data-replace="sessions-box">
<input type="hidden" name="csrf" value="{csrf}">
<label for="preset-select-{id}">{preset_l}</label>
<select id="preset-select-{id}" name="preset">
<option value=""{default_sel}>{default}</option>
{preset_options}
</select>
<button type="submit">{set}</button></form>"#,
        csrf = esc(csrf),
        preset_l = lang.t("sessions.preset"),
        default_sel = sel(s.policy_preset.is_none()),
        default = lang.t("sessions.preset.default"),
        set = lang.t("sessions.set_preset"),
    );
    format!(
        r#"<div class="idle-controls" role="group" aria-label="{l}">{mode_form}{shell_form}{preset_form}</div>"#,
        l = esc(lang.t("sessions.idle_controls")),
    )
}

/// The agent's name in the page's language.
pub(crate) fn agent_name(lang: Lang, agent: planhost_core::Agent) -> &'static str {
    lang.t(match agent {
        planhost_core::Agent::Pi => "agent.pi",
        planhost_core::Agent::ClaudeCode => "agent.claude_code",
        planhost_core::Agent::Codex => "agent.codex",
        planhost_core::Agent::GeminiCli => "agent.gemini_cli",
        planhost_core::Agent::Other => "agent.other",
    })
}

/// A page for a refused request: 401, 403, 404, 421. Text in backticks is a command.
pub(crate) fn refusal(lang: Lang, id: &str, title: &'static str, body: &'static str) -> String {
    format!(
        r#"<!doctype html>
<html lang="{tag}"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title><link rel="stylesheet" href="/app.css"></head>
<body><main id="{id}"><h1>{title}</h1><p>{body}</p></main></body></html>
"#,
        tag = lang.tag(),
        id = esc(id),
        title = lang.t(title),
        body = with_code(lang.t(body)),
    )
}

/// Escapes `text`, with each `…` span as `<code>`.
pub(crate) fn with_code(text: &str) -> String {
    text.split('`')
        .enumerate()
        .map(|(i, part)| {
            if i % 2 == 1 {
                format!("<code>{}</code>", esc(part))
            } else {
                esc(part)
            }
        })
        .collect()
}

/// Milliseconds since the epoch as RFC 3339 (UTC, seconds).
pub(crate) fn rfc3339(ms: i64) -> String {
    jiff::Timestamp::from_millisecond(ms)
        .map(|t| t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_in_the_hosts_words_show_as_code_and_stay_escaped() {
        assert_eq!(
            with_code("`rm` is not a known read-only program <b>"),
            "<code>rm</code> is not a known read-only program &lt;b&gt;"
        );
        assert_eq!(with_code("a `<x>` b"), "a <code>&lt;x&gt;</code> b");
        let line = error_line(
            Lang::ZhCn,
            "WEB_NOT_SERVED",
            "start it with `planhost serve --web`",
        );
        assert!(
            line.contains("<code>planhost serve --web</code>") && !line.contains('`'),
            "{line}"
        );
    }

    #[test]
    fn escaping_covers_markup_and_quotes() {
        assert_eq!(
            esc(r#"<a href="x" onclick='y'>&</a>"#),
            "&lt;a href=&quot;x&quot; onclick=&#39;y&#39;&gt;&amp;&lt;/a&gt;"
        );
    }

    #[test]
    fn every_language_renders_the_empty_page_without_a_raw_key() {
        for lang in [Lang::En, Lang::ZhCn] {
            let html = page(lang, "c", &Lists::default(), &[], 0);
            for prefix in ["page.", "cards.", "sessions.", "card.", "status."] {
                assert!(!html.contains(&format!(">{prefix}")), "{lang:?}: {html}");
            }
            let refused = refusal(lang, "x", "forbidden.title", "forbidden.body");
            assert!(!refused.contains("forbidden."), "{refused}");
            let refused = refusal(lang, "x", "approver_refused.title", "approver_refused.body");
            assert!(!refused.contains("approver_refused."), "{refused}");
            assert!(refused.contains("ROLE_APPROVER_REFUSED"), "{refused}");
        }
    }
}

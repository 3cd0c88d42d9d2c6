//! Server-rendered HTML: the page, its lists (sessions, publications, asks, shells) and the
//! refusal pages; the plan cards are `card.rs`. Every string comes from the language's catalog;
//! the templates are maud's `html!`, which escapes every value it is given (only the rendered
//! plan, `markdown::render`, is markup by construction).

use maud::{DOCTYPE, Markup, html};
use planhost_core::{ApprovalStatus, ExecutionState, Mode, PermissionMode, PlanState, SessionId};
use planhost_protocol::{
    ExecutionInfo, PermissionAsk, PublicationInfo, SessionInfo, ShellCatalog, ToolCallState,
};

pub(crate) use super::card::{Card, card};
use super::i18n::Lang;

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

/// The `<head>` every page of the page shares: charset, viewport, title and style.
fn head(title: &str, extra: Markup) -> Markup {
    html! {
        head {
            meta charset="utf-8";
            meta name="viewport" content="width=device-width, initial-scale=1";
            (extra)
            title { (title) }
            link rel="stylesheet" href="/app.css";
        }
    }
}

/// The whole page.
pub(crate) fn page(lang: Lang, csrf: &str, lists: &Lists, cards: &[Card], now_ms: i64) -> Markup {
    let other = lang.other();
    let waiting = cards
        .iter()
        .filter(|c| c.approval.status == ApprovalStatus::Pending)
        .count()
        + lists.asks.len()
        + lists.publications.len();
    let meta = html! {
        meta name="csrf" content=(csrf);
        meta name="server-now" content=(now_ms);
        meta name="title-base" content=(lang.t("page.title"));
        meta name="title-count" content=(lang.t("page.title.count"));
        script src="/app.js" defer {}
    };
    let section = |id: &str, heading: &str, body: Markup| {
        html! {
            section aria-labelledby={ (id) "-heading" } {
                h2 id={ (id) "-heading" } { (heading) }
                (body)
            }
        }
    };
    html! {
        (DOCTYPE)
        html lang=(lang.tag()) {
            (head(&page_title(lang, waiting), meta))
            body data-err-offline=(lang.t("page.error.offline"))
                data-err-unauthorized=(lang.t("page.error.unauthorized"))
                data-err-gone=(lang.t("page.error.gone"))
                data-err-failed=(lang.t("page.error.failed"))
                data-code-offline=(planhost_core::ErrorCode::HostUnreachable.as_str())
                data-code-unauthorized=(planhost_core::ErrorCode::WebUnauthorized.as_str())
                data-code-gone=(planhost_core::ErrorCode::WebNotFound.as_str())
                data-code-failed=(planhost_core::ErrorCode::WebFailed.as_str())
                data-copied=(lang.t("card.copied")) {
                header {
                    h1 { (lang.t("page.heading")) }
                    span #live role="status" data-connected=(lang.t("page.live.connected"))
                        data-lost=(lang.t("page.live.lost")) data-down=(lang.t("page.live.down"))
                        data-revoked=(lang.t("page.live.revoked")) {}
                    button #notify-me type="button" hidden data-on=(lang.t("page.notify.on"))
                        data-blocked=(lang.t("page.notify.blocked"))
                        data-new=(lang.t("page.notify.new")) { (lang.t("page.notify")) }
                    a.lang-switch href={ "/?lang=" (other.tag()) } hreflang=(other.tag())
                        lang=(other.tag()) aria-label=(lang.t("page.lang.switch.label")) {
                        (lang.t("page.lang.switch"))
                    }
                }
                main {
                    (section("cards", lang.t("cards.heading"), html! {
                        div #cards data-empty=(lang.t("cards.empty")) { (cards_html(lang, csrf, cards)) }
                    }))
                    (section("publications", lang.t("publications.heading"), html! {
                        div #publications-box { (publications_html(lang, csrf, lists)) }
                    }))
                    (section("asks", lang.t("asks.heading"), html! {
                        div #asks-box { (asks_html(lang, csrf, lists)) }
                    }))
                    (section("sessions", lang.t("sessions.heading"), html! {
                        div #sessions-box { (sessions_html(lang, csrf, lists)) }
                    }))
                    (section("shells", lang.t("shells.heading"), html! {
                        div #shells-box { (shells_html(lang, lists.shells.as_ref())) }
                    }))
                    (section("diagnostics", lang.t("diag.heading"), html! {
                        details #diagnostics {
                            summary { (lang.t("diag.show")) }
                            div #diagnostics-box { p { a href="/diagnostics" { (lang.t("diag.open")) } } }
                        }
                    }))
                }
            }
        }
    }
}

/// A page of its own (diagnostics without the script): the shared head, a heading, the body.
pub(crate) fn standalone(lang: Lang, id: &str, title: &str, body: Markup) -> Markup {
    html! {
        (DOCTYPE)
        html lang=(lang.tag()) {
            (head(title, html! {}))
            body { main id=(id) { h1 { (title) } (body) } }
        }
    }
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
pub(crate) fn error_line(lang: Lang, code: &str, message: &str) -> Markup {
    html! {
        p.error role="alert" data-code=(code) {
            strong { (lang.t("error.heading")) } " "
            code { (code) } " "
            (meaning_and_detail(lang.code(code), message))
        }
    }
}

/// The host's English `detail`, after its `meaning` in the page's language when there is one
/// (then marked as English).
fn meaning_and_detail(meaning: Option<&str>, detail: &str) -> Markup {
    html! {
        @if let Some(meaning) = meaning {
            (with_code(meaning)) " "
            span.detail lang="en" { (with_code(detail)) }
        } @else {
            (with_code(detail))
        }
    }
}

/// The refusal of `id`'s last answer or change, if that is what `of` holds; nothing otherwise.
fn error_for(lang: Lang, of: Option<&(String, String, String)>, id: &str) -> Markup {
    of.filter(|(which, _, _)| which == id).map_or_else(
        || html! {},
        |(_, code, message)| error_line(lang, code, message),
    )
}

/// Pending publication approvals (`/plan save`), each with its answer.
pub(crate) fn publications_html(lang: Lang, csrf: &str, lists: &Lists) -> Markup {
    html! {
        @if lists.publications.is_empty() {
            p.empty { (lang.t("publications.empty")) }
        }
        @for p in &lists.publications {
            @let id = p.publication_id.as_str();
            @let what = match &p.base_sha256 {
                Some(base) => lang.fill("publication.update", &[("sha", &base[..base.len().min(12)])]),
                None => lang.t("publication.new").to_owned(),
            };
            article.publication id={ "publication-" (id) } data-publication-id=(id)
                data-status=(p.status.as_str()) {
                (whose_in(lang, lists, &p.session_id))
                p {
                    span.label { (lang.t("publication.path")) } " "
                    code.path { (p.relative_path) } " (" (what) ")"
                }
                p {
                    span.label { (lang.t("publication.revision")) } " "
                    span.revision { (p.revision) } " "
                    code.sha256 { (p.sha256) }
                }
                (error_for(lang, lists.answer_error.as_ref(), id))
                (answer_form(
                    &format!("/publications/{id}"),
                    "publications-box",
                    csrf,
                    ("action", "approve", lang.t("publication.approve")),
                    ("action", "reject", lang.t("publication.reject")),
                ))
            }
        }
    }
}

/// A yes/no answer that posts to `action` and replaces the list `box_id`: each button a
/// (field name, value, label).
fn answer_form(
    action: &str,
    box_id: &str,
    csrf: &str,
    yes: (&str, &str, &str),
    no: (&str, &str, &str),
) -> Markup {
    html! {
        form.answer method="post" action=(action) data-replace=(box_id) {
            input type="hidden" name="csrf" value=(csrf);
            button.approve type="submit" name=(yes.0) value=(yes.1) { (yes.2) } " "
            button.reject type="submit" name=(no.0) value=(no.1) { (no.2) }
        }
    }
}

/// Open permission asks, with their exact input. In Chinese the reason leads with what the
/// asking rule means, then the host's own sentence as its detail.
pub(crate) fn asks_html(lang: Lang, csrf: &str, lists: &Lists) -> Markup {
    html! {
        @if lists.asks.is_empty() {
            p.empty { (lang.t("asks.empty")) }
        }
        @for a in &lists.asks {
            @let id = a.request_id.as_str();
            article.ask id={ "ask-" (id) } data-ask-id=(id) data-rule=(a.rule.as_str()) {
                (whose_in(lang, lists, &a.session_id))
                p { span.label { (lang.t("ask.tool")) } " " code.tool { (a.tool_name) } }
                p {
                    span.label { (lang.t("ask.reason")) } " "
                    span.reason { (meaning_and_detail(lang.ask_meaning(a.rule), &a.reason)) }
                }
                p.label { (lang.t("ask.input")) }
                pre.input { (serde_json::to_string_pretty(&a.input).unwrap_or_default()) }
                (error_for(lang, lists.answer_error.as_ref(), id))
                (answer_form(
                    &format!("/asks/{id}"),
                    "asks-box",
                    csrf,
                    ("decision", "allow", lang.t("ask.allow")),
                    ("decision", "deny", lang.t("ask.deny")),
                ))
            }
        }
    }
}

/// The shell catalog: availability, the default, what is used now and whether that is a fallback.
pub(crate) fn shells_html(lang: Lang, catalog: Option<&ShellCatalog>) -> Markup {
    let Some(catalog) = catalog else {
        return html! {};
    };
    html! {
        table #shells {
            thead { tr {
                th scope="col" { (lang.t("shells.name")) }
                th scope="col" { (lang.t("shells.available")) }
            } }
            tbody {
                @for o in &catalog.options {
                    tr data-shell-id=(o.id.as_str()) data-available=(o.available) {
                        td {
                            (o.label)
                            @if o.is_default {
                                " " span.default { "(" (lang.t("shells.default")) ")" }
                            }
                        }
                        td { (if o.available { lang.t("shells.yes") } else { lang.t("shells.no") }) }
                    }
                }
            }
        }
        @if let Some(e) = &catalog.effective {
            p.effective data-shell-id=(e.id.as_str()) data-fallback=(e.fallback) {
                (lang.fill("shells.effective", &[("shell", e.id.as_str())]))
                @if e.fallback { " " (lang.t("shells.fallback")) }
            }
        }
    }
}

/// The cards, or the "nothing waiting" line.
pub(crate) fn cards_html(lang: Lang, csrf: &str, cards: &[Card]) -> Markup {
    html! {
        @if cards.is_empty() {
            p.empty { (lang.t("cards.empty")) }
        }
        @for c in cards { (card(lang, csrf, c)) }
    }
}

/// The session list; idle sessions offer the Agent | Plan selector and the shell.
pub(crate) fn sessions_html(lang: Lang, csrf: &str, lists: &Lists) -> Markup {
    html! {
        ul #sessions {
            @for s in &lists.sessions { (session_item(lang, csrf, s, lists)) }
        }
        @if lists.sessions.is_empty() {
            p.empty { (lang.t("sessions.empty")) }
        }
    }
}

/// One session's `<li>`.
pub(crate) fn session_item(lang: Lang, csrf: &str, s: &SessionInfo, lists: &Lists) -> Markup {
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
    let permission = lang.t(match s.permission_mode {
        PermissionMode::Inherit => "permission_mode.inherit",
        PermissionMode::Ask => "card.mode.ask",
        PermissionMode::AcceptEdits => "card.mode.accept_edits",
        PermissionMode::Auto => "card.mode.auto",
    });
    // Offered only where the host would take them: an idle session (no turn, no execution,
    // no plan waiting for an answer).
    let idle =
        s.active_turn.is_none() && s.live_execution.is_none() && s.pending_approval.is_none();
    html! {
        li.session data-session-id=(s.id.as_str()) data-idle=(s.active_turn.is_none()) {
            dl {
                dt { (lang.t("sessions.workspace")) }
                dd.workspace { code { (s.workspace_root) } }
                dt { (lang.t("sessions.agent")) }
                dd.agent data-agent=(s.agent.as_str()) { (agent_name(lang, s.agent)) }
                dt { (lang.t("sessions.mode")) }
                dd.mode data-mode=(s.mode.as_str()) { (mode) }
                dt { (lang.t("sessions.permission_mode")) }
                dd.permission-mode data-permission-mode=(s.permission_mode.as_str()) { (permission) }
                dt { (lang.t("sessions.plan_state")) }
                dd.plan-state data-plan-state=(s.plan_state.as_str()) { (plan_state) }
                dt { (lang.t("sessions.turn")) }
                dd.turn { (turn) }
                @if s.active_turn.is_some() { (tool_calls_html(lang, csrf, s)) }
                @if let Some(a) = &s.pending_approval {
                    dt { (lang.t("sessions.pending")) }
                    dd.pending { a href={ "#card-" (a.proposal_id.as_str()) } { (a.title) } }
                }
                @if let Some(e) = &s.live_execution {
                    dt { (lang.t("sessions.execution")) }
                    dd.execution data-state=(e.state.as_str()) { (execution_state(lang, e.state)) }
                }
                @if let Some(e) = &s.last_execution { (last_execution_html(lang, e)) }
            }
            (error_for(lang, lists.session_error.as_ref(), s.id.as_str()))
            @if idle { (idle_controls(lang, csrf, s, lists.shells.as_ref())) }
        }
    }
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
fn tool_calls_html(lang: Lang, csrf: &str, s: &SessionInfo) -> Markup {
    html! {
        dt { (lang.t("sessions.tools")) }
        dd.tools {
            @if s.tool_calls.is_empty() {
                span.none { (lang.t("sessions.tools.none")) }
            } @else {
                ul.tool-calls {
                    @for c in &s.tool_calls {
                        @let at = rfc3339(c.since.0);
                        li.tool-call data-state=(c.state.as_str()) data-tool-call-id=(c.tool_call_id.as_str()) {
                            code { (c.tool_name) } " "
                            span.tool-state { (match c.state {
                                ToolCallState::Allowed => lang.t("tool_state.allowed"),
                                ToolCallState::Asking => lang.t("tool_state.asking"),
                                ToolCallState::Running => lang.t("tool_state.running"),
                            }) } " "
                            time.local datetime=(at) { (at) } " "
                            span.elapsed data-since=(c.since.0) aria-live="off" {}
                            // A call the host runs can be stopped by a person (its process
                            // tree is killed).
                            @if c.state == ToolCallState::Running {
                                " "
                                form.stop method="post"
                                    action={ "/sessions/" (s.id.as_str()) "/tools/" (c.tool_call_id.as_str()) "/stop" }
                                    data-replace="sessions-box" {
                                    input type="hidden" name="csrf" value=(csrf);
                                    button.reject type="submit" { (lang.t("sessions.stop")) }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// The most recent finished execution: how it ended and when.
fn last_execution_html(lang: Lang, e: &ExecutionInfo) -> Markup {
    html! {
        dt { (lang.t("sessions.execution.last")) }
        dd.last-execution data-state=(e.state.as_str()) data-execution-id=(e.execution_id.as_str()) {
            (execution_state(lang, e.state))
            @if let Some(at) = e.turn.as_ref().and_then(|t| t.ended_at) {
                @let at = rfc3339(at.0);
                " " time.local datetime=(at) { (at) }
            }
        }
    }
}

/// One idle control: a labelled select that posts to `/sessions/{id}/{what}`.
fn idle_form(
    csrf: &str,
    s: &SessionInfo,
    what: &str,
    label: &str,
    options: Markup,
    set: &str,
) -> Markup {
    let id = s.id.as_str();
    let select = format!("{what}-select-{id}");
    html! {
        form class={ "set-" (what) } method="post" action={ "/sessions/" (id) "/" (what) }
            data-replace="sessions-box" {
            input type="hidden" name="csrf" value=(csrf);
            label for=(select) { (label) } " "
            select id=(select) name=(what) { (options) } " "
            button type="submit" { (set) }
        }
    }
}

fn idle_controls(lang: Lang, csrf: &str, s: &SessionInfo, shells: Option<&ShellCatalog>) -> Markup {
    let modes = html! {
        option value="agent" selected[s.mode == Mode::Agent] { (lang.t("mode.agent")) }
        option value="plan" selected[s.mode == Mode::Plan] { (lang.t("mode.plan")) }
    };
    let shell_options = html! {
        option value="" selected[s.shell_id.is_none()] { (lang.t("sessions.shell.default")) }
        @for o in shells.map_or(&[][..], |c| c.options.as_slice()) {
            option value=(o.id.as_str()) selected[s.shell_id.as_ref() == Some(&o.id)] {
                (o.label)
                @if !o.available { " (" (lang.t("sessions.shell.unavailable")) ")" }
            }
        }
    };
    let presets = [
        ("host", "sessions.preset.host"),
        ("literal", "sessions.preset.literal"),
        ("strict", "sessions.preset.strict"),
        ("explore", "sessions.preset.explore"),
    ];
    let preset_options = html! {
        option value="" selected[s.policy_preset.is_none()] { (lang.t("sessions.preset.default")) }
        @for (value, key) in presets {
            option value=(value) selected[s.policy_preset.is_some_and(|p| p.as_str() == value)] {
                (lang.t(key))
            }
        }
    };
    html! {
        div.idle-controls role="group" aria-label=(lang.t("sessions.idle_controls")) {
            (idle_form(csrf, s, "mode", lang.t("sessions.mode"), modes, lang.t("sessions.set_mode")))
            (idle_form(csrf, s, "shell", lang.t("sessions.shell"), shell_options, lang.t("sessions.set_shell")))
            (idle_form(csrf, s, "preset", lang.t("sessions.preset"), preset_options, lang.t("sessions.set_preset")))
        }
    }
}

/// Whose an item is: its session's workspace and agent (`?` when the host no longer lists the
/// session) and the session's short id (the whole id on hover).
pub(crate) fn whose(lang: Lang, session: Option<&SessionInfo>, session_id: &str) -> Markup {
    let (workspace, agent) = session.map_or(("?", "?"), |s| {
        (s.workspace_root.as_str(), agent_name(lang, s.agent))
    });
    html! {
        span.label { (lang.t("sessions.workspace")) } " "
        code.workspace { (workspace) } " "
        span.agent { (agent) } " "
        span.label { (lang.t("card.session")) } " "
        code.session title=(session_id) { (planhost_core::short_id(session_id)) }
    }
}

/// [`whose`] for an item of the lists, by its session id.
fn whose_in(lang: Lang, lists: &Lists, session_id: &SessionId) -> Markup {
    let session = lists.sessions.iter().find(|s| &s.id == session_id);
    html! { p.context { (whose(lang, session, session_id.as_str())) } }
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
pub(crate) fn refusal(lang: Lang, id: &str, title: &'static str, body: &'static str) -> Markup {
    standalone(
        lang,
        id,
        lang.t(title),
        html! { p { (with_code(lang.t(body))) } },
    )
}

/// `text`, with each `…` span as `<code>` (the host's sentences name commands that way).
pub(crate) fn with_code(text: &str) -> Markup {
    html! {
        @for (i, part) in text.split('`').enumerate() {
            @if i % 2 == 1 { code { (part) } } @else { (part) }
        }
    }
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
            with_code("`rm` is not a known read-only program <b>").into_string(),
            "<code>rm</code> is not a known read-only program &lt;b&gt;"
        );
        assert_eq!(
            with_code("a `<x>` b").into_string(),
            "a <code>&lt;x&gt;</code> b"
        );
        let line = error_line(
            Lang::ZhCn,
            "WEB_NOT_SERVED",
            "start it with `planhost serve --web`",
        )
        .into_string();
        assert!(
            line.contains("<code>planhost serve --web</code>") && !line.contains('`'),
            "{line}"
        );
    }

    #[test]
    fn a_hosts_value_is_escaped_in_text_and_attributes() {
        let hostile = r#"<a href="x" onclick='y'>&</a>"#;
        let line = error_line(Lang::En, hostile, hostile).into_string();
        assert!(!line.contains("<a "), "{line}");
        assert!(
            line.contains(r#"data-code="&lt;a href=&quot;x&quot; onclick='y'&gt;&amp;&lt;/a&gt;""#),
            "{line}"
        );
    }

    #[test]
    fn every_language_renders_the_empty_page_without_a_raw_key() {
        for lang in [Lang::En, Lang::ZhCn] {
            let html = page(lang, "c", &Lists::default(), &[], 0).into_string();
            for prefix in ["page.", "cards.", "sessions.", "card.", "status."] {
                assert!(!html.contains(&format!(">{prefix}")), "{lang:?}: {html}");
            }
            let refused = refusal(lang, "x", "forbidden.title", "forbidden.body").into_string();
            assert!(!refused.contains("forbidden."), "{refused}");
            let refused =
                refusal(lang, "x", "approver_refused.title", "approver_refused.body").into_string();
            assert!(!refused.contains("approver_refused."), "{refused}");
            assert!(refused.contains("ROLE_APPROVER_REFUSED"), "{refused}");
        }
    }
}

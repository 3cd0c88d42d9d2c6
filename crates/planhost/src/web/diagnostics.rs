//! The diagnostics panel (`/diagnostics`): the host's version, state directory, socket and
//! uptime, every check `planhost doctor` makes, and the last rows of the audit log. The page
//! loads it when the person opens the panel; without the script it is a page of its own.

use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::Response;
use planhost_protocol::{AuditFilter, Empty, methods};

use super::guard::Reader;
use super::i18n::Lang;
use super::page::{esc, rfc3339, with_code};
use super::{Shared, html, internal};

/// How many audit rows the panel shows.
const AUDIT_ROWS: u32 = 12;

pub(super) async fn diagnostics(
    Reader { visitor, conn }: Reader,
    State(web): Shared,
    headers: HeaderMap,
) -> Response {
    let lang = visitor.lang;
    let version = match conn.call::<methods::AppVersion>(Empty {}).await {
        Ok(v) => v,
        Err(e) => return internal(e),
    };
    let health = match conn.call::<methods::AppHealth>(Empty {}).await {
        Ok(h) => h,
        Err(e) => return internal(e),
    };
    let audit = conn
        .call::<methods::AuditList>(AuditFilter {
            session_id: None,
            limit: Some(AUDIT_ROWS),
        })
        .await
        .map(|log| log.items)
        .unwrap_or_default();
    // `doctor` connects to the socket and looks at files: off the page's threads.
    let paths = web.paths.clone();
    let checks = tokio::task::spawn_blocking(move || crate::cli::doctor_checks(&paths))
        .await
        .unwrap_or_default();
    let checks: String = checks
        .iter()
        .map(|c| {
            format!(
                r#"<tr data-check="{name}" data-ok="{ok}"><td class="{class}">{verdict}</td><th scope="row">{name}</th><td>{detail}</td></tr>"#,
                name = esc(c.name),
                ok = c.ok,
                class = if c.ok { "ok" } else { "error" },
                verdict = if c.ok {
                    lang.t("diag.ok")
                } else {
                    lang.t("diag.fail")
                },
                detail = with_code(&c.detail),
            )
        })
        .collect();
    let rows: String = audit
        .iter()
        .map(|row| {
            format!(
                r#"<tr><td><time class="local" datetime="{at}">{at}</time></td><td><code>{action}</code></td><td><code>{session}</code></td></tr>"#,
                at = rfc3339(row.at.0),
                action = esc(row.action.as_str()),
                session = esc(
                    row.session_id
                        .as_ref()
                        .map_or("", |s| &s.as_str()[..s.as_str().len().min(8)])
                ),
            )
        })
        .collect();
    let body = format!(
        r#"<dl class="diag">
<dt>{version_l}</dt><dd class="version">planhost {version} (protocol v{protocol}, schema v{schema}, SQLite {sqlite})</dd>
<dt>{state_l}</dt><dd><code class="state-dir">{state}</code></dd>
<dt>{socket_l}</dt><dd><code class="socket">{socket}</code></dd>
<dt>{uptime_l}</dt><dd class="uptime">{uptime}</dd>
</dl>
<h3>{checks_l}</h3>
<table class="checks">{checks}</table>
<h3>{audit_l}</h3>
<table class="audit">{rows}</table>"#,
        version_l = lang.t("diag.version"),
        version = esc(&version.version),
        protocol = version.protocol_version,
        schema = version.schema_version,
        sqlite = esc(&version.sqlite_version),
        state_l = lang.t("diag.state_dir"),
        state = esc(&web.paths.state_dir.display().to_string()),
        socket_l = lang.t("diag.socket"),
        socket = esc(&web.paths.socket.display().to_string()),
        uptime_l = lang.t("diag.uptime"),
        uptime = esc(&uptime(lang, health.uptime_ms)),
        checks_l = with_code(lang.t("diag.checks")),
        audit_l = lang.t("diag.audit"),
    );
    if headers.get("x-planhost-fetch").is_some() {
        return html(body);
    }
    html(format!(
        r#"<!doctype html>
<html lang="{tag}"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title><link rel="stylesheet" href="/app.css"></head>
<body><main id="diagnostics-page"><h1>{title}</h1>{body}<p><a href="/">{back}</a></p></main></body></html>
"#,
        tag = lang.tag(),
        title = lang.t("diag.heading"),
        back = lang.t("diag.back"),
    ))
}

/// "3 h 5 min", "4 min 10 s", "12 s".
fn uptime(lang: Lang, ms: u64) -> String {
    let s = ms / 1000;
    let (h, m, sec) = (s / 3600, (s % 3600) / 60, s % 60);
    let (h, m, sec) = (h.to_string(), m.to_string(), sec.to_string());
    if s >= 3600 {
        lang.fill("diag.uptime.hours", &[("h", &h), ("m", &m)])
    } else if s >= 60 {
        lang.fill("diag.uptime.minutes", &[("m", &m), ("s", &sec)])
    } else {
        lang.fill("diag.uptime.seconds", &[("s", &sec)])
    }
}

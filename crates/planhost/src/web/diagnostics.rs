//! The diagnostics panel (`/diagnostics`): the host's version, state directory, socket and
//! uptime, every check `planhost doctor` makes, and the last rows of the audit log. The page
//! loads it when the person opens the panel; without the script it is a page of its own.

use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::Response;
use maud::html;
use planhost_protocol::{AuditFilter, Empty, methods};

use super::guard::Reader;
use super::i18n::Lang;
use super::page::{rfc3339, standalone, with_code};
use super::{Shared, html_response, internal};
use crate::cli::DoctorStatus as Status;

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
    let session_short =
        |s: &planhost_core::SessionId| planhost_core::short_id(s.as_str()).to_owned();
    let body = html! {
        dl.diag {
            dt { (lang.t("diag.version")) }
            dd.version {
                "planhost " (version.version) " (protocol v" (version.protocol_version)
                ", schema v" (version.schema_version) ", SQLite " (version.sqlite_version) ")"
            }
            dt { (lang.t("diag.state_dir")) }
            dd { code.state-dir { (web.paths.state_dir.display().to_string()) } }
            dt { (lang.t("diag.socket")) }
            dd { code.socket { (web.paths.socket.display().to_string()) } }
            dt { (lang.t("diag.uptime")) }
            dd.uptime { (uptime(lang, health.uptime_ms)) }
        }
        h3 { (with_code(lang.t("diag.checks"))) }
        table.checks {
            @for c in &checks {
                tr data-check=(c.name) data-ok=(c.ok) {
                    td class=(match c.status { Status::Fail => "error", Status::Ok | Status::Idle => "ok" }) {
                        (lang.t(match c.status {
                            Status::Ok => "diag.ok",
                            Status::Idle => "diag.idle",
                            Status::Fail => "diag.fail",
                        }))
                    }
                    th scope="row" { (c.name) }
                    td lang="en" { (with_code(&c.detail)) }
                }
            }
        }
        h3 { (lang.t("diag.audit")) }
        table.audit {
            @for row in &audit {
                @let at = rfc3339(row.at.0);
                tr {
                    td { time.local datetime=(at) { (at) } }
                    td { code { (row.action.as_str()) } }
                    td { code { (row.session_id.as_ref().map(session_short).unwrap_or_default()) } }
                }
            }
        }
    };
    if headers.get("x-planhost-fetch").is_some() {
        return html_response(body);
    }
    let back = html! { p { a href="/" { (lang.t("diag.back")) } } };
    html_response(standalone(
        lang,
        "diagnostics-page",
        lang.t("diag.heading"),
        html! { (body) (back) },
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

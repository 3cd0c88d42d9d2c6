//! What the page changes, each a form post that carries the CSRF field from a same-origin page
//! and is made on a connection for the client process that posted it: a plan approved or
//! rejected ([`resolve`]), a publication or a permission ask answered, a session's mode, shell
//! or preset set. The page's script gets back the refreshed card or list, with the host's
//! refusal if any; a plain form post is redirected to the page.

use axum::extract::{Form, Path as UrlPath, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use planhost_core::{ApprovalAction, ErrorCode, Mode, PermissionDecision, TargetPermissionMode};
use planhost_protocol::{
    ConfigureParams, ResolvePermissionParams, ResolvePlanParams, ResolvePublicationParams,
    SetModeParams, methods,
};
use planhost_service::Connection;
use serde::Deserialize;

use super::fragments::{Part, part_html, plan_of};
use super::guard::{ClientEnd, Visitor, csrf_of};
use super::{Shared, Web, html_response, not_found_for, page, see_other};

/// A form answered: the refreshed list (with the refusal, if any) for the page's script, or a
/// redirect to the page.
async fn answered(
    web: &Web,
    visitor: &Visitor,
    conn: &Connection,
    headers: &HeaderMap,
    part: Part,
    failed: Option<(String, String, String)>,
) -> Response {
    if headers.get("x-planhost-fetch").is_none() {
        return see_other("/");
    }
    let mut lists = match web.lists_for(conn, part).await {
        Ok(l) => l,
        Err(r) => return r,
    };
    let status = if failed.is_some() {
        StatusCode::CONFLICT
    } else {
        StatusCode::OK
    };
    match part {
        Part::Sessions => lists.session_error = failed,
        Part::Publications | Part::Asks => lists.answer_error = failed,
    }
    let mut r = html_response(part_html(
        part,
        visitor.lang,
        &csrf_of(&visitor.token),
        &lists,
    ));
    *r.status_mut() = status;
    r
}

fn refusal_of(id: &str, e: &planhost_service::ServiceError) -> (String, String, String) {
    (id.to_owned(), e.code().as_str().to_owned(), e.to_string())
}

fn invalid(id: &str, what: &str, value: &str) -> Option<(String, String, String)> {
    Some((
        id.to_owned(),
        ErrorCode::InvalidParams.as_str().to_owned(),
        format!("unknown {what} {value:?}"),
    ))
}

#[derive(Debug, Deserialize)]
pub(super) struct AnswerForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    action: String,
    #[serde(default)]
    decision: String,
    #[serde(default)]
    mode: String,
    #[serde(default)]
    shell: String,
    #[serde(default)]
    preset: String,
}

pub(super) async fn answer_publication(
    State(web): Shared,
    client: ClientEnd,
    headers: HeaderMap,
    UrlPath(id): UrlPath<String>,
    Form(form): Form<AnswerForm>,
) -> Response {
    let (visitor, conn) = match web.begin_answer(&headers, &form.csrf, client).await {
        Ok(begun) => begun,
        Err(r) => return r,
    };
    let failed = match form.action.parse::<ApprovalAction>() {
        Ok(action) => conn
            .call::<methods::PublicationsResolve>(ResolvePublicationParams {
                publication_id: id.as_str().into(),
                action,
            })
            .await
            .err()
            .map(|e| refusal_of(&id, &e)),
        Err(_) => invalid(&id, "action", &form.action),
    };
    answered(&web, &visitor, &conn, &headers, Part::Publications, failed).await
}

pub(super) async fn answer_ask(
    State(web): Shared,
    client: ClientEnd,
    headers: HeaderMap,
    UrlPath(id): UrlPath<String>,
    Form(form): Form<AnswerForm>,
) -> Response {
    let (visitor, conn) = match web.begin_answer(&headers, &form.csrf, client).await {
        Ok(begun) => begun,
        Err(r) => return r,
    };
    let failed = match form.decision.parse::<PermissionDecision>() {
        Ok(decision) => conn
            .call::<methods::PermissionsResolve>(ResolvePermissionParams {
                request_id: id.as_str().into(),
                decision,
                note: None,
            })
            .await
            .err()
            .map(|e| refusal_of(&id, &e)),
        Err(_) => invalid(&id, "decision", &form.decision),
    };
    answered(&web, &visitor, &conn, &headers, Part::Asks, failed).await
}

/// The Agent | Plan selector, with the host's idle rule and its codes.
pub(super) async fn set_mode(
    State(web): Shared,
    client: ClientEnd,
    headers: HeaderMap,
    UrlPath(id): UrlPath<String>,
    Form(form): Form<AnswerForm>,
) -> Response {
    let (visitor, conn) = match web.begin_answer(&headers, &form.csrf, client).await {
        Ok(begun) => begun,
        Err(r) => return r,
    };
    let failed = match form.mode.parse::<Mode>() {
        Ok(mode) => conn
            .call::<methods::SessionsSetMode>(SetModeParams {
                session_id: id.as_str().into(),
                mode,
            })
            .await
            .err()
            .map(|e| refusal_of(&id, &e)),
        Err(_) => invalid(&id, "mode", &form.mode),
    };
    answered(&web, &visitor, &conn, &headers, Part::Sessions, failed).await
}

/// One setting of a session from the page's idle controls: what the form asks for becomes a
/// `sessions.configure` (the host validates it and keeps the idle rule), or the field's value
/// is refused as unknown.
enum Setting {
    /// The shell (`None`: the host's default).
    Shell(Option<planhost_core::ShellId>),
    /// The tool-policy preset (`None`: the host's default).
    Preset(Option<planhost_core::PolicyPreset>),
}

/// Parses an idle-control field: empty is the host's default, anything else must parse.
fn setting_value<T: std::str::FromStr>(value: &str) -> Result<Option<T>, T::Err> {
    if value.is_empty() {
        Ok(None)
    } else {
        value.parse().map(Some)
    }
}

async fn configure(
    web: &Web,
    client: ClientEnd,
    headers: &HeaderMap,
    id: &str,
    csrf: &str,
    setting: Result<Setting, (&str, &str)>,
) -> Response {
    let (visitor, conn) = match web.begin_answer(headers, csrf, client).await {
        Ok(begun) => begun,
        Err(r) => return r,
    };
    let failed = match setting {
        Ok(setting) => {
            let (shell_id, policy_preset) = match setting {
                Setting::Shell(shell) => (Some(shell), None),
                Setting::Preset(preset) => (None, Some(preset)),
            };
            conn.call::<methods::SessionsConfigure>(ConfigureParams {
                session_id: id.into(),
                permission_mode: None,
                shell_id,
                policy_preset,
                provider: None,
                model: None,
            })
            .await
            .err()
            .map(|e| refusal_of(id, &e))
        }
        Err((what, value)) => invalid(id, what, value),
    };
    answered(web, &visitor, &conn, headers, Part::Sessions, failed).await
}

/// Pins a session's shell (empty: the host's default) through the host's validation.
pub(super) async fn set_shell(
    State(web): Shared,
    client: ClientEnd,
    headers: HeaderMap,
    UrlPath(id): UrlPath<String>,
    Form(form): Form<AnswerForm>,
) -> Response {
    let setting = setting_value(&form.shell)
        .map(Setting::Shell)
        .map_err(|_| ("shell", form.shell.as_str()));
    configure(&web, client, &headers, &id, &form.csrf, setting).await
}

/// Chooses a session's tool-policy preset (empty: the host's default) through the host's rules
/// (idle only).
pub(super) async fn set_preset(
    State(web): Shared,
    client: ClientEnd,
    headers: HeaderMap,
    UrlPath(id): UrlPath<String>,
    Form(form): Form<AnswerForm>,
) -> Response {
    let setting = setting_value(&form.preset)
        .map(Setting::Preset)
        .map_err(|_| ("preset", form.preset.as_str()));
    configure(&web, client, &headers, &id, &form.csrf, setting).await
}

#[derive(Debug, Deserialize)]
pub(super) struct ResolveForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    action: String,
    #[serde(default)]
    mode: Option<String>,
    /// The approval's version and artifact digest as the person saw them: the host refuses the
    /// answer if either moved since.
    #[serde(default)]
    version: Option<String>,
    #[serde(default)]
    sha256: Option<String>,
}

/// Approve (with a permission mode, `ask` by default) or reject. Answers with the card as it is
/// now (for the page's script, `x-planhost-fetch: 1`) or a redirect to the page.
pub(super) async fn resolve(
    State(web): Shared,
    client: ClientEnd,
    headers: HeaderMap,
    UrlPath(id): UrlPath<String>,
    Form(form): Form<ResolveForm>,
) -> Response {
    let visitor = match web.admit_change(&headers, &form.csrf) {
        Ok(v) => v,
        Err(r) => return r,
    };
    let fetched = headers.get("x-planhost-fetch").is_some();
    let conn = match web.connect_answer(visitor.lang, client).await {
        Ok(c) => c,
        Err(r) => return r,
    };
    let Ok(detail) = plan_of(&conn, &id).await else {
        return not_found_for(visitor.lang);
    };
    let a = detail.approval;
    // The answer is bound to what the person was shown: a form without the version and digest
    // it showed (or with ones that do not parse) is refused, never filled in with the current.
    let shown = match (
        form.version.as_deref().map(str::parse::<i64>),
        form.sha256.as_deref().filter(|s| !s.is_empty()),
    ) {
        (Some(Ok(version)), Some(sha)) => Ok((version, sha.to_owned())),
        _ => Err((
            ErrorCode::InvalidParams.as_str().to_owned(),
            "the answer did not carry the plan version and SHA-256 the page showed; reload the page and answer again".to_owned(),
        )),
    };
    let outcome = match (form.action.as_str(), shown) {
        (_, Err(e)) => Err(e),
        ("approve" | "reject", Ok((version, sha))) => {
            let action = if form.action.as_str() == "approve" {
                ApprovalAction::Approve
            } else {
                ApprovalAction::Reject
            };
            let mode = match (action, form.mode.as_deref()) {
                (ApprovalAction::Approve, None | Some("")) => Ok(Some(TargetPermissionMode::Ask)),
                (ApprovalAction::Approve, Some(m)) => {
                    m.parse::<TargetPermissionMode>().map(Some).map_err(|_| {
                        (
                            ErrorCode::InvalidParams.as_str().to_owned(),
                            format!("unknown permission mode {m:?}"),
                        )
                    })
                }
                (ApprovalAction::Reject, _) => Ok(None),
            };
            match mode {
                Ok(mode) => conn
                    .call::<methods::PlansResolve>(ResolvePlanParams {
                        proposal_id: a.proposal_id.clone(),
                        session_id: a.session_id.clone(),
                        turn_id: a.turn_id.clone(),
                        tool_call_id: a.tool_call_id.clone(),
                        version: Some(version),
                        artifact_sha256: Some(sha),
                        action,
                        target_permission_mode: mode,
                        feedback: None,
                    })
                    .await
                    .map(|_| ())
                    .map_err(|e| (e.code().as_str().to_owned(), e.to_string())),
                Err(e) => Err(e),
            }
        }
        (other, Ok(_)) => Err((
            ErrorCode::InvalidParams.as_str().to_owned(),
            format!("unknown action {other:?}"),
        )),
    };
    if !fetched {
        return see_other("/");
    }
    let now = match plan_of(&conn, &id).await {
        Ok(d) => d.approval,
        Err(_) => a,
    };
    let mut card = web.card(&conn, now).await;
    card.error = outcome.err();
    let status = if card.error.is_some() {
        StatusCode::CONFLICT
    } else {
        StatusCode::OK
    };
    let mut r = html_response(page::card(visitor.lang, &csrf_of(&visitor.token), &card));
    *r.status_mut() = status;
    r
}

/// A person stops a tool call the host runs (`tools.stop`: its process tree is killed, on
/// record with who did).
pub(super) async fn stop_tool(
    State(web): Shared,
    client: ClientEnd,
    headers: HeaderMap,
    UrlPath((session, call)): UrlPath<(String, String)>,
    Form(form): Form<AnswerForm>,
) -> Response {
    let (visitor, conn) = match web.begin_answer(&headers, &form.csrf, client).await {
        Ok(begun) => begun,
        Err(r) => return r,
    };
    let failed = conn
        .call::<methods::ToolsStop>(planhost_protocol::CancelParams {
            session_id: session.as_str().into(),
            tool_call_id: call.as_str().into(),
        })
        .await
        .err()
        .map(|e| refusal_of(&session, &e));
    answered(&web, &visitor, &conn, &headers, Part::Sessions, failed).await
}

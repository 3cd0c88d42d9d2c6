//! What the page reads: the whole page at `/` (whose first load trades `?token=` for the cookie,
//! and where `?lang=` chooses the language), and the fragments its script refetches when an
//! event says something changed: the pending approval cards, one card, the sessions, one
//! session, the pending publications and the open asks.

use axum::extract::{Path as UrlPath, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse as _, Response};
use planhost_core::{ApprovalStatus, PublicationStatus};
use planhost_protocol::{
    ApprovalInfo, AskStatus, AsksFilter, Empty, PlansFilter, ProposalRef, PublicationsFilter,
    SessionRef, SessionsFilter, methods,
};
use planhost_service::Connection;
use serde::Deserialize;

use super::guard::{Reader, csrf_of, lang_of, refused, same};
use super::i18n::Lang;
use super::page::{self, Card, Lists};
use super::{LANG_COOKIE, Shared, Web, html_response, internal, not_found_for, see_other};

/// One plan with its exact Markdown (`plans.get`), by the id in the page's address.
pub(super) async fn plan_of(
    conn: &Connection,
    id: &str,
) -> Result<planhost_protocol::PlanDetail, planhost_service::ServiceError> {
    conn.call::<methods::PlansGet>(ProposalRef {
        proposal_id: id.into(),
    })
    .await
}

impl Web {
    pub(super) async fn card(&self, conn: &Connection, approval: ApprovalInfo) -> Card {
        let detail = plan_of(conn, approval.proposal_id.as_str()).await;
        let (markdown, intact) = match detail {
            Ok(d) => (d.markdown, d.artifact_intact),
            Err(_) => (String::new(), false),
        };
        // What changed: the host picks the bases and makes the diffs (bounded, off the
        // threads that serve the protocol).
        let changes = conn
            .call::<methods::PlansChanges>(ProposalRef {
                proposal_id: approval.proposal_id.as_str().into(),
            })
            .await
            .map(|c| c.bases)
            .unwrap_or_default();
        let session = conn
            .call::<methods::SessionsGet>(SessionRef {
                session_id: approval.session_id.clone(),
            })
            .await
            .ok();
        // Which of the session's plans this is: those submitted up to it.
        let submission = conn
            .call::<methods::PlansList>(PlansFilter {
                session_id: Some(approval.session_id.clone()),
                status: None,
                limit: Some(1000),
            })
            .await
            .map_or(1, |list| {
                list.items
                    .iter()
                    .filter(|p| {
                        (p.created_at, p.proposal_id.as_str())
                            <= (approval.created_at, approval.proposal_id.as_str())
                    })
                    .count()
            });
        Card {
            approval,
            markdown,
            intact,
            changes,
            error: None,
            session,
            submission,
        }
    }

    async fn pending_cards(&self, conn: &Connection) -> Result<Vec<Card>, Response> {
        let list = conn
            .call::<methods::PlansList>(PlansFilter {
                session_id: None,
                status: Some(vec![ApprovalStatus::Pending]),
                limit: Some(200),
            })
            .await
            .map_err(internal)?;
        let mut cards = Vec::with_capacity(list.items.len());
        for a in list.items {
            cards.push(self.card(conn, a).await);
        }
        Ok(cards)
    }

    /// What one fragment shows, and nothing else.
    pub(super) async fn lists_for(&self, conn: &Connection, part: Part) -> Result<Lists, Response> {
        let mut lists = Lists::default();
        let sessions = || async {
            conn.call::<methods::SessionsList>(SessionsFilter {
                include_ended: None,
                workspace_root: None,
                limit: Some(200),
            })
            .await
            .map_err(internal)
            .map(|list| list.items)
        };
        match part {
            Part::Sessions => {
                lists.sessions = sessions().await?;
                lists.shells = conn.call::<methods::ShellsCatalog>(Empty {}).await.ok();
            }
            Part::Publications => {
                lists.publications = pending_publications(conn).await?;
                // Whose each one is (workspace, agent, session).
                if !lists.publications.is_empty() {
                    lists.sessions = sessions().await?;
                }
            }
            Part::Asks => {
                lists.asks = open_asks(conn).await?;
                if !lists.asks.is_empty() {
                    lists.sessions = sessions().await?;
                }
            }
        }
        Ok(lists)
    }

    /// Sessions, pending publications, open asks and the shell catalog.
    async fn lists(&self, conn: &Connection) -> Result<Lists, Response> {
        let mut all = self.lists_for(conn, Part::Sessions).await?;
        all.publications = pending_publications(conn).await?;
        all.asks = open_asks(conn).await?;
        Ok(all)
    }
}

async fn pending_publications(
    conn: &Connection,
) -> Result<Vec<planhost_protocol::PublicationInfo>, Response> {
    Ok(conn
        .call::<methods::PublicationsList>(PublicationsFilter {
            session_id: None,
            status: Some(vec![PublicationStatus::Pending]),
            limit: Some(200),
        })
        .await
        .map_err(internal)?
        .items)
}

async fn open_asks(conn: &Connection) -> Result<Vec<planhost_protocol::PermissionAsk>, Response> {
    Ok(conn
        .call::<methods::PermissionsList>(AsksFilter {
            session_id: None,
            status: Some(vec![AskStatus::Open]),
            limit: Some(200),
        })
        .await
        .map_err(internal)?
        .items)
}

fn now_ms() -> i64 {
    use planhost_core::Clock as _;
    planhost_service::SystemClock.now().0
}

#[derive(Debug, Deserialize)]
pub(super) struct IndexQuery {
    token: Option<String>,
    lang: Option<String>,
}

pub(super) async fn index(
    State(web): Shared,
    headers: HeaderMap,
    Query(q): Query<IndexQuery>,
) -> Response {
    if let Some(given) = q.token.as_deref() {
        let lang = lang_of(&headers);
        if !web.host_ok(&headers) {
            return refused(
                lang,
                StatusCode::MISDIRECTED_REQUEST,
                "bad-host",
                "bad_host.title",
                "bad_host.body",
            );
        }
        return match web.token() {
            token if same(&token, given) => {
                let mut r = see_other("/");
                let cookie =
                    axum_extra::extract::cookie::Cookie::build((web.cookie_name.clone(), token))
                        .http_only(true)
                        .same_site(axum_extra::extract::cookie::SameSite::Strict)
                        .path("/")
                        .secure(web.on_remote(&headers))
                        .build()
                        .to_string();
                if let Ok(v) = HeaderValue::from_str(&cookie) {
                    r.headers_mut().append(header::SET_COOKIE, v);
                }
                r
            }
            _ => refused(
                lang,
                StatusCode::UNAUTHORIZED,
                "unauthorized",
                "unauthorized.title",
                "unauthorized.body",
            ),
        };
    }
    let visitor = match web.admit(&headers) {
        Ok(v) => v,
        Err(r) => return r,
    };
    if let Some(lang) = q.lang.as_deref().and_then(Lang::from_tag) {
        let mut r = see_other("/");
        let cookie = axum_extra::extract::cookie::Cookie::build((LANG_COOKIE, lang.tag()))
            .same_site(axum_extra::extract::cookie::SameSite::Strict)
            .path("/")
            .build()
            .to_string();
        if let Ok(v) = HeaderValue::from_str(&cookie) {
            r.headers_mut().append(header::SET_COOKIE, v);
        }
        return r;
    }
    let conn = match web.connect() {
        Ok(c) => c,
        Err(e) => return internal(e),
    };
    let cards = match web.pending_cards(&conn).await {
        Ok(c) => c,
        Err(r) => return r,
    };
    let lists = match web.lists(&conn).await {
        Ok(l) => l,
        Err(r) => return r,
    };
    html_response(page::page(
        visitor.lang,
        &csrf_of(&visitor.token),
        &lists,
        &cards,
        now_ms(),
    ))
}

/// `/approvals/{id}`: the page with that plan first, pending or answered (a link to one
/// approval, e.g. from a notification).
pub(super) async fn approval_page(
    Reader { visitor, conn }: Reader,
    State(web): Shared,
    UrlPath(id): UrlPath<String>,
) -> Response {
    let Ok(detail) = plan_of(&conn, &id).await else {
        return not_found_for(visitor.lang);
    };
    let mut cards = match web.pending_cards(&conn).await {
        Ok(c) => c,
        Err(r) => return r,
    };
    cards.retain(|c| c.approval.proposal_id != detail.approval.proposal_id);
    cards.insert(0, web.card(&conn, detail.approval).await);
    let lists = match web.lists(&conn).await {
        Ok(l) => l,
        Err(r) => return r,
    };
    html_response(page::page(
        visitor.lang,
        &csrf_of(&visitor.token),
        &lists,
        &cards,
        now_ms(),
    ))
}

/// `/approvals/{id}/artifact`: the plan's exact bytes, as text.
pub(super) async fn artifact(
    Reader { visitor, conn }: Reader,
    UrlPath(id): UrlPath<String>,
) -> Response {
    match plan_of(&conn, &id).await {
        Ok(detail) => {
            let mut r = detail.markdown.into_response();
            let h = r.headers_mut();
            h.insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/plain; charset=utf-8"),
            );
            // Stricter than the page's own (the layer keeps a handler's).
            h.insert(
                header::CONTENT_SECURITY_POLICY,
                HeaderValue::from_static("default-src 'none'; sandbox"),
            );
            if let Ok(v) = HeaderValue::from_str(&detail.approval.artifact_sha256) {
                h.insert("x-planhost-sha256", v);
            }
            r
        }
        Err(_) => not_found_for(visitor.lang),
    }
}

pub(super) async fn cards_fragment(
    Reader { visitor, conn }: Reader,
    State(web): Shared,
) -> Response {
    match web.pending_cards(&conn).await {
        Ok(cards) => html_response(page::cards_html(
            visitor.lang,
            &csrf_of(&visitor.token),
            &cards,
        )),
        Err(r) => r,
    }
}

pub(super) async fn card_fragment(
    Reader { visitor, conn }: Reader,
    State(web): Shared,
    UrlPath(id): UrlPath<String>,
) -> Response {
    match plan_of(&conn, &id).await {
        Ok(detail) => {
            let card = web.card(&conn, detail.approval).await;
            html_response(page::card(visitor.lang, &csrf_of(&visitor.token), &card))
        }
        Err(error) => {
            tracing::debug!(%error, "card not found");
            not_found_for(visitor.lang)
        }
    }
}

/// Which list a fragment or an answer renders.
#[derive(Debug, Clone, Copy)]
pub(super) enum Part {
    Sessions,
    Publications,
    Asks,
}

pub(super) fn part_html(part: Part, lang: Lang, csrf: &str, lists: &Lists) -> maud::Markup {
    match part {
        Part::Sessions => page::sessions_html(lang, csrf, lists),
        Part::Publications => page::publications_html(lang, csrf, lists),
        Part::Asks => page::asks_html(lang, csrf, lists),
    }
}

async fn fragment(web: &Web, reader: Reader, part: Part) -> Response {
    let Reader { visitor, conn } = reader;
    match web.lists_for(&conn, part).await {
        Ok(lists) => html_response(part_html(
            part,
            visitor.lang,
            &csrf_of(&visitor.token),
            &lists,
        )),
        Err(r) => r,
    }
}

pub(super) async fn sessions_fragment(State(web): Shared, reader: Reader) -> Response {
    fragment(&web, reader, Part::Sessions).await
}

/// One session's `<li>`: what the page refetches when an event names that session.
pub(super) async fn session_fragment(
    Reader { visitor, conn }: Reader,
    UrlPath(id): UrlPath<String>,
) -> Response {
    let session = match conn
        .call::<methods::SessionsGet>(SessionRef {
            session_id: id.as_str().into(),
        })
        .await
    {
        Ok(s) => s,
        Err(error) if error.code() == planhost_core::ErrorCode::SessionNotFound => {
            return not_found_for(visitor.lang);
        }
        Err(error) => return internal(error),
    };
    let lists = Lists {
        shells: conn.call::<methods::ShellsCatalog>(Empty {}).await.ok(),
        ..Lists::default()
    };
    html_response(page::session_item(
        visitor.lang,
        &csrf_of(&visitor.token),
        &session,
        &lists,
    ))
}

pub(super) async fn publications_fragment(State(web): Shared, reader: Reader) -> Response {
    fragment(&web, reader, Part::Publications).await
}

pub(super) async fn asks_fragment(State(web): Shared, reader: Reader) -> Response {
    fragment(&web, reader, Part::Asks).await
}

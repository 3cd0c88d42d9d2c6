//! The browser approval surface: an HTTP transport of the service on loopback, connected with
//! the `approver` and `observer` roles (issue 11, seed 000 §9.5).
//!
//! Server-rendered HTML, a little plain JavaScript for live updates (SSE on `/events`), Markdown
//! rendered here with raw HTML inert, assets embedded. Access needs the random token of
//! `<state dir>/web.json` (0600): the first load with `?token=` sets an HttpOnly, SameSite=Strict
//! cookie. A request whose `Host` is not loopback is refused (DNS rebinding); a state-changing
//! one also needs a CSRF field and a same-origin `Origin`. No CORS.
//!
//! This module starts the server and routes its requests. Beside it: `address.rs`, where the
//! page is and its token (`web.json`); `guard.rs`, the checks every request passes; and the
//! handlers, `fragments.rs` for what the page reads, `answers.rs` for what it changes and
//! `events.rs` for its live updates. `page.rs` renders the HTML, `markdown.rs` the plans, and
//! `i18n.rs` holds the page's words.

mod address;
mod answers;
mod card;
mod diagnostics;
mod events;
mod fragments;
mod guard;
mod i18n;
mod markdown;
mod page;
mod remote;

use std::net::SocketAddr;
use std::sync::Arc;

use anyhow::Context as _;
use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use planhost_service::Service;

use i18n::Lang;

pub(crate) use address::{WebFile, new_token, parse_addr, write_private};
pub(crate) use remote::{CertFiles, parse_remote_addr};

use address::page_url;
use answers::{
    answer_ask, answer_publication, resolve, set_mode, set_preset, set_shell, stop_tool,
};
use events::events;
use fragments::{
    approval_page, artifact, asks_fragment, card_fragment, cards_fragment, index,
    publications_fragment, session_fragment, sessions_fragment,
};
use guard::{lang_of, refused};

/// Where `serve --web` listens without an address.
pub(crate) const DEFAULT_ADDR: &str = "127.0.0.1:7766";
/// The client name answers from the page carry (`resolvedBy.client`).
pub(crate) const CLIENT_NAME: &str = "planhost-web";
/// The name the page is opened under. Browsers resolve every `*.localhost` name to loopback
/// themselves, and keep cookies per host name: a cookie set here is never sent to another
/// server the person opens on `127.0.0.1` or `localhost` (cookies ignore ports).
pub(crate) const PAGE_HOST: &str = "planhost.localhost";
const LANG_COOKIE: &str = "planhost_lang";

struct Web {
    svc: Service,
    /// Where the host is: its state directory (web.json) and socket (the diagnostics panel).
    paths: planhost_service::host::Paths,
    /// `planhost_web_<port>`: hosts on other ports keep cookies of their own under the one
    /// [`PAGE_HOST`].
    cookie_name: String,
    /// Where the page listens: the server end of every connection, to find its client's.
    local: SocketAddr,
    /// The page for another device, over TLS (`serve --web-remote`).
    remote: Option<remote::Remote>,
    /// The access token, held here: `web.json` tells `planhost web` what it is, but writing
    /// that file changes nothing; a new one comes only through the host
    /// (`app.rotateWebToken`, a person's call).
    token: std::sync::RwLock<String>,
}

type Shared = State<Arc<Web>>;

/// Binds `addr`, writes `web.json` (keeping an existing token), and serves until the runtime
/// stops. Returns the page's address.
pub(crate) async fn start(
    svc: Service,
    paths: &planhost_service::host::Paths,
    addr: SocketAddr,
    remote_at: Option<(SocketAddr, remote::CertFiles)>,
) -> anyhow::Result<String> {
    let state_dir = paths.state_dir.as_path();
    let prepared = match &remote_at {
        Some((at, files)) => Some(remote::prepare(state_dir, *at, files).await?),
        None => None,
    };
    let listener = match tokio::net::TcpListener::bind(addr).await {
        Ok(listener) => listener,
        // The default port is taken (another program, another host): a free port instead, so a
        // host started for someone (pi's) still serves its page; `planhost web` says where.
        Err(error)
            if error.kind() == std::io::ErrorKind::AddrInUse
                && addr.to_string() == DEFAULT_ADDR =>
        {
            let free = SocketAddr::new(addr.ip(), 0);
            tracing::warn!(%addr, "the default web port is taken; serving the page on a free port");
            tokio::net::TcpListener::bind(free)
                .await
                .with_context(|| format!("binding the web page to {free}"))?
        }
        Err(error) => {
            return Err(anyhow::Error::new(error).context(format!(
                "binding the web page to {addr}: choose another address with `--web 127.0.0.1:PORT` \
                 (port 0 picks a free one)"
            )));
        }
    };
    let local = listener.local_addr()?;
    // A command that reaches the page could answer a plan (DESIGN decision 14).
    svc.add_page_surface(local.to_string());
    svc.add_page_surface(format!("localhost:{}", local.port()));
    let url = page_url(local);
    let token = match WebFile::read(state_dir) {
        Ok(old) if old.token.len() == 64 => old.token,
        _ => new_token()?,
    };
    let remote = prepared.as_ref().map(|p| p.remote.clone());
    let file = WebFile {
        url: url.clone(),
        addr: Some(local.to_string()),
        token,
        remote_url: remote.as_ref().map(remote::Remote::url),
        remote_fingerprint: remote.as_ref().map(|r| r.fingerprint.clone()),
    };
    file.write(state_dir)?;
    tracing::info!(%url, "web page serving");
    // The address without its token: stderr is where logs are kept. `planhost web` opens it
    // signed in (it reads the token from web.json, which only this user can read).
    eprintln!("planhost web: {url} (`planhost web` opens it signed in)");
    if let Some(r) = &remote {
        eprintln!(
            "planhost web: WARNING: the approval page is also served to the network at {} \
             (TLS; certificate SHA-256 {}). Anyone with its token can answer your plans. \
             `planhost web --qr` shows the address with its token for a phone; \
             `planhost web --rotate` ends every page's access.",
            r.url(),
            r.fingerprint
        );
    }
    let web = Arc::new(Web {
        token: std::sync::RwLock::new(file.token.clone()),
        svc,
        paths: paths.clone(),
        cookie_name: format!("planhost_web_{}", local.port()),
        local,
        remote,
    });
    // A person's rotation (`planhost web --rotate`, through the host) replaces the token
    // here and in web.json.
    let rotating = Arc::downgrade(&web);
    let registered = web
        .svc
        .set_web_token_rotation(Box::new(move || match rotating.upgrade() {
            Some(web) => web.rotate_token().map_err(|e| format!("{e:#}")),
            None => Err("the web page has stopped".into()),
        }));
    if let Err(why) = registered {
        anyhow::bail!("{why}");
    }
    let app = Router::new()
        .route("/", get(index))
        .route("/cards", get(cards_fragment))
        .route("/cards/{id}", get(card_fragment))
        .route("/sessions", get(sessions_fragment))
        .route("/sessions/{id}", get(session_fragment))
        .route("/publications", get(publications_fragment))
        .route("/asks", get(asks_fragment))
        .route("/approvals/{id}", get(approval_page).post(resolve))
        .route("/approvals/{id}/artifact", get(artifact))
        .route("/publications/{id}", post(answer_publication))
        .route("/asks/{id}", post(answer_ask))
        .route("/sessions/{id}/mode", post(set_mode))
        .route("/sessions/{id}/shell", post(set_shell))
        .route("/sessions/{id}/preset", post(set_preset))
        .route("/sessions/{id}/tools/{call}/stop", post(stop_tool))
        .route("/events", get(events))
        .route("/diagnostics", get(diagnostics::diagnostics))
        .route("/app.js", get(app_js))
        .route("/app.css", get(app_css))
        .fallback(not_found)
        .with_state(web);
    let app = security_headers(app);
    if let Some(prepared) = prepared {
        remote::serve(prepared, app.clone());
    }
    tokio::spawn(async move {
        // With each connection's client address: an answer's client process is looked up by it.
        let app = app.into_make_service_with_connect_info::<SocketAddr>();
        if let Err(error) = axum::serve(listener, app).await {
            tracing::error!(%error, "web page stopped");
        }
    });
    Ok(url)
}

fn set_html(r: &mut Response) {
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
}

/// The security headers of every response (a handler's own, stricter ones stand: the
/// artifact's sandbox CSP), as tower-http layers on the whole router.
fn security_headers(app: Router) -> Router {
    use tower_http::set_header::SetResponseHeaderLayer;
    let set = |name: header::HeaderName, value: &'static str| {
        SetResponseHeaderLayer::if_not_present(name, HeaderValue::from_static(value))
    };
    app.layer(set(
        header::CONTENT_SECURITY_POLICY,
        "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; \
         img-src 'none'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    ))
    .layer(set(header::X_CONTENT_TYPE_OPTIONS, "nosniff"))
    // Not `no-referrer`: with it browsers send `Origin: null` on form posts, and the
    // same-origin check would refuse every answer made without the script.
    .layer(set(header::REFERRER_POLICY, "same-origin"))
    .layer(set(header::CACHE_CONTROL, "no-store"))
}

fn internal(error: planhost_service::ServiceError) -> Response {
    tracing::warn!(%error, "web page request failed");
    (
        StatusCode::INTERNAL_SERVER_ERROR,
        format!("{}: {error}", error.code().as_str()),
    )
        .into_response()
}

fn html_response(body: maud::Markup) -> Response {
    let mut r = body.into_string().into_response();
    set_html(&mut r);
    r
}

fn see_other(to: &str) -> Response {
    let mut r = StatusCode::SEE_OTHER.into_response();
    if let Ok(v) = HeaderValue::from_str(to) {
        r.headers_mut().insert(header::LOCATION, v);
    }
    r
}

fn not_found_for(lang: Lang) -> Response {
    refused(
        lang,
        StatusCode::NOT_FOUND,
        "not-found",
        "not_found.title",
        "not_found.title",
    )
}

async fn not_found(headers: HeaderMap) -> Response {
    not_found_for(lang_of(&headers))
}

async fn app_js() -> Response {
    asset(
        include_str!("assets/app.js"),
        "text/javascript; charset=utf-8",
    )
}

async fn app_css() -> Response {
    asset(include_str!("assets/app.css"), "text/css; charset=utf-8")
}

fn asset(body: &'static str, kind: &'static str) -> Response {
    let mut r = body.into_response();
    r.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(kind));
    r
}

//! The browser approval surface: an HTTP transport of the service on loopback, connected with
//! the `approver` and `observer` roles (issue 11, seed 000 §9.5).
//!
//! Server-rendered HTML, a little plain JavaScript for live updates (SSE on `/events`), Markdown
//! rendered here with raw HTML inert, assets embedded. Access needs the random token of
//! `<state dir>/web.json` (0600): the first load with `?token=` sets an HttpOnly, SameSite=Strict
//! cookie. A request whose `Host` is not loopback is refused (DNS rebinding); a state-changing
//! one also needs a CSRF field and a same-origin `Origin`. No CORS.

mod i18n;
mod markdown;
mod page;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context as _;
use axum::Router;
use axum::extract::{ConnectInfo, Form, Path as UrlPath, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use planhost_core::{
    ApprovalAction, ApprovalStatus, Mode, PermissionDecision, PublicationStatus, Role,
    TargetPermissionMode,
};
use planhost_protocol::ServerNotification;
use planhost_protocol::{
    ApprovalInfo, AskStatus, AsksFilter, ConfigureParams, Empty, InitializeParams,
    PROTOCOL_VERSION, PlansFilter, ProposalRef, PublicationsFilter, ResolvePermissionParams,
    ResolvePlanParams, ResolvePublicationParams, SessionRef, SessionsFilter, SetModeParams,
    methods,
};
use planhost_service::{Connection, Service};
use serde::{Deserialize, Serialize};
use sha2::Digest as _;

use i18n::Lang;
use page::{Card, Lists};

/// Where `serve --web` listens without an address.
pub(crate) const DEFAULT_ADDR: &str = "127.0.0.1:7766";
/// The client name answers from the page carry (`resolvedBy.client`).
pub(crate) const CLIENT_NAME: &str = "planhost-web";
/// The name the page is opened under. Browsers resolve every `*.localhost` name to loopback
/// themselves, and keep cookies per host name: a cookie set here is never sent to another
/// server the person opens on `127.0.0.1` or `localhost` (cookies ignore ports).
pub(crate) const PAGE_HOST: &str = "planhost.localhost";
const LANG_COOKIE: &str = "planhost_lang";

/// `<state dir>/web.json`: where the running page is and the token it accepts.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct WebFile {
    /// The address a person opens (on [`PAGE_HOST`] for 127.0.0.1 and ::1).
    pub(crate) url: String,
    /// The socket address it listens on (absent in files of older planhosts: the url's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) addr: Option<String>,
    pub(crate) token: String,
}

impl WebFile {
    pub(crate) fn path(state_dir: &Path) -> PathBuf {
        state_dir.join("web.json")
    }

    pub(crate) fn read(state_dir: &Path) -> anyhow::Result<Self> {
        let path = Self::path(state_dir);
        let text = fs_err::read_to_string(&path)?;
        serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))
    }

    /// Written whole or not at all, owner-only.
    pub(crate) fn write(&self, state_dir: &Path) -> anyhow::Result<()> {
        use std::io::Write as _;
        let mut tmp = tempfile::NamedTempFile::new_in(state_dir)?;
        tmp.write_all(serde_json::to_string_pretty(self)?.as_bytes())?;
        tmp.as_file().sync_all()?;
        tmp.persist(Self::path(state_dir))?;
        Ok(())
    }

    /// The address a person opens: the page with its token.
    pub(crate) fn open_url(&self) -> String {
        format!("{}?token={}", self.url, self.token)
    }

    /// The same by the listening address itself, for a client that cannot resolve
    /// [`PAGE_HOST`] (its cookie is then scoped to the bare address).
    pub(crate) fn fallback_url(&self) -> Option<String> {
        let addr = self.addr.as_deref()?;
        let url = format!("http://{addr}/");
        (url != self.url).then(|| format!("{url}?token={}", self.token))
    }

    /// Where the page listens.
    pub(crate) fn socket_addr(&self) -> Option<SocketAddr> {
        match &self.addr {
            Some(addr) => addr.parse().ok(),
            None => self
                .url
                .trim_start_matches("http://")
                .trim_end_matches('/')
                .parse()
                .ok(),
        }
    }
}

/// The page's url for the address it listens on: [`PAGE_HOST`] where browsers resolve it to
/// that address, the address itself otherwise (e.g. 127.0.0.2).
fn page_url(local: SocketAddr) -> String {
    let named = match local.ip() {
        std::net::IpAddr::V4(ip) => ip == std::net::Ipv4Addr::LOCALHOST,
        std::net::IpAddr::V6(ip) => ip == std::net::Ipv6Addr::LOCALHOST,
    };
    if named {
        format!("http://{PAGE_HOST}:{}/", local.port())
    } else {
        format!("http://{local}/")
    }
}

/// A fresh random token (32 bytes, hex).
pub(crate) fn new_token() -> anyhow::Result<String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| anyhow::anyhow!("no randomness for the token: {e}"))?;
    Ok(hex::encode(bytes))
}

/// Parses `--web`'s address and refuses anything but loopback.
pub(crate) fn parse_addr(addr: &str) -> anyhow::Result<SocketAddr> {
    let parsed: SocketAddr = addr
        .parse()
        .with_context(|| format!("--web {addr}: not an address like 127.0.0.1:7766"))?;
    anyhow::ensure!(
        parsed.ip().is_loopback(),
        "--web {addr}: the page serves on loopback only (127.0.0.1 or [::1])"
    );
    Ok(parsed)
}

struct Web {
    svc: Service,
    state_dir: PathBuf,
    /// `planhost_web_<port>`: hosts on other ports keep cookies of their own under the one
    /// [`PAGE_HOST`].
    cookie_name: String,
    /// Where the page listens: the server end of every connection, to find its client's.
    local: SocketAddr,
}

type Shared = State<Arc<Web>>;

/// Binds `addr`, writes `web.json` (keeping an existing token), and serves until the runtime
/// stops. Returns the page's address.
pub(crate) async fn start(
    svc: Service,
    state_dir: &Path,
    addr: SocketAddr,
) -> anyhow::Result<String> {
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
    let url = page_url(local);
    let token = match WebFile::read(state_dir) {
        Ok(old) if old.token.len() == 64 => old.token,
        _ => new_token()?,
    };
    let file = WebFile {
        url: url.clone(),
        addr: Some(local.to_string()),
        token,
    };
    file.write(state_dir)?;
    tracing::info!(%url, "web page serving");
    eprintln!("planhost web: {}", file.open_url());
    let web = Arc::new(Web {
        svc,
        state_dir: state_dir.to_path_buf(),
        cookie_name: format!("planhost_web_{}", local.port()),
        local,
    });
    let app = Router::new()
        .route("/", get(index))
        .route("/cards", get(cards_fragment))
        .route("/cards/{id}", get(card_fragment))
        .route("/sessions", get(sessions_fragment))
        .route("/sessions/{id}", get(session_fragment))
        .route("/publications", get(publications_fragment))
        .route("/asks", get(asks_fragment))
        .route("/approvals/{id}", post(resolve))
        .route("/publications/{id}", post(answer_publication))
        .route("/asks/{id}", post(answer_ask))
        .route("/sessions/{id}/mode", post(set_mode))
        .route("/sessions/{id}/shell", post(set_shell))
        .route("/sessions/{id}/preset", post(set_preset))
        .route("/events", get(events))
        .route("/app.js", get(app_js))
        .route("/app.css", get(app_css))
        .fallback(not_found)
        .with_state(web);
    tokio::spawn(async move {
        // With each connection's client address: an answer's client process is looked up by it.
        let app = app.into_make_service_with_connect_info::<SocketAddr>();
        if let Err(error) = axum::serve(listener, app).await {
            tracing::error!(%error, "web page stopped");
        }
    });
    Ok(url)
}

/// Who is asking, once the checks passed.
struct Visitor {
    lang: Lang,
    token: String,
}

fn cookie<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .find_map(|kv| {
            let (k, v) = kv.trim().split_once('=')?;
            (k == name).then_some(v)
        })
}

fn lang_of(headers: &HeaderMap) -> Lang {
    cookie(headers, LANG_COOKIE)
        .and_then(Lang::from_tag)
        .unwrap_or_else(|| {
            headers
                .get(header::ACCEPT_LANGUAGE)
                .and_then(|v| v.to_str().ok())
                .map_or(Lang::En, Lang::from_accept_language)
        })
}

/// `Host` is loopback (`127.0.0.1`, `localhost`, `[::1]` or [`PAGE_HOST`], with or without a
/// port).
fn host_is_loopback(headers: &HeaderMap) -> bool {
    let Some(host) = headers.get(header::HOST).and_then(|v| v.to_str().ok()) else {
        return false;
    };
    let name = if let Some(rest) = host.strip_prefix('[') {
        rest.split_once(']').map_or("", |(h, _)| h)
    } else {
        host.rsplit_once(':').map_or(host, |(h, port)| {
            if port.chars().all(|c| c.is_ascii_digit()) {
                h
            } else {
                host
            }
        })
    };
    matches!(name, "127.0.0.1" | "localhost" | "::1" | PAGE_HOST)
}

/// Constant-time equality of two tokens.
fn same(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

fn csrf_of(token: &str) -> String {
    let digest = sha2::Sha256::digest(format!("planhost-web-csrf\0{token}").as_bytes());
    hex::encode(&digest[..16])
}

fn refused(
    lang: Lang,
    status: StatusCode,
    id: &str,
    title: &'static str,
    body: &'static str,
) -> Response {
    let mut r = (status, page::refusal(lang, id, title, body)).into_response();
    set_html(&mut r);
    r
}

fn set_html(r: &mut Response) {
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    r.headers_mut().insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; \
             img-src 'none'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
        ),
    );
    r.headers_mut().insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    // Not `no-referrer`: with it browsers send `Origin: null` on form posts, and the same-origin
    // check would refuse every answer made without the script.
    r.headers_mut().insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("same-origin"),
    );
    r.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
}

impl Web {
    fn token(&self) -> Option<String> {
        WebFile::read(&self.state_dir).ok().map(|f| f.token)
    }

    /// The checks every request passes: loopback `Host`, then the cookie. The refusal is the
    /// response itself (handlers return it as is).
    #[allow(clippy::result_large_err)]
    fn admit(&self, headers: &HeaderMap) -> Result<Visitor, Response> {
        let lang = lang_of(headers);
        if !host_is_loopback(headers) {
            return Err(refused(
                lang,
                StatusCode::MISDIRECTED_REQUEST,
                "bad-host",
                "bad_host.title",
                "bad_host.body",
            ));
        }
        let token = self.token();
        match (token, cookie(headers, &self.cookie_name)) {
            (Some(token), Some(given)) if same(&token, given) => Ok(Visitor { lang, token }),
            _ => Err(refused(
                lang,
                StatusCode::UNAUTHORIZED,
                "unauthorized",
                "unauthorized.title",
                "unauthorized.body",
            )),
        }
    }

    /// A state-changing request: also a same-origin `Origin` and the CSRF field.
    #[allow(clippy::result_large_err)]
    fn admit_change(&self, headers: &HeaderMap, csrf: &str) -> Result<Visitor, Response> {
        let visitor = self.admit(headers)?;
        let host = headers
            .get(header::HOST)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("");
        let origin_ok = headers
            .get(header::ORIGIN)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|o| o == format!("http://{host}"));
        if !origin_ok || !same(csrf, &csrf_of(&visitor.token)) {
            return Err(refused(
                visitor.lang,
                StatusCode::FORBIDDEN,
                "forbidden",
                "forbidden.title",
                "forbidden.body",
            ));
        }
        Ok(visitor)
    }

    /// A read's checks and its connection.
    #[allow(clippy::result_large_err)]
    fn begin(&self, headers: &HeaderMap) -> Result<(Visitor, Connection), Response> {
        let visitor = self.admit(headers)?;
        let conn = self.connect().map_err(internal)?;
        Ok((visitor, conn))
    }

    /// An answer's checks (its CSRF field and origin) and its connection, made for the client
    /// process at the other end of the TCP connection from `client` (see [`Web::answerer`]).
    async fn begin_answer(
        &self,
        headers: &HeaderMap,
        csrf: &str,
        client: SocketAddr,
    ) -> Result<(Visitor, Connection), Response> {
        let visitor = self.admit_change(headers, csrf)?;
        let conn = self.connect_answer(visitor.lang, client).await?;
        Ok((visitor, conn))
    }

    /// A connection of the page's own for one answer, refused (403, `ROLE_APPROVER_REFUSED`,
    /// on record in the audit as `connection.role_refused`) when the client process is one of
    /// this host's runs: the model's Bash can read `web.json` and post to this page.
    async fn connect_answer(&self, lang: Lang, client: SocketAddr) -> Result<Connection, Response> {
        let peer = self.answerer(client).await;
        self.connect_as(peer).map_err(|e| {
            if e.code() == planhost_core::ErrorCode::RoleApproverRefused {
                refused(
                    lang,
                    StatusCode::FORBIDDEN,
                    "approver-refused",
                    "approver_refused.title",
                    "approver_refused.body",
                )
            } else {
                internal(e)
            }
        })
    }

    /// Who answers over the connection from `client`: the process of this user that holds its
    /// other end, looked up in procfs ([`planhost_exec::lineage::tcp_peers`]); the service then
    /// refuses it the approver role if it is one of this host's runs (agent roots do not apply
    /// here: see [`planhost_service::Peer::WebClient`]). Of several holders, one under a run is
    /// named if there is one.
    ///
    /// Not found (the client closed the connection already, or its socket is not this user's,
    /// or this is not Linux): the answer is allowed as before, logged at debug. Failing closed
    /// would refuse a person whose browser runs as another user or in another network
    /// namespace (a sandboxed browser), while the page's own checks (token cookie, CSRF field,
    /// same-origin `Origin`, loopback `Host`) still stand; a run cannot hide its socket that way
    /// (it runs as this user, in the host's namespace), and one that closed its connection gets
    /// no answer.
    async fn answerer(&self, client: SocketAddr) -> planhost_service::Peer {
        let server = self.local;
        tokio::task::spawn_blocking(move || planhost_service::Peer::of_web_client(client, server))
            .await
            .unwrap_or(planhost_service::Peer::Embedded)
    }

    /// A connection of the page's own, for one request that answers nothing.
    fn connect(&self) -> Result<Connection, planhost_service::ServiceError> {
        self.connect_as(planhost_service::Peer::Embedded)
    }

    /// A connection of the page's own, for one request by `peer`.
    fn connect_as(
        &self,
        peer: planhost_service::Peer,
    ) -> Result<Connection, planhost_service::ServiceError> {
        let hello = InitializeParams {
            protocol_version: PROTOCOL_VERSION,
            client_name: CLIENT_NAME.into(),
            client_version: Some(env!("CARGO_PKG_VERSION").into()),
            roles: vec![Role::Approver, Role::Observer],
            tool_activity: false,
        };
        self.svc.connect(&hello, peer).map(|(conn, _notes, _)| conn)
    }

    async fn card(&self, conn: &Connection, approval: ApprovalInfo) -> Card {
        let detail = conn
            .call::<methods::PlansGet>(ProposalRef {
                proposal_id: approval.proposal_id.as_str().into(),
            })
            .await;
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
        Card {
            approval,
            markdown,
            intact,
            changes,
            error: None,
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
    async fn lists_for(&self, conn: &Connection, part: Part) -> Result<Lists, Response> {
        let mut lists = Lists::default();
        match part {
            Part::Sessions => {
                lists.sessions = conn
                    .call::<methods::SessionsList>(SessionsFilter {
                        workspace_root: None,
                        limit: Some(200),
                    })
                    .await
                    .map_err(internal)?
                    .items;
                lists.shells = conn.call::<methods::ShellsCatalog>(Empty {}).await.ok();
            }
            Part::Publications => {
                lists.publications = conn
                    .call::<methods::PublicationsList>(PublicationsFilter {
                        session_id: None,
                        status: Some(vec![PublicationStatus::Pending]),
                        limit: Some(200),
                    })
                    .await
                    .map_err(internal)?
                    .items;
            }
            Part::Asks => {
                lists.asks = conn
                    .call::<methods::PermissionsList>(AsksFilter {
                        session_id: None,
                        status: Some(vec![AskStatus::Open]),
                        limit: Some(200),
                    })
                    .await
                    .map_err(internal)?
                    .items;
            }
        }
        Ok(lists)
    }

    /// Sessions, pending publications, open asks and the shell catalog.
    async fn lists(&self, conn: &Connection) -> Result<Lists, Response> {
        let mut all = self.lists_for(conn, Part::Sessions).await?;
        all.publications = self.lists_for(conn, Part::Publications).await?.publications;
        all.asks = self.lists_for(conn, Part::Asks).await?.asks;
        Ok(all)
    }
}

fn internal(error: planhost_service::ServiceError) -> Response {
    tracing::warn!(%error, "web page request failed");
    (
        StatusCode::INTERNAL_SERVER_ERROR,
        format!("{}: {error}", error.code().as_str()),
    )
        .into_response()
}

fn html(body: String) -> Response {
    let mut r = body.into_response();
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

fn now_ms() -> i64 {
    use planhost_core::Clock as _;
    planhost_service::SystemClock.now().0
}

#[derive(Debug, Deserialize)]
struct IndexQuery {
    token: Option<String>,
    lang: Option<String>,
}

async fn index(State(web): Shared, headers: HeaderMap, Query(q): Query<IndexQuery>) -> Response {
    if let Some(given) = q.token.as_deref() {
        let lang = lang_of(&headers);
        if !host_is_loopback(&headers) {
            return refused(
                lang,
                StatusCode::MISDIRECTED_REQUEST,
                "bad-host",
                "bad_host.title",
                "bad_host.body",
            );
        }
        return match web.token() {
            Some(token) if same(&token, given) => {
                let mut r = see_other("/");
                let cookie = format!(
                    "{}={token}; HttpOnly; SameSite=Strict; Path=/",
                    web.cookie_name
                );
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
        let cookie = format!("{LANG_COOKIE}={}; SameSite=Strict; Path=/", lang.tag());
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
    html(page::page(
        visitor.lang,
        &csrf_of(&visitor.token),
        &lists,
        &cards,
        now_ms(),
    ))
}

async fn cards_fragment(State(web): Shared, headers: HeaderMap) -> Response {
    let (visitor, conn) = match web.begin(&headers) {
        Ok(begun) => begun,
        Err(r) => return r,
    };
    match web.pending_cards(&conn).await {
        Ok(cards) => html(page::cards_html(
            visitor.lang,
            &csrf_of(&visitor.token),
            &cards,
        )),
        Err(r) => r,
    }
}

async fn card_fragment(
    State(web): Shared,
    headers: HeaderMap,
    UrlPath(id): UrlPath<String>,
) -> Response {
    let (visitor, conn) = match web.begin(&headers) {
        Ok(begun) => begun,
        Err(r) => return r,
    };
    match conn
        .call::<methods::PlansGet>(ProposalRef {
            proposal_id: id.as_str().into(),
        })
        .await
    {
        Ok(detail) => {
            let card = web.card(&conn, detail.approval).await;
            html(page::card(visitor.lang, &csrf_of(&visitor.token), &card))
        }
        Err(error) => {
            tracing::debug!(%error, "card not found");
            not_found_for(visitor.lang)
        }
    }
}

/// Which list a fragment or an answer renders.
#[derive(Debug, Clone, Copy)]
enum Part {
    Sessions,
    Publications,
    Asks,
}

fn part_html(part: Part, lang: Lang, csrf: &str, lists: &Lists) -> String {
    match part {
        Part::Sessions => page::sessions_html(lang, csrf, lists),
        Part::Publications => page::publications_html(lang, csrf, lists),
        Part::Asks => page::asks_html(lang, csrf, lists),
    }
}

async fn fragment(web: &Web, headers: &HeaderMap, part: Part) -> Response {
    let (visitor, conn) = match web.begin(headers) {
        Ok(begun) => begun,
        Err(r) => return r,
    };
    match web.lists_for(&conn, part).await {
        Ok(lists) => html(part_html(
            part,
            visitor.lang,
            &csrf_of(&visitor.token),
            &lists,
        )),
        Err(r) => r,
    }
}

async fn sessions_fragment(State(web): Shared, headers: HeaderMap) -> Response {
    fragment(&web, &headers, Part::Sessions).await
}

/// One session's `<li>`: what the page refetches when an event names that session.
async fn session_fragment(
    State(web): Shared,
    headers: HeaderMap,
    UrlPath(id): UrlPath<String>,
) -> Response {
    let (visitor, conn) = match web.begin(&headers) {
        Ok(begun) => begun,
        Err(r) => return r,
    };
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
    html(page::session_item(
        visitor.lang,
        &csrf_of(&visitor.token),
        &session,
        &lists,
    ))
}

async fn publications_fragment(State(web): Shared, headers: HeaderMap) -> Response {
    fragment(&web, &headers, Part::Publications).await
}

async fn asks_fragment(State(web): Shared, headers: HeaderMap) -> Response {
    fragment(&web, &headers, Part::Asks).await
}

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
    let mut r = html(part_html(
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
        "INVALID_PARAMS".to_owned(),
        format!("unknown {what} {value:?}"),
    ))
}

#[derive(Debug, Deserialize)]
struct AnswerForm {
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

async fn answer_publication(
    State(web): Shared,
    ConnectInfo(client): ConnectInfo<SocketAddr>,
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

async fn answer_ask(
    State(web): Shared,
    ConnectInfo(client): ConnectInfo<SocketAddr>,
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
async fn set_mode(
    State(web): Shared,
    ConnectInfo(client): ConnectInfo<SocketAddr>,
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
    client: SocketAddr,
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
async fn set_shell(
    State(web): Shared,
    ConnectInfo(client): ConnectInfo<SocketAddr>,
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
async fn set_preset(
    State(web): Shared,
    ConnectInfo(client): ConnectInfo<SocketAddr>,
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
struct ResolveForm {
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
async fn resolve(
    State(web): Shared,
    ConnectInfo(client): ConnectInfo<SocketAddr>,
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
    let detail = match conn
        .call::<methods::PlansGet>(ProposalRef {
            proposal_id: id.as_str().into(),
        })
        .await
    {
        Ok(d) => d,
        Err(_) => return not_found_for(visitor.lang),
    };
    let a = detail.approval;
    let outcome = match form.action.as_str() {
        "approve" | "reject" => {
            let action = if form.action == "approve" {
                ApprovalAction::Approve
            } else {
                ApprovalAction::Reject
            };
            let mode = match (action, form.mode.as_deref()) {
                (ApprovalAction::Approve, None | Some("")) => Ok(Some(TargetPermissionMode::Ask)),
                (ApprovalAction::Approve, Some(m)) => {
                    m.parse::<TargetPermissionMode>().map(Some).map_err(|_| {
                        (
                            "PLAN_PERMISSION_MODE_INVALID".to_owned(),
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
                        version: Some(
                            form.version
                                .as_deref()
                                .and_then(|v| v.parse().ok())
                                .unwrap_or(a.version),
                        ),
                        artifact_sha256: Some(
                            form.sha256
                                .clone()
                                .filter(|s| !s.is_empty())
                                .unwrap_or_else(|| a.artifact_sha256.clone()),
                        ),
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
        other => Err((
            "INVALID_PARAMS".to_owned(),
            format!("unknown action {other:?}"),
        )),
    };
    if !fetched {
        return see_other("/");
    }
    let now = match conn
        .call::<methods::PlansGet>(ProposalRef {
            proposal_id: id.as_str().into(),
        })
        .await
    {
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
    let mut r = html(page::card(visitor.lang, &csrf_of(&visitor.token), &card));
    *r.status_mut() = status;
    r
}

/// Live updates: one `change` event per committed state change (the page then refetches what it
/// shows). The stream holds a connection of its own, dropped with the stream.
/// How often an open event stream checks that its token is still the current one.
const TOKEN_RECHECK: std::time::Duration = std::time::Duration::from_secs(5);

async fn events(State(web): Shared, headers: HeaderMap) -> Response {
    let visitor = match web.admit(&headers) {
        Ok(v) => v,
        Err(r) => return r,
    };
    let hello = InitializeParams {
        protocol_version: PROTOCOL_VERSION,
        client_name: CLIENT_NAME.into(),
        client_version: Some(env!("CARGO_PKG_VERSION").into()),
        roles: vec![Role::Observer],
        tool_activity: true,
    };
    let (conn, notes, _) = match web.svc.connect(&hello, planhost_service::Peer::Embedded) {
        Ok(c) => c,
        Err(e) => return internal(e),
    };
    let state = (conn, notes, Arc::clone(&web), visitor.token);
    let stream = futures_util::stream::unfold(state, |(conn, mut notes, web, token)| async move {
        // The service drops a connection that stops reading: end the stream then, so the page
        // sees the loss and reconnects instead of showing a stale "live". A rotated token ends
        // it too (the page's reconnect is then refused).
        let closed = conn.closed_token();
        loop {
            let note = tokio::select! {
                () = closed.cancelled() => return None,
                () = tokio::time::sleep(TOKEN_RECHECK) => {
                    if web.token().is_none_or(|now| !same(&now, &token)) {
                        return None;
                    }
                    continue;
                }
                note = notes.recv() => note,
            };
            // `change` carries the event (the page refetches only what its kind touches);
            // `tools` a tool call's new state (the page refetches the sessions).
            let (name, data) = match note {
                Some(ServerNotification::StateChanged(event)) => {
                    ("change", serde_json::to_string(&event))
                }
                Some(ServerNotification::ToolActivity(activity)) => {
                    ("tools", serde_json::to_string(&activity))
                }
                Some(ServerNotification::ToolOutput(_)) => continue,
                // The host is stopping: the page sees the stream end and says it lost the host.
                Some(ServerNotification::HostStopping(_)) | None => return None,
            };
            let e = Event::default().event(name).data(data.unwrap_or_default());
            return Some((
                Ok::<_, std::convert::Infallible>(e),
                (conn, notes, web, token),
            ));
        }
    });
    Sse::new(stream)
        .keep_alive(KeepAlive::default())
        .into_response()
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
    r.headers_mut().insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(*k, HeaderValue::from_str(v).unwrap());
        }
        h
    }

    #[test]
    fn only_loopback_hosts_are_served() {
        for ok in [
            "127.0.0.1",
            "127.0.0.1:7766",
            "localhost:1",
            "[::1]:80",
            "[::1]",
            "planhost.localhost:7766",
            "planhost.localhost",
        ] {
            assert!(host_is_loopback(&headers(&[("host", ok)])), "{ok}");
        }
        for bad in [
            "evil.example",
            "evil.example:7766",
            "127.0.0.1.evil.example",
            "10.0.0.1:7766",
            "localhost.evil:80",
            "planhost.localhost.evil.example:80",
            "other.localhost:7766",
        ] {
            assert!(!host_is_loopback(&headers(&[("host", bad)])), "{bad}");
        }
        assert!(!host_is_loopback(&HeaderMap::new()));
    }

    #[test]
    fn the_web_address_must_be_loopback() {
        assert!(parse_addr("127.0.0.1:0").is_ok());
        assert!(parse_addr("[::1]:7766").is_ok());
        assert!(parse_addr("0.0.0.0:7766").is_err());
        assert!(parse_addr("192.168.1.2:80").is_err());
        assert!(parse_addr("localhost").is_err());
    }

    #[test]
    fn cookies_are_found_by_name() {
        let h = headers(&[(
            "cookie",
            "a=1; planhost_web_7766=tok; planhost_web_7767=other; planhost_lang=zh-CN",
        )]);
        assert_eq!(cookie(&h, "planhost_web_7766"), Some("tok"));
        assert_eq!(cookie(&h, "planhost_web_7767"), Some("other"));
        assert_eq!(lang_of(&h), Lang::ZhCn);
        assert_eq!(cookie(&h, "planhost"), None);
    }

    #[test]
    fn the_page_is_named_planhost_localhost_where_browsers_resolve_it() {
        let at = |a: &str| page_url(a.parse().unwrap());
        assert_eq!(at("127.0.0.1:7766"), "http://planhost.localhost:7766/");
        assert_eq!(at("[::1]:7766"), "http://planhost.localhost:7766/");
        assert_eq!(at("127.0.0.2:7766"), "http://127.0.0.2:7766/");
        let file = WebFile {
            url: at("127.0.0.1:7766"),
            addr: Some("127.0.0.1:7766".into()),
            token: "t".into(),
        };
        assert_eq!(file.socket_addr(), Some("127.0.0.1:7766".parse().unwrap()));
        assert_eq!(
            file.fallback_url().as_deref(),
            Some("http://127.0.0.1:7766/?token=t")
        );
        // A file an older planhost wrote has no addr: its url is the address.
        let old: WebFile =
            serde_json::from_str(r#"{"url":"http://127.0.0.1:7766/","token":"t"}"#).unwrap();
        assert_eq!(old.socket_addr(), Some("127.0.0.1:7766".parse().unwrap()));
        assert_eq!(old.fallback_url(), None);
    }

    #[test]
    fn csrf_depends_on_the_token() {
        assert_ne!(csrf_of("a"), csrf_of("b"));
        assert_eq!(csrf_of("a").len(), 32);
        assert!(same("abc", "abc") && !same("abc", "abd") && !same("abc", "ab"));
    }
}

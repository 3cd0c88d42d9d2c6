//! The checks every request passes before its handler does anything: a loopback `Host`
//! (against DNS rebinding), the token's cookie, and for a request that changes state a
//! same-origin `Origin` and the CSRF field; a refusal is the response itself. Here too are the
//! page's connections to the service: an answer's is made for the client process at the other
//! end of its TCP connection, so that the host refuses the approver role to its own runs.

use std::net::SocketAddr;

use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use planhost_core::Role;
use planhost_protocol::{InitializeParams, PROTOCOL_VERSION};
use planhost_service::Connection;
use sha2::Digest as _;

use super::i18n::Lang;
use super::{CLIENT_NAME, LANG_COOKIE, PAGE_HOST, Web, WebFile, internal, page, set_html};

/// Who is asking, once the checks passed.
/// The server end of a connection to the remote page (the loopback page's is [`Web::local`]).
#[derive(Debug, Clone, Copy)]
pub(super) struct ServerEnd(pub(super) SocketAddr);

/// Both ends of the TCP connection an answer came over: the page looks up the process that
/// holds the client end (a run of this host is refused), on whichever listener it came.
#[derive(Debug, Clone, Copy)]
pub(super) struct ClientEnd {
    client: SocketAddr,
    server: Option<SocketAddr>,
}

impl<S: Send + Sync> axum::extract::FromRequestParts<S> for ClientEnd {
    type Rejection = Response;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        _: &S,
    ) -> Result<Self, Self::Rejection> {
        let client = parts
            .extensions
            .get::<axum::extract::ConnectInfo<SocketAddr>>()
            .map(|c| c.0)
            .ok_or_else(|| {
                (StatusCode::INTERNAL_SERVER_ERROR, "no client address").into_response()
            })?;
        Ok(Self {
            client,
            server: parts.extensions.get::<ServerEnd>().map(|s| s.0),
        })
    }
}

/// A read's checks as one extractor: the visitor admitted (loopback or remote `Host`, the
/// cookie) and a connection of the page's own. A refusal is the response itself.
pub(super) struct Reader {
    pub(super) visitor: Visitor,
    pub(super) conn: Connection,
}

impl axum::extract::FromRequestParts<std::sync::Arc<Web>> for Reader {
    type Rejection = Response;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        web: &std::sync::Arc<Web>,
    ) -> Result<Self, Self::Rejection> {
        let (visitor, conn) = web.begin(&parts.headers)?;
        Ok(Self { visitor, conn })
    }
}

impl axum::extract::FromRequestParts<std::sync::Arc<Web>> for Visitor {
    type Rejection = Response;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        web: &std::sync::Arc<Web>,
    ) -> Result<Self, Self::Rejection> {
        web.admit(&parts.headers)
    }
}

pub(super) struct Visitor {
    pub(super) lang: Lang,
    pub(super) token: String,
}

/// The value of the cookie `name` the request carries (axum-extra's parsing).
fn cookie(headers: &HeaderMap, name: &str) -> Option<String> {
    axum_extra::extract::CookieJar::from_headers(headers)
        .get(name)
        .map(|c| c.value().to_owned())
}

pub(super) fn lang_of(headers: &HeaderMap) -> Lang {
    cookie(headers, LANG_COOKIE)
        .and_then(|tag| Lang::from_tag(&tag))
        .unwrap_or_else(|| {
            headers
                .get(header::ACCEPT_LANGUAGE)
                .and_then(|v| v.to_str().ok())
                .map_or(Lang::En, Lang::from_accept_language)
        })
}

/// `Host` is loopback (`127.0.0.1`, `localhost`, `[::1]` or [`PAGE_HOST`], with or without a
/// port).
pub(super) fn host_is_loopback(headers: &HeaderMap) -> bool {
    let Some(host) = headers.get(header::HOST).and_then(|v| v.to_str().ok()) else {
        return false;
    };
    let port_ok = |port: &str| !port.is_empty() && port.chars().all(|c| c.is_ascii_digit());
    let name = if let Some(rest) = host.strip_prefix('[') {
        // `[addr]` or `[addr]:port`, nothing else after the bracket.
        match rest.split_once(']') {
            Some((h, "")) => h,
            Some((h, after)) if after.strip_prefix(':').is_some_and(port_ok) => h,
            _ => "",
        }
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

/// Constant-time equality of two tokens (`subtle`: no early exit on the first differing byte;
/// lengths are not secret).
pub(super) fn same(a: &str, b: &str) -> bool {
    use subtle::ConstantTimeEq as _;
    bool::from(a.as_bytes().ct_eq(b.as_bytes()))
}

pub(super) fn csrf_of(token: &str) -> String {
    let digest = sha2::Sha256::digest(format!("planhost-web-csrf\0{token}").as_bytes());
    hex::encode(&digest[..16])
}

pub(super) fn refused(
    lang: Lang,
    status: StatusCode,
    id: &str,
    title: &'static str,
    body: &'static str,
) -> Response {
    let mut r = (status, page::refusal(lang, id, title, body).into_string()).into_response();
    set_html(&mut r);
    r
}

impl Web {
    /// Whether the request's `Host` is this page's: a loopback name, or the remote page's
    /// address.
    pub(super) fn host_ok(&self, headers: &HeaderMap) -> bool {
        host_is_loopback(headers) || self.on_remote(headers)
    }

    /// Whether the request came for the remote page (its `Host` is that address): its cookie
    /// is `Secure`, and a change must come from `https://` there.
    pub(super) fn on_remote(&self, headers: &HeaderMap) -> bool {
        let host = headers.get(header::HOST).and_then(|v| v.to_str().ok());
        self.remote
            .as_ref()
            .is_some_and(|r| host == Some(r.host.as_str()))
    }

    pub(super) fn token(&self) -> String {
        self.token
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// A new token, in memory and in `web.json` (for `planhost web` to print), written to the
    /// file first so that a failed write changes nothing.
    pub(super) fn rotate_token(&self) -> anyhow::Result<()> {
        let mut file = WebFile::read(&self.paths.state_dir)?;
        file.token = super::new_token()?;
        file.write(&self.paths.state_dir)?;
        *self
            .token
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = file.token;
        Ok(())
    }

    /// The checks every request passes: loopback `Host`, then the cookie. The refusal is the
    /// response itself (handlers return it as is).
    #[allow(clippy::result_large_err)]
    pub(super) fn admit(&self, headers: &HeaderMap) -> Result<Visitor, Response> {
        let lang = lang_of(headers);
        if !self.host_ok(headers) {
            return Err(refused(
                lang,
                StatusCode::MISDIRECTED_REQUEST,
                "bad-host",
                "bad_host.title",
                "bad_host.body",
            ));
        }
        let token = self.token();
        match cookie(headers, &self.cookie_name) {
            Some(given) if same(&token, &given) => Ok(Visitor { lang, token }),
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
    pub(super) fn admit_change(
        &self,
        headers: &HeaderMap,
        csrf: &str,
    ) -> Result<Visitor, Response> {
        let visitor = self.admit(headers)?;
        let host = headers
            .get(header::HOST)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("");
        let scheme = if self.on_remote(headers) {
            "https"
        } else {
            "http"
        };
        let origin_ok = headers
            .get(header::ORIGIN)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|o| o == format!("{scheme}://{host}"));
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
    pub(super) fn begin(&self, headers: &HeaderMap) -> Result<(Visitor, Connection), Response> {
        let visitor = self.admit(headers)?;
        let conn = self.connect().map_err(internal)?;
        Ok((visitor, conn))
    }

    /// An answer's checks (its CSRF field and origin) and its connection, made for the client
    /// process at the other end of the TCP connection from `client` (see [`Web::answerer`]).
    pub(super) async fn begin_answer(
        &self,
        headers: &HeaderMap,
        csrf: &str,
        client: ClientEnd,
    ) -> Result<(Visitor, Connection), Response> {
        let visitor = self.admit_change(headers, csrf)?;
        let conn = self.connect_answer(visitor.lang, client).await?;
        Ok((visitor, conn))
    }

    /// A connection of the page's own for one answer, refused (403, `ROLE_APPROVER_REFUSED`,
    /// on record in the audit as `connection.role_refused`) when the client process is one of
    /// this host's runs: the model's Bash can read `web.json` and post to this page.
    pub(super) async fn connect_answer(
        &self,
        lang: Lang,
        client: ClientEnd,
    ) -> Result<Connection, Response> {
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
    async fn answerer(&self, end: ClientEnd) -> planhost_service::Peer {
        let client = end.client;
        let server = end.server.unwrap_or(self.local);
        tokio::task::spawn_blocking(move || planhost_service::Peer::of_web_client(client, server))
            .await
            .unwrap_or(planhost_service::Peer::Embedded)
    }

    /// A connection of the page's own, for one request that answers nothing.
    pub(super) fn connect(&self) -> Result<Connection, planhost_service::ServiceError> {
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
            events: planhost_protocol::EventScope::All,
            agent_process: None,
        };
        self.svc.connect(&hello, peer).map(|(conn, _notes, _)| conn)
    }
}

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;

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
            "[::1]evil.com",
            "[::1]:80evil",
            "[::1]:",
            "[::1]x:80",
        ] {
            assert!(!host_is_loopback(&headers(&[("host", bad)])), "{bad}");
        }
        assert!(!host_is_loopback(&HeaderMap::new()));
    }

    #[test]
    fn cookies_are_found_by_name() {
        let h = headers(&[(
            "cookie",
            "a=1; planhost_web_7766=tok; planhost_web_7767=other; planhost_lang=zh-CN",
        )]);
        assert_eq!(cookie(&h, "planhost_web_7766").as_deref(), Some("tok"));
        assert_eq!(cookie(&h, "planhost_web_7767").as_deref(), Some("other"));
        assert_eq!(lang_of(&h), Lang::ZhCn);
        assert_eq!(cookie(&h, "planhost"), None);
    }

    #[test]
    fn csrf_depends_on_the_token() {
        assert_ne!(csrf_of("a"), csrf_of("b"));
        assert_eq!(csrf_of("a").len(), 32);
        assert!(same("abc", "abc") && !same("abc", "abd") && !same("abc", "ab"));
    }
}

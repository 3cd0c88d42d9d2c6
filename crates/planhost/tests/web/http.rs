//! Plain HTTP/1.1 over `std::net::TcpStream`, one request a connection, and a browser-less
//! visitor that logs in with the token.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use crate::support::WebHost;

/// One HTTP response, read whole.
#[derive(Debug, Clone)]
pub(crate) struct HttpResponse {
    pub(crate) status: u16,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: String,
}

impl HttpResponse {
    /// The first header named `name` (case-insensitive).
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// Asserts no CORS header is present.
    #[track_caller]
    pub(crate) fn assert_no_cors(&self) {
        let cors: Vec<_> = self
            .headers
            .iter()
            .filter(|(n, _)| n.to_ascii_lowercase().starts_with("access-control-"))
            .collect();
        assert!(cors.is_empty(), "no CORS headers ever: {cors:?}");
    }

    /// Asserts the status and that the body carries `id="{id}"`.
    #[track_caller]
    pub(crate) fn assert_refusal(&self, status: u16, id: &str) {
        assert_eq!(self.status, status, "{self:#?}");
        assert!(
            self.body.contains(&format!("id=\"{id}\"")),
            "the {status} page has id=\"{id}\": {}",
            self.body
        );
        self.assert_no_cors();
    }
}

/// One request on a fresh connection to `host` (`Connection: close`). `headers` must include
/// `Host`; a body is sent as a form.
pub(crate) fn http(
    host: &WebHost,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<&str>,
) -> HttpResponse {
    let mut stream = TcpStream::connect(host.addr()).expect("connect to the page");
    stream
        .set_read_timeout(Some(host.budget.at_most(Duration::from_secs(10), path)))
        .expect("read timeout");
    stream
        .set_write_timeout(Some(host.budget.at_most(Duration::from_secs(10), path)))
        .expect("write timeout");
    let mut request = format!("{method} {path} HTTP/1.1\r\n");
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    if let Some(body) = body {
        request.push_str("Content-Type: application/x-www-form-urlencoded\r\n");
        request.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    request.push_str("Connection: close\r\n\r\n");
    if let Some(body) = body {
        request.push_str(body);
    }
    stream
        .write_all(request.as_bytes())
        .expect("send the request");
    read_response(stream, &format!("{method} {path}"))
}

fn read_response(stream: TcpStream, what: &str) -> HttpResponse {
    let mut reader = BufReader::new(stream);
    let mut status_line = String::new();
    reader
        .read_line(&mut status_line)
        .unwrap_or_else(|e| panic!("{what}: reading the status line: {e}"));
    let status: u16 = status_line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("{what}: not an HTTP status line: {status_line:?}"));
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        reader
            .read_line(&mut line)
            .unwrap_or_else(|e| panic!("{what}: reading headers: {e}"));
        let line = line.trim_end_matches(['\r', '\n']);
        if line.is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            headers.push((name.trim().to_owned(), value.trim().to_owned()));
        }
    }
    let find = |name: &str| {
        headers
            .iter()
            .find(|(n, _): &&(String, String)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.clone())
    };
    let mut body = Vec::new();
    if find("transfer-encoding").is_some_and(|v| v.to_ascii_lowercase().contains("chunked")) {
        loop {
            let mut size = String::new();
            reader.read_line(&mut size).expect("chunk size");
            let size = usize::from_str_radix(size.trim().split(';').next().unwrap_or("0"), 16)
                .unwrap_or_else(|_| panic!("{what}: bad chunk size {size:?}"));
            if size == 0 {
                break;
            }
            let mut chunk = vec![0; size + 2];
            reader.read_exact(&mut chunk).expect("chunk");
            body.extend_from_slice(&chunk[..size]);
        }
    } else if let Some(length) = find("content-length").and_then(|v| v.parse::<usize>().ok()) {
        body.resize(length, 0);
        reader
            .read_exact(&mut body)
            .unwrap_or_else(|e| panic!("{what}: reading {length} body bytes: {e}"));
    } else {
        reader
            .read_to_end(&mut body)
            .unwrap_or_else(|e| panic!("{what}: reading the body: {e}"));
    }
    HttpResponse {
        status,
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
    }
}

/// `application/x-www-form-urlencoded` of `fields`.
/// The page's approve form for `approval` with permission mode `mode`, as the page posts it:
/// the CSRF value and the version and SHA-256 it showed.
pub(crate) fn approve_form(
    approval: &planhost_protocol::ApprovalInfo,
    csrf: &str,
    mode: &str,
) -> String {
    let version = approval.version.to_string();
    form(&[
        ("action", "approve"),
        ("mode", mode),
        ("csrf", csrf),
        ("version", version.as_str()),
        ("sha256", approval.artifact_sha256.as_str()),
    ])
}

pub(crate) fn form(fields: &[(&str, &str)]) -> String {
    fields
        .iter()
        .map(|(k, v)| format!("{}={}", encode(k), encode(v)))
        .collect::<Vec<_>>()
        .join("&")
}

fn encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                char::from(b).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// The value of `<meta name="{name}" content="...">` in `html`, whatever the attribute order.
pub(crate) fn meta_content(html: &str, name: &str) -> Option<String> {
    html.split("<meta").skip(1).find_map(|tag| {
        let tag = tag.split('>').next()?;
        let named =
            tag.contains(&format!("name=\"{name}\"")) || tag.contains(&format!("name='{name}'"));
        if !named {
            return None;
        }
        let (_, rest) = tag.split_once("content=")?;
        let quote = rest.chars().next()?;
        let rest = rest.get(1..)?;
        Some(rest.split(quote).next()?.to_owned())
    })
}

/// A browser-less visitor that logged in with the token: its cookie and the page's CSRF value.
#[derive(Debug, Clone)]
pub(crate) struct Visitor {
    /// `planhost_web_PORT=...`, as sent back in `Cookie`.
    pub(crate) cookie: String,
    /// The `Set-Cookie` header the login got.
    pub(crate) set_cookie: String,
    pub(crate) csrf: String,
    /// The page (`GET /` with the cookie).
    pub(crate) page: HttpResponse,
}

/// `GET /?token=T` (303 with the cookie), then `GET /` with it (200, with the CSRF meta).
pub(crate) fn log_in(host: &WebHost, token: &str) -> Visitor {
    let hp = host.host_port();
    let first = http(
        host,
        "GET",
        &format!("/?token={token}"),
        &[("Host", &hp)],
        None,
    );
    assert_eq!(first.status, 303, "the token's first load: {first:#?}");
    assert_eq!(first.header("location"), Some("/"), "{first:#?}");
    let set_cookie = first
        .headers
        .iter()
        .filter(|(n, _)| n.eq_ignore_ascii_case("set-cookie"))
        .map(|(_, v)| v.clone())
        .find(|v| v.starts_with(&format!("{}=", host.cookie_name())))
        .unwrap_or_else(|| panic!("no {} cookie: {first:#?}", host.cookie_name()));
    let cookie = set_cookie
        .split(';')
        .next()
        .expect("a cookie pair")
        .trim()
        .to_owned();
    let page = http(
        host,
        "GET",
        "/",
        &[("Host", &hp), ("Cookie", &cookie)],
        None,
    );
    assert_eq!(page.status, 200, "the page with the cookie: {page:#?}");
    let csrf = meta_content(&page.body, "csrf")
        .unwrap_or_else(|| panic!("no <meta name=\"csrf\"> in the page: {}", page.body));
    Visitor {
        cookie,
        set_cookie,
        csrf,
        page,
    }
}

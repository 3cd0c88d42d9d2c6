//! Where the page is and who may open it: `<state dir>/web.json` ([`WebFile`]) with the page's
//! address and the token it accepts, a fresh token ([`new_token`]), the page's url under
//! [`PAGE_HOST`] ([`page_url`]), and the check that `--web` names a loopback address
//! ([`parse_addr`]).

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use serde::{Deserialize, Serialize};

use super::PAGE_HOST;

/// `<state dir>/web.json`: where the running page is and the token it accepts.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct WebFile {
    /// The address a person opens (on [`PAGE_HOST`] for 127.0.0.1 and ::1).
    pub(crate) url: String,
    /// The socket address it listens on (absent in files of older planhosts: the url's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) addr: Option<String>,
    pub(crate) token: String,
    /// The page for another device (`serve --web-remote`), over TLS.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) remote_url: Option<String>,
    /// SHA-256 of its certificate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) remote_fingerprint: Option<String>,
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
        write_private(
            &Self::path(state_dir),
            serde_json::to_string_pretty(self)?.as_bytes(),
        )
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
pub(super) fn page_url(local: SocketAddr) -> String {
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

/// Writes `bytes` to `path` whole or not at all (a temporary file beside it, synced, then
/// renamed), readable by this user only: a temporary file is created 0600.
pub(crate) fn write_private(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    use std::io::Write as _;
    let dir = path
        .parent()
        .with_context(|| format!("{} has no directory", path.display()))?;
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path)?;
    Ok(())
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_web_address_must_be_loopback() {
        assert!(parse_addr("127.0.0.1:0").is_ok());
        assert!(parse_addr("[::1]:7766").is_ok());
        assert!(parse_addr("0.0.0.0:7766").is_err());
        assert!(parse_addr("192.168.1.2:80").is_err());
        assert!(parse_addr("localhost").is_err());
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
            remote_url: None,
            remote_fingerprint: None,
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
}

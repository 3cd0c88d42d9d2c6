//! The page for another device (`serve --web-remote ADDR`): the same page, also served on one
//! named non-loopback address, over TLS only, behind the same token. Never on by default.
//!
//! - The certificate is the person's (`--web-cert` and `--web-key`, PEM), or one made for the
//!   address and kept in `<state dir>/web-remote/` (0600) so that its SHA-256, printed at start
//!   and by `planhost web`, stays the same across restarts: a person can pin it once.
//! - A plain-HTTP request on that port is answered 400, saying to use `https://`, and nothing
//!   else: no page, no redirect carrying anything.
//! - The page's checks apply unchanged, with the address as the one more `Host` it answers to;
//!   its cookie is `Secure` there, and a change must come from `https://` that address.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use axum::Router;
use axum::extract::ConnectInfo;
use sha2::Digest as _;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio_rustls::TlsAcceptor;

use super::address::write_private;
use tokio_rustls::rustls::ServerConfig;
use tokio_rustls::rustls::pki_types::pem::PemObject as _;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};

/// How long a connection may take to say anything, or to finish its TLS handshake.
const HANDSHAKE_BOUND: Duration = Duration::from_secs(10);

/// Where the remote page is.
#[derive(Debug, Clone)]
pub(crate) struct Remote {
    /// The `Host` a browser sends for it (`192.168.1.5:7767`, `[fd00::5]:7767`).
    pub(crate) host: String,
    /// SHA-256 of the certificate (DER), hex pairs with colons.
    pub(crate) fingerprint: String,
}

impl Remote {
    pub(crate) fn url(&self) -> String {
        format!("https://{}/", self.host)
    }
}

/// The person's certificate and key, if they name them.
#[derive(Debug, Clone, Default)]
pub(crate) struct CertFiles {
    pub(crate) cert: Option<PathBuf>,
    pub(crate) key: Option<PathBuf>,
}

/// Parses `--web-remote`'s address: one named address, not loopback (that is `--web`), not
/// "every interface".
pub(crate) fn parse_remote_addr(addr: &str) -> anyhow::Result<SocketAddr> {
    let parsed: SocketAddr = addr
        .parse()
        .with_context(|| format!("--web-remote {addr}: not an address like 192.168.1.5:7767"))?;
    anyhow::ensure!(
        !parsed.ip().is_loopback(),
        "--web-remote {addr}: that is loopback; --web serves there"
    );
    anyhow::ensure!(
        !parsed.ip().is_unspecified(),
        "--web-remote {addr}: name the one address the page may be reached on, not every interface"
    );
    anyhow::ensure!(
        parsed.port() != 0,
        "--web-remote {addr}: give the port, so the address (and a phone's bookmark) stays the same"
    );
    Ok(parsed)
}

/// The TLS settings and the certificate's fingerprint.
fn tls(
    state_dir: &Path,
    addr: SocketAddr,
    files: &CertFiles,
) -> anyhow::Result<(Arc<ServerConfig>, String)> {
    let (cert_pem, key_pem) = match (&files.cert, &files.key) {
        (Some(cert), Some(key)) => (cert.clone(), key.clone()),
        (None, None) => made_for(state_dir, addr)?,
        _ => anyhow::bail!("--web-cert and --web-key go together"),
    };
    let certs = CertificateDer::pem_file_iter(&cert_pem)
        .with_context(|| format!("reading the certificate {}", cert_pem.display()))?
        .collect::<Result<Vec<_>, _>>()
        .with_context(|| format!("reading the certificate {}", cert_pem.display()))?;
    let first = certs
        .first()
        .with_context(|| format!("{} holds no certificate", cert_pem.display()))?;
    let fingerprint = fingerprint(first.as_ref());
    let key = PrivateKeyDer::from_pem_file(&key_pem)
        .with_context(|| format!("reading the key {}", key_pem.display()))?;
    let provider = Arc::new(tokio_rustls::rustls::crypto::ring::default_provider());
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .context("the certificate and key do not go together")?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok((Arc::new(config), fingerprint))
}

fn fingerprint(der: &[u8]) -> String {
    sha2::Sha256::digest(der)
        .iter()
        .map(|b| format!("{b:02X}"))
        .collect::<Vec<_>>()
        .join(":")
}

/// The certificate made for `addr` (kept, so its fingerprint stays), made now if there is none
/// or it was made for another address.
fn made_for(state_dir: &Path, addr: SocketAddr) -> anyhow::Result<(PathBuf, PathBuf)> {
    let dir = state_dir.join("web-remote");
    let (cert, key, names) = (dir.join("cert.pem"), dir.join("key.pem"), dir.join("for"));
    let ip = addr.ip().to_string();
    if cert.is_file()
        && key.is_file()
        && fs_err::read_to_string(&names).is_ok_and(|n| n.trim() == ip)
    {
        return Ok((cert, key));
    }
    fs_err::create_dir_all(&dir)?;
    fs_err::set_permissions(&dir, std::os::unix::fs::PermissionsExt::from_mode(0o700))?;
    let made = rcgen::generate_simple_self_signed(vec![ip.clone()])
        .context("making a certificate for the remote page")?;
    write_private(&key, made.signing_key.serialize_pem().as_bytes())?;
    write_private(&cert, made.cert.pem().as_bytes())?;
    write_private(&names, ip.as_bytes())?;
    Ok((cert, key))
}

/// The remote page bound and ready: where it is, and what serves it.
pub(crate) struct Prepared {
    pub(crate) remote: Remote,
    listener: tokio::net::TcpListener,
    acceptor: TlsAcceptor,
}

/// Makes (or reads) the certificate and binds `addr`.
pub(crate) async fn prepare(
    state_dir: &Path,
    addr: SocketAddr,
    files: &CertFiles,
) -> anyhow::Result<Prepared> {
    let (config, fingerprint) = tls(state_dir, addr, files)?;
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .with_context(|| format!("binding the remote page to {addr}"))?;
    Ok(Prepared {
        remote: Remote {
            host: addr.to_string(),
            fingerprint,
        },
        listener,
        acceptor: TlsAcceptor::from(config),
    })
}

/// Serves `app` on the prepared address over TLS until the runtime stops.
pub(crate) fn serve(prepared: Prepared, app: Router) {
    let Prepared {
        remote,
        listener,
        acceptor,
    } = prepared;
    let https = remote.url();
    tokio::spawn(async move {
        loop {
            let (tcp, peer) = match listener.accept().await {
                Ok(accepted) => accepted,
                Err(error) => {
                    tracing::warn!(%error, "remote page: accept failed");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            };
            let (acceptor, app, https) = (acceptor.clone(), app.clone(), https.clone());
            tokio::spawn(async move {
                if let Err(error) = connection(tcp, peer, acceptor, app, &https).await {
                    tracing::debug!(%error, %peer, "remote page: connection ended");
                }
            });
        }
    });
}

async fn connection(
    mut tcp: tokio::net::TcpStream,
    peer: SocketAddr,
    acceptor: TlsAcceptor,
    app: Router,
    https: &str,
) -> anyhow::Result<()> {
    // A TLS connection opens with a handshake record (0x16); anything else is plain HTTP (or
    // noise), answered with where the page is and closed.
    let mut first = [0u8; 1];
    let seen = tokio::time::timeout(HANDSHAKE_BOUND, tcp.peek(&mut first)).await??;
    if seen == 0 {
        return Ok(());
    }
    if first[0] != 0x16 {
        let body = format!(
            "This planhost page is served over HTTPS only. Open {https} (with the token `planhost web` prints).\n"
        );
        let response = format!(
            "HTTP/1.1 400 Bad Request\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        );
        tcp.write_all(response.as_bytes()).await?;
        tcp.shutdown().await?;
        // Read (and drop) what the client is still sending, briefly and bounded: closing with
        // its request unread would reset the connection, and the client could lose the answer.
        let mut sink = [0u8; 4096];
        let _ = tokio::time::timeout(Duration::from_secs(1), async {
            let mut read = 0usize;
            while let Ok(n) = tcp.read(&mut sink).await {
                read += n;
                if n == 0 || read > 64 * 1024 {
                    break;
                }
            }
        })
        .await;
        return Ok(());
    }
    let server = tcp.local_addr()?;
    let tls = tokio::time::timeout(HANDSHAKE_BOUND, acceptor.accept(tcp)).await??;
    let service = hyper_util::service::TowerToHyperService::new(
        app.layer(axum::Extension(ConnectInfo(peer)))
            .layer(axum::Extension(super::guard::ServerEnd(server))),
    );
    hyper::server::conn::http1::Builder::new()
        .serve_connection(hyper_util::rt::TokioIo::new(tls), service)
        .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_remote_address_is_one_named_non_loopback_address_with_its_port() {
        assert!(parse_remote_addr("192.168.1.5:7767").is_ok());
        assert!(parse_remote_addr("[fd00::5]:7767").is_ok());
        assert!(parse_remote_addr("127.0.0.1:7767").is_err());
        assert!(parse_remote_addr("[::1]:7767").is_err());
        assert!(parse_remote_addr("0.0.0.0:7767").is_err());
        assert!(parse_remote_addr("[::]:7767").is_err());
        assert!(parse_remote_addr("192.168.1.5:0").is_err());
        assert!(parse_remote_addr("phone.local:7767").is_err());
    }

    #[test]
    fn a_made_certificate_is_kept_for_its_address_and_remade_for_another() {
        let dir = tempfile::tempdir().unwrap();
        let a: SocketAddr = "192.0.2.10:7767".parse().unwrap();
        let (_, first) = tls(dir.path(), a, &CertFiles::default()).unwrap();
        let (_, again) = tls(dir.path(), a, &CertFiles::default()).unwrap();
        assert_eq!(first, again, "the same address keeps its certificate");
        let b: SocketAddr = "192.0.2.11:7767".parse().unwrap();
        let (_, other) = tls(dir.path(), b, &CertFiles::default()).unwrap();
        assert_ne!(first, other);
        let key = dir.path().join("web-remote/key.pem");
        let mode =
            std::os::unix::fs::PermissionsExt::mode(&fs_err::metadata(&key).unwrap().permissions());
        assert_eq!(mode & 0o777, 0o600);
    }
}

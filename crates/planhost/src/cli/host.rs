//! The running host itself: `planhost web` prints (and opens) its page with the token, and
//! `planhost stop` ends it cleanly.

use std::process::ExitCode;

use planhost_core::ErrorCode;

use planhost_service::host::Paths;

use super::{EXIT_UNREACHABLE, Failure};

/// `planhost web`: the running host's page address with its token (and a browser, unless
/// `--no-open`). `--rotate` makes a new token first; pages opened with the old one are refused.
pub(crate) fn web(
    paths: &Paths,
    no_open: bool,
    rotate: bool,
    qr: bool,
) -> anyhow::Result<ExitCode> {
    // A host that serves no page (one an agent's hook started) starts it now, in place: the
    // plans waiting stay as they are.
    let serving = crate::web::WebFile::read(&paths.state_dir)
        .ok()
        .and_then(|f| f.socket_addr())
        .is_some_and(|a| {
            std::net::TcpStream::connect_timeout(&a, std::time::Duration::from_secs(2)).is_ok()
        });
    if !serving {
        let mut c = super::connect(paths, super::APPROVER)?;
        let started = super::call::<planhost_protocol::methods::AppStartWeb>(
            &mut c,
            planhost_protocol::Empty {},
        )?;
        if started.started {
            eprintln!("planhost: the running host now serves its web page");
        }
    }
    let mut file = crate::web::WebFile::read(&paths.state_dir).map_err(|_| {
        anyhow::anyhow!(
            "the host for {} serves no web page: start it with `planhost serve --web`",
            paths.state_dir.display()
        )
    })?;
    if rotate {
        // Through the host, as a person: the agent's own commands cannot rotate it (they are
        // refused the approver role), and writing web.json changes nothing.
        let mut c = super::connect(paths, super::APPROVER)?;
        super::call::<planhost_protocol::methods::AppRotateWebToken>(
            &mut c,
            planhost_protocol::Empty {},
        )?;
        file = crate::web::WebFile::read(&paths.state_dir)?;
    }
    let answers = file
        .socket_addr()
        .and_then(|a| {
            std::net::TcpStream::connect_timeout(&a, std::time::Duration::from_secs(2)).ok()
        })
        .is_some();
    if !answers {
        anyhow::bail!(
            "no web page answers at {} (the host for {} is not running with --web): start it with `planhost serve --web`",
            file.url,
            paths.state_dir.display()
        );
    }
    let url = file.open_url();
    println!("{url}");
    if let Some(fallback) = file.fallback_url() {
        eprintln!("(if your browser cannot open planhost.localhost: {fallback})");
    }
    let remote = file
        .remote_url
        .as_ref()
        .map(|r| format!("{r}?token={}", file.token));
    if let Some(remote) = &remote {
        println!("{remote}");
        eprintln!(
            "(for another device, over TLS; its certificate's SHA-256 is {})",
            file.remote_fingerprint.as_deref().unwrap_or("?")
        );
    }
    if qr {
        let (shown, note) = match &remote {
            Some(r) => (r.as_str(), "the remote page, for a phone's camera"),
            None => (
                url.as_str(),
                "this address works on this machine only; `planhost serve --web-remote ADDR` serves the page to a phone",
            ),
        };
        let code = qrcode::QrCode::new(shown.as_bytes())
            .map_err(|e| anyhow::anyhow!("cannot make a QR code of the address: {e}"))?;
        let text = code
            .render::<qrcode::render::unicode::Dense1x2>()
            .quiet_zone(true)
            .build();
        println!("{text}");
        eprintln!("({note}; it carries the token: show it to no one else)");
    }
    if !no_open {
        // Best effort: a machine without a desktop still has the printed address.
        let _ = std::process::Command::new("xdg-open")
            .arg(&url)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn();
    }
    Ok(ExitCode::SUCCESS)
}

/// `planhost stop`: ends the host that holds this state directory, cleanly. It interrupts its
/// pending approvals and queued or running executions exactly as a restart would (its clients
/// are told), kills its command trees, and releases the lock.
pub(crate) fn stop(paths: &Paths) -> anyhow::Result<ExitCode> {
    let lock = paths.lock();
    let Some(holder) = planhost_service::host::StateLock::holder(&lock) else {
        return Err(Failure {
            code: ErrorCode::HostUnreachable,
            message: format!(
                "no planhost is running for {} (nothing holds {}); nothing to stop",
                paths.state_dir.display(),
                lock.display()
            ),
            status: EXIT_UNREACHABLE,
        }
        .into());
    };
    let pid = holder
        .parse::<i32>()
        .ok()
        .and_then(rustix::process::Pid::from_raw)
        .ok_or_else(|| {
            anyhow::anyhow!(
                "{} is held, but names no pid ({holder:?}); run `planhost doctor`",
                lock.display()
            )
        })?;
    rustix::process::kill_process(pid, rustix::process::Signal::TERM).map_err(|e| {
        anyhow::anyhow!("could not signal the host (pid {holder}): {e}; is it another user's?")
    })?;
    // The host lets its connections kill their command trees (10 s at most), then exits.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while planhost_service::host::StateLock::holder(&lock).is_some() {
        if std::time::Instant::now() > deadline {
            anyhow::bail!(
                "the host (pid {holder}) was asked to stop but still holds {} after 20 s; \
                 `kill -9 {holder}` ends it (the next start interrupts its work)",
                lock.display()
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    println!(
        "planhost: stopped the host (pid {holder}) serving {}; its pending approvals and executions \
         were interrupted, as on a restart",
        paths.state_dir.display()
    );
    Ok(ExitCode::SUCCESS)
}

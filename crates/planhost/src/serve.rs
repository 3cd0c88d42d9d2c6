//! `planhost serve`: the library's host ([`planhost_service::host`]) on a unix socket (many
//! clients) or stdio (one embedding app), with the web page beside it when asked.

use std::sync::Arc;

use planhost_service::host::{Host, HostConfig, HostError, LockError, Paths, WatchdogCommand};

/// Which transport to serve.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Transport {
    /// The process's stdin and stdout, one client.
    Stdio,
    /// A unix socket, many clients.
    Socket,
}

/// Exit status for "another host holds the state directory".
pub(crate) const EXIT_LOCKED: u8 = 3;

/// Runs the host until its input ends (stdio) or it is told to stop (socket).
pub(crate) fn run(
    paths: &Paths,
    transport: Transport,
    web: Option<std::net::SocketAddr>,
    remote: Option<(std::net::SocketAddr, crate::web::CertFiles)>,
) -> anyhow::Result<std::process::ExitCode> {
    let mut config = HostConfig::new(&paths.state_dir);
    config.clock = test_clock();
    config.watchdog = watchdog();
    let host = match Host::start(config) {
        Ok(host) => host,
        Err(HostError::Lock(error @ LockError::Held { .. })) => {
            eprintln!("planhost: {error}");
            return Ok(std::process::ExitCode::from(EXIT_LOCKED));
        }
        Err(error) => return Err(error.into()),
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .thread_name("planhost-rt")
        .build()?;
    // The page starts once the host's own transport listens: a client that sees `web.json` can
    // connect to the socket too.
    // The notify command's watcher (a face like the page): never fatal to serving.
    runtime.block_on(async {
        if let Err(error) = crate::notify::start(host.service().clone(), &paths.state_dir) {
            tracing::warn!(%error, "notifications are off");
        }
    });
    let result = match transport {
        Transport::Stdio => runtime.block_on(async {
            if let Some(addr) = web {
                crate::web::start(host.service().clone(), paths, addr, remote.clone()).await?;
            }
            host.serve_stdio().await.map_err(anyhow::Error::from)
        }),
        Transport::Socket => runtime.block_on(async {
            let socket = host.bind_socket(&paths.socket)?;
            host.service().set_socket_surface(&paths.socket);
            if let Some(addr) = web
                && let Err(error) =
                    crate::web::start(host.service().clone(), paths, addr, remote.clone()).await
            {
                let _ = fs_err::remove_file(&paths.socket);
                return Err(error);
            }
            if web.is_none() {
                register_page_starter(host.service(), paths);
            }
            eprintln!("planhost: serving on {}", paths.socket.display());
            socket.serve(stop_requested()).await;
            eprintln!("planhost: stopped");
            Ok(())
        }),
    };
    // Socket: connections get time to kill their tool trees. Stdio: the one connection has
    // already ended (and cancelled its tools); only a writer blocked on an unread stdout remains.
    runtime.shutdown_timeout(match transport {
        Transport::Socket => std::time::Duration::from_secs(10),
        Transport::Stdio => std::time::Duration::from_secs(1),
    });
    host.shutdown();
    result.map(|()| std::process::ExitCode::SUCCESS)
}

/// A host started without `--web` (as an agent's hook starts one) serves its page once a person
/// asks (`planhost web`, through `app.startWeb`): in this process, beside the socket, so the
/// plans waiting are neither interrupted nor moved.
fn register_page_starter(service: &planhost_service::Service, paths: &Paths) {
    let started: Arc<tokio::sync::Mutex<Option<String>>> = Arc::default();
    let (svc, paths) = (service.clone(), paths.clone());
    let starter: planhost_service::PageStarter = Box::new(move || {
        let (started, svc, paths) = (Arc::clone(&started), svc.clone(), paths.clone());
        Box::pin(async move {
            let mut url = started.lock().await;
            if let Some(url) = url.as_ref() {
                return Ok((url.clone(), false));
            }
            let addr = crate::web::DEFAULT_ADDR
                .parse()
                .map_err(|e| format!("the page's default address: {e}"))?;
            let served = crate::web::start(svc, &paths, addr, None)
                .await
                .map_err(|e| format!("{e:#}"))?;
            *url = Some(served.clone());
            Ok((served, true))
        })
    });
    if let Err(error) = service.set_page_starter(starter) {
        tracing::warn!(error, "the page cannot be started on request");
    }
}

/// Ctrl-C or SIGTERM (`planhost stop`).
async fn stop_requested() {
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(error) => {
                tracing::warn!(%error, "cannot watch SIGTERM; only Ctrl-C stops the host");
                std::future::pending::<()>().await;
            }
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        () = terminate => {}
    }
}

/// `planhost __watch <pid> <start>`: this binary is its own watchdog.
fn watchdog() -> Option<WatchdogCommand> {
    if !cfg!(target_os = "linux") {
        return None;
    }
    match WatchdogCommand::current_exe(&["__watch"]) {
        Ok(command) => Some(command),
        Err(error) => {
            tracing::warn!(%error, "cannot find this executable to start the watchdog");
            None
        }
    }
}

/// Debug builds only: `PLANHOST_TEST_CLOCK_FILE` names a file holding a millisecond offset added
/// to the wall clock, so end-to-end tests can let an approval's 30 minutes pass. A release build
/// never reads it: production always runs on the real clock and the fixed 30 minutes.
fn test_clock() -> Option<Arc<dyn planhost_core::Clock>> {
    if !cfg!(debug_assertions) {
        return None;
    }
    let file = std::env::var_os("PLANHOST_TEST_CLOCK_FILE")?;
    tracing::warn!(file = ?file, "debug build: the host clock follows a test offset file");
    Some(Arc::new(OffsetClock {
        file: std::path::PathBuf::from(file),
    }))
}

/// The wall clock plus the offset a test wrote.
#[derive(Debug)]
struct OffsetClock {
    file: std::path::PathBuf,
}

impl planhost_core::Clock for OffsetClock {
    fn now(&self) -> planhost_core::Timestamp {
        let offset = fs_err::read_to_string(&self.file)
            .ok()
            .and_then(|t| t.trim().parse::<i64>().ok())
            .unwrap_or(0);
        planhost_service::SystemClock.now().plus_ms(offset)
    }
}

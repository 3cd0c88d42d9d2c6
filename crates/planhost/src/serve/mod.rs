//! `planhost serve`: the host over stdio (one embedding app) or a unix socket (many clients).

mod conn;
mod lines;
pub(crate) mod lock;

use std::io::{BufReader, Write};
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::Path;
use std::sync::Arc;

use anyhow::Context as _;
use planhost_protocol::MAX_LINE_BYTES;
use planhost_service::{Peer, Service, ServiceConfig};
use tokio::io::AsyncWriteExt;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::paths::Paths;
use lines::Line;
use lock::StateLock;

/// Lines queued for one client's writer; the service's own per-connection queue is what
/// decides a client stopped reading.
const CLIENT_QUEUE: usize = planhost_service::CONNECTION_QUEUE;

/// Which transport to serve.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Transport {
    /// The process's stdin and stdout, one client.
    Stdio,
    /// A unix socket, many clients.
    Socket,
}

/// How long `serve --stdio` waits, after its input ended, for the client to read what is left.
const STDOUT_DRAIN: std::time::Duration = std::time::Duration::from_secs(5);

/// Exit status for "another host holds the state directory".
pub(crate) const EXIT_LOCKED: u8 = 3;

/// Runs the host until its input ends (stdio) or it is told to stop (socket).
pub(crate) fn run(
    paths: &Paths,
    transport: Transport,
    web: Option<std::net::SocketAddr>,
) -> anyhow::Result<std::process::ExitCode> {
    create_private_dir(&paths.state_dir)
        .with_context(|| format!("creating state directory {}", paths.state_dir.display()))?;
    if let Some(problem) = state_dir_problem(&paths.state_dir) {
        anyhow::bail!("refusing to serve: {problem}");
    }
    let _lock = match StateLock::acquire(&paths.lock()) {
        Ok(lock) => lock,
        Err(error @ lock::LockError::Held { .. }) => {
            eprintln!("planhost: {error}");
            return Ok(std::process::ExitCode::from(EXIT_LOCKED));
        }
        Err(error) => return Err(error.into()),
    };
    // Interrupted means stopped (DESIGN decision 10): before the fence marks anything
    // interrupted, end what a previous host left running, then keep a watchdog that does the
    // same the moment this host is gone, however it dies.
    let _watchdog = end_leftovers_and_watch();
    let mut config = ServiceConfig::new(&paths.state_dir);
    if let Some(clock) = test_clock() {
        config.clock = clock;
    }
    let started = Service::start(config).context("opening the host database")?;
    tracing::info!(
        db = %paths.db().display(),
        migration = ?started.migration,
        interrupted_approvals = started.fence.interrupted_approvals.len(),
        interrupted_executions = started.fence.interrupted_executions.len(),
        aborted_turns = started.fence.aborted_turns.len(),
        reconciled_publications = started.reconciled.len(),
        swept_temp_files = started.swept.len(),
        "startup fence done"
    );
    let svc = started.service;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .thread_name("planhost-rt")
        .build()?;
    // The page starts once the host's own transport listens: a client that sees `web.json` can
    // connect to the socket too.
    let web = web.map(|addr| (addr, paths.state_dir.as_path()));
    let result = match transport {
        Transport::Stdio => runtime.block_on(async {
            if let Some((addr, dir)) = web {
                crate::web::start(svc.clone(), dir, addr).await?;
            }
            serve_stdio(svc.clone()).await
        }),
        Transport::Socket => runtime.block_on(serve_socket(svc.clone(), &paths.socket, web)),
    };
    // Socket: connections get time to kill their tool trees. Stdio: the one connection has
    // already ended (and cancelled its tools); only a writer blocked on an unread stdout remains.
    runtime.shutdown_timeout(match transport {
        Transport::Socket => std::time::Duration::from_secs(10),
        Transport::Stdio => std::time::Duration::from_secs(1),
    });
    svc.shutdown();
    result.map(|()| std::process::ExitCode::SUCCESS)
}

async fn serve_stdio(svc: Service) -> anyhow::Result<()> {
    let (line_tx, line_rx) = mpsc::channel(64);
    let (out_tx, out_rx) = mpsc::channel::<Arc<str>>(CLIENT_QUEUE);
    // Dedicated OS threads, not the runtime's stdin/stdout adapters: a blocked terminal or pipe
    // never stalls a runtime worker, and framing stays in one place.
    std::thread::Builder::new()
        .name("planhost-stdin".into())
        .spawn(move || {
            let mut stdin = BufReader::with_capacity(64 * 1024, std::io::stdin().lock());
            loop {
                let line = lines::read_line_blocking(&mut stdin, MAX_LINE_BYTES);
                let stop = matches!(line, Ok(Line::Eof) | Err(_));
                if line_tx.blocking_send(line).is_err() || stop {
                    return;
                }
            }
        })?;
    let writer = std::thread::Builder::new()
        .name("planhost-stdout".into())
        .spawn(move || stdout_loop(out_rx))?;
    let kill = CancellationToken::new();
    // The app on the other end of the pipes started this host: as before, its roles stand.
    conn::serve(svc, Peer::Embedded, line_rx, out_tx, kill.clone()).await;
    // stdin ended: whatever the client was running dies with its connection.
    kill.cancel();
    // Every sender is gone once in-flight requests finish; the writer then drains and stops. An
    // app that stopped reading stdout would keep the writer blocked in write(2) forever, so the
    // wait is bounded: the process then exits and takes the blocked thread with it.
    let drained = tokio::task::spawn_blocking(move || writer.join());
    if tokio::time::timeout(STDOUT_DRAIN, drained).await.is_err() {
        tracing::warn!("stdout is not being read; exiting without draining it");
    }
    Ok(())
}

fn stdout_loop(mut rx: mpsc::Receiver<Arc<str>>) {
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::with_capacity(64 * 1024, stdout.lock());
    while let Some(line) = rx.blocking_recv() {
        let ok = write_retrying(&mut out, line.as_bytes())
            .and_then(|()| write_retrying(&mut out, b"\n"));
        let ok = ok.and_then(|()| {
            if rx.is_empty() {
                flush_retrying(&mut out)
            } else {
                Ok(())
            }
        });
        if let Err(error) = ok {
            tracing::error!(%error, "stdout failed; stopping");
            return;
        }
    }
    let _ = flush_retrying(&mut out);
}

/// `write_all` that also survives `EAGAIN` on a non-blocking stdout.
fn write_retrying(out: &mut impl Write, mut bytes: &[u8]) -> std::io::Result<()> {
    while !bytes.is_empty() {
        match out.write(bytes) {
            Ok(0) => return Err(std::io::ErrorKind::WriteZero.into()),
            Ok(n) => bytes = &bytes[n..],
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

fn flush_retrying(out: &mut impl Write) -> std::io::Result<()> {
    loop {
        match out.flush() {
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::Interrupted | std::io::ErrorKind::WouldBlock
                ) =>
            {
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            other => return other,
        }
    }
}

async fn serve_socket(
    svc: Service,
    path: &Path,
    web: Option<(std::net::SocketAddr, &Path)>,
) -> anyhow::Result<()> {
    clear_stale_socket(path)?;
    let listener = tokio::net::UnixListener::bind(path)
        .with_context(|| format!("binding {}", path.display()))?;
    fs_err::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
    if let Some((addr, state_dir)) = web
        && let Err(error) = crate::web::start(svc.clone(), state_dir, addr).await
    {
        let _ = fs_err::remove_file(path);
        return Err(error);
    }
    tracing::info!(socket = %path.display(), "serving");
    eprintln!("planhost: serving on {}", path.display());
    let mut terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(error) => {
                    tracing::warn!(%error, "accept failed");
                    continue;
                }
            },
            _ = tokio::signal::ctrl_c() => break,
            _ = terminate.recv() => break,
        };
        let svc = svc.clone();
        tokio::spawn(async move { serve_stream(svc, stream).await });
    }
    // Asked to stop: nothing accepts on the socket any more; interrupt what is in flight as
    // the next start would, while the clients can still hear it.
    let _ = fs_err::remove_file(path);
    match svc.stop("planhost was asked to stop").await {
        Ok(report) => tracing::info!(
            interrupted_approvals = report.interrupted_approvals.len(),
            interrupted_executions = report.interrupted_executions.len(),
            aborted_turns = report.aborted_turns.len(),
            "stopping"
        ),
        Err(error) => {
            tracing::warn!(%error, "stopping: the fence did not run; the next start runs it")
        }
    }
    // Give the notifications a moment to reach the clients before their connections close.
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    eprintln!("planhost: stopped");
    Ok(())
}

async fn serve_stream(svc: Service, stream: tokio::net::UnixStream) {
    // The process that connected, as the kernel recorded it at connect(2) (`SO_PEERCRED`): the
    // service refuses it the approver role when it runs under an agent.
    let peer = Peer::Process(stream.peer_cred().ok().and_then(|cred| cred.pid()));
    let (read, mut write) = stream.into_split();
    let (line_tx, line_rx) = mpsc::channel(64);
    let (out_tx, mut out_rx) = mpsc::channel::<Arc<str>>(CLIENT_QUEUE);
    let kill = CancellationToken::new();
    let reader_kill = kill.clone();
    tokio::spawn(async move {
        let mut read = tokio::io::BufReader::with_capacity(64 * 1024, read);
        loop {
            let line = tokio::select! {
                () = reader_kill.cancelled() => return,
                line = lines::read_line(&mut read, MAX_LINE_BYTES) => line,
            };
            let stop = matches!(line, Ok(Line::Eof) | Err(_));
            if line_tx.send(line).await.is_err() || stop {
                return;
            }
        }
    });
    let writer_kill = kill.clone();
    let writer = tokio::spawn(async move {
        let mut out = tokio::io::BufWriter::with_capacity(64 * 1024, &mut write);
        // The kill races every write, not only the wait for the next line: a client that stopped
        // reading leaves a write pending forever, and a dropped client's socket must close now.
        let written = writer_kill
            .run_until_cancelled(async {
                while let Some(line) = out_rx.recv().await {
                    out.write_all(line.as_bytes()).await?;
                    out.write_all(b"\n").await?;
                    if out_rx.is_empty() {
                        out.flush().await?;
                    }
                }
                out.flush().await
            })
            .await;
        if let Some(Err(_)) = written {
            writer_kill.cancel();
        }
    });
    conn::serve(svc, peer, line_rx, out_tx, kill.clone()).await;
    kill.cancel();
    let _ = writer.await;
}

/// The state lock is ours, but the socket path may be another state directory's: only a stale
/// socket (nothing accepts on it) is removed. A socket some host still answers on, or anything
/// that is not a socket at all, is refused and left as it is.
fn clear_stale_socket(path: &Path) -> anyhow::Result<()> {
    use std::os::unix::fs::FileTypeExt;
    let meta = match std::fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e).with_context(|| format!("inspecting {}", path.display())),
    };
    if !meta.file_type().is_socket() {
        anyhow::bail!(
            "{} exists and is not a socket; refusing to replace it (choose another --socket)",
            path.display()
        );
    }
    match std::os::unix::net::UnixStream::connect(path) {
        Ok(stream) => anyhow::bail!(
            "another planhost{} is serving on {} (a live socket is never replaced); \
             its state directory is another one's: stop it or choose another --socket",
            socket_peer(&stream),
            path.display()
        ),
        Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
            fs_err::remove_file(path).context("removing a stale socket")?;
            Ok(())
        }
        Err(e) => Err(e).with_context(|| format!("probing {}", path.display())),
    }
}

/// Who holds the other end of a connected socket, for the refusal: ` (pid N)` where the kernel
/// says (`SO_PEERCRED`), nothing elsewhere.
fn socket_peer(stream: &std::os::unix::net::UnixStream) -> String {
    #[cfg(target_os = "linux")]
    if let Ok(cred) = rustix::net::sockopt::socket_peercred(stream) {
        return format!(" (pid {})", cred.pid.as_raw_nonzero());
    }
    let _ = stream;
    String::new()
}

/// Why a state directory cannot be trusted with plans and decisions: someone else owns it, or
/// others may write to it (and so swap the database or the lock). `None` when it is sound.
pub(crate) fn state_dir_problem(dir: &Path) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(dir).ok()?;
    let me = rustix::process::geteuid().as_raw();
    if meta.uid() != me {
        return Some(format!(
            "the state directory {} belongs to uid {}, not to this user (uid {me})",
            dir.display(),
            meta.uid()
        ));
    }
    if meta.mode() & 0o022 != 0 {
        return Some(format!(
            "the state directory {} is writable by others (mode {:o}); run `chmod go-w {}`",
            dir.display(),
            meta.mode() & 0o777,
            dir.display()
        ));
    }
    None
}

/// Creates a directory (and its missing parents) readable by this user alone.
#[allow(
    clippy::disallowed_methods,
    reason = "fs-err has no DirBuilder; the caller's error names the path"
)]
fn create_private_dir(path: &Path) -> std::io::Result<()> {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(path)
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
        planhost_store::SystemClock.now().plus_ms(offset)
    }
}

/// Ends what dead hosts left running, then starts this host's watchdog: `None` (logged) when it
/// cannot be started; the host still serves, and the next host's start ends its leftovers.
#[cfg(target_os = "linux")]
fn end_leftovers_and_watch() -> Option<planhost_exec::Watchdog> {
    let left = planhost_exec::kill_leftovers(planhost_exec::Whose::DeadHosts);
    if left.cgroups + left.processes > 0 {
        tracing::warn!(
            cgroups = left.cgroups,
            processes = left.processes,
            "ended what a previous host left running"
        );
    }
    // This process starts children only through planhost-exec: a child of it that no run
    // marks and no run cgroup holds is a run's escapee.
    planhost_exec::claim_unmarked_orphans();
    start_watchdog()
}

/// Elsewhere runs are process groups killed by the tree code; no cross-host sweep yet.
#[cfg(not(target_os = "linux"))]
fn end_leftovers_and_watch() {}

#[cfg(target_os = "linux")]
fn start_watchdog() -> Option<planhost_exec::Watchdog> {
    let me = planhost_exec::HostIdentity::current()?;
    let exe = std::env::current_exe().ok()?;
    let args = vec![
        "__watch".to_owned(),
        me.pid.to_string(),
        me.start.to_string(),
    ];
    match planhost_exec::Watchdog::spawn(&exe, &args) {
        Ok(w) => Some(w),
        Err(error) => {
            tracing::warn!(%error, "cannot start the watchdog");
            None
        }
    }
}

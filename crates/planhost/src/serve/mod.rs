//! `planhost serve`: the host over stdio (one embedding app) or a unix socket (many clients).

mod broadcast;
mod conn;
mod convert;
mod execute;
mod lines;
pub mod lock;
mod plans;
mod policy_cache;
mod service;
mod shells;
mod tools;

use std::io::{BufReader, Write};
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use anyhow::Context as _;
use planhost_host::{Host, SystemClock, spawn_host};
use planhost_protocol::{MAX_LINE_BYTES, Notification, notifications};
use planhost_store::AuditWriter;
use tokio::io::AsyncWriteExt;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::paths::Paths;
use broadcast::{Broadcaster, CLIENT_QUEUE};
use lines::Line;
use lock::StateLock;
use service::Service;

/// Which transport to serve.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// The process's stdin and stdout, one client.
    Stdio,
    /// A unix socket, many clients.
    Socket,
}

/// How long `serve --stdio` waits, after its input ended, for the client to read what is left.
const STDOUT_DRAIN: std::time::Duration = std::time::Duration::from_secs(5);

/// Exit status for "another host holds the state directory".
pub const EXIT_LOCKED: u8 = 3;

/// Runs the host until its input ends (stdio) or it is told to stop (socket).
pub fn run(paths: &Paths, transport: Transport) -> anyhow::Result<std::process::ExitCode> {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&paths.state_dir)
        .with_context(|| format!("creating state directory {}", paths.state_dir.display()))?;
    let _lock = match StateLock::acquire(&paths.lock()) {
        Ok(lock) => lock,
        Err(error @ lock::LockError::Held { .. }) => {
            eprintln!("planhost: {error}");
            return Ok(std::process::ExitCode::from(EXIT_LOCKED));
        }
        Err(error) => return Err(error.into()),
    };
    let startup =
        Host::open(&paths.db(), Arc::new(SystemClock)).context("opening the host database")?;
    tracing::info!(
        db = %paths.db().display(),
        migration = ?startup.migration,
        interrupted_approvals = startup.fence.interrupted_approvals.len(),
        interrupted_executions = startup.fence.interrupted_executions.len(),
        aborted_turns = startup.fence.aborted_turns.len(),
        "startup fence done"
    );
    let (audit, audit_writer) =
        AuditWriter::spawn(&paths.db()).context("starting the audit writer")?;
    let clients = Arc::new(Broadcaster::default());
    let fanout = Arc::clone(&clients);
    let policy = Arc::new(policy_cache::PolicyCache::default());
    let invalidate = Arc::clone(&policy);
    let tools = Arc::new(tools::ToolRuntime::default());
    let tool_events = Arc::clone(&tools);
    let mut host = startup.host;
    // Events of the fence itself were committed before anyone could connect: drop them.
    host.store().take_events();
    let (handle, host_thread) = spawn_host(host, move |events| {
        for event in events {
            // Before the change's caller gets its reply: caches and grants follow the state.
            invalidate.invalidate(&event.session_id);
            match &event.body {
                planhost_core::EventBody::TurnEnded { turn_id, .. } => {
                    tool_events.turn_closed(&event.session_id, turn_id);
                }
                planhost_core::EventBody::SessionUpdated { .. } => {
                    tool_events.session_changed(&event.session_id)
                }
                planhost_core::EventBody::TurnStarted { .. }
                | planhost_core::EventBody::ApprovalChanged { .. }
                | planhost_core::EventBody::ExecutionChanged { .. }
                | planhost_core::EventBody::PermissionAsked { .. }
                | planhost_core::EventBody::PermissionResolved { .. }
                | planhost_core::EventBody::CheckpointSaved { .. }
                | planhost_core::EventBody::PublicationChanged { .. }
                | planhost_core::EventBody::HandoffChanged { .. } => {}
            }
            let Ok(params) = serde_json::to_value(&event) else {
                continue;
            };
            let Ok(line) =
                serde_json::to_string(&Notification::new(notifications::STATE_CHANGED, params))
            else {
                continue;
            };
            fanout.send_all(&Arc::from(line));
        }
    })?;
    let svc = Arc::new(Service {
        host: handle,
        state_dir: paths.state_dir.clone(),
        started: Instant::now(),
        clients,
        policy,
        tools,
        audit,
        shells: shells::Shells {
            platform: planhost_exec::Platform::current(),
        },
    });
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .thread_name("planhost-rt")
        .build()?;
    let result = match transport {
        Transport::Stdio => runtime.block_on(serve_stdio(Arc::clone(&svc))),
        Transport::Socket => runtime.block_on(serve_socket(Arc::clone(&svc), &paths.socket)),
    };
    // Socket: connections get time to kill their tool trees. Stdio: the one connection has
    // already ended (and cancelled its tools); only a writer blocked on an unread stdout remains.
    runtime.shutdown_timeout(match transport {
        Transport::Socket => std::time::Duration::from_secs(10),
        Transport::Stdio => std::time::Duration::from_secs(1),
    });
    drop(svc);
    host_thread.join();
    audit_writer.join();
    result.map(|()| std::process::ExitCode::SUCCESS)
}

async fn serve_stdio(svc: Arc<Service>) -> anyhow::Result<()> {
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
    conn::serve(svc, conn::next_id(), line_rx, out_tx, kill.clone()).await;
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

async fn serve_socket(svc: Arc<Service>, path: &Path) -> anyhow::Result<()> {
    if path.exists() {
        // We hold the state lock, so any socket here is a dead host's.
        std::fs::remove_file(path)
            .with_context(|| format!("removing stale socket {}", path.display()))?;
    }
    let listener = tokio::net::UnixListener::bind(path)
        .with_context(|| format!("binding {}", path.display()))?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
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
        let svc = Arc::clone(&svc);
        tokio::spawn(async move { serve_stream(svc, stream).await });
    }
    let _ = std::fs::remove_file(path);
    Ok(())
}

async fn serve_stream(svc: Arc<Service>, stream: tokio::net::UnixStream) {
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
    conn::serve(svc, conn::next_id(), line_rx, out_tx, kill.clone()).await;
    kill.cancel();
    let _ = writer.await;
}

//! The unix socket: accepting within the host's limits, and serving one byte stream.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::StreamExt as _;
use planhost_core::ErrorCode;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt as _};
use tokio::sync::mpsc;
use tokio_util::codec::FramedRead;
use tokio_util::sync::CancellationToken;

use super::conn::{Ended, Handshake};
use super::framing::{Budget, LineCodec, MAX_LINE_BYTES};
use super::slots::{Owner, Slot, Slots};
use super::{HostError, Limits, conn};
use crate::{Peer, Service};

/// Lines queued for one client's writer; the service's own per-connection queue is what
/// decides a client stopped reading.
const CLIENT_QUEUE: usize = crate::CONNECTION_QUEUE;

/// How long a refused client's last line may take to be written before its socket closes.
const TELL_BEFORE_CLOSING: Duration = Duration::from_secs(1);

/// How often a failing `accept` is logged at most (with the count since the last line).
const ACCEPT_LOG_EVERY: Duration = Duration::from_secs(10);
/// The longest pause between two `accept` attempts while the host has no descriptor left.
const ACCEPT_MAX_PAUSE: Duration = Duration::from_millis(500);

/// What every connection of a host shares: its slots, and the input budget.
#[derive(Debug, Clone)]
pub(crate) struct Live {
    limits: Limits,
    slots: Arc<Slots>,
    budget: Arc<Budget>,
}

impl Live {
    pub(crate) fn new(limits: Limits) -> Self {
        Self {
            limits,
            slots: Slots::new(limits),
            budget: Budget::new(limits.max_buffered_bytes),
        }
    }

    /// The limits applied.
    pub(crate) fn limits(&self) -> Limits {
        self.limits
    }

    /// A slot for one more connection from `peer`, or the line that tells it why not.
    pub(crate) fn admit(&self, peer: Peer) -> Result<Slot, Arc<str>> {
        self.slots.admit(Owner::of(peer)).map_err(|refusal| {
            conn::error_line(None, refusal.code(), refusal.message(&self.limits))
        })
    }

    /// How long a connection may take to complete `initialize`.
    pub(crate) fn handshake(&self) -> Handshake {
        Handshake::Within(self.limits.initialize_timeout)
    }

    pub(crate) fn codec(&self) -> LineCodec {
        LineCodec::new(MAX_LINE_BYTES, Arc::clone(&self.budget))
    }
}

/// A bound socket, ready to serve.
#[derive(Debug)]
pub struct SocketServer {
    service: Service,
    live: Live,
    listener: tokio::net::UnixListener,
    path: PathBuf,
    /// A descriptor held in reserve: when the process has none left, it is closed for the
    /// moment it takes to accept one waiting client and tell it why it is refused.
    spare: Option<std::fs::File>,
}

impl SocketServer {
    pub(crate) fn bind(service: Service, live: Live, path: &Path) -> Result<Self, HostError> {
        use std::os::unix::fs::PermissionsExt as _;
        clear_stale_socket(path)?;
        // bind(2) creates the socket with the umask's mode (0777 under umask 000): it is bound
        // under a name no one can guess, made this user's alone, and only then given its name,
        // so no one else can connect to it at any moment.
        let hidden = hidden_name(path);
        let listener = tokio::net::UnixListener::bind(&hidden)
            .map_err(|e| HostError::Socket(format!("binding {}: {e}", path.display())))?;
        let named = fs_err::set_permissions(&hidden, std::fs::Permissions::from_mode(0o600))
            .and_then(|()| fs_err::rename(&hidden, path));
        if let Err(error) = named {
            let _ = fs_err::remove_file(&hidden);
            return Err(error.into());
        }
        Ok(Self {
            service,
            live,
            listener,
            path: path.to_owned(),
            spare: open_spare(),
        })
    }

    /// The socket's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Accepts clients until `stop` completes, then stops as `planhost stop` promises: nothing
    /// accepts any more, what is pending or running is interrupted as the next start's fence
    /// would, and every client is told before its connection closes.
    pub async fn serve(mut self, stop: impl std::future::Future<Output = ()>) {
        tracing::info!(socket = %self.path.display(), "serving");
        let mut stop = std::pin::pin!(stop);
        let mut failures = AcceptFailures::default();
        loop {
            let accepted = tokio::select! {
                accepted = self.listener.accept() => accepted,
                () = &mut stop => break,
            };
            let stream = match accepted {
                Ok((stream, _)) => {
                    failures.recovered();
                    stream
                }
                Err(error) => {
                    let pause = failures.failed(&error);
                    if out_of_descriptors(&error) {
                        self.refuse_one_waiting().await;
                    }
                    tokio::select! {
                        () = tokio::time::sleep(pause) => {}
                        () = &mut stop => break,
                    }
                    continue;
                }
            };
            // The process that connected, as the kernel recorded it at connect(2)
            // (`SO_PEERCRED`): its connections count against its own bound, and the service
            // refuses it the approver role when it runs under an agent.
            let peer = Peer::Process(stream.peer_cred().ok().and_then(|cred| cred.pid()));
            let slot = match self.live.admit(peer) {
                Ok(slot) => slot,
                Err(refusal) => {
                    tokio::spawn(refuse(stream, refusal));
                    continue;
                }
            };
            let (service, live) = (self.service.clone(), self.live.clone());
            tokio::spawn(async move {
                let (read, write) = stream.into_split();
                serve_admitted(service, &live, read, write, peer).await;
                drop(slot);
            });
        }
        // Asked to stop: nothing accepts on the socket any more; interrupt what is in flight as
        // the next start would, while the clients can still hear it.
        drop(self.listener);
        let _ = fs_err::remove_file(&self.path);
        match self.service.stop("planhost was asked to stop").await {
            Ok(report) => tracing::info!(
                interrupted_approvals = report.interrupted_approvals.len(),
                interrupted_executions = report.interrupted_executions.len(),
                aborted_turns = report.aborted_turns.len(),
                "stopping"
            ),
            Err(error) => {
                tracing::warn!(%error, "stopping: the fence did not run; the next start runs it");
            }
        }
        // Give the notifications a moment to reach the clients before their connections close.
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    /// At the descriptor limit: frees the spare descriptor, accepts one waiting client, tells
    /// it it is refused and why, and takes the spare back. Without a spare, waiting clients stay
    /// queued until a descriptor frees.
    async fn refuse_one_waiting(&mut self) {
        if self.spare.take().is_none() {
            return;
        }
        let accepted = tokio::time::timeout(Duration::from_millis(1), self.listener.accept()).await;
        if let Ok(Ok((stream, _))) = accepted {
            // Written inline: the descriptor must be closed before the spare is opened again.
            let line = conn::error_line(
                None,
                ErrorCode::TooManyConnections,
                "planhost has no file descriptor left for another connection; this one is \
                 closed: try again shortly",
            );
            let _ =
                tokio::time::timeout(Duration::from_millis(50), write_refusal(stream, line)).await;
        }
        self.spare = open_spare();
    }
}

/// Counts `accept` failures: pauses that grow while they go on, and a log line at most every
/// [`ACCEPT_LOG_EVERY`] with how many there were.
#[derive(Debug, Default)]
struct AcceptFailures {
    pause: Option<Duration>,
    unlogged: u64,
    logged_at: Option<Instant>,
}

impl AcceptFailures {
    fn failed(&mut self, error: &std::io::Error) -> Duration {
        self.unlogged += 1;
        let now = Instant::now();
        if self
            .logged_at
            .is_none_or(|at| now.duration_since(at) >= ACCEPT_LOG_EVERY)
        {
            tracing::warn!(
                %error,
                failures = self.unlogged,
                "accept failed; the host keeps serving its connections and tries again"
            );
            self.unlogged = 0;
            self.logged_at = Some(now);
        }
        let pause = if out_of_descriptors(error) {
            self.pause
                .map_or(Duration::from_millis(10), |p| (p * 2).min(ACCEPT_MAX_PAUSE))
        } else {
            Duration::from_millis(1)
        };
        self.pause = Some(pause);
        pause
    }

    fn recovered(&mut self) {
        if self.pause.take().is_some() && self.unlogged > 0 {
            tracing::info!(failures = self.unlogged, "accept works again");
            self.unlogged = 0;
        }
    }
}

fn out_of_descriptors(error: &std::io::Error) -> bool {
    matches!(
        error.raw_os_error(),
        Some(libc::EMFILE | libc::ENFILE | libc::ENOBUFS | libc::ENOMEM)
    )
}

/// A descriptor held in reserve (see [`SocketServer::refuse_one_waiting`]).
fn open_spare() -> Option<std::fs::File> {
    fs_err::File::open("/dev/null")
        .ok()
        .map(|f| f.into_parts().0)
}

async fn refuse(stream: tokio::net::UnixStream, line: Arc<str>) {
    let _ = tokio::time::timeout(TELL_BEFORE_CLOSING, write_refusal(stream, line)).await;
}

/// Tells a client it is refused (the error `line`) and closes its side.
async fn write_refusal<S: AsyncWrite + Unpin>(mut stream: S, line: Arc<str>) {
    let _ = stream.write_all(line.as_bytes()).await;
    let _ = stream.write_all(b"\n").await;
    let _ = stream.shutdown().await;
}

/// Serves a stream within the host's limits: charged to `peer` (a process's bound applies to a
/// [`Peer::Process`]), refused with the reason's code past them, and closed when it does not
/// complete `initialize` in time.
pub(crate) async fn serve_stream<S>(service: Service, live: &Live, stream: S, peer: Peer)
where
    S: AsyncRead + AsyncWrite + Send + 'static,
{
    let slot = match live.admit(peer) {
        Ok(slot) => slot,
        Err(refusal) => {
            let (_, write) = tokio::io::split(stream);
            write_refusal(write, refusal).await;
            return;
        }
    };
    let (read, write) = tokio::io::split(stream);
    serve_admitted(service, live, read, write, peer).await;
    drop(slot);
}

async fn serve_admitted<R, W>(service: Service, live: &Live, read: R, mut write: W, peer: Peer)
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    let (line_tx, line_rx) = mpsc::channel(64);
    let (out_tx, mut out_rx) = mpsc::channel::<Arc<str>>(CLIENT_QUEUE);
    let kill = CancellationToken::new();
    let reader_kill = kill.clone();
    let mut frames = FramedRead::with_capacity(read, live.codec(), 64 * 1024);
    tokio::spawn(async move {
        loop {
            let frame = tokio::select! {
                () = reader_kill.cancelled() => return,
                frame = frames.next() => frame,
            };
            let Some(frame) = frame else { return };
            let stop = frame.is_err();
            if line_tx.send(frame).await.is_err() || stop {
                return;
            }
        }
    });
    let writer_kill = kill.clone();
    let mut writer = tokio::spawn(async move {
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
    let ended = conn::serve_lines(
        service,
        peer,
        live.handshake(),
        line_rx,
        out_tx,
        kill.clone(),
    )
    .await;
    // A client told why it is closed gets that line: the writer sends it and stops, its queue
    // empty, before the socket closes (bounded: a client that does not read is closed anyway).
    let written = match ended {
        Ended::Told => tokio::time::timeout(TELL_BEFORE_CLOSING, &mut writer)
            .await
            .is_ok(),
        Ended::Closed => false,
    };
    kill.cancel();
    if !written {
        let _ = writer.await;
    }
}

/// A sibling of `path` no one can guess: `.<name>.<pid>.<random>`.
fn hidden_name(path: &Path) -> PathBuf {
    let mut random = [0u8; 8];
    // Without randomness the pid alone still names it; the mode is set before the rename anyway.
    let _ = rustix::rand::getrandom(&mut random, rustix::rand::GetRandomFlags::empty());
    let suffix: String = random.iter().map(|b| format!("{b:02x}")).collect();
    let name = path
        .file_name()
        .map_or_else(|| "planhost.sock".into(), |n| n.to_string_lossy());
    path.with_file_name(format!(".{name}.{}.{suffix}", std::process::id()))
}

/// The state lock is ours, but the socket path may be another state directory's: only a stale
/// socket (nothing accepts on it) is removed. A socket some host still answers on, or anything
/// that is not a socket at all, is refused and left as it is.
fn clear_stale_socket(path: &Path) -> Result<(), HostError> {
    use std::os::unix::fs::FileTypeExt as _;
    let meta = match fs_err::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(HostError::Socket(e.to_string())),
    };
    if !meta.file_type().is_socket() {
        return Err(HostError::Socket(format!(
            "{} exists and is not a socket; refusing to replace it (choose another --socket)",
            path.display()
        )));
    }
    match std::os::unix::net::UnixStream::connect(path) {
        Ok(stream) => Err(HostError::Socket(format!(
            "another planhost{} is serving on {} (a live socket is never replaced); \
             its state directory is another one's: stop it or choose another --socket",
            socket_peer(&stream),
            path.display()
        ))),
        Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => fs_err::remove_file(path)
            .map_err(|e| HostError::Socket(format!("removing a stale socket: {e}"))),
        Err(e) => Err(HostError::Socket(format!(
            "probing {}: {e}",
            path.display()
        ))),
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

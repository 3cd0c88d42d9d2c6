//! The whole host as a library: what `planhost serve` runs, and what an embedding app gets from
//! [`Host::start`]. Before anything is served it checks that the state directory can be trusted,
//! takes the one-host-per-directory lock, ends what a dead host left running and starts the
//! watchdog that does the same the moment this host is gone, then opens the database (migration
//! and the startup fence). The transports (the unix socket, stdio, any byte stream) share one
//! framing and one connection loop, with the host's limits on connections and buffered input.
//!
//! ```no_run
//! # async fn run() -> Result<(), planhost_service::host::HostError> {
//! use planhost_service::host::{Host, HostConfig, Paths};
//! let paths = Paths::resolve(None, None)?;
//! let host = Host::start(HostConfig::new(&paths.state_dir))?;
//! let socket = host.bind_socket(&paths.socket)?;
//! socket.serve(async { let _ = tokio::signal::ctrl_c().await; }).await;
//! host.shutdown();
//! # Ok(()) }
//! ```

mod conn;
pub mod diagnostics;
mod framing;
mod listen;
mod lock;
mod slots;
mod stdio;
mod sweep;
mod trust;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use planhost_core::{Clock, Platform};

pub use conn::{Decoded, decode_by_value, decode_line, decode_request};
pub use framing::MAX_LINE_BYTES;
pub use listen::SocketServer;
pub use lock::{LockError, StateLock};
pub use planhost_client::paths::{DB_FILE, LOCK_FILE, NoStateDir, Paths, SOCKET_FILE};
pub use sweep::{WatchdogCommand, run_watchdog};
pub use trust::state_dir_problem;

use crate::{FenceReport, MigrationReport, Service, ServiceConfig, ServiceError};

/// The host's limits on what clients may hold of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Connections served at once (every transport together); one more is refused with
    /// `TOO_MANY_CONNECTIONS` and closed.
    pub max_connections: usize,
    /// Of `max_connections`, the last ones, kept for a process's first connection: once the
    /// others are taken, a process that already holds one (or a peer that is no process the
    /// host can name) is refused with `TOO_MANY_CONNECTIONS`, while a new client still gets in.
    /// At most half of `max_connections` is kept this way.
    pub reserved_connections: usize,
    /// Connections one process may hold at once (by the pid `SO_PEERCRED` names and its start
    /// time); one more is refused with `TOO_MANY_PROCESS_CONNECTIONS` and closed. Streams an
    /// embedding app serves as [`Peer::Embedded`](crate::Peer::Embedded) are no process's.
    pub max_connections_per_process: usize,
    /// How long a socket or stream connection may take to complete `initialize`, from when it
    /// is served; then it is told `INITIALIZE_TIMEOUT` and closed, and its slot freed. An
    /// initialized connection may stay idle for as long as it likes. `serve --stdio` has no
    /// deadline: its one client started the host.
    pub initialize_timeout: Duration,
    /// Bytes of unfinished lines buffered for all connections together; a line that would
    /// take more is discarded with `INPUT_BUFFER_FULL` and its connection goes on.
    pub max_buffered_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_connections: 512,
            // Room for new clients while the rest is flooded: pi sessions and Claude Code's
            // hooks (one process, one connection each; a few hooks at once for parallel tool
            // calls) need far fewer than 64 at a time.
            reserved_connections: 64,
            // A client holds one connection (pi's extension per session, a hook, the CLI) or a
            // few; 128 leaves room for an app that drives many sessions from one process (the
            // load test holds 100) while one process still cannot take more than a quarter of
            // the host.
            max_connections_per_process: 128,
            // Every client sends `initialize` first, at once: pi's extension in the same turn of
            // its event loop as the connect, a hook and the CLI right after `connect(2)`, all
            // answered in milliseconds (the handshake reads no database). The clock starts once
            // the host serves the connection, so a wait in the listen queue is not charged to
            // the client. 5 s is three orders of magnitude above what a client on a loaded
            // machine takes, and keeps a connection that never sends a byte from holding its
            // slot longer than that.
            initialize_timeout: Duration::from_secs(5),
            max_buffered_bytes: 64 * 1024 * 1024,
        }
    }
}

/// How to start a host.
#[derive(Debug, Clone)]
pub struct HostConfig {
    /// The state directory: the database, the lock, `web.json`.
    pub state_dir: PathBuf,
    /// The clock: the wall clock unless a test sets one.
    pub clock: Option<Arc<dyn Clock>>,
    /// Whose shell catalog applies.
    pub platform: Platform,
    /// The program this host starts as its watchdog (Linux): `None` runs without one (logged),
    /// and then only the next host's start ends what this one leaves running.
    pub watchdog: Option<WatchdogCommand>,
    /// Limits on connections and buffered input.
    pub limits: Limits,
}

impl HostConfig {
    /// The production configuration for a state directory, without a watchdog (an embedding
    /// app names the program that runs [`run_watchdog`], see [`WatchdogCommand`]).
    pub fn new(state_dir: impl Into<PathBuf>) -> Self {
        Self {
            state_dir: state_dir.into(),
            clock: None,
            platform: Platform::current(),
            watchdog: None,
            limits: Limits::default(),
        }
    }
}

/// Why a host did not start, or stopped serving a transport.
#[derive(Debug, thiserror::Error)]
pub enum HostError {
    /// The state directory could not be created.
    #[error("creating state directory {path}: {source}")]
    StateDir {
        /// The directory.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The state directory belongs to someone else, or others may write to it.
    #[error("refusing to serve: {0}")]
    Untrusted(String),
    /// The lock is held by another host, or could not be taken.
    #[error(transparent)]
    Lock(#[from] LockError),
    /// The database could not be opened, migrated or fenced.
    #[error("opening the host database: {0}")]
    Service(#[from] ServiceError),
    /// The socket could not be bound or served.
    #[error("{0}")]
    Socket(String),
    /// The paths could not be resolved.
    #[error(transparent)]
    Paths(#[from] NoStateDir),
    /// An I/O failure of a transport.
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// What starting did before the host could serve.
#[derive(Debug)]
pub struct StartReport {
    /// Schema creation or migration.
    pub migration: MigrationReport,
    /// What the startup fence interrupted.
    pub fence: FenceReport,
    /// Publication approvals reconciled against the disk.
    pub reconciled: usize,
    /// Temp files a crash left in sessions' plan directories, removed.
    pub swept_temp_files: usize,
    /// Run cgroups and processes a dead host left, ended before the fence.
    pub leftovers: sweep::Swept,
    /// Whether a watchdog stands by for this host.
    pub watchdog: bool,
}

/// A running host: the service and everything that keeps it safe. Dropping it releases the lock
/// and the watchdog; [`Host::shutdown`] also stops the service's threads.
#[derive(Debug)]
pub struct Host {
    service: Service,
    report: StartReport,
    live: listen::Live,
    _watchdog: Option<sweep::Watchdog>,
    _lock: StateLock,
}

impl Host {
    /// Starts a host on a state directory: creates it (this user's alone), refuses one that
    /// others own or may write, takes the lock (`LockError::Held` when another host serves it),
    /// ends what a dead host left running and starts the watchdog, then opens the database and
    /// runs the startup fence. Nothing is served before all of it succeeded.
    pub fn start(config: HostConfig) -> Result<Self, HostError> {
        trust::create_private_dir(&config.state_dir).map_err(|source| HostError::StateDir {
            path: config.state_dir.clone(),
            source,
        })?;
        if let Some(problem) = state_dir_problem(&config.state_dir) {
            return Err(HostError::Untrusted(problem));
        }
        let lock = StateLock::acquire(&config.state_dir.join(LOCK_FILE))?;
        // Interrupted means stopped (DESIGN decision 10): before the fence marks anything
        // interrupted, end what a previous host left running, then keep a watchdog that does
        // the same the moment this host is gone, however it dies.
        let (leftovers, watchdog) = sweep::end_leftovers_and_watch(config.watchdog.as_ref());
        let mut service_config = ServiceConfig::new(&config.state_dir);
        service_config.platform = config.platform;
        if let Some(clock) = config.clock {
            service_config.clock = clock;
        }
        let started = Service::start(service_config)?;
        let report = StartReport {
            migration: started.migration,
            fence: started.fence,
            reconciled: started.reconciled.len(),
            swept_temp_files: started.swept.len(),
            leftovers,
            watchdog: watchdog.is_some(),
        };
        tracing::info!(
            db = %config.state_dir.join(DB_FILE).display(),
            migration = ?report.migration,
            interrupted_approvals = report.fence.interrupted_approvals.len(),
            interrupted_executions = report.fence.interrupted_executions.len(),
            aborted_turns = report.fence.aborted_turns.len(),
            reconciled_publications = report.reconciled,
            swept_temp_files = report.swept_temp_files,
            "startup fence done"
        );
        Ok(Self {
            service: started.service,
            report,
            live: listen::Live::new(config.limits),
            _watchdog: watchdog,
            _lock: lock,
        })
    }

    /// The service: for an embedding app's in-process connections and for other transports
    /// (the web page).
    pub fn service(&self) -> &Service {
        &self.service
    }

    /// What starting did.
    pub fn report(&self) -> &StartReport {
        &self.report
    }

    /// The limits this host applies.
    pub fn limits(&self) -> Limits {
        self.live.limits()
    }

    /// Binds the unix socket (mode 0600). A stale socket at the path is replaced; a live one,
    /// or anything that is not a socket, is refused and left as it is.
    pub fn bind_socket(&self, path: &Path) -> Result<SocketServer, HostError> {
        SocketServer::bind(self.service.clone(), self.live.clone(), path)
    }

    /// Serves one client on this process's stdin and stdout until stdin ends; the client holds
    /// every role it asks for (it started this host).
    pub async fn serve_stdio(&self) -> Result<(), HostError> {
        stdio::serve(self.service.clone(), &self.live).await
    }

    /// Serves one client on any byte stream (an embedding app's own transport), with the same
    /// framing, limits and connection loop as the socket. The connection is charged to `peer`:
    /// a [`Peer::Process`](crate::Peer::Process) counts against that process's bound and may
    /// take the reserve for its first connection; a [`Peer::Embedded`](crate::Peer::Embedded)
    /// counts only against the cap, outside the reserve.
    pub async fn serve_stream<S>(&self, stream: S, peer: crate::Peer)
    where
        S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Send + 'static,
    {
        listen::serve_stream(self.service.clone(), &self.live, stream, peer).await;
    }

    /// Stops the service's threads. The lock and the watchdog go when the host is dropped.
    pub fn shutdown(self) {
        self.service.shutdown();
    }
}

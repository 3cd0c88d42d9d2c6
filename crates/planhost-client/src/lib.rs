//! A small blocking client for planhost's JSON-RPC protocol: one request at a time, with the
//! notifications that arrive meanwhile handed to the caller in order. The CLI, the demo, the
//! end-to-end tests and the benchmarks all use it.
//!
//! ```no_run
//! use planhost_client::Client;
//! use planhost_core::Role;
//! use planhost_protocol::{methods, Empty, HealthStatus};
//!
//! let mut client = Client::connect_socket("/run/user/1000/planhost.sock".as_ref())?;
//! client.initialize("example", &[Role::Observer])?;
//! let health = client.call::<methods::AppHealth>(Empty {})?;
//! assert_eq!(health.status, HealthStatus::Ok);
//! # Ok::<(), planhost_client::ClientError>(())
//! ```

pub mod paths;

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

use planhost_core::{ErrorCode, Role};
use planhost_protocol::{
    InitializeParams, InitializeResult, Method, Notification, PROTOCOL_VERSION, RequestId,
    Response, RpcError, methods,
};
use serde::Serialize;
use serde::de::DeserializeOwned;

/// Why a call failed.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The host answered with an error; `stable_code()` says which.
    #[error("{}: {}", .0.stable_code().map_or("RPC_ERROR", ErrorCode::as_str), .0.message)]
    Rpc(RpcError),
    /// The connection failed or closed.
    #[error("connection to planhost failed: {0}")]
    Io(#[from] std::io::Error),
    /// A message could not be encoded or decoded.
    #[error("malformed message: {0}")]
    Json(#[from] serde_json::Error),
    /// The host closed the connection before answering.
    #[error("planhost closed the connection")]
    Closed,
}

impl ClientError {
    /// The stable code: the host's for RPC errors, `HOST_UNREACHABLE` otherwise.
    pub fn code(&self) -> ErrorCode {
        match self {
            ClientError::Rpc(e) => e.stable_code().unwrap_or(ErrorCode::InternalError),
            ClientError::Io(_) | ClientError::Closed => ErrorCode::HostUnreachable,
            ClientError::Json(_) => ErrorCode::MalformedMessage,
        }
    }
}

/// A message from the host.
#[derive(Debug, Clone)]
pub enum Incoming {
    /// The answer to a request.
    Response(Response),
    /// A notification.
    Notification(Notification),
}

/// A connection to planhost.
pub struct Client {
    writer: Box<dyn Write + Send>,
    incoming: Source,
    pending: VecDeque<Notification>,
    next_id: i64,
}

/// Where a client's messages come from.
enum Source {
    /// A thread reads every message as it arrives, so the host never waits on this client.
    Thread(mpsc::Receiver<Incoming>),
    /// The caller's thread reads, only while it waits: for a short-lived caller (a hook) that
    /// makes a few calls and exits, one thread and one hand-off per message fewer.
    Inline {
        reader: BufReader<UnixStream>,
        /// A line read in part when a wait timed out.
        partial: Vec<u8>,
    },
}

impl Source {
    /// The next message, waiting up to `timeout` (`None`: as long as it takes). `Err` when
    /// the connection has ended.
    fn next(&mut self, timeout: Option<Duration>) -> Result<Option<Incoming>, ClientError> {
        match self {
            Source::Thread(rx) => match timeout {
                None => rx.recv().map(Some).map_err(|_| ClientError::Closed),
                Some(t) => match rx.recv_timeout(t) {
                    Ok(m) => Ok(Some(m)),
                    Err(mpsc::RecvTimeoutError::Timeout) => Ok(None),
                    Err(mpsc::RecvTimeoutError::Disconnected) => Err(ClientError::Closed),
                },
            },
            Source::Inline { reader, partial } => {
                let deadline = timeout.map(|t| std::time::Instant::now() + t);
                loop {
                    let wait = match deadline {
                        None => None,
                        Some(d) => match d.checked_duration_since(std::time::Instant::now()) {
                            Some(left) if !left.is_zero() => Some(left),
                            _ => return Ok(None),
                        },
                    };
                    reader.get_ref().set_read_timeout(wait)?;
                    match reader.read_until(b'\n', partial) {
                        Ok(0) => return Err(ClientError::Closed),
                        Ok(_) if partial.ends_with(b"\n") => {
                            let line = std::mem::take(partial);
                            if let Some(message) = parse_incoming(&line) {
                                return Ok(Some(message));
                            }
                        }
                        // The end of input in the middle of a line.
                        Ok(_) => return Err(ClientError::Closed),
                        Err(e)
                            if matches!(
                                e.kind(),
                                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                            ) => {}
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                        Err(e) => return Err(e.into()),
                    }
                }
            }
        }
    }
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("next_id", &self.next_id)
            .finish_non_exhaustive()
    }
}

impl Client {
    /// Connects to a host's unix socket.
    pub fn connect_socket(path: &Path) -> Result<Self, ClientError> {
        let stream = UnixStream::connect(path)?;
        let reader = stream.try_clone()?;
        Ok(Self::from_streams(reader, stream))
    }

    /// Connects to a host's unix socket, reading in the caller's thread (no reader thread).
    /// For a short-lived caller that makes a few calls and exits, such as a hook: the host's
    /// notifications are read only while a call or [`Client::next_message`] waits.
    pub fn connect_socket_inline(path: &Path) -> Result<Self, ClientError> {
        let stream = UnixStream::connect(path)?;
        let reader = stream.try_clone()?;
        Ok(Self {
            writer: Box::new(stream),
            incoming: Source::Inline {
                reader: BufReader::new(reader),
                partial: Vec::new(),
            },
            pending: VecDeque::new(),
            next_id: 1,
        })
    }

    /// Wraps any pair of streams, e.g. a child's stdout and stdin.
    pub fn from_streams(
        reader: impl Read + Send + 'static,
        writer: impl Write + Send + 'static,
    ) -> Self {
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || read_loop(reader, &tx));
        Self {
            writer: Box::new(writer),
            incoming: Source::Thread(rx),
            pending: VecDeque::new(),
            next_id: 1,
        }
    }

    /// The handshake, declaring the connection's roles.
    pub fn initialize(
        &mut self,
        client_name: &str,
        roles: &[Role],
    ) -> Result<InitializeResult, ClientError> {
        self.call::<methods::Initialize>(InitializeParams {
            protocol_version: PROTOCOL_VERSION,
            client_name: client_name.into(),
            client_version: Some(env!("CARGO_PKG_VERSION").into()),
            roles: roles.to_vec(),
            tool_activity: false,
            events: planhost_protocol::EventScope::All,
            agent_process: None,
        })
    }

    /// The handshake with every field given (e.g. `agentProcess` for a hook).
    pub fn initialize_with(
        &mut self,
        hello: InitializeParams,
    ) -> Result<InitializeResult, ClientError> {
        self.call::<methods::Initialize>(hello)
    }

    /// One typed call: its params and result are the method's own. Notifications that arrive
    /// meanwhile are kept for [`Client::next_notification`].
    pub fn call<M: Method>(&mut self, params: M::Params) -> Result<M::Result, ClientError> {
        self.call_raw(M::NAME, &params)
    }

    /// A call by name with any params (tests use it for malformed requests).
    pub fn call_raw<P: Serialize, R: DeserializeOwned>(
        &mut self,
        method: &str,
        params: &P,
    ) -> Result<R, ClientError> {
        let mut kept = VecDeque::new();
        let result = self.call_with(method, params, |n| kept.push_back(n.clone()));
        self.pending.extend(kept);
        result
    }

    /// Like [`Client::call_raw`], handing each notification to `on_note` as it arrives.
    pub fn call_with<P: Serialize, R: DeserializeOwned>(
        &mut self,
        method: &str,
        params: &P,
        on_note: impl FnMut(&Notification),
    ) -> Result<R, ClientError> {
        let id = self.send_request(method, params)?;
        self.response_with(id, on_note)
    }

    /// Sends a request without waiting for its answer, and returns its id for
    /// [`Client::response`]. The host answers a connection's `initialize` before it reads
    /// the next line, so a caller can send its first call right behind the handshake and save
    /// a round trip.
    pub fn send_request<P: Serialize>(
        &mut self,
        method: &str,
        params: &P,
    ) -> Result<i64, ClientError> {
        let id = self.next_id;
        self.next_id += 1;
        let request = serde_json::json!({
            "jsonrpc": "2.0", "id": id, "method": method, "params": params,
        });
        self.send_raw(&serde_json::to_string(&request)?)?;
        Ok(id)
    }

    /// Waits for the answer to a request [`Client::send_request`] sent. Notifications that
    /// arrive meanwhile are kept for [`Client::next_notification`]; answers to other requests
    /// are dropped.
    pub fn response<R: DeserializeOwned>(&mut self, id: i64) -> Result<R, ClientError> {
        let mut kept = VecDeque::new();
        let result = self.response_with(id, |n| kept.push_back(n.clone()));
        self.pending.extend(kept);
        result
    }

    /// Waits for the answer to a request, handing every notification that arrives meanwhile to
    /// `on_note` (a routed command's output, as it streams).
    pub fn response_with<R: DeserializeOwned>(
        &mut self,
        id: i64,
        mut on_note: impl FnMut(&Notification),
    ) -> Result<R, ClientError> {
        loop {
            match self.incoming.next(None)?.ok_or(ClientError::Closed)? {
                Incoming::Notification(n) => on_note(&n),
                Incoming::Response(r) if r.id == Some(RequestId::Number(id)) => {
                    return match (r.result, r.error) {
                        (_, Some(error)) => Err(ClientError::Rpc(error)),
                        (Some(result), None) => Ok(serde_json::from_value(result)?),
                        (None, None) => Err(ClientError::Closed),
                    };
                }
                Incoming::Response(_) => {}
            }
        }
    }

    /// Sends one raw line (tests use it for malformed input).
    pub fn send_raw(&mut self, line: &str) -> Result<(), ClientError> {
        // One write: the host reads the line in one wake-up.
        let mut framed = Vec::with_capacity(line.len() + 1);
        framed.extend_from_slice(line.as_bytes());
        framed.push(b'\n');
        self.writer.write_all(&framed)?;
        self.writer.flush()?;
        Ok(())
    }

    /// The next message of any kind, waiting up to `timeout`.
    pub fn next_message(&mut self, timeout: Duration) -> Option<Incoming> {
        if let Some(n) = self.pending.pop_front() {
            return Some(Incoming::Notification(n));
        }
        self.incoming.next(Some(timeout)).ok().flatten()
    }

    /// The next notification, waiting up to `timeout`.
    pub fn next_notification(&mut self, timeout: Duration) -> Option<Notification> {
        if let Some(n) = self.pending.pop_front() {
            return Some(n);
        }
        let deadline = std::time::Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            match self.incoming.next(Some(left)).ok()?? {
                Incoming::Notification(n) => return Some(n),
                Incoming::Response(_) => {}
            }
        }
    }
}

fn read_loop(reader: impl Read, tx: &mpsc::Sender<Incoming>) {
    let mut reader = BufReader::new(reader);
    let mut line = String::new();
    loop {
        line.clear();
        match reader.read_line(&mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        if let Some(message) = parse_incoming(line.as_bytes())
            && tx.send(message).is_err()
        {
            return;
        }
    }
}

/// One line from the host as a message; `None` for a line that is neither.
fn parse_incoming(line: &[u8]) -> Option<Incoming> {
    let value = serde_json::from_slice::<serde_json::Value>(line).ok()?;
    if value.get("method").is_some() && value.get("id").is_none() {
        serde_json::from_value(value)
            .map(Incoming::Notification)
            .ok()
    } else {
        serde_json::from_value(value).map(Incoming::Response).ok()
    }
}

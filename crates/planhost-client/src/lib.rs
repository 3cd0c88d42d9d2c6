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
    incoming: mpsc::Receiver<Incoming>,
    pending: VecDeque<Notification>,
    next_id: i64,
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

    /// Wraps any pair of streams, e.g. a child's stdout and stdin.
    pub fn from_streams(
        reader: impl Read + Send + 'static,
        writer: impl Write + Send + 'static,
    ) -> Self {
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || read_loop(reader, &tx));
        Self {
            writer: Box::new(writer),
            incoming: rx,
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
        mut on_note: impl FnMut(&Notification),
    ) -> Result<R, ClientError> {
        let id = self.next_id;
        self.next_id += 1;
        let request = serde_json::json!({
            "jsonrpc": "2.0", "id": id, "method": method, "params": params,
        });
        self.send_raw(&serde_json::to_string(&request)?)?;
        loop {
            match self.incoming.recv().map_err(|_| ClientError::Closed)? {
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
        self.writer.write_all(line.as_bytes())?;
        self.writer.write_all(b"\n")?;
        self.writer.flush()?;
        Ok(())
    }

    /// The next message of any kind, waiting up to `timeout`.
    pub fn next_message(&mut self, timeout: Duration) -> Option<Incoming> {
        if let Some(n) = self.pending.pop_front() {
            return Some(Incoming::Notification(n));
        }
        self.incoming.recv_timeout(timeout).ok()
    }

    /// The next notification, waiting up to `timeout`.
    pub fn next_notification(&mut self, timeout: Duration) -> Option<Notification> {
        if let Some(n) = self.pending.pop_front() {
            return Some(n);
        }
        let deadline = std::time::Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            match self.incoming.recv_timeout(left).ok()? {
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
        let Ok(value) = serde_json::from_str::<serde_json::Value>(&line) else {
            continue;
        };
        let message = if value.get("method").is_some() && value.get("id").is_none() {
            serde_json::from_value(value).map(Incoming::Notification)
        } else {
            serde_json::from_value(value).map(Incoming::Response)
        };
        if let Ok(message) = message
            && tx.send(message).is_err()
        {
            return;
        }
    }
}

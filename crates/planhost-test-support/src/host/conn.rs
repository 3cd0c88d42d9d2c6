//! One protocol connection for tests: typed calls (`call::<Method>`), raw JSON calls for the
//! wire-shape tests, and every notification kept in arrival order.

use std::io::Write;
use std::net::Shutdown;
use std::os::unix::net::UnixStream;
use std::process::ChildStdin;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use planhost_client::{Client, ClientError, Incoming};
use planhost_core::{ErrorCode, Role};
use planhost_protocol::{
    InitializeResult, Method, Notification, PROTOCOL_VERSION, RequestId, Response, RpcError,
};
use serde_json::{Value, json};

use crate::BOUND;

/// The roles a test connection declares unless it asks for others: everything, so that one
/// connection can play the agent, the person and a watcher.
pub const ALL_ROLES: &[Role] = &[Role::Agent, Role::Approver, Role::Observer];

/// How to cut a connection from the client side.
enum Closer {
    Socket(UnixStream),
    Stdin(Arc<Mutex<Option<ChildStdin>>>),
}

/// A writer the test can close while the client still holds it (stdin of `serve --stdio`).
pub(crate) struct Closable(pub(crate) Arc<Mutex<Option<ChildStdin>>>);

impl Write for Closable {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self
            .0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_mut()
        {
            Some(stdin) => stdin.write(buf),
            None => Err(std::io::ErrorKind::BrokenPipe.into()),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self
            .0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_mut()
        {
            Some(stdin) => stdin.flush(),
            None => Err(std::io::ErrorKind::BrokenPipe.into()),
        }
    }
}

/// One protocol connection with every notification it received kept in order.
pub struct Conn {
    client: Client,
    closer: Closer,
    /// Every notification received, in arrival order.
    pub notes: Vec<Notification>,
    next_raw_id: i64,
}

impl std::fmt::Debug for Conn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Conn")
            .field("notes", &self.notes.len())
            .finish_non_exhaustive()
    }
}

impl Conn {
    pub(crate) fn socket(stream: UnixStream) -> Self {
        let reader = stream.try_clone().expect("clone stream");
        let closer = stream.try_clone().expect("clone stream");
        Self::new(Client::from_streams(reader, stream), Closer::Socket(closer))
    }

    pub(crate) fn stdio(client: Client, stdin: Arc<Mutex<Option<ChildStdin>>>) -> Self {
        Self::new(client, Closer::Stdin(stdin))
    }

    fn new(client: Client, closer: Closer) -> Self {
        Self {
            client,
            closer,
            notes: Vec::new(),
            next_raw_id: 1_000_000,
        }
    }

    /// Stops reading (and fails every later call) once the host has been silent for `limit`,
    /// so that a host that stops answering cannot hang the test. Socket connections only.
    pub fn read_timeout(&self, limit: Duration) {
        if let Closer::Socket(stream) = &self.closer {
            stream.set_read_timeout(Some(limit)).expect("read timeout");
        }
    }

    /// The handshake with every role ([`ALL_ROLES`]).
    pub fn initialize(&mut self, name: &str) -> InitializeResult {
        self.initialize_as(name, ALL_ROLES)
    }

    /// The handshake declaring exactly `roles`; the host must grant them as declared.
    pub fn initialize_as(&mut self, name: &str, roles: &[Role]) -> InitializeResult {
        let result = self
            .client
            .initialize(name, roles)
            .unwrap_or_else(|e| panic!("initialize {name} failed: {e}"));
        assert_eq!(result.protocol_version, PROTOCOL_VERSION);
        assert_eq!(
            result.roles, roles,
            "the roles granted are the roles declared"
        );
        result
    }

    /// Any outcome of one typed call; notifications meanwhile are kept in [`Conn::notes`].
    pub fn try_call<M: Method>(&mut self, params: M::Params) -> Result<M::Result, RpcError> {
        let notes = &mut self.notes;
        match self
            .client
            .call_with(M::NAME, &params, |n| notes.push(n.clone()))
        {
            Ok(value) => Ok(value),
            Err(ClientError::Rpc(error)) => Err(error),
            Err(other) => panic!("{}: transport failure: {other}", M::NAME),
        }
    }

    /// A typed call that must succeed.
    #[track_caller]
    pub fn call<M: Method>(&mut self, params: M::Params) -> M::Result {
        let shown = serde_json::to_string(&params).unwrap_or_default();
        self.try_call::<M>(params)
            .unwrap_or_else(|e| panic!("{} {shown} failed: {e:?}", M::NAME))
    }

    /// A typed call that must fail.
    #[track_caller]
    pub fn call_err<M: Method>(&mut self, params: M::Params) -> RpcError {
        let shown = serde_json::to_string(&params).unwrap_or_default();
        match self.try_call::<M>(params) {
            Ok(value) => panic!(
                "{} {shown} unexpectedly succeeded: {}",
                M::NAME,
                serde_json::to_string(&value).unwrap_or_default()
            ),
            Err(error) => error,
        }
    }

    /// Any outcome of one call by name with raw params: for the tests of the wire itself
    /// (malformed params, unknown methods, exact JSON shapes).
    pub fn try_call_json(&mut self, method: &str, params: Value) -> Result<Value, RpcError> {
        let notes = &mut self.notes;
        match self
            .client
            .call_with(method, &params, |n| notes.push(n.clone()))
        {
            Ok(value) => Ok(value),
            Err(ClientError::Rpc(error)) => Err(error),
            Err(other) => panic!("{method}: transport failure: {other}"),
        }
    }

    /// A raw call that must succeed.
    #[track_caller]
    pub fn call_json(&mut self, method: &str, params: Value) -> Value {
        self.try_call_json(method, params.clone())
            .unwrap_or_else(|e| panic!("{method} {params} failed: {e:?}"))
    }

    /// A raw call that must fail.
    #[track_caller]
    pub fn call_json_err(&mut self, method: &str, params: Value) -> RpcError {
        match self.try_call_json(method, params.clone()) {
            Ok(value) => panic!("{method} {params} unexpectedly succeeded: {value}"),
            Err(error) => error,
        }
    }

    /// Sends a raw line.
    pub fn send_raw(&mut self, line: &str) {
        self.client.send_raw(line).expect("send a raw line");
    }

    /// Sends a typed request without waiting for its answer; returns its id.
    pub fn send<M: Method>(&mut self, params: M::Params) -> RequestId {
        let params = serde_json::to_value(params).expect("params serialize");
        self.send_json(M::NAME, params)
    }

    /// Sends a raw request without waiting; returns its id.
    pub fn send_json(&mut self, method: &str, params: Value) -> RequestId {
        self.next_raw_id += 1;
        let id = self.next_raw_id;
        let line = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params });
        self.send_raw(&line.to_string());
        RequestId::Number(id)
    }

    fn pull(&mut self, deadline: Instant) -> Option<Incoming> {
        let left = deadline.saturating_duration_since(Instant::now());
        self.client.next_message(left)
    }

    /// The next response (any id), keeping notifications.
    pub fn next_response(&mut self) -> Response {
        let deadline = Instant::now() + BOUND;
        loop {
            match self.pull(deadline) {
                Some(Incoming::Response(r)) => return r,
                Some(Incoming::Notification(n)) => self.notes.push(n),
                None => panic!("no response within {BOUND:?}"),
            }
        }
    }

    /// The response to `id`, keeping notifications (other responses are a test bug).
    pub fn response_to(&mut self, id: &RequestId) -> Response {
        let response = self.next_response();
        assert_eq!(response.id.as_ref(), Some(id), "unexpected {response:?}");
        response
    }

    /// The typed result of the response to `id`, which must be a success.
    pub fn result_of<M: Method>(&mut self, id: &RequestId) -> M::Result {
        let response = self.response_to(id);
        let result = response
            .result
            .unwrap_or_else(|| panic!("{} failed: {:?}", M::NAME, response.error));
        serde_json::from_value(result).expect("the method's result")
    }

    /// Waits until `f` finds what it needs among the notifications received so far, pulling
    /// more for at most [`BOUND`]. A response meanwhile is a test bug.
    pub fn wait_until<T>(&mut self, what: &str, f: impl Fn(&[Notification]) -> Option<T>) -> T {
        let deadline = Instant::now() + BOUND;
        loop {
            if let Some(value) = f(&self.notes) {
                return value;
            }
            match self.pull(deadline) {
                Some(Incoming::Notification(n)) => self.notes.push(n),
                Some(Incoming::Response(r)) => {
                    panic!("unexpected response {r:?} while waiting for {what}")
                }
                None => panic!("no {what} within {BOUND:?}"),
            }
        }
    }

    /// The first notification (already received or arriving within [`BOUND`]) matching `pred`.
    pub fn wait_note(&mut self, what: &str, pred: impl Fn(&Notification) -> bool) -> Notification {
        self.wait_until(what, |notes| notes.iter().find(|n| pred(n)).cloned())
    }

    /// The `state.changed` events received so far.
    pub fn events(&self) -> Vec<Value> {
        self.notes
            .iter()
            .filter(|n| n.method == "state.changed")
            .map(|n| n.params.clone())
            .collect()
    }

    /// Waits for a `state.changed` event of `session` matching `pred`.
    pub fn wait_event(
        &mut self,
        what: &str,
        session: &str,
        pred: impl Fn(&Value) -> bool,
    ) -> Value {
        self.wait_note(what, |n| {
            n.method == "state.changed" && n.params["sessionId"] == session && pred(&n.params)
        })
        .params
    }

    /// Cuts the connection as a dying client would: the host reads end-of-file.
    pub fn close(&mut self) {
        match &self.closer {
            Closer::Socket(stream) => {
                let _ = stream.shutdown(Shutdown::Both);
            }
            Closer::Stdin(stdin) => {
                stdin.lock().unwrap_or_else(PoisonError::into_inner).take();
            }
        }
    }
}

impl Drop for Conn {
    fn drop(&mut self) {
        self.close();
    }
}

/// An RPC error's stable code as its wire string.
pub fn stable(error: &RpcError) -> Option<&'static str> {
    error.stable_code().map(ErrorCode::as_str)
}

/// Asserts an RPC error's numeric and stable code.
#[track_caller]
pub fn assert_code(error: &RpcError, numeric: i64, stable_code: &str) {
    assert_eq!(error.code, numeric, "numeric code of {error:?}");
    assert_eq!(stable(error), Some(stable_code), "stable code of {error:?}");
}

/// The `-32000` refusal with a stable code.
#[track_caller]
pub fn assert_refused(error: &RpcError, stable: &str) {
    assert_code(error, planhost_protocol::codes::REFUSED, stable);
}

/// The error of a response that must be one.
#[track_caller]
pub fn response_error(response: &Response) -> RpcError {
    assert!(response.result.is_none(), "expected an error: {response:?}");
    response.error.clone().expect("an error")
}

/// The text a tool call streamed on `stream` so far.
pub fn streamed(notes: &[Notification], call: &str, stream: &str) -> String {
    notes
        .iter()
        .filter(|n| {
            n.method == "tools.output"
                && n.params["toolCallId"] == call
                && n.params["stream"] == stream
        })
        .map(|n| n.params["text"].as_str().unwrap_or_default())
        .collect()
}

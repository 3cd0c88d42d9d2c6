//! Harness: temporary state directories, the real `planhost` binary as a child (killed and
//! reaped on drop), protocol connections that can be cut mid-call, and bounded polling.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::Shutdown;
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use planhost_client::{Client, ClientError, Incoming};
use planhost_core::{ErrorCode, Role};
use planhost_protocol::{InitializeResult, Notification, RequestId, Response, RpcError};
use serde_json::{Value, json};

/// The roles a test connection declares unless it asks for others: everything, so that one
/// connection can play the agent, the person and a watcher.
pub(crate) const ALL_ROLES: &[Role] = &[Role::Agent, Role::Approver, Role::Observer];

pub(crate) use planhost_test_support::{BOUND, poll_until};

/// A run-size knob from the environment (decimal, or hex with `0x`), else `default`.
pub(crate) fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| {
            let v = v.trim();
            v.strip_prefix("0x")
                .map_or_else(|| v.parse().ok(), |h| u64::from_str_radix(h, 16).ok())
        })
        .unwrap_or(default)
}

/// SQLite's verdict on the state directory's database, read-only beside a running host.
pub(crate) fn integrity_check(env: &Env) -> String {
    let db = rusqlite::Connection::open_with_flags(
        env.state_dir().join("planhost.sqlite"),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .expect("open the database read-only");
    db.query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .expect("integrity_check")
}

/// The binary under test.
pub(crate) fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_planhost")
}

/// A temporary home for one test: state directory, socket and workspace. The socket lives in a
/// short `/tmp/ph…` directory because unix socket paths are limited to 108 bytes.
#[derive(Debug)]
pub(crate) struct Env {
    root: tempfile::TempDir,
    workspace: tempfile::TempDir,
}

impl Env {
    pub(crate) fn new() -> Self {
        let root = tempfile::Builder::new()
            .prefix("ph")
            .tempdir_in("/tmp")
            .expect("temp root");
        let workspace = tempfile::Builder::new()
            .prefix("phws")
            .tempdir_in("/tmp")
            .expect("temp workspace");
        Self { root, workspace }
    }

    /// The temporary root (state directory, socket, test clock).
    pub(crate) fn root(&self) -> &std::path::Path {
        self.root.path()
    }

    pub(crate) fn state_dir(&self) -> PathBuf {
        self.root.path().join("state")
    }

    pub(crate) fn socket(&self) -> PathBuf {
        self.root.path().join("s.sock")
    }

    /// The workspace root as the host will store it (canonical).
    pub(crate) fn workspace(&self) -> PathBuf {
        self.workspace
            .path()
            .canonicalize()
            .expect("canonical workspace")
    }

    /// A `planhost` command with this env's `--state-dir` and `--socket`.
    pub(crate) fn command(&self) -> Command {
        let mut cmd = Command::new(bin());
        cmd.arg("--state-dir")
            .arg(self.state_dir())
            .arg("--socket")
            .arg(self.socket())
            .env_remove("PLANHOST_LOG")
            .env_remove("PLANHOST_STATE_DIR")
            .stdin(Stdio::null());
        cmd
    }
}

/// Lines a child wrote to a pipe, collected by a thread.
#[derive(Debug, Clone, Default)]
pub(crate) struct Captured(Arc<Mutex<String>>);

impl Captured {
    fn spawn(pipe: impl Read + Send + 'static) -> Self {
        let captured = Self::default();
        let sink = captured.clone();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(pipe);
            let mut line = String::new();
            while reader.read_line(&mut line).is_ok_and(|n| n > 0) {
                sink.0.lock().expect("capture lock").push_str(&line);
                line.clear();
            }
        });
        captured
    }

    pub(crate) fn text(&self) -> String {
        self.0.lock().expect("capture lock").clone()
    }
}

/// A child that is SIGKILLed and reaped when dropped, whatever the test did.
#[derive(Debug)]
pub(crate) struct Reaped(pub Child);

impl Reaped {
    pub(crate) fn pid(&self) -> u32 {
        self.0.id()
    }

    /// SIGKILL (a crash, as far as the host can tell) and reap.
    pub(crate) fn kill(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }

    /// The exit status, waiting at most [`BOUND`].
    pub(crate) fn wait_exit(&mut self, what: &str) -> ExitStatus {
        poll_until(what, BOUND, || self.0.try_wait().expect("try_wait"))
    }
}

impl Drop for Reaped {
    fn drop(&mut self) {
        self.kill();
    }
}

/// `planhost serve` on a unix socket.
#[derive(Debug)]
pub(crate) struct SocketHost {
    pub child: Reaped,
    pub stderr: Captured,
    socket: PathBuf,
}

impl SocketHost {
    /// Starts a host and waits until its socket accepts connections.
    pub(crate) fn start(env: &Env) -> Self {
        Self::start_from(env, env.command())
    }

    /// [`SocketHost::start`] with the command adjusted first (limits, environment).
    pub(crate) fn start_with(env: &Env, adjust: impl FnOnce(&mut Command)) -> Self {
        let mut command = env.command();
        adjust(&mut command);
        Self::start_from(env, command)
    }

    /// [`Self::start`] from a prepared `planhost` command (`env.command()` with more set on it).
    pub(crate) fn start_from(env: &Env, mut command: Command) -> Self {
        command
            .arg("serve")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = command.spawn().expect("spawn planhost serve");
        let stderr = Captured::spawn(child.stderr.take().expect("stderr"));
        let stdout = Captured::spawn(child.stdout.take().expect("stdout"));
        let mut host = Self {
            child: Reaped(child),
            stderr,
            socket: env.socket(),
        };
        poll_until("the host's socket to accept", BOUND, || {
            if let Some(status) = host.child.0.try_wait().expect("try_wait") {
                panic!(
                    "planhost serve exited early with {status}; stderr:\n{}\nstdout:\n{}",
                    host.stderr.text(),
                    stdout.text()
                );
            }
            UnixStream::connect(&host.socket).ok()
        });
        host
    }

    pub(crate) fn pid(&self) -> u32 {
        self.child.pid()
    }

    /// An initialized connection holding every role ([`ALL_ROLES`]).
    pub(crate) fn connect(&self, name: &str) -> Conn {
        self.connect_as(name, ALL_ROLES)
    }

    /// An initialized connection declaring exactly `roles`.
    pub(crate) fn connect_as(&self, name: &str, roles: &[Role]) -> Conn {
        let mut conn = self.connect_raw();
        conn.initialize_as(name, roles);
        conn
    }

    /// A connection that has not sent `initialize`.
    pub(crate) fn connect_raw(&self) -> Conn {
        let stream = UnixStream::connect(&self.socket).expect("connect to the host socket");
        Conn::socket(stream)
    }

    /// Crash: SIGKILL and reap.
    pub(crate) fn kill(&mut self) {
        self.child.kill();
    }
}

/// A reader that keeps a copy of every byte it passes on (stdout of `serve --stdio`).
struct Tee<R> {
    inner: R,
    copy: Arc<Mutex<Vec<u8>>>,
}

impl<R: Read> Read for Tee<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.copy
            .lock()
            .expect("tee lock")
            .extend_from_slice(&buf[..n]);
        Ok(n)
    }
}

/// A writer the test can close while the client still holds it (stdin of `serve --stdio`).
struct Closable(Arc<Mutex<Option<ChildStdin>>>);

impl Write for Closable {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self.0.lock().expect("stdin lock").as_mut() {
            Some(stdin) => stdin.write(buf),
            None => Err(std::io::ErrorKind::BrokenPipe.into()),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self.0.lock().expect("stdin lock").as_mut() {
            Some(stdin) => stdin.flush(),
            None => Err(std::io::ErrorKind::BrokenPipe.into()),
        }
    }
}

/// `planhost serve --stdio` with one client on its stdin/stdout.
pub(crate) struct StdioHost {
    pub child: Reaped,
    pub stderr: Captured,
    stdout: Arc<Mutex<Vec<u8>>>,
}

impl StdioHost {
    /// Starts the host and returns it with its (initialized) client.
    pub(crate) fn start(env: &Env) -> (Self, Conn) {
        let mut child = env
            .command()
            .args(["serve", "--stdio"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn planhost serve --stdio");
        let stderr = Captured::spawn(child.stderr.take().expect("stderr"));
        let copy = Arc::new(Mutex::new(Vec::new()));
        let reader = Tee {
            inner: child.stdout.take().expect("stdout"),
            copy: Arc::clone(&copy),
        };
        let stdin = Arc::new(Mutex::new(Some(child.stdin.take().expect("stdin"))));
        let client = Client::from_streams(reader, Closable(Arc::clone(&stdin)));
        // Reaped first: a failed handshake must not leave the host behind.
        let host = Self {
            child: Reaped(child),
            stderr,
            stdout: copy,
        };
        let mut conn = Conn::new(client, Closer::Stdin(stdin));
        conn.initialize("e2e-stdio");
        (host, conn)
    }

    /// Every line the host wrote to stdout so far.
    pub(crate) fn stdout_lines(&self) -> Vec<String> {
        let bytes = self.stdout.lock().expect("tee lock").clone();
        String::from_utf8(bytes)
            .expect("stdout is UTF-8")
            .lines()
            .map(str::to_owned)
            .collect()
    }

    /// Asserts every stdout line is a JSON-RPC 2.0 response or notification.
    pub(crate) fn assert_stdout_is_protocol(&self) {
        let lines = self.stdout_lines();
        assert!(!lines.is_empty(), "no protocol on stdout");
        for line in &lines {
            let value: Value = serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("non-JSON line on stdout ({e}): {line:?}"));
            assert_eq!(value["jsonrpc"], "2.0", "{line}");
            let is_response = value.get("id").is_some()
                && (value.get("result").is_some() != value.get("error").is_some());
            let is_notification = value.get("id").is_none()
                && value["method"].is_string()
                && value.get("params").is_some();
            assert!(
                is_response || is_notification,
                "stdout line is neither a response nor a notification: {line}"
            );
            if is_response {
                let _: Response = serde_json::from_value(value).expect("a Response");
            }
        }
    }
}

/// How to cut a connection from the client side.
enum Closer {
    Socket(UnixStream),
    Stdin(Arc<Mutex<Option<ChildStdin>>>),
}

/// One protocol connection with every notification it received kept in order.
pub(crate) struct Conn {
    client: Client,
    closer: Closer,
    /// Every notification received, in arrival order.
    pub notes: Vec<Notification>,
    next_raw_id: i64,
}

impl Conn {
    fn socket(stream: UnixStream) -> Self {
        let reader = stream.try_clone().expect("clone stream");
        let closer = stream.try_clone().expect("clone stream");
        Self::new(Client::from_streams(reader, stream), Closer::Socket(closer))
    }

    fn new(client: Client, closer: Closer) -> Self {
        Self {
            client,
            closer,
            notes: Vec::new(),
            next_raw_id: 1_000_000,
        }
    }

    /// The handshake with every role ([`ALL_ROLES`]).
    pub(crate) fn initialize(&mut self, name: &str) -> InitializeResult {
        self.initialize_as(name, ALL_ROLES)
    }

    /// The handshake declaring exactly `roles`; the host must grant them as declared.
    pub(crate) fn initialize_as(&mut self, name: &str, roles: &[Role]) -> InitializeResult {
        let result = self
            .client
            .initialize(name, roles)
            .unwrap_or_else(|e| panic!("initialize failed: {e}"));
        assert_eq!(result.protocol_version, planhost_protocol::PROTOCOL_VERSION);
        assert_eq!(
            result.roles, roles,
            "the roles granted are the roles declared"
        );
        result
    }

    /// Any outcome of one call.
    pub(crate) fn try_call(&mut self, method: &str, params: Value) -> Result<Value, RpcError> {
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

    /// A call that must succeed.
    pub(crate) fn call(&mut self, method: &str, params: Value) -> Value {
        self.try_call(method, params.clone())
            .unwrap_or_else(|e| panic!("{method} {params} failed: {e:?}"))
    }

    /// A call that must fail.
    pub(crate) fn call_err(&mut self, method: &str, params: Value) -> RpcError {
        match self.try_call(method, params.clone()) {
            Ok(value) => panic!("{method} {params} unexpectedly succeeded: {value}"),
            Err(error) => error,
        }
    }

    /// Sends a raw line.
    pub(crate) fn send_raw(&mut self, line: &str) {
        self.client.send_raw(line).expect("send a raw line");
    }

    /// Sends a request without waiting; returns its id.
    pub(crate) fn send(&mut self, method: &str, params: Value) -> RequestId {
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
    pub(crate) fn next_response(&mut self) -> Response {
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
    pub(crate) fn response_to(&mut self, id: &RequestId) -> Response {
        let response = self.next_response();
        assert_eq!(response.id.as_ref(), Some(id), "unexpected {response:?}");
        response
    }

    /// Waits until `f` finds what it needs among the notifications received so far, pulling
    /// more for at most [`BOUND`]. A response meanwhile is a test bug.
    pub(crate) fn wait_until<T>(
        &mut self,
        what: &str,
        f: impl Fn(&[Notification]) -> Option<T>,
    ) -> T {
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
    pub(crate) fn wait_note(
        &mut self,
        what: &str,
        pred: impl Fn(&Notification) -> bool,
    ) -> Notification {
        self.wait_until(what, |notes| notes.iter().find(|n| pred(n)).cloned())
    }

    /// The `state.changed` events received so far.
    pub(crate) fn events(&self) -> Vec<Value> {
        self.notes
            .iter()
            .filter(|n| n.method == "state.changed")
            .map(|n| n.params.clone())
            .collect()
    }

    /// Waits for a `state.changed` event of `session` matching `pred`.
    pub(crate) fn wait_event(
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
    pub(crate) fn close(&mut self) {
        match &self.closer {
            Closer::Socket(stream) => {
                let _ = stream.shutdown(Shutdown::Both);
            }
            Closer::Stdin(stdin) => {
                stdin.lock().expect("stdin lock").take();
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
pub(crate) fn stable(error: &RpcError) -> Option<&'static str> {
    error.stable_code().map(ErrorCode::as_str)
}

/// Asserts an RPC error's numeric and stable code.
#[track_caller]
pub(crate) fn assert_code(error: &RpcError, numeric: i64, stable_code: &str) {
    assert_eq!(error.code, numeric, "numeric code of {error:?}");
    assert_eq!(stable(error), Some(stable_code), "stable code of {error:?}");
}

/// The `-32000` refusal with a stable code.
#[track_caller]
pub(crate) fn assert_refused(error: &RpcError, stable: &str) {
    assert_code(error, planhost_protocol::codes::REFUSED, stable);
}

/// The error of a response that must be one.
#[track_caller]
pub(crate) fn response_error(response: &Response) -> RpcError {
    assert!(response.result.is_none(), "expected an error: {response:?}");
    response.error.clone().expect("an error")
}

/// The text a tool call streamed on `stream` so far.
pub(crate) fn streamed(notes: &[Notification], call: &str, stream: &str) -> String {
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

// ---- processes ----

/// Whether `pid` is a live process (a zombie is dead, merely not yet reaped).
pub(crate) fn alive(pid: i32) -> bool {
    match fs_err::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|state| state != "Z" && state != "X"),
        Err(_) => false,
    }
}

/// Waits until every pid is gone.
pub(crate) fn wait_gone(pids: &[i32]) {
    poll_until("the process tree to die", BOUND, || {
        pids.iter().all(|p| !alive(*p)).then_some(())
    });
}

/// Kills the given `sleep` processes on drop if they somehow survived, so that a failing test
/// leaves nothing behind.
#[derive(Debug, Default)]
pub(crate) struct Leftovers(pub Vec<i32>);

impl Drop for Leftovers {
    fn drop(&mut self) {
        for pid in &self.0 {
            let is_sleep = fs_err::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| c.starts_with(b"sleep") || c.starts_with(b"/usr/bin/sleep"));
            if alive(*pid)
                && is_sleep
                && let Some(p) = rustix::process::Pid::from_raw(*pid)
            {
                let _ = rustix::process::kill_process(p, rustix::process::Signal::KILL);
            }
        }
    }
}

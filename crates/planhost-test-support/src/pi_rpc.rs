//! A driver for the real `pi` in RPC mode (`pi --mode rpc`): JSON lines on stdin, events and
//! responses on stdout, extension dialogs as `extension_ui_request` lines answered with
//! `extension_ui_response` (pi's `docs/rpc.md`).
//!
//! Every wait is bounded ([`PiSession::set_bound`], default three times [`crate::BOUND`]) and
//! fails at once when pi exits; a failure names what was awaited and shows pi's exit status, the
//! last events and its stderr. pi runs in its own process group, SIGKILLed with everything it
//! started when the session is dropped.

use std::ffi::OsString;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::pi_install::PiInstall;

/// Where pi keeps its session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionStore {
    /// `--no-session`: ephemeral, nothing written.
    Ephemeral,
    /// `--session-dir <dir>`, so a later `pi -c` with the same dir resumes it.
    Dir(PathBuf),
}

/// How to start one pi.
#[derive(Debug, Clone)]
pub struct PiOptions {
    /// The install to run.
    pub install: PiInstall,
    /// pi's working directory (the workspace).
    pub cwd: PathBuf,
    /// `PI_CODING_AGENT_DIR` (holds `models.json`).
    pub agent_dir: PathBuf,
    /// `HOME` for pi, so the user's `~/.pi` never leaks in; `None` keeps the inherited one.
    pub home: Option<PathBuf>,
    /// The session store.
    pub session: SessionStore,
    /// `-c`: continue the most recent session of the store.
    pub continue_session: bool,
    /// `-e <path>` for each.
    pub extensions: Vec<PathBuf>,
    /// `--provider`.
    pub provider: String,
    /// `--model`.
    pub model: String,
    /// Extra environment (after `PI_OFFLINE=1`, `PATH`, `HOME`, `PI_CODING_AGENT_DIR`).
    pub env: Vec<(OsString, OsString)>,
    /// Extra arguments, last.
    pub args: Vec<OsString>,
}

impl PiOptions {
    /// pi on the scripted provider (`scripted`/`m1`, see [`crate::ModelServer::models_json`]),
    /// ephemeral, with no extension.
    pub fn new(install: &PiInstall, cwd: &Path, agent_dir: &Path) -> Self {
        Self {
            install: install.clone(),
            cwd: cwd.to_owned(),
            agent_dir: agent_dir.to_owned(),
            home: None,
            session: SessionStore::Ephemeral,
            continue_session: false,
            extensions: Vec::new(),
            provider: "scripted".into(),
            model: "m1".into(),
            env: Vec::new(),
            args: Vec::new(),
        }
    }

    /// Adds `-e <path>`.
    pub fn extension(mut self, path: impl Into<PathBuf>) -> Self {
        self.extensions.push(path.into());
        self
    }

    /// Adds an environment variable.
    pub fn env(mut self, key: impl Into<OsString>, value: impl Into<OsString>) -> Self {
        self.env.push((key.into(), value.into()));
        self
    }

    /// Sets `HOME`.
    pub fn home(mut self, dir: impl Into<PathBuf>) -> Self {
        self.home = Some(dir.into());
        self
    }

    /// Keeps sessions in `dir` (`--session-dir`).
    pub fn session_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.session = SessionStore::Dir(dir.into());
        self
    }

    /// Resumes the store's most recent session (`-c`).
    pub fn continue_session(mut self) -> Self {
        self.continue_session = true;
        self
    }

    /// The command line, for failure messages.
    pub fn describe(&self) -> String {
        let mut line = format!("{} --mode rpc", self.install.pi_bin.display());
        for arg in self.args_list() {
            line.push(' ');
            line.push_str(&arg.to_string_lossy());
        }
        line
    }

    /// `pi -p <prompt>` (print mode: no UI, one answer, then pi exits) with these options'
    /// environment and arguments; stdin is closed, stdout and stderr piped.
    pub fn print_command(&self, prompt: &str) -> Command {
        let mut cmd = Command::new(&self.install.pi_bin);
        cmd.args(self.args_list())
            .arg("-p")
            .arg(prompt)
            .current_dir(&self.cwd)
            .env("PATH", self.install.path_env())
            .env("PI_OFFLINE", "1")
            .env("PI_CODING_AGENT_DIR", &self.agent_dir)
            .env_remove("PI_CODING_AGENT_SESSION_DIR")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if let Some(home) = &self.home {
            cmd.env("HOME", home);
        }
        for (k, v) in &self.env {
            cmd.env(k, v);
        }
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        cmd
    }

    fn args_list(&self) -> Vec<OsString> {
        let mut args: Vec<OsString> = vec![
            "--provider".into(),
            self.provider.clone().into(),
            "--model".into(),
            self.model.clone().into(),
        ];
        match &self.session {
            SessionStore::Ephemeral => args.push("--no-session".into()),
            SessionStore::Dir(dir) => {
                args.push("--session-dir".into());
                args.push(dir.clone().into());
            }
        }
        if self.continue_session {
            args.push("-c".into());
        }
        for ext in &self.extensions {
            args.push("-e".into());
            args.push(ext.clone().into());
        }
        args.extend(self.args.iter().cloned());
        args
    }
}

/// An extension dialog pi asked the client to show.
#[derive(Debug, Clone, PartialEq)]
pub struct UiRequest {
    /// The id to answer with.
    pub id: String,
    /// `select`, `confirm`, `input`, `editor` (or a fire-and-forget method).
    pub method: String,
    /// The title (empty if none).
    pub title: String,
    /// A select's options (empty otherwise).
    pub options: Vec<String>,
    /// The whole request.
    pub raw: Value,
}

impl UiRequest {
    fn from_value(v: &Value) -> Option<Self> {
        if v.get("type")?.as_str()? != "extension_ui_request" {
            return None;
        }
        Some(Self {
            id: v.get("id")?.as_str()?.to_owned(),
            method: v.get("method")?.as_str()?.to_owned(),
            title: v
                .get("title")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            options: v
                .get("options")
                .and_then(Value::as_array)
                .map(|o| {
                    o.iter()
                        .filter_map(|s| s.as_str().map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default(),
            raw: v.clone(),
        })
    }

    /// Whether pi waits for an answer (`select`, `confirm`, `input`, `editor`).
    pub fn is_dialog(&self) -> bool {
        matches!(
            self.method.as_str(),
            "select" | "confirm" | "input" | "editor"
        )
    }
}

/// A finished tool call (`tool_execution_end`).
#[derive(Debug, Clone, PartialEq)]
pub struct ToolEnd {
    /// pi's tool call id.
    pub tool_call_id: String,
    /// The tool's name.
    pub tool_name: String,
    /// Whether the result is an error (blocked calls are).
    pub is_error: bool,
    /// The result's text parts, joined.
    pub text: String,
    /// The whole event.
    pub raw: Value,
}

impl ToolEnd {
    /// Reads a `tool_execution_end` event.
    pub fn from_event(v: &Value) -> Option<Self> {
        if v.get("type")?.as_str()? != "tool_execution_end" {
            return None;
        }
        Some(Self {
            tool_call_id: str_at(v, "toolCallId"),
            tool_name: str_at(v, "toolName"),
            is_error: v.get("isError").and_then(Value::as_bool).unwrap_or(false),
            text: content_text(v.pointer("/result/content").unwrap_or(&Value::Null)),
            raw: v.clone(),
        })
    }
}

fn str_at(v: &Value, key: &str) -> String {
    v.get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

/// The text of a message content: a string, or the `text` of each `{type: "text"}` part.
pub fn content_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::Object(_) => String::new(),
    }
}

/// `message_start`/`message_end`'s message role and text, if the event is one.
pub fn message_of(event: &Value) -> Option<(String, String)> {
    let message = event.get("message")?;
    Some((
        str_at(message, "role"),
        content_text(message.get("content").unwrap_or(&Value::Null)),
    ))
}

#[derive(Default)]
struct Lines {
    events: Vec<Value>,
    closed: bool,
}

#[derive(Default)]
struct Shared {
    lines: Mutex<Lines>,
    changed: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Lines> {
        self.lines.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A handle on a session's events that other threads can read (e.g. a model [`crate::Responder`]
/// rule that must know what pi has already shown).
#[derive(Clone)]
pub struct EventLog(Arc<Shared>);

impl std::fmt::Debug for EventLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventLog")
            .field("events", &self.0.lock().events.len())
            .finish()
    }
}

impl EventLog {
    /// Every event so far.
    pub fn events(&self) -> Vec<Value> {
        self.0.lock().events.clone()
    }

    /// How many events so far satisfy `pred`.
    pub fn count(&self, pred: impl Fn(&Value) -> bool) -> usize {
        self.0.lock().events.iter().filter(|v| pred(v)).count()
    }

    /// How many `message_end`s of this role have text containing `needle`.
    pub fn messages_containing(&self, role: &str, needle: &str) -> usize {
        self.count(|v| {
            v.get("type").and_then(Value::as_str) == Some("message_end")
                && message_of(v).is_some_and(|(r, t)| r == role && t.contains(needle))
        })
    }

    /// Waits up to `bound` for `pred` to hold on the events; whether it did.
    pub fn wait_until(&self, bound: Duration, pred: impl Fn(&[Value]) -> bool) -> bool {
        let deadline = Instant::now() + bound;
        let mut lines = self.0.lock();
        loop {
            if pred(&lines.events) {
                return true;
            }
            let now = Instant::now();
            if now >= deadline || lines.closed {
                return false;
            }
            lines = self
                .0
                .changed
                .wait_timeout(lines, deadline - now)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }
}

/// One running pi in RPC mode.
pub struct PiSession {
    child: Mutex<Child>,
    pid: u32,
    stdin: Option<ChildStdin>,
    shared: Arc<Shared>,
    stderr: Arc<Mutex<String>>,
    command_line: String,
    label: String,
    /// Index of the next event [`PiSession::wait_event`] looks at.
    cursor: usize,
    /// Index of the next event [`PiSession::next_ui_request`] looks at.
    ui_cursor: usize,
    /// Index of the next event [`PiSession::wait_notify`] looks at.
    notify_cursor: usize,
    next_id: u64,
    bound: Duration,
}

impl std::fmt::Debug for PiSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PiSession")
            .field("label", &self.label)
            .field("pid", &self.pid)
            .field("cursor", &self.cursor)
            .finish_non_exhaustive()
    }
}

/// Events shown in a failure message.
const SHOWN_EVENTS: usize = 40;
/// Characters of one event shown in a failure message.
const EVENT_CHARS: usize = 600;

impl PiSession {
    /// Starts pi and waits until it answers `get_state` (extensions loaded). Panics, with pi's
    /// stderr, if it cannot start or exits first.
    pub fn spawn(options: &PiOptions) -> Self {
        let label = format!("pi {}", options.install.version.number());
        let mut cmd = Command::new(&options.install.pi_bin);
        cmd.arg("--mode")
            .arg("rpc")
            .args(options.args_list())
            .current_dir(&options.cwd)
            .env("PATH", options.install.path_env())
            .env("PI_OFFLINE", "1")
            .env("PI_CODING_AGENT_DIR", &options.agent_dir)
            .env_remove("PI_CODING_AGENT_SESSION_DIR")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if let Some(home) = &options.home {
            cmd.env("HOME", home);
        }
        for (k, v) in &options.env {
            cmd.env(k, v);
        }
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        let mut child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("{label}: could not start {}: {e}", options.describe()));
        let shared = Arc::new(Shared::default());
        let stderr = Arc::new(Mutex::new(String::new()));
        if let Some(out) = child.stdout.take() {
            let shared = Arc::clone(&shared);
            std::thread::spawn(move || read_events(out, &shared));
        }
        if let Some(err) = child.stderr.take() {
            let sink = Arc::clone(&stderr);
            std::thread::spawn(move || read_text(err, &sink));
        }
        let stdin = child.stdin.take();
        let pid = child.id();
        let mut session = Self {
            child: Mutex::new(child),
            pid,
            stdin,
            shared,
            stderr,
            command_line: options.describe(),
            label,
            cursor: 0,
            ui_cursor: 0,
            notify_cursor: 0,
            next_id: 1,
            bound: crate::BOUND * 3,
        };
        session.request_ok("get_state", json!({}));
        session
    }

    /// Changes the bound on every later wait.
    pub fn set_bound(&mut self, bound: Duration) {
        self.bound = bound;
    }

    /// The bound on each wait.
    pub fn bound(&self) -> Duration {
        self.bound
    }

    /// `pi 0.73.1` or `pi 1.6.0`.
    pub fn label(&self) -> &str {
        &self.label
    }

    /// pi's pid (also its process group).
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// Sends one JSON line.
    pub fn send(&mut self, value: &Value) {
        let line = format!("{value}\n");
        let sent = match self.stdin.as_mut() {
            Some(stdin) => stdin
                .write_all(line.as_bytes())
                .and_then(|()| stdin.flush()),
            None => Err(std::io::Error::other("stdin already closed")),
        };
        if let Err(e) = sent {
            let text = self.failure(&format!("sending {value}: {e}"));
            panic!("{text}");
        }
    }

    fn fresh_id(&mut self) -> String {
        let id = format!("h{}", self.next_id);
        self.next_id += 1;
        id
    }

    /// Sends a command `{"id", "type": kind, ...fields}` without waiting; returns its id.
    pub fn send_command(&mut self, kind: &str, fields: Value) -> String {
        let id = self.fresh_id();
        let mut command = json!({ "id": id, "type": kind });
        if let (Some(obj), Value::Object(extra)) = (command.as_object_mut(), fields) {
            obj.extend(extra);
        }
        self.send(&command);
        id
    }

    /// Waits for the `response` to the command with this id (whatever its `success`).
    pub fn wait_response(&mut self, id: &str) -> Value {
        self.wait_any(&format!("the response to command {id}"), |v| {
            v.get("type").and_then(Value::as_str) == Some("response")
                && v.get("id").and_then(Value::as_str) == Some(id)
        })
    }

    /// Sends a command and waits for its response.
    pub fn request(&mut self, kind: &str, fields: Value) -> Value {
        let id = self.send_command(kind, fields);
        self.wait_any(&format!("the response to {kind} (id {id})"), |v| {
            v.get("type").and_then(Value::as_str) == Some("response")
                && v.get("id").and_then(Value::as_str) == Some(id.as_str())
        })
    }

    /// Sends a command, waits for its response, fails unless `success`; returns `data`.
    pub fn request_ok(&mut self, kind: &str, fields: Value) -> Value {
        let response = self.request(kind, fields);
        if response.get("success").and_then(Value::as_bool) != Some(true) {
            let text = self.failure(&format!("command {kind} failed: {response}"));
            panic!("{text}");
        }
        response.get("data").cloned().unwrap_or(Value::Null)
    }

    /// `get_state`'s data.
    pub fn state(&mut self) -> Value {
        self.request_ok("get_state", json!({}))
    }

    /// pi's session id (`get_state`).
    pub fn session_id(&mut self) -> String {
        let state = self.state();
        str_at(&state, "sessionId")
    }

    /// The names of the registered extension commands, prompt templates and skills.
    pub fn commands(&mut self) -> Vec<String> {
        let data = self.request_ok("get_commands", json!({}));
        data.get("commands")
            .and_then(Value::as_array)
            .map(|c| {
                c.iter()
                    .filter_map(|c| c.get("name").and_then(Value::as_str).map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Sends a `prompt` and waits until pi accepts it (for an extension command: until the
    /// command's handler returned). A command that opens a dialog needs
    /// [`PiSession::send_prompt`] instead.
    pub fn prompt(&mut self, text: &str) {
        self.request_ok("prompt", json!({ "message": text }));
    }

    /// Sends a `prompt` without waiting; returns the command id for
    /// [`PiSession::wait_response`].
    pub fn send_prompt(&mut self, text: &str) -> String {
        self.send_command("prompt", json!({ "message": text }))
    }

    /// `abort`, waiting for its response.
    pub fn abort(&mut self) {
        self.request_ok("abort", json!({}));
    }

    /// Answers a dialog with a value (`select`, `input`, `editor`).
    pub fn answer(&mut self, id: &str, value: impl Into<Value>) {
        let value = value.into();
        self.send(&json!({ "type": "extension_ui_response", "id": id, "value": value }));
    }

    /// Answers a `confirm`.
    pub fn confirm(&mut self, id: &str, confirmed: bool) {
        self.send(&json!({ "type": "extension_ui_response", "id": id, "confirmed": confirmed }));
    }

    /// Dismisses a dialog.
    pub fn cancel_dialog(&mut self, id: &str) {
        self.send(&json!({ "type": "extension_ui_response", "id": id, "cancelled": true }));
    }

    /// The first event at or after the cursor matching `pred`; the cursor moves past it.
    pub fn wait_event(&mut self, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
        let start = self.cursor;
        let (index, event) = self.wait_from(what, start, pred);
        self.cursor = index + 1;
        event
    }

    /// The first event of this `type` at or after the cursor.
    pub fn wait_type(&mut self, kind: &str) -> Value {
        self.wait_event(&format!("a {kind} event"), |v| {
            v.get("type").and_then(Value::as_str) == Some(kind)
        })
    }

    /// The next `agent_end` (the agent is idle again).
    pub fn wait_idle(&mut self) -> Value {
        self.wait_type("agent_end")
    }

    /// The next `tool_execution_end` of `tool`.
    pub fn wait_tool_end(&mut self, tool: &str) -> ToolEnd {
        let event = self.wait_event(&format!("{tool} to finish (tool_execution_end)"), |v| {
            ToolEnd::from_event(v).is_some_and(|t| t.tool_name == tool)
        });
        ToolEnd::from_event(&event).unwrap_or_else(|| unreachable_event(&event))
    }

    /// The next `message_end` of this role whose text satisfies `pred`; returns the text.
    pub fn wait_message(&mut self, role: &str, pred: impl Fn(&str) -> bool) -> String {
        let event = self.wait_event(&format!("a {role} message"), |v| {
            v.get("type").and_then(Value::as_str) == Some("message_end")
                && message_of(v).is_some_and(|(r, text)| r == role && pred(&text))
        });
        message_of(&event).map(|(_, t)| t).unwrap_or_default()
    }

    /// The next dialog (`select`, `confirm`, `input`, `editor`) matching `pred`, from its own
    /// cursor: waiting for events does not skip dialogs.
    pub fn next_ui_request(&mut self, what: &str, pred: impl Fn(&UiRequest) -> bool) -> UiRequest {
        let start = self.ui_cursor;
        let (index, event) = self.wait_from(&format!("a dialog: {what}"), start, |v| {
            UiRequest::from_value(v).is_some_and(|r| r.is_dialog() && pred(&r))
        });
        self.ui_cursor = index + 1;
        UiRequest::from_value(&event).unwrap_or_else(|| unreachable_event(&event))
    }

    /// The next `notify` whose message satisfies `pred`, from its own cursor; returns it.
    pub fn wait_notify(&mut self, pred: impl Fn(&str) -> bool) -> String {
        let start = self.notify_cursor;
        let (index, event) = self.wait_from("a notify", start, |v| {
            UiRequest::from_value(v).is_some_and(|r| r.method == "notify")
                && pred(v.get("message").and_then(Value::as_str).unwrap_or_default())
        });
        self.notify_cursor = index + 1;
        str_at(&event, "message")
    }

    /// Every event so far.
    pub fn events(&self) -> Vec<Value> {
        self.shared.lock().events.clone()
    }

    /// A handle on the events for other threads.
    pub fn log(&self) -> EventLog {
        EventLog(Arc::clone(&self.shared))
    }

    /// The number of events so far (a mark for [`PiSession::events_since`]).
    pub fn mark(&self) -> usize {
        self.shared.lock().events.len()
    }

    /// The events from `mark` on.
    pub fn events_since(&self, mark: usize) -> Vec<Value> {
        self.shared
            .lock()
            .events
            .get(mark..)
            .map(<[Value]>::to_vec)
            .unwrap_or_default()
    }

    /// Every finished tool call so far.
    pub fn tool_ends(&self) -> Vec<ToolEnd> {
        self.events()
            .iter()
            .filter_map(ToolEnd::from_event)
            .collect()
    }

    /// Every dialog pi asked for so far.
    pub fn dialogs(&self) -> Vec<UiRequest> {
        self.events()
            .iter()
            .filter_map(UiRequest::from_value)
            .filter(UiRequest::is_dialog)
            .collect()
    }

    /// pi's stderr so far.
    pub fn stderr(&self) -> String {
        self.stderr
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The exit status, if pi has exited.
    pub fn try_exit(&self) -> Option<ExitStatus> {
        self.child_status()
    }

    /// Closes stdin (pi shuts down cleanly, flushing its session) and waits for the exit.
    pub fn close(&mut self) -> ExitStatus {
        drop(self.stdin.take());
        let deadline = Instant::now() + self.bound;
        loop {
            if let Some(status) = self.try_exit() {
                return status;
            }
            if Instant::now() >= deadline {
                let text = self.failure("pi to exit after its stdin closed");
                panic!("{text}");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// A failure message: what was awaited, pi's status, the last events and stderr.
    pub fn failure(&self, what: &str) -> String {
        let status = self.child_status().map_or_else(
            || "still running".to_owned(),
            |s| format!("exited with {s}"),
        );
        let (events, closed) = {
            let lines = self.shared.lock();
            (lines.events.clone(), lines.closed)
        };
        let shown: Vec<&Value> = events
            .iter()
            .filter(|v| v.get("type").and_then(Value::as_str) != Some("message_update"))
            .collect();
        let skip = shown.len().saturating_sub(SHOWN_EVENTS);
        let mut text = format!(
            "{}: {what}\n  command: {}\n  pi: {status}{}\n  {} events ({} not streaming deltas); the last {}:\n",
            self.label,
            self.command_line,
            if closed { ", stdout closed" } else { "" },
            events.len(),
            shown.len(),
            shown.len() - skip,
        );
        for event in shown.iter().skip(skip) {
            let line = event.to_string();
            let cut: String = line.chars().take(EVENT_CHARS).collect();
            text.push_str("    ");
            text.push_str(&cut);
            if cut.len() < line.len() {
                text.push('…');
            }
            text.push('\n');
        }
        if let Some(dir) = std::env::var_os("PI_E2E_DUMP_DIR").filter(|d| !d.is_empty()) {
            let path = PathBuf::from(dir).join(format!(
                "{}-{}.jsonl",
                self.label.replace(' ', "-"),
                self.pid
            ));
            let lines: String = events.iter().map(|e| format!("{e}\n")).collect();
            if fs_err::write(&path, lines).is_ok() {
                text.push_str(&format!("  every event: {}\n", path.display()));
            }
        }
        let stderr = self.stderr();
        let tail: Vec<&str> = stderr.lines().collect();
        let from = tail.len().saturating_sub(60);
        text.push_str("  stderr:\n");
        for line in &tail[from..] {
            text.push_str("    ");
            text.push_str(line);
            text.push('\n');
        }
        text
    }

    fn child_status(&self) -> Option<ExitStatus> {
        self.child
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .try_wait()
            .ok()
            .flatten()
    }

    /// Waits for an event at or after `start` matching `pred`, without moving any cursor.
    fn wait_from(
        &mut self,
        what: &str,
        start: usize,
        pred: impl Fn(&Value) -> bool,
    ) -> (usize, Value) {
        let deadline = Instant::now() + self.bound;
        let shared = Arc::clone(&self.shared);
        let mut lines = shared.lock();
        let mut checked = start;
        loop {
            if let Some((offset, event)) = lines
                .events
                .get(checked..)
                .unwrap_or_default()
                .iter()
                .enumerate()
                .find(|(_, v)| pred(v))
            {
                return (checked + offset, event.clone());
            }
            checked = lines.events.len().max(start);
            let now = Instant::now();
            if lines.closed || now >= deadline {
                let closed = lines.closed;
                drop(lines);
                if closed {
                    // Let pi's exit status and last stderr lines land.
                    let _ = self.wait_exit_briefly();
                }
                let reason = if closed {
                    format!("pi exited (stdout closed) while waiting for {what}")
                } else {
                    format!("gave up after {:?} waiting for {what}", self.bound)
                };
                let text = self.failure(&reason);
                panic!("{text}");
            }
            lines = shared
                .changed
                .wait_timeout(lines, deadline - now)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }

    fn wait_any(&mut self, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
        // Responses are matched by id anywhere in the stream: cursors are not moved.
        self.wait_from(what, 0, pred).1
    }

    fn wait_exit_briefly(&self) -> Option<ExitStatus> {
        let deadline = Instant::now() + Duration::from_secs(2);
        while Instant::now() < deadline {
            if let Some(status) = self.try_exit() {
                std::thread::sleep(Duration::from_millis(50));
                return Some(status);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    }
}

fn unreachable_event(event: &Value) -> ! {
    panic!("matched event has an unexpected shape: {event}")
}

impl Drop for PiSession {
    fn drop(&mut self) {
        if let Some(pid) = i32::try_from(self.pid)
            .ok()
            .and_then(rustix::process::Pid::from_raw)
        {
            let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
        }
        let child = self.child.get_mut().unwrap_or_else(PoisonError::into_inner);
        let _ = child.kill();
        let _ = child.wait();
    }
}

/// Reads JSON lines split on `\n` only (pi's framing: U+2028 inside strings is not a break).
fn read_events(out: impl Read, shared: &Shared) {
    let mut reader = BufReader::new(out);
    let mut line = Vec::new();
    loop {
        line.clear();
        match reader.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        if line.last() == Some(&b'\n') {
            line.pop();
        }
        if line.last() == Some(&b'\r') {
            line.pop();
        }
        if line.is_empty() {
            continue;
        }
        let event = serde_json::from_slice::<Value>(&line).unwrap_or_else(
            |_| json!({ "type": "(not json)", "text": String::from_utf8_lossy(&line) }),
        );
        shared.lock().events.push(event);
        shared.changed.notify_all();
    }
    shared.lock().closed = true;
    shared.changed.notify_all();
}

fn read_text(pipe: impl Read, sink: &Mutex<String>) {
    let mut reader = BufReader::new(pipe);
    let mut chunk = Vec::new();
    while reader.read_until(b'\n', &mut chunk).is_ok_and(|n| n > 0) {
        sink.lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push_str(&String::from_utf8_lossy(&chunk));
        chunk.clear();
    }
}

//! Temporary homes and the real `planhost` binary as a child: started on a socket (optionally
//! with the web page), on stdio, or adopted from whoever started it; killed and reaped on drop.

use std::ffi::{OsStr, OsString};
use std::io::{BufRead, BufReader, Read};
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use planhost_core::Role;

use super::conn::{ALL_ROLES, Conn};
use crate::{BOUND, TEST_CLOCK_VAR, TestClock, poll_until};

/// A temporary home for one test: a root holding the state directory, the socket and the test
/// clock, and a separate workspace. Both live in short `/tmp/ph…` directories because unix
/// socket paths are limited to 108 bytes.
#[derive(Debug)]
pub struct Home {
    bin: PathBuf,
    root: tempfile::TempDir,
    workspace: tempfile::TempDir,
}

impl Home {
    /// A new home for the binary at `bin` (a test passes `env!("CARGO_BIN_EXE_planhost")`).
    pub fn new(bin: impl Into<PathBuf>) -> Self {
        Self::with_prefix(bin, "ph")
    }

    /// [`Home::new`] with the temporary directories named `<prefix>…` and `<prefix>ws…`.
    pub fn with_prefix(bin: impl Into<PathBuf>, prefix: &str) -> Self {
        let temp = |prefix: &str| {
            tempfile::Builder::new()
                .prefix(prefix)
                .tempdir_in("/tmp")
                .expect("a temporary directory in /tmp")
        };
        Self {
            bin: bin.into(),
            root: temp(prefix),
            workspace: temp(&format!("{prefix}ws")),
        }
    }

    /// The binary under test.
    pub fn bin(&self) -> &Path {
        &self.bin
    }

    /// The temporary root (state directory, socket, test clock).
    pub fn root(&self) -> &Path {
        self.root.path()
    }

    /// `--state-dir`.
    pub fn state_dir(&self) -> PathBuf {
        self.root.path().join("state")
    }

    /// `--socket`.
    pub fn socket(&self) -> PathBuf {
        self.root.path().join("s.sock")
    }

    /// The state directory's lock file.
    pub fn lock_file(&self) -> PathBuf {
        self.state_dir().join("planhost.lock")
    }

    /// The workspace root as the host stores it (canonical).
    pub fn workspace(&self) -> PathBuf {
        self.workspace
            .path()
            .canonicalize()
            .expect("canonical workspace")
    }

    /// A `planhost` command with this home's `--state-dir` and `--socket`, stdin closed, and
    /// none of the caller's planhost environment (`PLANHOST_LOG`, `PLANHOST_STATE_DIR`,
    /// `PLANHOST_SOCKET`, the test clock); `BROWSER=true` so that `planhost web` never opens a
    /// real browser.
    pub fn command(&self) -> Command {
        let mut cmd = Command::new(&self.bin);
        cmd.arg("--state-dir")
            .arg(self.state_dir())
            .arg("--socket")
            .arg(self.socket())
            .env_remove("PLANHOST_LOG")
            .env_remove("PLANHOST_STATE_DIR")
            .env_remove("PLANHOST_SOCKET")
            .env_remove(TEST_CLOCK_VAR)
            .env("BROWSER", "true")
            .stdin(Stdio::null());
        cmd
    }
}

/// Lines a child wrote to a pipe, collected by a thread.
#[derive(Debug, Clone, Default)]
pub struct Captured(Arc<Mutex<String>>);

impl Captured {
    /// Collects `pipe` until it closes.
    pub fn spawn(pipe: impl Read + Send + 'static) -> Self {
        let captured = Self::default();
        let sink = captured.clone();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(pipe);
            let mut line = String::new();
            while reader.read_line(&mut line).is_ok_and(|n| n > 0) {
                sink.0
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push_str(&line);
                line.clear();
            }
        });
        captured
    }

    /// Everything so far.
    pub fn text(&self) -> String {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

/// A child SIGKILLed and reaped when dropped, whatever the test did. One started as the leader
/// of its own process group ([`Reaped::spawn_group`]) takes its whole group with it.
#[derive(Debug)]
pub struct Reaped {
    /// The child.
    pub child: Child,
    group: bool,
    done: bool,
}

impl Reaped {
    /// Wraps a spawned child.
    pub fn new(child: Child) -> Self {
        Self {
            child,
            group: false,
            done: false,
        }
    }

    /// Spawns `cmd` as the leader of a new process group.
    pub fn spawn_group(cmd: &mut Command, what: &str) -> Self {
        let child = cmd
            .process_group(0)
            .spawn()
            .unwrap_or_else(|e| panic!("could not start {what}: {e}"));
        Self {
            child,
            group: true,
            done: false,
        }
    }

    /// The child's pid.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// SIGKILL (a crash, as far as the host can tell; the whole group for a group leader) and
    /// reap, once.
    pub fn kill(&mut self) {
        if self.done {
            return;
        }
        self.done = true;
        if self.group
            && let Ok(pid) = i32::try_from(self.child.id())
            && let Some(pid) = rustix::process::Pid::from_raw(pid)
        {
            let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// The exit status, waiting at most [`BOUND`].
    pub fn wait_exit(&mut self, what: &str) -> ExitStatus {
        let status = poll_until(what, BOUND, || self.child.try_wait().expect("try_wait"));
        self.done = true;
        status
    }
}

impl Drop for Reaped {
    fn drop(&mut self) {
        self.kill();
    }
}

/// How a host differs from the plain `planhost serve` ([`Served::start_with`]).
#[derive(Debug, Clone, Default)]
pub struct ServeOptions {
    /// `--web 127.0.0.1:0`: the page too; [`Served::web`] reads its `web.json`.
    pub web: bool,
    /// The debug host's test clock (`PLANHOST_TEST_CLOCK_FILE`, an offset file in the home).
    pub test_clock: bool,
    /// Extra environment.
    pub env: Vec<(OsString, OsString)>,
    /// How long the host has to come up; [`BOUND`] when `None`.
    pub start_bound: Option<Duration>,
    /// More arguments after `serve` (e.g. `--web-remote ADDR`).
    pub args: Vec<String>,
}

impl ServeOptions {
    /// With the web page.
    #[must_use]
    pub fn web(mut self) -> Self {
        self.web = true;
        self
    }

    /// With the test clock.
    #[must_use]
    pub fn test_clock(mut self) -> Self {
        self.test_clock = true;
        self
    }

    /// With `key=value` in the host's environment.
    #[must_use]
    pub fn env(mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Self {
        self.env
            .push((key.as_ref().to_owned(), value.as_ref().to_owned()));
        self
    }
}

/// The page of a host started with [`ServeOptions::web`], from its `web.json`.
#[derive(Debug, Clone)]
pub struct WebInfo {
    /// `http://planhost.localhost:PORT/`.
    pub url: String,
    /// `127.0.0.1:PORT`, where it listens.
    pub addr: String,
    /// The access token.
    pub token: String,
}

/// `planhost serve` on a home's unix socket: started here, or adopted from the process that
/// started it (then killed by the pid in its lock file).
#[derive(Debug)]
pub struct Served {
    child: Option<Reaped>,
    adopted_pid: Option<i32>,
    /// What the host wrote on stderr (hosts started here).
    pub stderr: Captured,
    /// What it wrote on stdout.
    pub stdout: Captured,
    socket: PathBuf,
    lock: PathBuf,
    clock: Option<TestClock>,
    web: Option<WebInfo>,
}

impl Served {
    /// Starts a host and waits until its socket accepts connections.
    pub fn start(home: &Home) -> Self {
        Self::start_with(home, ServeOptions::default())
    }

    /// [`Served::start`] with `options`.
    pub fn start_with(home: &Home, options: ServeOptions) -> Self {
        Self::start_from(home, home.command(), options)
    }

    /// [`Served::start_with`] from a prepared `planhost` command (`home.command()` with more set
    /// on it); `serve` and its flags are appended here.
    pub fn start_from(home: &Home, mut command: Command, options: ServeOptions) -> Self {
        command.arg("serve");
        if options.web {
            command.args(["--web", "127.0.0.1:0"]);
        }
        command.args(&options.args);
        for (key, value) in &options.env {
            command.env(key, value);
        }
        let clock = options.test_clock.then(|| {
            if !cfg!(debug_assertions) {
                panic!("only a debug build of planhost reads {TEST_CLOCK_VAR} (no --release)");
            }
            let clock = TestClock::new(home.root());
            command.env(TEST_CLOCK_VAR, clock.file());
            clock
        });
        command.stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut child = Reaped::new(command.spawn().expect("spawn planhost serve"));
        let stderr = Captured::spawn(child.child.stderr.take().expect("stderr"));
        let stdout = Captured::spawn(child.child.stdout.take().expect("stdout"));
        let socket = home.socket();
        let web_json = home.state_dir().join("web.json");
        let bound = options.start_bound.unwrap_or(BOUND);
        // With the page, the host writes web.json once the page listens and binds its socket
        // just after.
        let web = poll_until("the host's socket to accept", bound, || {
            if let Some(status) = child.child.try_wait().expect("try_wait") {
                panic!(
                    "planhost serve exited early with {status}; stderr:\n{}\nstdout:\n{}",
                    stderr.text(),
                    stdout.text()
                );
            }
            let web = if options.web {
                Some(read_web_json(&web_json)?)
            } else {
                None
            };
            UnixStream::connect(&socket).ok()?;
            Some(web)
        });
        Self {
            child: Some(child),
            adopted_pid: None,
            stderr,
            stdout,
            socket,
            lock: home.lock_file(),
            clock,
            web,
        }
    }

    /// The host someone else started on `socket` (with state directory `state_dir`), once its
    /// socket answers and its lock file names its pid; killed by that pid on drop.
    pub fn adopt(socket: &Path, state_dir: &Path) -> Self {
        poll_until(
            "the started host to accept on its socket",
            BOUND * 2,
            || UnixStream::connect(socket).ok(),
        );
        let lock = state_dir.join("planhost.lock");
        let pid = poll_until("the started host's pid in planhost.lock", BOUND, || {
            fs_err::read_to_string(&lock)
                .ok()
                .and_then(|t| t.trim().parse::<i32>().ok())
        });
        Self {
            child: None,
            adopted_pid: Some(pid),
            stderr: Captured::default(),
            stdout: Captured::default(),
            socket: socket.to_owned(),
            lock,
            clock: None,
            web: None,
        }
    }

    /// The host's pid.
    pub fn pid(&self) -> u32 {
        self.child
            .as_ref()
            .map(Reaped::pid)
            .or_else(|| self.adopted_pid.and_then(|p| u32::try_from(p).ok()))
            .expect("a host has a pid")
    }

    /// The child (hosts started here).
    pub fn child(&mut self) -> &mut Reaped {
        self.child.as_mut().expect("a host started here")
    }

    /// Its socket.
    pub fn socket(&self) -> &Path {
        &self.socket
    }

    /// The page (hosts started with [`ServeOptions::web`]).
    pub fn web(&self) -> &WebInfo {
        self.web
            .as_ref()
            .expect("a host started with ServeOptions::web")
    }

    /// The test clock (hosts started with [`ServeOptions::test_clock`]).
    pub fn test_clock(&self) -> &TestClock {
        self.clock
            .as_ref()
            .expect("a host started with ServeOptions::test_clock")
    }

    /// An initialized connection holding every role ([`ALL_ROLES`]).
    pub fn connect(&self, name: &str) -> Conn {
        self.connect_as(name, ALL_ROLES)
    }

    /// An initialized connection declaring exactly `roles`.
    pub fn connect_as(&self, name: &str, roles: &[Role]) -> Conn {
        let mut conn = self.connect_raw();
        conn.initialize_as(name, roles);
        conn
    }

    /// A connection that has not sent `initialize`.
    pub fn connect_raw(&self) -> Conn {
        let stream = UnixStream::connect(&self.socket).expect("connect to the host socket");
        Conn::socket(stream)
    }

    /// Crash: SIGKILL (no shutdown of any kind), reap, and wait until the state lock is free.
    pub fn kill(&mut self) {
        if let Some(child) = self.child.as_mut() {
            child.kill();
        }
        if let Some(pid) = self.adopted_pid.take()
            && lock_held(&self.lock)
            && let Some(pid) = rustix::process::Pid::from_raw(pid)
        {
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
        }
        if self.lock.exists() {
            poll_until("the killed host's state lock to be released", BOUND, || {
                (!lock_held(&self.lock)).then_some(())
            });
        }
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        if let Some(pid) = self.adopted_pid.take()
            && lock_held(&self.lock)
            && let Some(pid) = rustix::process::Pid::from_raw(pid)
        {
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
        }
    }
}

fn read_web_json(path: &Path) -> Option<WebInfo> {
    let text = fs_err::read_to_string(path).ok()?;
    let value: serde_json::Value = serde_json::from_str(&text).ok()?;
    Some(WebInfo {
        url: value["url"].as_str()?.to_owned(),
        addr: value["addr"].as_str()?.to_owned(),
        token: value["token"].as_str()?.to_owned(),
    })
}

/// Whether some process holds the lock file's lock (a try-lock from here would block).
pub fn lock_held(lock: &Path) -> bool {
    fs_err::File::open(lock)
        .is_ok_and(|f| matches!(f.try_lock(), Err(std::fs::TryLockError::WouldBlock)))
}

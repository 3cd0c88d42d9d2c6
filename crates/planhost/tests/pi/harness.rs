//! The harness: one temporary home per test (workspace, pi's agent dir with `models.json`, HOME,
//! session dir, planhost state dir and socket), the scripted model, `planhost serve` as a child,
//! Rust clients on its socket, and pi sessions with or without the planhost extension.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Output;

use planhost_core::{AuditAction, Mode, Role, SessionId};
use planhost_protocol::{
    ApprovalInfo, AuditEntry, AuditFilter, Method, PlansFilter, SessionInfo, SessionsFilter,
    methods,
};
use planhost_test_support::host::{Conn, Home, ServeOptions, Served, lock_held, params, stable};
use serde_json::Value;

use planhost_test_support::{
    BOUND, ModelServer, PiInstall, PiOptions, PiSession, Version, ensure_pi, poll_until,
};

/// The binary under test.
pub(crate) fn planhost_bin() -> &'static str {
    env!("CARGO_BIN_EXE_planhost")
}

/// The planhost pi extension: `PLANHOST_PI_EXTENSION` if set, else `<repo>/integrations/pi`.
pub(crate) fn extension_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("PLANHOST_PI_EXTENSION").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../integrations/pi");
    dir.canonicalize().unwrap_or(dir)
}

/// Generates `#[test] fn pi_0_73()` and `#[test] fn pi_1_6()` in a module named after each
/// scenario function `fn name(version: Version)`.
macro_rules! on_both_versions {
    ($($scenario:ident),* $(,)?) => {
        $(
            mod $scenario {
                #[test]
                fn pi_0_73() {
                    super::$scenario(planhost_test_support::Version::V073)
                }

                #[test]
                fn pi_1_6() {
                    super::$scenario(planhost_test_support::Version::V16)
                }
            }
        )*
    };
}
pub(crate) use on_both_versions;

/// One test's temporary home, for one pi version.
#[derive(Debug)]
pub(crate) struct Fixture {
    /// Its install.
    pub(crate) install: PiInstall,
    /// The scripted model.
    pub(crate) model: ModelServer,
    /// The temporary root (state directory, socket, pi's dirs) and the workspace.
    pub(crate) dirs: Home,
}

impl Fixture {
    /// Installs the version if needed (see `pi_install`), starts the scripted model and
    /// writes pi's `models.json`. The root is a short `/tmp/phpi…` so the socket path fits.
    pub(crate) fn new(version: Version) -> Self {
        let install = ensure_pi(version);
        let dirs = Home::with_prefix(planhost_bin(), "phpi");
        let model = ModelServer::start().expect("model server");
        let fixture = Self {
            install,
            model,
            dirs,
        };
        for dir in [fixture.agent_dir(), fixture.home(), fixture.session_dir()] {
            fs_err::create_dir_all(dir).expect("fixture dir");
        }
        fs_err::write(
            fixture.agent_dir().join("models.json"),
            format!("{:#}\n", fixture.model.models_json("m1")),
        )
        .expect("models.json");
        fixture
    }

    /// The workspace (pi's cwd), canonical as the host stores it.
    pub(crate) fn workspace(&self) -> PathBuf {
        self.dirs.workspace()
    }

    /// `PI_CODING_AGENT_DIR`.
    pub(crate) fn agent_dir(&self) -> PathBuf {
        self.dirs.root().join("agent")
    }

    /// pi's `HOME`.
    pub(crate) fn home(&self) -> PathBuf {
        self.dirs.root().join("home")
    }

    /// pi's `--session-dir` for scenarios that resume with `-c`.
    pub(crate) fn session_dir(&self) -> PathBuf {
        self.dirs.root().join("sessions")
    }

    /// planhost's state directory (created by `planhost serve`).
    pub(crate) fn state_dir(&self) -> PathBuf {
        self.dirs.state_dir()
    }

    /// planhost's socket.
    pub(crate) fn socket(&self) -> PathBuf {
        self.dirs.socket()
    }

    /// A path under the fixture's root (outside the workspace) for test files.
    pub(crate) fn scratch(&self, name: &str) -> PathBuf {
        self.dirs.root().join(name)
    }

    /// A path that is not a planhost binary (for the unreachable-host scenario).
    pub(crate) fn missing_bin(&self) -> PathBuf {
        self.dirs.root().join("no-such-planhost")
    }

    /// Writes a workspace file.
    pub(crate) fn write(&self, rel: &str, text: &str) {
        let path = self.workspace().join(rel);
        if let Some(parent) = path.parent() {
            fs_err::create_dir_all(parent).expect("workspace dir");
        }
        fs_err::write(path, text).expect("write workspace file");
    }

    /// A workspace file's text, `None` when it does not exist.
    pub(crate) fn read(&self, rel: &str) -> Option<String> {
        fs_err::read_to_string(self.workspace().join(rel)).ok()
    }

    /// pi alone: no extension, ephemeral session, this fixture's HOME, agent dir and model.
    pub(crate) fn plain_options(&self) -> PiOptions {
        PiOptions::new(&self.install, &self.workspace(), &self.agent_dir()).home(self.home())
    }

    /// pi with the planhost extension and its environment: `PLANHOST_BIN` (the binary under
    /// test), `PLANHOST_SOCKET`, `PLANHOST_STATE_DIR`.
    pub(crate) fn options(&self) -> PiOptions {
        self.plain_options()
            .extension(extension_dir())
            .env("PLANHOST_BIN", planhost_bin())
            .env("PLANHOST_SOCKET", self.socket())
            .env("PLANHOST_STATE_DIR", self.state_dir())
    }

    /// pi with the planhost extension ([`Fixture::options`]), checked to have loaded it.
    pub(crate) fn pi(&self) -> PiSession {
        self.pi_with(self.options())
    }

    /// pi with these options (which should include the extension), checked to have loaded it.
    pub(crate) fn pi_with(&self, options: PiOptions) -> PiSession {
        require_extension();
        let mut pi = PiSession::spawn(&options);
        let commands = pi.commands();
        if !commands.iter().any(|c| c == "plan") {
            let text = pi.failure(&format!(
                "the planhost extension ({}) loaded but registers no /plan command; commands: {commands:?}",
                extension_dir().display()
            ));
            panic!("{text}");
        }
        pi
    }

    /// Starts `planhost serve` on this fixture's socket and state directory.
    pub(crate) fn start_host(&self) -> Host {
        Host::start(self, &[])
    }

    /// [`Fixture::start_host`] with extra environment for `planhost serve` (e.g.
    /// `PLANHOST_TEST_CLOCK_FILE`).
    pub(crate) fn start_host_with(&self, env: &[(&str, &OsStr)]) -> Host {
        Host::start(self, env)
    }

    /// The host the extension started again after the one with pid `old` died: adopted once
    /// `planhost.lock` names another pid that holds the lock and its socket answers.
    pub(crate) fn adopt_restarted_host(&self, old: i32) -> Host {
        let lock = self.state_dir().join("planhost.lock");
        poll_until(
            &format!("a new host (not pid {old}) holding planhost.lock"),
            BOUND * 2,
            || {
                let pid = fs_err::read_to_string(&lock)
                    .ok()
                    .and_then(|t| t.trim().parse::<i32>().ok())?;
                (pid != old && lock_held(&lock)).then_some(())
            },
        );
        Host::adopt(self)
    }

    /// The host the extension started (`PLANHOST_BIN serve …`), once its socket answers; it is
    /// killed by pid (from the state directory's lock file) when dropped.
    pub(crate) fn adopt_host(&self) -> Host {
        Host::adopt(self)
    }

    /// Runs the `planhost` CLI with this fixture's `--socket` and `--state-dir`.
    pub(crate) fn planhost_cli(&self, args: &[&str]) -> Output {
        self.dirs
            .command()
            .args(args)
            .output()
            .expect("run the planhost CLI")
    }
}

/// Fails, saying why, when `integrations/pi` is not (yet) a pi package: pi would exit with
/// "Failed to load extension" otherwise, which says less.
fn require_extension() {
    let dir = extension_dir();
    let manifest = dir.join("package.json");
    let declared = fs_err::read_to_string(&manifest)
        .ok()
        .and_then(|t| serde_json::from_str::<Value>(&t).ok())
        .and_then(|v| v.pointer("/pi/extensions").cloned());
    let has_entry = ["index.ts", "index.js"]
        .iter()
        .any(|f| dir.join(f).is_file());
    assert!(
        declared.is_some() || has_entry,
        "the planhost pi extension is not there yet: {} declares no \"pi\": {{\"extensions\": [...]}} \
         and {} has no index.ts; these scenarios drive pi with `-e {}` and need it",
        manifest.display(),
        dir.display(),
        dir.display(),
    );
}

/// A running planhost: started here (`planhost serve`) or adopted from the extension.
#[derive(Debug)]
pub(crate) struct Host {
    served: Served,
    workspace: PathBuf,
}

impl Host {
    fn start(fx: &Fixture, env: &[(&str, &OsStr)]) -> Self {
        let mut options = ServeOptions::default();
        for (key, value) in env {
            options = options.env(key, value);
        }
        Self {
            served: Served::start_with(&fx.dirs, options),
            workspace: fx.workspace(),
        }
    }

    fn adopt(fx: &Fixture) -> Self {
        Self {
            served: Served::adopt(&fx.socket(), &fx.state_dir()),
            workspace: fx.workspace(),
        }
    }

    /// The host's pid: the child's (started here) or the lock file's (adopted).
    pub(crate) fn pid(&self) -> i32 {
        i32::try_from(self.served.pid()).expect("a pid")
    }

    /// SIGKILLs the host (no shutdown of any kind) and waits until its state lock is free.
    pub(crate) fn kill(&mut self) {
        self.served.kill();
    }

    /// The session's latest approval once it satisfies `pred` (bounded); the panic shows the
    /// last one seen.
    pub(crate) fn wait_latest_plan(
        &self,
        session: &SessionId,
        what: &str,
        pred: impl Fn(&ApprovalInfo) -> bool,
    ) -> ApprovalInfo {
        let mut last = None;
        let deadline = std::time::Instant::now() + BOUND;
        loop {
            if let Some(plan) = self.plans(session).into_iter().next() {
                if pred(&plan) {
                    return plan;
                }
                last = Some(plan);
            }
            assert!(
                std::time::Instant::now() < deadline,
                "gave up after {BOUND:?} waiting for the approval: {what}; latest:\n{last:#?}\nhost stderr:\n{}",
                self.stderr()
            );
            std::thread::sleep(std::time::Duration::from_millis(25));
        }
    }

    /// One call on a fresh observer connection that must fail; returns the error's stable code
    /// (`data.code`).
    pub(crate) fn query_err<M: Method>(&self, params: M::Params) -> String {
        let error = self.observer().call_err::<M>(params);
        stable(&error).unwrap_or("RPC_ERROR").to_owned()
    }

    /// The host's stderr so far (hosts started here).
    pub(crate) fn stderr(&self) -> String {
        self.served.stderr.text()
    }

    /// An initialized connection with these roles.
    pub(crate) fn conn(&self, roles: &[Role]) -> Conn {
        self.served.connect_as("pi-e2e", roles)
    }

    /// An observer connection.
    pub(crate) fn observer(&self) -> Conn {
        self.conn(&[Role::Observer])
    }

    /// An approver (and observer) connection: a person's UI.
    pub(crate) fn approver(&self) -> Conn {
        self.conn(&[Role::Approver, Role::Observer])
    }

    /// One call on a fresh observer connection; panics with the host's error.
    pub(crate) fn query<M: Method>(&self, params: M::Params) -> M::Result {
        self.must::<M>(self.observer(), params)
    }

    /// One call on a fresh approver connection; panics with the host's error.
    pub(crate) fn approve_call<M: Method>(&self, params: M::Params) -> M::Result {
        self.must::<M>(self.approver(), params)
    }

    /// One call on `conn` that must succeed; the panic names the call, the host's error and
    /// its stderr.
    fn must<M: Method>(&self, mut conn: Conn, params: M::Params) -> M::Result {
        let shown = serde_json::to_string(&params).unwrap_or_default();
        conn.try_call::<M>(params).unwrap_or_else(|e| {
            panic!(
                "{} {shown}: {e:?}\nhost stderr:\n{}",
                M::NAME,
                self.stderr()
            )
        })
    }

    /// The host session pi opened (externalId = pi's session id, this workspace), waiting for
    /// the extension to open it.
    pub(crate) fn session_of(&self, pi: &mut PiSession) -> SessionInfo {
        let external = pi.session_id();
        let root = self.workspace.to_string_lossy().into_owned();
        poll_until(
            &format!("a host session with externalId {external} (workspace {root})"),
            BOUND,
            || {
                self.query::<methods::SessionsList>(SessionsFilter {
                    include_ended: None,
                    workspace_root: Some(root.clone()),
                    limit: None,
                })
                .items
                .into_iter()
                .find(|s| s.external_id.as_deref() == Some(external.as_str()))
            },
        )
    }

    /// `sessions.get`.
    pub(crate) fn session(&self, id: &SessionId) -> SessionInfo {
        self.query::<methods::SessionsGet>(params::session(id))
    }

    /// Waits until the session's `mode` is `mode`; returns the session.
    pub(crate) fn wait_mode(&self, id: &SessionId, mode: Mode) -> SessionInfo {
        self.wait_session(id, &format!("mode {mode}"), |s| s.mode == mode)
    }

    /// Waits until `sessions.get` satisfies `pred`; the panic shows the last answer.
    pub(crate) fn wait_session(
        &self,
        id: &SessionId,
        what: &str,
        pred: impl Fn(&SessionInfo) -> bool,
    ) -> SessionInfo {
        let deadline = std::time::Instant::now() + BOUND;
        loop {
            let session = self.session(id);
            if pred(&session) {
                return session;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "gave up after {BOUND:?} waiting for session {id}: {what}; last:\n{session:#?}"
            );
            std::thread::sleep(std::time::Duration::from_millis(25));
        }
    }

    /// `plans.list` for a session (newest first).
    pub(crate) fn plans(&self, session: &SessionId) -> Vec<ApprovalInfo> {
        self.query::<methods::PlansList>(PlansFilter {
            session_id: Some(session.clone()),
            status: None,
            limit: None,
        })
        .items
    }

    /// `audit.list` for a session (newest first). The rows' `detail` is untyped JSON.
    pub(crate) fn audit(&self, session: &SessionId) -> Vec<AuditEntry> {
        self.query::<methods::AuditList>(AuditFilter {
            session_id: Some(session.clone()),
            limit: Some(10000),
        })
        .items
    }

    /// Audit rows of one action, oldest first.
    pub(crate) fn audit_rows(&self, session: &SessionId, action: AuditAction) -> Vec<AuditEntry> {
        let mut rows: Vec<AuditEntry> = self
            .audit(session)
            .into_iter()
            .filter(|r| r.action == action)
            .collect();
        rows.reverse();
        rows
    }
}

/// Whether `pid` is a live process: it exists and is not a zombie (a killed process its
/// parent has not reaped yet is dead).
pub(crate) fn process_alive(pid: i32) -> bool {
    let Ok(stat) = fs_err::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    // `pid (comm) S …`: the state follows the last `)`.
    let state = stat
        .rsplit_once(')')
        .and_then(|(_, rest)| rest.split_whitespace().next())
        .unwrap_or("?");
    !matches!(state, "Z" | "X" | "x")
}

/// The live processes running `program` (its argv[0]'s file name) whose working directory is
/// `dir`: whatever a command run in the workspace left behind, however it detached.
pub(crate) fn processes_in(dir: &Path, program: &str) -> Vec<i32> {
    let Ok(entries) = fs_err::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            let cwd = fs_err::read_link(format!("/proc/{pid}/cwd")).ok();
            let argv0 = fs_err::read(format!("/proc/{pid}/cmdline"))
                .ok()
                .and_then(|c| {
                    let first = c.split(|b| *b == 0).next()?.to_vec();
                    String::from_utf8(first).ok()
                })
                .unwrap_or_default();
            cwd.as_deref() == Some(dir)
                && Path::new(&argv0).file_name().and_then(|n| n.to_str()) == Some(program)
                && process_alive(*pid)
        })
        .collect()
}

/// The session id of a live process (field 6 of `/proc/<pid>/stat`).
pub(crate) fn session_of_process(pid: i32) -> Option<i32> {
    let stat = fs_err::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, rest) = stat.rsplit_once(')')?;
    // After `)`: state, ppid, pgrp, session.
    rest.split_whitespace().nth(3)?.parse().ok()
}

/// SIGKILLs the processes a scenario's command started (by pid, when they are still alive) so
/// a failed scenario leaks no `sleep 600`.
#[derive(Debug, Default)]
pub(crate) struct KillOnDrop(pub(crate) Vec<i32>);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        for &pid in &self.0 {
            if process_alive(pid)
                && let Some(pid) = rustix::process::Pid::from_raw(pid)
            {
                let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
            }
        }
    }
}

/// Joins a CLI run's output for assertion messages.
pub(crate) fn output_text(out: &Output) -> String {
    format!(
        "status {}\nstdout:\n{}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

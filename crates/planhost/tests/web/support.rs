//! Harness: the real `planhost serve --web` in a temporary home and a protocol connection on its
//! socket (plain HTTP is in `http`, the browser in `browser`). Every child is killed and reaped
//! on drop, and every wait is bounded by the scenario's [`Budget`].

use std::io::Read;
use std::os::unix::process::CommandExt as _;
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use planhost_core::{ApprovalAction, ApprovalStatus, Mode, Resolver, Role, SessionId};
use planhost_protocol::{
    ApprovalInfo, DecisionKind, ProposalRef, SessionInfo, TurnOutcome, methods,
};
pub(crate) use planhost_test_support::host::{Captured, Conn, params};
use planhost_test_support::host::{Home, ServeOptions, Served};
use serde_json::json;

pub(crate) use planhost_test_support::poll_until;

/// No scenario may take longer than this, the host's start included.
pub(crate) const SCENARIO_CAP: Duration = Duration::from_secs(30);

/// The binary under test.
fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_planhost")
}

/// One scenario's deadline: [`SCENARIO_CAP`] from its start.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Budget {
    deadline: Instant,
}

impl Budget {
    pub(crate) fn start() -> Self {
        Self {
            deadline: Instant::now() + SCENARIO_CAP,
        }
    }

    /// Time left, panicking once it is spent.
    #[track_caller]
    pub(crate) fn left(&self, what: &str) -> Duration {
        let left = self.deadline.saturating_duration_since(Instant::now());
        assert!(
            !left.is_zero(),
            "the scenario's {SCENARIO_CAP:?} ran out before {what}"
        );
        left
    }

    /// The instant it runs out.
    pub(crate) fn deadline(&self) -> Instant {
        self.deadline
    }

    /// The smaller of `bound` and the time left.
    pub(crate) fn at_most(&self, bound: Duration, what: &str) -> Duration {
        bound.min(self.left(what))
    }
}

// ---- children ----

/// A child started as the leader of its own process group; the whole group is SIGKILLed and
/// the child reaped on drop (node's Chromium goes with it).
#[derive(Debug)]
pub(crate) struct Group(pub(crate) Child, bool);

impl Group {
    pub(crate) fn spawn(cmd: &mut Command, what: &str) -> Self {
        let child = cmd
            .process_group(0)
            .spawn()
            .unwrap_or_else(|e| panic!("could not start {what}: {e}"));
        Self(child, false)
    }

    /// SIGKILLs the group and reaps the leader, once.
    pub(crate) fn kill(&mut self) {
        if self.1 {
            return;
        }
        self.1 = true;
        if let Ok(pid) = i32::try_from(self.0.id())
            && let Some(pid) = rustix::process::Pid::from_raw(pid)
        {
            let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
        }
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Runs `cmd` to completion within `bound` (killing its process group after), with its output.
pub(crate) fn run_bounded(cmd: &mut Command, bound: Duration, what: &str) -> Output {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = Group::spawn(cmd, what);
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(mut pipe) = pipe {
                let _ = pipe.read_to_end(&mut bytes);
            }
            bytes
        })
    };
    let stdout = drain(
        child
            .0
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let stderr = drain(
        child
            .0
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let status = poll_until(what, bound, || child.0.try_wait().expect("try_wait"));
    // Whatever the command left behind goes with its group, so the pipes close.
    child.kill();
    Output {
        status,
        stdout: stdout.join().unwrap_or_default(),
        stderr: stderr.join().unwrap_or_default(),
    }
}

// ---- the host ----

/// How a scenario's host differs from the plain one ([`WebHost::start_with`]).
#[derive(Debug, Clone, Default)]
pub(crate) struct HostOptions {
    /// The debug host's test clock: `PLANHOST_TEST_CLOCK_FILE` names a file in the temporary
    /// home holding a millisecond offset added to the host's clock, 0 at the start; see
    /// [`WebHost::set_clock_offset`].
    pub(crate) test_clock: bool,
    /// `--web-remote ADDR`: the page for another device too, over TLS.
    pub(crate) remote: Option<std::net::SocketAddr>,
}

/// `planhost serve --web 127.0.0.1:0` in a temporary home, with its `web.json`.
#[derive(Debug)]
pub(crate) struct WebHost {
    home: Home,
    served: Served,
    /// What the host writes on stderr.
    pub(crate) stderr: Captured,
    /// `http://planhost.localhost:PORT/`, from `web.json`.
    pub(crate) url: String,
    /// `127.0.0.1:PORT`, where it listens, from `web.json`.
    addr: String,
    /// The access token, from `web.json`.
    pub(crate) token: String,
    /// The scenario's deadline, which bounds every wait on this host.
    pub(crate) budget: Budget,
}

impl WebHost {
    /// Starts the host and waits (within the budget) for `<state>/web.json` and its socket.
    pub(crate) fn start(budget: &Budget) -> Self {
        Self::start_with(budget, HostOptions::default())
    }

    /// [`WebHost::start`] with `options`.
    pub(crate) fn start_with(budget: &Budget, options: HostOptions) -> Self {
        let home = Home::with_prefix(bin(), "phweb");
        let mut serve = ServeOptions::default().web();
        serve.start_bound = Some(budget.at_most(Duration::from_secs(10), "the host started"));
        if options.test_clock {
            serve = serve.test_clock();
        }
        if let Some(remote) = options.remote {
            serve.args = vec!["--web-remote".into(), remote.to_string()];
        }
        let served = Served::start_with(&home, serve);
        let web = served.web().clone();
        let port = web
            .addr
            .strip_prefix("127.0.0.1:")
            .unwrap_or_else(|| panic!("web.json's addr is 127.0.0.1:PORT: {:?}", web.addr));
        assert_eq!(
            web.url,
            format!("http://planhost.localhost:{port}/"),
            "web.json's url names the page planhost.localhost"
        );
        Self {
            stderr: served.stderr.clone(),
            home,
            served,
            url: web.url,
            addr: web.addr,
            token: web.token,
            budget: *budget,
        }
    }

    pub(crate) fn state_dir(&self) -> PathBuf {
        self.home.state_dir()
    }

    /// The workspace root as the host stores it (canonical).
    pub(crate) fn workspace(&self) -> PathBuf {
        self.home.workspace()
    }

    /// `planhost.localhost:PORT`: the `Host` a browser sends.
    pub(crate) fn host_port(&self) -> String {
        self.url
            .trim_start_matches("http://")
            .trim_end_matches('/')
            .to_owned()
    }

    /// `127.0.0.1:PORT`: the address to connect to.
    pub(crate) fn addr(&self) -> &str {
        &self.addr
    }

    /// `planhost_web_PORT`: the name of the page's cookie.
    pub(crate) fn cookie_name(&self) -> String {
        format!("planhost_web_{}", self.port())
    }

    /// The port alone.
    pub(crate) fn port(&self) -> u16 {
        self.host_port()
            .rsplit_once(':')
            .and_then(|(_, p)| p.parse().ok())
            .expect("a port in the url")
    }

    /// `http://planhost.localhost:PORT`: the page's origin.
    pub(crate) fn origin(&self) -> String {
        format!("http://{}", self.host_port())
    }

    /// Sets the test clock to `offset_ms` after the wall clock (the file is replaced whole, so
    /// the host never reads half a number). The host reads it on every clock reading, but its
    /// expiry timer sleeps until the next deadline (at most 30 s) and re-checks after each
    /// request it serves: make one for it to notice a jump now.
    pub(crate) fn set_clock_offset(&self, offset_ms: i64) {
        self.test_clock().set(offset_ms);
    }

    /// The debug host's test clock (a host started with `HostOptions { test_clock: true }`).
    pub(crate) fn test_clock(&self) -> &planhost_test_support::TestClock {
        self.served.test_clock()
    }

    /// What the host wrote on stderr so far.
    pub(crate) fn stderr(&self) -> String {
        self.stderr.text()
    }

    /// A `planhost` command with this host's `--state-dir` and `--socket`.
    pub(crate) fn command(&self) -> Command {
        self.home.command()
    }

    /// Runs a CLI command against this host within the budget, the way a person's terminal
    /// does (detached: the test holds agent connections, and the host refuses `approver` to a
    /// process below an agent); it must succeed.
    pub(crate) fn cli(&self, args: &[&str]) -> String {
        let what = format!("planhost {}", args.join(" "));
        let mut cmd = self.command();
        cmd.args(args);
        let out = planhost_test_support::run_detached(
            &cmd,
            self.budget.at_most(Duration::from_secs(10), &what),
        );
        assert!(
            out.code == Some(0),
            "`{what}` exited with {:?}\nstdout:\n{}\nstderr:\n{}",
            out.code,
            out.stdout,
            out.stderr
        );
        out.stdout
    }

    /// An initialized connection on the socket declaring `roles`. It stops reading (and every
    /// call on it fails) once the budget is spent, so a host that stops answering cannot hang
    /// the test.
    pub(crate) fn connect(&self, name: &str, roles: &[Role]) -> Conn {
        let conn = self.served.connect_raw();
        conn.read_timeout(self.budget.left("connecting"));
        let mut conn = conn;
        conn.initialize_as(name, roles);
        conn
    }
}

/// One approval as anyone reads it back (`plans.get`).
pub(crate) fn approval_of(conn: &mut Conn, approval: &ApprovalInfo) -> ApprovalInfo {
    conn.call::<methods::PlansGet>(ProposalRef {
        proposal_id: approval.proposal_id.clone(),
    })
    .approval
}

/// A session as anyone reads it back (`sessions.get`).
pub(crate) fn session_of(conn: &mut Conn, sid: &SessionId) -> SessionInfo {
    conn.call::<methods::SessionsGet>(params::session(sid))
}

/// The agent's connection: what the tests use to make host state.
pub(crate) fn agent(host: &WebHost) -> Conn {
    host.connect("e2e-agent", &[Role::Agent, Role::Observer])
}

/// A person's connection on the socket (an approver that also observes).
pub(crate) fn person(host: &WebHost) -> Conn {
    host.connect("e2e-person", &[Role::Approver, Role::Observer])
}

/// The markdown the scenarios submit unless they bring their own.
pub(crate) const PLAN: &str =
    "# Plan: web e2e\n\n1. Write `out.txt`.\n2. Run the tests.\n\n```sh\ncargo test\n```\n";

/// A session in Plan mode whose agent submitted `markdown`: the pending plan approval.
pub(crate) fn pending_plan(
    host: &WebHost,
    agent: &mut Conn,
    title: &str,
    markdown: &str,
) -> ApprovalInfo {
    let sid = plan_session(host, agent);
    submit(agent, &sid, "submit-1", title, markdown)
}

/// A new interactive session (in Agent mode, idle); its id.
pub(crate) fn open_session(host: &WebHost, agent: &mut Conn) -> SessionId {
    agent
        .call::<methods::SessionsOpen>(params::open(&host.workspace()))
        .id
}

/// A new session, moved into Plan mode by a person; its id.
pub(crate) fn plan_session(host: &WebHost, agent: &mut Conn) -> SessionId {
    let sid = open_session(host, agent);
    person(host).call::<methods::SessionsSetMode>(params::set_mode(&sid, Mode::Plan));
    sid
}

/// One turn of a session in Plan mode: SubmitPlan allowed and submitted as tool call `call`;
/// the pending approval.
pub(crate) fn submit(
    agent: &mut Conn,
    sid: &SessionId,
    call: &str,
    title: &str,
    markdown: &str,
) -> ApprovalInfo {
    let turn = agent.call::<methods::TurnsBegin>(params::begin(sid)).id;
    let allowed = agent.call::<methods::ToolsAuthorize>(params::authorize(
        sid,
        &turn,
        call,
        "SubmitPlan",
        json!({}),
    ));
    assert_eq!(allowed.decision, DecisionKind::Allow, "{allowed:?}");
    let approval =
        agent.call::<methods::PlansSubmit>(params::submit(sid, &turn, call, title, markdown));
    assert_eq!(approval.status, ApprovalStatus::Pending, "{approval:?}");
    agent.call::<methods::TurnsEnd>(params::end(sid, &turn, TurnOutcome::Completed));
    approval
}

/// A person's answer over the socket (`plans.resolve` naming exactly this approval).
pub(crate) fn resolve(
    host: &WebHost,
    approval: &ApprovalInfo,
    action: ApprovalAction,
) -> ApprovalInfo {
    person(host).call::<methods::PlansResolve>(params::resolve(approval, action))
}

/// Asserts that the web page answered this approval, ask or publication (`shown`, whose
/// `resolvedBy` is `by`): the page's own client (an approver, not one of the test's connections
/// nor the CLI).
#[track_caller]
pub(crate) fn assert_resolved_by_the_page(by: Option<&Resolver>, shown: &impl std::fmt::Debug) {
    let by = by.unwrap_or_else(|| panic!("resolvedBy names the web client: {shown:?}"));
    let client = by.client.as_str();
    assert!(
        client.to_ascii_lowercase().contains("web")
            && !client.starts_with("e2e-")
            && client != "planhost-cli",
        "resolvedBy names the web client: {shown:?}"
    );
    assert!(
        by.roles.contains(&Role::Approver),
        "the web client answers as an approver: {shown:?}"
    );
}

/// The agent runs `input` as a Bash call on the host in a new turn of `sid` (its permission
/// mode must allow it unasked): (the turn, what the host answered).
pub(crate) fn run_bash(
    agent: &mut Conn,
    sid: &SessionId,
    call: &str,
    input: &serde_json::Value,
) -> (planhost_core::TurnId, planhost_protocol::ExecuteResult) {
    let turn = agent.call::<methods::TurnsBegin>(params::begin(sid)).id;
    let allowed = agent.call::<methods::ToolsAuthorize>(params::authorize(
        sid,
        &turn,
        call,
        "Bash",
        input.clone(),
    ));
    assert_eq!(allowed.decision, DecisionKind::Allow, "{allowed:?}");
    let result = agent.call::<methods::ToolsExecute>(params::execute(
        sid,
        &turn,
        call,
        planhost_core::HostTool::Bash,
        input.clone(),
    ));
    (turn, result)
}

//! Host benchmarks (issue #4), each against its floor in the same run:
//!
//! - `tools.authorize` round trip over `serve --stdio`, p50/p99 and throughput, against an
//!   `app.health` echo through the same pipe (target ≤ 1.5× the echo; echo p50 < 100 µs);
//! - the same for a Bash call in Plan mode (the shell classifier on the path: `git log` with
//!   options and a pipe into `head`, proven read-only, so allowed);
//! - resident memory idle and with 1,000 open sessions (targets ≤ 20 MB and ≤ 64 MB);
//! - 50 concurrent socket clients × 1,000 authorize calls each: zero errors, p99 reported;
//! - the host's CPU time per state change as idle connections grow (1, 10, 100), each
//!   connection watching every session (`events: all`) or its own (`events: own`, as pi's
//!   extension does): target flat with `own`.
//!
//! Run: `cargo bench -p planhost --bench host`. Figures go to docs/benchmarks.md.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use planhost_client::Client;
use planhost_core::{Interactivity, PermissionMode, Role, SessionId, TurnId};
use planhost_protocol::{
    AuthorizeParams, AuthorizeResult, BeginTurnParams, ConfigureParams, DecisionKind, Empty,
    OpenSessionParams, methods,
};

const BIN: &str = env!("CARGO_BIN_EXE_planhost");

struct Host(Child);

impl Drop for Host {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn rss_kib(pid: u32) -> u64 {
    planhost_test_support::procs::rss_kib(pid).expect("the host's VmRSS")
}

fn pct(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

fn us(d: Duration) -> String {
    format!("{:.1} µs", d.as_secs_f64() * 1e6)
}

/// The bench plays the agent (sessions, turns, authorize) and the person who configures the
/// session (`sessions.configure` needs the approver role).
const ROLES: &[Role] = &[Role::Agent, Role::Approver];

/// An Agent session in `auto` with a running turn: Read is allowed without an ask.
fn ready_session(c: &mut Client, root: &std::path::Path, external: &str) -> (SessionId, TurnId) {
    let s = c
        .call::<methods::SessionsOpen>(OpenSessionParams {
            workspace_root: root.display().to_string(),
            external_id: Some(external.into()),
            interactivity: Interactivity::Interactive,
            persistence: None,
            agent: None,
        })
        .unwrap();
    let _ = c
        .call::<methods::SessionsConfigure>(ConfigureParams {
            session_id: s.id.clone(),
            permission_mode: Some(PermissionMode::Auto),
            shell_id: None,
            policy_preset: None,
            provider: None,
            model: None,
        })
        .unwrap();
    let t = c
        .call::<methods::TurnsBegin>(BeginTurnParams {
            session_id: s.id.clone(),
            origin: None,
        })
        .unwrap();
    (s.id, t.id)
}

/// `tools.authorize` of one call: `tool` with `input`, alone in its batch.
fn authorize_call(
    c: &mut Client,
    (session, turn): (&SessionId, &TurnId),
    call: String,
    tool: &str,
    input: serde_json::Value,
) -> Result<AuthorizeResult, String> {
    c.call::<methods::ToolsAuthorize>(AuthorizeParams {
        session_id: session.clone(),
        turn_id: turn.clone(),
        tool_call_id: call.into(),
        tool_name: tool.into(),
        batch_index: 0,
        batch_size: 1,
        provenance: planhost_protocol::Provenance::built_in(),
        input,
    })
    .map_err(|e| e.to_string())
}

/// A Read, allowed in an Agent/`auto` session.
fn authorize(
    c: &mut Client,
    session: &SessionId,
    turn: &TurnId,
    i: usize,
) -> Result<AuthorizeResult, String> {
    let input = serde_json::json!({ "path": "src/lib.rs" });
    authorize_call(c, (session, turn), format!("call-{i}"), "Read", input)
}

/// A Plan session (the `host` preset) with a running turn: a proven read-only Bash is allowed.
fn plan_session(c: &mut Client, root: &std::path::Path) -> (SessionId, TurnId) {
    let s = c
        .call::<methods::SessionsOpen>(OpenSessionParams {
            workspace_root: root.display().to_string(),
            external_id: Some("bench-plan".into()),
            interactivity: Interactivity::Interactive,
            persistence: None,
            agent: None,
        })
        .unwrap();
    let _ = c
        .call::<methods::SessionsSetMode>(planhost_protocol::SetModeParams {
            session_id: s.id.clone(),
            mode: planhost_core::Mode::Plan,
        })
        .unwrap();
    let t = c
        .call::<methods::TurnsBegin>(BeginTurnParams {
            session_id: s.id.clone(),
            origin: None,
        })
        .unwrap();
    (s.id, t.id)
}

const READ_ONLY_BASH: &str = "git log --oneline -n 20 -- src | head -n 5";

/// A proven read-only Bash in Plan.
fn authorize_bash(
    c: &mut Client,
    session: &SessionId,
    turn: &TurnId,
    i: usize,
) -> Result<AuthorizeResult, String> {
    let input = serde_json::json!({ "command": READ_ONLY_BASH });
    authorize_call(c, (session, turn), format!("bash-{i}"), "Bash", input)
}

fn stdio_round_trips(state: &std::path::Path, root: &std::path::Path) {
    let mut child = Command::new(BIN)
        .args(["serve", "--stdio", "--state-dir"])
        .arg(state)
        .env("PLANHOST_LOG", "error")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let (stdin, stdout) = (child.stdin.take().unwrap(), child.stdout.take().unwrap());
    let pid = child.id();
    let _guard = Host(child);
    let mut c = Client::from_streams(stdout, stdin);
    let _ = c.initialize("bench", ROLES).unwrap();
    std::thread::sleep(Duration::from_millis(200));
    let idle = rss_kib(pid);
    let (session, turn) = ready_session(&mut c, root, "bench-stdio");

    let n = 20_000;
    // Warm up both paths, then alternate blocks so drift hits both equally.
    for i in 0..1_000 {
        let _ = c.call::<methods::AppHealth>(Empty {}).unwrap();
        authorize(&mut c, &session, &turn, 1_000_000 + i).unwrap();
    }
    let (mut echo, mut auth) = (Vec::with_capacity(n), Vec::with_capacity(n));
    let started = Instant::now();
    let mut echo_total = Duration::ZERO;
    let mut auth_total = Duration::ZERO;
    for block in 0..(n / 1_000) {
        let t = Instant::now();
        for _ in 0..1_000 {
            let s = Instant::now();
            let _ = c.call::<methods::AppHealth>(Empty {}).unwrap();
            echo.push(s.elapsed());
        }
        echo_total += t.elapsed();
        let t = Instant::now();
        for i in 0..1_000 {
            let s = Instant::now();
            let r = authorize(&mut c, &session, &turn, block * 1_000 + i).unwrap();
            assert_eq!(r.decision, DecisionKind::Allow);
            auth.push(s.elapsed());
        }
        auth_total += t.elapsed();
    }
    let _ = started;
    echo.sort();
    auth.sort();
    let (e50, a50) = (pct(&echo, 0.5), pct(&auth, 0.5));
    println!("stdio round trips, n = {n} each (same pipe, same run)");
    println!(
        "  app.health echo     p50 {}  p99 {}  {:.0} calls/s",
        us(e50),
        us(pct(&echo, 0.99)),
        n as f64 / echo_total.as_secs_f64()
    );
    println!(
        "  tools.authorize     p50 {}  p99 {}  {:.0} calls/s",
        us(a50),
        us(pct(&auth, 0.99)),
        n as f64 / auth_total.as_secs_f64()
    );
    println!(
        "  authorize / echo    p50 {:.2}x  p99 {:.2}x  (target <= 1.5x; echo p50 target < 100 µs)",
        a50.as_secs_f64() / e50.as_secs_f64(),
        pct(&auth, 0.99).as_secs_f64() / pct(&echo, 0.99).as_secs_f64()
    );

    // Bash in Plan: the classifier proves the command read-only on every call.
    let (plan, plan_turn) = plan_session(&mut c, root);
    let m = 5_000;
    let (mut echo2, mut bash) = (Vec::with_capacity(m), Vec::with_capacity(m));
    for i in 0..500 {
        let _ = c.call::<methods::AppHealth>(Empty {}).unwrap();
        authorize_bash(&mut c, &plan, &plan_turn, 1_000_000 + i).unwrap();
    }
    for block in 0..(m / 500) {
        for _ in 0..500 {
            let s = Instant::now();
            let _ = c.call::<methods::AppHealth>(Empty {}).unwrap();
            echo2.push(s.elapsed());
        }
        for i in 0..500 {
            let s = Instant::now();
            let r = authorize_bash(&mut c, &plan, &plan_turn, block * 500 + i).unwrap();
            assert_eq!(r.decision, DecisionKind::Allow, "{r:?}");
            bash.push(s.elapsed());
        }
    }
    echo2.sort();
    bash.sort();
    println!("  Bash in Plan, proven read-only ({READ_ONLY_BASH:?}), n = {m}");
    println!(
        "    echo p50 {}  p99 {}; authorize p50 {}  p99 {}; ratio p50 {:.2}x  p99 {:.2}x",
        us(pct(&echo2, 0.5)),
        us(pct(&echo2, 0.99)),
        us(pct(&bash, 0.5)),
        us(pct(&bash, 0.99)),
        pct(&bash, 0.5).as_secs_f64() / pct(&echo2, 0.5).as_secs_f64(),
        pct(&bash, 0.99).as_secs_f64() / pct(&echo2, 0.99).as_secs_f64()
    );

    for i in 0..1_000 {
        let _ = ready_session(&mut c, root, &format!("bench-rss-{i}"));
    }
    std::thread::sleep(Duration::from_millis(200));
    let busy = rss_kib(pid);
    println!("resident memory");
    println!(
        "  idle after initialize        {:.1} MB  (target <= 20 MB)",
        idle as f64 / 1024.0
    );
    println!(
        "  with 1,000 open sessions     {:.1} MB  (target <= 64 MB)",
        busy as f64 / 1024.0
    );
}

/// `planhost serve` on a socket in `state`, once the socket answers; the host and its socket.
fn socket_host(state: &std::path::Path) -> (Host, std::path::PathBuf) {
    let socket = state.join("bench.sock");
    let child = Command::new(BIN)
        .args(["serve", "--state-dir"])
        .arg(state)
        .arg("--socket")
        .arg(&socket)
        .env("PLANHOST_LOG", "error")
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let host = Host(child);
    let deadline = Instant::now() + Duration::from_secs(10);
    while Client::connect_socket(&socket).is_err() {
        assert!(Instant::now() < deadline, "socket never appeared");
        std::thread::sleep(Duration::from_millis(20));
    }
    (host, socket)
}

/// 50 socket clients, each making 1,000 `tools.authorize` calls one after another. `inline`:
/// each client reads its answers in its own thread (`connect_socket_inline`, as Claude Code's
/// hook does) instead of a reader thread per client, so less of the machine goes to the
/// clients' own hand-offs.
fn socket_clients(state: &std::path::Path, root: &std::path::Path, inline: bool) {
    let (guard, socket) = socket_host(state);
    let clients = 50;
    let calls = 1_000;
    let host_pid = guard.0.id();
    let (host_before, own_before) = (cpu_time(host_pid), cpu_time(std::process::id()));
    let started = Instant::now();
    let workers: Vec<_> = (0..clients)
        .map(|k| {
            let (socket, root) = (socket.clone(), root.to_owned());
            std::thread::spawn(move || {
                let mut c = if inline {
                    Client::connect_socket_inline(&socket).unwrap()
                } else {
                    Client::connect_socket(&socket).unwrap()
                };
                let _ = c.initialize("bench", ROLES).unwrap();
                let (session, turn) = ready_session(&mut c, &root, &format!("bench-sock-{k}"));
                let mut lat = Vec::with_capacity(calls);
                let mut errors = 0;
                for i in 0..calls {
                    let s = Instant::now();
                    match authorize(&mut c, &session, &turn, i) {
                        Ok(r) if r.decision == DecisionKind::Allow => {}
                        Ok(_) | Err(_) => errors += 1,
                    }
                    lat.push(s.elapsed());
                }
                (lat, errors)
            })
        })
        .collect();
    let mut all = Vec::new();
    let mut errors = 0;
    for w in workers {
        let (lat, e) = w.join().unwrap();
        all.extend(lat);
        errors += e;
    }
    let took = started.elapsed();
    let host_cpu = cpu_time(host_pid).saturating_sub(host_before);
    let own_cpu = cpu_time(std::process::id()).saturating_sub(own_before);
    all.sort();
    let reading = if inline {
        "each reading in its own thread"
    } else {
        "each with a reader thread"
    };
    println!("socket: {clients} concurrent clients x {calls} tools.authorize ({reading})");
    println!(
        "  errors {errors}  p50 {}  p99 {}  max {}  total {:.0} calls/s",
        us(pct(&all, 0.5)),
        us(pct(&all, 0.99)),
        us(*all.last().unwrap()),
        (clients * calls) as f64 / took.as_secs_f64()
    );
    // Where the machine's time went: with every core busy, calls/s is bounded by the cores
    // over the CPU one call costs the host and the clients together.
    let per_call = |cpu: Duration| cpu.as_secs_f64() * 1e6 / (clients * calls) as f64;
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    println!(
        "  CPU per call: host {:.1} µs, clients {:.1} µs; {cores} cores allow at most {:.0} calls/s",
        per_call(host_cpu),
        per_call(own_cpu),
        cores as f64 * 1e6 / (per_call(host_cpu) + per_call(own_cpu))
    );
}

/// The host's CPU time so far (user + system, every thread), from `/proc/<pid>/stat`.
fn cpu_time(pid: u32) -> Duration {
    let stat = fs_err::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // Fields after the command's closing parenthesis: state is the 3rd field, utime the 14th.
    let after = &stat[stat.rfind(')').unwrap() + 2..];
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
    let hz: u64 = String::from_utf8(
        Command::new("getconf")
            .arg("CLK_TCK")
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap()
    .trim()
    .parse()
    .unwrap();
    Duration::from_micros(ticks * 1_000_000 / hz)
}

/// Host CPU per state change (a mode switch of an idle session, one `state.changed`) while
/// `idle` other connections are open, each with `scope` and a session of its own.
fn fanout_cost(state: &std::path::Path, root: &std::path::Path) {
    use planhost_protocol::{EventScope, InitializeParams, PROTOCOL_VERSION, SetModeParams};
    let (guard, socket) = socket_host(state);
    let pid = guard.0.id();
    let hello = |name: &str, events: EventScope| InitializeParams {
        protocol_version: PROTOCOL_VERSION,
        client_name: name.into(),
        client_version: None,
        roles: ROLES.to_vec(),
        tool_activity: false,
        events,
        agent_process: None,
    };
    let open = |c: &mut Client, external: &str| {
        c.call::<methods::SessionsOpen>(OpenSessionParams {
            workspace_root: root.display().to_string(),
            external_id: Some(external.into()),
            interactivity: Interactivity::Interactive,
            persistence: None,
            agent: None,
        })
        .unwrap()
        .id
    };
    let changes = 2_000;
    println!("fan-out: host CPU per state change ({changes} mode switches) as connections grow");
    for scope in [EventScope::All, EventScope::Own] {
        for total in [1usize, 10, 100] {
            let mut idle = Vec::new();
            for k in 1..total {
                let mut c = Client::connect_socket(&socket).unwrap();
                c.initialize_with(hello("bench-idle", scope)).unwrap();
                let _ = open(&mut c, &format!("idle-{scope}-{total}-{k}"));
                idle.push(c);
            }
            let mut driver = Client::connect_socket(&socket).unwrap();
            driver
                .initialize_with(hello("bench-driver", scope))
                .unwrap();
            let session = open(&mut driver, &format!("driver-{scope}-{total}"));
            let before = cpu_time(pid);
            let started = Instant::now();
            for i in 0..changes {
                let mode = if i % 2 == 0 {
                    planhost_core::Mode::Plan
                } else {
                    planhost_core::Mode::Agent
                };
                driver
                    .call::<methods::SessionsSetMode>(SetModeParams {
                        session_id: session.clone(),
                        mode,
                    })
                    .unwrap();
            }
            let took = started.elapsed();
            let cpu = cpu_time(pid) - before;
            println!(
                "  events {scope:<3}  {total:>3} connections  host CPU {:.3} ms/change  wall {:.3} ms/change",
                cpu.as_secs_f64() * 1e3 / f64::from(changes),
                took.as_secs_f64() * 1e3 / f64::from(changes),
            );
            drop(driver);
            drop(idle);
        }
    }
}

fn main() {
    let root = tempfile::tempdir().unwrap();
    let state = tempfile::Builder::new()
        .prefix("phb")
        .tempdir_in("/tmp")
        .unwrap();
    stdio_round_trips(&state.path().join("stdio"), root.path());
    socket_clients(&state.path().join("sock"), root.path(), false);
    socket_clients(&state.path().join("sock-inline"), root.path(), true);
    fanout_cost(&state.path().join("fanout"), root.path());
}

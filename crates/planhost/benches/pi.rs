//! pi extension overhead (issue 9), measured from pi on the same scripted runs, with and without
//! the planhost extension, interleaved:
//!
//! - `read`: the model makes N `read` calls of a small file per prompt. pi runs `read` itself;
//!   with the extension, each call is first authorized by the host. Target: ≤ 2 ms added per
//!   tool call at the median.
//! - `bash true`: the model makes N `bash` calls of `true` per prompt. Without the extension pi
//!   runs its own bash; with it, the host authorizes and runs the command (`tools.execute`).
//!   Target: ≤ 1.2× end to end.
//! - spawn: the runner against `bash -c true` is `cargo bench -p planhost-exec --bench spawn`
//!   (the runner is planhost-exec's; this binary links no exec crate).
//!
//! Two diagnostics explain the bash figures: the bash span of each prompt's first call against
//! the later ones, and the host alone (a Rust client sending the extension's `tools.authorize` +
//! `tools.execute` on the same socket, 100 ms idle before each turn).
//!
//! Time per tool call is taken from pi's own RPC events: `tool_execution_start` →
//! `tool_execution_end` of each call (authorization and execution; pi's `tool_call` hook runs
//! between the two), each event stamped with `Instant` by a thread that wakes as the event
//! arrives. The whole prompt (the `prompt` command sent → `agent_end`) divided by N is reported
//! too: it adds what the extension does per model call and per turn outside the tool span.
//!
//! Run: `cargo bench -p planhost --bench pi` (figures go to docs/benchmarks.md). Knobs:
//! `PLANHOST_BENCH_PI` = `1.6` | `0.73` | `both` (default `both`), `PLANHOST_BENCH_ROUNDS`
//! (measured rounds per side and scenario, default 20), `PLANHOST_BENCH_CALLS` (tool calls per
//! prompt, default 10), `PLANHOST_BENCH_SPAWNS` (runs per spawn variant, default 200). Pass
//! `pi` as an argument to run that part alone.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use planhost_client::Client;
use planhost_core::Role;
use planhost_test_support::{
    BOUND, EventLog, ModelServer, PiInstall, PiOptions, PiSession, Reply, ToolEnd, Version,
    ensure_pi, poll_until,
};
use serde_json::{Value, json};

/// The binary under test, built by cargo in the bench profile.
const BIN: &str = env!("CARGO_BIN_EXE_planhost");

/// The pause before an "after idle" measurement: about what separates a pi prompt's first
/// tool call from the previous run's last one in the interleaved rounds.
const IDLE: Duration = Duration::from_millis(100);

/// Unmeasured rounds per side before the measured ones (node's JIT, the host's caches).
const WARMUP_ROUNDS: usize = 2;

use planhost_test_support::bench::{
    knob, loadavg, met, ms, pct, pct_f, print_machine as machine, rss_mb, sorted,
};

// ---------------------------------------------------------------------------------------------
// The fixture: one temporary home, the scripted model, the host, two pi sessions

/// One temporary home per pi version: workspace, pi's agent dir (with `models.json`) and HOME,
/// planhost's state dir and socket, and the scripted model both pi sessions talk to.
struct Fixture {
    install: PiInstall,
    model: ModelServer,
    root: tempfile::TempDir,
    _workspace_dir: tempfile::TempDir,
    workspace: PathBuf,
}

impl Fixture {
    fn new(version: Version) -> Self {
        let install = ensure_pi(version);
        // Short, under /tmp, so the socket path stays within sun_path.
        let root = tempfile::Builder::new()
            .prefix("phb")
            .tempdir_in("/tmp")
            .unwrap();
        let workspace_dir = tempfile::Builder::new()
            .prefix("phbws")
            .tempdir_in("/tmp")
            .unwrap();
        let workspace = workspace_dir.path().canonicalize().unwrap();
        let model = ModelServer::start().unwrap();
        let fx = Self {
            install,
            model,
            root,
            _workspace_dir: workspace_dir,
            workspace,
        };
        fs_err::create_dir_all(fx.agent_dir()).unwrap();
        fs_err::create_dir_all(fx.home()).unwrap();
        fs_err::write(
            fx.agent_dir().join("models.json"),
            format!("{:#}\n", fx.model.models_json("m1")),
        )
        .unwrap();
        fs_err::write(fx.workspace.join("small.txt"), "one\ntwo\nthree\n").unwrap();
        fx
    }

    fn agent_dir(&self) -> PathBuf {
        self.root.path().join("agent")
    }

    fn home(&self) -> PathBuf {
        self.root.path().join("home")
    }

    fn state_dir(&self) -> PathBuf {
        self.root.path().join("state")
    }

    fn socket(&self) -> PathBuf {
        self.root.path().join("s.sock")
    }

    /// pi alone.
    fn plain(&self) -> PiOptions {
        PiOptions::new(&self.install, &self.workspace, &self.agent_dir()).home(self.home())
    }

    /// pi with the planhost extension, pointed at this fixture's host.
    fn with_extension(&self) -> PiOptions {
        let extension = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../integrations/pi");
        self.plain()
            .extension(extension.canonicalize().unwrap_or(extension))
            .env("PLANHOST_BIN", BIN)
            .env("PLANHOST_SOCKET", self.socket())
            .env("PLANHOST_STATE_DIR", self.state_dir())
    }
}

/// `planhost serve` on the fixture's socket, killed when dropped.
struct Host {
    child: Child,
    socket: PathBuf,
}

impl Host {
    fn start(fx: &Fixture) -> Self {
        let log = fs_err::File::create(fx.root.path().join("host.log"))
            .unwrap()
            .into_file();
        let mut child = Command::new(BIN)
            .arg("--state-dir")
            .arg(fx.state_dir())
            .arg("--socket")
            .arg(fx.socket())
            .arg("serve")
            .env_remove("PLANHOST_STATE_DIR")
            .env("PLANHOST_LOG", "error")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap();
        let socket = fx.socket();
        poll_until("planhost serve to accept on its socket", BOUND, || {
            if let Ok(Some(status)) = child.try_wait() {
                panic!(
                    "planhost serve exited with {status}: {}",
                    fs_err::read_to_string(fx.root.path().join("host.log")).unwrap_or_default()
                );
            }
            std::os::unix::net::UnixStream::connect(&socket).ok()
        });
        Self { child, socket }
    }

    /// One call on a fresh approver + observer connection.
    fn call(&self, method: &str, params: Value) -> Value {
        let mut client = Client::connect_socket(&self.socket).unwrap();
        client
            .initialize("pi-bench", &[Role::Approver, Role::Observer])
            .unwrap();
        client
            .call_raw(method, &params)
            .unwrap_or_else(|e| panic!("{method} {params}: {e}"))
    }

    /// The host session the extension opened for this pi session.
    fn session_of(&self, pi: &mut PiSession, workspace: &Path) -> String {
        let external = pi.session_id();
        let root = workspace.to_string_lossy().into_owned();
        poll_until("the extension's host session", BOUND, || {
            let list = self.call("sessions.list", json!({ "workspaceRoot": root }));
            list["items"]
                .as_array()?
                .iter()
                .find(|s| s["externalId"].as_str() == Some(external.as_str()))
                .and_then(|s| s["id"].as_str().map(str::to_owned))
        })
    }

    /// How many audit rows of each action the session has.
    fn audit_counts(&self, session: &str, actions: &[&str]) -> Vec<usize> {
        let rows = self.call(
            "audit.list",
            json!({ "sessionId": session, "limit": 10000 }),
        );
        let items = rows["items"].as_array().cloned().unwrap_or_default();
        actions
            .iter()
            .map(|a| items.iter().filter(|r| r["action"] == *a).count())
            .collect()
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Stamps each of a pi session's events with the `Instant` it arrived: a thread that wakes on
/// the session's event log as each line is pushed.
struct Stamper {
    stamps: Arc<Mutex<Vec<Instant>>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Stamper {
    fn start(log: EventLog) -> Self {
        let stamps: Arc<Mutex<Vec<Instant>>> = Arc::default();
        let stop = Arc::new(AtomicBool::new(false));
        let (sink, flag) = (Arc::clone(&stamps), Arc::clone(&stop));
        let thread = std::thread::spawn(move || {
            while !flag.load(Ordering::Relaxed) {
                let seen = sink.lock().unwrap_or_else(PoisonError::into_inner).len();
                let len = Cell::new(seen);
                let grew = log.wait_until(Duration::from_millis(100), |events| {
                    len.set(events.len());
                    events.len() > seen
                });
                if grew {
                    let now = Instant::now();
                    sink.lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .resize(len.get(), now);
                } else {
                    // Timed out, or pi's stdout closed (then this returns at once).
                    std::thread::sleep(Duration::from_millis(1));
                }
            }
        });
        Self {
            stamps,
            stop,
            thread: Some(thread),
        }
    }

    /// When event `index` arrived.
    fn at(&self, index: usize) -> Instant {
        poll_until("the event's stamp", BOUND, || {
            self.stamps
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .get(index)
                .copied()
        })
    }
}

impl Drop for Stamper {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// One pi process and its stamps.
struct Agent {
    pi: PiSession,
    stamps: Stamper,
    name: &'static str,
}

impl Agent {
    fn spawn(options: &PiOptions, name: &'static str) -> Self {
        let pi = PiSession::spawn(options);
        let stamps = Stamper::start(pi.log());
        Self { pi, stamps, name }
    }
}

/// One prompt's figures.
struct Sample {
    /// `prompt` sent → `agent_end` arrived.
    prompt: Duration,
    /// Each call's `tool_execution_start` → `tool_execution_end`.
    calls: Vec<Duration>,
    /// Each call's `tool_execution_end` → the next call's `tool_execution_start`: the turn's end,
    /// the next model call (with the extension's hooks on both) and its streamed reply.
    gaps: Vec<Duration>,
}

/// One prompt in which the model makes `n` calls of `tool` with `args`, then says it is done.
fn prompt_with_calls(
    agent: &mut Agent,
    model: &ModelServer,
    tool: &str,
    args: &Value,
    n: usize,
    tag: &str,
) -> Sample {
    assert_eq!(
        model.pending(),
        0,
        "the model's script is empty between prompts"
    );
    for _ in 0..n {
        model.push(Reply::tool(tool, args.clone()));
    }
    model.push(Reply::text("Done."));
    let mark = agent.pi.mark();
    let sent = Instant::now();
    agent.pi.prompt(&format!("{tag}: call {tool} {n} times."));
    agent.pi.wait_idle();
    // The bench reads pi's events, never the request bodies.
    model.forget_requests();
    let events = agent.pi.events_since(mark);
    let kind = |e: &Value| e["type"].as_str().unwrap_or_default().to_owned();
    let end = events
        .iter()
        .position(|e| kind(e) == "agent_end")
        .expect("agent_end");
    let prompt = agent.stamps.at(mark + end) - sent;
    let mut calls = Vec::with_capacity(n);
    let mut gaps = Vec::with_capacity(n);
    let mut last_end: Option<Instant> = None;
    for (i, event) in events.iter().enumerate() {
        if kind(event) != "tool_execution_start" {
            continue;
        }
        let id = event["toolCallId"].clone();
        let (j, done) = events
            .iter()
            .enumerate()
            .skip(i)
            .find(|(_, e)| kind(e) == "tool_execution_end" && e["toolCallId"] == id)
            .expect("tool_execution_end");
        let done = ToolEnd::from_event(done).expect("a tool end");
        if done.is_error || done.tool_name != tool {
            panic!(
                "{}",
                agent
                    .pi
                    .failure(&format!("{} {tool} call failed: {done:?}", agent.name))
            );
        }
        let (start, end) = (agent.stamps.at(mark + i), agent.stamps.at(mark + j));
        if let Some(previous) = last_end {
            gaps.push(start - previous);
        }
        last_end = Some(end);
        calls.push(end - start);
    }
    if calls.len() != n || model.pending() != 0 {
        panic!(
            "{}",
            agent.pi.failure(&format!(
                "{}: expected {n} {tool} calls, saw {}, {} scripted replies left",
                agent.name,
                calls.len(),
                model.pending()
            ))
        );
    }
    Sample {
        prompt,
        calls,
        gaps,
    }
}

/// Both sides' samples of one scenario.
#[derive(Default)]
struct Series {
    plain: Vec<Sample>,
    planhost: Vec<Sample>,
}

fn interleaved(
    fx: &Fixture,
    plain: &mut Agent,
    planhost: &mut Agent,
    tool: &str,
    args: &Value,
    rounds: usize,
    n: usize,
) -> Series {
    let mut series = Series::default();
    for round in 0..WARMUP_ROUNDS + rounds {
        // Alternate which side goes first, so drift within a round hits both alike.
        let order = if round % 2 == 0 { [0, 1] } else { [1, 0] };
        for side in order {
            let agent = if side == 0 {
                &mut *plain
            } else {
                &mut *planhost
            };
            let tag = format!("{} round {round}", agent.name);
            let sample = prompt_with_calls(agent, &fx.model, tool, args, n, &tag);
            if round >= WARMUP_ROUNDS {
                if side == 0 {
                    series.plain.push(sample);
                } else {
                    series.planhost.push(sample);
                }
            }
        }
    }
    series
}

/// Figures of one side.
struct Side {
    span_p50: Duration,
    span_p90: Duration,
    per_call_p50: Duration,
    per_call_p90: Duration,
    gap_p50: Duration,
    gap_p90: Duration,
}

fn side(samples: &[Sample], n: usize) -> Side {
    let spans = sorted(samples.iter().flat_map(|s| s.calls.clone()).collect());
    let per_call = sorted(
        samples
            .iter()
            .map(|s| s.prompt / u32::try_from(n).unwrap())
            .collect(),
    );
    let gaps = sorted(samples.iter().flat_map(|s| s.gaps.clone()).collect());
    Side {
        gap_p50: pct(&gaps, 0.5),
        gap_p90: pct(&gaps, 0.9),
        span_p50: pct(&spans, 0.5),
        span_p90: pct(&spans, 0.9),
        per_call_p50: pct(&per_call, 0.5),
        per_call_p90: pct(&per_call, 0.9),
    }
}

fn report(version: Version, what: &str, series: &Series, n: usize) -> (Side, Side, f64, f64) {
    let (p, h) = (side(&series.plain, n), side(&series.planhost, n));
    // Paired by round: (planhost prompt − plain prompt) / n.
    let added: Vec<f64> = series
        .plain
        .iter()
        .zip(&series.planhost)
        .map(|(a, b)| (ms(b.prompt) - ms(a.prompt)) / n as f64)
        .collect();
    let (added_p50, added_p90) = (pct_f(&added, 0.5), pct_f(&added, 0.9));
    println!(
        "{version} · {what} · {} rounds × {n} calls per side",
        series.plain.len()
    );
    println!(
        "  tool span start→end    pi alone p50 {:.3} ms p90 {:.3} ms | with planhost p50 {:.3} ms p90 {:.3} ms | added p50 {:+.3} ms p90 {:+.3} ms | ratio p50 {:.2}x",
        ms(p.span_p50),
        ms(p.span_p90),
        ms(h.span_p50),
        ms(h.span_p90),
        ms(h.span_p50) - ms(p.span_p50),
        ms(h.span_p90) - ms(p.span_p90),
        ms(h.span_p50) / ms(p.span_p50),
    );
    println!(
        "  between calls end→start pi alone p50 {:.3} ms p90 {:.3} ms | with planhost p50 {:.3} ms p90 {:.3} ms | added p50 {:+.3} ms p90 {:+.3} ms",
        ms(p.gap_p50),
        ms(p.gap_p90),
        ms(h.gap_p50),
        ms(h.gap_p90),
        ms(h.gap_p50) - ms(p.gap_p50),
        ms(h.gap_p90) - ms(p.gap_p90),
    );
    println!(
        "  whole prompt / call    pi alone p50 {:.3} ms p90 {:.3} ms | with planhost p50 {:.3} ms p90 {:.3} ms | added (paired rounds) p50 {:+.3} ms p90 {:+.3} ms | ratio p50 {:.2}x",
        ms(p.per_call_p50),
        ms(p.per_call_p90),
        ms(h.per_call_p50),
        ms(h.per_call_p90),
        added_p50,
        added_p90,
        ms(h.per_call_p50) / ms(p.per_call_p50),
    );
    (p, h, added_p50, added_p90)
}

fn pi_overhead(version: Version, rounds: usize, n: usize) {
    let fx = Fixture::new(version);
    let host = Host::start(&fx);
    let mut plain = Agent::spawn(&fx.plain(), "pi alone");
    let mut planhost = Agent::spawn(&fx.with_extension(), "pi + planhost");
    let commands = planhost.pi.commands();
    assert!(
        commands.iter().any(|c| c == "plan"),
        "the planhost extension did not load: {commands:?}"
    );
    // Agent mode, permission `auto` (a person's choice, made by an approver client), so Bash
    // runs unasked, as pi alone does.
    let session = host.session_of(&mut planhost.pi, &fx.workspace);
    let configured = host.call(
        "sessions.configure",
        json!({ "sessionId": session, "permissionMode": "auto" }),
    );
    assert_eq!(configured["permissionMode"], "auto", "{configured:#}");
    assert_eq!(configured["mode"], "agent", "{configured:#}");

    let read = interleaved(
        &fx,
        &mut plain,
        &mut planhost,
        "read",
        &json!({ "path": "small.txt" }),
        rounds,
        n,
    );
    let (_, _, added_p50, _) = report(
        version,
        "read of a 14-byte file (pi runs it; the host authorizes)",
        &read,
        n,
    );
    let (p, h) = (side(&read.plain, n), side(&read.planhost, n));
    let span_added = ms(h.span_p50) - ms(p.span_p50);
    println!(
        "  target ≤ 2 ms added per tool call at the median: tool span {span_added:+.3} ms ({}), whole prompt {added_p50:+.3} ms ({})",
        met(span_added <= 2.0),
        met(added_p50 <= 2.0)
    );

    let bash = interleaved(
        &fx,
        &mut plain,
        &mut planhost,
        "bash",
        &json!({ "command": "true" }),
        rounds,
        n,
    );
    let (p, h, _, _) = report(
        version,
        "bash `true` (pi's own bash | the host's Bash)",
        &bash,
        n,
    );
    let span_ratio = ms(h.span_p50) / ms(p.span_p50);
    let prompt_ratio = ms(h.per_call_p50) / ms(p.per_call_p50);
    println!(
        "  target ≤ 1.2x end to end: tool span {span_ratio:.2}x ({}), whole prompt per call {prompt_ratio:.2}x ({})",
        met(span_ratio <= 1.2),
        met(prompt_ratio <= 1.2)
    );

    let (pf, pl) = first_and_later(&bash.plain);
    let (hf, hl) = first_and_later(&bash.planhost);
    println!(
        "  bash span by place in the prompt: first call pi alone p50 {:.3} ms, with planhost {:.3} ms | later calls pi alone {:.3} ms, with planhost {:.3} ms",
        ms(pf),
        ms(hf),
        ms(pl),
        ms(hl)
    );
    host_bash_direct(&host, &fx.workspace, rounds, n);

    // The extension really went through the host: every call authorized, every bash run there.
    let counts = host.audit_counts(&session, &["tool.allow", "tool.executed"]);
    let calls = 2 * (WARMUP_ROUNDS + rounds) * n;
    println!(
        "  host audit of the planhost session: {} tool.allow (of {calls} calls), {} tool.executed (of {} bash calls); load average {}",
        counts[0],
        counts[1],
        calls / 2,
        loadavg()
    );
    assert_eq!(
        (counts[0], counts[1]),
        (calls, calls / 2),
        "every call of pi + planhost was authorized by the host, and every bash ran there"
    );
}

/// The host alone, from a Rust client on the same socket: in each of `turns` turns of an
/// Agent/`auto` session, `n` × (`tools.authorize` + `tools.execute` of Bash `true`), as the
/// extension sends them, to tell the host's share of the bash span from the extension's and
/// node's. Each turn starts after [`IDLE`], as a pi prompt does after the other side's prompt,
/// so the first call of a turn can be told from the others.
fn host_bash_direct(host: &Host, workspace: &Path, turns: usize, n: usize) {
    let mut client = Client::connect_socket(&host.socket).unwrap();
    client
        .initialize("pi-bench-direct", &[Role::Agent, Role::Approver])
        .unwrap();
    let mut call = |method: &str, params: Value| -> Value {
        client
            .call_raw(method, &params)
            .unwrap_or_else(|e| panic!("{method} {params}: {e}"))
    };
    let session = call(
        "sessions.open",
        json!({ "workspaceRoot": workspace.to_string_lossy(), "externalId": "bench-direct",
                "interactivity": "interactive" }),
    )["id"]
        .clone();
    call(
        "sessions.configure",
        json!({ "sessionId": session, "permissionMode": "auto" }),
    );
    let (mut authorize, mut first, mut rest) = (Vec::new(), Vec::new(), Vec::new());
    for t in 0..WARMUP_ROUNDS + turns {
        std::thread::sleep(IDLE);
        let turn = call("turns.begin", json!({ "sessionId": session }))["id"].clone();
        for i in 0..n {
            let id = format!("direct-{t}-{i}");
            let input = json!({ "command": "true" });
            let started = Instant::now();
            let decision = call(
                "tools.authorize",
                json!({ "sessionId": session, "turnId": turn, "toolCallId": id,
                        "toolName": "Bash", "batchIndex": 0, "batchSize": 1,
                        "provenance": { "kind": "builtIn" }, "input": input }),
            );
            let authorized = started.elapsed();
            assert_eq!(decision["decision"], "allow", "{decision:#}");
            let started = Instant::now();
            let result = call(
                "tools.execute",
                json!({ "sessionId": session, "turnId": turn, "toolCallId": id,
                        "tool": "Bash", "input": input }),
            );
            let executed = started.elapsed();
            assert_eq!(result["output"]["exit"]["code"], 0, "{result:#}");
            if t >= WARMUP_ROUNDS {
                authorize.push(authorized);
                if i == 0 {
                    first.push(executed);
                } else {
                    rest.push(executed);
                }
            }
        }
        call(
            "turns.end",
            json!({ "sessionId": session, "turnId": turn, "outcome": "completed" }),
        );
    }
    let (authorize, first, rest) = (sorted(authorize), sorted(first), sorted(rest));
    println!(
        "  the host alone (Rust client, {turns} turns × {n}, {} ms idle before each turn): tools.authorize p50 {:.3} ms p90 {:.3} ms | tools.execute Bash `true`, first of a turn p50 {:.3} ms p90 {:.3} ms, later ones p50 {:.3} ms p90 {:.3} ms p99 {:.3} ms",
        IDLE.as_millis(),
        ms(pct(&authorize, 0.5)),
        ms(pct(&authorize, 0.9)),
        ms(pct(&first, 0.5)),
        ms(pct(&first, 0.9)),
        ms(pct(&rest, 0.5)),
        ms(pct(&rest, 0.9)),
        ms(pct(&rest, 0.99)),
    );
}

/// The bash spans of the first call of each prompt (the first tool call of a pi run, and so of
/// a host turn) and of the later ones, p50 each.
fn first_and_later(samples: &[Sample]) -> (Duration, Duration) {
    let first = sorted(samples.iter().map(|s| s.calls[0]).collect());
    let later = sorted(samples.iter().flat_map(|s| s.calls[1..].to_vec()).collect());
    (pct(&first, 0.5), pct(&later, 0.5))
}

fn main() {
    let filter = std::env::args().skip(1).find(|a| !a.starts_with("--"));
    let wants = |name: &str| filter.as_deref().is_none_or(|f| name.contains(f));
    let started = Instant::now();
    machine();
    println!("load average at start: {}", loadavg());
    if wants("pi") {
        let versions: Vec<Version> = match std::env::var("PLANHOST_BENCH_PI").as_deref() {
            Ok("1.6") => vec![Version::V16],
            Ok("0.73") => vec![Version::V073],
            _ => vec![Version::V16, Version::V073],
        };
        let rounds = knob("PLANHOST_BENCH_ROUNDS", 20);
        let calls = knob("PLANHOST_BENCH_CALLS", 10);
        for version in versions {
            pi_overhead(version, rounds, calls);
        }
    }
    println!(
        "load average at end: {}; this process's RSS {:.0} MB; total {:.1} s",
        loadavg(),
        rss_mb(),
        started.elapsed().as_secs_f64()
    );
}

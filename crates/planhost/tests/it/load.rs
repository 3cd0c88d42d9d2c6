//! Load (issue 10): many concurrent sessions run scripted flows over the socket against one real
//! host for minutes. Every RPC error counts (zero expected); afterwards no process works in the
//! workspace and no run cgroup of the host remains; the host's RSS, sampled every second, is flat
//! after the first minute; and the latency of every `tools.authorize` is reported.
//!
//! `PLANHOST_LOAD_SECS` (default 60, the CI run; the full run is 600) and
//! `PLANHOST_LOAD_SESSIONS` (default 100) select the run; `docs/reliability.md` has the figures.
//! Run it with `-- --nocapture` to see the summary line.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use planhost_client::{Client, ClientError};
use planhost_core::{
    ApprovalAction, ApprovalStatus, ExecutionOutcome, ExecutionState, HostTool, Mode,
    PermissionMode, SessionId, TargetPermissionMode, TurnId,
};
use planhost_protocol::{
    ConfigureParams, DecisionKind, EndExecutionParams, ExecutionRef, Method, OpenSessionParams,
    ResolvePlanParams, SaveCheckpointParams, SubmitPlanParams, TurnOutcome, methods,
};
use planhost_test_support::host::params;
use planhost_test_support::procs;
use serde_json::{Value, json};

use crate::support::*;

/// Errors printed with their context (all are counted).
const ERRORS_SHOWN: usize = 10;

/// What every session thread reports to the test.
#[derive(Debug, Default)]
struct Shared {
    errors: AtomicU64,
    first_errors: Mutex<Vec<String>>,
}

impl Shared {
    fn record(&self, session: usize, flow: u64, what: &str) {
        self.errors.fetch_add(1, Ordering::Relaxed);
        let mut first = self.first_errors.lock().expect("errors lock");
        if first.len() < ERRORS_SHOWN {
            first.push(format!("session {session}, flow {flow}: {what}"));
        }
    }
}

/// Why a flow stopped: a refusal (or an unexpected answer), or the host is gone.
#[derive(Debug)]
struct Failure {
    what: String,
    fatal: bool,
}

/// What one session thread did.
#[derive(Debug, Default)]
struct Tally {
    flows: [u64; 3],
    calls: u64,
    /// Notifications received (every connection gets every session's `state.changed`).
    notes: u64,
    authorize: Vec<Duration>,
}

/// One session on its own connection.
struct Session {
    client: Client,
    index: usize,
    root: PathBuf,
    id: SessionId,
    /// The revision of the session's last checkpoint on its branch.
    revision: i64,
    tally: Tally,
}

impl Session {
    fn connect(socket: &Path, index: usize, root: &Path) -> Result<Self, Failure> {
        let fatal = |e: ClientError| Failure {
            what: format!("connect/initialize: {e}"),
            fatal: true,
        };
        let mut client = Client::connect_socket(socket).map_err(fatal)?;
        client
            .initialize(&format!("load-{index}"), ALL_ROLES)
            .map_err(fatal)?;
        let mut s = Self {
            client,
            index,
            root: root.to_owned(),
            id: SessionId::from(""),
            revision: 0,
            tally: Tally::default(),
        };
        s.open(0)?;
        Ok(s)
    }

    /// Opens a fresh session in `auto` (Bash allowed); `generation` counts reopens after errors.
    fn open(&mut self, generation: u64) -> Result<(), Failure> {
        let opened = self.call::<methods::SessionsOpen>(OpenSessionParams {
            external_id: Some(format!("load-{}-{generation}", self.index)),
            ..params::open(&self.root)
        })?;
        self.id = opened.id;
        self.revision = 0;
        self.call::<methods::SessionsConfigure>(ConfigureParams {
            permission_mode: Some(PermissionMode::Auto),
            ..params::configure(&self.id)
        })?;
        Ok(())
    }

    /// One call; notifications that arrive meanwhile are counted and dropped (the test checks
    /// none; [`Client::call`] would keep them all).
    fn call<M: Method>(&mut self, params: M::Params) -> Result<M::Result, Failure> {
        self.tally.calls += 1;
        let notes = &mut self.tally.notes;
        let result = self.client.call_with(M::NAME, &params, |_| *notes += 1);
        result.map_err(|e| Failure {
            fatal: !matches!(e, ClientError::Rpc(_)),
            what: format!(
                "{} {}: {e}",
                M::NAME,
                serde_json::to_string(&params).unwrap_or_default()
            ),
        })
    }

    /// `tools.authorize`, timed, which must allow.
    fn authorize(
        &mut self,
        turn: &TurnId,
        call: &str,
        tool: &str,
        input: &Value,
    ) -> Result<(), Failure> {
        let params = params::authorize(&self.id, turn, call, tool, input.clone());
        let start = Instant::now();
        let answer = self.call::<methods::ToolsAuthorize>(params.clone());
        self.tally.authorize.push(start.elapsed());
        let answer = answer?;
        expect(answer.decision == DecisionKind::Allow, || {
            format!("tools.authorize {params:?}: {answer:?}")
        })
    }

    /// Authorize and execute one host tool call.
    fn run(
        &mut self,
        turn: &TurnId,
        call: &str,
        tool: HostTool,
        input: Value,
    ) -> Result<Value, Failure> {
        self.authorize(turn, call, tool.as_str(), &input)?;
        let result =
            self.call::<methods::ToolsExecute>(params::execute(&self.id, turn, call, tool, input))?;
        Ok(serde_json::to_value(result.output).expect("a tool result as JSON"))
    }

    fn bash_echo(&mut self, turn: &TurnId, call: &str, word: &str) -> Result<(), Failure> {
        let output = self.run(
            turn,
            call,
            HostTool::Bash,
            json!({ "command": format!("echo {word}") }),
        )?;
        expect(
            output["exit"]["code"] == 0
                && output["stdout"]["kept"].as_str() == Some(&format!("{word}\n")),
            || format!("Bash echo {word}: {output}"),
        )
    }

    /// An Agent turn: Read, Glob and a Bash `echo`, each authorized and executed.
    fn agent_turn(&mut self, k: u64) -> Result<(), Failure> {
        let turn = self
            .call::<methods::TurnsBegin>(params::begin(&self.id))?
            .id;
        let read = self.run(
            &turn,
            &format!("read-{k}"),
            HostTool::Read,
            json!({ "path": "src/a.txt" }),
        )?;
        expect(read["totalLines"] == 3, || format!("Read: {read}"))?;
        let glob = self.run(
            &turn,
            &format!("glob-{k}"),
            HostTool::Glob,
            json!({ "pattern": "*.txt", "path": "src" }),
        )?;
        expect(glob.to_string().contains("b.txt"), || {
            format!("Glob: {glob}")
        })?;
        self.bash_echo(&turn, &format!("bash-{k}"), &format!("agent-{k}"))?;
        self.end_turn(&turn)
    }

    fn end_turn(&mut self, turn: &TurnId) -> Result<(), Failure> {
        self.call::<methods::TurnsEnd>(params::end(&self.id, turn, TurnOutcome::Completed))?;
        Ok(())
    }

    /// Plan mode, a checkpoint, SubmitPlan; then a person rejects it (back to Agent), or approves
    /// it in `auto` and the agent claims the execution, runs a Bash `echo` and ends it.
    fn plan_cycle(&mut self, k: u64, approve: bool) -> Result<(), Failure> {
        self.call::<methods::SessionsSetMode>(params::set_mode(&self.id, Mode::Plan))?;
        let turn = self
            .call::<methods::TurnsBegin>(params::begin(&self.id))?
            .id;
        let markdown = format!("# Plan: load {} {k}\n\n1. Echo.\n", self.index);
        let saved = self.call::<methods::CheckpointsSave>(SaveCheckpointParams {
            session_id: self.id.clone(),
            branch_path: vec!["root".into(), "main".into()],
            markdown: markdown.clone(),
            expected_revision: self.revision,
        })?;
        self.revision = saved.checkpoint.revision;
        let submit = format!("submit-{k}");
        self.authorize(&turn, &submit, "SubmitPlan", &json!({}))?;
        let approval = self.call::<methods::PlansSubmit>(SubmitPlanParams {
            question: "Shall I?".into(),
            ..params::submit(
                &self.id,
                &turn,
                &submit,
                &format!("load {} {k}", self.index),
                &markdown,
            )
        })?;
        expect(approval.status == ApprovalStatus::Pending, || {
            format!("plans.submit: {approval:?}")
        })?;
        self.end_turn(&turn)?;
        if !approve {
            let rejected = self.call::<methods::PlansResolve>(ResolvePlanParams {
                feedback: Some("not yet".into()),
                ..params::resolve(&approval, ApprovalAction::Reject)
            })?;
            expect(rejected.status == ApprovalStatus::Rejected, || {
                format!("reject: {rejected:?}")
            })?;
            self.call::<methods::SessionsSetMode>(params::set_mode(&self.id, Mode::Agent))?;
            return Ok(());
        }
        let approved = self.call::<methods::PlansResolve>(ResolvePlanParams {
            target_permission_mode: Some(TargetPermissionMode::Auto),
            ..params::resolve(&approval, ApprovalAction::Approve)
        })?;
        expect(approved.status == ApprovalStatus::Approved, || {
            format!("approve: {approved:?}")
        })?;
        let Some(execution) = approved.execution_id else {
            return expect(false, || {
                format!("approve without an execution: {approved:?}")
            });
        };
        let claimed = self.call::<methods::ExecutionsClaim>(ExecutionRef {
            session_id: self.id.clone(),
            execution_id: execution.clone(),
        })?;
        let exec_turn = claimed.turn.id;
        self.bash_echo(&exec_turn, &format!("exec-{k}"), &format!("exec-{k}"))?;
        let ended = self.call::<methods::ExecutionsEnd>(EndExecutionParams {
            session_id: self.id.clone(),
            execution_id: execution,
            outcome: ExecutionOutcome::Completed,
        })?;
        expect(ended.state == ExecutionState::Completed, || {
            format!("executions.end: {ended:?}")
        })
    }
}

fn expect(ok: bool, what: impl FnOnce() -> String) -> Result<(), Failure> {
    if ok {
        Ok(())
    } else {
        Err(Failure {
            what: format!("unexpected answer: {}", what()),
            fatal: false,
        })
    }
}

/// One session's thread: flows until the deadline. After a failure it reopens a fresh session
/// (the failed one may be stuck mid-flow) and goes on.
fn session_thread(
    socket: &Path,
    root: &Path,
    index: usize,
    deadline: Instant,
    shared: &Shared,
) -> Tally {
    let mut s = match Session::connect(socket, index, root) {
        Ok(s) => s,
        Err(f) => {
            shared.record(index, 0, &f.what);
            return Tally::default();
        }
    };
    let mut generation = 0;
    // Start each session at another point of the cycle, so the mix is even at every moment.
    let mut k = index as u64;
    while Instant::now() < deadline {
        let kind = (k % 3) as usize;
        let outcome = match kind {
            0 => s.agent_turn(k),
            1 => s.plan_cycle(k, true),
            _ => s.plan_cycle(k, false),
        };
        match outcome {
            Ok(()) => s.tally.flows[kind] += 1,
            Err(f) => {
                shared.record(index, k, &f.what);
                if f.fatal {
                    break;
                }
                generation += 1;
                if let Err(f) = s.open(generation) {
                    shared.record(index, k, &format!("reopen: {}", f.what));
                    break;
                }
            }
        }
        k += 1;
    }
    s.tally
}

// ---- sampling ----

/// One sample of the host, once a second.
#[derive(Debug, Clone, Copy)]
struct Sample {
    at: Duration,
    rss_kib: u64,
    fds: usize,
    threads: u64,
    cgroups: usize,
}

fn sample(pid: u32, at: Duration) -> Sample {
    Sample {
        at,
        rss_kib: procs::status_field(pid, "VmRSS:").unwrap_or(0),
        fds: fs_err::read_dir(format!("/proc/{pid}/fd")).map_or(0, Iterator::count),
        threads: procs::status_field(pid, "Threads:").unwrap_or(0),
        cgroups: procs::run_cgroups_of(pid).len(),
    }
}

/// User plus system CPU seconds of `pid` so far (`/proc/<pid>/stat`, at USER_HZ = 100).
fn cpu_secs(pid: u32) -> f64 {
    fs_err::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            let rest = stat.rsplit_once(')')?.1.to_owned();
            let fields: Vec<&str> = rest.split_whitespace().collect();
            // After the name: state is field 3, so utime (14) and stime (15) are at 11 and 12.
            let ticks: u64 =
                fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
            Some(ticks as f64 / 100.0)
        })
        .unwrap_or(0.0)
}

fn mean_kib(samples: &[Sample]) -> f64 {
    if samples.is_empty() {
        return 0.0;
    }
    samples.iter().map(|s| s.rss_kib as f64).sum::<f64>() / samples.len() as f64
}

fn mib(kib: f64) -> f64 {
    kib / 1024.0
}

/// Nearest-rank percentile of sorted durations, in milliseconds.
fn percentile_ms(sorted: &[Duration], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1].as_secs_f64() * 1e3
}

/// Growth below this is "flat": 20 % of the baseline or 8 MiB, whichever is larger.
fn flat_bound_kib(baseline_kib: f64) -> f64 {
    (baseline_kib * 0.2).max(8.0 * 1024.0)
}

#[test]
fn a_hundred_sessions_under_load_leak_nothing() {
    let secs = env_u64("PLANHOST_LOAD_SECS", 60).max(3);
    let sessions = env_u64("PLANHOST_LOAD_SESSIONS", 100).max(1) as usize;
    let env = home();
    let workspace = env.workspace();
    fs_err::create_dir(workspace.join("src")).unwrap();
    fs_err::write(workspace.join("src/a.txt"), "one\ntwo\nthree\n").unwrap();
    fs_err::write(workspace.join("src/b.txt"), "b\n").unwrap();
    let mut host = SocketHost::start(&env);
    let host_pid = host.pid();
    let before = sample(host_pid, Duration::ZERO);

    let shared = Arc::new(Shared::default());
    let started = Instant::now();
    let deadline = started + Duration::from_secs(secs);
    let stop = Arc::new(AtomicBool::new(false));
    let sampler = {
        let stop = Arc::clone(&stop);
        std::thread::spawn(move || {
            let mut samples = Vec::new();
            let mut tick = 1;
            while !stop.load(Ordering::Relaxed) {
                let next = started + Duration::from_secs(tick);
                std::thread::sleep(next.saturating_duration_since(Instant::now()));
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                samples.push(sample(host_pid, started.elapsed()));
                tick += 1;
            }
            samples
        })
    };
    let workers: Vec<_> = (0..sessions)
        .map(|i| {
            let (socket, root, shared) = (env.socket(), workspace.clone(), Arc::clone(&shared));
            std::thread::Builder::new()
                .name(format!("load-{i}"))
                .stack_size(256 * 1024)
                .spawn(move || session_thread(&socket, &root, i, deadline, &shared))
                .expect("spawn a session thread")
        })
        .collect();
    let mut total = Tally::default();
    for w in workers {
        let t = w.join().expect("a session thread panicked");
        for (sum, n) in total.flows.iter_mut().zip(t.flows) {
            *sum += n;
        }
        total.calls += t.calls;
        total.notes += t.notes;
        total.authorize.extend(t.authorize);
    }
    let ran = started.elapsed();
    stop.store(true, Ordering::Relaxed);
    let samples = sampler.join().expect("the sampler panicked");
    // The host is still serving once the load is over.
    let exited = host.child().child.try_wait().expect("try_wait");
    assert!(
        exited.is_none(),
        "the host exited under load ({exited:?}); stderr:\n{}",
        host.stderr.text()
    );
    let idle = sample(host_pid, started.elapsed());
    let (host_cpu, test_cpu) = (cpu_secs(host_pid), cpu_secs(std::process::id()));

    // ---- figures ----
    let errors = shared.errors.load(Ordering::Relaxed);
    let first_errors = shared.first_errors.lock().expect("errors lock").clone();
    let mut lat = total.authorize.clone();
    lat.sort_unstable();
    let (p50, p99, max) = (
        percentile_ms(&lat, 0.50),
        percentile_ms(&lat, 0.99),
        lat.last().map_or(0.0, |d| d.as_secs_f64() * 1e3),
    );
    let flows: u64 = total.flows.iter().sum();
    let rss_first = samples.first().map_or(0, |s| s.rss_kib);
    let rss_last = samples.last().map_or(0, |s| s.rss_kib);
    let rss_max = samples.iter().map(|s| s.rss_kib).max().unwrap_or(0);
    // "Flat after the first minute": for a short run, the last third against the middle third;
    // for a run of more than two minutes, the last minute against the first.
    let n = samples.len();
    let (baseline, recent, how) = if secs > 120 {
        let first: Vec<Sample> = samples
            .iter()
            .copied()
            .filter(|s| s.at < Duration::from_secs(60))
            .collect();
        let last: Vec<Sample> = samples
            .iter()
            .copied()
            .filter(|s| s.at + Duration::from_secs(60) > ran)
            .collect();
        (mean_kib(&first), mean_kib(&last), "minute 1 → last minute")
    } else {
        (
            mean_kib(&samples[n / 3..2 * n / 3]),
            mean_kib(&samples[2 * n / 3..]),
            "middle third → last third",
        )
    };
    let growth = recent - baseline;
    let bound = flat_bound_kib(baseline);
    eprintln!("load: RSS samples (s: MiB, fds, threads, run cgroups):");
    for chunk in samples.chunks(10) {
        let line: Vec<String> = chunk
            .iter()
            .map(|s| {
                format!(
                    "{}:{:.1}/{}/{}/{}",
                    s.at.as_secs(),
                    mib(s.rss_kib as f64),
                    s.fds,
                    s.threads,
                    s.cgroups
                )
            })
            .collect();
        eprintln!("  {}", line.join(" "));
    }
    if secs > 120 {
        let minutes: Vec<String> = samples
            .chunks(60)
            .map(|c| format!("{:.1}", mib(mean_kib(c))))
            .collect();
        eprintln!("load: RSS mean per minute (MiB): {}", minutes.join(" "));
    }
    for e in &first_errors {
        eprintln!("load error: {e}");
    }
    eprintln!(
        "load: {sessions} sessions, {:.1} s, {flows} flows (agent {}, plan+approve+execute {}, plan+reject {}), \
         {} calls, {} notifications, {errors} errors; tools.authorize {} calls p50 {p50:.2} ms p99 {p99:.2} ms max {max:.2} ms; \
         RSS first {:.1} MiB last {:.1} MiB max {:.1} MiB, {how} {:.1} → {:.1} MiB ({:+.1} MiB, bound {:.1}); \
         fds {}→{}, threads {}→{}, max run cgroups {}, after the load: RSS {:.1} MiB fds {} threads {} cgroups {}; \
         CPU: host {host_cpu:.1} s, test {test_cpu:.1} s",
        ran.as_secs_f64(),
        total.flows[0],
        total.flows[1],
        total.flows[2],
        total.calls,
        total.notes,
        lat.len(),
        mib(rss_first as f64),
        mib(rss_last as f64),
        mib(rss_max as f64),
        mib(baseline),
        mib(recent),
        mib(growth),
        mib(bound),
        samples.first().map_or(0, |s| s.fds),
        samples.last().map_or(0, |s| s.fds),
        samples.first().map_or(0, |s| s.threads),
        samples.last().map_or(0, |s| s.threads),
        samples.iter().map(|s| s.cgroups).max().unwrap_or(0),
        mib(idle.rss_kib as f64),
        idle.fds,
        idle.threads,
        idle.cgroups,
    );

    // ---- verdicts ----
    assert_eq!(errors, 0, "RPC errors under load; first: {first_errors:#?}");
    // Every connection's descriptors and every thread the load needed are given back once it
    // is over (tokio's idle blocking threads leave after 10 s). The runner opens two
    // descriptors at its first command and keeps them for the process's life (`/dev/null`, the
    // shells' stdin, and `/proc/sys/kernel/ns_last_pid`); `before` was taken before any command.
    let runner_keeps = 2;
    let after = poll_until(
        "the host's descriptors and threads back to where they were",
        Duration::from_secs(30),
        || {
            let now = sample(host_pid, started.elapsed());
            (now.fds <= before.fds + runner_keeps + 2 && now.threads <= before.threads + 2)
                .then_some(now)
        },
    );
    eprintln!(
        "load: before the load fds {} threads {}; given back: fds {} threads {}",
        before.fds, before.threads, after.fds, after.threads
    );
    assert!(flows >= sessions as u64, "too few flows ran: {flows}");
    assert!(n >= 3, "too few RSS samples: {n}");
    assert!(
        growth < bound,
        "host RSS grew {:.1} MiB ({how}: {:.1} → {:.1} MiB), bound {:.1} MiB",
        mib(growth),
        mib(baseline),
        mib(recent),
        mib(bound)
    );
    // Every Bash call returned before its thread joined: nothing may still run in the workspace.
    // (A moment's grace for a process the kernel is still tearing down.)
    let first_scan = procs::processes_in(&workspace);
    let mut left = first_scan.clone();
    let grace = Instant::now() + Duration::from_secs(2);
    while !left.is_empty() && Instant::now() < grace {
        std::thread::sleep(Duration::from_millis(50));
        left = procs::processes_in(&workspace);
    }
    if !first_scan.is_empty() {
        eprintln!("load: processes in the workspace right after the load: {first_scan:?}");
    }
    assert_eq!(left, Vec::<i32>::new(), "processes left in the workspace");
    assert_eq!(
        procs::run_cgroups_of(host_pid),
        Vec::<String>::new(),
        "run cgroups of the host remain"
    );
    drop(host);
}

//! A run never outlives the process that started it. An outside attack SIGKILLed the host 60
//! times and found a run's shell still writing 6–32 ms after the host had died. Here the host is
//! this test binary started again as a child (`PLANHOST_EXEC_TEST_ROLE`), and its [`Watchdog`]
//! is this binary once more (told apart by `PLANHOST_WATCHDOG=1`, which `Watchdog::spawn` sets).
//! The host runs two tickers through [`run`], the shell itself and an escapee in a session of
//! its own, each stamping a line about every millisecond; the test SIGKILLs the host and reads
//! the stamps.
//!
//! - The shell carries `PR_SET_PDEATHSIG(SIGKILL)`, sent by the kernel from the host's exit
//!   before the host can be reaped, so no line of the shell is stamped after `waitpid` of the
//!   host returned (a killed process never runs user code again, and the stamp is taken in user
//!   code before each write). No margin, and no watchdog needed: the first test has none.
//! - The escapee (a grandchild) is the watchdog's to end. The second test holds the watchdog's
//!   pipe open past the host's death (a forked child of the host keeps the write end, as any
//!   fork in flight does for a moment), so only the watchdog's own death signal can wake it.
//!   Its bound is a margin, as in the end-to-end test (`planhost`'s `host_crash.rs`): 100 ms.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use planhost_exec::{
    CommandSpec, HostIdentity, Platform, WATCHDOG_VAR, Watchdog, effective_shell, probe, run,
};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// Which host this process plays (unset: the test itself).
const ROLE: &str = "PLANHOST_EXEC_TEST_ROLE";
/// The working directory of the host's run.
const DIR: &str = "PLANHOST_EXEC_TEST_DIR";
/// The test that plays the host and the watchdog.
const ROLE_TEST: &str = "plays_the_host_or_its_watchdog_when_started_as_one";
/// See the module docs.
const GRANDCHILD_MARGIN_US: i64 = 100_000;

/// The shell (`s`) and an escapee in its own session (`e`) stamp `side.txt` about every
/// millisecond with builtins only; `read -t` on a FIFO they hold both ends of is the sleep.
const TICKERS: &str = r#"mkfifo tick || exit 1; setsid bash -c 'exec 9<>tick; while :; do printf "e %s\n" "$EPOCHREALTIME" >>side.txt; read -t 0.001 -u 9; done' & echo "esc $!"; echo "sh $$"; exec bash -c 'exec 9<>tick; while :; do printf "s %s\n" "$EPOCHREALTIME" >>side.txt; read -t 0.001 -u 9; done'"#;

/// How the host is set up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Host {
    /// No watchdog.
    Alone,
    /// A watchdog, and a forked child that keeps the watchdog's pipe open after the host dies.
    HoldingThePipe,
}

impl Host {
    fn role(self) -> &'static str {
        match self {
            Self::Alone => "alone",
            Self::HoldingThePipe => "holding",
        }
    }
}

/// The harness arguments that run only [`ROLE_TEST`]; `extra` is a filter that names no test
/// (how the watchdog learns its host).
fn role_args(extra: Option<String>) -> Vec<String> {
    let mut args = vec!["--exact".to_owned(), ROLE_TEST.to_owned()];
    args.extend(extra);
    args.extend(["--nocapture".to_owned(), "--test-threads=1".to_owned()]);
    args
}

/// Does nothing in an ordinary test run; started as a host or its watchdog, is that.
#[test]
fn plays_the_host_or_its_watchdog_when_started_as_one() {
    if std::env::var_os(WATCHDOG_VAR).is_some() {
        let host = std::env::args()
            .find_map(|a| {
                let (pid, start) = a.strip_prefix("host=")?.split_once('.')?;
                Some(HostIdentity {
                    pid: pid.parse().ok()?,
                    start: start.parse().ok()?,
                })
            })
            .expect("the host's identity in the arguments");
        planhost_exec::watch_host(host);
        std::process::exit(0);
    }
    let dir = || PathBuf::from(std::env::var_os(DIR).expect("a directory"));
    match std::env::var(ROLE).as_deref() {
        Ok("alone") => be_the_host(&dir(), Host::Alone),
        Ok("holding") => be_the_host(&dir(), Host::HoldingThePipe),
        _ => {}
    }
}

/// Sets up as `how` says, then runs the tickers until killed.
#[allow(
    clippy::print_stdout,
    reason = "the host tells the test its pids on stdout"
)]
fn be_the_host(dir: &Path, how: Host) -> ! {
    // The harness printed `test … ... ` without a newline: the pids go on lines of their own.
    println!();
    let _watchdog = (how == Host::HoldingThePipe).then(|| {
        let me = HostIdentity::current().unwrap();
        let exe = std::env::current_exe().unwrap();
        let host = format!("host={}.{}", me.pid, me.start);
        Watchdog::spawn(&exe, &role_args(Some(host))).unwrap()
    });
    if how == Host::HoldingThePipe {
        // A fork holds every descriptor of the host, the watchdog's pipe included, until it
        // exits: the watchdog sees no end of file when the host dies.
        // SAFETY: the child only calls pause(2), which is async-signal-safe, until killed.
        let holder = unsafe { libc::fork() };
        if holder == 0 {
            loop {
                // SAFETY: see above.
                unsafe { libc::pause() };
            }
        }
        println!("holder {holder}");
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let shell = effective_shell(Platform::current(), &probe(), None).unwrap();
        let mut spec = CommandSpec::new(shell, TICKERS, dir);
        spec.env = vec![("PATH".into(), std::env::var("PATH").unwrap_or_default())];
        let (tx, mut rx) = mpsc::channel::<planhost_exec::OutputChunk>(64);
        tokio::spawn(async move {
            use std::io::Write as _;
            while let Some(chunk) = rx.recv().await {
                print!("{}", chunk.text);
                let _ = std::io::stdout().flush();
            }
        });
        let _ = run(spec, tx, CancellationToken::new()).await;
    });
    std::process::exit(1)
}

#[allow(
    clippy::disallowed_methods,
    reason = "the wall clock is what bash's $EPOCHREALTIME stamps the lines with"
)]
fn now_us() -> i64 {
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap();
    i64::try_from(since.as_micros()).unwrap()
}

/// A process's start time and whether it still runs (a zombie does not).
fn stat_of(pid: i32) -> Option<(u64, bool)> {
    let stat = fs_err::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let running = !matches!(rest.first().copied(), Some("Z" | "X" | "x"));
    Some((rest.get(19)?.parse().ok()?, running))
}

fn runs(&(pid, start): &(i32, u64)) -> bool {
    stat_of(pid).is_some_and(|(s, running)| s == start && running)
}

/// SIGKILLs what is still the process the test started, however the test ends.
struct KillOnDrop(Vec<(i32, u64)>);

impl KillOnDrop {
    fn of(pids: impl IntoIterator<Item = i32>) -> Self {
        Self(
            pids.into_iter()
                .filter_map(|p| Some((p, stat_of(p)?.0)))
                .collect(),
        )
    }
}

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        for p in &self.0 {
            if runs(p)
                && let Some(pid) = rustix::process::Pid::from_raw(p.0)
            {
                let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
            }
        }
    }
}

/// What one kill showed, in µs after the host's observed death.
#[derive(Debug)]
struct Killed {
    /// The shell's stamps after the death.
    shell_after: usize,
    /// The escapee's stamps later than the margin after the death.
    esc_late: usize,
    /// When each was last stamped.
    shell_last: i64,
    esc_last: i64,
    /// Whether the escapee still ran 200 ms after the death (or after the shell was gone).
    esc_survived: bool,
}

/// Starts a host as `how` says, SIGKILLs it once its tickers stamp, and reads the stamps.
fn kill_host(how: Host) -> Killed {
    let dir = tempfile::tempdir().unwrap();
    let mut host = Command::new(std::env::current_exe().unwrap())
        .args(role_args(None))
        .env(ROLE, how.role())
        .env(DIR, dir.path())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let _host = KillOnDrop::of([i32::try_from(host.id()).unwrap()]);
    let (tx, rx) = std::sync::mpsc::channel();
    let out = host.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let (mut shell, mut esc, mut holder) = (None, None, None);
    let until = Instant::now() + Duration::from_secs(10);
    while shell.is_none() || esc.is_none() || (how == Host::HoldingThePipe && holder.is_none()) {
        let line = rx
            .recv_timeout(until.saturating_duration_since(Instant::now()))
            .expect("the host printed its pids");
        let pid = |p: &str| line.strip_prefix(p)?.trim().parse::<i32>().ok();
        shell = shell.or_else(|| pid("sh "));
        esc = esc.or_else(|| pid("esc "));
        holder = holder.or_else(|| pid("holder "));
    }
    let _holder = KillOnDrop::of(holder);
    let tickers = KillOnDrop::of([shell.unwrap(), esc.unwrap()]);
    let [shell, esc] = tickers.0[..] else {
        panic!("a ticker ended before the kill: {:?}", tickers.0);
    };
    let side = dir.path().join("side.txt");
    let stamped = |tag: &str| {
        fs_err::read_to_string(&side)
            .unwrap_or_default()
            .lines()
            .any(|l| l.starts_with(tag))
    };
    while !(stamped("s ") && stamped("e ")) {
        assert!(Instant::now() < until, "the tickers never stamped");
        std::thread::sleep(Duration::from_millis(5));
    }
    std::thread::sleep(Duration::from_millis(20));
    host.kill().unwrap();
    host.wait().unwrap();
    let dead = now_us();
    // The shell must die; the escapee too, when there is a watchdog.
    let mortal: &[(i32, u64)] = match how {
        Host::Alone => &[shell],
        Host::HoldingThePipe => &[shell, esc],
    };
    let until = Instant::now() + Duration::from_secs(10);
    while mortal.iter().any(runs) {
        assert!(
            Instant::now() < until,
            "{how:?}: a ticker outlived its host by 10 s"
        );
        std::thread::sleep(Duration::from_micros(200));
    }
    std::thread::sleep(Duration::from_millis(200));
    let esc_survived = runs(&esc);
    let text = fs_err::read_to_string(&side).unwrap();
    let stamps = |tag: &str| -> Vec<i64> {
        text.lines()
            .filter_map(|l| l.strip_prefix(tag))
            .filter_map(|t| {
                let (s, us) = t.trim().split_once('.')?;
                Some(s.parse::<i64>().ok()? * 1_000_000 + us.parse::<i64>().ok()? - dead)
            })
            .collect()
    };
    let (s, e) = (stamps("s "), stamps("e "));
    Killed {
        shell_after: s.iter().filter(|&&t| t > 0).count(),
        esc_late: e.iter().filter(|&&t| t > GRANDCHILD_MARGIN_US).count(),
        shell_last: s.iter().copied().max().unwrap(),
        esc_last: e.iter().copied().max().unwrap(),
        esc_survived,
    }
}

/// Without any watchdog, the shell dies with its host (its death signal), never stamping a line
/// after the host's death. The escapee is left to whatever ends a dead host's runs on this
/// machine: the test kills it, unless a `planhost serve` starting meanwhile swept it first.
#[test]
fn a_runs_shell_dies_with_its_host_even_without_a_watchdog() {
    for round in 0..3 {
        let k = kill_host(Host::Alone);
        eprintln!(
            "alone, kill {round}: last stamps {} µs (shell), {} µs (escapee) after the death; \
             escapee still running 200 ms later: {}",
            k.shell_last, k.esc_last, k.esc_survived
        );
        assert_eq!(k.shell_after, 0, "the shell ran after its host died: {k:?}");
    }
}

/// With the watchdog's pipe held open past the host's death, the watchdog is woken by its own
/// death signal and ends the escapee too.
#[test]
fn the_watchdog_ends_a_killed_hosts_runs_though_its_pipe_stays_open() {
    for round in 0..3 {
        let k = kill_host(Host::HoldingThePipe);
        eprintln!(
            "holding the pipe, kill {round}: last stamps {} µs (shell), {} µs (escapee) after \
             the death",
            k.shell_last, k.esc_last
        );
        assert_eq!(k.shell_after, 0, "the shell ran after its host died: {k:?}");
        assert!(!k.esc_survived, "the escapee outlived its host: {k:?}");
        assert_eq!(
            k.esc_late, 0,
            "the escapee ran more than {GRANDCHILD_MARGIN_US} µs after its host died: {k:?}"
        );
    }
}

//! The browser scenarios: `node browser/scenarios.mjs NAME` (playwright-core driving Debian's
//! Chromium, or the one npm ships on a machine without it) as a child speaking JSON lines, one at a time, each within its [`Budget`].

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::{Budget, Captured, Group, SCENARIO_CAP, WebHost, poll_until, run_bounded};

/// What the browser scenarios need: node, Chromium and the installed browser package.
#[derive(Debug, Clone)]
struct Tools {
    chromium: PathBuf,
    /// Libraries the npm Chromium needs (its `LD_LIBRARY_PATH`); none for a system Chromium.
    library_path: Option<PathBuf>,
    dir: PathBuf,
}

/// The browser package (package.json, package-lock.json, the scenario scripts).
fn browser_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/web/browser")
}

/// Chromium: `$CHROMIUM`, else Debian's `/usr/lib/chromium/chromium` or `/usr/bin/chromium`,
/// else the one `@sparticuz/chromium` ships on npm (pinned in the browser package's lock file,
/// unpacked with the libraries a bare machine lacks), so the README's test command needs no
/// root and no apt step. The second of the pair is the npm Chromium's library path.
fn find_chromium(dir: &Path) -> Result<(PathBuf, Option<PathBuf>), String> {
    match system_chromium() {
        Ok(Some(path)) => Ok((path, None)),
        Err(e) => Err(e),
        Ok(None) => npm_chromium(dir),
    }
}

/// The npm Chromium, unpacked by `browser/chromium.mjs`.
fn npm_chromium(dir: &Path) -> Result<(PathBuf, Option<PathBuf>), String> {
    let out = run_bounded(
        Command::new("node")
            .arg("chromium.mjs")
            .current_dir(dir)
            .env_remove("NODE_OPTIONS"),
        Duration::from_secs(120),
        "unpacking the npm Chromium (browser/chromium.mjs)",
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let found: Value = serde_json::from_str(text.trim()).map_err(|e| {
        format!(
            "no system Chromium, and the npm one did not unpack ({e}): {}{}; install Debian's \
             (`apt-get install -y --no-install-recommends chromium`) or set CHROMIUM",
            text,
            String::from_utf8_lossy(&out.stderr)
        )
    })?;
    let path = found["executablePath"]
        .as_str()
        .map(PathBuf::from)
        .filter(|p| p.is_file())
        .ok_or_else(|| format!("the npm Chromium is not where it says: {found}"))?;
    eprintln!(
        "browser tests: no system Chromium; using the npm one at {}",
        path.display()
    );
    Ok((path, found["libraryPath"].as_str().map(PathBuf::from)))
}

/// `$CHROMIUM`, Debian's package, or none.
fn system_chromium() -> Result<Option<PathBuf>, String> {
    // `PLANHOST_NPM_CHROMIUM=1` tries the npm Chromium on a machine that has another.
    if std::env::var("PLANHOST_NPM_CHROMIUM").as_deref() == Ok("1") {
        return Ok(None);
    }
    if let Some(path) = std::env::var_os("CHROMIUM").filter(|p| !p.is_empty()) {
        let path = PathBuf::from(path);
        return if path.is_file() {
            Ok(Some(path))
        } else {
            Err(format!(
                "CHROMIUM={} is not a file; unset it to use Debian's package \
                 (`apt-get install -y --no-install-recommends chromium`)",
                path.display()
            ))
        };
    }
    Ok(["/usr/lib/chromium/chromium", "/usr/bin/chromium"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.is_file()))
}

/// The machine's node, which must be >= 20 (playwright-core's floor; pi 0.73's e2e tests use
/// the same node).
fn check_node() -> Result<(), String> {
    let out = Command::new("node")
        .arg("--version")
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("the browser tests need node >= 20 on PATH: {e}"))?;
    let version = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    let major: u32 = version
        .trim_start_matches('v')
        .split('.')
        .next()
        .and_then(|m| m.parse().ok())
        .unwrap_or(0);
    if major >= 20 {
        Ok(())
    } else {
        Err(format!(
            "the browser tests need node >= 20; `node --version` says {version:?}"
        ))
    }
}

/// The packages the browser package pins (installed by `npm ci` on first use, see
/// [`planhost_test_support::npm_ci`]).
const PINNED: [&str; 2] = ["playwright-core", "@sparticuz/chromium"];

fn tools() -> Tools {
    static TOOLS: OnceLock<Result<Tools, String>> = OnceLock::new();
    TOOLS
        .get_or_init(|| {
            check_node()?;
            let dir = browser_dir();
            planhost_test_support::npm_ci::ensure(
                &dir,
                &PINNED,
                &[("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1")],
            )?;
            let (chromium, library_path) = find_chromium(&dir)?;
            Ok(Tools {
                chromium,
                library_path,
                dir,
            })
        })
        .clone()
        .unwrap_or_else(|e| panic!("{e}"))
}

/// One browser at a time: the machines have few cores, and each scenario's 30 s is its own.
static SLOT: Mutex<()> = Mutex::new(());

/// The start of a browser scenario: the tools ready (installed once, outside any scenario's
/// budget), this test's turn at the browser, then its budget.
pub(crate) fn browser_scenario() -> (MutexGuard<'static, ()>, Budget) {
    let _ = tools();
    let slot = SLOT.lock().unwrap_or_else(PoisonError::into_inner);
    (slot, Budget::start())
}

/// Where screenshots go when `PLANHOST_SCREENSHOTS=1`: `docs/screenshots/`.
fn screenshot_dir() -> Option<PathBuf> {
    if std::env::var("PLANHOST_SCREENSHOTS").as_deref() != Ok("1") {
        return None;
    }
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/screenshots");
    fs_err::create_dir_all(&dir).expect("create docs/screenshots");
    Some(dir.canonicalize().unwrap_or(dir))
}

/// A running browser scenario (`node scenarios.mjs NAME`), speaking JSON lines.
#[derive(Debug)]
pub(crate) struct Browser {
    scenario: String,
    child: Group,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    /// Lines that were not JSON (kept for failure messages).
    other: Vec<String>,
    stderr: Captured,
    host_stderr: Captured,
    budget: Budget,
}

impl Browser {
    /// Starts scenario `name` of `scenarios.mjs` against `host` with `input`.
    pub(crate) fn start(host: &WebHost, name: &str, input: Value) -> Self {
        let budget = &host.budget;
        let tools = tools();
        let left = budget.left("the browser started");
        let mut cmd = Command::new("node");
        cmd.arg("scenarios.mjs")
            .arg(name)
            .current_dir(&tools.dir)
            .env("PLANHOST_WEB_URL", &host.url)
            .env("PLANHOST_WEB_TOKEN", &host.token)
            .env("CHROMIUM", &tools.chromium)
            .env("PLANHOST_E2E_INPUT", input.to_string())
            .env(
                "PLANHOST_E2E_BUDGET_MS",
                left.saturating_sub(Duration::from_secs(2))
                    .as_millis()
                    .to_string(),
            )
            .env_remove("NODE_OPTIONS")
            .env_remove("PLANHOST_SCREENSHOT_DIR")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if let Some(dir) = screenshot_dir() {
            cmd.env("PLANHOST_SCREENSHOT_DIR", dir);
        }
        if let Some(libraries) = &tools.library_path {
            cmd.env("LD_LIBRARY_PATH", libraries);
        }
        let mut child = Group::spawn(&mut cmd, "node scenarios.mjs");
        let stdin = child.0.stdin.take();
        let stderr = Captured::spawn(child.0.stderr.take().expect("stderr"));
        let stdout = child.0.stdout.take().expect("stdout");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Self {
            scenario: name.to_owned(),
            child,
            stdin,
            lines,
            other: Vec::new(),
            stderr,
            host_stderr: host.stderr.clone(),
            budget: *budget,
        }
    }

    fn failure(&mut self, why: &str) -> ! {
        let status = self.child.0.try_wait().ok().flatten();
        panic!(
            "browser scenario {}: {why}\nnode's exit: {status:?}\nnode's other stdout:\n{}\nnode's stderr:\n{}\nthe host's stderr:\n{}",
            self.scenario,
            self.other.join("\n"),
            self.stderr.text(),
            self.host_stderr.text()
        );
    }

    /// The next JSON line: a checkpoint or the result. An `error` line fails the test.
    fn next(&mut self) -> Value {
        loop {
            let left = self
                .budget
                .deadline()
                .saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => match serde_json::from_str::<Value>(&line) {
                    Ok(value) if value.is_object() => {
                        if let Some(error) = value.get("error") {
                            let error = error.as_str().unwrap_or_default().to_owned();
                            self.failure(&format!("failed in the browser:\n{error}"));
                        }
                        return value;
                    }
                    _ => self.other.push(line),
                },
                Err(RecvTimeoutError::Timeout) => {
                    self.failure(&format!("no answer within the scenario's {SCENARIO_CAP:?}"))
                }
                Err(RecvTimeoutError::Disconnected) => {
                    // Let the exit status settle for the message.
                    std::thread::sleep(Duration::from_millis(100));
                    self.failure("node ended without a result");
                }
            }
        }
    }

    /// Waits until the page reports checkpoint `name`; returns its data. The page waits until
    /// [`Browser::resume`].
    pub(crate) fn checkpoint(&mut self, name: &str) -> Value {
        let value = self.next();
        if value["checkpoint"] != name {
            self.failure(&format!("expected checkpoint {name:?}, got {value}"));
        }
        value
    }

    /// Lets the page go on after a checkpoint, handing it `answer` (a JSON object).
    pub(crate) fn resume(&mut self, answer: &Value) {
        let stdin = self.stdin.as_mut().expect("stdin");
        stdin
            .write_all(format!("{answer}\n").as_bytes())
            .expect("write to the scenario");
        stdin.flush().expect("flush the scenario's stdin");
    }

    /// The scenario's result (it must exit 0).
    pub(crate) fn result(mut self) -> Value {
        let value = self.next();
        let Some(result) = value.get("result").cloned() else {
            self.failure(&format!("expected the result, got {value}"));
        };
        self.stdin.take();
        let bound = self.budget.at_most(Duration::from_secs(5), "node exited");
        let status = poll_until("node to exit", bound, || {
            self.child.0.try_wait().expect("try_wait")
        });
        if !status.success() {
            self.failure(&format!("exited with {status} after its result"));
        }
        result
    }
}

/// Runs a scenario without checkpoints and returns its result.
pub(crate) fn run_scenario(host: &WebHost, name: &str, input: Value) -> Value {
    Browser::start(host, name, input).result()
}

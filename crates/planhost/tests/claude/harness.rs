//! One test's world: a temporary home (Claude Code's `HOME` with its `~/.claude`), planhost's
//! state directory and socket, a workspace, the scripted model, and Claude Code itself.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use planhost_test_support::host::{Home, Served};
use planhost_test_support::{ClaudeInstall, ModelServer, ensure_claude};
use serde_json::Value;

/// The binary under test.
pub(crate) fn planhost_bin() -> &'static str {
    env!("CARGO_BIN_EXE_planhost")
}

/// The small hook binary `planhost setup` writes into the settings when it is beside planhost.
pub(crate) fn hook_bin() -> &'static str {
    env!("CARGO_BIN_EXE_planhost-hook")
}

/// How long one `claude -p` run may take.
const RUN_BOUND: Duration = Duration::from_secs(90);

pub(crate) struct Fixture {
    pub(crate) claude: ClaudeInstall,
    pub(crate) model: ModelServer,
    pub(crate) dirs: Home,
}

impl Fixture {
    pub(crate) fn new() -> Self {
        let claude = ensure_claude();
        let model = ModelServer::start().expect("model server");
        let dirs = Home::with_prefix(planhost_bin(), "phcc");
        fs_err::create_dir_all(dirs.root().join("home")).unwrap();
        Self {
            claude,
            model,
            dirs,
        }
    }

    /// Claude Code's `HOME`.
    pub(crate) fn home(&self) -> PathBuf {
        self.dirs.root().join("home")
    }

    /// The user-scope settings file.
    pub(crate) fn settings(&self) -> PathBuf {
        self.home().join(".claude/settings.json")
    }

    pub(crate) fn workspace(&self) -> PathBuf {
        self.dirs.workspace()
    }

    /// `planhost <args>` with this fixture's state directory, socket and `HOME`.
    pub(crate) fn planhost(&self, args: &[&str]) -> Output {
        self.planhost_at(Path::new(planhost_bin()), args)
    }

    /// The same with another copy of the binary.
    pub(crate) fn planhost_at(&self, bin: &Path, args: &[&str]) -> Output {
        let mut cmd = Command::new(bin);
        cmd.arg("--state-dir")
            .arg(self.dirs.state_dir())
            .arg("--socket")
            .arg(self.dirs.socket())
            .args(args)
            .env("HOME", self.home())
            .env_remove("PLANHOST_STATE_DIR")
            .env_remove("PLANHOST_SOCKET")
            .current_dir(self.workspace())
            .stdin(Stdio::null());
        cmd.output().expect("run planhost")
    }

    /// `planhost setup claude-code` (user scope), which must succeed.
    pub(crate) fn setup(&self) {
        let out = self.planhost(&["setup", "claude-code"]);
        assert!(out.status.success(), "setup: {}", text(&out));
    }

    /// `claude -p <prompt>` in the workspace, headless, with stream-json output; Claude Code
    /// reaches planhost through the hooks, with planhost's state directory and socket in its
    /// environment.
    pub(crate) fn claude(&self, prompt: &str, extra: &[&str]) -> Run {
        let mut args = vec![prompt];
        args.extend_from_slice(extra);
        self.claude_args(&args)
    }

    /// `claude -p <args…>` (a prompt, if any, among them).
    pub(crate) fn claude_args(&self, args: &[&str]) -> Run {
        self.claude_in(args, &[])
    }

    /// The same with more environment (another `HOME`, another `PATH`).
    pub(crate) fn claude_in(&self, args: &[&str], env: &[(&str, String)]) -> Run {
        let mut cmd = self.claude.command();
        cmd.arg("-p")
            .args(args)
            .args(["--output-format", "stream-json", "--verbose"])
            .env("HOME", self.home())
            .env("ANTHROPIC_BASE_URL", self.model.anthropic_url())
            .env("ANTHROPIC_API_KEY", "scripted")
            .env("PLANHOST_STATE_DIR", self.dirs.state_dir())
            .env("PLANHOST_SOCKET", self.dirs.socket())
            .current_dir(self.workspace())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let out = planhost_test_support::run_detached(&cmd, RUN_BOUND);
        let events = out
            .stdout
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .collect();
        Run {
            code: out.code,
            events,
            stdout: out.stdout,
            stderr: out.stderr,
        }
    }

    /// The host the hooks started, adopted so that it is killed with the test.
    pub(crate) fn adopt_host(&self) -> Served {
        Served::adopt(&self.dirs.socket(), &self.dirs.state_dir())
    }
}

impl Drop for Fixture {
    /// The host Claude Code's hooks started (when a test did not adopt it) goes with the test:
    /// killed by the pid its lock file names, while it still holds that lock.
    fn drop(&mut self) {
        let lock = self.dirs.lock_file();
        if planhost_test_support::host::lock_held(&lock)
            && let Some(pid) = fs_err::read_to_string(&lock)
                .ok()
                .and_then(|t| t.trim().parse::<i32>().ok())
                .and_then(rustix::process::Pid::from_raw)
        {
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
        }
    }
}

/// What one `claude -p` run printed.
#[derive(Debug)]
pub(crate) struct Run {
    pub(crate) code: Option<i32>,
    pub(crate) events: Vec<Value>,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
}

impl Run {
    /// The `tool_result` Claude Code gave the model for each tool call, in order.
    pub(crate) fn tool_results(&self) -> Vec<(String, bool)> {
        self.events
            .iter()
            .filter(|e| e["type"] == "user")
            .flat_map(|e| {
                e["message"]["content"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default()
            })
            .filter(|c| c["type"] == "tool_result")
            .map(|c| {
                let text = c["content"]
                    .as_str()
                    .map_or_else(|| c["content"].to_string(), str::to_owned);
                (text, c["is_error"].as_bool().unwrap_or(false))
            })
            .collect()
    }

    /// Everything, for a failure message.
    pub(crate) fn dump(&self) -> String {
        format!(
            "exit {:?}\nstdout:\n{}\nstderr:\n{}",
            self.code, self.stdout, self.stderr
        )
    }
}

pub(crate) fn text(out: &Output) -> String {
    format!(
        "{}\nstdout:\n{}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// What an Anthropic Messages request asks the model: the tool calls it has seen answered
/// (name and result text, in order), and the plan file Claude Code named in plan mode.
#[derive(Debug, Clone)]
pub(crate) struct Asked {
    pub(crate) results: Vec<(String, String)>,
    pub(crate) plan_file: Option<String>,
    /// The text the person typed last, and whether it is still unanswered (no assistant message
    /// after it).
    pub(crate) last_user: Option<(String, bool)>,
}

impl Asked {
    pub(crate) fn of(request: &planhost_test_support::ChatRequest) -> Self {
        let messages = request.messages();
        let mut names = std::collections::HashMap::new();
        let mut results = Vec::new();
        for message in messages {
            for block in message["content"].as_array().into_iter().flatten() {
                match block["type"].as_str() {
                    Some("tool_use") => {
                        names.insert(
                            block["id"].as_str().unwrap_or_default().to_owned(),
                            block["name"].as_str().unwrap_or_default().to_owned(),
                        );
                    }
                    Some("tool_result") => {
                        let name = names
                            .get(block["tool_use_id"].as_str().unwrap_or_default())
                            .cloned()
                            .unwrap_or_default();
                        let text = block["content"].as_str().map_or_else(
                            || {
                                block["content"]
                                    .as_array()
                                    .into_iter()
                                    .flatten()
                                    .filter_map(|p| p["text"].as_str())
                                    .collect::<Vec<_>>()
                                    .join("\n")
                            },
                            str::to_owned,
                        );
                        results.push((name, text));
                    }
                    _ => {}
                }
            }
        }
        let typed = |m: &Value| {
            m["role"] == "user"
                && match &m["content"] {
                    Value::String(_) => true,
                    Value::Array(blocks) => blocks.iter().all(|b| b["type"] == "text"),
                    Value::Null | Value::Bool(_) | Value::Number(_) | Value::Object(_) => false,
                }
        };
        let last_user = messages
            .iter()
            .enumerate()
            .rev()
            .find(|(_, m)| typed(m))
            .map(|(i, m)| {
                let text = m["content"].as_str().map_or_else(
                    || {
                        m["content"]
                            .as_array()
                            .into_iter()
                            .flatten()
                            .filter_map(|b| b["text"].as_str())
                            .collect::<Vec<_>>()
                            .join("\n")
                    },
                    str::to_owned,
                );
                // Unanswered when no assistant message follows it (Claude Code may put a
                // `system` message last).
                let answered = messages[i + 1..].iter().any(|m| m["role"] == "assistant");
                (text, !answered)
            });
        let body = request.body.to_string();
        let plan_file = ["create your plan at ", "plan file exists at "]
            .iter()
            .find_map(|marker| {
                let at = body.find(marker)? + marker.len();
                let rest = &body[at..];
                let end = rest.find(".md")? + 3;
                Some(rest[..end].to_owned())
            });
        Self {
            results,
            plan_file,
            last_user,
        }
    }

    /// The text of the last result of `tool`, if any.
    pub(crate) fn last_of(&self, tool: &str) -> Option<&str> {
        self.results
            .iter()
            .rev()
            .find(|(n, _)| n == tool)
            .map(|(_, t)| t.as_str())
    }
}

/// Numbers the tmux sessions of one test process.
static NEXT_TUI: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Claude Code's interactive TUI in a detached tmux session of its own, read with
/// `capture-pane` and typed into with `send-keys`, as a person would. Killed on drop.
pub(crate) struct Tui {
    name: String,
    /// Claude Code's pid (the pane's process: it is exec'd).
    pid: Option<i32>,
}

impl Tui {
    /// Starts `claude <args>` in the workspace with this fixture's environment, past the
    /// first-run screens (onboarding, folder trust, the API key) that a person answers once.
    pub(crate) fn start(fx: &Fixture, args: &[&str]) -> Self {
        let key = "scripted-key-for-planhost-e2e";
        let tail: String = key
            .chars()
            .rev()
            .take(20)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        let state = serde_json::json!({
            "hasCompletedOnboarding": true,
            "theme": "dark",
            "customApiKeyResponses": { "approved": [tail], "rejected": [] },
            "projects": { fx.workspace().display().to_string(): {
                "hasTrustDialogAccepted": true, "hasCompletedProjectOnboarding": true } },
        });
        fs_err::write(fx.home().join(".claude.json"), state.to_string()).unwrap();
        let name = format!(
            "phcc-{}-{}",
            std::process::id(),
            NEXT_TUI.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        );
        let mut env = vec![
            ("HOME".to_owned(), fx.home().display().to_string()),
            ("ANTHROPIC_BASE_URL".to_owned(), fx.model.anthropic_url()),
            ("ANTHROPIC_API_KEY".to_owned(), key.to_owned()),
            (
                "PLANHOST_STATE_DIR".to_owned(),
                fx.dirs.state_dir().display().to_string(),
            ),
            (
                "PLANHOST_SOCKET".to_owned(),
                fx.dirs.socket().display().to_string(),
            ),
            ("DISABLE_AUTOUPDATER".to_owned(), "1".to_owned()),
            ("DISABLE_TELEMETRY".to_owned(), "1".to_owned()),
            (
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC".to_owned(),
                "1".to_owned(),
            ),
        ];
        env.push(("TERM".to_owned(), "xterm-256color".to_owned()));
        let mut line = String::from("exec env -u CLAUDECODE");
        for (k, v) in &env {
            line.push_str(&format!(" {k}='{v}'"));
        }
        line.push_str(&format!(" '{}'", fx.claude.bin.display()));
        for arg in args {
            line.push_str(&format!(" '{arg}'"));
        }
        let out = Command::new("tmux")
            .args([
                "new-session",
                "-d",
                "-s",
                &name,
                "-x",
                "160",
                "-y",
                "50",
                "-c",
            ])
            .arg(fx.workspace())
            .arg(&line)
            .output()
            .expect("tmux (the TUI tests drive Claude Code in tmux: apt-get install tmux)");
        assert!(out.status.success(), "tmux new-session: {}", text(&out));
        let pid = Command::new("tmux")
            .args(["display-message", "-p", "-t", &name, "#{pane_pid}"])
            .output()
            .ok()
            .and_then(|o| String::from_utf8_lossy(&o.stdout).trim().parse().ok());
        let tui = Self { name, pid };
        tui.wait_for("the prompt", |s| {
            s.contains("plan mode on")
                || s.contains("? for shortcuts")
                || s.contains("accept edits on")
        });
        tui
    }

    /// What the screen shows now.
    pub(crate) fn screen(&self) -> String {
        let out = Command::new("tmux")
            .args(["capture-pane", "-p", "-J", "-S", "-200", "-t", &self.name])
            .output()
            .expect("tmux capture-pane");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Waits (bounded) until the screen satisfies `pred`; the panic shows the screen.
    pub(crate) fn wait_for(&self, what: &str, pred: impl Fn(&str) -> bool) -> String {
        let deadline = std::time::Instant::now() + RUN_BOUND;
        loop {
            let screen = self.screen();
            if pred(&screen) {
                return screen;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "Claude Code's screen never showed {what}:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Types `line` and presses Enter.
    pub(crate) fn type_line(&self, line: &str) {
        let send = |args: &[&str]| {
            let out = Command::new("tmux")
                .arg("send-keys")
                .arg("-t")
                .arg(&self.name)
                .args(args)
                .output()
                .expect("tmux send-keys");
            assert!(out.status.success(), "tmux send-keys: {}", text(&out));
        };
        send(&["-l", line]);
        std::thread::sleep(Duration::from_millis(300));
        send(&["Enter"]);
    }

    /// Presses a key (`Escape`, …), then lets the terminal settle: a character typed right
    /// after Escape would arrive as Alt+that character.
    pub(crate) fn key(&self, key: &str) {
        let _ = Command::new("tmux")
            .args(["send-keys", "-t", &self.name, key])
            .output();
        std::thread::sleep(Duration::from_millis(800));
    }
}

impl Drop for Tui {
    /// Ends the session and waits for Claude Code to be gone: its `SessionEnd` hook runs as it
    /// exits and may start a host, which the fixture then stops.
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["kill-session", "-t", &self.name])
            .output();
        if let Some(pid) = self.pid {
            let deadline = std::time::Instant::now() + Duration::from_secs(10);
            while std::time::Instant::now() < deadline
                && fs_err::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|st| {
                    !st.rsplit(')')
                        .next()
                        .is_some_and(|r| r.trim_start().starts_with('Z'))
                })
            {
                std::thread::sleep(Duration::from_millis(50));
            }
        }
    }
}

//! Bash: one command in the turn's pinned shell, in the workspace root, with a clean
//! environment, its output streamed and its process tree bounded by exec's runner.

use planhost_core::BashResult;
use planhost_exec::{
    CommandSpec, ExitStatus, OutputChunk, PinnedShell, Platform, ProbeResults, RunResult, ShellId,
    StreamSummary, Timeout, probe, resolve_pinned, run,
};
use serde::{Deserialize, Serialize};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::bash_env::{bash_env, host_var};
use crate::context::ToolContext;
use crate::error::{Result, ToolError};

/// `Bash { command, timeoutMs?, expectedShellId?, description? }`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BashRequest {
    /// The command text, passed to the shell as one argument.
    pub command: String,
    /// Timeout in milliseconds: absent means exactly 60,000; explicit values must be in
    /// 1,000..=300,000 (`COMMAND_TIMEOUT_INVALID`).
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    /// The shell id the runtime believes the turn is pinned to. Absent means the pin itself,
    /// which is still checked against the catalog.
    #[serde(default)]
    pub expected_shell_id: Option<String>,
    /// A short human description for the UI; it does not affect execution.
    #[serde(default)]
    pub description: Option<String>,
}

/// Where the catalog comes from when Bash re-resolves it just before spawn.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum ShellCatalog {
    /// Probe this machine again on every call (seed 000 §8: the current catalog).
    #[default]
    Host,
    /// A fixed probe result: lets tests make a shell disappear between pin and spawn.
    Fixed {
        /// The platform whose catalog applies.
        platform: Platform,
        /// What the probe "found".
        probes: ProbeResults,
    },
}

impl ShellCatalog {
    fn resolve(&self) -> (Platform, ProbeResults) {
        match self {
            Self::Host => (Platform::current(), probe()),
            Self::Fixed { platform, probes } => (*platform, probes.clone()),
        }
    }
}

/// What the caller knows about the turn's shell: the pin taken at turn launch and the session's
/// configured id (the input of the fallback rule).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShellPinContext {
    pinned: PinnedShell,
    configured: Option<ShellId>,
    catalog: ShellCatalog,
}

impl ShellPinContext {
    /// A context that re-probes this machine before each spawn.
    pub fn new(pinned: PinnedShell, configured: Option<ShellId>) -> Self {
        Self {
            pinned,
            configured,
            catalog: ShellCatalog::Host,
        }
    }

    /// The same context resolving against `catalog` instead.
    #[must_use]
    pub fn with_catalog(mut self, catalog: ShellCatalog) -> Self {
        self.catalog = catalog;
        self
    }

    /// The turn's pin.
    pub fn pinned(&self) -> PinnedShell {
        self.pinned
    }

    /// The session's configured shell id, if any.
    pub fn configured(&self) -> Option<ShellId> {
        self.configured
    }
}

/// Runs Bash, streaming output chunks to `events` as they arrive.
///
/// Everything is validated before anything is spawned, in this order: the timeout
/// (`COMMAND_TIMEOUT_INVALID`), the command text (`TOOL_INVALID_INPUT`), the expected id
/// (`COMMAND_SHELL_INVALID` when it is not a catalog id), then the catalog is resolved again and
/// compared with the pin and the expected id (`SHELL_NOT_FOUND`, `COMMAND_SHELL_CHANGED`).
/// A token already cancelled spawns nothing and reports `cancelled`. Once running, timeout and
/// cancellation end the whole process tree before this returns.
pub async fn bash(
    ctx: &ToolContext,
    request: &BashRequest,
    shell: &ShellPinContext,
    events: mpsc::Sender<OutputChunk>,
    cancel: CancellationToken,
) -> Result<BashResult> {
    let timeout = Timeout::from_request(request.timeout_ms).map_err(ToolError::from_exec)?;
    if request.command.trim().is_empty() {
        return Err(ToolError::invalid("command must not be empty"));
    }
    if request.command.contains('\0') {
        return Err(ToolError::invalid("command contains NUL"));
    }
    let expected = match &request.expected_shell_id {
        Some(id) => planhost_exec::parse_shell_id(id).map_err(ToolError::from_exec)?,
        None => shell.pinned.id,
    };
    let (platform, probes) = shell.catalog.resolve();
    let effective = resolve_pinned(platform, &probes, shell.configured, &shell.pinned, expected)
        .map_err(ToolError::from_exec)?;
    let (shell_id, dialect) = (effective.id, effective.dialect);
    let result = |run| BashResult {
        shell_id,
        dialect,
        timeout_ms: timeout.as_millis(),
        run,
    };
    if cancel.is_cancelled() {
        return Ok(result(not_started()));
    }

    let mut spec = CommandSpec::new(effective, request.command.as_str(), ctx.workspace().root());
    spec.env = bash_env(host_var);
    let extra = ctx.bash_extra_env();
    spec.env
        .retain(|(name, _)| !extra.iter().any(|(n, _)| n == name));
    spec.env.extend(extra.iter().cloned());
    spec.timeout = timeout;
    let run = run(spec, events, cancel)
        .await
        .map_err(ToolError::from_exec)?;
    Ok(result(run))
}

/// A shell command an agent's hook routed through the host (`agent.run`): it runs in the
/// agent's working directory with the agent's environment (planhost adds its run marker, and
/// for a command it admitted unasked, `extra_env` last), in the turn's pinned shell, bounded by
/// the agent's own timeout, its whole process tree killed on timeout and cancel and what it
/// leaves behind reaped when it ends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoutedRun {
    /// The command text, exactly as allowed.
    pub command: String,
    /// The agent's working directory: absolute and existing.
    pub cwd: std::path::PathBuf,
    /// The agent's environment.
    pub env: Vec<(String, String)>,
    /// Added after `env`, overriding it (planhost's git rules for a command admitted unasked).
    pub extra_env: Vec<(String, String)>,
    /// The bound.
    pub timeout: Timeout,
}

/// Runs a routed shell command, streaming its output to `events`.
pub async fn bash_routed(
    run_spec: &RoutedRun,
    shell: &ShellPinContext,
    events: mpsc::Sender<OutputChunk>,
    cancel: CancellationToken,
) -> Result<BashResult> {
    if run_spec.command.trim().is_empty() {
        return Err(ToolError::invalid("command must not be empty"));
    }
    if run_spec.command.contains('\0') {
        return Err(ToolError::invalid("command contains NUL"));
    }
    let (platform, probes) = shell.catalog.resolve();
    let effective = resolve_pinned(
        platform,
        &probes,
        shell.configured,
        &shell.pinned,
        shell.pinned.id,
    )
    .map_err(ToolError::from_exec)?;
    let (shell_id, dialect) = (effective.id, effective.dialect);
    let result = |run| BashResult {
        shell_id,
        dialect,
        timeout_ms: run_spec.timeout.as_millis(),
        run,
    };
    if cancel.is_cancelled() {
        return Ok(result(not_started()));
    }
    let mut spec = CommandSpec::new(effective, run_spec.command.as_str(), run_spec.cwd.clone());
    let overridden = |name: &str| {
        name == planhost_exec::RUN_MARKER_VAR || run_spec.extra_env.iter().any(|(n, _)| n == name)
    };
    spec.env = run_spec
        .env
        .iter()
        .filter(|(name, _)| !overridden(name))
        .cloned()
        .chain(run_spec.extra_env.iter().cloned())
        .collect();
    spec.timeout = run_spec.timeout;
    let run = run(spec, events, cancel)
        .await
        .map_err(ToolError::from_exec)?;
    Ok(result(run))
}

/// The result of a call cancelled before its spawn: nothing ran, nothing was printed.
fn not_started() -> RunResult {
    RunResult {
        exit: ExitStatus::None,
        timed_out: false,
        cancelled: true,
        duration_ms: 0,
        stdout: StreamSummary::default(),
        stderr: StreamSummary::default(),
    }
}

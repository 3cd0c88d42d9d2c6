//! What the runner is asked to do and what it reports back.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::shell::EffectiveShell;
use crate::timeout::Timeout;

/// One command to run.
#[derive(Debug, Clone)]
pub struct CommandSpec {
    /// The pinned, freshly verified shell (see [`crate::resolve_pinned`]).
    pub shell: EffectiveShell,
    /// The command text, given to the shell as one argument.
    pub command: String,
    /// The absolute working directory; it must exist.
    pub cwd: PathBuf,
    /// The complete environment: nothing is inherited from the host.
    pub env: Vec<(String, String)>,
    /// The validated timeout.
    pub timeout: Timeout,
    /// What happens to descendants still running when the shell exits on its own.
    pub background: BackgroundPolicy,
    /// How the process tree is contained (tests pin the fallback path).
    pub containment: Containment,
}

impl CommandSpec {
    /// A spec with the default timeout, [`BackgroundPolicy::Reap`] and [`Containment::Auto`].
    pub fn new(shell: EffectiveShell, command: impl Into<String>, cwd: impl Into<PathBuf>) -> Self {
        Self {
            shell,
            command: command.into(),
            cwd: cwd.into(),
            env: Vec::new(),
            timeout: Timeout::default(),
            background: BackgroundPolicy::Reap,
            containment: Containment::Auto,
        }
    }
}

/// What happens to background descendants when the shell itself exits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum BackgroundPolicy {
    /// Terminate and reap them before returning (the default).
    #[default]
    Reap,
    /// Leave them running; output they write after the shell exits is not captured.
    Keep,
}

/// How the runner finds every process of a command on Linux.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Containment {
    /// A per-command cgroup v2 when the host may create one, plus the procfs walk.
    #[default]
    Auto,
    /// Only the child-subreaper plus procfs walk (what a host without cgroup delegation gets).
    ProcfsOnly,
}

/// Which pipe a chunk came from.
pub use planhost_core::OutputStream as Stream;

/// A piece of output, emitted as it arrives. Never splits a UTF-8 character.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OutputChunk {
    /// The source pipe.
    pub stream: Stream,
    /// Strictly increasing across both streams of one run, starting at 0.
    pub seq: u64,
    /// The decoded text; invalid bytes are U+FFFD.
    pub text: String,
}

/// How the shell ended, one stream's bounded summary, and the run's result: pure data, defined
/// in `planhost-core` (they travel in `tools.execute`'s output); the runner builds them.
pub use planhost_core::{ExitStatus, RunResult, StreamSummary};

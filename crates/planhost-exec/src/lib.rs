//! planhost's shell catalog and process runner.
//!
//! - The **catalog** ([`catalog`], [`validate_shell_setting`], [`effective_shell`],
//!   [`verify_pin`]) is pure: a function of the [`Platform`] and what [`probe`] found.
//! - The **runner** ([`run`]) starts one command in its own session, streams stdout and stderr as
//!   ordered [`OutputChunk`]s, enforces the [`Timeout`], and on timeout or cancellation ends the
//!   *whole* process tree — including descendants that left the process group — before it
//!   returns a bounded [`RunResult`].
//!
//! ```no_run
//! use planhost_exec::{CommandSpec, Platform, Timeout, effective_shell, probe, run};
//! use tokio_util::sync::CancellationToken;
//!
//! # async fn demo() -> planhost_exec::Result<()> {
//! let shell = effective_shell(Platform::current(), &probe(), None)?;
//! let mut spec = CommandSpec::new(shell, "echo hello; echo oops >&2", "/tmp");
//! spec.env = vec![("PATH".into(), "/usr/bin:/bin".into())];
//! spec.timeout = Timeout::from_request(Some(5_000))?;
//! let (tx, mut rx) = tokio::sync::mpsc::channel::<planhost_exec::OutputChunk>(64);
//! let printer = tokio::spawn(async move {
//!     while let Some(chunk) = rx.recv().await {
//!         eprintln!("{:?} #{}: {}", chunk.stream, chunk.seq, chunk.text);
//!     }
//! });
//! let result = run(spec, tx, CancellationToken::new()).await?;
//! printer.await.ok();
//! assert_eq!(result.stdout.kept, "hello\n");
//! # Ok(()) }
//! ```

mod args;
mod capture;
mod error;
mod probe;
mod pump;
mod runner;
mod shell;
mod spec;
mod sys;
mod timeout;
#[cfg(target_os = "linux")]
mod tree;
#[cfg(all(unix, not(target_os = "linux")))]
mod tree_pgroup;
mod utf8;

pub use args::{Arg, shell_args};
pub use capture::{HEAD_BYTES, TAIL_BYTES, elision_marker};
pub use error::{CwdInvalidReason, ExecError, Result, ShellInvalidReason};
pub use probe::{probe, probe_with_path};
pub use runner::{RUN_MARKER_VAR, run};
pub use shell::{
    Dialect, EffectiveShell, PinnedShell, Platform, ProbeResults, ShellId, ShellOption, catalog,
    effective_shell, parse_shell_id, resolve_pinned, validate_shell_setting, verify_pin,
};
pub use spec::{
    BackgroundPolicy, CommandSpec, Containment, ExitStatus, OutputChunk, RunResult, Stream,
    StreamSummary,
};
pub use timeout::Timeout;
#[cfg(target_os = "linux")]
pub use tree::lineage;
#[cfg(target_os = "linux")]
pub use tree::{
    HostIdentity, Leftovers, TERM_GRACE, WATCHDOG_VAR, Watchdog, Whose, claim_unmarked_orphans,
    kill_leftovers, watch_host,
};
#[cfg(all(unix, not(target_os = "linux")))]
pub use tree_pgroup::TERM_GRACE;

//! planhost's tools: Read, Glob, Grep, Write, Edit and Bash, bounded by the workspace root.
//!
//! Every path is resolved by [`planhost_fs::Workspace`]: canonicalised, kept inside the root,
//! with a symlink that leads out refused. Write and Edit go further and refuse any symlink on
//! their path, reaching the target through directory handles and replacing it atomically
//! (temp file in the same directory, fsync, rename, fsync). Glob and Grep walk through
//! directory handles too: each directory is opened with `O_NOFOLLOW` relative to its parent's
//! fd and listed through its own, so a directory swapped for a symlink mid-walk is skipped,
//! never listed or searched through. Requests and results are serde types with camelCase
//! fields, so a JSON-RPC `tools.execute` can take them off the wire; the results are
//! `planhost-core`'s (re-exported here), so the protocol types `tools.execute`'s output with
//! them. Errors carry a stable code ([`ToolError::code`]).
//!
//! Write and Edit also refuse the host's own plan files ([`RESERVED_DIRS`], `TOOL_PATH_RESERVED`).
//! [`bash`] runs one command through `planhost_exec` in the turn's pinned shell, with the
//! environment [`BASH_ENV`] and nothing else. [`execute`] is the wire entry point: a
//! [`HostTool`] and a JSON input in, the tool's result out as an [`ExecuteOutput`].
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use planhost_tools::{GrepMode, GrepOutput, GrepRequest, ReadRequest, ToolContext};
//!
//! let tmp = tempfile::tempdir()?;
//! std::fs::write(tmp.path().join("notes.txt"), "alpha\r\nbeta\r\n")?;
//! let ctx = ToolContext::new(planhost_fs::Workspace::new(tmp.path())?);
//!
//! let request: ReadRequest = serde_json::from_str(r#"{"path": "notes.txt", "offset": 2}"#)?;
//! let read = planhost_tools::read(&ctx, &request)?;
//! assert_eq!(read.content, "     2\tbeta\n");
//! assert_eq!(read.total_lines, 2);
//!
//! let grep = planhost_tools::grep(&ctx, &GrepRequest {
//!     pattern: "^al".into(),
//!     path: None,
//!     glob: None,
//!     mode: GrepMode::Files,
//!     context: None,
//!     context_before: None,
//!     context_after: None,
//!     case_insensitive: false,
//!     limit: None,
//! })?;
//! assert_eq!(grep.output, GrepOutput::Files { files: vec!["notes.txt".into()] });
//!
//! let outside = ReadRequest { path: "../etc/passwd".into(), offset: None, limit: None };
//! let err = planhost_tools::read(&ctx, &outside).unwrap_err();
//! assert_eq!(err.code().as_str(), "TOOL_PATH_OUTSIDE_WORKSPACE");
//! # Ok(())
//! # }
//! ```

mod bash;
mod bash_env;
mod context;
mod dispatch;
mod edit;
mod error;
pub mod git_guard;
mod glob;
mod grep;
mod grep_sink;
mod read;
mod reserved;
mod text;
mod walk;
mod write;

pub use bash::{BashRequest, RoutedRun, ShellCatalog, ShellPinContext, bash, bash_routed};
pub use bash_env::{BASH_ENV, EnvValue, bash_env};
pub use context::{OutsideAccess, ToolContext};
pub use dispatch::{execute, tool_by_name};
pub use edit::{EditRequest, detect_line_ending, edit};
pub use error::{Result, ToolError};
pub use glob::{GLOB_DEFAULT_LIMIT, GLOB_MAX_LIMIT, GlobRequest, glob};
pub use grep::{
    GREP_DEFAULT_LIMIT, GREP_MAX_COLLECT, GREP_MAX_CONTEXT, GREP_MAX_LIMIT, GrepMode, GrepRequest,
    grep,
};
pub use grep_sink::GREP_MAX_LINE_CHARS;
/// The tools' results: pure data, defined once in `planhost-core` so that `tools.execute`'s
/// output is typed on the wire (the protocol crate does not depend on this one).
pub use planhost_core::{
    BashResult, EditResult, ExecuteOutput, FileCount, GlobResult, GrepLine, GrepOutput, GrepResult,
    HostTool, LineEnding, LineKind, ReadResult, WriteOutcome, WriteResult,
};
pub use read::{
    READ_DEFAULT_LIMIT, READ_MAX_FILE_BYTES, READ_MAX_LINE_CHARS, READ_MAX_OUTPUT_BYTES,
    ReadRequest, read,
};
pub use reserved::RESERVED_DIRS;
pub use text::BINARY_SNIFF_BYTES;
pub use write::{WriteRequest, write};

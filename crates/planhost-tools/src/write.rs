//! Write: replace or create a whole file atomically, keeping its permission bits.

use planhost_core::{WriteOutcome, WriteResult};
use planhost_fs::{EntryKind, MissingDirs, Permissions, WorkspacePath};
use serde::{Deserialize, Serialize};

use crate::context::ToolContext;
use crate::error::{Access, Result, ToolError};

/// Permission bits carried over from a replaced file. setuid, setgid and sticky are dropped:
/// rewriting a file's content must not silently keep a privilege bit attached to new bytes.
pub(crate) const KEPT_PERMISSION_BITS: u32 = 0o777;

/// `Write { path, content }`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WriteRequest {
    /// Workspace-relative or absolute path inside the workspace.
    pub path: String,
    /// The complete new content, written byte for byte.
    pub content: String,
}

/// Runs Write.
pub fn write(ctx: &ToolContext, request: &WriteRequest) -> Result<WriteResult> {
    let path = ctx.resolve_write(&request.path)?;
    let outcome = write_bytes(ctx, &path, request.content.as_bytes())?;
    Ok(WriteResult {
        path: path.relative().to_owned(),
        bytes_written: request.content.len() as u64,
        outcome,
    })
}

/// Atomically puts `bytes` at `path`: every directory opened through symlink-refusing handles
/// (missing ones created), a temp file in the same directory written and fsynced, renamed over
/// the target, then the directory fsynced. An existing file keeps its permission bits.
pub(crate) fn write_bytes(
    ctx: &ToolContext,
    path: &WorkspacePath,
    bytes: &[u8],
) -> Result<WriteOutcome> {
    let fs_err = |e| ToolError::from_fs(e, Access::Write);
    if path.is_root() {
        return Err(ToolError::IsDirectory {
            path: ".".to_owned(),
        });
    }
    let names = path.names().map_err(fs_err)?;
    let (walked, leaf) = ctx
        .workspace()
        .open_parent(path, MissingDirs::Create)
        .map_err(fs_err)?;
    let shown = || path.relative().to_owned();
    let undo = |error: ToolError| {
        if let Ok(root) = ctx.workspace().open_root() {
            root.undo_created(&names[..names.len() - 1], walked.created_from);
        }
        error
    };
    let (permissions, outcome) = match walked.dir.entry(leaf).map_err(fs_err)? {
        None => (Permissions::UmaskDefault, WriteOutcome::Created),
        Some(entry) => match entry.kind {
            EntryKind::File => (
                Permissions::Exact(entry.permissions & KEPT_PERMISSION_BITS),
                WriteOutcome::Replaced,
            ),
            EntryKind::Directory => return Err(ToolError::IsDirectory { path: shown() }),
            EntryKind::Symlink => return Err(ToolError::SymlinkRefused { path: shown() }),
            EntryKind::Other => {
                return Err(ToolError::invalid(format!(
                    "not a regular file: {}",
                    shown()
                )));
            }
        },
    };
    walked
        .dir
        .replace_atomically(leaf, bytes, permissions)
        .map_err(|e| undo(fs_err(e)))?;
    Ok(outcome)
}

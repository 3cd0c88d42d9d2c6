//! The workspace a tool call runs in, and how its paths are resolved.

use std::fs::File;
use std::path::{Path, PathBuf};

use planhost_fs::{FsError, Workspace, WorkspacePath};

use crate::error::{Access, Result, ToolError};
use crate::reserved::is_reserved;

/// Whether paths outside the workspace may be read.
///
/// Planhost's permission layer decides this per call; the default is [`OutsideAccess::Deny`].
/// Write and Edit never act outside the workspace, whatever this says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OutsideAccess {
    /// An outside path fails with `TOOL_PATH_OUTSIDE_WORKSPACE`.
    #[default]
    Deny,
    /// Read, Glob and Grep may resolve an explicit absolute outside path (see
    /// [`planhost_fs::PathRequest::Outside`]). A symlink leading out is still refused.
    AllowReads,
}

/// Everything a tool call needs besides its request.
#[derive(Debug, Clone)]
pub struct ToolContext {
    workspace: Workspace,
    outside: OutsideAccess,
}

/// A path a read-only tool may look at.
#[derive(Debug, Clone)]
pub(crate) enum ReadTarget {
    Inside(WorkspacePath),
    Outside(PathBuf),
}

impl ReadTarget {
    pub(crate) fn absolute(&self) -> &Path {
        match self {
            Self::Inside(p) => p.absolute(),
            Self::Outside(p) => p,
        }
    }

    /// How results name this path: workspace-relative inside, absolute outside.
    pub(crate) fn display(&self) -> String {
        match self {
            Self::Inside(p) if p.is_root() => ".".to_owned(),
            Self::Inside(p) => p.relative().to_owned(),
            Self::Outside(p) => p.display().to_string(),
        }
    }
}

impl ToolContext {
    /// A context for `workspace` with outside access denied.
    pub fn new(workspace: Workspace) -> Self {
        Self {
            workspace,
            outside: OutsideAccess::Deny,
        }
    }

    /// The same context with a different outside-access decision.
    pub fn with_outside_access(mut self, outside: OutsideAccess) -> Self {
        self.outside = outside;
        self
    }

    /// The workspace.
    pub fn workspace(&self) -> &Workspace {
        &self.workspace
    }

    pub(crate) fn resolve_read(&self, requested: &str) -> Result<ReadTarget> {
        match self.workspace.resolve(requested) {
            Ok(p) => Ok(ReadTarget::Inside(p)),
            Err(FsError::OutsideWorkspace { path }) => match self.outside {
                OutsideAccess::Deny => Err(ToolError::OutsideWorkspace {
                    path: path.display().to_string(),
                }),
                OutsideAccess::AllowReads => self
                    .workspace
                    .resolve_outside(requested)
                    .map(|p| ReadTarget::Outside(p.absolute().to_path_buf()))
                    .map_err(|e| ToolError::from_fs(e, Access::Read)),
            },
            Err(e) => Err(ToolError::from_fs(e, Access::Read)),
        }
    }

    /// Resolves a Write/Edit target. The reserved-path check runs on the canonical path first,
    /// so a symlink into `.pi/plan` is reported as reserved rather than merely as a symlink; the
    /// write itself then walks exactly these components through symlink-refusing handles.
    pub(crate) fn resolve_write(&self, requested: &str) -> Result<WorkspacePath> {
        let write_err = |e| ToolError::from_fs(e, Access::Write);
        let canonical = self.workspace.resolve(requested).map_err(write_err)?;
        if is_reserved(&canonical) {
            return Err(ToolError::PathReserved {
                path: canonical.relative().to_owned(),
            });
        }
        self.workspace
            .resolve_for_write(requested)
            .map_err(write_err)
    }

    /// Opens a regular file for reading; inside the workspace every component goes through
    /// symlink-refusing handles.
    pub(crate) fn open_read(&self, target: &ReadTarget) -> Result<File> {
        match target {
            ReadTarget::Inside(p) => self
                .workspace
                .open_file(p)
                .map_err(|e| ToolError::from_fs(e, Access::Read)),
            ReadTarget::Outside(p) => {
                let meta = std::fs::metadata(p).map_err(|e| read_io(p, &e))?;
                if meta.is_dir() {
                    return Err(ToolError::IsDirectory {
                        path: p.display().to_string(),
                    });
                }
                if !meta.is_file() {
                    return Err(ToolError::invalid(format!(
                        "not a regular file: {}",
                        p.display()
                    )));
                }
                File::open(p).map_err(|e| read_io(p, &e))
            }
        }
    }

    /// Requires `target` to be an existing directory or file (for Glob and Grep roots).
    pub(crate) fn require_exists(&self, target: &ReadTarget) -> Result<std::fs::Metadata> {
        std::fs::metadata(target.absolute()).map_err(|e| read_io(target.absolute(), &e))
    }
}

pub(crate) fn read_io(path: &Path, e: &std::io::Error) -> ToolError {
    if e.kind() == std::io::ErrorKind::NotFound {
        ToolError::NotFound {
            path: path.display().to_string(),
        }
    } else {
        ToolError::ReadFailed {
            message: format!("{}: {e}", path.display()),
        }
    }
}

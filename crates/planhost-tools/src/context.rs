//! The workspace a tool call runs in, and how its paths are resolved.

use std::fs::File;
use std::path::{Path, PathBuf};

use planhost_fs::{EntryKind, FsError, MissingDirs, Workspace, WorkspacePath};

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
    /// Environment a Bash command gets after its own (planhost's git rules for a command it
    /// admitted unasked: [`crate::git_guard`]).
    bash_extra_env: Vec<(String, String)>,
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
            bash_extra_env: Vec::new(),
        }
    }

    /// The same context with `env` added last to a Bash command's environment.
    pub fn with_bash_env(mut self, env: Vec<(String, String)>) -> Self {
        self.bash_extra_env = env;
        self
    }

    /// What a Bash command gets after its own environment.
    pub(crate) fn bash_extra_env(&self) -> &[(String, String)] {
        &self.bash_extra_env
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
            ReadTarget::Outside(p) => open_outside(p),
        }
    }

    /// Requires `target` to be an existing directory or file (for Glob and Grep roots) and
    /// says whether it is a directory. Inside the workspace it is looked at through handles
    /// (`fstatat` without following, from the parent reached by `O_NOFOLLOW` opens), so a
    /// directory swapped for a symlink on the way is refused rather than followed out.
    #[allow(
        clippy::disallowed_methods,
        reason = "read_io names the path itself; fs_err would name it twice"
    )]
    pub(crate) fn require_exists(&self, target: &ReadTarget) -> Result<bool> {
        match target {
            ReadTarget::Inside(p) if p.is_root() => Ok(true),
            ReadTarget::Inside(p) => {
                let read_err = |e| ToolError::from_fs(e, Access::Read);
                let (walked, leaf) = self
                    .workspace
                    .open_parent(p, MissingDirs::Refuse)
                    .map_err(read_err)?;
                match walked.dir.kind_of(leaf).map_err(read_err)? {
                    None => Err(ToolError::NotFound {
                        path: p.absolute().display().to_string(),
                    }),
                    Some(EntryKind::Symlink) => Err(ToolError::SymlinkRefused {
                        path: p.absolute().display().to_string(),
                    }),
                    Some(kind) => Ok(kind == EntryKind::Directory),
                }
            }
            ReadTarget::Outside(p) => std::fs::metadata(p)
                .map(|m| m.is_dir())
                .map_err(|e| read_io(p, &e)),
        }
    }
}

/// Opens a granted outside path for reading. The open is non-blocking and the file's type is
/// checked on the opened descriptor (`fstat`), not on the path beforehand: a FIFO swapped in
/// after a `stat` would otherwise block the call until some writer came. Only regular files
/// are read (`TOOL_PATH_IS_DIRECTORY` for a directory, `TOOL_INVALID_INPUT` for anything else).
fn open_outside(p: &Path) -> Result<File> {
    use rustix::fs::{FileType, Mode, OFlags};
    let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOCTTY;
    let fd = rustix::fs::open(p, flags, Mode::empty()).map_err(|e| read_io(p, &e.into()))?;
    let st = rustix::fs::fstat(&fd).map_err(|e| read_io(p, &e.into()))?;
    match FileType::from_raw_mode(st.st_mode) {
        FileType::RegularFile => {}
        FileType::Directory => {
            return Err(ToolError::IsDirectory {
                path: p.display().to_string(),
            });
        }
        FileType::Symlink
        | FileType::Fifo
        | FileType::Socket
        | FileType::CharacterDevice
        | FileType::BlockDevice
        | FileType::Unknown => {
            return Err(ToolError::invalid(format!(
                "not a regular file: {}",
                p.display()
            )));
        }
    }
    // Regular files ignore O_NONBLOCK; clear it so the reader sees ordinary semantics.
    rustix::fs::fcntl_setfl(&fd, OFlags::empty()).map_err(|e| read_io(p, &e.into()))?;
    Ok(File::from(fd))
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

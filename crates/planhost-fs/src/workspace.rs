//! Workspace paths: canonicalisation and the root boundary.
//!
//! A request is first normalised lexically (so `../x` is refused before touching the disk), then
//! canonicalised for real (so a symlink that leads out is caught). Writers additionally require
//! that no symlink was involved at all and then open every component through [`Dir`] handles.

use std::fs::File;
use std::path::{Component, Path, PathBuf};

use crate::dir::{Dir, MissingDirs, Name, Walked};
use crate::error::{FsError, Result};

/// How a caller asks for a path: the normal, bounded kind, or an explicit outside request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathRequest {
    /// Must resolve inside the workspace root (relative to it, or absolute under it).
    Inside(String),
    /// An explicit request for an absolute path anywhere; only a permission layer may grant it.
    Outside(String),
}

/// A canonical path inside the workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkspacePath {
    absolute: PathBuf,
    relative: String,
}

impl WorkspacePath {
    /// The canonical absolute path.
    pub fn absolute(&self) -> &Path {
        &self.absolute
    }

    /// The path relative to the root, `/`-separated; empty for the root itself.
    pub fn relative(&self) -> &str {
        &self.relative
    }

    /// Whether this is the workspace root itself.
    pub fn is_root(&self) -> bool {
        self.relative.is_empty()
    }

    /// The relative path's components (validated names, since the path is canonical).
    pub fn names(&self) -> Result<Vec<Name<'_>>> {
        if self.relative.is_empty() {
            return Ok(Vec::new());
        }
        self.relative.split('/').map(Name::new).collect()
    }
}

/// A canonical path outside the workspace, produced only by [`Workspace::resolve_outside`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutsidePath {
    absolute: PathBuf,
}

impl OutsidePath {
    /// The canonical absolute path.
    pub fn absolute(&self) -> &Path {
        &self.absolute
    }
}

/// A resolved [`PathRequest`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resolved {
    /// Inside the root.
    Inside(WorkspacePath),
    /// Explicitly outside; the caller's permission layer decided to allow it.
    Outside(OutsidePath),
}

/// A workspace root, canonical and UTF-8, that bounds every path the tools touch.
#[derive(Debug, Clone)]
pub struct Workspace {
    root: PathBuf,
    /// The root as given, when it differs from the canonical one (e.g. reached via a symlink).
    given: PathBuf,
}

impl Workspace {
    /// Opens a workspace at an absolute, existing directory.
    pub fn new(root: &Path) -> Result<Self> {
        if !root.is_absolute() {
            return Err(FsError::InvalidPath {
                path: root.display().to_string(),
                reason: "workspace root must be absolute",
            });
        }
        let canonical = canonicalize(root)?;
        if !canonical.is_dir() {
            return Err(FsError::NotDirectory { path: canonical });
        }
        require_utf8(&canonical)?;
        Ok(Self {
            root: canonical,
            given: lexical_normalize(root),
        })
    }

    /// The canonical root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Resolves `requested` (relative to the root, or absolute) to a canonical path inside it.
    ///
    /// Refuses: a lexically outside path ([`FsError::OutsideWorkspace`]), a symlink leading out
    /// ([`FsError::SymlinkEscape`]), a dangling symlink ([`FsError::Symlink`]) and non-UTF-8
    /// results ([`FsError::NonUtf8`]). The path need not exist; its missing tail is kept.
    pub fn resolve(&self, requested: &str) -> Result<WorkspacePath> {
        let (lexical, joined) = self.lexical_inside(requested)?;
        let canonical = canonicalize_allow_missing(&joined)?;
        let Some(relative) = self.relative_of(&canonical)? else {
            return Err(FsError::SymlinkEscape {
                path: lexical,
                target: canonical,
            });
        };
        Ok(WorkspacePath {
            absolute: canonical,
            relative,
        })
    }

    /// Like [`Workspace::resolve`], and additionally refuses a path that any symlink took part in
    /// resolving ([`FsError::Symlink`]): writers never act through a link.
    pub fn resolve_for_write(&self, requested: &str) -> Result<WorkspacePath> {
        let (lexical, _) = self.lexical_inside(requested)?;
        let resolved = self.resolve(requested)?;
        if resolved.absolute != lexical {
            return Err(FsError::Symlink { path: lexical });
        }
        Ok(resolved)
    }

    /// Resolves an explicit outside request: an absolute path, canonicalised, with no boundary.
    /// Only a caller that has been granted outside access may use this.
    pub fn resolve_outside(&self, requested: &str) -> Result<OutsidePath> {
        check_text(requested)?;
        let path = Path::new(requested);
        if !path.is_absolute() {
            return Err(FsError::InvalidPath {
                path: requested.to_owned(),
                reason: "an outside path must be absolute",
            });
        }
        let absolute = canonicalize_allow_missing(path)?;
        require_utf8(&absolute)?;
        Ok(OutsidePath { absolute })
    }

    /// Resolves either kind of request. `Outside` is resolved as asked: gating it is the
    /// caller's permission layer's job.
    pub fn resolve_request(&self, request: &PathRequest) -> Result<Resolved> {
        match request {
            PathRequest::Inside(p) => self.resolve(p).map(Resolved::Inside),
            PathRequest::Outside(p) => self.resolve_outside(p).map(Resolved::Outside),
        }
    }

    /// The `/`-separated path of `absolute` relative to the canonical root, `None` if outside.
    pub fn relative_of(&self, absolute: &Path) -> Result<Option<String>> {
        let Ok(rest) = absolute.strip_prefix(&self.root) else {
            return Ok(None);
        };
        let mut parts = Vec::new();
        for component in rest.components() {
            match component {
                Component::Normal(os) => match os.to_str() {
                    Some(s) => parts.push(s),
                    None => {
                        return Err(FsError::NonUtf8 {
                            path: absolute.into(),
                        });
                    }
                },
                Component::CurDir
                | Component::ParentDir
                | Component::RootDir
                | Component::Prefix(_) => return Ok(None),
            }
        }
        Ok(Some(parts.join("/")))
    }

    /// Opens the root as a [`Dir`] anchor.
    pub fn open_root(&self) -> Result<Dir> {
        Dir::open_anchor(&self.root)
    }

    /// Opens the directory that contains `path` through handles and returns it with the leaf name.
    pub fn open_parent<'p>(
        &self,
        path: &'p WorkspacePath,
        missing: MissingDirs,
    ) -> Result<(Walked, Name<'p>)> {
        let names = path.names()?;
        let Some((leaf, parents)) = names.split_last() else {
            return Err(FsError::IsDirectory {
                path: self.root.clone(),
            });
        };
        let walked = self.open_root()?.walk(parents, missing)?;
        Ok((walked, *leaf))
    }

    /// Opens the regular file at `path`, every component checked through handles.
    pub fn open_file(&self, path: &WorkspacePath) -> Result<File> {
        if path.is_root() {
            return Err(FsError::IsDirectory {
                path: self.root.clone(),
            });
        }
        let (walked, leaf) = self.open_parent(path, MissingDirs::Refuse)?;
        walked.dir.open_file(leaf)
    }

    /// Normalises `requested` lexically and refuses it when it is outside the root.
    /// Returns the normalised path rebased onto the canonical root, and the raw joined path
    /// (whose `..` components the real canonicalisation still has to see).
    fn lexical_inside(&self, requested: &str) -> Result<(PathBuf, PathBuf)> {
        check_text(requested)?;
        let path = Path::new(requested);
        let joined = if path.is_absolute() {
            path.to_path_buf()
        } else {
            self.root.join(path)
        };
        let lexical = lexical_normalize(&joined);
        let rebased = if let Ok(rest) = lexical.strip_prefix(&self.root) {
            self.root.join(rest)
        } else if let Ok(rest) = lexical.strip_prefix(&self.given) {
            self.root.join(rest)
        } else {
            return Err(FsError::OutsideWorkspace { path: lexical });
        };
        Ok((rebased, joined))
    }
}

fn check_text(requested: &str) -> Result<()> {
    if requested.is_empty() {
        return Err(FsError::InvalidPath {
            path: String::new(),
            reason: "path is empty",
        });
    }
    if requested.contains('\0') {
        return Err(FsError::InvalidPath {
            path: requested.replace('\0', "\\0"),
            reason: "path contains NUL",
        });
    }
    Ok(())
}

fn require_utf8(path: &Path) -> Result<()> {
    match path.to_str() {
        Some(_) => Ok(()),
        None => Err(FsError::NonUtf8 { path: path.into() }),
    }
}

/// Removes `.` and resolves `..` against the preceding component, without touching the disk.
fn lexical_normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(_) | Component::RootDir | Component::Prefix(_) => {
                out.push(component);
            }
        }
    }
    out
}

fn canonicalize(path: &Path) -> Result<PathBuf> {
    std::fs::canonicalize(path).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            FsError::NotFound { path: path.into() }
        } else if e.kind() == std::io::ErrorKind::NotADirectory {
            FsError::NotDirectory { path: path.into() }
        } else {
            FsError::io("realpath", path, e)
        }
    })
}

/// Canonicalises the longest existing prefix of `path` and appends the missing tail, in which
/// `..` is resolved lexically (sound, since a missing component cannot be a symlink).
fn canonicalize_allow_missing(path: &Path) -> Result<PathBuf> {
    match canonicalize(path) {
        Ok(p) => return Ok(p),
        Err(FsError::NotFound { .. }) => {}
        Err(e) => return Err(e),
    }
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(FsError::Symlink { path: path.into() });
    }
    let (Some(parent), Some(leaf)) = (path.parent(), path.components().next_back()) else {
        return Err(FsError::NotFound { path: path.into() });
    };
    let mut base = canonicalize_allow_missing(parent)?;
    match leaf {
        Component::Normal(name) => base.push(name),
        Component::ParentDir => {
            base.pop();
        }
        Component::CurDir | Component::RootDir | Component::Prefix(_) => {}
    }
    Ok(base)
}

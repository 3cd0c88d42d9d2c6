//! Workspace paths: canonicalisation and the root boundary.
//!
//! A request is first normalised lexically (so `../x` is refused before touching the disk), then
//! canonicalised for real (so a symlink that leads out is caught). Writers additionally require
//! that no symlink was involved at all and then open every component through [`Dir`] handles.

use std::ffi::OsString;
use std::fs::File;
use std::path::{Component, Path, PathBuf};
use std::rc::Rc;

use crate::dir::{Dir, EntryKind, MissingDirs, Name, Walked};
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
    ///
    /// Resolution walks the workspace through directory handles and never looks at anything
    /// outside it: a symlink whose target leaves the root is [`FsError::SymlinkEscape`] at
    /// once, whatever exists (or not) behind it, so the answer cannot be used to probe outside
    /// names. (`realpath` used to answer "not a directory", "dangling symlink" or an I/O error
    /// depending on the outside file.) A directory swapped for a symlink mid-walk is refused by
    /// its `O_NOFOLLOW` open.
    pub fn resolve(&self, requested: &str) -> Result<WorkspacePath> {
        let (lexical, joined) = self.lexical_inside(requested)?;
        // The raw components below the root, whose `..` the walk must see; an absolute request
        // that only lexically comes back under the root is taken as normalised (its detour
        // outside is never looked at).
        let below = joined
            .strip_prefix(&self.root)
            .or_else(|_| joined.strip_prefix(&self.given))
            .or_else(|_| lexical.strip_prefix(&self.root))
            .map_err(|_| FsError::OutsideWorkspace {
                path: lexical.clone(),
            })?;
        let must_be_dir = requested.ends_with('/') || requested.ends_with("/.");
        let names = self.walk_inside(below, &lexical, &joined, must_be_dir)?;
        let mut absolute = self.root.clone();
        absolute.extend(&names);
        Ok(WorkspacePath {
            absolute,
            relative: names.join("/"),
        })
    }

    /// Follows `below` from the root one component at a time through [`Dir`] handles,
    /// expanding symlinks by `readlinkat` (at most [`MAX_SYMLINKS`]), and returns the canonical
    /// components. Below a missing component names are taken lexically (a missing name cannot be
    /// a symlink), and a `..` that climbs back out of the missing part returns to the disk: the
    /// walk goes on from the last directory it holds, so `missing/../link` still meets `link`.
    /// Nothing outside the root is ever opened or examined.
    fn walk_inside(
        &self,
        below: &Path,
        lexical: &Path,
        joined: &Path,
        must_be_dir: bool,
    ) -> Result<Vec<String>> {
        // Components still to resolve, last first; each remembers the symlink whose target
        // supplied it (a dangling link is reported as itself, as `realpath` users expect).
        let mut pending: Vec<(OsString, Option<Rc<Link>>)> = Vec::new();
        push_components(&mut pending, below, None);
        let escape = |target: PathBuf| FsError::SymlinkEscape {
            path: lexical.to_path_buf(),
            target,
        };
        let mut dirs = vec![self.open_root()?];
        let mut names: Vec<String> = Vec::new();
        // How many of the trailing `names` do not exist (0: the walk is on the disk).
        let mut missing = 0usize;
        let mut links = 0;
        while let Some((component, via)) = pending.pop() {
            if component == ".." {
                // Above the root is outside, by `..` in a link's target (the request itself
                // was checked lexically).
                if names.pop().is_none() {
                    let target = via.map_or_else(|| self.root.join(".."), |l| l.target.clone());
                    return Err(escape(target));
                }
                if missing > 0 {
                    missing -= 1;
                } else {
                    dirs.pop();
                }
                continue;
            }
            let Some(text) = component.to_str() else {
                let mut path = self.root.clone();
                path.extend(&names);
                return Err(FsError::NonUtf8 {
                    path: path.join(&component),
                });
            };
            if missing > 0 {
                missing += 1;
                names.push(text.to_owned());
                continue;
            }
            let name = Name::new(text)?;
            let Some(dir) = dirs.last() else {
                return Err(escape(self.root.clone()));
            };
            let here = dir.path().join(text);
            match dir.kind_of(name)? {
                None => {
                    if let Some(link) = via {
                        return Err(FsError::Symlink {
                            path: link.path.clone(),
                        });
                    }
                    missing = 1;
                    names.push(text.to_owned());
                }
                Some(EntryKind::Directory) => {
                    let next = dir.open_dir(name)?;
                    dirs.push(next);
                    names.push(text.to_owned());
                }
                Some(EntryKind::File | EntryKind::Other) => {
                    if !pending.is_empty() || must_be_dir {
                        return Err(FsError::NotDirectory {
                            path: joined.to_path_buf(),
                        });
                    }
                    names.push(text.to_owned());
                }
                Some(EntryKind::Symlink) => {
                    links += 1;
                    if links > MAX_SYMLINKS {
                        let source = rustix::io::Errno::LOOP.into();
                        return Err(FsError::io("resolve", joined, source));
                    }
                    let target = dir.read_link(name)?;
                    let link = Rc::new(Link {
                        target: dir.path().join(&target),
                        path: here,
                    });
                    if target.is_absolute() {
                        let rest = target
                            .strip_prefix(&self.root)
                            .or_else(|_| target.strip_prefix(&self.given))
                            .map_err(|_| escape(target.clone()))?;
                        dirs.truncate(1);
                        names.clear();
                        push_components(&mut pending, rest, Some(&link));
                    } else {
                        // A `..` that climbs above the root is caught when it is popped.
                        push_components(&mut pending, &target, Some(&link));
                    }
                }
            }
        }
        Ok(names)
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

/// Symlinks one resolution follows before it gives up (`ELOOP`), as Linux does.
const MAX_SYMLINKS: usize = 40;

/// Pushes `path`'s components onto `pending` (a stack: the first component ends up on top),
/// skipping `.`, the root and prefixes (an absolute target was rebased by the caller).
fn push_components(
    pending: &mut Vec<(OsString, Option<Rc<Link>>)>,
    path: &Path,
    via: Option<&Rc<Link>>,
) {
    for component in path.components().rev() {
        match component {
            Component::Normal(name) => pending.push((name.to_os_string(), via.cloned())),
            Component::ParentDir => pending.push(("..".into(), via.cloned())),
            Component::CurDir | Component::RootDir | Component::Prefix(_) => {}
        }
    }
}

/// A symlink met while resolving: its own path, and where it points (its target joined to its
/// directory, as read; nothing behind it is examined).
#[derive(Debug)]
struct Link {
    path: PathBuf,
    target: PathBuf,
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

#[allow(
    clippy::disallowed_methods,
    reason = "the OS error is mapped to FsError with the path"
)]
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
#[allow(
    clippy::disallowed_methods,
    reason = "the handle code: only whether the path is a symlink is read, its error is mapped below"
)]
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

#[cfg(test)]
mod tests {
    use super::*;
    use fs_err::os::unix::fs::symlink;

    fn ws() -> (tempfile::TempDir, Workspace) {
        let tmp = tempfile::tempdir().unwrap();
        fs_err::create_dir_all(tmp.path().join("src/deep")).unwrap();
        fs_err::write(tmp.path().join("src/lib.rs"), b"x").unwrap();
        let ws = Workspace::new(tmp.path()).unwrap();
        (tmp, ws)
    }

    /// Issue 10, defect b, at this layer: what is behind a symlink that leads out (a file, a
    /// directory, a dangling link, a loop, nothing) never changes the answer.
    #[test]
    fn paths_through_an_outside_symlink_get_one_answer_whatever_exists_outside() {
        let (tmp, ws) = ws();
        let other = tempfile::tempdir().unwrap();
        fs_err::write(other.path().join("file"), b"secret").unwrap();
        fs_err::create_dir(other.path().join("dir")).unwrap();
        symlink("/nonexistent/planhost", other.path().join("dangling")).unwrap();
        symlink(other.path().join("loop"), other.path().join("loop")).unwrap();
        symlink(other.path(), tmp.path().join("out")).unwrap();
        symlink("../../elsewhere", tmp.path().join("src/up")).unwrap();
        symlink("/nonexistent/planhost", tmp.path().join("gone")).unwrap();
        for request in [
            "out",
            "out/",
            "out/missing",
            "out/file",
            "out/dir",
            "out/dangling",
            "out/loop",
            "out/missing/x",
            "out/file/x",
            "out/dir/x",
            "out/dangling/x",
            "out/loop/x",
            "out/file/..",
            "src/up",
            "src/up/x",
            "gone",
            "gone/x",
        ] {
            let err = ws.resolve(request).unwrap_err();
            assert_eq!(err.code().as_str(), "FS_SYMLINK_ESCAPE", "{request}: {err}");
            let FsError::SymlinkEscape { path, target } = err else {
                unreachable!()
            };
            assert_eq!(
                path,
                lexical_normalize(&ws.root().join(request)),
                "{request}"
            );
            assert!(
                [other.path(), Path::new("/nonexistent/planhost")]
                    .iter()
                    .any(|t| target == *t)
                    || target.ends_with("src/../../elsewhere"),
                "{request}: the message names only the link's own target, not {}",
                target.display()
            );
        }
    }

    #[test]
    fn symlinks_inside_resolve_as_realpath_does() {
        let (tmp, ws) = ws();
        let root = ws.root().to_path_buf();
        symlink("src/deep", tmp.path().join("rel")).unwrap();
        symlink(root.join("src"), tmp.path().join("abs")).unwrap();
        symlink("../lib.rs", tmp.path().join("src/deep/up")).unwrap();
        symlink("chain2", tmp.path().join("chain1")).unwrap();
        symlink("abs", tmp.path().join("chain2")).unwrap();
        symlink("self", tmp.path().join("self")).unwrap();
        symlink("no-such", tmp.path().join("dangling")).unwrap();
        let rel = |r: &str| ws.resolve(r).map(|p| p.relative().to_owned());
        assert_eq!(rel("rel").unwrap(), "src/deep");
        // `..` after a link is taken from where the link leads, as the kernel does.
        assert_eq!(rel("rel/../lib.rs").unwrap(), "src/lib.rs");
        assert_eq!(rel("abs/lib.rs").unwrap(), "src/lib.rs");
        assert_eq!(rel("src/deep/up").unwrap(), "src/lib.rs");
        assert_eq!(rel("chain1/deep/new.rs").unwrap(), "src/deep/new.rs");
        assert_eq!(rel("abs/missing/../x").unwrap(), "src/x");
        assert_eq!(rel("src/").unwrap(), "src");
        assert_eq!(
            ws.resolve("src/lib.rs/").unwrap_err().code().as_str(),
            "FS_NOT_DIRECTORY"
        );
        assert_eq!(
            ws.resolve("src/lib.rs/x").unwrap_err().code().as_str(),
            "FS_NOT_DIRECTORY"
        );
        assert_eq!(ws.resolve("self").unwrap_err().code().as_str(), "FS_IO");
        for dangling in ["dangling", "dangling/x"] {
            let err = ws.resolve(dangling).unwrap_err();
            assert!(
                matches!(&err, FsError::Symlink { path } if path.ends_with("dangling")),
                "{err:?}"
            );
        }
        // Reached through the root's other spelling.
        let links = tempfile::tempdir().unwrap();
        let alias = links.path().join("alias");
        symlink(&root, &alias).unwrap();
        let via_alias = Workspace::new(&alias).unwrap();
        symlink(alias.join("src"), tmp.path().join("by-alias")).unwrap();
        assert_eq!(
            via_alias.resolve("by-alias/lib.rs").unwrap().relative(),
            "src/lib.rs"
        );
    }
}

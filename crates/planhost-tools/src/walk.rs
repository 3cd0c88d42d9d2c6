//! The gitignore-aware walk shared by Glob and Grep, done entirely through directory handles.
//!
//! The start is reached one component at a time from the workspace root's fd with
//! `openat(O_NOFOLLOW)`; below it, every directory is opened with `openat(O_NOFOLLOW |
//! O_DIRECTORY)` relative to its parent's fd and listed through its own fd. No path is ever
//! re-opened from the root, so a directory swapped for a symlink mid-walk fails its open and is
//! skipped: every name the walk reports was listed from a directory reached without following a
//! link. Files are opened the same way, relative to the fd of the directory that listed them.
//!
//! The filters are ripgrep's defaults, as the `ignore` crate's `WalkBuilder` applies them with
//! `standard_filters(true)`, `require_git(false)` and `follow_links(false)`:
//!
//! - a Grep `glob` override decides first, when it matches;
//! - then `.ignore`, `.gitignore` and `.git/info/exclude` of the entry's directory and of every
//!   directory above it up to `/` (the deepest match of each kind wins; `.ignore` over
//!   `.gitignore` over `exclude`), then the global gitignore (`core.excludesFile`);
//! - a name starting with `.` that no rule whitelisted is hidden.
//!
//! `.gitignore` applies even when the workspace is not a git repository, so what the tools see
//! does not depend on whether `git init` ran. The start itself is never filtered. Ignore files
//! are read through the same handles; a symlinked or non-regular ignore file (or `.git`) is not
//! followed and contributes no rules, and a `.git` file (a worktree's pointer) is not followed.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::Read as _;
use std::ops::ControlFlow;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use ignore::Match;
use ignore::gitignore::{Gitignore, GitignoreBuilder};
use ignore::overrides::Override;
use rustix::fs::{self as rfs, AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;

use crate::context::{ReadTarget, ToolContext};
use crate::error::{Access, Result, ToolError};

const DIR_FLAGS: OFlags = OFlags::RDONLY
    .union(OFlags::DIRECTORY)
    .union(OFlags::NOFOLLOW)
    .union(OFlags::CLOEXEC);
/// `O_NONBLOCK` keeps a FIFO swapped in for a file from hanging the open; it is refused after.
const FILE_FLAGS: OFlags = OFlags::RDONLY
    .union(OFlags::NOFOLLOW)
    .union(OFlags::NONBLOCK)
    .union(OFlags::CLOEXEC);

/// Where a walk starts, opened through handles.
#[derive(Debug)]
pub(crate) enum Start {
    /// A directory to walk.
    Dir(Tree),
    /// A regular file (Grep searches it alone, unfiltered).
    File(File),
    /// A FIFO, socket or device: nothing to list or search.
    Other,
}

/// An opened start directory and the ignore rules of the directories above it.
#[derive(Debug)]
pub(crate) struct Tree {
    fd: OwnedFd,
    /// The start's absolute path: ignore rules and overrides match paths under it.
    path: PathBuf,
    above: Option<Arc<Chain>>,
}

/// A regular file the walk kept.
#[derive(Debug)]
pub(crate) struct Found<'a> {
    /// The directory that listed it; open it with [`open_file_at`].
    pub(crate) dir: &'a Arc<OwnedFd>,
    /// Its name in `dir`.
    pub(crate) name: &'a OsStr,
    /// Its path relative to the start.
    pub(crate) relative: &'a Path,
}

/// The filters that do not depend on the directory: a Grep override and the global gitignore.
#[derive(Debug)]
pub(crate) struct Filters {
    overrides: Override,
    global: Gitignore,
}

impl Filters {
    /// The default filters, with `overrides` (empty for none) deciding first.
    pub(crate) fn new(overrides: Override) -> Self {
        // As the walker did: relative to the current directory, errors ignored.
        let (global, _) = Gitignore::global();
        Self { overrides, global }
    }

    /// Whether the entry `name` at `path`, in the directory whose rules are `chain`, is filtered
    /// out. Mirrors `ignore`'s `Ignore::matched_dir_entry`.
    fn skips(&self, chain: &Chain, path: &Path, name: &OsStr, is_dir: bool) -> bool {
        let overridden = self.overrides.matched(path, is_dir);
        if !overridden.is_none() {
            return overridden.is_ignore();
        }
        let matched = chain
            .matched(path, is_dir)
            .or(self.global.matched(path, is_dir).map(|_| ()));
        match matched {
            Match::Ignore(()) => true,
            Match::Whitelist(()) => false,
            Match::None => name.as_encoded_bytes().starts_with(b"."),
        }
    }
}

/// One directory's ignore rules.
#[derive(Debug)]
struct Rules {
    ignore: Gitignore,
    git_ignore: Gitignore,
    git_exclude: Gitignore,
}

/// The rules of a directory and, through `parent`, of every directory above it.
#[derive(Debug)]
pub(crate) struct Chain {
    rules: Rules,
    parent: Option<Arc<Chain>>,
}

impl Chain {
    /// Adds the rules of the directory `dir` (at `path`) below `parent`. `names` is the
    /// directory's listing when known, to skip opening ignore files that are not there.
    fn push(
        parent: Option<Arc<Self>>,
        dir: &OwnedFd,
        path: &Path,
        names: Option<&[Entry]>,
    ) -> Arc<Self> {
        let (mut ignore, mut git_ignore, mut git) =
            (names.is_none(), names.is_none(), names.is_none());
        for entry in names.unwrap_or_default() {
            match entry.name.as_encoded_bytes() {
                b".ignore" => ignore = true,
                b".gitignore" => git_ignore = true,
                b".git" => git = true,
                _ => {}
            }
        }
        let git_info = git
            .then(|| open_dir_at(dir, OsStr::new(".git")).ok())
            .flatten()
            .and_then(|git_dir| open_dir_at(&git_dir, OsStr::new("info")).ok());
        let rules = Rules {
            ignore: ignore_file(ignore.then_some(dir), ".ignore", path, ".ignore"),
            git_ignore: ignore_file(git_ignore.then_some(dir), ".gitignore", path, ".gitignore"),
            git_exclude: ignore_file(git_info.as_ref(), "exclude", path, ".git/info/exclude"),
        };
        Arc::new(Self { rules, parent })
    }

    /// The deepest match of each kind, `.ignore` first. Mirrors `Ignore::matched_ignore`.
    fn matched(&self, path: &Path, is_dir: bool) -> Match<()> {
        let (mut ignore, mut git_ignore, mut exclude) = (Match::None, Match::None, Match::None);
        let mut link = Some(self);
        while let Some(chain) = link {
            let rules = &chain.rules;
            if ignore.is_none() {
                ignore = rules.ignore.matched(path, is_dir).map(|_| ());
            }
            if git_ignore.is_none() {
                git_ignore = rules.git_ignore.matched(path, is_dir).map(|_| ());
            }
            if exclude.is_none() {
                exclude = rules.git_exclude.matched(path, is_dir).map(|_| ());
            }
            link = chain.parent.as_deref();
        }
        ignore.or(git_ignore).or(exclude)
    }
}

/// Opens the start of a Glob or Grep walk through handles.
///
/// Inside the workspace, every component from the root down is opened with `O_NOFOLLOW`, and the
/// ignore rules of the directories passed on the way are read through those handles. A granted
/// outside start is opened by its canonical path (the caller vouches for it); above the anchor,
/// ignore rules are read from each ancestor, as ripgrep reads its parents'.
pub(crate) fn open_start(ctx: &ToolContext, target: &ReadTarget) -> Result<Start> {
    let (anchor, names): (&Path, Vec<&OsStr>) = match target {
        ReadTarget::Inside(p) => {
            let names = p.names().map_err(|e| ToolError::from_fs(e, Access::Read))?;
            let names = names.iter().map(|n| OsStr::new(n.as_str())).collect();
            (ctx.workspace().root(), names)
        }
        ReadTarget::Outside(p) => match (p.parent(), p.file_name()) {
            (Some(parent), Some(leaf)) => (parent, vec![leaf]),
            _ => (p.as_path(), Vec::new()),
        },
    };
    let mut fd = rfs::open(
        anchor,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| open_error(anchor, e))?;
    let mut above = ancestors_by_path(anchor);
    let mut path = anchor.to_path_buf();
    let Some((leaf, parents)) = names.split_last() else {
        return Ok(Start::Dir(Tree { fd, path, above }));
    };
    for name in parents {
        above = Some(Chain::push(above, &fd, &path, None));
        path.push(name);
        fd = open_dir_at(&fd, name).map_err(|e| open_error(&path, e))?;
    }
    above = Some(Chain::push(above, &fd, &path, None));
    path.push(leaf);
    let kind = rfs::statat(&fd, *leaf, AtFlags::SYMLINK_NOFOLLOW)
        .map(|st| FileType::from_raw_mode(st.st_mode))
        .map_err(|e| open_error(&path, e))?;
    match kind {
        FileType::Directory => {
            let fd = open_dir_at(&fd, leaf).map_err(|e| open_error(&path, e))?;
            Ok(Start::Dir(Tree { fd, path, above }))
        }
        FileType::RegularFile => Ok(open_file_at(&fd, leaf).map_or(Start::Other, Start::File)),
        FileType::Symlink => Err(ToolError::SymlinkRefused {
            path: path.display().to_string(),
        }),
        FileType::Fifo
        | FileType::Socket
        | FileType::CharacterDevice
        | FileType::BlockDevice
        | FileType::Unknown => Ok(Start::Other),
    }
}

impl Tree {
    /// Visits every regular file the filters keep, depth first, until `visit` breaks.
    ///
    /// Unreadable directories are skipped, as ripgrep skips them. A directory that is no longer
    /// a real directory when the walk opens it (swapped for a symlink, say) is skipped too.
    pub(crate) fn walk(
        self,
        filters: &Filters,
        mut visit: impl FnMut(Found<'_>) -> ControlFlow<()>,
    ) {
        struct Frame {
            fd: Arc<OwnedFd>,
            relative: PathBuf,
            chain: Arc<Chain>,
            entries: std::vec::IntoIter<Entry>,
        }
        let entries = list(&self.fd);
        let chain = Chain::push(self.above, &self.fd, &self.path, Some(&entries));
        let mut stack = vec![Frame {
            fd: Arc::new(self.fd),
            relative: PathBuf::new(),
            chain,
            entries: entries.into_iter(),
        }];
        while let Some(frame) = stack.last_mut() {
            let Some(entry) = frame.entries.next() else {
                stack.pop();
                continue;
            };
            let relative = frame.relative.join(&entry.name);
            let absolute = self.path.join(&relative);
            match entry.kind {
                Kind::Directory => {
                    if filters.skips(&frame.chain, &absolute, &entry.name, true) {
                        continue;
                    }
                    let Ok(fd) = open_dir_at(&frame.fd, &entry.name) else {
                        continue;
                    };
                    let entries = list(&fd);
                    let chain = Chain::push(
                        Some(Arc::clone(&frame.chain)),
                        &fd,
                        &absolute,
                        Some(&entries),
                    );
                    stack.push(Frame {
                        fd: Arc::new(fd),
                        relative,
                        chain,
                        entries: entries.into_iter(),
                    });
                }
                Kind::File => {
                    if filters.skips(&frame.chain, &absolute, &entry.name, false) {
                        continue;
                    }
                    let found = Found {
                        dir: &frame.fd,
                        name: &entry.name,
                        relative: &relative,
                    };
                    if visit(found).is_break() {
                        return;
                    }
                }
                Kind::Other => {}
            }
        }
    }
}

/// How results name a walked file (`relative` to the start), or `None` when it is not UTF-8:
/// workspace-relative inside, absolute for a granted outside start.
pub(crate) fn display_name(target: &ReadTarget, relative: &Path) -> Option<String> {
    let relative = relative.to_str()?;
    match target {
        ReadTarget::Inside(p) if p.is_root() => Some(relative.to_owned()),
        ReadTarget::Inside(p) => Some(format!("{}/{relative}", p.relative())),
        ReadTarget::Outside(p) => p.join(relative).to_str().map(str::to_owned),
    }
}

/// Opens the regular file `name` in `dir` without following a symlink; `None` when it is not
/// (any longer) a readable regular file.
pub(crate) fn open_file_at(dir: &OwnedFd, name: &OsStr) -> Option<File> {
    let fd = rfs::openat(dir, name, FILE_FLAGS, Mode::empty()).ok()?;
    let st = rfs::fstat(&fd).ok()?;
    (FileType::from_raw_mode(st.st_mode) == FileType::RegularFile).then(|| File::from(fd))
}

fn open_dir_at(dir: &OwnedFd, name: &OsStr) -> rustix::io::Result<OwnedFd> {
    rfs::openat(dir, name, DIR_FLAGS, Mode::empty())
}

/// The rules of every directory strictly above `anchor`, from `/` down, each opened by path:
/// they lie above the trust anchor (the workspace root, or a granted outside start).
fn ancestors_by_path(anchor: &Path) -> Option<Arc<Chain>> {
    let mut ancestors: Vec<&Path> = anchor.ancestors().skip(1).collect();
    ancestors.reverse();
    let mut chain = None;
    for dir in ancestors {
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
        if let Ok(fd) = rfs::open(dir, flags, Mode::empty()) {
            chain = Some(Chain::push(chain, &fd, dir, None));
        }
    }
    chain
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    File,
    Directory,
    /// Symlinks (never followed), FIFOs, sockets, devices.
    Other,
}

#[derive(Debug)]
struct Entry {
    name: OsString,
    kind: Kind,
}

/// The entries of `dir` (not `.` and `..`), read through its fd, typed without following links.
/// A read error ends the listing with what was read so far.
fn list(dir: &OwnedFd) -> Vec<Entry> {
    use std::os::unix::ffi::OsStrExt as _;
    let mut entries = Vec::new();
    let Ok(reader) = rfs::Dir::read_from(dir) else {
        return entries;
    };
    for entry in reader {
        let Ok(entry) = entry else { break };
        let name = entry.file_name().to_bytes();
        if name == b"." || name == b".." {
            continue;
        }
        let file_type = match entry.file_type() {
            FileType::Unknown => rfs::statat(dir, entry.file_name(), AtFlags::SYMLINK_NOFOLLOW)
                .map_or(FileType::Unknown, |st| FileType::from_raw_mode(st.st_mode)),
            known @ (FileType::RegularFile
            | FileType::Directory
            | FileType::Symlink
            | FileType::Fifo
            | FileType::Socket
            | FileType::CharacterDevice
            | FileType::BlockDevice) => known,
        };
        let kind = match file_type {
            FileType::RegularFile => Kind::File,
            FileType::Directory => Kind::Directory,
            FileType::Symlink
            | FileType::Fifo
            | FileType::Socket
            | FileType::CharacterDevice
            | FileType::BlockDevice
            | FileType::Unknown => Kind::Other,
        };
        entries.push(Entry {
            name: OsStr::from_bytes(name).to_owned(),
            kind,
        });
    }
    entries
}

/// The rules of the ignore file `name` in `dir` (none when `dir` is `None`), matching paths
/// under `dir_path`; `shown` is the file's path relative to `dir_path`, for its globs' origin.
/// A missing, unreadable, symlinked or non-regular file contributes no rules.
fn ignore_file(dir: Option<&OwnedFd>, name: &str, dir_path: &Path, shown: &str) -> Gitignore {
    let Some(mut file) = dir.and_then(|d| open_file_at(d, OsStr::new(name))) else {
        return Gitignore::empty();
    };
    let mut bytes = Vec::new();
    if file.read_to_end(&mut bytes).is_err() {
        return Gitignore::empty();
    }
    gitignore(dir_path, &dir_path.join(shown), &bytes)
}

/// Compiles gitignore text for the directory `dir`, as `GitignoreBuilder::add` reads a file:
/// line by line (`\n` or `\r\n`), a leading BOM dropped, invalid UTF-8 lines and invalid globs
/// skipped.
fn gitignore(dir: &Path, source: &Path, bytes: &[u8]) -> Gitignore {
    let mut builder = GitignoreBuilder::new(dir);
    for (index, raw) in bytes.split_inclusive(|b| *b == b'\n').enumerate() {
        let line = raw
            .strip_suffix(b"\n")
            .map_or(raw, |l| l.strip_suffix(b"\r").unwrap_or(l));
        let Ok(mut line) = std::str::from_utf8(line) else {
            continue;
        };
        if index == 0 {
            line = line.trim_start_matches('\u{feff}');
        }
        // A bad glob drops that line only, as in `ignore`.
        let _ = builder.add_line(Some(source.to_path_buf()), line);
    }
    builder.build().unwrap_or_else(|_| Gitignore::empty())
}

/// A failure to open the start (or a directory on the way to it), which `require_exists` saw a
/// moment ago: the tree changed under the call.
fn open_error(path: &Path, errno: Errno) -> ToolError {
    let shown = path.display().to_string();
    match errno {
        Errno::NOENT => ToolError::NotFound { path: shown },
        Errno::LOOP => ToolError::SymlinkRefused { path: shown },
        Errno::NOTDIR => ToolError::invalid(format!("not a directory: {shown}")),
        other => ToolError::ReadFailed {
            message: format!("{shown}: {}", std::io::Error::from(other)),
        },
    }
}

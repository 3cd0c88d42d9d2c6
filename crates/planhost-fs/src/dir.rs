//! Directory handles that never follow a symlink below their anchor.
//!
//! Every operation names a single component relative to an open directory fd, so the kernel
//! checks each step: `O_NOFOLLOW` refuses a symlinked leaf, `O_DIRECTORY` refuses a
//! non-directory, and `O_EXCL` refuses an existing name (a symlink included, dangling or not).

use std::fs::File;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use rustix::fs::{self as rfs, AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;

use crate::error::{FsError, Result};

/// Mode for directories this crate creates. The process umask can only take bits away, so a
/// directory is never more than `rwxr-xr-x` (whatever the umask, `000` included) and a stricter
/// umask (`077`) keeps it private.
const DIR_MODE: u32 = 0o755;

/// One validated path component: non-empty, not `.` or `..`, no `/` and no NUL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Name<'a>(&'a str);

impl<'a> Name<'a> {
    /// Validates `name` as a single component.
    pub fn new(name: &'a str) -> Result<Self> {
        if name.is_empty() || name == "." || name == ".." || name.contains(['/', '\0']) {
            return Err(FsError::InvalidName {
                name: name.to_owned(),
            });
        }
        Ok(Self(name))
    }

    /// The component as text.
    pub fn as_str(&self) -> &'a str {
        self.0
    }
}

/// What a name in a directory is, seen without following it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    /// A regular file.
    File,
    /// A directory.
    Directory,
    /// A symlink (never followed).
    Symlink,
    /// A FIFO, socket or device.
    Other,
}

/// A directory entry as seen by `fstatat(AT_SYMLINK_NOFOLLOW)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    /// What it is.
    pub kind: EntryKind,
    /// Its permission bits (`st_mode & 0o7777`).
    pub permissions: u32,
    /// Its size in bytes (of the link itself for a symlink).
    pub size: u64,
}

/// Whether a directory already existed or this call created it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// It was already there (and was verified to be a real directory).
    Existing,
    /// This call created it with `mkdirat` and fsynced its parent.
    Created,
}

/// What a walk does when a directory on the way is missing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MissingDirs {
    /// Fail with [`FsError::NotFound`].
    Refuse,
    /// Create it (one component at a time), then continue.
    Create,
}

/// The end of a walk that may have created directories.
#[derive(Debug)]
pub struct Walked {
    /// The directory at the end of the walk.
    pub dir: Dir,
    /// Index of the first component this walk created; all later ones were created too.
    pub created_from: Option<usize>,
}

/// How far a non-creating probe got.
#[derive(Debug)]
pub enum Probe {
    /// Every component exists and is a real directory.
    Complete(Dir),
    /// Components from `index` on are missing; `deepest` is the last one that exists.
    MissingFrom {
        /// Index of the first missing component.
        index: usize,
        /// The deepest existing directory (the anchor when `index == 0`).
        deepest: Dir,
    },
}

/// Permission bits for a file this crate creates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Permissions {
    /// `0o666` filtered by the process umask, like any newly created file (what an editor or a
    /// shell redirection would create: the Write tool's new files).
    UmaskDefault,
    /// These bits filtered by the process umask: the umask can take bits away, never add them,
    /// so the file is never more than `bits` (a umask of `000` gives exactly `bits`). For the
    /// files planhost itself creates: plan artifacts and publications are `AtMost(0o644)`.
    AtMost(u32),
    /// Exactly these bits (set with `fchmod`, so the umask does not apply). The file is created
    /// readable and writable by its owner alone, and has these bits before anything is written.
    Exact(u32),
}

impl Permissions {
    /// The mode `openat(O_CREAT)` is given.
    fn create_mode(self) -> u32 {
        match self {
            Self::UmaskDefault => 0o666,
            Self::AtMost(bits) => bits & 0o777,
            Self::Exact(_) => 0o600,
        }
    }
}

/// An open directory. Children are reached only through this fd, never by path.
#[derive(Debug)]
pub struct Dir {
    fd: OwnedFd,
    path: PathBuf,
}

impl Dir {
    /// Opens an absolute directory path as a trust anchor.
    ///
    /// Symlinks inside `path` itself are followed: the caller vouches for the anchor (a workspace
    /// root). Everything below it is reached with `O_NOFOLLOW`.
    pub fn open_anchor(path: &Path) -> Result<Self> {
        if !path.is_absolute() {
            return Err(FsError::InvalidPath {
                path: path.display().to_string(),
                reason: "anchor must be absolute",
            });
        }
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
        match rfs::open(path, flags, Mode::empty()) {
            Ok(fd) => Ok(Self {
                fd,
                path: path.to_path_buf(),
            }),
            Err(Errno::NOENT) => Err(FsError::NotFound { path: path.into() }),
            Err(Errno::NOTDIR) => Err(FsError::NotDirectory { path: path.into() }),
            Err(e) => Err(FsError::io("open", path, e.into())),
        }
    }

    /// The path this handle was reached by (for messages; never used to open anything).
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn child(&self, name: Name<'_>) -> PathBuf {
        self.path.join(name.as_str())
    }

    /// Reports what `name` is without following it, or `None` when it does not exist.
    pub fn kind_of(&self, name: Name<'_>) -> Result<Option<EntryKind>> {
        Ok(self.entry(name)?.map(|e| e.kind))
    }

    /// Describes `name` without following it (`fstatat(AT_SYMLINK_NOFOLLOW)`), or `None` when
    /// it does not exist.
    pub fn entry(&self, name: Name<'_>) -> Result<Option<Entry>> {
        match rfs::statat(&self.fd, name.as_str(), AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) => Ok(Some(Entry {
                kind: kind_from_mode(st.st_mode),
                permissions: st.st_mode & 0o7777,
                size: u64::try_from(st.st_size).unwrap_or(0),
            })),
            Err(Errno::NOENT) => Ok(None),
            Err(e) => Err(FsError::io("fstatat", self.child(name), e.into())),
        }
    }

    /// Device and inode of `name` without following it (`fstatat(AT_SYMLINK_NOFOLLOW)`), or
    /// `None` when it does not exist. Lets a caller check that a name still refers to the file
    /// it opened.
    pub(crate) fn file_id(&self, name: Name<'_>) -> Result<Option<FileId>> {
        match rfs::statat(&self.fd, name.as_str(), AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) => Ok(Some(FileId::from_stat(&st))),
            Err(Errno::NOENT) => Ok(None),
            Err(e) => Err(FsError::io("fstatat", self.child(name), e.into())),
        }
    }

    /// The target of the symlink `name` (`readlinkat`), as stored; nothing behind it is
    /// examined.
    pub fn read_link(&self, name: Name<'_>) -> Result<PathBuf> {
        use std::os::unix::ffi::OsStringExt as _;
        match rfs::readlinkat(&self.fd, name.as_str(), Vec::new()) {
            Ok(target) => Ok(PathBuf::from(std::ffi::OsString::from_vec(
                target.into_bytes(),
            ))),
            Err(Errno::NOENT) => Err(FsError::NotFound {
                path: self.child(name),
            }),
            // `EINVAL`: no longer a symlink (swapped since it was examined).
            Err(e) => Err(FsError::io("readlinkat", self.child(name), e.into())),
        }
    }

    /// Atomically replaces `name` with `bytes`, but only if `name` still holds the very file
    /// `read` has open (same device and inode): a compare-and-swap for read-modify-write
    /// callers that read the file through this directory. Returns `false`, having written
    /// nothing, when the name holds anything else.
    ///
    /// The new bytes are staged in a fsynced temp file, which is exchanged with `name`
    /// (`renameat2(RENAME_EXCHANGE)`); the temp name then holds exactly what `name` held at that
    /// instant. If that is the file read, it is unlinked and the directory fsynced. If not, the
    /// two are exchanged back and the staged file removed, so another file is never replaced.
    /// If even the exchange back was raced, what comes out decides: the file read is unlinked
    /// (the new bytes took its place), anything else is left under the temp name rather than
    /// unlinked. Where the filesystem cannot exchange, the identity is checked just before a
    /// plain rename, which leaves the span of those two system calls.
    pub fn replace_if_holds(
        &self,
        name: Name<'_>,
        read: &File,
        bytes: &[u8],
        permissions: Permissions,
    ) -> Result<bool> {
        let expected = FileId::of_file(read, &self.child(name))?;
        let staged = self.stage(name, bytes, permissions)?;
        if self.file_id(name)? != Some(expected) {
            return Ok(false);
        }
        let temp_name = staged.temp_name().to_owned();
        let temp = Name::new(&temp_name)?;
        let Some(new) = self.file_id(temp)? else {
            return Err(FsError::NotFound {
                path: self.child(temp),
            });
        };
        match self.exchange(temp, name) {
            Ok(()) => {}
            Err(Errno::INVAL | Errno::NOSYS | Errno::OPNOTSUPP) => {
                staged.commit(Replace::Allow)?;
                return Ok(true);
            }
            Err(e) => return Err(FsError::io("renameat2", self.child(name), e.into())),
        }
        if self.file_id(temp)? == Some(expected) {
            // The temp name now holds the file read: dropping `staged` unlinks it.
            drop(staged);
            self.sync()?;
            return Ok(true);
        }
        // Another file held the name: give it back.
        let undone = self.exchange(temp, name).is_ok();
        let now = self.file_id(temp)?;
        if undone && now == Some(new) {
            drop(staged);
            self.sync()?;
            Ok(false)
        } else if undone && now == Some(expected) {
            // Raced again, and what came back is the file read: the new bytes are in the
            // directory in its place, as after a replace followed by the other party's renames.
            drop(staged);
            self.sync()?;
            Ok(true)
        } else {
            // The temp name holds someone else's file now: never unlink it.
            std::mem::forget(staged);
            Ok(false)
        }
    }

    fn exchange(&self, a: Name<'_>, b: Name<'_>) -> rustix::io::Result<()> {
        rfs::renameat_with(
            &self.fd,
            a.as_str(),
            &self.fd,
            b.as_str(),
            rfs::RenameFlags::EXCHANGE,
        )
    }

    /// Removes, deepest first, the directories a [`MissingDirs::Create`] walk over `names`
    /// created (`created_from` as reported in [`Walked`]). Best effort: stops at the first
    /// directory that is no longer empty or no longer a real directory.
    pub fn undo_created(&self, names: &[Name<'_>], created_from: Option<usize>) {
        let Some(first) = created_from else { return };
        for depth in (first..names.len()).rev() {
            let Ok(walked) = self.walk(&names[..depth], MissingDirs::Refuse) else {
                return;
            };
            if walked.dir.remove_empty_dir(names[depth]).is_err() {
                return;
            }
            let _: Result<()> = walked.dir.sync();
        }
    }

    /// Turns an open failure on `name` into the most specific error.
    fn classify(&self, name: Name<'_>, op: &'static str, errno: Errno) -> FsError {
        let path = self.child(name);
        match errno {
            Errno::NOENT => FsError::NotFound { path },
            Errno::EXIST | Errno::LOOP | Errno::NOTDIR | Errno::ISDIR | Errno::NXIO => {
                match self.kind_of(name) {
                    Ok(Some(EntryKind::Symlink)) => FsError::Symlink { path },
                    Ok(Some(EntryKind::Directory)) if errno == Errno::EXIST => {
                        FsError::AlreadyExists { path }
                    }
                    Ok(Some(EntryKind::Directory)) => FsError::IsDirectory { path },
                    Ok(Some(EntryKind::File | EntryKind::Other)) if errno == Errno::EXIST => {
                        FsError::AlreadyExists { path }
                    }
                    Ok(Some(EntryKind::File)) => FsError::NotDirectory { path },
                    Ok(Some(EntryKind::Other)) => FsError::NotRegularFile { path },
                    Ok(None) => FsError::NotFound { path },
                    Err(e) => e,
                }
            }
            other => FsError::io(op, path, other.into()),
        }
    }

    /// Opens the real directory `name`; a symlink or non-directory there is refused.
    pub fn open_dir(&self, name: Name<'_>) -> Result<Self> {
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        match rfs::openat(&self.fd, name.as_str(), flags, Mode::empty()) {
            Ok(fd) => Ok(Self {
                fd,
                path: self.child(name),
            }),
            // `IsDirectory` cannot describe a failure to open a directory: report the errno.
            Err(e) => Err(match self.classify(name, "openat", e) {
                FsError::IsDirectory { path } => FsError::io("openat", path, e.into()),
                classified @ (FsError::InvalidName { .. }
                | FsError::InvalidPath { .. }
                | FsError::NotFound { .. }
                | FsError::Symlink { .. }
                | FsError::NotDirectory { .. }
                | FsError::NotRegularFile { .. }
                | FsError::AlreadyExists { .. }
                | FsError::OutsideWorkspace { .. }
                | FsError::SymlinkEscape { .. }
                | FsError::NonUtf8 { .. }
                | FsError::Io { .. }) => classified,
            }),
        }
    }

    /// Opens `name` as a directory, creating it first when missing (then fsyncing `self`).
    pub fn ensure_dir(&self, name: Name<'_>) -> Result<(Self, Origin)> {
        match self.open_dir(name) {
            Ok(dir) => return Ok((dir, Origin::Existing)),
            Err(FsError::NotFound { .. }) => {}
            Err(e) => return Err(e),
        }
        match rfs::mkdirat(&self.fd, name.as_str(), Mode::from_raw_mode(DIR_MODE)) {
            Ok(()) => {
                let dir = self.open_dir(name)?;
                self.sync()?;
                Ok((dir, Origin::Created))
            }
            // Someone else created it between our open and mkdir: verify what they made.
            Err(Errno::EXIST) => Ok((self.open_dir(name)?, Origin::Existing)),
            Err(e) => Err(self.classify(name, "mkdirat", e)),
        }
    }

    /// Walks `names` below this directory, component by component.
    pub fn walk(&self, names: &[Name<'_>], missing: MissingDirs) -> Result<Walked> {
        let mut current = self.try_clone()?;
        let mut created_from = None;
        for (index, name) in names.iter().enumerate() {
            current = match missing {
                MissingDirs::Refuse => current.open_dir(*name)?,
                MissingDirs::Create => {
                    let (dir, origin) = current.ensure_dir(*name)?;
                    if origin == Origin::Created && created_from.is_none() {
                        created_from = Some(index);
                    }
                    dir
                }
            };
        }
        Ok(Walked {
            dir: current,
            created_from,
        })
    }

    /// Validates the existing prefix of `names` without creating anything (publication preflight).
    pub fn probe(&self, names: &[Name<'_>]) -> Result<Probe> {
        let mut current = self.try_clone()?;
        for (index, name) in names.iter().enumerate() {
            match current.open_dir(*name) {
                Ok(next) => current = next,
                Err(FsError::NotFound { .. }) => {
                    return Ok(Probe::MissingFrom {
                        index,
                        deepest: current,
                    });
                }
                Err(e) => return Err(e),
            }
        }
        Ok(Probe::Complete(current))
    }

    /// A second handle on the same directory.
    pub fn try_clone(&self) -> Result<Self> {
        let fd = self
            .fd
            .try_clone()
            .map_err(|e| FsError::io("dup", &self.path, e))?;
        Ok(Self {
            fd,
            path: self.path.clone(),
        })
    }

    /// Opens the regular file `name` for reading; symlinks, directories and devices are refused.
    pub fn open_file(&self, name: Name<'_>) -> Result<File> {
        // NONBLOCK keeps a FIFO from hanging the open; it is refused just below.
        let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK;
        let fd = rfs::openat(&self.fd, name.as_str(), flags, Mode::empty())
            .map_err(|e| self.classify(name, "openat", e))?;
        let st = rfs::fstat(&fd).map_err(|e| FsError::io("fstat", self.child(name), e.into()))?;
        match kind_from_mode(st.st_mode) {
            EntryKind::File => {}
            EntryKind::Directory => {
                return Err(FsError::IsDirectory {
                    path: self.child(name),
                });
            }
            EntryKind::Symlink | EntryKind::Other => {
                return Err(FsError::NotRegularFile {
                    path: self.child(name),
                });
            }
        }
        // Regular files ignore O_NONBLOCK, but clear it so later readers see ordinary semantics.
        rfs::fcntl_setfl(&fd, OFlags::empty())
            .map_err(|e| FsError::io("fcntl", self.child(name), e.into()))?;
        Ok(File::from(fd))
    }

    /// Reads the whole regular file `name`.
    pub fn read_file(&self, name: Name<'_>) -> Result<Vec<u8>> {
        use std::io::Read as _;
        let mut file = self.open_file(name)?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)
            .map_err(|e| FsError::io("read", self.child(name), e))?;
        Ok(bytes)
    }

    /// Creates `name` exclusively (`O_CREAT|O_EXCL|O_NOFOLLOW`), lets `fill` write it, then
    /// fsyncs the file. On any failure the new file is unlinked. The directory is not fsynced:
    /// call [`Dir::sync`] once the name should be durable.
    pub fn create_file_with(
        &self,
        name: Name<'_>,
        permissions: Permissions,
        fill: impl FnOnce(&mut File) -> std::io::Result<()>,
    ) -> Result<File> {
        let flags =
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let mode = Mode::from_raw_mode(permissions.create_mode());
        let fd = rfs::openat(&self.fd, name.as_str(), flags, mode)
            .map_err(|e| self.classify(name, "openat", e))?;
        let mut file = File::from(fd);
        let filled = (|| {
            if let Permissions::Exact(bits) = permissions {
                rfs::fchmod(&file, Mode::from_raw_mode(bits)).map_err(std::io::Error::from)?;
            }
            fill(&mut file)?;
            file.sync_all()
        })();
        match filled {
            Ok(()) => Ok(file),
            Err(source) => {
                drop(file);
                // Best effort: the original error is the one worth reporting.
                let _ = rfs::unlinkat(&self.fd, name.as_str(), AtFlags::empty());
                Err(FsError::io("write", self.child(name), source))
            }
        }
    }

    /// The names of this directory's entries (not `.` and `..`), read through its fd.
    pub fn entry_names(&self) -> Result<Vec<String>> {
        let io = |e: Errno| FsError::io("readdir", &self.path, e.into());
        let mut names = Vec::new();
        for entry in rfs::Dir::read_from(&self.fd).map_err(io)? {
            let entry = entry.map_err(io)?;
            let name = entry.file_name().to_bytes();
            if name != b"."
                && name != b".."
                && let Ok(name) = std::str::from_utf8(name)
            {
                names.push(name.to_owned());
            }
        }
        Ok(names)
    }

    /// Removes the file (or symlink) `name`.
    pub fn remove_file(&self, name: Name<'_>) -> Result<()> {
        rfs::unlinkat(&self.fd, name.as_str(), AtFlags::empty())
            .map_err(|e| self.classify(name, "unlinkat", e))
    }

    /// Removes the empty directory `name`.
    pub fn remove_empty_dir(&self, name: Name<'_>) -> Result<()> {
        rfs::unlinkat(&self.fd, name.as_str(), AtFlags::REMOVEDIR)
            .map_err(|e| FsError::io("rmdir", self.child(name), e.into()))
    }

    /// Renames `from` (in `self`) to `to` (in `to_dir`). With [`Replace::Forbid`] this is
    /// `renameat2(RENAME_NOREPLACE)`: an existing target, symlink included, is never replaced.
    pub fn rename(
        &self,
        from: Name<'_>,
        to_dir: &Dir,
        to: Name<'_>,
        replace: Replace,
    ) -> Result<()> {
        let done = match replace {
            Replace::Allow => rfs::renameat(&self.fd, from.as_str(), &to_dir.fd, to.as_str()),
            Replace::Forbid => {
                let renamed = rename_noreplace(&self.fd, from, &to_dir.fd, to);
                match renamed {
                    // A filesystem without RENAME_NOREPLACE: a hard link is just as exclusive
                    // (EEXIST, never replacing, never following) and as atomic; then the temp
                    // name goes.
                    Err(Errno::INVAL | Errno::NOSYS | Errno::OPNOTSUPP) => {
                        rfs::linkat(
                            &self.fd,
                            from.as_str(),
                            &to_dir.fd,
                            to.as_str(),
                            AtFlags::empty(),
                        )
                        .map(|()| {
                            // The target holds the complete bytes now; a temp name left behind
                            // (this unlink failing) is swept at the next start.
                            let _ = rfs::unlinkat(&self.fd, from.as_str(), AtFlags::empty());
                        })
                    }
                    other => other,
                }
            }
        };
        done.map_err(|e| match e {
            Errno::EXIST => to_dir.classify(to, "renameat2", e),
            other => FsError::io("renameat", self.child(from), other.into()),
        })
    }

    /// fsyncs the directory itself, making created, renamed and removed names durable.
    pub fn sync(&self) -> Result<()> {
        rfs::fsync(&self.fd).map_err(|e| FsError::io("fsync", &self.path, e.into()))
    }
}

/// `renameat2(RENAME_NOREPLACE)`; the `fs::noreplace_unsupported` failpoint answers `EINVAL`, as
/// a filesystem without the flag does.
fn rename_noreplace(
    from_dir: &OwnedFd,
    from: Name<'_>,
    to_dir: &OwnedFd,
    to: Name<'_>,
) -> rustix::io::Result<()> {
    fail_point!("fs::noreplace_unsupported", |_| Err(Errno::INVAL));
    rfs::renameat_with(
        from_dir,
        from.as_str(),
        to_dir,
        to.as_str(),
        rfs::RenameFlags::NOREPLACE,
    )
}

/// A file's identity (device and inode), used to tell whether a name was swapped under us.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FileId {
    dev: u64,
    ino: u64,
}

impl FileId {
    /// The identity of an open file (`fstat`).
    pub(crate) fn of_file(file: &File, path: &Path) -> Result<Self> {
        let st = rfs::fstat(file).map_err(|e| FsError::io("fstat", path, e.into()))?;
        Ok(Self::from_stat(&st))
    }

    // The field widths differ between architectures; on 64-bit Linux the conversion is a no-op.
    #[allow(clippy::useless_conversion)]
    fn from_stat(st: &rfs::Stat) -> Self {
        Self {
            dev: u64::from(st.st_dev),
            ino: u64::from(st.st_ino),
        }
    }
}

/// Whether a rename may replace an existing target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Replace {
    /// Plain `renameat`: an existing target is atomically replaced.
    Allow,
    /// `RENAME_NOREPLACE`: an existing target makes the rename fail with `AlreadyExists`.
    Forbid,
}

fn kind_from_mode(mode: rustix::fs::RawMode) -> EntryKind {
    match FileType::from_raw_mode(mode) {
        FileType::RegularFile => EntryKind::File,
        FileType::Directory => EntryKind::Directory,
        FileType::Symlink => EntryKind::Symlink,
        FileType::Fifo
        | FileType::Socket
        | FileType::CharacterDevice
        | FileType::BlockDevice
        | FileType::Unknown => EntryKind::Other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replace_if_holds_replaces_only_the_file_that_was_read() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = Dir::open_anchor(tmp.path()).unwrap();
        let name = Name::new("f.txt").unwrap();
        fs_err::write(tmp.path().join("f.txt"), b"read").unwrap();
        let read = dir.open_file(name).unwrap();
        // Another file takes the name after the read: nothing is written, it is kept.
        fs_err::write(tmp.path().join("other"), b"other").unwrap();
        fs_err::rename(tmp.path().join("other"), tmp.path().join("f.txt")).unwrap();
        let replaced = dir
            .replace_if_holds(name, &read, b"new", Permissions::UmaskDefault)
            .unwrap();
        assert!(!replaced);
        assert_eq!(fs_err::read(tmp.path().join("f.txt")).unwrap(), b"other");
        // The file read is still there: it is replaced, and no temp file is left.
        let read = dir.open_file(name).unwrap();
        let replaced = dir
            .replace_if_holds(name, &read, b"new", Permissions::Exact(0o640))
            .unwrap();
        assert!(replaced);
        assert_eq!(fs_err::read(tmp.path().join("f.txt")).unwrap(), b"new");
        assert_eq!(dir.entry(name).unwrap().unwrap().permissions, 0o640);
        assert_eq!(dir.entry_names().unwrap(), ["f.txt"]);
        // Gone altogether: nothing is written.
        fs_err::remove_file(tmp.path().join("f.txt")).unwrap();
        let replaced = dir
            .replace_if_holds(name, &read, b"again", Permissions::UmaskDefault)
            .unwrap();
        assert!(!replaced);
        assert!(dir.entry_names().unwrap().is_empty());
    }

    #[test]
    fn read_link_returns_the_target_as_stored() {
        let tmp = tempfile::tempdir().unwrap();
        fs_err::os::unix::fs::symlink("../somewhere/else", tmp.path().join("l")).unwrap();
        let dir = Dir::open_anchor(tmp.path()).unwrap();
        let target = dir.read_link(Name::new("l").unwrap()).unwrap();
        assert_eq!(target, Path::new("../somewhere/else"));
        assert_eq!(
            dir.read_link(Name::new("missing").unwrap())
                .unwrap_err()
                .code()
                .as_str(),
            "FS_NOT_FOUND"
        );
    }
}

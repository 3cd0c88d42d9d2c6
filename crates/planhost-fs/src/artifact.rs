//! The immutable plan artifact writer: `<root>/<dirs.root>/<dirs.submissions>/<file_name>`
//! (`.pi/plan/` for pi, `.planhost/plan/` for the other agents: the agent's profile says),
//! create-new, exact bytes.

use std::path::{Path, PathBuf};

pub use planhost_core::PlanDirs;

use crate::dir::{Dir, Name, Origin, Permissions};
use crate::error::{FsError, WriteFailure};

/// Mode of a plan artifact (less what the umask takes away): its owner reads and writes it,
/// everyone else may only read it, whatever the umask. Not `0o444`: the artifact's immutability
/// is its SHA-256, which every approval checks (a changed file is `PLAN_ARTIFACT_CHANGED`); a
/// read-only mode would stop nobody who owns the file (the agent's Bash runs as that owner and
/// can `chmod`), and git records only `0644`/`0755` anyway.
pub const ARTIFACT_MODE: u32 = 0o644;

/// Longest file name Linux accepts for one component, in bytes.
const NAME_MAX: usize = 255;

/// Where an artifact was written and the identity an approval binds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanArtifact {
    /// `.pi/plan/<file_name>`, `/`-separated, relative to the workspace root.
    pub relative_path: String,
    /// Lowercase hex SHA-256 of the exact bytes written.
    pub sha256: String,
    /// Number of bytes written.
    pub size_bytes: u64,
}

/// Why [`write_plan_artifact`] wrote nothing. Every variant leaves no artifact file behind.
#[derive(Debug, thiserror::Error)]
pub enum ArtifactError {
    /// The root is not an absolute existing directory, or the file name is not a plain `*.md`
    /// name. Code `PLAN_ARTIFACT_PATH_INVALID`.
    #[error("invalid plan artifact path: {reason}")]
    PathInvalid {
        /// Why the path was refused.
        reason: String,
    },
    /// `.pi`, `.pi/plan` or the target name is a symlink (dangling or not).
    /// Code `PLAN_ARTIFACT_SYMLINK`.
    #[error("plan artifact path contains a symlink: {}", path.display())]
    Symlink {
        /// The symlink.
        path: PathBuf,
    },
    /// `.pi` or `.pi/plan` exists but is not a directory. Deliberately folded into the code
    /// `PLAN_ARTIFACT_PATH_INVALID`: seed 000 names path validation, symlink, write and collision
    /// failures only; the variant keeps the detail for logs.
    #[error("plan artifact directory is not a directory: {}", path.display())]
    NotDirectory {
        /// The non-directory.
        path: PathBuf,
    },
    /// Something already exists at the target name. Code `PLAN_ARTIFACT_COLLISION`.
    #[error("plan artifact already exists: {}", path.display())]
    Collision {
        /// The existing target.
        path: PathBuf,
    },
    /// An I/O failure while creating directories, writing or syncing; a partially written file
    /// was removed. Code `PLAN_ARTIFACT_WRITE_FAILED`.
    #[error("plan artifact write failed: {source}")]
    WriteFailed {
        /// The underlying failure.
        #[source]
        source: FsError,
    },
}

impl ArtifactError {
    /// The stable wire code (seed 000 §5).
    pub fn code(&self) -> planhost_core::ErrorCode {
        match self {
            Self::PathInvalid { .. } | Self::NotDirectory { .. } => {
                planhost_core::ErrorCode::PlanArtifactPathInvalid
            }
            Self::Symlink { .. } => planhost_core::ErrorCode::PlanArtifactSymlink,
            Self::Collision { .. } => planhost_core::ErrorCode::PlanArtifactCollision,
            Self::WriteFailed { .. } => planhost_core::ErrorCode::PlanArtifactWriteFailed,
        }
    }
}

impl From<FsError> for ArtifactError {
    fn from(e: FsError) -> Self {
        match WriteFailure::from(e) {
            WriteFailure::Symlink(path) => Self::Symlink { path },
            WriteFailure::NotDirectory(path) => Self::NotDirectory { path },
            WriteFailure::Collision(path) => Self::Collision { path },
            WriteFailure::PathInvalid(reason) => Self::PathInvalid { reason },
            WriteFailure::Write(source) => Self::WriteFailed { source },
        }
    }
}

/// Writes `markdown` byte for byte to the new file
/// `<workspace_root>/<dirs.root>/<dirs.submissions>/<file_name>`, mode [`ARTIFACT_MODE`] (the
/// two directories, when created, `0o755`), less the umask.
///
/// Create-new only: an existing target is a collision and is never replaced. `.pi` and
/// `.pi/plan` are created one at a time when missing; a symlinked or non-directory component is
/// refused. The file is fsynced, then its directory, then the parent of each created directory.
/// On failure nothing is left behind: the file is unlinked and directories this call created are
/// removed again.
pub fn write_plan_artifact(
    workspace_root: &Path,
    dirs: PlanDirs,
    file_name: &str,
    markdown: &[u8],
) -> Result<PlanArtifact, ArtifactError> {
    validate_root(workspace_root)?;
    let name = validate_file_name(file_name)?;
    let root = Dir::open_anchor(workspace_root)?;
    let pi_name = Name::new(dirs.root)?;
    let plan_name = Name::new(dirs.submissions)?;

    let (pi, pi_origin) = root.ensure_dir(pi_name)?;
    let written = pi.ensure_dir(plan_name).and_then(|(plan, plan_origin)| {
        let result = plan.write_new(name, markdown, Permissions::AtMost(ARTIFACT_MODE));
        if let Err(e) = &result {
            remove_renamed(&plan, name, e);
            roll_back(&pi, plan_name, plan_origin);
        }
        result
    });
    if let Err(e) = written {
        roll_back(&root, pi_name, pi_origin);
        return Err(e.into());
    }
    Ok(PlanArtifact {
        relative_path: format!("{}{file_name}", dirs.submissions_prefix()),
        sha256: planhost_core::sha256_hex(markdown),
        size_bytes: markdown.len() as u64,
    })
}

/// What an approval surface finds at an artifact's path now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArtifactOnDisk {
    /// A regular file whose bytes hash and measure exactly as recorded.
    Intact,
    /// A regular file with other bytes (appended to, rewritten at the same size, truncated).
    Changed {
        /// SHA-256 of what is there now.
        sha256: String,
        /// Its size.
        size_bytes: u64,
    },
    /// Nothing at the path.
    Missing,
    /// A symlink, directory or other non-regular file where the artifact was.
    NotAFile,
}

/// Compares `<workspace_root>/<relative_path>` (a `.pi/plan/<name>` path an approval recorded)
/// with the recorded SHA-256 and size, walking `.pi` and `.pi/plan` by directory handles and
/// opening the file without following a symlink; nothing is created or changed. Reading stops
/// one byte past the largest plan, so a huge file planted there cannot stall the host.
pub fn verify_plan_artifact(
    workspace_root: &Path,
    relative_path: &str,
    sha256: &str,
    size_bytes: u64,
) -> Result<ArtifactOnDisk, ArtifactError> {
    use std::io::Read as _;
    validate_root(workspace_root)?;
    let (dirs, file_name) = PlanDirs::ALL
        .iter()
        .find_map(|d| {
            relative_path
                .strip_prefix(&d.submissions_prefix())
                .map(|name| (*d, name))
        })
        .ok_or_else(|| ArtifactError::PathInvalid {
            reason: format!("{relative_path:?} is not under a plan directory planhost writes"),
        })?;
    let name = validate_file_name(file_name)?;
    let root = Dir::open_anchor(workspace_root)?;
    let plan = match root.probe(&[Name::new(dirs.root)?, Name::new(dirs.submissions)?]) {
        Ok(crate::dir::Probe::Complete(dir)) => dir,
        Ok(crate::dir::Probe::MissingFrom { .. }) => return Ok(ArtifactOnDisk::Missing),
        Err(
            FsError::Symlink { .. } | FsError::NotDirectory { .. } | FsError::NotRegularFile { .. },
        ) => {
            return Ok(ArtifactOnDisk::NotAFile);
        }
        Err(e) => return Err(e.into()),
    };
    let file = match plan.open_file(name) {
        Ok(file) => file,
        Err(FsError::NotFound { .. }) => return Ok(ArtifactOnDisk::Missing),
        Err(
            FsError::Symlink { .. } | FsError::IsDirectory { .. } | FsError::NotRegularFile { .. },
        ) => return Ok(ArtifactOnDisk::NotAFile),
        Err(e) => return Err(e.into()),
    };
    let mut bytes = Vec::new();
    let cap = planhost_core::MAX_PLAN_BYTES as u64 + 1;
    file.take(cap)
        .read_to_end(&mut bytes)
        .map_err(|e| ArtifactError::from(FsError::io("read", plan.path().join(file_name), e)))?;
    let now = planhost_core::sha256_hex(&bytes);
    let size = bytes.len() as u64;
    Ok(if size == size_bytes && now.eq_ignore_ascii_case(sha256) {
        ArtifactOnDisk::Intact
    } else {
        ArtifactOnDisk::Changed {
            sha256: now,
            size_bytes: size,
        }
    })
}

/// The one failure after the rename, the directory's fsync, leaves the complete file at its
/// name. It is this call's own file (renamed there without replacing), and the call reports
/// failure, so it is removed: a failed write leaves no artifact behind.
fn remove_renamed(plan: &Dir, name: Name<'_>, error: &FsError) {
    if let FsError::Io {
        op: "fsync", path, ..
    } = error
        && path == plan.path()
        && plan.remove_file(name).is_ok()
    {
        let _: Result<(), FsError> = plan.sync();
    }
}

/// Removes a directory this call created; best effort, since the original error matters more.
fn roll_back(parent: &Dir, name: Name<'_>, origin: Origin) {
    match origin {
        Origin::Existing => {}
        Origin::Created => {
            if parent.remove_empty_dir(name).is_ok() {
                let _: Result<(), FsError> = parent.sync();
            }
        }
    }
}

fn validate_root(root: &Path) -> Result<(), ArtifactError> {
    if !root.is_absolute() {
        return Err(ArtifactError::PathInvalid {
            reason: format!("workspace root {} is not absolute", root.display()),
        });
    }
    if !root.is_dir() {
        return Err(ArtifactError::PathInvalid {
            reason: format!(
                "workspace root {} is not an existing directory",
                root.display()
            ),
        });
    }
    Ok(())
}

fn validate_file_name(file_name: &str) -> Result<Name<'_>, ArtifactError> {
    let invalid = |why: &str| ArtifactError::PathInvalid {
        reason: format!("file name {file_name:?} {why}"),
    };
    if file_name.contains("..") {
        return Err(invalid("contains `..`"));
    }
    markdown_name(file_name).map_err(invalid)
}

/// The rules every plan file name shares (artifacts and publications): one plain path component
/// of at most 255 bytes, no backslash, a non-empty stem and the `.md` ending.
pub(crate) fn markdown_name(file_name: &str) -> Result<Name<'_>, &'static str> {
    if file_name.contains('\\') {
        return Err("contains a backslash");
    }
    if file_name.len() > NAME_MAX {
        return Err("is longer than 255 bytes");
    }
    let name = Name::new(file_name).map_err(|_| "is not a single path component")?;
    match file_name.strip_suffix(".md") {
        Some(stem) if !stem.is_empty() => Ok(name),
        Some(_) | None => Err("must be a non-empty name ending in `.md`"),
    }
}

/// Removes crash leftovers (stale temp files) from a workspace's plan directories (every
/// agent's: `.pi/plan/`, `.pi/plans/`, `.planhost/plan/`, `.planhost/plans/`), reached without
/// following symlinks; returns the workspace-relative paths removed. A missing directory has
/// nothing to sweep.
pub fn sweep_plan_dirs(workspace_root: &Path) -> crate::Result<Vec<String>> {
    let root = Dir::open_anchor(workspace_root)?;
    let mut removed = Vec::new();
    for dirs in PlanDirs::ALL {
        let top = match root.open_dir(Name::new(dirs.root)?) {
            Ok(d) => d,
            Err(FsError::NotFound { .. }) => continue,
            Err(e) => return Err(e),
        };
        for sub in [dirs.submissions, dirs.published] {
            let dir = match top.open_dir(Name::new(sub)?) {
                Ok(d) => d,
                Err(FsError::NotFound { .. }) => continue,
                Err(e) => return Err(e),
            };
            removed.extend(
                dir.sweep_stale_temps()?
                    .into_iter()
                    .map(|n| format!("{}/{sub}/{n}", dirs.root)),
            );
        }
    }
    Ok(removed)
}

/// The complete files in a workspace's submission directories (every agent's; not temp
/// files), as workspace-relative paths: what `doctor` compares with the rows that point at
/// artifacts. A missing directory has none.
pub fn plan_artifact_paths(workspace_root: &Path) -> crate::Result<Vec<String>> {
    let root = Dir::open_anchor(workspace_root)?;
    let mut paths = Vec::new();
    for dirs in PlanDirs::ALL {
        let dir = match root
            .open_dir(Name::new(dirs.root)?)
            .and_then(|top| top.open_dir(Name::new(dirs.submissions)?))
        {
            Ok(d) => d,
            Err(FsError::NotFound { .. }) => continue,
            Err(e) => return Err(e),
        };
        paths.extend(
            dir.entry_names()?
                .into_iter()
                .filter(|n| !n.starts_with(crate::TEMP_PREFIX))
                .map(|n| format!("{}{n}", dirs.submissions_prefix())),
        );
    }
    paths.sort();
    Ok(paths)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write as _;

    #[test]
    fn sweeping_never_follows_a_symlinked_pi_dir() {
        let (ws, elsewhere) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let victim = elsewhere.path().join("plan");
        fs_err::create_dir(&victim).unwrap();
        let temp = victim.join(format!("{}4194303-0", crate::TEMP_PREFIX));
        fs_err::File::create(&temp).unwrap();
        fs_err::os::unix::fs::symlink(elsewhere.path(), ws.path().join(PlanDirs::PI.root)).unwrap();
        let err = sweep_plan_dirs(ws.path()).unwrap_err();
        assert!(matches!(err, FsError::Symlink { .. }), "{err:?}");
        assert!(temp.exists(), "a file behind the symlink was removed");
        assert_eq!(
            sweep_plan_dirs(elsewhere.path()).unwrap(),
            Vec::<String>::new()
        );
    }

    #[test]
    fn file_name_rules() {
        for bad in [
            "", ".md", "a/b.md", "a\0.md", "..md", "x..y.md", "plan.txt", "a\\b.md",
        ] {
            let err = validate_file_name(bad).unwrap_err();
            assert_eq!(err.code().as_str(), "PLAN_ARTIFACT_PATH_INVALID", "{bad:?}");
        }
        assert!(validate_file_name("2026-08-05-plan.md").is_ok());
    }

    #[test]
    fn failing_fill_leaves_no_file_and_no_created_dirs() {
        // Drives the same primitives as the writer with a sink that fails mid-write.
        let tmp = tempfile::tempdir().unwrap();
        let root = Dir::open_anchor(tmp.path()).unwrap();
        let (pi, pi_origin) = root
            .ensure_dir(Name::new(PlanDirs::PI.root).unwrap())
            .unwrap();
        let name = Name::new("x.md").unwrap();
        let err = pi
            .create_file_with(name, Permissions::UmaskDefault, |f| {
                f.write_all(b"partial")?;
                Err(std::io::Error::other("disk full"))
            })
            .unwrap_err();
        assert_eq!(err.code().as_str(), "FS_IO");
        assert!(!tmp.path().join(".pi/x.md").exists());
        roll_back(&root, Name::new(PlanDirs::PI.root).unwrap(), pi_origin);
        assert!(!tmp.path().join(".pi").exists());
    }
}

//! planhost's filesystem adapter: workspace paths, symlink-refusing directory handles, and the
//! immutable plan artifact writer.
//!
//! Three layers, each usable on its own:
//!
//! - [`Dir`]: an open directory fd. Children are reached one component at a time with
//!   `openat(O_NOFOLLOW)`, created with `mkdirat` / `O_CREAT|O_EXCL`, and made durable with
//!   `fsync` of file and directory. Staged temp files ([`Dir::stage`]) commit by `renameat` or
//!   `renameat2(RENAME_NOREPLACE)`. Publication (`.pi/plans/`) builds on these.
//! - [`Workspace`]: a canonical root that every tool path must stay inside.
//! - [`write_plan_artifact`]: the create-new `.pi/plan/<name>.md` writer of seed 000 §5 (in
//!   the directories the agent's profile names: `.planhost/plan/` for agents other than pi).
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let tmp = tempfile::tempdir()?;
//! let pi = planhost_fs::PlanDirs::PI;
//! let artifact = planhost_fs::write_plan_artifact(tmp.path(), pi, "first.md", b"# Plan\r\nstep")?;
//! assert_eq!(artifact.relative_path, ".pi/plan/first.md");
//! assert_eq!(artifact.size_bytes, 12);
//!
//! // A second write to the same name is a collision, never an overwrite.
//! let again = planhost_fs::write_plan_artifact(tmp.path(), pi, "first.md", b"other");
//! assert_eq!(again.unwrap_err().code().as_str(), "PLAN_ARTIFACT_COLLISION");
//!
//! let ws = planhost_fs::Workspace::new(tmp.path())?;
//! assert_eq!(ws.resolve(".pi/plan/first.md")?.relative(), ".pi/plan/first.md");
//! assert_eq!(ws.resolve("../elsewhere").unwrap_err().code().as_str(), "FS_OUTSIDE_WORKSPACE");
//! # Ok(())
//! # }
//! ```

/// `fail::fail_point!` with the test-only `failpoints` feature (see docs/reliability.md);
/// without it, nothing at all.
#[cfg(feature = "failpoints")]
macro_rules! fail_point {
    ($($t:tt)*) => { fail::fail_point!($($t)*) };
}
#[cfg(not(feature = "failpoints"))]
macro_rules! fail_point {
    ($($t:tt)*) => {};
}

mod artifact;
mod atomic;
mod dir;
mod error;
mod publish;
mod workspace;

pub use artifact::{
    ARTIFACT_MODE, ArtifactError, ArtifactOnDisk, PlanArtifact, PlanDirs, plan_artifact_paths,
    sweep_plan_dirs, verify_plan_artifact, write_plan_artifact,
};
pub use atomic::{Staged, TEMP_PREFIX};
pub use dir::{
    Dir, Entry, EntryKind, MissingDirs, Name, Origin, Permissions, Probe, Replace, Walked,
};
pub use error::{FsError, Result};
pub use publish::{
    Change, ConflictKind, Occupant, OnDisk, PUBLICATION_MODE, Preflight, PublishError, Published,
    Reconciled, inspect, preflight, publish_new, publish_update, reconcile,
};
pub use workspace::{OutsidePath, PathRequest, Resolved, Workspace, WorkspacePath};

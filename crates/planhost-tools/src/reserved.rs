//! Paths only the host writes: the plan artifacts and the published plans.

use planhost_fs::WorkspacePath;

/// Workspace-relative directories Write and Edit refuse, as canonical `/`-separated paths.
///
/// - `.pi/plan`: SubmitPlan's artifacts (seed 000 §5). Each is immutable once an approval row
///   records its SHA-256; an agent rewriting one would make the reviewed plan differ from the
///   bytes the approval indexes.
/// - `.pi/plans`: published plans, written only by the host's publication code.
/// - `.planhost/plan`, `.planhost/plans`: the same for every agent other than pi.
pub const RESERVED_DIRS: [&str; 4] = [".pi/plan", ".pi/plans", ".planhost/plan", ".planhost/plans"];

/// Whether `path` is one of [`RESERVED_DIRS`] or lies beneath one.
///
/// The check is by whole components of the canonical relative path, so `.pi/planning.md` is
/// free, and so is `.PI/plan/x.md` where the filesystem is case-sensitive (a different path).
pub(crate) fn is_reserved(path: &WorkspacePath) -> bool {
    let relative = path.relative();
    RESERVED_DIRS.iter().any(|dir| {
        relative
            .strip_prefix(dir)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
    })
}

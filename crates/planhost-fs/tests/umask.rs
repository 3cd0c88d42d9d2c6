//! What planhost-fs creates never depends on a loose umask (an outside attack found plan
//! artifacts and publications created `0666` under umask `000`). The umask is process-wide, so
//! this is a test binary of its own with a single test: no other test runs under the umask it
//! sets, and it puts the old one back.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;

use planhost_fs::{
    ARTIFACT_MODE, Dir, Name, PUBLICATION_MODE, Permissions, PlanDirs, publish_new, publish_update,
    write_plan_artifact,
};
use rustix::fs::Mode;

fn mode(path: &Path) -> u32 {
    fs_err::symlink_metadata(path).unwrap().permissions().mode() & 0o7777
}

/// `(mode, path, umask)` in octal, so a failure reads as `ls -l` would.
fn octal(mode: u32, rel: &str, umask: u32) -> (String, String, String) {
    (
        format!("{mode:03o}"),
        rel.to_owned(),
        format!("umask {umask:03o}"),
    )
}

/// Puts the process's umask back when dropped.
struct Umask(Mode);

impl Umask {
    fn set(bits: u32) -> Self {
        Self(rustix::process::umask(Mode::from_raw_mode(bits)))
    }
}

impl Drop for Umask {
    fn drop(&mut self) {
        rustix::process::umask(self.0);
    }
}

#[test]
fn artifacts_publications_and_their_directories_are_never_group_or_world_writable() {
    assert_eq!((ARTIFACT_MODE, PUBLICATION_MODE), (0o644, 0o644));
    // (umask, files, directories): a loose umask adds nothing; a strict one still takes away.
    for (umask, file, dir) in [
        (0o000, 0o644, 0o755),
        (0o002, 0o644, 0o755),
        (0o022, 0o644, 0o755),
        (0o077, 0o600, 0o700),
    ] {
        let ws = tempfile::tempdir().unwrap();
        let root = ws.path();
        let _umask = Umask::set(umask);
        let at = |rel: &str| octal(mode(&root.join(rel)), rel, umask);
        let want = |bits: u32, rel: &str| octal(bits, rel, umask);

        write_plan_artifact(root, PlanDirs::PI, "plan-0193.md", b"# Plan\n").unwrap();
        publish_new(root, PlanDirs::PI, "plan.md", b"# Plan\n").unwrap();
        assert_eq!(at(".pi"), want(dir, ".pi"));
        assert_eq!(at(".pi/plan"), want(dir, ".pi/plan"));
        assert_eq!(at(".pi/plans"), want(dir, ".pi/plans"));
        assert_eq!(
            at(".pi/plan/plan-0193.md"),
            want(file, ".pi/plan/plan-0193.md")
        );
        assert_eq!(at(".pi/plans/plan.md"), want(file, ".pi/plans/plan.md"));

        // An update keeps the file's mode, which the umask does not touch either.
        let base = planhost_core::sha256_hex(b"# Plan\n");
        publish_update(root, PlanDirs::PI, "plan.md", b"# Plan v2\n", &base).unwrap();
        assert_eq!(at(".pi/plans/plan.md"), want(file, ".pi/plans/plan.md"));

        // Exact bits are exact, and already so while the staged file is still a temp file;
        // the Write tool's `UmaskDefault` is what any program would create (0666 less the umask).
        let d = Dir::open_anchor(root).unwrap();
        let staged = d
            .stage(
                Name::new("kept.sh").unwrap(),
                b"x",
                Permissions::Exact(0o750),
            )
            .unwrap();
        assert_eq!(
            mode(&root.join(staged.temp_name())),
            0o750,
            "umask {umask:03o}"
        );
        drop(staged);
        d.replace_atomically(
            Name::new("new.txt").unwrap(),
            b"x",
            Permissions::UmaskDefault,
        )
        .unwrap();
        assert_eq!(
            mode(&root.join("new.txt")),
            0o666 & !umask,
            "umask {umask:03o}"
        );
    }
}

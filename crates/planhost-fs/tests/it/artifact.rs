use fs_err::os::unix::fs::symlink;
use std::path::Path;

use planhost_fs::{ArtifactError, PlanDirs, write_plan_artifact};
use proptest::prelude::*;

fn listing(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in fs_err::read_dir(&dir).unwrap() {
            let entry = entry.unwrap();
            let path = entry.path();
            out.push(path.strip_prefix(root).unwrap().display().to_string());
            if entry.file_type().unwrap().is_dir() {
                stack.push(path);
            }
        }
    }
    out.sort();
    out
}

fn code(result: Result<planhost_fs::PlanArtifact, ArtifactError>) -> &'static str {
    result.unwrap_err().code().as_str()
}

#[test]
fn writes_exact_bytes_and_reports_identity() {
    let tmp = tempfile::tempdir().unwrap();
    let mut big = Vec::with_capacity(1 << 20);
    while big.len() < (1 << 20) {
        big.extend_from_slice("línea ✓ with CRLF\r\n".as_bytes());
    }
    big.truncate(1 << 20);
    let cases: [(&str, &[u8]); 4] = [
        ("crlf.md", b"# Plan\r\n\r\n- one\r\n- two\r\n"),
        ("no-newline.md", b"# Plan\n\nlast line without newline"),
        ("non-ascii.md", "# Plän ✓\n\n日本語 — émoji 🚀\n".as_bytes()),
        ("one-mib.md", &big),
    ];
    for (name, bytes) in cases {
        let artifact = write_plan_artifact(tmp.path(), PlanDirs::PI, name, bytes).unwrap();
        assert_eq!(artifact.relative_path, format!(".pi/plan/{name}"));
        assert_eq!(artifact.size_bytes, bytes.len() as u64);
        assert_eq!(artifact.sha256, planhost_core::sha256_hex(bytes));
        let on_disk = fs_err::read(tmp.path().join(".pi/plan").join(name)).unwrap();
        assert!(on_disk == bytes, "bytes differ for {name}");
    }
    assert_eq!(big.len(), 1 << 20);
}

#[test]
fn creates_missing_directories_and_uses_existing_ones() {
    let tmp = tempfile::tempdir().unwrap();
    fs_err::create_dir(tmp.path().join(".pi")).unwrap();
    fs_err::write(tmp.path().join(".pi/keep"), b"k").unwrap();
    write_plan_artifact(tmp.path(), PlanDirs::PI, "a.md", b"a").unwrap();
    assert_eq!(
        listing(tmp.path()),
        [".pi", ".pi/keep", ".pi/plan", ".pi/plan/a.md"]
    );
}

#[test]
fn collision_never_overwrites() {
    let tmp = tempfile::tempdir().unwrap();
    write_plan_artifact(tmp.path(), PlanDirs::PI, "a.md", b"first").unwrap();
    let err = write_plan_artifact(tmp.path(), PlanDirs::PI, "a.md", b"second").unwrap_err();
    assert!(matches!(err, ArtifactError::Collision { .. }), "{err:?}");
    assert_eq!(err.code().as_str(), "PLAN_ARTIFACT_COLLISION");
    assert_eq!(
        fs_err::read(tmp.path().join(".pi/plan/a.md")).unwrap(),
        b"first"
    );
}

#[test]
fn existing_directory_at_target_is_a_collision() {
    let tmp = tempfile::tempdir().unwrap();
    fs_err::create_dir_all(tmp.path().join(".pi/plan/a.md")).unwrap();
    assert_eq!(
        code(write_plan_artifact(tmp.path(), PlanDirs::PI, "a.md", b"x")),
        "PLAN_ARTIFACT_COLLISION"
    );
}

#[test]
fn symlinked_pi_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    symlink(outside.path(), tmp.path().join(".pi")).unwrap();
    assert_eq!(
        code(write_plan_artifact(tmp.path(), PlanDirs::PI, "a.md", b"x")),
        "PLAN_ARTIFACT_SYMLINK"
    );
    assert!(listing(outside.path()).is_empty());
}

#[test]
fn symlinked_plan_dir_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    fs_err::create_dir(tmp.path().join(".pi")).unwrap();
    symlink(outside.path(), tmp.path().join(".pi/plan")).unwrap();
    assert_eq!(
        code(write_plan_artifact(tmp.path(), PlanDirs::PI, "a.md", b"x")),
        "PLAN_ARTIFACT_SYMLINK"
    );
    assert!(listing(outside.path()).is_empty());
}

#[test]
fn symlinked_target_pointing_outside_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let victim = outside.path().join("victim.md");
    fs_err::write(&victim, b"keep").unwrap();
    fs_err::create_dir_all(tmp.path().join(".pi/plan")).unwrap();
    symlink(&victim, tmp.path().join(".pi/plan/a.md")).unwrap();
    assert_eq!(
        code(write_plan_artifact(tmp.path(), PlanDirs::PI, "a.md", b"x")),
        "PLAN_ARTIFACT_SYMLINK"
    );
    assert_eq!(fs_err::read(&victim).unwrap(), b"keep");
}

#[test]
fn dangling_symlinked_target_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let missing = outside.path().join("created-through-link.md");
    fs_err::create_dir_all(tmp.path().join(".pi/plan")).unwrap();
    symlink(&missing, tmp.path().join(".pi/plan/a.md")).unwrap();
    assert_eq!(
        code(write_plan_artifact(tmp.path(), PlanDirs::PI, "a.md", b"x")),
        "PLAN_ARTIFACT_SYMLINK"
    );
    assert!(!missing.exists());
}

#[test]
fn pi_as_regular_file_is_refused_and_leaves_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    fs_err::write(tmp.path().join(".pi"), b"not a dir").unwrap();
    let err = write_plan_artifact(tmp.path(), PlanDirs::PI, "a.md", b"x").unwrap_err();
    assert!(matches!(err, ArtifactError::NotDirectory { .. }), "{err:?}");
    assert_eq!(err.code().as_str(), "PLAN_ARTIFACT_PATH_INVALID");
    assert_eq!(listing(tmp.path()), [".pi"]);
    assert_eq!(fs_err::read(tmp.path().join(".pi")).unwrap(), b"not a dir");
}

#[test]
fn plan_as_regular_file_fails_and_rolls_back_nothing_it_did_not_create() {
    let tmp = tempfile::tempdir().unwrap();
    fs_err::create_dir(tmp.path().join(".pi")).unwrap();
    fs_err::write(tmp.path().join(".pi/plan"), b"file").unwrap();
    assert_eq!(
        code(write_plan_artifact(tmp.path(), PlanDirs::PI, "a.md", b"x")),
        "PLAN_ARTIFACT_PATH_INVALID"
    );
    assert_eq!(listing(tmp.path()), [".pi", ".pi/plan"]);
}

#[test]
fn invalid_root_and_names_write_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    assert_eq!(
        code(write_plan_artifact(
            Path::new("rel"),
            PlanDirs::PI,
            "a.md",
            b"x"
        )),
        "PLAN_ARTIFACT_PATH_INVALID"
    );
    let missing = tmp.path().join("missing");
    assert_eq!(
        code(write_plan_artifact(&missing, PlanDirs::PI, "a.md", b"x")),
        "PLAN_ARTIFACT_PATH_INVALID"
    );
    let file = tmp.path().join("file");
    fs_err::write(&file, b"").unwrap();
    assert_eq!(
        code(write_plan_artifact(&file, PlanDirs::PI, "a.md", b"x")),
        "PLAN_ARTIFACT_PATH_INVALID"
    );
    for bad in ["", "../a.md", "a/b.md", "a\0b.md", "a.txt", ".md", ".."] {
        assert_eq!(
            code(write_plan_artifact(tmp.path(), PlanDirs::PI, bad, b"x")),
            "PLAN_ARTIFACT_PATH_INVALID",
            "{bad:?}"
        );
    }
    assert_eq!(listing(tmp.path()), ["file"]);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]
    #[test]
    fn any_bytes_round_trip(bytes in proptest::collection::vec(any::<u8>(), 0..4096)) {
        let tmp = tempfile::tempdir().unwrap();
        let artifact = write_plan_artifact(tmp.path(), PlanDirs::PI, "p.md", &bytes).unwrap();
        prop_assert_eq!(fs_err::read(tmp.path().join(".pi/plan/p.md")).unwrap(), bytes.clone());
        prop_assert_eq!(artifact.sha256, planhost_core::sha256_hex(&bytes));
        prop_assert_eq!(artifact.size_bytes, bytes.len() as u64);
    }
}

use fs_err::os::unix::fs::symlink;
use std::os::unix::fs::PermissionsExt as _;

use planhost_fs::{Dir, MissingDirs, Name, Origin, Permissions, Probe, Replace};

fn n(s: &str) -> Name<'_> {
    Name::new(s).unwrap()
}

#[test]
fn names_reject_traversal() {
    for bad in ["", ".", "..", "a/b", "a\0"] {
        assert_eq!(
            Name::new(bad).unwrap_err().code().as_str(),
            "FS_INVALID_NAME",
            "{bad:?}"
        );
    }
}

#[test]
fn walk_creates_one_component_at_a_time_and_reports_it() {
    let tmp = tempfile::tempdir().unwrap();
    fs_err::create_dir(tmp.path().join("a")).unwrap();
    let root = Dir::open_anchor(tmp.path()).unwrap();
    let walked = root
        .walk(&[n("a"), n("b"), n("c")], MissingDirs::Create)
        .unwrap();
    assert_eq!(walked.created_from, Some(1));
    assert!(tmp.path().join("a/b/c").is_dir());
    let again = root
        .walk(&[n("a"), n("b"), n("c")], MissingDirs::Create)
        .unwrap();
    assert_eq!(again.created_from, None);
}

#[test]
fn walk_refuses_symlinked_and_non_directories() {
    let tmp = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    symlink(outside.path(), tmp.path().join("link")).unwrap();
    fs_err::write(tmp.path().join("file"), b"").unwrap();
    let root = Dir::open_anchor(tmp.path()).unwrap();
    let err = root
        .walk(&[n("link"), n("x")], MissingDirs::Create)
        .unwrap_err();
    assert_eq!(err.code().as_str(), "FS_SYMLINK");
    let err = root
        .walk(&[n("file"), n("x")], MissingDirs::Create)
        .unwrap_err();
    assert_eq!(err.code().as_str(), "FS_NOT_DIRECTORY");
    let err = root.walk(&[n("missing")], MissingDirs::Refuse).unwrap_err();
    assert_eq!(err.code().as_str(), "FS_NOT_FOUND");
    assert!(fs_err::read_dir(outside.path()).unwrap().next().is_none());
}

#[test]
fn probe_validates_existing_prefix_without_creating() {
    let tmp = tempfile::tempdir().unwrap();
    let root = Dir::open_anchor(tmp.path()).unwrap();
    match root.probe(&[n(".pi"), n("plans")]).unwrap() {
        Probe::MissingFrom { index, .. } => assert_eq!(index, 0),
        Probe::Complete(_) => panic!("nothing exists yet"),
    }
    fs_err::create_dir(tmp.path().join(".pi")).unwrap();
    match root.probe(&[n(".pi"), n("plans")]).unwrap() {
        Probe::MissingFrom { index, deepest } => {
            assert_eq!(index, 1);
            assert_eq!(deepest.path(), tmp.path().join(".pi"));
        }
        Probe::Complete(_) => panic!("plans is missing"),
    }
    assert!(!tmp.path().join(".pi/plans").exists());
    symlink("/tmp", tmp.path().join(".pi/plans")).unwrap();
    assert_eq!(
        root.probe(&[n(".pi"), n("plans")])
            .unwrap_err()
            .code()
            .as_str(),
        "FS_SYMLINK"
    );
}

#[test]
fn ensure_dir_reports_origin() {
    let tmp = tempfile::tempdir().unwrap();
    let root = Dir::open_anchor(tmp.path()).unwrap();
    assert_eq!(root.ensure_dir(n("d")).unwrap().1, Origin::Created);
    assert_eq!(root.ensure_dir(n("d")).unwrap().1, Origin::Existing);
}

#[test]
fn open_file_refuses_symlinks_and_directories() {
    let tmp = tempfile::tempdir().unwrap();
    fs_err::write(tmp.path().join("real"), b"hi").unwrap();
    symlink(tmp.path().join("real"), tmp.path().join("link")).unwrap();
    fs_err::create_dir(tmp.path().join("d")).unwrap();
    let root = Dir::open_anchor(tmp.path()).unwrap();
    assert_eq!(root.read_file(n("real")).unwrap(), b"hi");
    assert_eq!(
        root.read_file(n("link")).unwrap_err().code().as_str(),
        "FS_SYMLINK"
    );
    assert_eq!(
        root.read_file(n("d")).unwrap_err().code().as_str(),
        "FS_IS_DIRECTORY"
    );
    assert_eq!(
        root.read_file(n("none")).unwrap_err().code().as_str(),
        "FS_NOT_FOUND"
    );
}

#[test]
fn staged_commit_forbid_never_replaces_and_cleans_up() {
    let tmp = tempfile::tempdir().unwrap();
    fs_err::write(tmp.path().join("t.md"), b"old").unwrap();
    let root = Dir::open_anchor(tmp.path()).unwrap();
    let staged = root
        .stage(n("t.md"), b"new", Permissions::UmaskDefault)
        .unwrap();
    assert!(tmp.path().join(staged.temp_name()).exists());
    let err = staged.commit(Replace::Forbid).unwrap_err();
    assert_eq!(err.code().as_str(), "FS_ALREADY_EXISTS");
    assert_eq!(fs_err::read(tmp.path().join("t.md")).unwrap(), b"old");
    let names: Vec<_> = fs_err::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["t.md"]);

    root.stage(n("fresh.md"), b"first", Permissions::UmaskDefault)
        .unwrap()
        .commit(Replace::Forbid)
        .unwrap();
    assert_eq!(fs_err::read(tmp.path().join("fresh.md")).unwrap(), b"first");
}

#[test]
fn replace_atomically_sets_exact_permissions() {
    let tmp = tempfile::tempdir().unwrap();
    fs_err::write(tmp.path().join("t"), b"old").unwrap();
    let root = Dir::open_anchor(tmp.path()).unwrap();
    root.replace_atomically(n("t"), b"new", Permissions::Exact(0o751))
        .unwrap();
    let meta = fs_err::metadata(tmp.path().join("t")).unwrap();
    assert_eq!(meta.permissions().mode() & 0o7777, 0o751);
    assert_eq!(fs_err::read(tmp.path().join("t")).unwrap(), b"new");
}

#[test]
fn dropped_stage_removes_temp() {
    let tmp = tempfile::tempdir().unwrap();
    let root = Dir::open_anchor(tmp.path()).unwrap();
    let staged = root.stage(n("t"), b"x", Permissions::UmaskDefault).unwrap();
    let temp = tmp.path().join(staged.temp_name());
    assert!(temp.exists());
    drop(staged);
    assert!(!temp.exists());
}

#[test]
fn undo_created_removes_only_what_the_walk_made() {
    let tmp = tempfile::tempdir().unwrap();
    fs_err::create_dir(tmp.path().join("a")).unwrap();
    let root = Dir::open_anchor(tmp.path()).unwrap();
    let names = [n("a"), n("b"), n("c")];
    let walked = root.walk(&names, MissingDirs::Create).unwrap();
    root.undo_created(&names, walked.created_from);
    assert!(tmp.path().join("a").is_dir());
    assert!(!tmp.path().join("a/b").exists());
}

#[test]
fn entry_reports_kind_and_permissions() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("f");
    fs_err::write(&file, b"abc").unwrap();
    fs_err::set_permissions(&file, std::fs::Permissions::from_mode(0o640)).unwrap();
    let root = Dir::open_anchor(tmp.path()).unwrap();
    let entry = root.entry(n("f")).unwrap().unwrap();
    assert_eq!(entry.kind, planhost_fs::EntryKind::File);
    assert_eq!(entry.permissions, 0o640);
    assert_eq!(entry.size, 3);
    assert!(root.entry(n("none")).unwrap().is_none());
}

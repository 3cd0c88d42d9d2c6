use fs_err::os::unix::fs::symlink;
use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};

use planhost_core::sha256_hex;
use planhost_fs::{
    Change, ConflictKind, Occupant, OnDisk, PlanDirs, Preflight, PublishError, Published,
    Reconciled, TEMP_PREFIX, inspect, preflight, publish_new, publish_update, reconcile,
};
use proptest::prelude::*;

const NAME: &str = "add-login-20260805-120000.md";

fn listing(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in fs_err::read_dir(&dir).unwrap() {
            let entry = entry.unwrap();
            out.push(
                entry
                    .path()
                    .strip_prefix(root)
                    .unwrap()
                    .display()
                    .to_string(),
            );
            if entry.file_type().unwrap().is_dir() {
                stack.push(entry.path());
            }
        }
    }
    out.sort();
    out
}

fn plans(root: &Path) -> PathBuf {
    root.join(".pi/plans")
}

fn target(root: &Path) -> PathBuf {
    plans(root).join(NAME)
}

fn temps_in(root: &Path) -> Vec<String> {
    let Ok(entries) = fs_err::read_dir(plans(root)) else {
        return Vec::new();
    };
    entries
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with(TEMP_PREFIX))
        .collect()
}

fn code<T: std::fmt::Debug>(result: Result<T, PublishError>) -> &'static str {
    result.unwrap_err().code().as_str()
}

fn conflict_kind(result: Result<Published, PublishError>) -> ConflictKind {
    let err = result.unwrap_err();
    assert_eq!(err.code().as_str(), "PUBLISH_CONFLICT", "{err:?}");
    err.conflict_kind().unwrap()
}

/// A workspace whose plan was published once with `b"v1"`.
fn published_v1() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    publish_new(tmp.path(), PlanDirs::PI, NAME, b"v1").unwrap();
    tmp
}

fn mkfifo(path: &Path) {
    rustix::fs::mkfifoat(
        rustix::fs::CWD,
        path,
        rustix::fs::Mode::from_raw_mode(0o600),
    )
    .unwrap();
}

#[test]
fn first_publication_creates_missing_dirs_and_exact_bytes() {
    let tmp = tempfile::tempdir().unwrap();
    let bytes = "# Plan: Añadir login\r\n\r\n- step ✓\n- no trailing newline".as_bytes();
    assert_eq!(
        preflight(tmp.path(), PlanDirs::PI, NAME).unwrap(),
        Preflight::Free
    );
    assert!(
        listing(tmp.path()).is_empty(),
        "preflight created something"
    );

    let published = publish_new(tmp.path(), PlanDirs::PI, NAME, bytes).unwrap();
    assert_eq!(
        published,
        Published {
            relative_path: format!(".pi/plans/{NAME}"),
            sha256: sha256_hex(bytes),
            size_bytes: bytes.len() as u64,
            change: Change::Created,
        }
    );
    assert!(fs_err::read(target(tmp.path())).unwrap() == bytes);
    assert_eq!(
        listing(tmp.path()),
        [
            ".pi".to_owned(),
            ".pi/plans".into(),
            format!(".pi/plans/{NAME}")
        ]
    );
    assert_eq!(
        preflight(tmp.path(), PlanDirs::PI, NAME).unwrap(),
        Preflight::Taken
    );
}

#[test]
fn first_publication_uses_existing_dirs_and_preflight_creates_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    fs_err::create_dir(tmp.path().join(".pi")).unwrap();
    fs_err::write(tmp.path().join(".pi/keep"), b"k").unwrap();
    assert_eq!(
        preflight(tmp.path(), PlanDirs::PI, NAME).unwrap(),
        Preflight::Free
    );
    assert_eq!(listing(tmp.path()), [".pi", ".pi/keep"]);

    fs_err::create_dir(plans(tmp.path())).unwrap();
    fs_err::write(plans(tmp.path()).join("other.md"), b"o").unwrap();
    assert_eq!(
        preflight(tmp.path(), PlanDirs::PI, NAME).unwrap(),
        Preflight::Free
    );
    publish_new(tmp.path(), PlanDirs::PI, NAME, b"x").unwrap();
    assert_eq!(
        fs_err::read(plans(tmp.path()).join("other.md")).unwrap(),
        b"o"
    );
    assert_eq!(fs_err::read(tmp.path().join(".pi/keep")).unwrap(), b"k");
}

#[test]
fn first_publication_never_overwrites() {
    let tmp = published_v1();
    assert_eq!(
        preflight(tmp.path(), PlanDirs::PI, NAME).unwrap(),
        Preflight::Taken
    );
    let err = publish_new(tmp.path(), PlanDirs::PI, NAME, b"v2").unwrap_err();
    assert!(matches!(err, PublishError::Collision { .. }), "{err:?}");
    assert_eq!(err.code().as_str(), "PUBLISH_COLLISION");
    assert_eq!(fs_err::read(target(tmp.path())).unwrap(), b"v1");
    assert!(temps_in(tmp.path()).is_empty());

    // A directory at the name is taken too, and stays a directory.
    let other = "other-20260805-120000.md";
    fs_err::create_dir(plans(tmp.path()).join(other)).unwrap();
    assert_eq!(
        preflight(tmp.path(), PlanDirs::PI, other).unwrap(),
        Preflight::Taken
    );
    assert_eq!(
        code(publish_new(tmp.path(), PlanDirs::PI, other, b"x")),
        "PUBLISH_COLLISION"
    );
    assert!(plans(tmp.path()).join(other).is_dir());
    assert!(temps_in(tmp.path()).is_empty());
}

#[test]
fn collision_takes_the_next_numbered_name() {
    let tmp = tempfile::tempdir().unwrap();
    let first = planhost_core::publication_file_name("Add login", "20260805-120000", 1);
    assert_eq!(first, "add-login-20260805-120000.md");
    publish_new(tmp.path(), PlanDirs::PI, &first, b"someone else").unwrap();
    assert_eq!(
        preflight(tmp.path(), PlanDirs::PI, &first).unwrap(),
        Preflight::Taken
    );
    let second = planhost_core::publication_file_name("Add login", "20260805-120000", 2);
    assert_eq!(second, "add-login-20260805-120000-2.md");
    assert_eq!(
        preflight(tmp.path(), PlanDirs::PI, &second).unwrap(),
        Preflight::Free
    );
    publish_new(tmp.path(), PlanDirs::PI, &second, b"ours").unwrap();
    assert_eq!(
        fs_err::read(plans(tmp.path()).join(&first)).unwrap(),
        b"someone else"
    );
    assert_eq!(
        fs_err::read(plans(tmp.path()).join(&second)).unwrap(),
        b"ours"
    );
}

#[test]
fn symlinked_pi_is_refused_everywhere() {
    let tmp = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    fs_err::create_dir(outside.path().join("plans")).unwrap();
    symlink(outside.path(), tmp.path().join(".pi")).unwrap();
    assert_eq!(
        code(preflight(tmp.path(), PlanDirs::PI, NAME)),
        "PUBLISH_SYMLINK"
    );
    assert_eq!(
        code(publish_new(tmp.path(), PlanDirs::PI, NAME, b"x")),
        "PUBLISH_SYMLINK"
    );
    let base = sha256_hex(b"x");
    assert_eq!(
        code(publish_update(tmp.path(), PlanDirs::PI, NAME, b"y", &base)),
        "PUBLISH_SYMLINK"
    );
    assert_eq!(
        code(inspect(tmp.path(), PlanDirs::PI, NAME)),
        "PUBLISH_SYMLINK"
    );
    assert_eq!(listing(outside.path()), ["plans"]);
}

#[test]
fn symlinked_plans_dir_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    fs_err::create_dir(tmp.path().join(".pi")).unwrap();
    symlink(outside.path(), plans(tmp.path())).unwrap();
    assert_eq!(
        code(preflight(tmp.path(), PlanDirs::PI, NAME)),
        "PUBLISH_SYMLINK"
    );
    assert_eq!(
        code(publish_new(tmp.path(), PlanDirs::PI, NAME, b"x")),
        "PUBLISH_SYMLINK"
    );
    assert!(listing(outside.path()).is_empty());
}

#[test]
fn non_directory_components_are_refused_and_left_alone() {
    let tmp = tempfile::tempdir().unwrap();
    fs_err::write(tmp.path().join(".pi"), b"file").unwrap();
    assert_eq!(
        code(preflight(tmp.path(), PlanDirs::PI, NAME)),
        "PUBLISH_NOT_DIRECTORY"
    );
    let err = publish_new(tmp.path(), PlanDirs::PI, NAME, b"x").unwrap_err();
    assert!(matches!(err, PublishError::NotDirectory { .. }), "{err:?}");
    assert_eq!(fs_err::read(tmp.path().join(".pi")).unwrap(), b"file");

    let tmp = tempfile::tempdir().unwrap();
    fs_err::create_dir(tmp.path().join(".pi")).unwrap();
    fs_err::write(plans(tmp.path()), b"file").unwrap();
    assert_eq!(
        code(preflight(tmp.path(), PlanDirs::PI, NAME)),
        "PUBLISH_NOT_DIRECTORY"
    );
    assert_eq!(
        code(publish_new(tmp.path(), PlanDirs::PI, NAME, b"x")),
        "PUBLISH_NOT_DIRECTORY"
    );
    assert_eq!(listing(tmp.path()), [".pi", ".pi/plans"]);

    let tmp = tempfile::tempdir().unwrap();
    mkfifo(&tmp.path().join(".pi"));
    assert_eq!(
        code(publish_new(tmp.path(), PlanDirs::PI, NAME, b"x")),
        "PUBLISH_NOT_DIRECTORY"
    );
}

#[test]
fn symlinked_target_is_refused_and_nothing_is_written_outside() {
    let tmp = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let victim = outside.path().join("victim.md");
    fs_err::write(&victim, b"keep").unwrap();
    fs_err::create_dir_all(plans(tmp.path())).unwrap();
    symlink(&victim, target(tmp.path())).unwrap();
    assert_eq!(
        code(preflight(tmp.path(), PlanDirs::PI, NAME)),
        "PUBLISH_SYMLINK"
    );
    assert_eq!(
        code(publish_new(tmp.path(), PlanDirs::PI, NAME, b"x")),
        "PUBLISH_SYMLINK"
    );
    assert_eq!(fs_err::read(&victim).unwrap(), b"keep");

    let dangling = outside.path().join("created-through-link.md");
    fs_err::remove_file(target(tmp.path())).unwrap();
    symlink(&dangling, target(tmp.path())).unwrap();
    assert_eq!(
        code(preflight(tmp.path(), PlanDirs::PI, NAME)),
        "PUBLISH_SYMLINK"
    );
    assert_eq!(
        code(publish_new(tmp.path(), PlanDirs::PI, NAME, b"x")),
        "PUBLISH_SYMLINK"
    );
    assert!(!dangling.exists());
    assert_eq!(listing(outside.path()), ["victim.md"]);
    assert!(temps_in(tmp.path()).is_empty());
}

#[test]
fn invalid_roots_and_names_touch_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("file");
    fs_err::write(&file, b"").unwrap();
    for root in [Path::new("relative"), &tmp.path().join("missing"), &file] {
        assert_eq!(
            code(preflight(root, PlanDirs::PI, NAME)),
            "PUBLISH_PATH_INVALID"
        );
        assert_eq!(
            code(publish_new(root, PlanDirs::PI, NAME, b"x")),
            "PUBLISH_PATH_INVALID"
        );
        assert_eq!(
            code(inspect(root, PlanDirs::PI, NAME)),
            "PUBLISH_PATH_INVALID"
        );
    }
    for bad in [
        "", "../a.md", "a/b.md", "a.txt", ".md", ".x.md", "..", "a\0.md",
    ] {
        assert_eq!(
            code(preflight(tmp.path(), PlanDirs::PI, bad)),
            "PUBLISH_PATH_INVALID"
        );
        assert_eq!(
            code(publish_new(tmp.path(), PlanDirs::PI, bad, b"x")),
            "PUBLISH_PATH_INVALID"
        );
        assert_eq!(
            code(publish_update(tmp.path(), PlanDirs::PI, bad, b"x", "00")),
            "PUBLISH_PATH_INVALID"
        );
    }
    assert_eq!(listing(tmp.path()), ["file"]);
}

#[test]
fn update_replaces_bytes_at_the_same_path_and_keeps_permissions() {
    let tmp = published_v1();
    let path = target(tmp.path());
    fs_err::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
    let before = fs_err::metadata(&path).unwrap().ino();

    let bytes = b"# Plan\r\nv2 \xE2\x9C\x93";
    let published =
        publish_update(tmp.path(), PlanDirs::PI, NAME, bytes, &sha256_hex(b"v1")).unwrap();
    assert_eq!(published.relative_path, format!(".pi/plans/{NAME}"));
    assert_eq!(published.sha256, sha256_hex(bytes));
    assert_eq!(published.change, Change::Replaced);
    assert_eq!(fs_err::read(&path).unwrap(), bytes);
    let meta = fs_err::metadata(&path).unwrap();
    assert_ne!(
        meta.ino(),
        before,
        "an update is a rename, not an in-place write"
    );
    assert_eq!(meta.permissions().mode() & 0o777, 0o640);
    assert!(temps_in(tmp.path()).is_empty());

    // The next update is based on what was just published.
    publish_update(tmp.path(), PlanDirs::PI, NAME, b"v3", &published.sha256).unwrap();
    assert_eq!(fs_err::read(&path).unwrap(), b"v3");
}

#[test]
fn update_over_modified_file_is_a_conflict() {
    let tmp = published_v1();
    fs_err::write(target(tmp.path()), b"edited by hand").unwrap();
    let result = publish_update(tmp.path(), PlanDirs::PI, NAME, b"v2", &sha256_hex(b"v1"));
    assert_eq!(conflict_kind(result), ConflictKind::Modified);
    assert_eq!(fs_err::read(target(tmp.path())).unwrap(), b"edited by hand");
    assert!(temps_in(tmp.path()).is_empty());
}

#[test]
fn update_over_deleted_file_is_a_conflict() {
    let tmp = published_v1();
    fs_err::remove_file(target(tmp.path())).unwrap();
    let result = publish_update(tmp.path(), PlanDirs::PI, NAME, b"v2", &sha256_hex(b"v1"));
    assert_eq!(conflict_kind(result), ConflictKind::Deleted);
    assert!(!target(tmp.path()).exists());
    assert!(temps_in(tmp.path()).is_empty());

    fs_err::remove_dir_all(tmp.path().join(".pi")).unwrap();
    let result = publish_update(tmp.path(), PlanDirs::PI, NAME, b"v2", &sha256_hex(b"v1"));
    assert_eq!(conflict_kind(result), ConflictKind::Deleted);
    assert!(
        listing(tmp.path()).is_empty(),
        "an update must not recreate dirs"
    );
}

#[test]
fn update_over_swapped_in_symlink_is_a_conflict_and_outside_is_untouched() {
    let tmp = published_v1();
    let outside = tempfile::tempdir().unwrap();
    // The link's target holds exactly the base bytes: following it would pass verification.
    let victim = outside.path().join("victim.md");
    fs_err::write(&victim, b"v1").unwrap();
    fs_err::remove_file(target(tmp.path())).unwrap();
    symlink(&victim, target(tmp.path())).unwrap();

    let result = publish_update(tmp.path(), PlanDirs::PI, NAME, b"v2", &sha256_hex(b"v1"));
    assert_eq!(conflict_kind(result), ConflictKind::Symlink);
    assert_eq!(fs_err::read(&victim).unwrap(), b"v1");
    assert!(
        fs_err::symlink_metadata(target(tmp.path()))
            .unwrap()
            .is_symlink()
    );
    assert_eq!(listing(outside.path()), ["victim.md"]);
    assert!(temps_in(tmp.path()).is_empty());
}

#[test]
fn update_over_directory_or_fifo_is_a_conflict() {
    let tmp = published_v1();
    fs_err::remove_file(target(tmp.path())).unwrap();
    fs_err::create_dir(target(tmp.path())).unwrap();
    fs_err::write(target(tmp.path()).join("inner"), b"i").unwrap();
    let result = publish_update(tmp.path(), PlanDirs::PI, NAME, b"v2", &sha256_hex(b"v1"));
    assert_eq!(conflict_kind(result), ConflictKind::Directory);
    assert_eq!(
        fs_err::read(target(tmp.path()).join("inner")).unwrap(),
        b"i"
    );
    assert!(temps_in(tmp.path()).is_empty());

    fs_err::remove_dir_all(target(tmp.path())).unwrap();
    mkfifo(&target(tmp.path()));
    let result = publish_update(tmp.path(), PlanDirs::PI, NAME, b"v2", &sha256_hex(b"v1"));
    assert_eq!(conflict_kind(result), ConflictKind::NotRegular);
    assert!(temps_in(tmp.path()).is_empty());
}

#[test]
fn update_with_unchanged_bytes_verifies_and_writes_nothing() {
    let tmp = published_v1();
    let path = target(tmp.path());
    let before = fs_err::metadata(&path).unwrap().ino();
    // The caller's check: the disk already holds the latest checkpoint.
    assert_eq!(
        inspect(tmp.path(), PlanDirs::PI, NAME).unwrap(),
        OnDisk::File {
            sha256: sha256_hex(b"v1"),
            size: 2
        }
    );
    let published =
        publish_update(tmp.path(), PlanDirs::PI, NAME, b"v1", &sha256_hex(b"v1")).unwrap();
    assert_eq!(published.change, Change::Unchanged);
    assert_eq!(published.sha256, sha256_hex(b"v1"));
    assert_eq!(fs_err::metadata(&path).unwrap().ino(), before);

    // Same bytes as the base, but the disk moved on: still a conflict, still no write.
    fs_err::write(&path, b"edited").unwrap();
    let result = publish_update(tmp.path(), PlanDirs::PI, NAME, b"v1", &sha256_hex(b"v1"));
    assert_eq!(conflict_kind(result), ConflictKind::Modified);
    assert_eq!(fs_err::read(&path).unwrap(), b"edited");
}

#[test]
fn inspect_reports_what_is_on_disk_without_following() {
    let tmp = tempfile::tempdir().unwrap();
    assert_eq!(
        inspect(tmp.path(), PlanDirs::PI, NAME).unwrap(),
        OnDisk::Missing
    );
    fs_err::create_dir_all(plans(tmp.path())).unwrap();
    assert_eq!(
        inspect(tmp.path(), PlanDirs::PI, NAME).unwrap(),
        OnDisk::Missing
    );
    assert!(listing(tmp.path()).len() == 2);

    fs_err::write(target(tmp.path()), b"abc").unwrap();
    assert_eq!(
        inspect(tmp.path(), PlanDirs::PI, NAME).unwrap(),
        OnDisk::File {
            sha256: sha256_hex(b"abc"),
            size: 3
        }
    );

    let outside = tempfile::tempdir().unwrap();
    fs_err::write(outside.path().join("f.md"), b"abc").unwrap();
    fs_err::remove_file(target(tmp.path())).unwrap();
    symlink(outside.path().join("f.md"), target(tmp.path())).unwrap();
    assert_eq!(
        inspect(tmp.path(), PlanDirs::PI, NAME).unwrap(),
        OnDisk::NotAFile(Occupant::Symlink)
    );

    fs_err::remove_file(target(tmp.path())).unwrap();
    fs_err::create_dir(target(tmp.path())).unwrap();
    assert_eq!(
        inspect(tmp.path(), PlanDirs::PI, NAME).unwrap(),
        OnDisk::NotAFile(Occupant::Directory)
    );

    fs_err::remove_dir(target(tmp.path())).unwrap();
    mkfifo(&target(tmp.path()));
    assert_eq!(
        inspect(tmp.path(), PlanDirs::PI, NAME).unwrap(),
        OnDisk::NotAFile(Occupant::Other)
    );
}

#[test]
fn reconcile_first_publication() {
    let tmp = tempfile::tempdir().unwrap();
    let expected = sha256_hex(b"v1");
    // Crash before anything was created: retry is safe.
    assert_eq!(
        reconcile(tmp.path(), PlanDirs::PI, NAME, &expected, None).unwrap(),
        Reconciled::NotWritten
    );
    // Crash after the write completed: do not repeat it.
    publish_new(tmp.path(), PlanDirs::PI, NAME, b"v1").unwrap();
    assert_eq!(
        reconcile(tmp.path(), PlanDirs::PI, NAME, &expected, None).unwrap(),
        Reconciled::AlreadyWritten
    );
    // Someone else's file at the name.
    fs_err::write(target(tmp.path()), b"theirs").unwrap();
    assert_eq!(
        reconcile(tmp.path(), PlanDirs::PI, NAME, &expected, None).unwrap(),
        Reconciled::Conflict(ConflictKind::Modified)
    );
}

#[test]
fn reconcile_update() {
    let tmp = published_v1();
    let base = sha256_hex(b"v1");
    let expected = sha256_hex(b"v2");
    let check = || reconcile(tmp.path(), PlanDirs::PI, NAME, &expected, Some(&base)).unwrap();
    assert_eq!(check(), Reconciled::NotWritten);
    publish_update(tmp.path(), PlanDirs::PI, NAME, b"v2", &base).unwrap();
    assert_eq!(check(), Reconciled::AlreadyWritten);

    fs_err::write(target(tmp.path()), b"edited").unwrap();
    assert_eq!(check(), Reconciled::Conflict(ConflictKind::Modified));
    fs_err::remove_file(target(tmp.path())).unwrap();
    assert_eq!(check(), Reconciled::Conflict(ConflictKind::Deleted));
    symlink("/nonexistent", target(tmp.path())).unwrap();
    assert_eq!(check(), Reconciled::Conflict(ConflictKind::Symlink));
    fs_err::remove_file(target(tmp.path())).unwrap();
    fs_err::create_dir(target(tmp.path())).unwrap();
    assert_eq!(check(), Reconciled::Conflict(ConflictKind::Directory));
    fs_err::remove_dir(target(tmp.path())).unwrap();
    mkfifo(&target(tmp.path()));
    assert_eq!(check(), Reconciled::Conflict(ConflictKind::NotRegular));
}

/// What the test sees at the published name, without following it.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Seen {
    Missing,
    File(Vec<u8>),
    Symlink(PathBuf),
    Directory,
}

fn seen(path: &Path) -> Seen {
    match fs_err::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Seen::Missing,
        Err(e) => panic!("{e}"),
        Ok(meta) if meta.is_symlink() => Seen::Symlink(fs_err::read_link(path).unwrap()),
        Ok(meta) if meta.is_dir() => Seen::Directory,
        Ok(_) => Seen::File(fs_err::read(path).unwrap()),
    }
}

fn clear(path: &Path) {
    match seen(path) {
        Seen::Missing => {}
        Seen::Directory => fs_err::remove_dir_all(path).unwrap(),
        Seen::File(_) | Seen::Symlink(_) => fs_err::remove_file(path).unwrap(),
    }
}

#[derive(Debug, Clone)]
enum Op {
    New(Vec<u8>),
    /// An update based on the last digest this test published.
    Update(Vec<u8>),
    /// An update whose base is the digest of arbitrary other bytes.
    StaleUpdate(Vec<u8>, Vec<u8>),
    ExternalWrite(Vec<u8>),
    ExternalDelete,
    ExternalSymlink,
    ExternalDirectory,
    /// Puts the last published bytes back, so later updates can succeed again.
    ExternalRestore,
}

fn bytes() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        Just(b"v1".to_vec()),
        Just(b"v2".to_vec()),
        proptest::collection::vec(any::<u8>(), 0..64),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        2 => bytes().prop_map(Op::New),
        4 => bytes().prop_map(Op::Update),
        1 => (bytes(), bytes()).prop_map(|(b, base)| Op::StaleUpdate(b, base)),
        1 => bytes().prop_map(Op::ExternalWrite),
        1 => Just(Op::ExternalDelete),
        1 => Just(Op::ExternalSymlink),
        1 => Just(Op::ExternalDirectory),
        2 => Just(Op::ExternalRestore),
    ]
}

/// Runs `update`, then checks it wrote exactly when the disk held bytes hashing to `base`.
fn check_update(
    root: &Path,
    new: &[u8],
    base: &str,
    before: &Seen,
) -> Result<Option<String>, TestCaseError> {
    let result = publish_update(root, PlanDirs::PI, NAME, new, base);
    let after = seen(&target(root));
    match before {
        Seen::File(old) if sha256_hex(old) == base => {
            let published = result.map_err(|e| TestCaseError::fail(format!("{e:?}")))?;
            prop_assert_eq!(&after, &Seen::File(new.to_vec()));
            Ok(Some(published.sha256))
        }
        Seen::File(_) | Seen::Missing | Seen::Symlink(_) | Seen::Directory => {
            let err = result.unwrap_err();
            prop_assert_eq!(err.code().as_str(), "PUBLISH_CONFLICT");
            prop_assert_eq!(&after, before, "a conflict must not write");
            Ok(None)
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn publication_never_leaves_temps_or_overwrites_unbased_bytes(
        ops in proptest::collection::vec(op(), 1..16)
    ) {
        let tmp = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let victim = outside.path().join("victim.md");
        let root = tmp.path();
        let path = target(root);
        let mut last: Option<Vec<u8>> = None;
        let mut victim_bytes = b"outside".to_vec();
        fs_err::write(&victim, &victim_bytes).unwrap();

        for op in ops {
            let before = seen(&path);
            match op {
                Op::New(new) => {
                    let result = publish_new(root, PlanDirs::PI, NAME, &new);
                    let after = seen(&path);
                    if before == Seen::Missing {
                        prop_assert_eq!(result.unwrap().change, Change::Created);
                        prop_assert_eq!(after, Seen::File(new.clone()));
                        last = Some(new);
                    } else {
                        let code = result.unwrap_err().code().as_str();
                        prop_assert!(code == "PUBLISH_COLLISION" || code == "PUBLISH_SYMLINK");
                        prop_assert_eq!(after, before);
                    }
                }
                Op::Update(new) => {
                    let base = sha256_hex(last.as_deref().unwrap_or(b"never published"));
                    if check_update(root, &new, &base, &before)?.is_some() {
                        last = Some(new);
                    }
                }
                Op::StaleUpdate(new, base) => {
                    if check_update(root, &new, &sha256_hex(&base), &before)?.is_some() {
                        last = Some(new);
                    }
                }
                Op::ExternalWrite(new) => {
                    if plans(root).is_dir() {
                        clear(&path);
                        fs_err::write(&path, new).unwrap();
                    }
                }
                Op::ExternalDelete => clear(&path),
                Op::ExternalSymlink => {
                    if plans(root).is_dir() {
                        clear(&path);
                        // The outside file holds the base bytes, so following would "verify".
                        victim_bytes = last.clone().unwrap_or_default();
                        fs_err::write(&victim, &victim_bytes).unwrap();
                        symlink(&victim, &path).unwrap();
                    }
                }
                Op::ExternalDirectory => {
                    if plans(root).is_dir() {
                        clear(&path);
                        fs_err::create_dir(&path).unwrap();
                    }
                }
                Op::ExternalRestore => {
                    if let (Some(bytes), true) = (&last, plans(root).is_dir()) {
                        clear(&path);
                        fs_err::write(&path, bytes).unwrap();
                    }
                }
            }
            prop_assert!(temps_in(root).is_empty(), "temp left: {:?}", temps_in(root));
            prop_assert_eq!(fs_err::read(&victim).unwrap(), victim_bytes.clone());
            prop_assert_eq!(listing(outside.path()), ["victim.md"]);
        }
    }
}

/// A huge file planted at the published path is recognised as not the plan without being read
/// whole (the read stops one byte past the largest plan).
#[test]
fn a_planted_huge_file_is_a_conflict_without_reading_it_whole() {
    let ws = tempfile::tempdir().unwrap();
    let root = ws.path();
    let published =
        planhost_fs::publish_new(root, PlanDirs::PI, "plan.md", b"# Plan: x\n").unwrap();
    let path = root.join(&published.relative_path);
    fs_err::remove_file(&path).unwrap();
    let file = fs_err::File::create(&path).unwrap();
    file.set_len(1 << 40).unwrap(); // 1 TiB, sparse
    drop(file);
    match planhost_fs::inspect(root, PlanDirs::PI, "plan.md").unwrap() {
        planhost_fs::OnDisk::File { size, sha256 } => {
            assert_eq!(size, planhost_core::MAX_PLAN_BYTES as u64 + 1);
            assert_ne!(sha256, published.sha256);
        }
        other => panic!("expected a file, got {other:?}"),
    }
    let reconciled =
        planhost_fs::reconcile(root, PlanDirs::PI, "plan.md", &published.sha256, None).unwrap();
    assert_eq!(
        reconciled,
        planhost_fs::Reconciled::Conflict(planhost_fs::ConflictKind::Modified)
    );
    let err = planhost_fs::publish_update(
        root,
        PlanDirs::PI,
        "plan.md",
        b"# Plan: y\n",
        &published.sha256,
    )
    .unwrap_err();
    assert_eq!(err.code().as_str(), "PUBLISH_CONFLICT");
}

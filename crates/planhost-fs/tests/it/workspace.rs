use fs_err::os::unix::fs::symlink;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt as _;

use planhost_fs::{PathRequest, Resolved, Workspace};

fn ws() -> (tempfile::TempDir, Workspace) {
    let tmp = tempfile::tempdir().unwrap();
    fs_err::create_dir_all(tmp.path().join("src/deep")).unwrap();
    fs_err::write(tmp.path().join("src/lib.rs"), b"x").unwrap();
    let ws = Workspace::new(tmp.path()).unwrap();
    (tmp, ws)
}

#[test]
fn resolves_relative_absolute_and_missing_paths() {
    let (tmp, ws) = ws();
    assert_eq!(ws.resolve("src/lib.rs").unwrap().relative(), "src/lib.rs");
    assert_eq!(
        ws.resolve("./src/deep/../lib.rs").unwrap().relative(),
        "src/lib.rs"
    );
    let abs = tmp.path().join("src/lib.rs");
    assert_eq!(
        ws.resolve(abs.to_str().unwrap()).unwrap().relative(),
        "src/lib.rs"
    );
    assert_eq!(
        ws.resolve("src/new/dir/file.rs").unwrap().relative(),
        "src/new/dir/file.rs"
    );
    assert_eq!(ws.resolve("src/missing/../x").unwrap().relative(), "src/x");
    assert!(ws.resolve(".").unwrap().is_root());
}

#[test]
fn refuses_lexically_outside_paths() {
    let (_tmp, ws) = ws();
    for bad in ["..", "../x", "src/../../x", "/etc/passwd"] {
        assert_eq!(
            ws.resolve(bad).unwrap_err().code().as_str(),
            "FS_OUTSIDE_WORKSPACE",
            "{bad}"
        );
    }
    assert_eq!(
        ws.resolve("").unwrap_err().code().as_str(),
        "FS_PATH_INVALID"
    );
    assert_eq!(
        ws.resolve("a\0b").unwrap_err().code().as_str(),
        "FS_PATH_INVALID"
    );
}

#[test]
fn symlink_leading_out_is_refused_and_inside_is_followed_for_reads() {
    let (tmp, ws) = ws();
    let outside = tempfile::tempdir().unwrap();
    fs_err::write(outside.path().join("secret"), b"s").unwrap();
    symlink(outside.path(), tmp.path().join("out")).unwrap();
    symlink(tmp.path().join("src"), tmp.path().join("in")).unwrap();
    assert_eq!(
        ws.resolve("out/secret").unwrap_err().code().as_str(),
        "FS_SYMLINK_ESCAPE"
    );
    assert_eq!(
        ws.resolve("out/new-file").unwrap_err().code().as_str(),
        "FS_SYMLINK_ESCAPE"
    );
    assert_eq!(ws.resolve("in/lib.rs").unwrap().relative(), "src/lib.rs");
    // Writers never act through a link, even one that stays inside.
    assert_eq!(
        ws.resolve_for_write("in/lib.rs")
            .unwrap_err()
            .code()
            .as_str(),
        "FS_SYMLINK"
    );
    assert_eq!(
        ws.resolve_for_write("src/lib.rs").unwrap().relative(),
        "src/lib.rs"
    );
}

#[test]
fn dangling_symlink_is_refused() {
    let (tmp, ws) = ws();
    symlink(
        tmp.path().join("no-such-target"),
        tmp.path().join("dangling"),
    )
    .unwrap();
    assert_eq!(
        ws.resolve("dangling").unwrap_err().code().as_str(),
        "FS_SYMLINK"
    );
}

#[test]
fn non_utf8_target_is_an_error() {
    let (tmp, ws) = ws();
    let weird = tmp.path().join(OsStr::from_bytes(b"bad-\xff"));
    fs_err::create_dir(&weird).unwrap();
    symlink(&weird, tmp.path().join("to-weird")).unwrap();
    assert_eq!(
        ws.resolve("to-weird").unwrap_err().code().as_str(),
        "FS_NON_UTF8_PATH"
    );
}

#[test]
fn root_reached_through_a_symlink_accepts_both_spellings() {
    let (tmp, _) = ws();
    let links = tempfile::tempdir().unwrap();
    let alias = links.path().join("alias");
    symlink(tmp.path(), &alias).unwrap();
    let ws = Workspace::new(&alias).unwrap();
    assert_eq!(ws.root(), tmp.path().canonicalize().unwrap());
    let via_alias = alias.join("src/lib.rs");
    assert_eq!(
        ws.resolve(via_alias.to_str().unwrap()).unwrap().relative(),
        "src/lib.rs"
    );
}

#[test]
fn outside_is_a_separate_request_kind() {
    let (_tmp, ws) = ws();
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().to_str().unwrap().to_owned();
    assert_eq!(
        ws.resolve(&target).unwrap_err().code().as_str(),
        "FS_OUTSIDE_WORKSPACE"
    );
    match ws
        .resolve_request(&PathRequest::Outside(target.clone()))
        .unwrap()
    {
        Resolved::Outside(p) => assert_eq!(p.absolute(), outside.path().canonicalize().unwrap()),
        Resolved::Inside(p) => panic!("resolved inside: {p:?}"),
    }
    assert_eq!(
        ws.resolve_outside("relative").unwrap_err().code().as_str(),
        "FS_PATH_INVALID"
    );
}

#[test]
fn open_file_goes_through_handles() {
    let (_tmp, ws) = ws();
    let p = ws.resolve("src/lib.rs").unwrap();
    assert!(ws.open_file(&p).is_ok());
    let d = ws.resolve("src").unwrap();
    assert_eq!(
        ws.open_file(&d).unwrap_err().code().as_str(),
        "FS_IS_DIRECTORY"
    );
}

#[test]
fn workspace_root_must_be_an_absolute_directory() {
    assert_eq!(
        Workspace::new(std::path::Path::new("rel"))
            .unwrap_err()
            .code()
            .as_str(),
        "FS_PATH_INVALID"
    );
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("f");
    fs_err::write(&file, b"").unwrap();
    assert_eq!(
        Workspace::new(&file).unwrap_err().code().as_str(),
        "FS_NOT_DIRECTORY"
    );
    assert_eq!(
        Workspace::new(&tmp.path().join("no"))
            .unwrap_err()
            .code()
            .as_str(),
        "FS_NOT_FOUND"
    );
}

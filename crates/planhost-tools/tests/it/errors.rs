//! One test per stable error code, each asserting that nothing was written.

use fs_err::os::unix::fs::symlink;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt as _;

use planhost_tools::{
    EditRequest, GlobRequest, GrepMode, GrepRequest, READ_MAX_FILE_BYTES, ReadRequest, ToolError,
    WriteRequest, edit, glob, grep, read, write,
};

use crate::{listing, workspace};

fn read_req(path: &str) -> ReadRequest {
    ReadRequest {
        path: path.into(),
        offset: None,
        limit: None,
    }
}

fn grep_req(pattern: &str) -> GrepRequest {
    GrepRequest {
        pattern: pattern.into(),
        path: None,
        glob: None,
        mode: GrepMode::Files,
        context: None,
        context_before: None,
        context_after: None,
        case_insensitive: false,
        limit: None,
    }
}

fn write_req(path: &str) -> WriteRequest {
    WriteRequest {
        path: path.into(),
        content: "new".into(),
    }
}

fn edit_req(path: &str, old: &str, new: &str) -> EditRequest {
    EditRequest {
        path: path.into(),
        old_string: old.into(),
        new_string: new.into(),
        replace_all: false,
    }
}

fn code<T: std::fmt::Debug>(r: Result<T, ToolError>) -> &'static str {
    r.unwrap_err().code().as_str()
}

#[test]
fn path_outside_workspace() {
    let (tmp, ctx) = workspace(&[("a.txt", b"a")]);
    let other = tempfile::tempdir().unwrap();
    let outside = other.path().join("x.txt");
    fs_err::write(&outside, b"secret").unwrap();
    assert_eq!(
        code(read(&ctx, &read_req("../x.txt"))),
        "TOOL_PATH_OUTSIDE_WORKSPACE"
    );
    assert_eq!(
        code(read(&ctx, &read_req(outside.to_str().unwrap()))),
        "TOOL_PATH_OUTSIDE_WORKSPACE"
    );
    assert_eq!(
        code(write(&ctx, &write_req(outside.to_str().unwrap()))),
        "TOOL_PATH_OUTSIDE_WORKSPACE"
    );
    assert_eq!(
        code(write(&ctx, &write_req("sub/../../escape.txt"))),
        "TOOL_PATH_OUTSIDE_WORKSPACE"
    );
    let mut g = grep_req("secret");
    g.path = Some(other.path().to_str().unwrap().into());
    assert_eq!(code(grep(&ctx, &g)), "TOOL_PATH_OUTSIDE_WORKSPACE");
    assert_eq!(fs_err::read(&outside).unwrap(), b"secret");
    assert_eq!(listing(tmp.path()), ["a.txt"]);
}

#[test]
fn path_not_found() {
    let (tmp, ctx) = workspace(&[]);
    assert_eq!(
        code(read(&ctx, &read_req("missing.txt"))),
        "TOOL_PATH_NOT_FOUND"
    );
    assert_eq!(
        code(edit(&ctx, &edit_req("missing.txt", "a", "b"))),
        "TOOL_PATH_NOT_FOUND"
    );
    let mut g = grep_req("x");
    g.path = Some("missing".into());
    assert_eq!(code(grep(&ctx, &g)), "TOOL_PATH_NOT_FOUND");
    let gl = GlobRequest {
        pattern: "*".into(),
        path: Some("missing".into()),
        limit: None,
    };
    assert_eq!(code(glob(&ctx, &gl)), "TOOL_PATH_NOT_FOUND");
    assert!(listing(tmp.path()).is_empty());
}

#[test]
fn path_is_directory() {
    let (tmp, ctx) = workspace(&[("dir/a.txt", b"a")]);
    assert_eq!(code(read(&ctx, &read_req("dir"))), "TOOL_PATH_IS_DIRECTORY");
    assert_eq!(code(read(&ctx, &read_req("."))), "TOOL_PATH_IS_DIRECTORY");
    assert_eq!(
        code(write(&ctx, &write_req("dir"))),
        "TOOL_PATH_IS_DIRECTORY"
    );
    assert_eq!(
        code(edit(&ctx, &edit_req("dir", "a", "b"))),
        "TOOL_PATH_IS_DIRECTORY"
    );
    assert_eq!(listing(tmp.path()), ["dir", "dir/a.txt"]);
}

#[test]
fn binary_file() {
    let (tmp, ctx) = workspace(&[("bin.dat", b"abc\0def")]);
    assert_eq!(code(read(&ctx, &read_req("bin.dat"))), "TOOL_BINARY_FILE");
    assert_eq!(
        code(edit(&ctx, &edit_req("bin.dat", "abc", "x"))),
        "TOOL_BINARY_FILE"
    );
    assert_eq!(
        fs_err::read(tmp.path().join("bin.dat")).unwrap(),
        b"abc\0def"
    );
}

#[test]
fn file_too_large() {
    let (tmp, ctx) = workspace(&[]);
    let big = fs_err::File::create(tmp.path().join("big.log")).unwrap();
    big.set_len(READ_MAX_FILE_BYTES + 1).unwrap(); // sparse: no real disk use
    let err = read(&ctx, &read_req("big.log")).unwrap_err();
    assert_eq!(err.code().as_str(), "TOOL_FILE_TOO_LARGE");
    assert!(matches!(err, ToolError::FileTooLarge { size, .. } if size == READ_MAX_FILE_BYTES + 1));
    assert_eq!(
        code(edit(&ctx, &edit_req("big.log", "a", "b"))),
        "TOOL_FILE_TOO_LARGE"
    );
}

#[test]
fn invalid_regex() {
    let (_tmp, ctx) = workspace(&[("a.txt", b"a")]);
    assert_eq!(
        code(grep(&ctx, &grep_req("(unclosed"))),
        "TOOL_INVALID_REGEX"
    );
}

#[test]
fn invalid_glob() {
    let (_tmp, ctx) = workspace(&[("a.txt", b"a")]);
    let gl = GlobRequest {
        pattern: "src/[a".into(),
        path: None,
        limit: None,
    };
    assert_eq!(code(glob(&ctx, &gl)), "TOOL_INVALID_GLOB");
    let mut g = grep_req("a");
    g.glob = Some("*.{rs".into());
    assert_eq!(code(grep(&ctx, &g)), "TOOL_INVALID_GLOB");
}

#[test]
fn non_utf8_path() {
    let (tmp, ctx) = workspace(&[]);
    let weird = tmp.path().join(OsStr::from_bytes(b"caf\xe9"));
    fs_err::create_dir(&weird).unwrap();
    fs_err::write(weird.join("f.txt"), b"x").unwrap();
    symlink(&weird, tmp.path().join("cafe")).unwrap();
    assert_eq!(
        code(read(&ctx, &read_req("cafe/f.txt"))),
        "TOOL_NON_UTF8_PATH"
    );
    let mut g = grep_req("x");
    g.path = Some("cafe".into());
    assert_eq!(code(grep(&ctx, &g)), "TOOL_NON_UTF8_PATH");
}

#[test]
fn edit_no_match_and_not_unique() {
    let (tmp, ctx) = workspace(&[("a.txt", b"one two two\n")]);
    assert_eq!(
        code(edit(&ctx, &edit_req("a.txt", "three", "3"))),
        "TOOL_EDIT_NO_MATCH"
    );
    let err = edit(&ctx, &edit_req("a.txt", "two", "2")).unwrap_err();
    assert_eq!(err.code().as_str(), "TOOL_EDIT_NOT_UNIQUE");
    assert!(matches!(err, ToolError::EditNotUnique { count: 2, .. }));
    assert_eq!(
        fs_err::read(tmp.path().join("a.txt")).unwrap(),
        b"one two two\n"
    );
    assert_eq!(listing(tmp.path()), ["a.txt"]);
}

#[test]
fn write_failed_and_read_failed() {
    // A component longer than NAME_MAX is refused by the kernel itself (ENAMETOOLONG).
    let (tmp, ctx) = workspace(&[]);
    let too_long = "n".repeat(300);
    assert_eq!(
        code(write(&ctx, &write_req(&too_long))),
        "TOOL_WRITE_FAILED"
    );
    assert_eq!(code(read(&ctx, &read_req(&too_long))), "TOOL_READ_FAILED");
    assert!(listing(tmp.path()).is_empty());
}

#[test]
fn symlink_refused() {
    let (tmp, ctx) = workspace(&[("real.txt", b"real")]);
    let other = tempfile::tempdir().unwrap();
    fs_err::write(other.path().join("secret"), b"secret").unwrap();
    symlink(other.path(), tmp.path().join("out")).unwrap();
    symlink(tmp.path().join("real.txt"), tmp.path().join("alias.txt")).unwrap();
    assert_eq!(
        code(read(&ctx, &read_req("out/secret"))),
        "TOOL_SYMLINK_REFUSED"
    );
    assert_eq!(
        code(write(&ctx, &write_req("out/secret"))),
        "TOOL_SYMLINK_REFUSED"
    );
    assert_eq!(
        code(write(&ctx, &write_req("out/new.txt"))),
        "TOOL_SYMLINK_REFUSED"
    );
    assert_eq!(
        code(write(&ctx, &write_req("alias.txt"))),
        "TOOL_SYMLINK_REFUSED"
    );
    assert_eq!(
        code(edit(&ctx, &edit_req("alias.txt", "real", "x"))),
        "TOOL_SYMLINK_REFUSED"
    );
    assert_eq!(
        fs_err::read(other.path().join("secret")).unwrap(),
        b"secret"
    );
    assert_eq!(fs_err::read(tmp.path().join("real.txt")).unwrap(), b"real");
    assert!(!other.path().join("new.txt").exists());
}

#[test]
fn invalid_input() {
    let (tmp, ctx) = workspace(&[("a.txt", b"abc")]);
    let zero = ReadRequest {
        path: "a.txt".into(),
        offset: Some(0),
        limit: None,
    };
    assert_eq!(code(read(&ctx, &zero)), "TOOL_INVALID_INPUT");
    let no_limit = ReadRequest {
        path: "a.txt".into(),
        offset: None,
        limit: Some(0),
    };
    assert_eq!(code(read(&ctx, &no_limit)), "TOOL_INVALID_INPUT");
    assert_eq!(code(read(&ctx, &read_req(""))), "TOOL_INVALID_INPUT");
    assert_eq!(
        code(edit(&ctx, &edit_req("a.txt", "abc", "abc"))),
        "TOOL_INVALID_INPUT"
    );
    assert_eq!(
        code(edit(&ctx, &edit_req("a.txt", "", "x"))),
        "TOOL_INVALID_INPUT"
    );
    let gl = GlobRequest {
        pattern: "*".into(),
        path: Some("a.txt".into()),
        limit: None,
    };
    assert_eq!(code(glob(&ctx, &gl)), "TOOL_INVALID_INPUT");
    let mut g = grep_req("a");
    g.mode = GrepMode::Content;
    g.context = Some(10_000);
    assert_eq!(code(grep(&ctx, &g)), "TOOL_INVALID_INPUT");
    assert_eq!(
        code(write(&ctx, &write_req("a.txt/child"))),
        "TOOL_INVALID_INPUT"
    );
    assert_eq!(fs_err::read(tmp.path().join("a.txt")).unwrap(), b"abc");
    assert_eq!(listing(tmp.path()), ["a.txt"]);
}

use std::os::unix::fs::PermissionsExt as _;

use planhost_tools::{EditRequest, LineEnding, edit};

use crate::{listing, workspace};

fn req(path: &str, old: &str, new: &str, replace_all: bool) -> EditRequest {
    EditRequest {
        path: path.into(),
        old_string: old.into(),
        new_string: new.into(),
        replace_all,
    }
}

#[test]
fn crlf_is_preserved_when_strings_use_lf() {
    let (tmp, ctx) = workspace(&[("w.txt", b"alpha\r\nbeta\r\ngamma\r\n")]);
    let r = edit(
        &ctx,
        &req("w.txt", "alpha\nbeta", "ALPHA\nBETA\nextra", false),
    )
    .unwrap();
    assert_eq!(r.line_ending, LineEnding::Crlf);
    assert_eq!(r.replacements, 1);
    assert_eq!(
        fs_err::read(tmp.path().join("w.txt")).unwrap(),
        b"ALPHA\r\nBETA\r\nextra\r\ngamma\r\n"
    );
}

#[test]
fn lf_file_stays_lf() {
    let (tmp, ctx) = workspace(&[("u.txt", b"a\nb\nc\n")]);
    let r = edit(&ctx, &req("u.txt", "b\n", "B\nB2\n", false)).unwrap();
    assert_eq!(r.line_ending, LineEnding::Lf);
    assert_eq!(
        fs_err::read(tmp.path().join("u.txt")).unwrap(),
        b"a\nB\nB2\nc\n"
    );
}

#[test]
fn mixed_file_matches_as_given_first() {
    let (tmp, ctx) = workspace(&[("m.txt", b"x\r\ny\nz\n")]);
    let r = edit(&ctx, &req("m.txt", "y\nz", "Y\nZ", false)).unwrap();
    assert_eq!(r.line_ending, LineEnding::Mixed);
    assert_eq!(
        fs_err::read(tmp.path().join("m.txt")).unwrap(),
        b"x\r\nY\nZ\n"
    );
    edit(&ctx, &req("m.txt", "x\nY", "X\nY", false)).unwrap();
    assert_eq!(
        fs_err::read(tmp.path().join("m.txt")).unwrap(),
        b"X\r\nY\nZ\n"
    );
}

#[test]
fn replace_all_replaces_every_occurrence() {
    let (tmp, ctx) = workspace(&[("r.txt", b"foo bar foo baz foo")]);
    let r = edit(&ctx, &req("r.txt", "foo", "qux", true)).unwrap();
    assert_eq!(r.replacements, 3);
    assert_eq!(
        fs_err::read(tmp.path().join("r.txt")).unwrap(),
        b"qux bar qux baz qux"
    );
}

#[test]
fn keeps_non_utf8_bytes_and_mode() {
    let (tmp, ctx) = workspace(&[("latin1.txt", b"caf\xe9 = old\n")]);
    let path = tmp.path().join("latin1.txt");
    fs_err::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
    edit(&ctx, &req("latin1.txt", "old", "new", false)).unwrap();
    assert_eq!(fs_err::read(&path).unwrap(), b"caf\xe9 = new\n");
    assert_eq!(
        fs_err::metadata(&path).unwrap().permissions().mode() & 0o7777,
        0o640
    );
    assert_eq!(listing(tmp.path()), ["latin1.txt"]);
}

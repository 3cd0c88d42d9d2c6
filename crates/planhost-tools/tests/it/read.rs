use planhost_tools::{READ_MAX_LINE_CHARS, ReadRequest, read};
use pretty_assertions::assert_eq;

use crate::workspace;

fn req(path: &str, offset: Option<u64>, limit: Option<u64>) -> ReadRequest {
    ReadRequest {
        path: path.into(),
        offset,
        limit,
    }
}

#[test]
fn numbers_lines_and_pages() {
    let body: String = (1..=10).map(|i| format!("line {i}\n")).collect();
    let (_tmp, ctx) = workspace(&[("src/a.txt", body.as_bytes())]);
    let all = read(&ctx, &req("src/a.txt", None, None)).unwrap();
    assert_eq!(all.total_lines, 10);
    assert_eq!(all.lines_returned, 10);
    assert!(!all.truncated);
    assert!(all.content.starts_with("     1\tline 1\n     2\tline 2\n"));

    let page = read(&ctx, &req("src/a.txt", Some(4), Some(3))).unwrap();
    assert_eq!(
        page.content,
        "     4\tline 4\n     5\tline 5\n     6\tline 6\n"
    );
    assert_eq!(page.start_line, 4);
    assert_eq!(page.next_offset, Some(7));
    assert!(page.truncated);
}

#[test]
fn crlf_lines_are_shown_without_terminators() {
    let (_tmp, ctx) = workspace(&[("w.txt", b"a\r\nb\r\nc")]);
    let r = read(&ctx, &req("w.txt", None, None)).unwrap();
    assert_eq!(r.content, "     1\ta\n     2\tb\n     3\tc\n");
    assert_eq!(r.total_lines, 3);
}

#[test]
fn long_lines_are_cut_and_flagged() {
    let long = "x".repeat(READ_MAX_LINE_CHARS + 10);
    let (_tmp, ctx) = workspace(&[("long.txt", long.as_bytes())]);
    let r = read(&ctx, &req("long.txt", None, None)).unwrap();
    assert!(r.truncated);
    assert_eq!(r.content.len(), "     1\t".len() + READ_MAX_LINE_CHARS + 1);
}

#[test]
fn symlink_inside_the_workspace_is_followed_for_reading() {
    let (tmp, ctx) = workspace(&[("real/a.txt", b"hi\n")]);
    fs_err::os::unix::fs::symlink(tmp.path().join("real"), tmp.path().join("alias")).unwrap();
    let r = read(&ctx, &req("alias/a.txt", None, None)).unwrap();
    assert_eq!(r.path, "real/a.txt");
    assert_eq!(r.content, "     1\thi\n");
}

#[test]
fn absolute_path_inside_is_accepted() {
    let (tmp, ctx) = workspace(&[("a.txt", b"x")]);
    let abs = tmp.path().join("a.txt");
    assert_eq!(
        read(&ctx, &req(abs.to_str().unwrap(), None, None))
            .unwrap()
            .path,
        "a.txt"
    );
}

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

/// The files every Read/Write/Edit swap race starts from: `sub/inside.txt` in the workspace, and
/// outside a file of the same name, one only the outside has, all holding [`crate::OUTSIDE_MARKER`].
pub(crate) fn race_fixture() -> crate::SwapFixture {
    let marked = |what: &str| format!("{} {what}\n", crate::OUTSIDE_MARKER).into_bytes();
    let (inside, probe, target) = (marked("inside"), marked("probe"), marked("target"));
    crate::SwapFixture::new(
        &[
            ("sub/inside.txt", b"tag=inside\ncount=\n"),
            ("sub/target.txt", b"tag=target\ncount=\n"),
        ],
        &[
            ("inside.txt", &inside),
            ("probe_file.txt", &probe),
            ("target.txt", &target),
        ],
    )
}

/// A symlink `sub/final-link` to the outside `target.txt`, for races that swap the last
/// component: `sub/target.txt` (a real file) is exchanged with it. A second hard link to the
/// symlink itself, `sub/.final-anchor`, tells by its link count whether one of the two names
/// still holds it.
pub(crate) fn arm_final_link(fixture: &crate::SwapFixture) {
    let link = fixture.inside("sub/final-link");
    fs_err::os::unix::fs::symlink(fixture.outside.path().join("target.txt"), &link).unwrap();
    let anchor = fixture.inside("sub/.final-anchor");
    rustix::fs::linkat(
        rustix::fs::CWD,
        &link,
        rustix::fs::CWD,
        &anchor,
        rustix::fs::AtFlags::empty(),
    )
    .unwrap();
}

/// After a Write or Edit replaced `sub/target.txt` while it was the symlink, both swapped names
/// hold real files; puts the symlink back at `sub/final-link` so the race keeps its teeth. One
/// `lstat` of the anchor decides (checking the two names one after the other could miss the
/// symlink as the swapper moves it between them).
pub(crate) fn rearm_final_link(fixture: &crate::SwapFixture) {
    use std::os::unix::fs::MetadataExt as _;
    let anchor = fixture.inside("sub/.final-anchor");
    if fs_err::symlink_metadata(&anchor).unwrap().nlink() > 1 {
        return;
    }
    let fresh = fixture.inside("sub/.rearm");
    let (cwd, flags) = (rustix::fs::CWD, rustix::fs::AtFlags::empty());
    rustix::fs::linkat(cwd, &anchor, cwd, &fresh, flags).unwrap();
    fs_err::rename(&fresh, fixture.inside("sub/final-link")).unwrap();
}

/// Issue 10, races: `sub` is swapped with a symlink to an outside directory that holds a file of
/// the same name and one only it has. Read never returns outside bytes, and its answer for a
/// name only the outside has never differs from its answer for a name nobody has.
#[test]
fn read_never_reveals_outside_bytes_or_names_during_a_directory_swap_race() {
    let fixture = race_fixture();
    let mut saw_inside = 0u64;
    let mut n = 0u64;
    let (leak, probes) = fixture.race("sub", "link", |ctx| {
        n += 1;
        match n % 3 {
            0 => match read(ctx, &req("sub/inside.txt", None, None)) {
                Ok(r) if r.content.contains(crate::OUTSIDE_MARKER) => Some(r.content),
                Ok(_) => {
                    saw_inside += 1;
                    None
                }
                Err(_) => None,
            },
            1 => match read(ctx, &req("sub/probe_file.txt", None, None)) {
                Ok(r) => Some(format!("read an outside-only file: {}", r.content)),
                Err(_) => None,
            },
            // A file only the outside has, used as a directory: "not a directory" would say it
            // exists out there (a name nobody has is "not found" or "symlink refused").
            _ => match read(ctx, &req("sub/probe_file.txt/x", None, None)) {
                Ok(r) => Some(format!("read through an outside file: {}", r.content)),
                Err(e) => match e.code().as_str() {
                    "TOOL_PATH_NOT_FOUND" | "TOOL_SYMLINK_REFUSED" | "TOOL_READ_FAILED" => None,
                    other => Some(format!("outside name probed: {other}: {e}")),
                },
            },
        }
    });
    assert_eq!(leak, None, "Read leaked after {probes} probes");
    assert!(saw_inside > 0, "no probe of {probes} read the inside file");
}

/// The last component swapped: `sub/inside.txt` is exchanged with a symlink to an outside file.
#[test]
fn read_never_follows_a_file_swapped_for_an_outside_symlink_during_a_swap_race() {
    let fixture = race_fixture();
    arm_final_link(&fixture);
    let mut saw_inside = 0u64;
    let (leak, probes) = fixture.race("sub/target.txt", "sub/final-link", |ctx| {
        match read(ctx, &req("sub/target.txt", None, None)) {
            Ok(r) if r.content.contains(crate::OUTSIDE_MARKER) => Some(r.content),
            Ok(_) => {
                saw_inside += 1;
                None
            }
            Err(_) => None,
        }
    });
    assert_eq!(leak, None, "Read leaked after {probes} probes");
    assert!(saw_inside > 0, "no probe of {probes} read the inside file");
}

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

/// Whether any file in the workspace (never following a symlink) holds the outside marker: an
/// Edit that read an outside file and wrote the result inside would have copied it in.
fn outside_bytes_inside(root: &std::path::Path) -> Option<String> {
    crate::snapshot(root)
        .into_iter()
        .find(|(_, what)| what.starts_with("file:") && what.contains(crate::OUTSIDE_MARKER))
        .map(|(path, what)| format!("{path}: {what}"))
}

/// Issue 10, races: `sub` is swapped with a symlink to an outside directory holding a file of
/// the same name. Edit never changes an outside file, and never brings outside bytes in.
#[test]
fn edit_never_touches_or_copies_an_outside_file_during_a_directory_swap_race() {
    let fixture = crate::read::race_fixture();
    let before = crate::snapshot(fixture.outside.path());
    let mut edited = 0u64;
    let (leak, probes) = fixture.race("sub", "link", |ctx| {
        if edit(ctx, &req("sub/inside.txt", "count=", "count=+", false)).is_ok() {
            edited += 1;
        }
        let now = crate::snapshot(fixture.outside.path());
        (now != before).then(|| format!("the outside changed: {now:?}"))
    });
    assert_eq!(leak, None, "Edit leaked after {probes} probes");
    // Checked once the swapper has stopped: a listing during the race could follow the swap.
    assert_eq!(outside_bytes_inside(fixture.tmp.path()), None);
    assert!(edited > 0, "no Edit of {probes} succeeded");
}

/// The last component swapped: `sub/target.txt` is exchanged with a symlink to an outside file.
#[test]
fn edit_never_follows_a_file_swapped_for_an_outside_symlink_during_a_swap_race() {
    let fixture = crate::read::race_fixture();
    crate::read::arm_final_link(&fixture);
    let before = crate::snapshot(fixture.outside.path());
    let mut edited = 0u64;
    let mut codes = std::collections::BTreeMap::<String, u64>::new();
    let (leak, probes) = fixture.race("sub/target.txt", "sub/final-link", |ctx| {
        match edit(ctx, &req("sub/target.txt", "count=", "count=+", false)) {
            Ok(_) => edited += 1,
            Err(e) => *codes.entry(e.code().as_str().to_owned()).or_default() += 1,
        }
        crate::read::rearm_final_link(&fixture);
        let now = crate::snapshot(fixture.outside.path());
        (now != before).then(|| format!("the outside changed: {now:?}"))
    });
    assert_eq!(leak, None, "Edit leaked after {probes} probes");
    // Checked once the swapper has stopped: a listing during the race could follow the swap.
    assert_eq!(outside_bytes_inside(fixture.tmp.path()), None);
    assert!(edited > 0, "no Edit of {probes} succeeded: {codes:?}");
}

/// The tag each file of the inside-swap races carries, read from its bytes.
fn tag(path: &std::path::Path) -> String {
    let bytes = fs_err::read(path).unwrap();
    let text = String::from_utf8(bytes).unwrap();
    text.lines().next().unwrap_or_default().to_owned()
}

/// Issue 10, defect a: Edit read through one walk and replaced through another, so a directory
/// swapped in between (inside the workspace) made it write one file's edited bytes over another
/// file. `d1` and `d2` are exchanged while Edit edits `d1/f.txt`; afterwards each directory's
/// file still carries that directory's own tag.
#[test]
fn edit_replaces_the_file_it_read_when_directories_are_swapped_during_a_swap_race() {
    let fixture = crate::SwapFixture::new(
        &[
            ("d1/id", b"tag=ONE"),
            ("d1/f.txt", b"tag=ONE\ncount=\n"),
            ("d2/id", b"tag=TWO"),
            ("d2/f.txt", b"tag=TWO\ncount=\n"),
        ],
        &[],
    );
    let mut edited = 0u64;
    let (_, probes) = fixture.race("d1", "d2", |ctx| {
        if edit(ctx, &req("d1/f.txt", "count=", "count=+", false)).is_ok() {
            edited += 1;
        }
        None
    });
    assert!(edited > 0, "no Edit of {probes} succeeded");
    for dir in ["d1", "d2"] {
        let id = tag(&fixture.inside(&format!("{dir}/id")));
        let file = tag(&fixture.inside(&format!("{dir}/f.txt")));
        assert_eq!(
            file, id,
            "{dir}/f.txt holds another directory's file after {probes} probes ({edited} edits)"
        );
    }
}

/// Defect a, the file itself swapped: `d/f.txt` and `d/g.txt` are exchanged while Edit edits
/// `d/f.txt`. Edit replaces the name only if it still holds the file it read, compared
/// atomically (the staged file is exchanged with the name, and what comes out must be the file
/// read), and otherwise puts the other file back and refuses with `TOOL_FILE_CHANGED`. Neither
/// file's bytes are ever replaced by the other's: both tags survive (when even the putting back
/// was raced, the displaced file is kept under the temp name rather than removed).
#[test]
fn edit_refuses_when_the_file_it_read_is_swapped_away_during_a_swap_race() {
    let fixture = crate::SwapFixture::new(
        &[
            ("d/f.txt", b"tag=F\ncount=\n"),
            ("d/g.txt", b"tag=G\ncount=\n"),
        ],
        &[],
    );
    let (mut edited, mut refused) = (0u64, 0u64);
    let (leak, probes) = fixture.race("d/f.txt", "d/g.txt", |ctx| {
        match edit(ctx, &req("d/f.txt", "count=", "count=+", false)) {
            Ok(_) => edited += 1,
            Err(e) if e.code().as_str() == "TOOL_FILE_CHANGED" => refused += 1,
            Err(e) => return Some(format!("unexpected refusal: {e}")),
        }
        None
    });
    assert_eq!(leak, None);
    let names = crate::listing(&fixture.inside("d"));
    let kept = names
        .iter()
        .filter(|n| n.starts_with(".planhost-tmp-"))
        .count();
    println!(
        "edit file-swap race: {probes} probes, {edited} edits, {refused} refused, {kept} kept"
    );
    assert_eq!(names.len(), 2 + kept, "{names:?}");
    let f_and_g = [
        tag(&fixture.inside("d/f.txt")),
        tag(&fixture.inside("d/g.txt")),
    ];
    let mut tags: Vec<String> = names
        .iter()
        .map(|n| tag(&fixture.inside(&format!("d/{n}"))))
        .collect();
    tags.sort();
    tags.dedup();
    assert_eq!(
        tags,
        ["tag=F", "tag=G"],
        "one file's edit replaced the other: {f_and_g:?}"
    );
    assert!(edited > 0, "no Edit of {probes} succeeded");
    assert!(refused > 0, "no Edit of {probes} noticed the swap");
}

use std::os::unix::fs::PermissionsExt as _;

use planhost_tools::{WriteOutcome, WriteRequest, write};

use crate::{listing, workspace};

fn req(path: &str, content: &str) -> WriteRequest {
    WriteRequest {
        path: path.into(),
        content: content.into(),
    }
}

#[test]
fn creates_file_and_missing_parents() {
    let (tmp, ctx) = workspace(&[]);
    let r = write(&ctx, &req("a/b/c.txt", "hello\r\nworld")).unwrap();
    assert_eq!(r.outcome, WriteOutcome::Created);
    assert_eq!(r.path, "a/b/c.txt");
    assert_eq!(r.bytes_written, 12);
    assert_eq!(
        fs_err::read(tmp.path().join("a/b/c.txt")).unwrap(),
        b"hello\r\nworld"
    );
    assert_eq!(listing(tmp.path()), ["a", "a/b", "a/b/c.txt"]);
}

#[test]
fn replace_keeps_permission_bits_and_leaves_no_temp() {
    let (tmp, ctx) = workspace(&[("run.sh", b"old")]);
    let path = tmp.path().join("run.sh");
    for mode in [0o750, 0o600, 0o644] {
        fs_err::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
        let r = write(&ctx, &req("run.sh", "#!/bin/sh\necho new\n")).unwrap();
        assert_eq!(r.outcome, WriteOutcome::Replaced);
        let meta = fs_err::metadata(&path).unwrap();
        assert_eq!(meta.permissions().mode() & 0o7777, mode, "mode {mode:o}");
    }
    assert_eq!(fs_err::read(&path).unwrap(), b"#!/bin/sh\necho new\n");
    assert_eq!(listing(tmp.path()), ["run.sh"]);
}

#[test]
fn replace_is_a_new_inode_so_readers_never_see_a_torn_file() {
    use std::os::unix::fs::MetadataExt as _;
    let (tmp, ctx) = workspace(&[("f.txt", b"old")]);
    let before = fs_err::metadata(tmp.path().join("f.txt")).unwrap().ino();
    write(&ctx, &req("f.txt", "new")).unwrap();
    let after = fs_err::metadata(tmp.path().join("f.txt")).unwrap().ino();
    assert_ne!(before, after);
}

#[test]
fn setuid_bit_is_not_carried_over() {
    let (tmp, ctx) = workspace(&[("tool", b"old")]);
    let path = tmp.path().join("tool");
    fs_err::set_permissions(&path, std::fs::Permissions::from_mode(0o4755)).unwrap();
    write(&ctx, &req("tool", "new")).unwrap();
    assert_eq!(
        fs_err::metadata(&path).unwrap().permissions().mode() & 0o7777,
        0o755
    );
}

/// Issue 10, races: `sub` is swapped with a symlink to an outside directory while Write replaces
/// `sub/inside.txt`, creates new files in `sub` and creates `sub/deeper/` on the way. Nothing
/// outside is ever created or changed.
#[test]
fn write_never_creates_or_changes_an_outside_file_during_a_directory_swap_race() {
    let fixture = crate::read::race_fixture();
    let before = crate::snapshot(fixture.outside.path());
    let mut wrote = 0u64;
    let mut n = 0u64;
    let (leak, probes) = fixture.race("sub", "link", |ctx| {
        n += 1;
        let path = match n % 3 {
            0 => "sub/inside.txt".to_owned(),
            1 => format!("sub/new-{n}.txt"),
            _ => format!("sub/deeper/new-{n}.txt"),
        };
        if write(ctx, &req(&path, &format!("written {n}\n"))).is_ok() {
            wrote += 1;
        }
        let now = crate::snapshot(fixture.outside.path());
        (now != before).then(|| format!("{path} changed the outside: {now:?}"))
    });
    assert_eq!(leak, None, "Write leaked after {probes} probes");
    assert!(wrote > 0, "no Write of {probes} succeeded");
}

/// The last component swapped: `sub/target.txt` is exchanged with a symlink to an outside file.
/// Write replaces the name, never the file behind the link.
#[test]
fn write_never_writes_through_a_file_swapped_for_an_outside_symlink_during_a_swap_race() {
    let fixture = crate::read::race_fixture();
    crate::read::arm_final_link(&fixture);
    let before = crate::snapshot(fixture.outside.path());
    let mut wrote = 0u64;
    let mut n = 0u64;
    let (leak, probes) = fixture.race("sub/target.txt", "sub/final-link", |ctx| {
        n += 1;
        if write(ctx, &req("sub/target.txt", &format!("written {n}\n"))).is_ok() {
            wrote += 1;
        }
        crate::read::rearm_final_link(&fixture);
        let now = crate::snapshot(fixture.outside.path());
        (now != before).then(|| format!("the outside changed: {now:?}"))
    });
    assert_eq!(leak, None, "Write leaked after {probes} probes");
    assert!(wrote > 0, "no Write of {probes} succeeded");
}

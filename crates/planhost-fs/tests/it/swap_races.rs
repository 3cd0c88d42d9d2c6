//! Issue 10, races: `.pi`, `.pi/plan`, `.pi/plans` and a published file are swapped with
//! symlinks to outside twins while the artifact writer and publication run again and again.
//! Nothing outside is ever created, changed or removed, no outside byte or name is reported, and
//! every write that succeeded landed in the real directory.

use std::path::{Path, PathBuf};

use planhost_fs::{
    ArtifactOnDisk, OnDisk, PlanDirs, Preflight, Reconciled, inspect, plan_artifact_paths,
    preflight, publish_new, publish_update, reconcile, sweep_plan_dirs, verify_plan_artifact,
    write_plan_artifact,
};
use planhost_test_support::swap::{SWAP_RACE_FOR, snapshot, swap_race};

/// Every outside name and byte holds this, and nothing inside does.
const MARKER: &str = "OUTSIDE_SECRET";
/// The base bytes of the published `plan.md`, inside and outside alike: an update that followed
/// a swapped-in symlink would verify the outside copy and replace it.
const BASE: &[u8] = b"# Plan\nbase\n";
const NEXT: &[u8] = b"# Plan\nnext\n";

/// A workspace with `.pi/plan` and `.pi/plans`, and an outside twin of `.pi` whose files hold
/// [`MARKER`] (but `plans/plan.md`, which holds [`BASE`], as inside).
struct Fixture {
    root: tempfile::TempDir,
    outside: tempfile::TempDir,
}

impl Fixture {
    fn new() -> Self {
        let root = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let write = |dir: &Path, path: &str, bytes: &[u8]| {
            let full = dir.join(path);
            fs_err::create_dir_all(full.parent().unwrap()).unwrap();
            fs_err::write(full, bytes).unwrap();
        };
        write(root.path(), ".pi/plan/known.md", b"# known inside\n");
        write(root.path(), ".pi/plans/plan.md", BASE);
        write(root.path(), ".pi/plans/read.md", b"# read inside\n");
        let marked = |what: &str| format!("# {MARKER} {what}\n").into_bytes();
        write(outside.path(), "plan/known.md", &marked("known"));
        write(
            outside.path(),
            &format!("plan/{MARKER}.md"),
            &marked("name"),
        );
        // A stale temp (no such pid): a sweep that followed a symlink would remove it.
        write(outside.path(), "plan/.planhost-tmp-4194303-0", b"");
        write(outside.path(), "plans/plan.md", BASE);
        write(outside.path(), "plans/read.md", &marked("read"));
        write(
            outside.path(),
            &format!("plans/{MARKER}.md"),
            &marked("name"),
        );
        Self { root, outside }
    }

    fn inside(&self, relative: &str) -> PathBuf {
        self.root.path().join(relative)
    }

    /// Makes the symlink `link` (workspace-relative) to `target` (outside-relative).
    fn link(&self, link: &str, target: &str) {
        let target = self.outside.path().join(target);
        fs_err::os::unix::fs::symlink(target, self.inside(link)).unwrap();
    }

    fn outside_bytes(&self, relative: &str) -> Vec<u8> {
        fs_err::read(self.outside.path().join(relative)).unwrap()
    }
}

fn sha(bytes: &[u8]) -> String {
    planhost_core::sha256_hex(bytes)
}

/// Races the artifact writer, its verifier, the listing and the sweep while `a` and `b` (a real
/// directory and a symlink to its outside twin) are exchanged.
fn race_artifacts(fixture: &Fixture, a: &str, b: &str) {
    let root = fixture.root.path();
    let before = snapshot(fixture.outside.path());
    let known = fixture.outside_bytes("plan/known.md");
    let mut written = Vec::new();
    let mut n = 0u64;
    let race = swap_race(
        &fixture.inside(a),
        &fixture.inside(b),
        SWAP_RACE_FOR,
        || {
            n += 1;
            let leak = match n % 4 {
                0 => {
                    let name = format!("a-{n}.md");
                    let bytes = format!("# artifact {n}\n");
                    if write_plan_artifact(root, PlanDirs::PI, &name, bytes.as_bytes()).is_ok() {
                        written.push((name, bytes));
                    }
                    None
                }
                1 => match verify_plan_artifact(
                    root,
                    ".pi/plan/known.md",
                    &sha(&known),
                    known.len() as u64,
                ) {
                    Ok(ArtifactOnDisk::Intact) => Some("verified the outside artifact".to_owned()),
                    Ok(_) | Err(_) => None,
                },
                2 => plan_artifact_paths(root)
                    .ok()
                    .and_then(|names| names.into_iter().find(|n| n.contains(MARKER))),
                _ => {
                    let _ = sweep_plan_dirs(root);
                    None
                }
            };
            let now = snapshot(fixture.outside.path());
            leak.or_else(|| (now != before).then(|| format!("the outside changed: {now:?}")))
        },
    );
    eprintln!(
        "{}: {a} <-> {b}: {} probes, {} swaps",
        std::thread::current().name().unwrap_or("race"),
        race.probes,
        race.swaps
    );
    assert_eq!(race.leak, None, "after {} probes", race.probes);
    assert!(!written.is_empty(), "no artifact of {} probes", race.probes);
    for (name, bytes) in &written {
        let path = fixture.inside(&format!(".pi/plan/{name}"));
        assert_eq!(fs_err::read_to_string(path).unwrap(), *bytes, "{name}");
    }
}

#[test]
fn the_artifact_writer_never_writes_or_reads_outside_when_pi_is_swapped_during_a_swap_race() {
    let fixture = Fixture::new();
    fixture.link(".pi-link", "");
    race_artifacts(&fixture, ".pi", ".pi-link");
}

#[test]
fn the_artifact_writer_never_writes_or_reads_outside_when_pi_plan_is_swapped_during_a_swap_race() {
    let fixture = Fixture::new();
    fixture.link(".pi/plan-link", "plan");
    race_artifacts(&fixture, ".pi/plan", ".pi/plan-link");
}

/// Races first publications, updates of `plan.md` (alternating between [`BASE`] and [`NEXT`]),
/// `inspect`, `preflight` and `reconcile` while `a` and `b` are exchanged. `rearm` runs after
/// every probe (for a swapped file, which an update replaces as a name). Returns the bytes the
/// last successful update left in `plan.md`.
fn race_publication(fixture: &Fixture, a: &str, b: &str, rearm: impl Fn()) -> Vec<u8> {
    let root = fixture.root.path();
    let before = snapshot(fixture.outside.path());
    let read = fixture.outside_bytes("plans/read.md");
    let mut current: &[u8] = BASE;
    let mut published = Vec::new();
    let mut updates = 0u64;
    let mut n = 0u64;
    let race = swap_race(
        &fixture.inside(a),
        &fixture.inside(b),
        SWAP_RACE_FOR,
        || {
            n += 1;
            let leak = match n % 5 {
                0 => {
                    let name = format!("new-{n}.md");
                    let bytes = format!("# published {n}\n");
                    if publish_new(root, PlanDirs::PI, &name, bytes.as_bytes()).is_ok() {
                        published.push((name, bytes));
                    }
                    None
                }
                1 => {
                    let next = if current == BASE { NEXT } else { BASE };
                    if publish_update(root, PlanDirs::PI, "plan.md", next, &sha(current)).is_ok() {
                        current = next;
                        updates += 1;
                    }
                    None
                }
                2 => match inspect(root, PlanDirs::PI, "read.md") {
                    Ok(OnDisk::File { sha256, .. }) if sha256 == sha(&read) => {
                        Some("inspected the outside file".to_owned())
                    }
                    Ok(_) | Err(_) => None,
                },
                3 => match preflight(root, PlanDirs::PI, &format!("{MARKER}.md")) {
                    Ok(Preflight::Taken) => Some("preflight saw an outside name".to_owned()),
                    Ok(Preflight::Free) | Err(_) => None,
                },
                _ => match reconcile(root, PlanDirs::PI, "read.md", &sha(&read), None) {
                    Ok(Reconciled::AlreadyWritten) => {
                        Some("reconciled the outside file".to_owned())
                    }
                    Ok(_) | Err(_) => None,
                },
            };
            rearm();
            let now = snapshot(fixture.outside.path());
            leak.or_else(|| (now != before).then(|| format!("the outside changed: {now:?}")))
        },
    );
    eprintln!(
        "{}: {a} <-> {b}: {} probes, {} swaps",
        std::thread::current().name().unwrap_or("race"),
        race.probes,
        race.swaps
    );
    assert_eq!(race.leak, None, "after {} probes", race.probes);
    assert!(
        !published.is_empty(),
        "no publication of {} probes",
        race.probes
    );
    assert!(updates > 0, "no update of {} probes", race.probes);
    for (name, bytes) in &published {
        let path = fixture.inside(&format!(".pi/plans/{name}"));
        assert_eq!(fs_err::read_to_string(path).unwrap(), *bytes, "{name}");
    }
    current.to_vec()
}

#[test]
fn publication_never_writes_or_reads_outside_when_pi_is_swapped_during_a_swap_race() {
    let fixture = Fixture::new();
    fixture.link(".pi-link", "");
    let current = race_publication(&fixture, ".pi", ".pi-link", || {});
    assert_eq!(
        fs_err::read(fixture.inside(".pi/plans/plan.md")).unwrap(),
        current
    );
}

#[test]
fn publication_never_writes_or_reads_outside_when_pi_plans_is_swapped_during_a_swap_race() {
    let fixture = Fixture::new();
    fixture.link(".pi/plans-link", "plans");
    let current = race_publication(&fixture, ".pi/plans", ".pi/plans-link", || {});
    assert_eq!(
        fs_err::read(fixture.inside(".pi/plans/plan.md")).unwrap(),
        current
    );
}

/// The published file itself is exchanged with a symlink to its outside twin (which holds the
/// base bytes, so following it would verify). An update replaces the name, never the file
/// behind the link.
#[test]
fn publication_never_writes_through_a_published_file_swapped_for_a_symlink_during_a_swap_race() {
    use std::os::unix::fs::MetadataExt as _;
    let fixture = Fixture::new();
    fixture.link(".pi/plans/plan-link.md", "plans/plan.md");
    // A second hard link to the symlink itself: its link count says whether one of the two
    // swapped names still holds the symlink (checking the names one by one could miss it as the
    // swapper moves it between them).
    let (cwd, flags) = (rustix::fs::CWD, rustix::fs::AtFlags::empty());
    let anchor = fixture.inside(".pi/plans/anchor.lnk");
    let link = fixture.inside(".pi/plans/plan-link.md");
    rustix::fs::linkat(cwd, &link, cwd, &anchor, flags).unwrap();
    // An update that replaced `plan.md` while it was the symlink leaves two real files; put the
    // symlink back so the race keeps its teeth.
    let rearm = || {
        if fs_err::symlink_metadata(&anchor).unwrap().nlink() == 1 {
            let fresh = fixture.inside(".pi/plans/rearm.lnk");
            rustix::fs::linkat(cwd, &anchor, cwd, &fresh, flags).unwrap();
            fs_err::rename(&fresh, &link).unwrap();
        }
    };
    race_publication(
        &fixture,
        ".pi/plans/plan.md",
        ".pi/plans/plan-link.md",
        rearm,
    );
    assert_eq!(fixture.outside_bytes("plans/plan.md"), BASE);
}

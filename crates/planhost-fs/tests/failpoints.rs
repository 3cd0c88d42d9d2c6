//! Failpoints at the write, fsync and rename points of the durable writers (issue 10): each
//! armed point gives a clear error with the writer's stable code, never a file at a final name
//! that is not complete, never a temp file left behind, and the next write after it is disarmed
//! succeeds. A separate test binary: failpoints are process-global, and every test here holds
//! `FailScenario` (one at a time), so no other test can meet an armed point.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::wildcard_enum_match_arm
)]

use std::path::Path;

use fail::FailScenario;
use planhost_fs::{
    Dir, Name, Permissions, PlanDirs, PublishError, Reconciled, TEMP_PREFIX, publish_new,
    publish_update, reconcile, write_plan_artifact,
};

/// Every failpoint of the fs adapter, in the order a write meets them.
const POINTS: [&str; 4] = ["fs::write", "fs::fsync", "fs::rename", "fs::fsync_dir"];

/// Big enough that the injected short write (half the bytes) is visibly partial.
fn plan_bytes(tag: &str) -> Vec<u8> {
    format!("# Plan {tag}\n\n{}\n", "step\r\n".repeat(2_000)).into_bytes()
}

fn names(dir: &Path) -> Vec<String> {
    let Ok(entries) = fs_err::read_dir(dir) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    names
}

fn assert_no_temps(dir: &Path, point: &str) {
    let temps: Vec<String> = names(dir)
        .into_iter()
        .filter(|n| n.starts_with(TEMP_PREFIX))
        .collect();
    assert!(temps.is_empty(), "{point}: temp files left: {temps:?}");
}

/// Arms `point` to fail every time, for the closure's length.
fn armed<T>(point: &str, f: impl FnOnce() -> T) -> T {
    fail::cfg(point, "return").unwrap();
    let out = f();
    fail::remove(point);
    out
}

#[test]
fn an_artifact_write_that_fails_at_any_point_leaves_nothing() {
    let scenario = FailScenario::setup();
    for point in POINTS {
        for existing_dirs in [false, true] {
            let ws = tempfile::tempdir().unwrap();
            let plan_dir = ws.path().join(".pi/plan");
            if existing_dirs {
                fs_err::create_dir_all(&plan_dir).unwrap();
            }
            let bytes = plan_bytes(point);
            let err = armed(point, || {
                write_plan_artifact(ws.path(), PlanDirs::PI, "p.md", &bytes).unwrap_err()
            });
            assert_eq!(
                err.code().as_str(),
                "PLAN_ARTIFACT_WRITE_FAILED",
                "{point}: {err}"
            );
            assert!(
                err.to_string().contains("no space left on device"),
                "{point}: the error does not say why: {err}"
            );
            // Nothing at the final name, no temp, and no directory this call created.
            assert_eq!(names(&plan_dir), Vec::<String>::new(), "{point}");
            assert_eq!(
                ws.path().join(".pi").exists(),
                existing_dirs,
                "{point}: the directories this call created were not removed"
            );
            // Disarmed, the same write succeeds with exactly its bytes.
            let artifact = write_plan_artifact(ws.path(), PlanDirs::PI, "p.md", &bytes).unwrap();
            assert_eq!(
                fs_err::read(ws.path().join(&artifact.relative_path)).unwrap(),
                bytes
            );
            assert_eq!(names(&plan_dir), vec!["p.md".to_owned()], "{point}");
        }
    }
    scenario.teardown();
}

#[test]
fn a_first_publication_that_fails_is_either_absent_or_complete() {
    let scenario = FailScenario::setup();
    for point in POINTS {
        let ws = tempfile::tempdir().unwrap();
        let plans = ws.path().join(".pi/plans");
        let bytes = plan_bytes(point);
        let sha = planhost_core::sha256_hex(&bytes);
        let err = armed(point, || {
            publish_new(ws.path(), PlanDirs::PI, "p.md", &bytes).unwrap_err()
        });
        assert!(
            matches!(err, PublishError::WriteFailed { .. }),
            "{point}: {err:?}"
        );
        assert_eq!(err.code().as_str(), "PUBLISH_WRITE_FAILED", "{point}");
        assert_no_temps(&plans, point);
        match point {
            // After the rename the complete file is in place: reconcile says so, and the
            // service records the publication as written.
            "fs::fsync_dir" => {
                assert_eq!(fs_err::read(plans.join("p.md")).unwrap(), bytes, "{point}");
                assert_eq!(
                    reconcile(ws.path(), PlanDirs::PI, "p.md", &sha, None).unwrap(),
                    Reconciled::AlreadyWritten
                );
            }
            _ => {
                assert!(!plans.join("p.md").exists(), "{point}: a file at the name");
                assert_eq!(
                    reconcile(ws.path(), PlanDirs::PI, "p.md", &sha, None).unwrap(),
                    Reconciled::NotWritten
                );
                // Disarmed, the retry writes it.
                publish_new(ws.path(), PlanDirs::PI, "p.md", &bytes).unwrap();
                assert_eq!(fs_err::read(plans.join("p.md")).unwrap(), bytes, "{point}");
            }
        }
        assert_no_temps(&plans, point);
    }
    scenario.teardown();
}

#[test]
fn an_update_that_fails_keeps_the_old_bytes_or_has_the_new_ones() {
    let scenario = FailScenario::setup();
    for point in POINTS {
        let ws = tempfile::tempdir().unwrap();
        let plans = ws.path().join(".pi/plans");
        let old = plan_bytes("old");
        let new = plan_bytes(point);
        publish_new(ws.path(), PlanDirs::PI, "p.md", &old).unwrap();
        let base = planhost_core::sha256_hex(&old);
        let err = armed(point, || {
            publish_update(ws.path(), PlanDirs::PI, "p.md", &new, &base).unwrap_err()
        });
        assert_eq!(
            err.code().as_str(),
            "PUBLISH_WRITE_FAILED",
            "{point}: {err}"
        );
        assert_no_temps(&plans, point);
        let now = fs_err::read(plans.join("p.md")).unwrap();
        let expected = match point {
            "fs::fsync_dir" => &new,
            _ => &old,
        };
        assert!(now == *expected, "{point}: the name holds other bytes");
        let landed = reconcile(
            ws.path(),
            PlanDirs::PI,
            "p.md",
            &planhost_core::sha256_hex(&new),
            Some(&base),
        )
        .unwrap();
        match point {
            "fs::fsync_dir" => assert_eq!(landed, Reconciled::AlreadyWritten),
            _ => {
                assert_eq!(landed, Reconciled::NotWritten, "{point}");
                publish_update(ws.path(), PlanDirs::PI, "p.md", &new, &base).unwrap();
                assert_eq!(fs_err::read(plans.join("p.md")).unwrap(), new);
            }
        }
        assert_no_temps(&plans, point);
    }
    scenario.teardown();
}

#[test]
fn a_replacing_write_that_fails_never_leaves_a_partial_file() {
    // The primitive under the Write tool and publication updates.
    let scenario = FailScenario::setup();
    for point in POINTS {
        let tmp = tempfile::tempdir().unwrap();
        let dir = Dir::open_anchor(tmp.path()).unwrap();
        let name = Name::new("f.txt").unwrap();
        let old = plan_bytes("old");
        let new = plan_bytes(point);
        dir.replace_atomically(name, &old, Permissions::UmaskDefault)
            .unwrap();
        let err = armed(point, || {
            dir.replace_atomically(name, &new, Permissions::UmaskDefault)
                .unwrap_err()
        });
        assert_eq!(err.code().as_str(), "FS_IO", "{point}: {err}");
        assert_no_temps(tmp.path(), point);
        let now = fs_err::read(tmp.path().join("f.txt")).unwrap();
        assert!(
            now == old || (point == "fs::fsync_dir" && now == new),
            "{point}: {} bytes at the name",
            now.len()
        );
        dir.replace_atomically(name, &new, Permissions::UmaskDefault)
            .unwrap();
        assert_eq!(fs_err::read(tmp.path().join("f.txt")).unwrap(), new);
        assert_eq!(names(tmp.path()), vec!["f.txt".to_owned()], "{point}");
    }
    scenario.teardown();
}

#[test]
fn a_failpoint_that_fires_once_fails_only_that_write() {
    // `1*return` fails the first write and lets the next through: nothing sticks.
    let scenario = FailScenario::setup();
    for point in POINTS {
        let ws = tempfile::tempdir().unwrap();
        fail::cfg(point, "1*return").unwrap();
        let first = write_plan_artifact(ws.path(), PlanDirs::PI, "a.md", b"# A\n");
        let second = write_plan_artifact(ws.path(), PlanDirs::PI, "b.md", b"# B\n");
        fail::remove(point);
        assert_eq!(
            first.unwrap_err().code().as_str(),
            "PLAN_ARTIFACT_WRITE_FAILED",
            "{point}"
        );
        second.unwrap();
        assert_eq!(
            names(&ws.path().join(".pi/plan")),
            vec!["b.md".to_owned()],
            "{point}"
        );
    }
    scenario.teardown();
}

#[test]
fn without_rename_noreplace_a_hard_link_still_never_replaces() {
    // `fs::noreplace_unsupported` answers renameat2(RENAME_NOREPLACE) with EINVAL, as a
    // filesystem without the flag does. The artifact writer and publication then link the
    // complete temp file to its name: created once with its exact bytes, a collision refused with
    // the existing bytes kept, no temp left.
    let scenario = FailScenario::setup();
    let point = "fs::noreplace_unsupported";
    let ws = tempfile::tempdir().unwrap();
    let (plan_dir, plans) = (ws.path().join(".pi/plan"), ws.path().join(".pi/plans"));
    let (first, second) = (plan_bytes("first"), plan_bytes("second"));
    armed(point, || {
        let artifact = write_plan_artifact(ws.path(), PlanDirs::PI, "a.md", &first).unwrap();
        assert_eq!(
            fs_err::read(ws.path().join(&artifact.relative_path)).unwrap(),
            first
        );
        let err = write_plan_artifact(ws.path(), PlanDirs::PI, "a.md", &second).unwrap_err();
        assert!(
            err.to_string().contains("exist"),
            "a collision must be refused: {err}"
        );
        assert_eq!(
            fs_err::read(ws.path().join(&artifact.relative_path)).unwrap(),
            first
        );

        publish_new(ws.path(), PlanDirs::PI, "p.md", &first).unwrap();
        assert!(publish_new(ws.path(), PlanDirs::PI, "p.md", &second).is_err());
        assert_eq!(fs_err::read(plans.join("p.md")).unwrap(), first);
    });
    assert_no_temps(&plan_dir, point);
    assert_no_temps(&plans, point);
    scenario.teardown();
}

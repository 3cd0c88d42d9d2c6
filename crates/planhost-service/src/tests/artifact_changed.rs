//! DESIGN decision 8: before an approval commits, the file the person reviewed must still hold
//! exactly the submitted bytes. Every way of changing it refuses the approve with
//! `PLAN_ARTIFACT_CHANGED` and changes nothing; a reject still works (it grants nothing).

use std::io::Write as _;
use std::path::Path;

use planhost_core::{ApprovalStatus, ErrorCode, Mode, PlanState};

use super::fixture::*;

/// Changes the artifact (first path) using an outside directory (second path).
type Change = fn(&Path, &Path);

/// Each case, with what the refusal says was found.
const CASES: [(&str, Change, &str); 5] = [
    (
        "a line appended",
        |file, _| {
            let mut f = fs_err::OpenOptions::new().append(true).open(file).unwrap();
            f.write_all(b"2. and one more thing\n").unwrap();
        },
        "it now holds other bytes",
    ),
    (
        "rewritten with the same size",
        |file, _| {
            let before = fs_err::read(file).unwrap();
            let after = String::from_utf8(before.clone())
                .unwrap()
                .replace("do it", "do IT");
            assert_eq!(after.len(), before.len());
            assert_ne!(after.as_bytes(), before.as_slice());
            fs_err::write(file, after).unwrap();
        },
        "it now holds other bytes",
    ),
    (
        "deleted",
        |file, _| fs_err::remove_file(file).unwrap(),
        "it was deleted",
    ),
    (
        "replaced by a symlink to an identical copy",
        |file, outside| {
            let copy = outside.join("copy.md");
            fs_err::copy(file, &copy).unwrap();
            assert_eq!(fs_err::read(&copy).unwrap(), fs_err::read(file).unwrap());
            fs_err::remove_file(file).unwrap();
            fs_err::os::unix::fs::symlink(&copy, file).unwrap();
        },
        "a symlink or directory replaced it",
    ),
    (
        "its directory replaced by a symlink to an identical copy",
        |file, outside| {
            let dir = file.parent().unwrap();
            let copy = outside.join("plan");
            fs_err::create_dir(&copy).unwrap();
            let name = file.file_name().unwrap();
            fs_err::copy(file, copy.join(name)).unwrap();
            fs_err::remove_file(file).unwrap();
            fs_err::remove_dir(dir).unwrap();
            fs_err::os::unix::fs::symlink(&copy, dir).unwrap();
            // Read through the link, the bytes are the submitted ones.
            assert_eq!(fs_err::read(file).unwrap(), b"# Plan\n1. do it\n");
        },
        "a symlink or directory replaced it",
    ),
];

#[test]
fn every_change_to_the_artifact_refuses_the_approval_and_changes_nothing() {
    for (name, change, found) in CASES {
        let mut f = Fixture::new();
        let a = f.pending();
        let outside = tempfile::tempdir().unwrap();
        let file = f.workspace_root().join(&a.artifact_relative_path);
        change(&file, outside.path());
        let before = f.dump();

        let err = f.resolve(&approve(&a, None), None).unwrap_err();
        assert_eq!(err.code(), ErrorCode::PlanArtifactChanged, "{name}: {err}");
        assert_eq!(err.code().as_str(), "PLAN_ARTIFACT_CHANGED");
        let message = err.to_string();
        assert!(
            message.contains(&a.artifact_relative_path) && message.contains(found),
            "{name}: {message}"
        );
        assert_eq!(
            f.dump(),
            before,
            "{name}: a refused approve changed the database"
        );

        // Still pending, in Plan, awaiting approval; no execution was granted.
        let row = f.store().approval(&a.proposal_id).unwrap();
        assert_eq!(row.status, ApprovalStatus::Pending, "{name}");
        assert_eq!((row.execution_id, row.version), (None, a.version), "{name}");
        let s = f.store().session(&a.session_id).unwrap();
        assert_eq!(
            (s.mode, s.plan_state),
            (Mode::Plan, PlanState::AwaitingApproval),
            "{name}"
        );
        // Every permission mode is refused alike.
        for mode in [
            planhost_core::TargetPermissionMode::AcceptEdits,
            planhost_core::TargetPermissionMode::Auto,
        ] {
            let err = f.resolve(&approve(&a, Some(mode)), None).unwrap_err();
            assert_eq!(err.code(), ErrorCode::PlanArtifactChanged, "{name}");
        }
        assert_eq!(f.dump(), before, "{name}");

        // A reject needs no check: it grants nothing.
        let rejected = f.resolve(&reject(&a), Some("the file changed")).unwrap();
        assert_eq!(
            (
                rejected.status,
                rejected.execution_id,
                rejected.feedback.as_deref()
            ),
            (ApprovalStatus::Rejected, None, Some("the file changed")),
            "{name}"
        );
        let s = f.store().session(&a.session_id).unwrap();
        assert_eq!(
            (s.mode, s.plan_state),
            (Mode::Plan, PlanState::Stopped),
            "{name}"
        );
        // The outside copy a symlink pointed at is untouched.
        if let Ok(copy) = fs_err::read(outside.path().join("copy.md")) {
            assert_eq!(copy, b"# Plan\n1. do it\n", "{name}");
        }
    }
}

/// The check is of the bytes, not of when the file was touched: a file rewritten with exactly
/// the submitted bytes is approvable again.
#[test]
fn the_exact_bytes_restored_approve_again() {
    let mut f = Fixture::new();
    let a = f.pending();
    let file = f.workspace_root().join(&a.artifact_relative_path);
    let original = fs_err::read(&file).unwrap();
    fs_err::write(&file, b"# Plan\n1. do IT\n").unwrap();
    assert_eq!(
        f.resolve(&approve(&a, None), None).unwrap_err().code(),
        ErrorCode::PlanArtifactChanged
    );
    fs_err::write(&file, &original).unwrap();
    let approved = f.resolve(&approve(&a, None), None).unwrap();
    assert_eq!(approved.status, ApprovalStatus::Approved);
    assert!(approved.execution_id.is_some());
}

#[test]
fn a_late_approve_of_a_changed_plan_records_the_expiry() {
    let mut f = Fixture::new();
    let a = f.pending();
    fs_err::remove_file(f.workspace_root().join(&a.artifact_relative_path)).unwrap();
    f.clock.advance_ms(planhost_core::APPROVAL_TTL_MS);
    let err = f
        .resolve(&approve(&a, None), None)
        .expect_err("a late approve is refused");
    // The deadline is the store's to enforce: the row is recorded expired, whatever the file.
    assert_eq!(err.code(), ErrorCode::PlanApprovalTimeout, "{err}");
    let row = f.store().approval(&a.proposal_id).unwrap();
    assert_eq!(row.status, ApprovalStatus::Expired);
}

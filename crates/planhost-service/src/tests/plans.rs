//! Issue #5 on the engine: checkpoints per branch, projection, publication with every conflict
//! case, crash reconciliation, forks, exit, handoff and tool drift.

use std::path::Path;

use planhost_core::{
    EntryId, ErrorCode, ExitChoice, ExitOffer, HandoffPhase, PublicationState, PublicationStatus,
    SessionId,
};
use planhost_store::{CaptureBinding, CheckpointSource, HandoffRequest, StatusChange};

use super::fixture::*;
use crate::publish::{Overwrite, PublishOutcome, PublishStart};

pub(crate) fn path(ids: &[&str]) -> Vec<EntryId> {
    ids.iter().map(|s| EntryId::from(*s)).collect()
}

pub(crate) fn draft(
    f: &mut Fixture,
    s: &SessionId,
    branch: &[&str],
    md: &str,
    expected: i64,
) -> planhost_store::SavedCheckpoint {
    f.store()
        .save_checkpoint(
            s,
            &path(branch),
            md,
            Some(expected),
            CheckpointSource::Draft,
            None,
        )
        .unwrap()
}

pub(crate) fn pending(start: PublishStart) -> planhost_store::PublicationRecord {
    match start {
        PublishStart::Pending(p) => p,
        PublishStart::Synced(_) => panic!("expected a pending publication"),
    }
}

pub(crate) fn completed(outcome: PublishOutcome) -> planhost_store::PublicationRecord {
    match outcome {
        PublishOutcome::Completed(p) => p,
        other => panic!("expected completed, got {other:?}"),
    }
}

pub(crate) const V1: &str = "# Plan: Add login\n\n1. Form.\n";
const V2: &str = "# Plan: Add login\n\n1. Form.\n2. Session cookie.\n";

/// A session in Plan with one published plan (V1) on branch root → a.
fn published(f: &mut Fixture) -> (SessionId, planhost_store::PublicationRecord) {
    let s = f.plan_session();
    draft(f, &s, &["root", "a"], V1, 0);
    let p = pending(
        f.engine()
            .start_publication(&s, &path(&["root", "a"]), Overwrite::Refuse)
            .unwrap(),
    );
    let done = completed(f.resolve_publication(&p.id, true).unwrap());
    (s, done)
}

/// The crash-window status change: the approval was persisted, the write not yet recorded.
const PENDING_TO_APPROVED: StatusChange<'static> = StatusChange {
    from: &[PublicationStatus::Pending],
    to: PublicationStatus::Approved,
    code: None,
    by: None,
};

#[test]
fn checkpoints_are_exact_snapshots_with_optimistic_revisions() {
    let mut f = Fixture::new();
    let s = f.plan_session();
    let one = draft(&mut f, &s, &["root", "a"], "# Plan: x\r\nexact\n", 0);
    assert_eq!((one.record.revision, one.created), (1, true));
    assert_eq!(
        one.record.sha256,
        planhost_core::sha256_hex(b"# Plan: x\r\nexact\n")
    );
    let stale = f.store().save_checkpoint(
        &s,
        &path(&["root", "a"]),
        "other",
        Some(0),
        CheckpointSource::Draft,
        None,
    );
    let err = stale.unwrap_err();
    assert_eq!(err.code(), ErrorCode::CheckpointRevisionStale);
    assert!(err.to_string().contains("current revision is 1"), "{err}");
    let (latest, text) = f
        .store()
        .latest_checkpoint(&s, &path(&["root", "a"]))
        .unwrap()
        .unwrap();
    assert_eq!(
        (latest.revision, text.as_str()),
        (1, "# Plan: x\r\nexact\n")
    );
    // Identical bytes are stored once.
    let before = f.store().blob_bytes().unwrap();
    let again = draft(&mut f, &s, &["root", "a", "b"], "# Plan: x\r\nexact\n", 1);
    assert_eq!((again.record.revision, again.stored.stored_bytes), (2, 0));
    assert_eq!(f.store().blob_bytes().unwrap(), before);
}

#[test]
fn a_sibling_branch_never_sees_another_branchs_checkpoint() {
    let mut f = Fixture::new();
    let s = f.plan_session();
    draft(&mut f, &s, &["root", "a"], "# base\n", 0);
    draft(&mut f, &s, &["root", "a", "left"], "# left\n", 1);
    draft(&mut f, &s, &["root", "a", "right"], "# right\n", 1);
    let at = |f: &mut Fixture, b: &[&str]| {
        f.store()
            .latest_checkpoint(&s, &path(b))
            .unwrap()
            .map(|(c, t)| (c.revision, t))
    };
    assert_eq!(
        at(&mut f, &["root", "a", "left", "l2"]),
        Some((2, "# left\n".into()))
    );
    assert_eq!(
        at(&mut f, &["root", "a", "right"]),
        Some((2, "# right\n".into()))
    );
    assert_eq!(at(&mut f, &["root", "a"]), Some((1, "# base\n".into())));
    assert_eq!(at(&mut f, &["root"]), None);
    // Revisions are branch-local: the right branch's revision 2 does not block the left.
    draft(&mut f, &s, &["root", "a", "left", "l2"], "# left 2\n", 2);
    let (projected, revision) = f
        .engine()
        .projection(&s, &path(&["root", "a", "right"]))
        .unwrap();
    assert!(projected.contains("# right\n") && !projected.contains("left"));
    assert_eq!(revision, Some(2));
    // No checkpoint on that branch: the Plan-mode instruction alone.
    let (root_only, revision) = f.engine().projection(&s, &path(&["root"])).unwrap();
    assert_eq!(
        root_only,
        planhost_core::plan_instruction(planhost_core::PolicyPreset::Host)
    );
    assert_eq!(revision, None);
}

#[test]
fn a_capture_offered_again_creates_no_revision() {
    let mut f = Fixture::new();
    let s = f.plan_session();
    let binding = CaptureBinding {
        entry_id: "e1".into(),
        fingerprint: "fp".into(),
        block_index: 0,
        start: 10,
        end: 40,
    };
    let b = path(&["root", "e1"]);
    let first = f
        .store()
        .save_checkpoint(
            &s,
            &b,
            "# cap\n",
            None,
            CheckpointSource::Capture,
            Some(&binding),
        )
        .unwrap();
    let second = f
        .store()
        .save_checkpoint(
            &s,
            &b,
            "# cap\n",
            None,
            CheckpointSource::Capture,
            Some(&binding),
        )
        .unwrap();
    assert!(first.created && !second.created);
    assert_eq!(first.record, second.record);
    // The same entry with other content is a changed replay: refused, no new revision.
    let other = CaptureBinding {
        fingerprint: "fp2".into(),
        ..binding
    };
    let err = f
        .store()
        .save_checkpoint(
            &s,
            &b,
            "# cap 2\n",
            None,
            CheckpointSource::Capture,
            Some(&other),
        )
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::CaptureEntryChanged);
    let (latest, _) = f.store().latest_checkpoint(&s, &b).unwrap().unwrap();
    assert_eq!(latest.revision, 1);
}

#[test]
fn first_publication_creates_exclusively_and_names_the_session() {
    let mut f = Fixture::new();
    let (s, done) = published(&mut f);
    assert_eq!(
        done.relative_path,
        format!(".pi/plans/add-login-{T0_STAMP}.md"),
        "the first name is <slug>-<yyyymmdd-hhmmss>.md"
    );
    assert_eq!(done.status, PublicationStatus::Completed);
    assert_eq!(done.resolved_by, Some(person()));
    assert_eq!(
        read(&f.workspace_root(), &done.relative_path),
        V1.as_bytes()
    );
    let id = f.store().plan_identity(&s).unwrap();
    assert_eq!(id.session_name.as_deref(), Some("Add login"));
    assert_eq!(id.published_sha256.as_deref(), Some(done.sha256.as_str()));
    let status = f.engine().plan_status(&s, &path(&["root", "a"])).unwrap();
    assert_eq!(status.publication, PublicationState::Synced);
    // Synced: /plan save verifies and writes nothing; /plan exit exits at once.
    assert!(matches!(
        f.engine()
            .start_publication(&s, &path(&["root", "a"]), Overwrite::Refuse)
            .unwrap(),
        PublishStart::Synced(_)
    ));
    assert_eq!(
        f.engine().exit_offer(&s, &path(&["root", "a"])).unwrap(),
        ExitOffer::ExitNow
    );
}

#[test]
fn updates_go_to_the_same_path() {
    let mut f = Fixture::new();
    let (s, first) = published(&mut f);
    draft(&mut f, &s, &["root", "a", "b"], V2, 1);
    assert_eq!(
        f.engine()
            .plan_status(&s, &path(&["root", "a", "b"]))
            .unwrap()
            .publication,
        PublicationState::Dirty
    );
    let p = pending(
        f.engine()
            .start_publication(&s, &path(&["root", "a", "b"]), Overwrite::Refuse)
            .unwrap(),
    );
    assert_eq!(
        (p.relative_path.as_str(), p.base_sha256.as_deref()),
        (first.relative_path.as_str(), Some(first.sha256.as_str()))
    );
    completed(f.resolve_publication(&p.id, true).unwrap());
    assert_eq!(
        read(&f.workspace_root(), &first.relative_path),
        V2.as_bytes()
    );
}

/// Changes the published file (first path) using an outside directory (second path).
type Change = fn(&Path, &Path);

/// Every way the published file can change under us is a conflict; nothing is overwritten.
#[test]
fn every_conflict_case_is_refused_without_overwriting() {
    let cases: [(&str, Change); 4] = [
        ("modified", |file, _| {
            fs_err::write(file, "edited by a person\n").unwrap();
        }),
        ("deleted", |file, _| fs_err::remove_file(file).unwrap()),
        ("symlink swapped", |file, outside| {
            fs_err::remove_file(file).unwrap();
            fs_err::os::unix::fs::symlink(outside.join("target.md"), file).unwrap();
        }),
        ("replaced by a directory", |file, _| {
            fs_err::remove_file(file).unwrap();
            fs_err::create_dir(file).unwrap();
        }),
    ];
    for (name, change) in cases {
        let mut f = Fixture::new();
        let (s, first) = published(&mut f);
        draft(&mut f, &s, &["root", "a", "b"], V2, 1);
        let p = pending(
            f.engine()
                .start_publication(&s, &path(&["root", "a", "b"]), Overwrite::Refuse)
                .unwrap(),
        );
        let outside = tempfile::tempdir().unwrap();
        fs_err::write(outside.path().join("target.md"), "outside\n").unwrap();
        let file = f.workspace_root().join(&first.relative_path);
        change(&file, outside.path());
        let before = fs_err::symlink_metadata(&file).ok().map(|m| m.file_type());
        match f.resolve_publication(&p.id, true).unwrap() {
            PublishOutcome::Conflict(c) => {
                assert_eq!(c.status, PublicationStatus::Conflict, "{name}");
            }
            other => panic!("{name}: expected a conflict, got {other:?}"),
        }
        assert_eq!(
            fs_err::read_to_string(outside.path().join("target.md")).unwrap(),
            "outside\n",
            "{name}"
        );
        assert_eq!(
            fs_err::symlink_metadata(&file).ok().map(|m| m.file_type()),
            before,
            "{name}"
        );
        if name == "modified" {
            assert_eq!(
                fs_err::read_to_string(&file).unwrap(),
                "edited by a person\n"
            );
        }
        // Still in Plan; status reports the conflict; a new save is refused; exit is offered.
        let status = f
            .engine()
            .plan_status(&s, &path(&["root", "a", "b"]))
            .unwrap();
        assert!(
            status.active,
            "{name}: publication failure never leaves Plan"
        );
        assert_eq!(status.publication, PublicationState::Conflict, "{name}");
        assert_eq!(
            f.engine()
                .start_publication(&s, &path(&["root", "a", "b"]), Overwrite::Refuse)
                .unwrap_err()
                .code(),
            ErrorCode::PublishConflict
        );
        let ExitOffer::Choose { default, .. } = f
            .engine()
            .exit_offer(&s, &path(&["root", "a", "b"]))
            .unwrap()
        else {
            panic!("{name}: a conflict must offer choices");
        };
        assert_eq!(default, ExitChoice::ExitWithoutPublishing);
        f.engine().exit_plan(&s).unwrap();
    }
}

#[test]
fn a_collision_racing_the_first_write_revokes_and_asks_again() {
    let mut f = Fixture::new();
    let s = f.plan_session();
    draft(&mut f, &s, &["root", "a"], V1, 0);
    let p = pending(
        f.engine()
            .start_publication(&s, &path(&["root", "a"]), Overwrite::Refuse)
            .unwrap(),
    );
    assert_eq!(
        p.relative_path,
        format!(".pi/plans/add-login-{T0_STAMP}.md")
    );
    // Someone creates the chosen file between approval request and write.
    let target = f.workspace_root().join(&p.relative_path);
    fs_err::create_dir_all(target.parent().unwrap()).unwrap();
    fs_err::write(&target, "theirs\n").unwrap();
    let PublishOutcome::Reapprove { revoked, next } = f.resolve_publication(&p.id, true).unwrap()
    else {
        panic!("expected a re-approval");
    };
    assert_eq!(
        (revoked.status, revoked.error_code),
        (
            PublicationStatus::Revoked,
            Some(ErrorCode::PublishCollision)
        )
    );
    // v2: the next name counts up in the same second instead of stamping a later time.
    assert_eq!(
        next.relative_path,
        format!(".pi/plans/add-login-{T0_STAMP}-2.md")
    );
    assert_eq!(next.status, PublicationStatus::Pending);
    assert_eq!(
        fs_err::read_to_string(&target).unwrap(),
        "theirs\n",
        "never overwritten"
    );
    completed(f.resolve_publication(&next.id, true).unwrap());
    assert_eq!(
        read(&f.workspace_root(), &next.relative_path),
        V1.as_bytes()
    );
}

#[test]
fn a_write_completed_before_a_crash_is_reconciled_not_repeated() {
    let mut f = Fixture::new();
    let s = f.plan_session();
    draft(&mut f, &s, &["root", "a"], V1, 0);
    let p = pending(
        f.engine()
            .start_publication(&s, &path(&["root", "a"]), Overwrite::Refuse)
            .unwrap(),
    );
    // The approval was persisted and the write happened, then the host died before recording it.
    f.store()
        .set_publication_status(&p.id, &PENDING_TO_APPROVED)
        .unwrap();
    let root = f.workspace_root();
    let name = p.relative_path.strip_prefix(".pi/plans/").unwrap();
    planhost_fs::publish_new(&root, planhost_fs::PlanDirs::PI, name, V1.as_bytes()).unwrap();
    f.restart();
    let after = f.store().publication(&p.id).unwrap();
    assert_eq!(after.status, PublicationStatus::Completed);
    assert_eq!(
        f.store()
            .plan_identity(&s)
            .unwrap()
            .published_path
            .as_deref(),
        Some(p.relative_path.as_str())
    );

    // An approved write that never happened is interrupted, not repeated.
    let mut g = Fixture::new();
    let s = g.plan_session();
    draft(&mut g, &s, &["root", "a"], V1, 0);
    let p = pending(
        g.engine()
            .start_publication(&s, &path(&["root", "a"]), Overwrite::Refuse)
            .unwrap(),
    );
    g.store()
        .set_publication_status(&p.id, &PENDING_TO_APPROVED)
        .unwrap();
    g.restart();
    assert_eq!(
        g.store().publication(&p.id).unwrap().status,
        PublicationStatus::Interrupted
    );
    assert!(
        !g.workspace_root().join(&p.relative_path).exists(),
        "not written by the restart"
    );
    // A pending (unapproved) publication does not survive a restart either.
    let p2 = pending(
        g.engine()
            .start_publication(&s, &path(&["root", "a"]), Overwrite::Refuse)
            .unwrap(),
    );
    g.restart();
    assert_eq!(
        g.store().publication(&p2.id).unwrap().status,
        PublicationStatus::Interrupted
    );
}

#[test]
fn a_forked_session_starts_a_fresh_identity_and_never_claims_the_parents_file() {
    let mut f = Fixture::new();
    let (parent, done) = published(&mut f);
    let root = f.workspace_root();
    let fork = f
        .engine()
        .open_session(
            &root,
            Some("pi-fork"),
            planhost_core::Interactivity::Interactive,
            None,
            None,
        )
        .unwrap()
        .id;
    f.store()
        .set_mode(&fork, planhost_core::Mode::Plan)
        .unwrap();
    let a = f.store().plan_identity(&parent).unwrap();
    let b = f.store().plan_identity(&fork).unwrap();
    assert_ne!(a.plan_id, b.plan_id);
    assert_eq!(b.published_path, None);
    draft(&mut f, &fork, &["root", "a"], V1, 0);
    let p = pending(
        f.engine()
            .start_publication(&fork, &path(&["root", "a"]), Overwrite::Refuse)
            .unwrap(),
    );
    assert_ne!(
        p.relative_path, done.relative_path,
        "the fork gets its own file"
    );
}

#[test]
fn preview_status_and_exit_without_a_checkpoint() {
    let mut f = Fixture::new();
    let s = f.plan_session();
    assert_eq!(
        f.engine()
            .start_publication(&s, &path(&["root"]), Overwrite::Refuse)
            .unwrap_err()
            .code(),
        ErrorCode::CheckpointNone
    );
    let status = f.engine().plan_status(&s, &path(&["root"])).unwrap();
    assert_eq!(
        (status.active, status.revision, status.publication),
        (true, None, PublicationState::Unpublished)
    );
    let ExitOffer::Choose { choices, default } =
        f.engine().exit_offer(&s, &path(&["root"])).unwrap()
    else {
        panic!("no checkpoint means a choice");
    };
    assert_eq!(
        choices,
        vec![
            ExitChoice::ExitWithoutPublishing,
            ExitChoice::FinalizeBeforeExit,
            ExitChoice::ContinuePlanning
        ]
    );
    assert_eq!(default, ExitChoice::ExitWithoutPublishing);
    assert_eq!(
        f.engine().exit_plan(&s).unwrap(),
        Vec::<planhost_core::PublicationId>::new()
    );
    assert!(!f.engine().plan_status(&s, &path(&["root"])).unwrap().active);
}

#[test]
fn a_pending_handoff_after_restart_is_never_accepted_without_a_retry() {
    let mut f = Fixture::new();
    let s = f.plan_session();
    // v2: entering Plan is the handoff's enter step.
    assert_eq!(
        f.store().plan_identity(&s).unwrap().phase,
        HandoffPhase::Planning
    );
    let saved = draft(&mut f, &s, &["root", "a"], V1, 0);
    assert_eq!(
        f.store().plan_identity(&s).unwrap().phase,
        HandoffPhase::Ready
    );
    // Leaving and re-entering Plan (twice: entering an active Plan is a no-op) goes back to
    // planning (was `HandoffRequest::Enter`, twice).
    f.engine().exit_plan(&s).unwrap();
    assert_eq!(
        f.store().plan_identity(&s).unwrap().phase,
        HandoffPhase::Off
    );
    f.store().set_mode(&s, planhost_core::Mode::Plan).unwrap();
    f.store().set_mode(&s, planhost_core::Mode::Plan).unwrap();
    let cp = saved.record.id;
    let id = f.store().plan_identity(&s).unwrap();
    assert_eq!(id.phase, HandoffPhase::Planning);
    // A checkpoint makes it ready again after re-entry.
    draft(&mut f, &s, &["root", "a", "b"], V2, 1);
    let id = f
        .store()
        .handoff(
            &s,
            &HandoffRequest::Approve {
                checkpoint_id: cp,
                token: "t1".into(),
            },
        )
        .unwrap();
    assert_eq!(id.phase, HandoffPhase::HandoffPending);
    f.restart();
    let id = f.store().plan_identity(&s).unwrap();
    assert!(id.handoff_restarted && id.handoff_token.is_none());
    let err = f
        .store()
        .handoff(&s, &HandoffRequest::Accept { token: "t1".into() })
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::PlanHandoffStale);
    f.store()
        .handoff(&s, &HandoffRequest::Retry { token: "t2".into() })
        .unwrap();
    let id = f
        .store()
        .handoff(&s, &HandoffRequest::Accept { token: "t2".into() })
        .unwrap();
    assert_eq!(id.phase, HandoffPhase::Off);
    // Accepted means Plan mode ended: the execution's turn is an Agent turn.
    assert_eq!(
        f.store().session(&s).unwrap().mode,
        planhost_core::Mode::Agent
    );
}

#[test]
fn tool_drift_is_a_conflict_that_blocks_approval_until_resolved() {
    let mut f = Fixture::new();
    let s = f.plan_session();
    let tools = |v: &[&str]| -> Vec<String> { v.iter().map(|s| (*s).to_owned()).collect() };
    assert_eq!(
        f.store().plan_identity(&s).unwrap().phase,
        HandoffPhase::Planning
    );
    f.store()
        .tools_enter(
            &s,
            &tools(&["read", "bash", "edit", "mcp_a"]),
            &tools(&["read", "bash"]),
        )
        .unwrap();
    assert!(
        !f.store()
            .tools_observe(&s, &tools(&["bash", "read"]))
            .unwrap()
            .tool_conflict
    );
    assert!(
        f.store()
            .tools_observe(&s, &tools(&["bash", "read", "write"]))
            .unwrap()
            .tool_conflict
    );
    draft(&mut f, &s, &["root", "a"], V1, 0);
    assert_eq!(
        f.engine()
            .start_publication(&s, &path(&["root", "a"]), Overwrite::Refuse)
            .unwrap_err()
            .code(),
        ErrorCode::PlanToolsConflict
    );
    let cp = f
        .store()
        .latest_checkpoint(&s, &path(&["root", "a"]))
        .unwrap()
        .unwrap()
        .0
        .id;
    let err = f
        .store()
        .handoff(
            &s,
            &HandoffRequest::Approve {
                checkpoint_id: cp,
                token: "t".into(),
            },
        )
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::PlanToolsConflict);
    f.store()
        .tools_resolve(&s, &tools(&["bash", "read", "write"]))
        .unwrap();
    pending(
        f.engine()
            .start_publication(&s, &path(&["root", "a"]), Overwrite::Refuse)
            .unwrap(),
    );
    // Exit restores the baseline intersected with what exists now.
    let restore = f
        .store()
        .tools_exit(&s, &tools(&["read", "edit", "new_tool"]))
        .unwrap();
    assert_eq!(restore, tools(&["read", "edit"]));
}

#[test]
fn a_branch_switch_clears_every_pending_approval() {
    let mut f = Fixture::new();
    let s = f.plan_session();
    let saved = draft(&mut f, &s, &["root", "a"], V1, 0);
    let p = pending(
        f.engine()
            .start_publication(&s, &path(&["root", "a"]), Overwrite::Refuse)
            .unwrap(),
    );
    f.store()
        .handoff(
            &s,
            &HandoffRequest::Approve {
                checkpoint_id: saved.record.id,
                token: "t".into(),
            },
        )
        .unwrap();
    let revoked = f.store().branch_switched(&s).unwrap();
    assert_eq!(revoked, vec![p.id.clone()]);
    let after = f.store().publication(&p.id).unwrap();
    assert_eq!(
        (after.status, after.error_code),
        (PublicationStatus::Revoked, Some(ErrorCode::BranchSwitched))
    );
    assert_eq!(
        f.resolve_publication(&p.id, true).unwrap_err().code(),
        ErrorCode::PublicationStateInvalid
    );
    let id = f.store().plan_identity(&s).unwrap();
    assert_eq!((id.phase, id.handoff_token), (HandoffPhase::Ready, None));
    assert!(!f.workspace_root().join(&p.relative_path).exists());
}

#[test]
fn a_submitted_plan_is_also_a_checkpoint_in_the_same_transaction() {
    let mut f = Fixture::new();
    let s = f.plan_session();
    let turn = f.turn(&s);
    let branch = path(&["root", "a"]);
    let a = f
        .engine()
        .submit_plan(&ctx(&s, &turn, &"c".into()), &input(V1), Some(&branch))
        .unwrap();
    let (checkpoint, text) = f.store().latest_checkpoint(&s, &branch).unwrap().unwrap();
    assert_eq!(
        (checkpoint.revision, checkpoint.source, text.as_str()),
        (1, CheckpointSource::Submit, V1)
    );
    assert_eq!(checkpoint.sha256, a.artifact_sha256);
    // An empty branch is refused before any artifact is written.
    let before = f.artifact_files();
    let err = f
        .engine()
        .submit_plan(&ctx(&s, &turn, &"c2".into()), &input(V2), Some(&[]))
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::CheckpointBranchInvalid);
    assert_eq!(f.artifact_files(), before);
}

#[test]
fn leaving_plan_or_a_newer_checkpoint_voids_a_pending_publication() {
    let mut f = Fixture::new();
    let s = f.plan_session();
    draft(&mut f, &s, &["root", "a"], V1, 0);
    let p = pending(
        f.engine()
            .start_publication(&s, &path(&["root", "a"]), Overwrite::Refuse)
            .unwrap(),
    );
    // The agent finalizes once more: the approval was for the older bytes.
    draft(&mut f, &s, &["root", "a", "b"], V2, 1);
    let revoked = f.store().publication(&p.id).unwrap();
    assert_eq!(
        (revoked.status, revoked.error_code),
        (
            PublicationStatus::Revoked,
            Some(ErrorCode::CheckpointChanged)
        )
    );
    assert_eq!(
        f.resolve_publication(&p.id, true).unwrap_err().code(),
        ErrorCode::PublicationStateInvalid
    );
    // Exit without publishing revokes what is pending; nothing is written later.
    let p2 = pending(
        f.engine()
            .start_publication(&s, &path(&["root", "a", "b"]), Overwrite::Refuse)
            .unwrap(),
    );
    assert_eq!(f.engine().exit_plan(&s).unwrap(), vec![p2.id.clone()]);
    let after = f.store().publication(&p2.id).unwrap();
    assert_eq!(
        (after.status, after.error_code),
        (PublicationStatus::Revoked, Some(ErrorCode::PlanExited))
    );
    assert!(!f.workspace_root().join(".pi/plans").exists());
    // Re-entering Plan is not blocked by the old approval.
    f.store().set_mode(&s, planhost_core::Mode::Plan).unwrap();
    pending(
        f.engine()
            .start_publication(&s, &path(&["root", "a", "b"]), Overwrite::Refuse)
            .unwrap(),
    );
}

#[test]
fn a_person_can_resolve_a_conflict_by_overwriting_what_is_on_disk_now() {
    let mut f = Fixture::new();
    let (s, first) = published(&mut f);
    let file = f.workspace_root().join(&first.relative_path);
    fs_err::write(&file, "edited by a person\n").unwrap();
    draft(&mut f, &s, &["root", "a", "b"], V2, 1);
    let b = path(&["root", "a", "b"]);
    assert_eq!(
        f.engine()
            .start_publication(&s, &b, Overwrite::Refuse)
            .unwrap_err()
            .code(),
        ErrorCode::PublishConflict
    );
    let p = pending(
        f.engine()
            .start_publication(&s, &b, Overwrite::DiskAsBase)
            .unwrap(),
    );
    assert_eq!(
        p.base_sha256.as_deref(),
        Some(planhost_core::sha256_hex(b"edited by a person\n").as_str())
    );
    // If the file changes again before the approval, the overwrite is still refused.
    fs_err::write(&file, "edited twice\n").unwrap();
    assert!(matches!(
        f.resolve_publication(&p.id, true).unwrap(),
        PublishOutcome::Conflict(_)
    ));
    assert_eq!(fs_err::read_to_string(&file).unwrap(), "edited twice\n");
    let p = pending(
        f.engine()
            .start_publication(&s, &b, Overwrite::DiskAsBase)
            .unwrap(),
    );
    completed(f.resolve_publication(&p.id, true).unwrap());
    assert_eq!(fs_err::read(&file).unwrap(), V2.as_bytes());
    assert_eq!(
        f.engine().plan_status(&s, &b).unwrap().publication,
        PublicationState::Synced
    );
}

#[test]
fn a_symlinked_plans_directory_reads_as_a_conflict_not_an_error() {
    let mut f = Fixture::new();
    let (s, _) = published(&mut f);
    let root = f.workspace_root();
    let outside = tempfile::tempdir().unwrap();
    fs_err::rename(root.join(".pi/plans"), outside.path().join("moved")).unwrap();
    fs_err::os::unix::fs::symlink(outside.path().join("moved"), root.join(".pi/plans")).unwrap();
    let b = path(&["root", "a"]);
    assert_eq!(
        f.engine().plan_status(&s, &b).unwrap().publication,
        PublicationState::Conflict
    );
    assert!(matches!(
        f.engine().exit_offer(&s, &b).unwrap(),
        ExitOffer::Choose { .. }
    ));
}

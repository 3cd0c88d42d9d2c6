//! First publication names in v2: `<slug>-<yyyymmdd-hhmmss>.md`, then `-2`, `-3`, … in the same
//! second — never a later stamp, never an error while a number is free.

use std::collections::BTreeSet;

use planhost_core::{ErrorCode, Interactivity, Mode, PublicationStatus};

use super::fixture::*;
use super::plans::{V1, completed, draft, path, pending};
use crate::publish::{Overwrite, PublishOutcome};

/// A new session of the fixture's workspace, in Plan with `V1` checkpointed on root → a.
fn planning(f: &mut Fixture) -> planhost_core::SessionId {
    let s = f.session(Interactivity::Interactive);
    f.store().set_mode(&s, Mode::Plan).unwrap();
    draft(f, &s, &["root", "a"], V1, 0);
    s
}

/// Checkpoint, start, approve: the first publication's path.
fn publish_first(f: &mut Fixture) -> String {
    let s = planning(f);
    let p = pending(
        f.engine()
            .start_publication(&s, &path(&["root", "a"]), Overwrite::Refuse)
            .unwrap(),
    );
    let done = completed(f.resolve_publication(&p.id, true).unwrap());
    assert_eq!(done.relative_path, p.relative_path);
    done.relative_path
}

#[test]
fn a_name_taken_in_the_same_second_counts_up() {
    let mut f = Fixture::new();
    let first = publish_first(&mut f);
    assert_eq!(first, format!(".pi/plans/add-login-{T0_STAMP}.md"));
    f.clock.advance_ms(500);
    let second = publish_first(&mut f);
    assert_eq!(second, format!(".pi/plans/add-login-{T0_STAMP}-2.md"));
    f.clock.advance_ms(499);
    let third = publish_first(&mut f);
    assert_eq!(third, format!(".pi/plans/add-login-{T0_STAMP}-3.md"));
    // The next second has a stamp of its own.
    f.clock.advance_ms(1);
    let fourth = publish_first(&mut f);
    assert_eq!(fourth, ".pi/plans/add-login-20251130-000001.md");
    for p in [&first, &second, &third, &fourth] {
        assert_eq!(read(&f.workspace_root(), p), V1.as_bytes(), "{p}");
    }
}

#[test]
fn two_first_publications_racing_for_one_name_both_land() {
    let mut f = Fixture::new();
    let a = planning(&mut f);
    let b = planning(&mut f);
    let branch = path(&["root", "a"]);
    // Both are asked before either is written: both bind the same free name.
    let pa = pending(
        f.engine()
            .start_publication(&a, &branch, Overwrite::Refuse)
            .unwrap(),
    );
    let pb = pending(
        f.engine()
            .start_publication(&b, &branch, Overwrite::Refuse)
            .unwrap(),
    );
    let name = format!(".pi/plans/add-login-{T0_STAMP}.md");
    assert_eq!((&pa.relative_path, &pb.relative_path), (&name, &name));
    completed(f.resolve_publication(&pa.id, true).unwrap());
    // The loser is revoked and asked again under the next number; nothing is overwritten.
    let PublishOutcome::Reapprove { revoked, next } = f.resolve_publication(&pb.id, true).unwrap()
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
    assert_eq!(
        next.relative_path,
        format!(".pi/plans/add-login-{T0_STAMP}-2.md")
    );
    completed(f.resolve_publication(&next.id, true).unwrap());
    let root = f.workspace_root();
    assert_eq!(read(&root, &name), V1.as_bytes());
    assert_eq!(read(&root, &next.relative_path), V1.as_bytes());
}

#[test]
fn many_quick_first_publications_in_one_workspace_all_get_distinct_names() {
    const N: usize = 150;
    let mut f = Fixture::new();
    let mut names = Vec::with_capacity(N);
    for _ in 0..N {
        // The clock never moves: every one of them is published in the same second.
        names.push(publish_first(&mut f));
    }
    let distinct: BTreeSet<&String> = names.iter().collect();
    assert_eq!(distinct.len(), N, "every name is distinct");
    let expected: Vec<String> = (1..=N)
        .map(|i| match i {
            1 => format!(".pi/plans/add-login-{T0_STAMP}.md"),
            n => format!(".pi/plans/add-login-{T0_STAMP}-{n}.md"),
        })
        .collect();
    assert_eq!(names, expected);
    let on_disk = fs_err::read_dir(f.workspace_root().join(".pi/plans"))
        .unwrap()
        .count();
    assert_eq!(on_disk, N);
    assert_eq!(f.store().sessions().unwrap().len(), N);
}

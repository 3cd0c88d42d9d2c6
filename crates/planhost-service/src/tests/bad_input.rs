//! Every invalid request returns a typed error with a stable code and leaves the database — and
//! the workspace — exactly as they were.

use planhost_core::{
    BatchPosition, ErrorCode, ExecutionOutcome, Interactivity, Mode, PermissionMode,
    SubmitPlanInput, TargetPermissionMode, TurnOrigin,
};
use planhost_store::{Configure, SettingKey};

use super::fixture::*;

/// Runs `op` and asserts its code and that nothing changed on disk.
fn refused<T: std::fmt::Debug>(
    f: &mut Fixture,
    code: ErrorCode,
    op: impl FnOnce(&mut Fixture) -> Result<T, ErrorCode>,
) {
    let before = f.dump();
    let files = f.artifact_files();
    let result = op(f);
    assert_eq!(result.as_ref().err(), Some(&code), "{result:?}");
    assert_eq!(
        f.dump(),
        before,
        "database changed by a refused request ({code})"
    );
    assert_eq!(
        f.artifact_files(),
        files,
        "workspace changed by a refused request ({code})"
    );
}

fn code<T>(r: crate::Result<T>) -> Result<T, ErrorCode> {
    r.map_err(|e| e.code())
}

fn scode<T>(r: planhost_store::Result<T>) -> Result<T, ErrorCode> {
    r.map_err(|e| e.code())
}

#[test]
fn wrong_state_and_unknown_ids() {
    let mut f = Fixture::new();
    let agent = f.session(Interactivity::Interactive);
    let turn = f.turn(&agent);
    refused(&mut f, ErrorCode::PlanModeNotActive, |f| {
        code(
            f.engine()
                .submit_plan(&ctx(&agent, &turn, &"c".into()), &input("# p\n"), None),
        )
    });
    refused(&mut f, ErrorCode::TurnNotActive, |f| {
        scode(f.store().end_turn(&agent, &"no-such-turn".into()))
    });
    refused(&mut f, ErrorCode::TurnNotActive, |f| {
        code(f.engine().submit_plan(
            &ctx(&agent, &"other".into(), &"c".into()),
            &input("# p\n"),
            None,
        ))
    });
    refused(&mut f, ErrorCode::SessionNotFound, |f| {
        scode(f.store().set_mode(&"nope".into(), Mode::Plan))
    });
    refused(&mut f, ErrorCode::SessionNotFound, |f| {
        code(
            f.engine()
                .begin_turn(&"nope".into(), TurnOrigin::User, None),
        )
    });
    refused(&mut f, ErrorCode::ExecutionNotFound, |f| {
        code(f.engine().claim_execution(&agent, &"e".into(), None))
    });
    refused(&mut f, ErrorCode::ExecutionNotFound, |f| {
        scode(
            f.store()
                .finish_execution(&agent, &"e".into(), ExecutionOutcome::Completed),
        )
    });
    refused(&mut f, ErrorCode::PlanApprovalNotFound, |f| {
        let mut a = f_pending_shape(&agent, &turn);
        a.proposal_id = "missing".into();
        code(f.resolve(&approve(&a, None), None))
    });
}

fn f_pending_shape(
    session: &planhost_core::SessionId,
    turn: &planhost_core::TurnId,
) -> planhost_store::ApprovalRecord {
    planhost_store::ApprovalRecord {
        proposal_id: "p".into(),
        session_id: session.clone(),
        turn_id: turn.clone(),
        tool_call_id: "c".into(),
        title: String::new(),
        question: String::new(),
        status: planhost_core::ApprovalStatus::Pending,
        action: None,
        target_permission_mode: None,
        feedback: None,
        created_at: T0,
        updated_at: T0,
        expires_at: T0,
        resolved_at: None,
        error_code: None,
        resolved_by: None,
        version: 1,
        artifact_relative_path: String::new(),
        artifact_sha256: String::new(),
        artifact_size_bytes: 0,
        execution_id: None,
        execution_state: None,
        execution_turn_id: None,
    }
}

type Mutation = fn(&mut planhost_core::ResolveRequest);

#[test]
fn stale_identity_changes_nothing() {
    let mut f = Fixture::new();
    let a = f.pending();
    let cases: [(&str, Mutation); 5] = [
        ("sessionId", |r| r.session_id = "other".into()),
        ("turnId", |r| r.turn_id = "other".into()),
        ("toolCallId", |r| r.tool_call_id = "other".into()),
        ("version", |r| r.version = Some(7)),
        ("artifactSha256", |r| {
            r.artifact_sha256 = Some("0".repeat(64));
        }),
    ];
    for (field, mutate) in cases {
        let mut request = approve(&a, None);
        mutate(&mut request);
        refused(&mut f, ErrorCode::PlanApprovalStale, |f| {
            code(f.resolve(&request, None))
        });
        let _ = field;
    }
    let mut bad_reject = reject(&a);
    bad_reject.target_permission_mode = Some(TargetPermissionMode::Auto);
    refused(&mut f, ErrorCode::PlanResolveInvalid, |f| {
        code(f.resolve(&bad_reject, None))
    });
    // Feedback is a note with a rejection; an approve that carries one is refused (it would
    // silently be dropped otherwise), and nothing changes.
    refused(&mut f, ErrorCode::PlanResolveInvalid, |f| {
        code(f.resolve(&approve(&a, None), Some("also add tests")))
    });
    // The genuine request still works afterwards.
    f.resolve(&approve(&a, None), None).unwrap();
}

#[test]
fn second_pending_approval_and_batch_rules() {
    let mut f = Fixture::new();
    let session = f.plan_session();
    let turn = f.turn(&session);
    let shared = BatchPosition { index: 0, size: 2 };
    refused(&mut f, ErrorCode::ToolNotAloneInBatch, |f| {
        let mut c = ctx(&session, &turn, &"c".into());
        c.batch = shared;
        code(f.engine().submit_plan(&c, &input("# p\n"), None))
    });
    refused(&mut f, ErrorCode::ToolNotAloneInBatch, |f| {
        scode(f.store().enter_plan(&session, &turn, &"e".into(), shared))
    });
    f.submit(&session, &turn, "# first\n").unwrap();
    refused(&mut f, ErrorCode::PlanApprovalAlreadyPending, |f| {
        code(f.engine().submit_plan(
            &ctx(&session, &turn, &"c2".into()),
            &input("# second\n"),
            None,
        ))
    });
}

#[test]
fn configuration_during_a_turn_or_approval() {
    let mut f = Fixture::new();
    let session = f.plan_session();
    let turn = f.turn(&session);
    let change = Configure {
        permission_mode: Some(PermissionMode::Auto),
        ..Configure::default()
    };
    refused(&mut f, ErrorCode::SessionNotIdle, |f| {
        scode(f.store().configure(&session, &change))
    });
    refused(&mut f, ErrorCode::SessionNotIdle, |f| {
        scode(f.store().set_mode(&session, Mode::Agent))
    });
    f.submit(&session, &turn, "# p\n").unwrap();
    f.store().end_turn(&session, &turn).unwrap();
    refused(&mut f, ErrorCode::SessionNotIdle, |f| {
        scode(f.store().configure(&session, &change))
    });
    refused(&mut f, ErrorCode::SessionNotIdle, |f| {
        scode(f.store().set_mode(&session, Mode::Agent))
    });
    // An unknown shell id cannot reach the store: `Configure` holds a `ShellId`, and the wire
    // refuses one it does not know when it parses the params (`it errors`, "zsh").
    refused(&mut f, ErrorCode::SettingsInvalid, |f| {
        scode(
            f.store()
                .set_setting(SettingKey::DefaultPermissionMode, Some("inherit")),
        )
    });
    refused(&mut f, ErrorCode::SettingsInvalid, |f| {
        scode(
            f.store()
                .set_setting(SettingKey::DefaultShell, Some("fish")),
        )
    });
}

#[test]
fn bad_plan_input() {
    let mut f = Fixture::new();
    let session = f.plan_session();
    let turn = f.turn(&session);
    let with = |title: &str, markdown: &str| SubmitPlanInput {
        title: title.into(),
        markdown: markdown.into(),
        question: "q".into(),
    };
    let huge_title = "t".repeat(201);
    let huge_plan = "x".repeat(planhost_core::MAX_PLAN_BYTES + 1);
    for (bad, expected) in [
        (with("", "# p\n"), ErrorCode::PlanTitleInvalid),
        (with("   ", "# p\n"), ErrorCode::PlanTitleInvalid),
        (with(&huge_title, "# p\n"), ErrorCode::PlanTitleInvalid),
        (with("t", ""), ErrorCode::PlanMarkdownInvalid),
        (with("t", &huge_plan), ErrorCode::PlanMarkdownInvalid),
    ] {
        refused(&mut f, expected, |f| {
            code(
                f.engine()
                    .submit_plan(&ctx(&session, &turn, &"c".into()), &bad, None),
            )
        });
    }
    assert!(!f.workspace_root().join(".pi").exists());
}

#[test]
fn workspace_paths_that_escape_or_do_not_exist() {
    let mut f = Fixture::new();
    refused(&mut f, ErrorCode::WorkspaceInvalid, |f| {
        code(f.engine().open_session(
            std::path::Path::new("relative/root"),
            None,
            Interactivity::Interactive,
            None,
            None,
        ))
    });
    refused(&mut f, ErrorCode::WorkspaceInvalid, |f| {
        code(f.engine().open_session(
            std::path::Path::new("/definitely/not/here"),
            None,
            Interactivity::Interactive,
            None,
            None,
        ))
    });
    let file = f.workspace_root().join("file.txt");
    fs_err::write(&file, "x").unwrap();
    refused(&mut f, ErrorCode::WorkspaceInvalid, |f| {
        code(
            f.engine()
                .open_session(&file, None, Interactivity::Interactive, None, None),
        )
    });
    fs_err::remove_file(&file).unwrap();

    // A reopened external id must name the same root.
    let other = tempfile::tempdir().unwrap();
    let root = f.workspace_root();
    f.engine()
        .open_session(&root, Some("pi-1"), Interactivity::Interactive, None, None)
        .unwrap();
    refused(&mut f, ErrorCode::SessionWorkspaceMismatch, |f| {
        code(f.engine().open_session(
            other.path(),
            Some("pi-1"),
            Interactivity::Interactive,
            None,
            None,
        ))
    });
}

#[test]
fn artifact_path_failures_create_no_approval_row() {
    let mut f = Fixture::new();
    let session = f.plan_session();
    let turn = f.turn(&session);
    let root = f.workspace_root();
    let outside = tempfile::tempdir().unwrap();

    // `.pi` is a symlink that leads out of the workspace.
    fs_err::os::unix::fs::symlink(outside.path(), root.join(".pi")).unwrap();
    refused(&mut f, ErrorCode::PlanArtifactSymlink, |f| {
        code(
            f.engine()
                .submit_plan(&ctx(&session, &turn, &"c".into()), &input("# p\n"), None),
        )
    });
    assert_eq!(
        fs_err::read_dir(outside.path()).unwrap().count(),
        0,
        "nothing written through the link"
    );
    fs_err::remove_file(root.join(".pi")).unwrap();

    // `.pi/plan` is a symlink.
    fs_err::create_dir(root.join(".pi")).unwrap();
    fs_err::os::unix::fs::symlink(outside.path(), root.join(".pi/plan")).unwrap();
    refused(&mut f, ErrorCode::PlanArtifactSymlink, |f| {
        code(
            f.engine()
                .submit_plan(&ctx(&session, &turn, &"c".into()), &input("# p\n"), None),
        )
    });
    fs_err::remove_file(root.join(".pi/plan")).unwrap();

    // `.pi/plan` is a regular file.
    fs_err::write(root.join(".pi/plan"), "not a dir").unwrap();
    refused(&mut f, ErrorCode::PlanArtifactPathInvalid, |f| {
        code(
            f.engine()
                .submit_plan(&ctx(&session, &turn, &"c".into()), &input("# p\n"), None),
        )
    });
    fs_err::remove_file(root.join(".pi/plan")).unwrap();

    // Once the path is sound, the same request succeeds.
    f.submit(&session, &turn, "# p\n").unwrap();
}

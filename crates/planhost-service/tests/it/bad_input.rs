//! Every invalid request returns a typed error with a stable code and leaves the database — and
//! the workspace — exactly as they were.

use planhost_core::{
    BatchPosition, ExecutionOutcome, Interactivity, Mode, PermissionMode, SubmitPlanInput,
    TargetPermissionMode, TurnOrigin,
};
use planhost_store::{Configure, SettingKey};

use crate::fixture::*;

/// Runs `op` and asserts its code and that nothing changed on disk.
fn refused<T: std::fmt::Debug>(
    f: &mut Fixture,
    code: &str,
    op: impl FnOnce(&mut Fixture) -> Result<T, String>,
) {
    let before = f.dump();
    let files = f.artifact_files();
    let result = op(f);
    assert_eq!(
        result.as_ref().map_err(String::as_str).err(),
        Some(code),
        "{result:?}"
    );
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

fn code<T>(r: planhost_host::Result<T>) -> Result<T, String> {
    r.map_err(|e| e.code().to_owned())
}

fn scode<T>(r: planhost_store::Result<T>) -> Result<T, String> {
    r.map_err(|e| e.code().to_owned())
}

#[test]
fn wrong_state_and_unknown_ids() {
    let mut f = Fixture::new();
    let agent = f.session(Interactivity::Interactive);
    let turn = f.turn(&agent);
    refused(&mut f, "PLAN_MODE_NOT_ACTIVE", |f| {
        code(
            f.host()
                .submit_plan(&ctx(&agent, &turn, "c"), &input("# p\n")),
        )
    });
    refused(&mut f, "TURN_NOT_ACTIVE", |f| {
        scode(f.store().end_turn(&agent, "no-such-turn"))
    });
    refused(&mut f, "TURN_NOT_ACTIVE", |f| {
        code(
            f.host()
                .submit_plan(&ctx(&agent, "other", "c"), &input("# p\n")),
        )
    });
    refused(&mut f, "SESSION_NOT_FOUND", |f| {
        scode(f.store().set_mode("nope", Mode::Plan))
    });
    refused(&mut f, "SESSION_NOT_FOUND", |f| {
        code(f.host().begin_turn("nope", TurnOrigin::User, None))
    });
    refused(&mut f, "EXECUTION_NOT_FOUND", |f| {
        code(f.host().claim_execution(&agent, "e", None))
    });
    refused(&mut f, "EXECUTION_NOT_FOUND", |f| {
        scode(
            f.store()
                .finish_execution(&agent, "e", ExecutionOutcome::Completed),
        )
    });
    refused(&mut f, "PLAN_APPROVAL_NOT_FOUND", |f| {
        let mut a = f_pending_shape(&agent, &turn);
        a.proposal_id = "missing".into();
        code(f.host().resolve(&approve(&a, None), None))
    });
}

fn f_pending_shape(session: &str, turn: &str) -> planhost_store::ApprovalRecord {
    planhost_store::ApprovalRecord {
        proposal_id: "p".into(),
        session_id: session.into(),
        turn_id: turn.into(),
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
            r.artifact_sha256 = Some("0".repeat(64))
        }),
    ];
    for (field, mutate) in cases {
        let mut request = approve(&a, None);
        mutate(&mut request);
        refused(&mut f, "PLAN_APPROVAL_STALE", |f| {
            code(f.host().resolve(&request, None))
        });
        let _ = field;
    }
    let mut bad_reject = reject(&a);
    bad_reject.target_permission_mode = Some(TargetPermissionMode::Auto);
    refused(&mut f, "PLAN_RESOLVE_INVALID", |f| {
        code(f.host().resolve(&bad_reject, None))
    });
    // The genuine request still works afterwards.
    f.host().resolve(&approve(&a, None), None).unwrap();
}

#[test]
fn second_pending_approval_and_batch_rules() {
    let mut f = Fixture::new();
    let session = f.plan_session();
    let turn = f.turn(&session);
    let shared = BatchPosition { index: 0, size: 2 };
    refused(&mut f, "TOOL_NOT_ALONE_IN_BATCH", |f| {
        let mut c = ctx(&session, &turn, "c");
        c.batch = shared;
        code(f.host().submit_plan(&c, &input("# p\n")))
    });
    refused(&mut f, "TOOL_NOT_ALONE_IN_BATCH", |f| {
        scode(f.store().enter_plan(&session, &turn, "e", shared))
    });
    f.submit(&session, &turn, "# first\n").unwrap();
    refused(&mut f, "PLAN_APPROVAL_ALREADY_PENDING", |f| {
        code(
            f.host()
                .submit_plan(&ctx(&session, &turn, "c2"), &input("# second\n")),
        )
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
    refused(&mut f, "SESSION_NOT_IDLE", |f| {
        scode(f.store().configure(&session, &change))
    });
    refused(&mut f, "SESSION_NOT_IDLE", |f| {
        scode(f.store().set_mode(&session, Mode::Agent))
    });
    f.submit(&session, &turn, "# p\n").unwrap();
    f.store().end_turn(&session, &turn).unwrap();
    refused(&mut f, "SESSION_NOT_IDLE", |f| {
        scode(f.store().configure(&session, &change))
    });
    refused(&mut f, "SESSION_NOT_IDLE", |f| {
        scode(f.store().set_mode(&session, Mode::Agent))
    });
    let shell = Configure {
        shell_id: Some(Some("zsh".into())),
        ..Configure::default()
    };
    let idle = f.session(Interactivity::Interactive);
    refused(&mut f, "SETTINGS_INVALID", |f| {
        scode(f.store().configure(&idle, &shell))
    });
    refused(&mut f, "SETTINGS_INVALID", |f| {
        scode(
            f.store()
                .set_setting(SettingKey::DefaultPermissionMode, Some("inherit")),
        )
    });
    refused(&mut f, "SETTINGS_INVALID", |f| {
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
        (with("", "# p\n"), "PLAN_TITLE_INVALID"),
        (with("   ", "# p\n"), "PLAN_TITLE_INVALID"),
        (with(&huge_title, "# p\n"), "PLAN_TITLE_INVALID"),
        (with("t", ""), "PLAN_MARKDOWN_INVALID"),
        (with("t", &huge_plan), "PLAN_MARKDOWN_INVALID"),
    ] {
        refused(&mut f, expected, |f| {
            code(f.host().submit_plan(&ctx(&session, &turn, "c"), &bad))
        });
    }
    assert!(!f.workspace_root().join(".pi").exists());
}

#[test]
fn workspace_paths_that_escape_or_do_not_exist() {
    let mut f = Fixture::new();
    refused(&mut f, "WORKSPACE_INVALID", |f| {
        code(f.host().open_session(
            std::path::Path::new("relative/root"),
            None,
            Interactivity::Interactive,
        ))
    });
    refused(&mut f, "WORKSPACE_INVALID", |f| {
        code(f.host().open_session(
            std::path::Path::new("/definitely/not/here"),
            None,
            Interactivity::Interactive,
        ))
    });
    let file = f.workspace_root().join("file.txt");
    std::fs::write(&file, "x").unwrap();
    refused(&mut f, "WORKSPACE_INVALID", |f| {
        code(
            f.host()
                .open_session(&file, None, Interactivity::Interactive),
        )
    });
    std::fs::remove_file(&file).unwrap();

    // A reopened external id must name the same root.
    let other = tempfile::tempdir().unwrap();
    let root = f.workspace_root();
    f.host()
        .open_session(&root, Some("pi-1"), Interactivity::Interactive)
        .unwrap();
    refused(&mut f, "SESSION_WORKSPACE_MISMATCH", |f| {
        code(
            f.host()
                .open_session(other.path(), Some("pi-1"), Interactivity::Interactive),
        )
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
    std::os::unix::fs::symlink(outside.path(), root.join(".pi")).unwrap();
    refused(&mut f, "PLAN_ARTIFACT_SYMLINK", |f| {
        code(
            f.host()
                .submit_plan(&ctx(&session, &turn, "c"), &input("# p\n")),
        )
    });
    assert_eq!(
        std::fs::read_dir(outside.path()).unwrap().count(),
        0,
        "nothing written through the link"
    );
    std::fs::remove_file(root.join(".pi")).unwrap();

    // `.pi/plan` is a symlink.
    std::fs::create_dir(root.join(".pi")).unwrap();
    std::os::unix::fs::symlink(outside.path(), root.join(".pi/plan")).unwrap();
    refused(&mut f, "PLAN_ARTIFACT_SYMLINK", |f| {
        code(
            f.host()
                .submit_plan(&ctx(&session, &turn, "c"), &input("# p\n")),
        )
    });
    std::fs::remove_file(root.join(".pi/plan")).unwrap();

    // `.pi/plan` is a regular file.
    std::fs::write(root.join(".pi/plan"), "not a dir").unwrap();
    refused(&mut f, "PLAN_ARTIFACT_PATH_INVALID", |f| {
        code(
            f.host()
                .submit_plan(&ctx(&session, &turn, "c"), &input("# p\n")),
        )
    });
    std::fs::remove_file(root.join(".pi/plan")).unwrap();

    // Once the path is sound, the same request succeeds.
    f.submit(&session, &turn, "# p\n").unwrap();
}

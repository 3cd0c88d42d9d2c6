//! Write and Edit refuse the host's plan directories, however the path is spelled.

use planhost_tools::{EditRequest, ReadRequest, WriteRequest, edit, read, write};

use crate::{listing, workspace};

const ARTIFACT: &[u8] = b"# Plan\n\nreviewed bytes\n";

fn write_req(path: &str) -> WriteRequest {
    WriteRequest {
        path: path.into(),
        content: "overwritten".into(),
    }
}

fn edit_req(path: &str) -> EditRequest {
    EditRequest {
        path: path.into(),
        old_string: "reviewed".into(),
        new_string: "tampered".into(),
        replace_all: false,
    }
}

/// A workspace holding one artifact, one published plan and an ordinary directory `a`.
fn plan_workspace() -> (tempfile::TempDir, planhost_tools::ToolContext) {
    workspace(&[
        (".pi/plan/p.md", ARTIFACT),
        (".pi/plans/p.md", ARTIFACT),
        ("a/keep.txt", b"k"),
    ])
}

fn spellings(root: &std::path::Path) -> Vec<String> {
    let abs = root.display();
    let mut out = Vec::new();
    for dir in ["plan", "plans"] {
        out.extend([
            format!(".pi/{dir}/p.md"),
            format!("./.pi//{dir}/p.md"),
            format!("a/../.pi/{dir}/p.md"),
            format!("missing/../.pi/./{dir}/p.md"),
            format!(".pi/{dir}/new.md"),
            format!(".pi/{dir}/deep/er/new.md"),
            format!("{abs}/.pi/{dir}/p.md"),
            format!(".pi/{dir}"),
        ]);
    }
    out
}

#[test]
fn write_refuses_every_spelling_and_writes_nothing() {
    let (tmp, ctx) = plan_workspace();
    let before = listing(tmp.path());
    for path in spellings(tmp.path()) {
        let err = write(&ctx, &write_req(&path)).unwrap_err();
        assert_eq!(err.code().as_str(), "TOOL_PATH_RESERVED", "{path}");
    }
    assert_eq!(listing(tmp.path()), before);
    for dir in ["plan", "plans"] {
        let p = tmp.path().join(format!(".pi/{dir}/p.md"));
        assert_eq!(fs_err::read(p).unwrap(), ARTIFACT);
    }
}

#[test]
fn edit_refuses_every_spelling_and_changes_nothing() {
    let (tmp, ctx) = plan_workspace();
    let before = listing(tmp.path());
    for path in spellings(tmp.path()) {
        let err = edit(&ctx, &edit_req(&path)).unwrap_err();
        assert_eq!(err.code().as_str(), "TOOL_PATH_RESERVED", "{path}");
    }
    assert_eq!(listing(tmp.path()), before);
    for dir in ["plan", "plans"] {
        let p = tmp.path().join(format!(".pi/{dir}/p.md"));
        assert_eq!(fs_err::read(p).unwrap(), ARTIFACT);
    }
}

#[test]
fn a_symlink_into_the_plan_directory_is_refused() {
    let (tmp, ctx) = plan_workspace();
    fs_err::os::unix::fs::symlink(tmp.path().join(".pi/plan"), tmp.path().join("link")).unwrap();
    let err = write(&ctx, &write_req("link/p.md")).unwrap_err();
    assert_eq!(err.code().as_str(), "TOOL_PATH_RESERVED");
    let err = edit(&ctx, &edit_req("link/p.md")).unwrap_err();
    assert_eq!(err.code().as_str(), "TOOL_PATH_RESERVED");
    assert_eq!(
        fs_err::read(tmp.path().join(".pi/plan/p.md")).unwrap(),
        ARTIFACT
    );
}

#[test]
fn neighbours_and_case_variants_are_ordinary_paths() {
    let (tmp, ctx) = plan_workspace();
    // Linux filesystems are case-sensitive: these are different directories.
    for path in [
        ".pi/planning.md",
        ".pi/plan.md",
        ".pi/plansx/p.md",
        ".PI/plan/p.md",
        ".pi/Plan/p.md",
        ".pi/PLANS/p.md",
        "docs/.pi/plan/p.md",
    ] {
        write(&ctx, &write_req(path)).unwrap();
        assert_eq!(
            fs_err::read(tmp.path().join(path)).unwrap(),
            b"overwritten",
            "{path}"
        );
    }
}

#[test]
fn reads_of_plan_files_stay_allowed() {
    let (_tmp, ctx) = plan_workspace();
    for path in [".pi/plan/p.md", "./.pi//plans/p.md"] {
        let r = read(
            &ctx,
            &ReadRequest {
                path: path.into(),
                offset: None,
                limit: None,
            },
        )
        .unwrap();
        assert_eq!(r.total_lines, 3, "{path}");
    }
}

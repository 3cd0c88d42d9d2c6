use planhost_tools::{GlobRequest, glob};
use pretty_assertions::assert_eq;

use crate::workspace;

fn req(pattern: &str) -> GlobRequest {
    GlobRequest {
        pattern: pattern.into(),
        path: None,
        limit: None,
    }
}

const TREE: &[(&str, &[u8])] = &[
    ("src/lib.rs", b""),
    ("src/deep/mod.rs", b""),
    ("src/notes.md", b""),
    ("build.rs", b""),
    ("target/debug/gen.rs", b""),
    ("ignored.rs", b""),
    (".hidden/secret.rs", b""),
    (".gitignore", b"target/\nignored.rs\n"),
];

#[test]
fn matches_with_gitignore_and_hidden_filters() {
    let (_tmp, ctx) = workspace(TREE);
    let r = glob(&ctx, &req("**/*.rs")).unwrap();
    assert_eq!(r.files, ["build.rs", "src/deep/mod.rs", "src/lib.rs"]);
    assert!(!r.truncated);
}

#[test]
fn star_does_not_cross_directories() {
    let (_tmp, ctx) = workspace(TREE);
    assert_eq!(glob(&ctx, &req("*.rs")).unwrap().files, ["build.rs"]);
}

#[test]
fn path_scopes_the_search_and_results_stay_workspace_relative() {
    let (_tmp, ctx) = workspace(TREE);
    let mut r = req("*.rs");
    r.path = Some("src".into());
    assert_eq!(glob(&ctx, &r).unwrap().files, ["src/lib.rs"]);
}

#[test]
fn limit_truncates_in_path_order() {
    let (_tmp, ctx) = workspace(TREE);
    let mut r = req("**/*.rs");
    r.limit = Some(2);
    let out = glob(&ctx, &r).unwrap();
    assert_eq!(out.files, ["build.rs", "src/deep/mod.rs"]);
    assert!(out.truncated);
}

#[test]
fn symlinks_are_not_followed_out_of_the_workspace() {
    let (tmp, ctx) = workspace(&[("a.rs", b"")]);
    let other = tempfile::tempdir().unwrap();
    fs_err::write(other.path().join("outside.rs"), b"").unwrap();
    fs_err::os::unix::fs::symlink(other.path(), tmp.path().join("link")).unwrap();
    assert_eq!(glob(&ctx, &req("**/*.rs")).unwrap().files, ["a.rs"]);
}

/// Issue 10, item 4: a directory swapped for a symlink mid-walk must be skipped, never listed
/// through. The pattern matches the outside names, so any leak shows up in `files`.
#[test]
fn glob_never_lists_names_outside_the_workspace_during_a_swap_race() {
    let mut saw_inside = 0u64;
    let (leak, probes) = crate::swap_race(|ctx| {
        // The swap may make the walk miss `sub`, or fail outright; neither lists anything.
        let files = glob(ctx, &req("**/*")).map(|r| r.files).unwrap_or_default();
        if files.iter().any(|f| f.ends_with("/inside.txt")) {
            saw_inside += 1;
        }
        files
            .into_iter()
            .find(|f| f.contains(crate::OUTSIDE_MARKER))
    });
    assert_eq!(
        leak, None,
        "Glob listed an outside name after {probes} probes"
    );
    // The walk did enter the swapped directory while it was real (as `sub` or as `link`).
    assert!(
        saw_inside > 0,
        "no probe of {probes} listed the inside file"
    );
}

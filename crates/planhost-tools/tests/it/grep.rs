use planhost_tools::{FileCount, GrepLine, GrepMode, GrepOutput, GrepRequest, LineKind, grep};
use pretty_assertions::assert_eq;

use crate::workspace;

fn req(pattern: &str, mode: GrepMode) -> GrepRequest {
    GrepRequest {
        pattern: pattern.into(),
        path: None,
        glob: None,
        mode,
        context: None,
        context_before: None,
        context_after: None,
        case_insensitive: false,
        limit: None,
    }
}

const TREE: &[(&str, &[u8])] = &[
    ("a.txt", b"one\ntwo needle\nthree\nfour\nfive needle\nsix\n"),
    ("b/c.rs", b"fn needle() {}\n"),
    ("b/d.rs", b"nothing here\n"),
    ("ignored/e.txt", b"needle\n"),
    ("bin.dat", b"needle\0binary"),
    (".gitignore", b"ignored/\n"),
];

fn line(path: &str, n: u64, kind: LineKind, text: &str) -> GrepLine {
    GrepLine {
        path: path.into(),
        line_number: n,
        kind,
        text: text.into(),
    }
}

#[test]
fn files_mode_respects_gitignore_and_skips_binary() {
    let (_tmp, ctx) = workspace(TREE);
    let r = grep(&ctx, &req("needle", GrepMode::Files)).unwrap();
    assert_eq!(
        r.output,
        GrepOutput::Files {
            files: vec!["a.txt".into(), "b/c.rs".into()]
        }
    );
    assert!(!r.truncated);
}

#[test]
fn count_mode_counts_matching_lines() {
    let (_tmp, ctx) = workspace(TREE);
    let r = grep(&ctx, &req("needle", GrepMode::Count)).unwrap();
    let expected = vec![
        FileCount {
            path: "a.txt".into(),
            count: 2,
        },
        FileCount {
            path: "b/c.rs".into(),
            count: 1,
        },
    ];
    assert_eq!(r.output, GrepOutput::Count { counts: expected });
}

#[test]
fn content_mode_with_context() {
    let (_tmp, ctx) = workspace(TREE);
    let mut r = req("needle", GrepMode::Content);
    r.path = Some("a.txt".into());
    r.context_before = Some(1);
    r.context_after = Some(0);
    let out = grep(&ctx, &r).unwrap();
    let expected = vec![
        line("a.txt", 1, LineKind::Context, "one"),
        line("a.txt", 2, LineKind::Match, "two needle"),
        line("a.txt", 4, LineKind::Context, "four"),
        line("a.txt", 5, LineKind::Match, "five needle"),
    ];
    assert_eq!(out.output, GrepOutput::Content { lines: expected });

    r.context_before = None;
    r.context_after = None;
    r.context = Some(1);
    let GrepOutput::Content { lines } = grep(&ctx, &r).unwrap().output else {
        panic!("content mode returns lines");
    };
    let numbers: Vec<u64> = lines.iter().map(|l| l.line_number).collect();
    assert_eq!(numbers, [1, 2, 3, 4, 5, 6]);
}

#[test]
fn case_insensitive_and_glob_filter() {
    let (_tmp, ctx) = workspace(TREE);
    let mut r = req("NEEDLE", GrepMode::Files);
    assert_eq!(
        grep(&ctx, &r).unwrap().output,
        GrepOutput::Files { files: vec![] }
    );
    r.case_insensitive = true;
    r.glob = Some("*.rs".into());
    assert_eq!(
        grep(&ctx, &r).unwrap().output,
        GrepOutput::Files {
            files: vec!["b/c.rs".into()]
        }
    );
}

#[test]
fn limit_truncates_deterministically() {
    let (_tmp, ctx) = workspace(TREE);
    let mut r = req("needle", GrepMode::Content);
    r.limit = Some(2);
    let out = grep(&ctx, &r).unwrap();
    assert!(out.truncated);
    let expected = vec![
        line("a.txt", 2, LineKind::Match, "two needle"),
        line("a.txt", 5, LineKind::Match, "five needle"),
    ];
    assert_eq!(out.output, GrepOutput::Content { lines: expected });
    let mut f = req("needle", GrepMode::Files);
    f.limit = Some(1);
    let out = grep(&ctx, &f).unwrap();
    assert!(out.truncated);
    assert_eq!(
        out.output,
        GrepOutput::Files {
            files: vec!["a.txt".into()]
        }
    );
}

#[test]
fn symlinked_files_and_dirs_leading_out_are_not_searched() {
    let (tmp, ctx) = workspace(&[("in.txt", b"needle\n")]);
    let other = tempfile::tempdir().unwrap();
    fs_err::write(other.path().join("secret.txt"), b"needle\n").unwrap();
    fs_err::os::unix::fs::symlink(other.path(), tmp.path().join("dir-link")).unwrap();
    fs_err::os::unix::fs::symlink(
        other.path().join("secret.txt"),
        tmp.path().join("file-link"),
    )
    .unwrap();
    let r = grep(&ctx, &req("needle", GrepMode::Files)).unwrap();
    assert_eq!(
        r.output,
        GrepOutput::Files {
            files: vec!["in.txt".into()]
        }
    );
}

#[test]
fn non_utf8_names_are_skipped_and_counted() {
    use std::os::unix::ffi::OsStrExt as _;
    let (tmp, ctx) = workspace(&[("ok.txt", b"needle\n")]);
    let weird = tmp.path().join(std::ffi::OsStr::from_bytes(b"bad\xff.txt"));
    fs_err::write(weird, b"needle\n").unwrap();
    let r = grep(&ctx, &req("needle", GrepMode::Files)).unwrap();
    assert_eq!(
        r.output,
        GrepOutput::Files {
            files: vec!["ok.txt".into()]
        }
    );
    assert_eq!(r.skipped_non_utf8, 1);
}

/// The Grep side of issue 10, item 4: no file reached through a swapped-in symlink is reported.
#[test]
fn grep_never_reports_files_outside_the_workspace_during_a_swap_race() {
    let (leak, probes) = crate::swap_race(|ctx| {
        let mut r = req("needle", GrepMode::Content);
        r.limit = Some(1000);
        let Ok(out) = grep(ctx, &r) else { return None };
        let GrepOutput::Content { lines } = out.output else {
            panic!("content mode returns lines");
        };
        lines
            .into_iter()
            .find(|l| l.path.contains(crate::OUTSIDE_MARKER) || l.text.contains("outside"))
            .map(|l| format!("{}: {}", l.path, l.text))
    });
    assert_eq!(
        leak, None,
        "Grep reported outside content after {probes} probes"
    );
}

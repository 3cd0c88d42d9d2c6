//! git's options and subcommands that run a program whatever the configuration are never
//! proven read-only; the plain reads whose programs only configuration names stay proven (the
//! runner neutralises that configuration, DESIGN decision 15).

use crate::Dialect;
use crate::shell_safety::classify_command;

/// Each runs (or lets the line choose) a program, or writes, whatever the configuration says;
/// with a part of the expected reason.
const RUN_A_PROGRAM: &[(&str, &str)] = &[
    ("git -c core.pager=less log", "`git -c` sets configuration"),
    ("git -c diff.external=x diff", "`git -c`"),
    (
        "git --config-env=core.fsmonitor=X status",
        "`git --config-env`",
    ),
    ("git --config-env core.pager=X log", "`git --config-env`"),
    (
        "git --exec-path=/tmp status",
        "`git --exec-path` chooses the programs git runs",
    ),
    ("git --exec-path status", "`git --exec-path`"),
    ("git -p status", "`git -p` forces a pager program"),
    ("git --paginate log", "`git -p`"),
    (
        "git diff --ext-diff",
        "`git diff --ext-diff` runs an external diff program",
    ),
    ("git log -p --ext-diff", "--ext-diff"),
    ("git show --ext HEAD", "--ext-diff"),
    ("git stash show --ext-diff", "--ext-diff"),
    (
        "git diff --textconv a b",
        "`git diff --textconv` runs the textconv programs",
    ),
    ("git log -p --textconv", "--textconv"),
    ("git show --textc HEAD:f", "--textconv"),
    (
        "git cat-file --textconv HEAD:f",
        "`git cat-file --textconv`",
    ),
    ("git grep --textconv foo", "--textconv"),
    ("git blame --textconv f", "--textconv"),
    (
        "git cat-file --filters HEAD:f",
        "`git cat-file --filters` runs the filter programs",
    ),
    ("git cat-file --batch --filters", "--filters"),
    (
        "git log --show-signature",
        "`git log --show-signature` runs gpg",
    ),
    ("git show --show-sig HEAD", "gpg"),
    ("git log '--format=%G?'", "gpg"),
    ("git log --format=%G?", "known only when the command runs"),
    ("git log --pretty='format:%h %GS'", "gpg"),
    ("git for-each-ref --format='%(signature)'", "gpg"),
    (
        "git log --output=x",
        "`git log --output` writes into a file",
    ),
    ("git diff --out=x", "--output"),
    ("git show --output x HEAD", "--output"),
    ("git grep -O foo", "`git grep -O` runs a pager program"),
    ("git grep --open-files-in-pager=vi foo", "pager"),
    ("git log --help", "help viewer"),
    ("git status --help", "help viewer"),
    (
        "git difftool",
        "`git difftool` is not a known read-only git subcommand",
    ),
    ("git mergetool", "not a known read-only git subcommand"),
    ("git st", "not a known read-only git subcommand"),
    ("git lg -3", "not a known read-only git subcommand"),
    (
        "git ls-remote --upload-pack=x origin",
        "not a known read-only git subcommand",
    ),
    (
        "git fetch --upload-pack=x",
        "not a known read-only git subcommand",
    ),
    (
        "git archive --remote=x --exec=y HEAD",
        "not a known read-only git subcommand",
    ),
    ("git help log", "not a known read-only git subcommand"),
    ("git instaweb", "not a known read-only git subcommand"),
    ("git remote show origin", "changes remotes"),
    ("git tag -v v1", "not a known listing form"),
    ("git --git-dir=x log", "not a known read-only form"),
    ("git -C x -c core.pager=sh log", "`git -c`"),
];

/// Plain reads: their configured programs are the runner's to neutralise.
const STAY_PROVEN: &[&str] = &[
    "git status",
    "git diff",
    "git diff HEAD~1 -- src",
    "git log -p",
    "git log -p --no-textconv",
    "git show HEAD",
    "git diff --text a b",
    "git diff --no-ext-diff",
    "git log --format='%h %s'",
    "git log --output-indicator-new=+ -p",
    "git cat-file -p HEAD",
    "git blame f",
    "git grep -n foo",
    "git log -C -p",
];

#[test]
fn git_forms_that_run_a_program_are_never_proven() {
    let failures: Vec<String> = RUN_A_PROGRAM
        .iter()
        .filter_map(
            |(line, expected)| match classify_command(line, Dialect::Posix).reason() {
                None => Some(format!("{line:?}: proven read-only")),
                Some(reason) if !reason.to_string().contains(expected) => {
                    Some(format!("{line:?}: {reason} lacks {expected:?}"))
                }
                Some(_) => None,
            },
        )
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn plain_git_reads_stay_proven() {
    for line in STAY_PROVEN {
        let verdict = classify_command(line, Dialect::Posix);
        assert!(verdict.is_read_only(), "{line:?}: {verdict:?}");
    }
}

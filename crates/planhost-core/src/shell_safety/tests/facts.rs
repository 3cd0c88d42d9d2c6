//! `command_facts`: the programs a line starts and where its git runs, from the same parse as
//! the verdict.

use proptest::prelude::*;

use super::{MAY_CHANGE, READ_ONLY};
use crate::Dialect;
use crate::shell_safety::{CommandFacts, GitUse, classify_command, command_facts};

fn facts(line: &str) -> CommandFacts {
    command_facts(line, Dialect::Posix)
}

/// Lines and every program they start, in the order the walk meets them (a substitution's
/// programs before the command whose word holds it: they run first).
const PROGRAMS: &[(&str, &[&str])] = &[
    ("ls | head", &["ls", "head"]),
    ("ls; ls && ls", &["ls"]),
    (
        "env LC_ALL=C timeout 5 nice planhost x",
        &["env", "timeout", "nice", "planhost"],
    ),
    (
        "command planhost; exec planhost",
        &["command", "planhost", "exec"],
    ),
    ("command -v planhost", &["command"]),
    ("time planhost", &["planhost"]),
    ("stdbuf -oL builtin cd x", &["stdbuf", "builtin", "cd"]),
    ("nohup planhost serve", &["nohup", "planhost"]),
    ("setsid -f planhost approve x", &["setsid", "planhost"]),
    (
        "nohup setsid systemd-run --user true",
        &["nohup", "setsid", "systemd-run"],
    ),
    ("find . -exec planhost {} +", &["find", "planhost"]),
    (
        "find . -name x -exec grep -l y {} \\; -execdir wc {} +",
        &["find", "grep", "wc"],
    ),
    (
        "git ls-files | xargs planhost",
        &["git", "xargs", "planhost"],
    ),
    ("xargs", &["xargs", "echo"]),
    ("bash -c 'planhost plan'", &["bash", "planhost"]),
    (
        "sh -c \"cd x && sh -c 'planhost'\"",
        &["sh", "cd", "planhost"],
    ),
    ("echo $(planhost x)", &["planhost", "echo"]),
    ("echo \"$(planhost x)\"", &["planhost", "echo"]),
    ("echo `planhost`", &["planhost", "echo"]),
    ("cat <(planhost)", &["planhost", "cat"]),
    ("ls > >(planhost)", &["planhost", "ls"]),
    ("tee >(planhost) < f", &["planhost", "tee"]),
    ("cat <<EOF\n$(planhost)\nEOF", &["planhost", "cat"]),
    ("cat <<'EOF'\n$(planhost)\nEOF", &["cat"]),
    ("x=$(planhost); echo $x", &["planhost", "echo"]),
    (
        "for f in $(planhost); do wc \"$f\"; done",
        &["planhost", "wc"],
    ),
    ("rm x; planhost y", &["rm", "planhost"]),
    ("echo x > f && planhost", &["echo", "planhost"]),
    ("f(){ planhost; }; f", &["planhost", "f"]),
    ("coproc planhost", &["planhost"]),
    ("if planhost; then :; fi", &["planhost", ":"]),
    ("/usr/local/bin/planhost x", &["/usr/local/bin/planhost"]),
    ("/usr/bin/git status", &["/usr/bin/git"]),
    ("", &[]),
];

/// Lines that may start a program whose name the walk cannot know.
const UNKNOWN: &[&str] = &[
    "$cmd x",
    "$(echo rm) x",
    "\"$tool\" --help",
    "find . -exec {} \\;",
    "eval planhost",
    "source ./x.sh",
    ". ./x.sh",
    "bash script.sh",
    "sh",
    "sh -c \"$x\"",
    "env -S 'planhost x'",
    "env $x ls",
    "xargs $x",
    "timeout $t planhost",
    "exec -z planhost",
    "trap 'planhost' EXIT",
    "alias ls=planhost",
    "echo ${x:-$(planhost)}",
    "echo $((a[$(planhost)]))",
    "echo $((x))",
    "[[ -v 'a[$(planhost)]' ]]",
    "test -v x",
    "a[$(planhost)]=1",
    "ls 'unterminated",
    "ls ~99999999999999999999999",
];

#[test]
fn programs_are_every_literal_name_started() {
    for (line, expected) in PROGRAMS {
        let got = facts(line);
        assert_eq!(&got.programs, expected, "{line:?}");
        assert!(!got.unknown_program, "{line:?}");
    }
}

#[test]
fn names_known_only_when_the_line_runs_are_flagged() {
    for line in UNKNOWN {
        let got = facts(line);
        assert!(got.unknown_program, "{line:?}: {got:?}");
        assert!(!got.safety.is_read_only(), "{line:?}");
    }
    for dialect in [Dialect::Powershell, Dialect::Cmd] {
        assert!(command_facts("ls", dialect).unknown_program);
    }
}

#[test]
fn where_git_runs() {
    let cases: &[(&str, GitUse)] = &[
        ("ls -la", GitUse::None),
        ("git status", GitUse::Here),
        ("git status && git log -3 | head", GitUse::Here),
        ("/usr/bin/git status", GitUse::Here),
        ("git log -C", GitUse::Here),
        ("git grep -C 3 foo", GitUse::Here),
        ("git --no-pager log -3", GitUse::Here),
        ("xargs git log", GitUse::Here),
        ("GIT_PAGER=cat git log", GitUse::Here),
        ("echo $(git rev-parse HEAD)", GitUse::Here),
        ("sh -c 'git status'", GitUse::Here),
        ("git -C sub status", GitUse::Elsewhere),
        ("git --git-dir=x log", GitUse::Elsewhere),
        ("git --git-dir x log", GitUse::Elsewhere),
        ("git --work-tree=x status", GitUse::Elsewhere),
        ("git -c core.worktree=x status", GitUse::Elsewhere),
        ("git --bare -C x log", GitUse::Elsewhere),
        ("git $opt status", GitUse::Elsewhere),
        ("git --unknown-option status", GitUse::Elsewhere),
        ("GIT_DIR=x git status", GitUse::Elsewhere),
        ("GIT_WORK_TREE=x git status", GitUse::Elsewhere),
        ("export GIT_DIR=x; git status", GitUse::Elsewhere),
        ("env GIT_DIR=x git log", GitUse::Elsewhere),
        ("env -C x git status", GitUse::Elsewhere),
        ("env --chdir=x git status", GitUse::Elsewhere),
        ("cd x && git status", GitUse::Elsewhere),
        ("(cd x; git status)", GitUse::Elsewhere),
        ("pushd x; git log; popd", GitUse::Elsewhere),
        // A loop may come back to a `git` after a later `cd`: any `cd` counts.
        (
            "for d in a b; do git status; cd $d; done",
            GitUse::Elsewhere,
        ),
        ("git status; cd x", GitUse::Elsewhere),
        ("sh -c 'cd x; git status'", GitUse::Elsewhere),
        (
            "find . -name .git -execdir git status \\;",
            GitUse::Elsewhere,
        ),
        ("eval x; git status", GitUse::Elsewhere),
        ("./git status", GitUse::Elsewhere),
    ];
    for (line, expected) in cases {
        assert_eq!(facts(line).git, *expected, "{line:?}");
    }
}

#[test]
fn the_facts_verdict_is_the_classifiers() {
    let lines = READ_ONLY
        .iter()
        .copied()
        .chain(MAY_CHANGE.iter().map(|(line, _)| *line))
        .chain(PROGRAMS.iter().map(|(line, _)| *line))
        .chain(UNKNOWN.iter().copied());
    for line in lines {
        let got = facts(line);
        assert_eq!(
            got.safety,
            classify_command(line, Dialect::Posix),
            "{line:?}"
        );
        if got.safety.is_read_only() {
            assert!(!got.unknown_program, "{line:?}");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// On any shell-like line: the same verdict as `classify_command`, a proven line starts no
    /// unknown program, and an unknown program puts any git elsewhere.
    #[test]
    fn facts_hold_on_shell_like_lines(line in "[a-z $`'\"(){};|&<>=*\\\\\\n-]{0,60}") {
        let got = facts(&line);
        prop_assert_eq!(&got.safety, &classify_command(&line, Dialect::Posix));
        prop_assert!(!(got.safety.is_read_only() && got.unknown_program), "{:?}", line);
        prop_assert!(!(got.unknown_program && got.git == GitUse::Here), "{:?}", line);
    }
}

/// Commands that write, each put on its own line after or before a proven line.
const WRITERS: &[&str] = &["rm -f x", "echo x > f", "find . -delete", "sed -i s/a/b/ f"];

#[test]
fn a_writing_line_next_to_a_proven_one_is_never_proven() {
    for line in READ_ONLY
        .iter()
        .chain(PROGRAMS.iter().map(|(line, _)| line))
    {
        if !classify_command(line, Dialect::Posix).is_read_only() {
            continue;
        }
        for writer in WRITERS {
            for joined in [format!("{line}\n{writer}"), format!("{writer}\n{line}")] {
                let verdict = classify_command(&joined, Dialect::Posix);
                assert!(!verdict.is_read_only(), "{joined:?}");
            }
        }
    }
}

//! `git`: the read subcommands, and the global and subcommand options that keep them readers
//! (the table is on [`git`]): configuration, pagers and external diff programs can make git run
//! any program, and a few options write files.

use crate::shell_safety::Verdict;
use crate::shell_safety::programs_util::long_is;

use super::short_has;

/// `git`: global options, then one read subcommand.
///
/// | subcommand | rule |
/// |---|---|
/// | `status` `log` `show` `diff` `blame` `shortlog` `whatchanged` `diff-tree` `diff-files` `diff-index` `rev-list` | no `--output` (writes a file), no `--ext-diff` (runs a program) |
/// | `grep` | as above, and no `-O` `--open-files-in-pager` (runs a program) |
/// | `ls-files` `ls-tree` `rev-parse` `describe` `cat-file` `merge-base` `name-rev` `for-each-ref` `show-ref` `count-objects` `check-ignore` `check-attr` `version` `var` | any fixed arguments |
/// | `branch` `tag` | listing options only; a name only with `-l`/`--list` (a name alone creates) |
/// | `remote` | no arguments, `-v`, or `get-url` |
/// | `config` | with `--get` `--get-all` `--get-regexp` `--list` `-l` (or the `get` `list` subcommands) and display options only |
/// | `stash` | `list`, `show` |
/// | `reflog` | alone, `show`, or options (show) |
/// | `worktree` | `list` |
///
/// Global options: `-C dir`, `--no-pager`, `-P`, `--no-optional-locks`, the pathspec switches.
/// `-c`, `--config-env` set configuration (`core.pager`, `diff.external`, `core.fsmonitor` run
/// programs), `--exec-path` picks the programs git runs, `-p`/`--paginate` forces a pager;
/// anything else is not proven. `--textconv` is git's default for `diff`/`log` and its drivers
/// come only from configuration, so it is not singled out; `--no-index` only reads.
pub(super) fn git(args: &[&str]) -> Verdict {
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        match *arg {
            "-C" => i += 2,
            "--no-pager"
            | "-P"
            | "--no-optional-locks"
            | "--literal-pathspecs"
            | "--no-replace-objects"
            | "--glob-pathspecs"
            | "--noglob-pathspecs"
            | "--icase-pathspecs" => i += 1,
            "-c" => {
                return Err(
                    "`git -c` sets configuration, which can run programs (`core.pager`)".to_owned(),
                );
            }
            "-p" | "--paginate" => return Err("`git -p` forces a pager program".to_owned()),
            _ if arg.starts_with("--config-env") => {
                return Err(
                    "`git --config-env` sets configuration, which can run programs".to_owned(),
                );
            }
            _ if arg.starts_with("--exec-path") => {
                return Err("`git --exec-path` chooses the programs git runs".to_owned());
            }
            _ if arg.starts_with('-') => {
                return Err(format!("`git {arg}` is not a known read-only form"));
            }
            _ => break,
        }
    }
    let Some(sub) = args.get(i) else {
        return Ok(());
    };
    if let Some(help) = args.iter().find(|a| long_is(a, "help")) {
        return Err(format!(
            "`git {sub} {help}` runs the configured help viewer (`man`, a browser)"
        ));
    }
    let rest = args.get(i + 1..).unwrap_or(&[]);
    match *sub {
        "status" | "log" | "show" | "diff" | "blame" | "shortlog" | "whatchanged" | "diff-tree"
        | "diff-files" | "diff-index" | "rev-list" => git_output_options(sub, rest),
        "grep" => {
            if let Some(arg) = rest
                .iter()
                .find(|a| short_has(a, 'O') || long_is(a, "open-files-in-pager"))
            {
                return Err(format!("`git grep {arg}` runs a pager program"));
            }
            git_output_options(sub, rest)
        }
        "ls-files" | "ls-tree" | "rev-parse" | "describe" | "cat-file" | "merge-base"
        | "name-rev" | "for-each-ref" | "show-ref" | "count-objects" | "check-ignore"
        | "check-attr" | "version" | "var" => Ok(()),
        "branch" => git_listing(
            "branch",
            rest,
            &[
                "-a",
                "--all",
                "-r",
                "--remotes",
                "-v",
                "-vv",
                "--verbose",
                "--show-current",
                "-i",
                "--ignore-case",
                "--no-color",
                "--omit-empty",
            ],
            &[
                "--contains",
                "--no-contains",
                "--merged",
                "--no-merged",
                "--points-at",
                "--sort",
                "--format",
                "--color",
                "--column",
                "--abbrev",
            ],
            "creates a branch",
        ),
        "tag" => git_listing(
            "tag",
            rest,
            &["-i", "--ignore-case", "--no-color", "--omit-empty"],
            &[
                "--contains",
                "--no-contains",
                "--merged",
                "--no-merged",
                "--points-at",
                "--sort",
                "--format",
                "--color",
                "--column",
                "-n",
            ],
            "creates a tag",
        ),
        "remote" => match rest {
            [] | ["-v" | "--verbose"] => Ok(()),
            ["get-url", ..] => Ok(()),
            _ => Err(
                "`git remote` with arguments other than `-v` or `get-url` changes remotes"
                    .to_owned(),
            ),
        },
        "config" => git_config(rest),
        "stash" => match rest.first() {
            Some(&"list" | &"show") => git_output_options("stash", rest),
            _ => Err(
                "`git stash` other than `list` or `show` changes the stash and the files"
                    .to_owned(),
            ),
        },
        "reflog" => match rest.first() {
            None => Ok(()),
            Some(&"show") => git_output_options("reflog", rest),
            Some(first) if first.starts_with('-') => git_output_options("reflog", rest),
            Some(first) => Err(format!("`git reflog {first}` may change the reflog")),
        },
        "worktree" => match rest.first() {
            Some(&"list") => Ok(()),
            _ => Err("`git worktree` other than `list` changes worktrees".to_owned()),
        },
        other => Err(format!(
            "`git {other}` is not a known read-only git subcommand"
        )),
    }
}

fn git_output_options(sub: &str, rest: &[&str]) -> Verdict {
    for arg in rest {
        if long_is(arg, "output") {
            return Err(format!("`git {sub} --output` writes into a file"));
        }
        if long_is(arg, "ext-diff") {
            return Err(format!(
                "`git {sub} --ext-diff` runs an external diff program"
            ));
        }
    }
    Ok(())
}

fn git_listing(
    sub: &str,
    rest: &[&str],
    flags: &[&str],
    valued: &[&str],
    creates: &str,
) -> Verdict {
    let listing = rest.iter().any(|a| matches!(*a, "-l" | "--list"));
    let mut i = 0;
    while let Some(arg) = rest.get(i) {
        i += 1;
        if matches!(*arg, "-l" | "--list") || flags.contains(arg) {
            continue;
        }
        if valued.contains(arg) {
            i += 1;
            continue;
        }
        if valued.iter().any(|v| arg.starts_with(&format!("{v}=")))
            || (sub == "tag" && arg.starts_with("-n"))
        {
            continue;
        }
        if arg.starts_with('-') {
            return Err(format!("`git {sub} {arg}` is not a known listing form"));
        }
        if !listing {
            return Err(format!("`git {sub}` with a name {creates}"));
        }
    }
    Ok(())
}

fn git_config(rest: &[&str]) -> Verdict {
    const READS: &[&str] = &[
        "--get",
        "--get-all",
        "--get-regexp",
        "--list",
        "-l",
        "get",
        "list",
    ];
    const DISPLAY: &[&str] = &[
        "--show-origin",
        "--show-scope",
        "--global",
        "--local",
        "--system",
        "--worktree",
        "--name-only",
        "-z",
        "--null",
        "--bool",
        "--int",
        "--path",
        "--includes",
        "--no-includes",
    ];
    let Some(mode) = rest.iter().position(|a| READS.contains(a)) else {
        return Err("`git config` without `--get` or `--list` may change configuration".to_owned());
    };
    if matches!(rest.get(mode), Some(&"get" | &"list")) && mode != 0 {
        return Err(
            "`git config` with options before `get`/`list` is not a known read form".to_owned(),
        );
    }
    let mut i = 0;
    while let Some(arg) = rest.get(i) {
        i += 1;
        if READS.contains(arg)
            || DISPLAY.contains(arg)
            || arg.starts_with("--type=")
            || arg.starts_with("--default=")
        {
            continue;
        }
        if matches!(*arg, "-f" | "--file" | "--blob" | "--type" | "--default") {
            i += 1;
            continue;
        }
        if arg.starts_with('-') {
            return Err(format!("`git config {arg}` may change configuration"));
        }
    }
    Ok(())
}

//! `git`: the read subcommands, and the global and subcommand options that keep them readers
//! (the table is on [`git_args`]): configuration, pagers, external diff and textconv programs,
//! gpg and help viewers can make git run programs, and a few options write files. Where git
//! works (`-C`, `--git-dir`, `--work-tree`) is noted for [`crate::GitUse`].

use crate::shell_safety::Verdict;
use crate::shell_safety::programs_util::long_is;
use crate::shell_safety::reason::{Effect, GitChange, NotProven};
use crate::shell_safety::walk::Walker;
use crate::shell_safety::words::WordInfo;

use super::options::option;
use super::{UnknownArgs, checked, short_has};

/// The `git` row: notes that git runs and where, then checks its arguments ([`git_args`]).
pub(super) fn git(walker: &mut Walker<'_>, _: &str, args: &[WordInfo]) -> Verdict {
    walker.found.git = true;
    if works_elsewhere(args) {
        walker.found.git_elsewhere = true;
    }
    checked("git", UnknownArgs::FixedStart, git_args, args)
}

/// Whether git's global options (before the subcommand) can make it work outside the starting
/// directory: `-C`, `--git-dir`, `--work-tree`, configuration (`core.worktree`), an option this
/// reading does not know, or a word known only at run time.
fn works_elsewhere(args: &[WordInfo]) -> bool {
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        i += 1;
        let Some(text) = arg.lit() else {
            return true;
        };
        match text {
            "-C" | "-c" | "--git-dir" | "--work-tree" | "--config-env" => return true,
            "--namespace" | "--super-prefix" | "--list-cmds" | "--attr-source" => i += 1,
            _ if text.starts_with("--git-dir=")
                || text.starts_with("--work-tree=")
                || text.starts_with("--config-env=") =>
            {
                return true;
            }
            "--no-pager"
            | "-P"
            | "-p"
            | "--paginate"
            | "--no-optional-locks"
            | "--literal-pathspecs"
            | "--no-replace-objects"
            | "--glob-pathspecs"
            | "--noglob-pathspecs"
            | "--icase-pathspecs"
            | "--no-lazy-fetch"
            | "--no-advice"
            | "--bare" => {}
            _ if text.starts_with("--namespace=")
                || text.starts_with("--exec-path")
                || text.starts_with("--attr-source=") => {}
            _ if text.starts_with('-') => return true,
            _ => return false,
        }
    }
    false
}

/// `git`'s fixed arguments: global options, then one read subcommand.
///
/// | subcommand | rule |
/// |---|---|
/// | `status` `log` `show` `diff` `blame` `shortlog` `whatchanged` `diff-tree` `diff-files` `diff-index` `rev-list` | no `--output` (writes a file), no `--ext-diff` (runs a program) |
/// | `grep` | as above, and no `-O` `--open-files-in-pager` (runs a program) |
/// | `cat-file` | no `--filters` (runs filter programs) |
/// | `ls-files` `ls-tree` `rev-parse` `describe` `merge-base` `name-rev` `for-each-ref` `show-ref` `count-objects` `check-ignore` `check-attr` `version` `var` | any fixed arguments |
/// | `branch` `tag` | listing options only; a name only with `-l`/`--list` (a name alone creates) |
/// | `remote` | no arguments, `-v`, or `get-url` |
/// | `config` | with `--get` `--get-all` `--get-regexp` `--list` `-l` (or the `get` `list` subcommands) and display options only |
/// | `stash` | `list`, `show` |
/// | `reflog` | alone, `show`, or options (show) |
/// | `worktree` | `list` |
///
/// Every subcommand: no `--help` (runs a help viewer), no explicit `--textconv` (runs the
/// textconv programs configuration names), no `--show-signature` and no `%G` or
/// `%(signature` in a format (they run gpg).
///
/// Global options: `-C dir`, `--no-pager`, `-P`, `--no-optional-locks`, the pathspec switches.
/// `-c`, `--config-env` set configuration (`core.pager`, `diff.external`, `core.fsmonitor` run
/// programs), `--exec-path` picks the programs git runs, `-p`/`--paginate` forces a pager;
/// anything else is not proven. A subcommand outside the table may be an alias, which runs
/// anything. The programs configuration names for a plain read (`core.fsmonitor` on `status`,
/// `diff.external` and textconv drivers on `diff` and `log -p`, `gpg.program` with
/// `log.showSignature`, `core.pager`) are the runner's to neutralise (DESIGN decision 15), not
/// this rule's; `--no-index` only reads.
fn git_args(args: &[&str]) -> Verdict {
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
            "-c" => return Err(option("git", "-c", Effect::SetsConfigurationPager)),
            "-p" | "--paginate" => return Err(option("git", "-p", Effect::ForcesPager)),
            _ if arg.starts_with("--config-env") => {
                return Err(option("git", "--config-env", Effect::SetsConfiguration));
            }
            _ if arg.starts_with("--exec-path") => {
                return Err(option("git", "--exec-path", Effect::ChoosesGitPrograms));
            }
            _ if arg.starts_with('-') => {
                return Err(NotProven::UnknownForm {
                    program: "git".to_owned(),
                    argument: (*arg).to_owned(),
                });
            }
            _ => break,
        }
    }
    let Some(sub) = args.get(i) else {
        return Ok(());
    };
    let command = || format!("git {sub}");
    if let Some(help) = args.iter().find(|a| long_is(a, "help")) {
        return Err(option(&command(), help, Effect::RunsHelpViewer));
    }
    let rest = args.get(i + 1..).unwrap_or(&[]);
    for arg in rest {
        // `--text` is `-a`, not an abbreviation of `--textconv`.
        if long_is(arg, "textconv") && *arg != "--text" {
            return Err(option(&command(), "--textconv", Effect::RunsTextconv));
        }
        if long_is(arg, "show-signature") {
            return Err(option(&command(), "--show-signature", Effect::RunsGpg));
        }
        if arg.contains("%G") || arg.contains("%(signature") {
            return Err(option(&command(), arg, Effect::RunsGpg));
        }
    }
    match *sub {
        "status" | "log" | "show" | "diff" | "blame" | "shortlog" | "whatchanged" | "diff-tree"
        | "diff-files" | "diff-index" | "rev-list" => git_output_options(sub, rest),
        "grep" => {
            if let Some(arg) = rest
                .iter()
                .find(|a| short_has(a, 'O') || long_is(a, "open-files-in-pager"))
            {
                return Err(option("git grep", arg, Effect::RunsPager));
            }
            git_output_options(sub, rest)
        }
        "cat-file" => match rest.iter().find(|a| long_is(a, "filters")) {
            Some(_) => Err(option("git cat-file", "--filters", Effect::RunsFilters)),
            None => Ok(()),
        },
        "ls-files" | "ls-tree" | "rev-parse" | "describe" | "merge-base" | "name-rev"
        | "for-each-ref" | "show-ref" | "count-objects" | "check-ignore" | "check-attr"
        | "version" | "var" => Ok(()),
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
        ),
        "remote" => match rest {
            [] | ["-v" | "--verbose"] | ["get-url", ..] => Ok(()),
            _ => Err(change(GitChange::Remotes)),
        },
        "config" => git_config(rest),
        "stash" => match rest.first() {
            Some(&"list" | &"show") => git_output_options("stash", rest),
            _ => Err(change(GitChange::Stash)),
        },
        "reflog" => match rest.first() {
            None => Ok(()),
            Some(&"show") => git_output_options("reflog", rest),
            Some(first) if first.starts_with('-') => git_output_options("reflog", rest),
            Some(first) => Err(change(GitChange::Reflog {
                subcommand: (*first).to_owned(),
            })),
        },
        "worktree" => match rest.first() {
            Some(&"list") => Ok(()),
            _ => Err(change(GitChange::Worktree)),
        },
        // Anything else may be an alias, which runs whatever it names.
        other => Err(NotProven::GitSubcommand {
            subcommand: other.to_owned(),
        }),
    }
}

fn change(change: GitChange) -> NotProven {
    NotProven::GitChange { change }
}

fn git_output_options(sub: &str, rest: &[&str]) -> Verdict {
    for arg in rest {
        if long_is(arg, "output") {
            return Err(option(
                &format!("git {sub}"),
                "--output",
                Effect::WritesIntoFile,
            ));
        }
        if long_is(arg, "ext-diff") {
            return Err(option(
                &format!("git {sub}"),
                "--ext-diff",
                Effect::RunsExternalDiff,
            ));
        }
    }
    Ok(())
}

fn git_listing(sub: &'static str, rest: &[&str], flags: &[&str], valued: &[&str]) -> Verdict {
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
            return Err(change(GitChange::NotListing {
                subcommand: sub,
                option: (*arg).to_owned(),
            }));
        }
        if !listing {
            return Err(change(GitChange::CreatesName { subcommand: sub }));
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
        return Err(change(GitChange::ConfigWithoutRead));
    };
    if matches!(rest.get(mode), Some(&"get" | &"list")) && mode != 0 {
        return Err(change(GitChange::ConfigOptionsFirst));
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
            return Err(change(GitChange::ConfigOption {
                option: (*arg).to_owned(),
            }));
        }
    }
    Ok(())
}

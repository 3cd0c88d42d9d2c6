//! The table of known programs and the argument rules that keep each one a reader.
//!
//! | program | rule | why |
//! |---|---|---|
//! | `ls` `cat` `head` `tail` `wc` `grep` `egrep` `fgrep` `echo` `pwd` `true` `false` `:` `which` `type` `whoami` `id` `uname` `stat` `du` `df` `basename` `dirname` `realpath` `readlink` `cut` `tr` `nl` `tac` `rev` `paste` `diff` `cmp` `comm` `md5sum` `sha*sum` `b2sum` `cksum` `jq` `od` `hexdump` `strings` `column` `fold` `seq` `sleep` `expr` `ps` `printenv` `nproc` `cd` `pushd` `popd` `dirs` | any arguments, even unknown ones | none of their options writes a file or runs a program |
//! | `find` | no `-delete` `-fprint` `-fprint0` `-fprintf` `-fls`; `-exec` `-execdir` `-ok` `-okdir` only running a program of this table that accepts unknown arguments (`{}`); arguments fixed | they delete, write files or run commands |
//! | `fd` | no `-x` `--exec` `-X` `--exec-batch`; fixed | they run commands |
//! | `rg` | no `--pre` `--hostname-bin` (run commands), `-z` `--search-zip` (run decompressors); fixed | as said |
//! | `sed` | no `-i` `--in-place`, no `-f` script file; the script parses and has no `w` `W` `e` command nor `w` `e` flag of `s`; fixed | `sed -i` edits files, `w` writes, `e` runs commands |
//! | `sort` | no `-o` `--output` `--compress-program`; fixed | they write or run a program |
//! | `uniq` | at most one operand; fixed | the second operand is an output file |
//! | `xxd` | at most one operand; fixed | the second operand is an output file |
//! | `tree` | no `-o`, no `-R`; fixed | they write the listing to files |
//! | `date` | no `-s` `--set`, no operand but `+FORMAT`; fixed | they set the clock |
//! | `file` | no `-C` `--compile`; fixed | it writes a compiled magic file |
//! | `base64` | no `-o` `--output`; fixed | BSD `base64 -o` writes a file |
//! | `hostname` | only its display options | an operand sets the host name |
//! | `test` `[` | no `-v` `-R`; an unknown argument only as a single-word operand | `-v 'a[$(cmd)]'` runs `cmd` |
//! | `printf` | first argument fixed and not `-v` | `-v` assigns a variable |
//! | `export` `declare` `typeset` `local` `readonly` | listing, or harmless names only | an assignment can turn a reader into a writer |
//! | `set` | only `-e` `-u` `-x` `-v` `-f` `-C` and `-o` `pipefail` `errexit` `nounset` `xtrace` `noglob` `noclobber` | `set -k` moves arguments into the environment |
//! | `git` | read subcommands only, see [`git`]; no global `-c` `--config-env` `--exec-path` `-p` `--paginate`, no `--output` `--ext-diff`; fixed | configuration and pagers run programs |
//! | `command -v`/`-V` | any | it only looks a name up |
//!
//! Long options are matched by prefix (`--out` is `--output` to getopt and git), short options
//! inside clusters (`-ni` is `-n -i`). Every argument is scanned, even after `--`, because a
//! `--` may be the value of an option. Stricter than needed costs a question, never a file.
//!
//! This module holds the table and its dispatch: [`check_invocation`], the programs no argument
//! can make write, and which rule checks each other program. The rules themselves are grouped
//! by family: [`wrappers`] (programs that run another command), [`builtins`] (shell builtins
//! that assign or test), [`find`], [`options`] (readers that an option or operand makes write)
//! and [`git`].

mod builtins;
mod find;
mod git;
mod options;
mod wrappers;

use super::words::WordInfo;
use super::{Verdict, sed};

use builtins::{declaration, printf, read, set, test};
use find::find_with_exec;
use options::{base64, date, fd, file, hostname, rg, sort, tree, uniq, xxd};
use wrappers::{env, nice, shell_c, timeout, wrapped, xargs};

/// Programs no argument can make write (rule 14 of the module doc).
const ANY_ARGS: &[&str] = &[
    "ls",
    "cat",
    "head",
    "tail",
    "wc",
    "grep",
    "egrep",
    "fgrep",
    "echo",
    "pwd",
    "true",
    "false",
    ":",
    "which",
    "type",
    "whoami",
    "id",
    "uname",
    "stat",
    "du",
    "df",
    "basename",
    "dirname",
    "realpath",
    "readlink",
    "cut",
    "tr",
    "nl",
    "tac",
    "rev",
    "paste",
    "diff",
    "cmp",
    "comm",
    "md5sum",
    "sha1sum",
    "sha224sum",
    "sha256sum",
    "sha384sum",
    "sha512sum",
    "b2sum",
    "cksum",
    "jq",
    "od",
    "hexdump",
    "strings",
    "column",
    "fold",
    "seq",
    "sleep",
    "expr",
    "ps",
    "printenv",
    "nproc",
    "cd",
    "pushd",
    "popd",
    "dirs",
];

/// Checks one simple command: `name` with `args`.
pub(super) fn check_invocation(name: &WordInfo, args: &[WordInfo], depth: usize) -> Verdict {
    let Some(raw) = name.lit() else {
        return Err(format!(
            "the program name `{}` is only known when the command runs",
            name.source
        ));
    };
    let program = raw
        .strip_prefix("/usr/bin/")
        .or_else(|| raw.strip_prefix("/bin/"))
        .unwrap_or(raw);
    if program.contains('/') || program.is_empty() {
        return Err(format!("`{raw}` is not a known read-only program"));
    }
    check_program(program, args, depth)
}

fn check_program(program: &str, args: &[WordInfo], depth: usize) -> Verdict {
    match program {
        "eval" => Err("`eval` runs a string as a command".to_owned()),
        "source" | "." => Err(format!("`{program}` runs a script file")),
        "nohup" => Err("`nohup` writes `nohup.out` when its output is a terminal".to_owned()),
        "exec" => wrapped(program, args, depth, &["-c", "-l"], &["-a"]),
        "builtin" => wrapped(program, args, depth, &[], &[]),
        "command" => {
            if args
                .first()
                .and_then(WordInfo::lit)
                .is_some_and(|a| a == "-v" || a == "-V")
            {
                Ok(())
            } else {
                wrapped(program, args, depth, &["-p"], &[])
            }
        }
        "time" => wrapped(program, args, depth, &["-p"], &[]),
        "nice" => nice(args, depth),
        "timeout" => timeout(args, depth),
        "stdbuf" => wrapped(program, args, depth, &[], &["-i", "-o", "-e"]),
        "env" => env(args, depth),
        "xargs" => xargs(args, depth),
        "sh" | "bash" | "dash" => shell_c(program, args, depth),
        "export" | "declare" | "typeset" | "local" | "readonly" => declaration(program, args),
        _ if ANY_ARGS.contains(&program) => Ok(()),
        "test" => test(program, args),
        "[" => match args.split_last() {
            Some((last, rest)) if last.lit() == Some("]") => test(program, rest),
            _ => Err("`[` without a closing `]`".to_owned()),
        },
        "printf" => printf(args),
        "read" => read(args),
        "find" => find_with_exec(args, depth),
        _ => {
            let Some(rule) = checked_rule(program) else {
                return Err(format!("`{program}` is not a known read-only program"));
            };
            checked(program, rule, args)
        }
    }
}

/// A program of the checked table on its arguments.
fn checked(program: &str, rule: Rule, args: &[WordInfo]) -> Verdict {
    {
        {
            // The fixed arguments alone first, for the most precise reason; then any unknown one.
            // A script or operand that is missing because it is unknown is no finding.
            // For programs whose rules only look for options (or count operands conservatively),
            // `src/*.rs` is checked as its fixed start `src/`: none of its words is an option.
            let globs_ok = matches!(
                program,
                "find" | "fd" | "fdfind" | "rg" | "sort" | "tree" | "file" | "base64" | "git"
            );
            let known: Vec<&str> = args
                .iter()
                .filter_map(|a| {
                    a.lit().or(if globs_ok {
                        a.fixed_prefix.as_deref()
                    } else {
                        None
                    })
                })
                .collect();
            match rule(&known) {
                Err(reason)
                    if !reason.starts_with("could not") && !reason.contains("without a") =>
                {
                    Err(reason)
                }
                _ if known.len() < args.len() => fixed_args(program, args, globs_ok).map(drop),
                verdict => verdict,
            }
        }
    }
}

type Rule = fn(&[&str]) -> Verdict;

fn checked_rule(program: &str) -> Option<Rule> {
    Some(match program {
        "fd" | "fdfind" => fd,
        "rg" => rg,
        "sed" => sed::check_sed,
        "sort" => sort,
        "uniq" => uniq,
        "xxd" => xxd,
        "tree" => tree,
        "date" => date,
        "file" => file,
        "base64" => base64,
        "hostname" => hostname,
        "set" => set,
        "git" => git::git,
        _ => return None,
    })
}

/// The arguments as fixed strings, or why not.
fn fixed_args<'a>(
    program: &str,
    args: &'a [WordInfo],
    globs_ok: bool,
) -> Result<Vec<&'a str>, String> {
    args.iter()
        .map(|arg| {
            arg.lit()
                .or(if globs_ok { arg.fixed_prefix.as_deref() } else { None })
                .ok_or_else(|| {
                format!(
                    "`{program}` gets the argument `{}`, known only when the command runs, and some `{program}` options write",
                    arg.source
                )
            })
        })
        .collect()
}

/// A short option cluster (`-abc`) holding `flag`.
fn short_has(arg: &str, flag: char) -> bool {
    arg.strip_prefix('-')
        .is_some_and(|rest| !rest.starts_with('-') && rest.contains(flag))
}

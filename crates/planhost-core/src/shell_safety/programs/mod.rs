//! The table of known programs: one typed row per program, with its names, what an argument
//! known only at run time means for it, and the rule that keeps it a reader ([`PROGRAMS`]).
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
//! | `git` | read subcommands only, see [`git`]; no global `-c` `--config-env` `--exec-path` `-p` `--paginate`, no `--output` `--ext-diff` `--textconv` `--show-signature`, no `%G` in a format; fixed | configuration, pagers and gpg run programs |
//! | `command -v`/`-V` | any | it only looks a name up |
//! | `eval` `source` `.` `nohup`, `trap` `alias` `bind` `complete` `compgen` `fc` `mapfile` `readarray` `enable` | never | they run code (or write `nohup.out`) |
//!
//! Long options are matched by prefix (`--out` is `--output` to getopt and git), short options
//! inside clusters (`-ni` is `-n -i`). Every argument is scanned, even after `--`, because a
//! `--` may be the value of an option. Stricter than needed costs a question, never a file.
//!
//! This module holds the table and its dispatch, [`check_invocation`]. The rules are grouped
//! by family: [`wrappers`] (programs that run another command), [`builtins`] (shell builtins
//! that assign, test or run code), [`find`], [`options`] (readers that an option or operand
//! makes write), [`git`] and `sed`.

mod builtins;
mod find;
mod git;
mod options;
mod wrappers;

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::LazyLock;

use super::reason::NotProven;
use super::walk::Walker;
use super::words::WordInfo;
use super::{Verdict, sed};

/// One program the classifier knows: everything about it in one place.
#[derive(Debug)]
pub(super) struct Program {
    /// The names it runs under (after `/usr/bin/` or `/bin/`).
    pub(super) names: &'static [&'static str],
    /// What an argument known only at run time (`$x`, `*`, `$(...)`) means for it.
    pub(super) unknown_args: UnknownArgs,
    /// The rule that keeps it a reader.
    pub(super) rule: Rule,
}

/// What an argument known only at run time means for a program.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum UnknownArgs {
    /// Nothing: no argument can make it write.
    Harmless,
    /// It counts as its fixed start when it has one that is not an option (`src/*.rs` as
    /// `src/`: none of its words is an option); otherwise it is not proven. For programs whose
    /// rules only look for options or count operands conservatively.
    FixedStart,
    /// It is not proven: it could be an option that writes, or the operand that is written.
    Refused,
    /// The rule reads every word itself, the unknown ones included.
    SeenByRule,
}

/// A program's rule.
#[derive(Debug, Clone, Copy)]
pub(super) enum Rule {
    /// Any arguments: it only reads.
    Any,
    /// A check of the arguments' fixed text; the unknown ones are held back as
    /// [`Program::unknown_args`] says.
    Args(fn(&[&str]) -> Verdict),
    /// A check of the words themselves, which may walk the commands the program runs.
    Words(fn(&mut Walker<'_>, &str, &[WordInfo]) -> Verdict),
}

use Rule::{Any, Args, Words};
use UnknownArgs::{FixedStart, Harmless, Refused, SeenByRule};

/// Shorthand for the rows.
const fn row(names: &'static [&'static str], unknown_args: UnknownArgs, rule: Rule) -> Program {
    Program {
        names,
        unknown_args,
        rule,
    }
}

/// Every program the classifier knows. A name appears in one row only.
pub(super) static PROGRAMS: &[Program] = &[
    // Readers of files and directories.
    row(
        &[
            "ls",
            "cat",
            "head",
            "tail",
            "wc",
            "grep",
            "egrep",
            "fgrep",
            "stat",
            "du",
            "df",
            "basename",
            "dirname",
            "realpath",
            "readlink",
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
            "od",
            "hexdump",
            "strings",
        ],
        Harmless,
        Any,
    ),
    // Filters of text.
    row(
        &[
            "cut", "tr", "nl", "tac", "rev", "paste", "jq", "column", "fold", "echo", "seq", "expr",
        ],
        Harmless,
        Any,
    ),
    // The system and the shell, looked at.
    row(
        &[
            "pwd", "true", "false", ":", "which", "type", "whoami", "id", "uname", "sleep", "ps",
            "printenv", "nproc", "dirs",
        ],
        Harmless,
        Any,
    ),
    row(&["cd", "pushd", "popd"], Harmless, Words(changes_directory)),
    row(&["eval"], SeenByRule, Words(builtins::eval)),
    row(&["source", "."], SeenByRule, Words(builtins::source)),
    row(
        &[
            "trap",
            "alias",
            "bind",
            "complete",
            "compgen",
            "fc",
            "mapfile",
            "readarray",
            "enable",
        ],
        SeenByRule,
        Words(builtins::runs_code),
    ),
    row(&["nohup"], SeenByRule, Words(wrappers::nohup)),
    row(&["setsid"], SeenByRule, Words(wrappers::setsid)),
    row(&["exec"], SeenByRule, Words(wrappers::exec)),
    row(&["builtin"], SeenByRule, Words(wrappers::builtin)),
    row(&["command"], SeenByRule, Words(wrappers::command)),
    row(&["time"], SeenByRule, Words(wrappers::time)),
    row(&["nice"], SeenByRule, Words(wrappers::nice)),
    row(&["timeout"], SeenByRule, Words(wrappers::timeout)),
    row(&["stdbuf"], SeenByRule, Words(wrappers::stdbuf)),
    row(&["env"], SeenByRule, Words(wrappers::env)),
    row(&["xargs"], SeenByRule, Words(wrappers::xargs)),
    row(
        &["sh", "bash", "dash"],
        SeenByRule,
        Words(wrappers::shell_c),
    ),
    row(
        &["export", "declare", "typeset", "local", "readonly"],
        SeenByRule,
        Words(builtins::declaration),
    ),
    row(&["test"], SeenByRule, Words(builtins::test)),
    row(&["["], SeenByRule, Words(builtins::bracket)),
    row(&["printf"], SeenByRule, Words(builtins::printf)),
    row(&["read"], SeenByRule, Words(builtins::read)),
    row(&["set"], Refused, Args(builtins::set)),
    row(&["find"], FixedStart, Words(find::find_with_exec)),
    row(&["fd", "fdfind"], FixedStart, Args(options::fd)),
    row(&["rg"], FixedStart, Args(options::rg)),
    row(&["sed"], Refused, Args(sed::check_sed)),
    row(&["sort"], FixedStart, Args(options::sort)),
    row(&["uniq"], Refused, Args(options::uniq)),
    row(&["xxd"], Refused, Args(options::xxd)),
    row(&["tree"], FixedStart, Args(options::tree)),
    row(&["date"], Refused, Args(options::date)),
    row(&["file"], FixedStart, Args(options::file)),
    row(&["base64"], FixedStart, Args(options::base64)),
    row(&["hostname"], Refused, Args(options::hostname)),
    row(&["git"], FixedStart, Words(git::git)),
];

/// The row of a program name.
pub(super) fn program(name: &str) -> Option<&'static Program> {
    type ByName = HashMap<&'static str, &'static Program, BuildHasherDefault<Fnv>>;
    static BY_NAME: LazyLock<ByName> = LazyLock::new(|| {
        PROGRAMS
            .iter()
            .flat_map(|program| program.names.iter().map(move |name| (*name, program)))
            .collect()
    });
    BY_NAME.get(name).copied()
}

/// FNV-1a: program names are short and not chosen to collide with each other (a collision
/// costs a comparison, never a wrong row), so SipHash's cost buys nothing here.
#[derive(Default)]
struct Fnv(u64);

impl Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        let mut hash = if self.0 == 0 {
            0xcbf2_9ce4_8422_2325
        } else {
            self.0
        };
        for byte in bytes {
            hash ^= u64::from(*byte);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
        self.0 = hash;
    }
}

/// Checks one simple command, `name` with `args`, and records the program it starts.
pub(super) fn check_invocation(
    walker: &mut Walker<'_>,
    name: &WordInfo,
    args: &[WordInfo],
) -> Verdict {
    let Some(raw) = name.lit() else {
        walker.unknown_code();
        return Err(NotProven::UnknownProgramName {
            source: name.source.to_owned(),
        });
    };
    walker.found.program(raw);
    let program = raw
        .strip_prefix("/usr/bin/")
        .or_else(|| raw.strip_prefix("/bin/"))
        .unwrap_or(raw);
    if program.contains('/') || program.is_empty() {
        if program.rsplit('/').next() == Some("git") {
            // Some git, run by path: where it works is not checked.
            walker.found.git = true;
            walker.found.git_elsewhere = true;
        }
        return Err(NotProven::UnknownProgram {
            name: raw.to_owned(),
        });
    }
    let Some(row) = self::program(program) else {
        return Err(NotProven::UnknownProgram {
            name: program.to_owned(),
        });
    };
    match row.rule {
        Rule::Any => Ok(()),
        Rule::Words(rule) => rule(walker, program, args),
        Rule::Args(rule) => checked(program, row.unknown_args, rule, args),
    }
}

/// An [`Rule::Args`] rule on a program's arguments: the fixed ones alone first, for the most
/// precise reason; then any unknown one. A rule's finding that may only be the lack of an
/// argument held back ([`NotProven::may_be_incomplete`]) is no finding.
pub(super) fn checked(
    program: &str,
    unknown: UnknownArgs,
    rule: fn(&[&str]) -> Verdict,
    args: &[WordInfo],
) -> Verdict {
    fn fixed<'a>(unknown: UnknownArgs, arg: &'a WordInfo<'_>) -> Option<&'a str> {
        match unknown {
            UnknownArgs::FixedStart => arg.lit().or(arg.fixed_prefix.as_deref()),
            UnknownArgs::Harmless | UnknownArgs::Refused | UnknownArgs::SeenByRule => arg.lit(),
        }
    }
    // Most commands have a few arguments: those stay on the stack.
    let mut inline: [&str; 16] = [""; 16];
    let mut spilled: Vec<&str> = Vec::new();
    let mut count = 0;
    for text in args.iter().filter_map(|arg| fixed(unknown, arg)) {
        match inline.get_mut(count) {
            Some(slot) => *slot = text,
            None => {
                if spilled.is_empty() {
                    spilled.extend_from_slice(&inline);
                }
                spilled.push(text);
            }
        }
        count += 1;
    }
    let known: &[&str] = if spilled.is_empty() {
        inline.get(..count).unwrap_or(&[])
    } else {
        &spilled
    };
    match rule(known) {
        Err(reason) if !reason.may_be_incomplete() => Err(reason),
        _ if known.len() < args.len() && unknown != UnknownArgs::Harmless => {
            let first = args.iter().find(|arg| fixed(unknown, arg).is_none());
            Err(NotProven::UnknownArgument {
                program: program.to_owned(),
                argument: first.map(|a| a.source.to_owned()).unwrap_or_default(),
            })
        }
        verdict => verdict,
    }
}

/// `cd`, `pushd`, `popd`: they only read, but a `git` after them works elsewhere.
fn changes_directory(walker: &mut Walker<'_>, _: &str, _: &[WordInfo]) -> Verdict {
    walker.found.moves = true;
    Ok(())
}

/// A short option cluster (`-abc`) holding `flag`.
fn short_has(arg: &str, flag: char) -> bool {
    arg.strip_prefix('-')
        .is_some_and(|rest| !rest.starts_with('-') && rest.contains(flag))
}

#[cfg(test)]
mod tests {
    use super::{PROGRAMS, Rule, UnknownArgs, program};

    #[test]
    fn every_name_has_one_row() {
        let mut seen = std::collections::HashSet::new();
        for row in PROGRAMS {
            for name in row.names {
                assert!(seen.insert(*name), "{name} is in two rows");
                assert!(std::ptr::eq(program(name).unwrap(), row));
            }
        }
        assert!(program("rm").is_none());
    }

    #[test]
    fn what_unknown_arguments_mean_fits_the_rule() {
        for row in PROGRAMS {
            let fits = match row.rule {
                Rule::Any => row.unknown_args == UnknownArgs::Harmless,
                Rule::Args(_) => matches!(
                    row.unknown_args,
                    UnknownArgs::FixedStart | UnknownArgs::Refused
                ),
                // `cd` reads its words only to note a change of directory; `find` and `git`
                // hand their fixed arguments to an argument rule.
                Rule::Words(_) => true,
            };
            assert!(fits, "{:?}", row.names);
        }
    }
}

//! The shell command classifier: is a command line *provably read-only*?
//!
//! Plan mode runs a provably read-only Bash call without asking a person; anything else needs a
//! person's yes. A false "read-only" is a security hole (the reported bug: `find . -name
//! victim.txt -delete` ran in Plan mode and deleted a file); a false "may change files" costs
//! one question. So [`classify_command`] answers [`CommandSafety::ReadOnly`] only when it has
//! proven, for every part of the line, that it cannot create, change or delete a file nor run a
//! program that could, and otherwise names the first thing it could not prove.
//!
//! The line is parsed into the classifier's own tree ([`syntax`]): by a fast parser for the
//! common shapes ([`fast`]) and otherwise by `brush-parser` (the parser of the brush shell,
//! [`from_brush`]), never by regexes; a line brush-parser cannot parse is not proven. Where the
//! fast parser answers, both build the same tree (a property test and the `shell_classifier`
//! fuzz target hold them to it). Every part of the tree is seen, and the walk ([`walk`]) goes
//! on past the first finding, so one parse also gives [`command_facts`]: every program the
//! line starts and where its git works.
//!
//! A finding is a typed [`NotProven`], whose `Display` is the sentence a person reads; no
//! verdict depends on a sentence. Each known program is one typed row of
//! [`programs::PROGRAMS`]: its names, what an argument known only at run time means for it,
//! and its rule.
//!
//! # Rules
//!
//! | # | construct | verdict | reason |
//! |---|---|---|---|
//! | 1 | PowerShell or cmd dialect | may change | no parser for them yet |
//! | 2 | empty line, comments only | read-only | a line that runs nothing writes nothing |
//! | 3 | `;` `&&` `\|\|` `\|` `&` `!` `time`, `( )`, `{ }`, `if` `while` `until` `for` `case` | as their parts | they only sequence commands |
//! | 4 | function definition, `coproc` | may change | the body runs later, under a name that can shadow a reader |
//! | 5 | `$(...)`, backquotes, `<(...)` | as the inner script | it runs; its output is an unknown value |
//! | 6 | `>(...)` | may change | it receives a program's output as a file |
//! | 7 | unquoted here-document body | its `$(...)` and `${...}` are checked | the shell expands it |
//! | 8 | `>` `>>` `&>` `>&` `>\|` to a file other than `/dev/null`, `<>` | may change | it creates or truncates the file |
//! | 9 | `<file`, `2>&1`, `>&2`, `<<<word` | as their words | they read or copy descriptors |
//! | 10 | assignment (prefix, standalone, `export`, `declare`, `local`, `env`, `for` variable) to a name outside the harmless set | may change | `PATH`, `LD_PRELOAD`, `PAGER`, `GIT_*`, `BASH_ENV`, `IFS`... turn readers into writers |
//! | 11 | program name not literal (`$x`, `$(...)`) | may change | it can be any program |
//! | 12 | `eval`, `source`, `.`, `trap`, any program outside the table | may change | not a known read-only program |
//! | 13 | known program, arguments fixed | its rule in [`programs`] | some options write (`find -delete`, `sed -i`, `sort -o`) |
//! | 14 | known program, an argument only known at run time (`$x`, `*`, `{a,b}`, `$(...)`) | read-only only for programs no argument can make write (`cat`, `ls`, `grep`...); a glob or quoted expansion with a fixed start that is not an option (`src/*.rs`, `"dir/$x"`) counts as that start for `find` `fd` `rg` `sort` `tree` `file` `base64` `git` | `find . *` with a file named `-delete` |
//! | 15 | wrappers `env` `command` `exec` `timeout` `nice` `stdbuf` `time` `builtin` `xargs` | as the wrapped command (`xargs`: with unknown arguments) | they only run it |
//! | 16 | `nohup` | may change | it writes `nohup.out` when its output is a terminal |
//! | 17 | `sh -c`, `bash -c`, `bash -lc` with one literal script | as the script | the script is the command |
//! | 18 | arithmetic (`$((...))`, `((...))`, `[[ a -eq b ]]`, `${x:o:l}`) naming a variable | may change | a variable's value is evaluated, and `a[$(cmd)]` in it runs `cmd` |
//! | 19 | `${x:=v}`, `${!x}`, `${x@P}`, `${a[expr]}` | may change | they assign, or evaluate a value as code |
//! | 20 | nesting of substitutions deeper than 16; `(` nested deeper than 8 on a line the fast parser leaves to brush-parser | may change | bounds the work (brush-parser's time doubles with each `(`) |
//!
//! Harmless assignment names (rule 10): lowercase names (`f`, `dir`: no program or shell
//! feature reads a lowercase variable to run something, and lowercase names are the loop
//! variables people write) and `LANG`, `LANGUAGE`, `LC_*`, `TZ`, `NO_COLOR`, `CLICOLOR`,
//! `CLICOLOR_FORCE`, `FORCE_COLOR`, `COLUMNS`, `LINES`, `TERM`, `RUST_BACKTRACE`; and `PAGER`,
//! `GIT_PAGER`, `MANPAGER` only with the literal value `cat`.
//!
//! # Facts
//!
//! [`command_facts`] reports, from the same parse, every literal program name the line starts
//! (at command position at any depth, through the wrappers of rule 15, `find -exec`, `sh -c`
//! scripts, substitutions, function bodies), whether some program's name is only known when
//! the line runs or some code is out of sight (`unknown_program`: `$cmd`, `eval`, `source`, a
//! shell running a file, a wrapper whose command cannot be found, a word or substitution that
//! does not parse, arithmetic or `test -v` that evaluates a variable), and where `git` works:
//! [`GitUse::Here`] only when no `git` has `-C`, `--git-dir`, `--work-tree`, `-c` or an
//! unknown global option, no `GIT_` variable but `GIT_PAGER` is set, nothing in the line
//! changes directory (`cd`, `pushd`, `popd`, `env -C`, `find -execdir`; anywhere in the line,
//! since a loop can come back to an earlier `git`) and no unknown program runs. What a program
//! outside the table starts in turn is not known: `sudo planhost` lists `sudo` and `planhost`
//! is not seen; a name is a name (`ln -s planhost ls` makes `ls` start it).
//!
//! The result is pure and deterministic: no I/O, no environment, no clock.

mod fast;
mod from_brush;
mod programs;
mod programs_util;
mod reason;
mod sed;
mod syntax;
mod walk;
mod words;

#[cfg(any(test, feature = "fuzzing"))]
#[cfg_attr(not(feature = "fuzzing"), allow(unreachable_pub))]
pub mod fuzzing;
#[cfg(test)]
mod tests;

use brush_parser::ParserOptions;

use crate::Dialect;

pub use reason::{Effect, GitChange, NotProven, ParameterUse};
use walk::{Found, Walker};

/// What the classifier proved about a command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommandSafety {
    /// Every part of the line is a known reader with arguments that cannot make it write.
    ReadOnly,
    /// Not provably read-only; `reason` names the first thing found, and its `Display` is the
    /// sentence for a person, e.g. "`find -delete` deletes files", "`>` redirects output into a
    /// file", "`rm` is not a known read-only program".
    MayChangeFiles {
        /// What was found.
        reason: NotProven,
    },
}

impl CommandSafety {
    /// Whether the line was proven read-only.
    pub fn is_read_only(&self) -> bool {
        matches!(self, CommandSafety::ReadOnly)
    }

    /// Why the line was not proven read-only; `None` when it was.
    pub fn reason(&self) -> Option<&NotProven> {
        match self {
            CommandSafety::ReadOnly => None,
            CommandSafety::MayChangeFiles { reason } => Some(reason),
        }
    }
}

/// Where the `git` a command line runs works.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GitUse {
    /// The line runs no `git` (by that name).
    None,
    /// Every `git` runs in the command's starting directory: no `-C`, `--git-dir`,
    /// `--work-tree`, no `GIT_` variable set, and nothing in the line changes directory.
    Here,
    /// Some `git` runs in another directory, or one the line cannot show.
    Elsewhere,
}

/// Everything one parse of a command line tells: the verdict and what the line starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandFacts {
    /// The verdict, as [`classify_command`] gives it.
    pub safety: CommandSafety,
    /// Every literal program name the line starts, as written, first occurrence first: at
    /// command position at any depth, through the wrappers the classifier knows (`env`,
    /// `command`, `exec`, `timeout`, `nice`, `xargs`, `find -exec`...), in `sh -c` scripts and
    /// in substitutions. What those programs start in turn is not known.
    pub programs: Vec<String>,
    /// Some program's name is known only when the line runs (`$cmd`, `find -exec {}`), or the
    /// line runs code the classifier cannot see (`eval`, `source`, a script file, a line that
    /// does not parse): any program may start.
    pub unknown_program: bool,
    /// Where `git` runs ([`GitUse::Elsewhere`] also when `unknown_program`).
    pub git: GitUse,
}

/// Classifies one command line in the given dialect. Pure, no I/O, deterministic.
pub fn classify_command(command: &str, dialect: Dialect) -> CommandSafety {
    command_facts(command, dialect).safety
}

/// Classifies one command line and reports what it starts, from the same parse. Pure, no I/O,
/// deterministic; `facts.safety` is always `classify_command(command, dialect)`.
pub fn command_facts(command: &str, dialect: Dialect) -> CommandFacts {
    let mut found = Found::default();
    let verdict = match dialect {
        Dialect::Powershell => {
            found.unknown_program = true;
            Err(NotProven::PowerShell)
        }
        Dialect::Cmd => {
            found.unknown_program = true;
            Err(NotProven::Cmd)
        }
        Dialect::Posix => classify_script(
            &mut Walker {
                depth: 0,
                found: &mut found,
            },
            command,
        ),
    };
    let git = if !found.git {
        GitUse::None
    } else if found.git_elsewhere || found.moves || found.unknown_program {
        GitUse::Elsewhere
    } else {
        GitUse::Here
    };
    CommandFacts {
        safety: match verdict {
            Ok(()) => CommandSafety::ReadOnly,
            Err(reason) => CommandSafety::MayChangeFiles { reason },
        },
        programs: found.programs,
        unknown_program: found.unknown_program,
        git,
    }
}

/// `Ok` when proven read-only, otherwise the first reason found.
pub(crate) type Verdict = Result<(), NotProven>;

/// Substitutions nested deeper than this are not proven (rule 20).
const MAX_DEPTH: usize = 16;

pub(crate) fn parser_options() -> ParserOptions {
    ParserOptions::default()
}

/// Parses and walks a script (the whole line, or the inside of a substitution or `sh -c`) at
/// the walker's depth.
fn classify_script(walker: &mut Walker<'_>, script: &str) -> Verdict {
    if walker.depth > MAX_DEPTH {
        walker.unknown_code();
        return Err(NotProven::TooDeep);
    }
    if script.trim().is_empty() {
        return Ok(());
    }
    if has_overflowing_number(script) {
        walker.unknown_code();
        return Err(NotProven::NumberTooLong);
    }
    match parse(script) {
        Ok(tree) => walker.script(&tree),
        Err(reason) => {
            walker.unknown_code();
            Err(reason)
        }
    }
}

/// `(` nested deeper than this on a line the fast parser leaves to brush-parser is not
/// parsed: brush-parser's grammar backtracks on each `(` (a subshell, or an arithmetic
/// command), so its time doubles with each level (18 levels: 3 ms; the 45-byte line the fuzz
/// target found: 34 s). The fast parser takes the usual nesting itself.
pub(super) const MAX_PARENS_FOR_BRUSH: usize = 8;

/// The script's tree: the fast parser's where it takes the line, brush-parser's otherwise.
fn parse(script: &str) -> Result<syntax::Script<'_>, NotProven> {
    match fast::parse(script) {
        fast::Parsed::Tree(tree) => Ok(tree),
        fast::Parsed::Refused => Err(NotProven::Unparsed),
        fast::Parsed::Unknown => match too_hard_for_brush(script) {
            Some(reason) => Err(reason),
            None => from_brush::parse(script).ok_or(NotProven::Unparsed),
        },
    }
}

/// Why a line is not handed to brush-parser: `None` when it may be. Its grammar backtracks on
/// nested `(`, and it runs its word parser on each word (to find assignments), whose time
/// multiplies across expansions, brackets and parentheses ([`words::too_hard_for_word_parser`]);
/// these bounds keep a line's cost within milliseconds whatever it holds (found by the
/// `shell_classifier` fuzz target). A line whose words are cheap in sum passes; else each word
/// (as the fast lexer delimits them, brush-parser's way) must be, or the line is refused.
pub(super) fn too_hard_for_brush(text: &str) -> Option<NotProven> {
    if paren_nesting(text) > MAX_PARENS_FOR_BRUSH {
        return Some(NotProven::TooNested);
    }
    if has_empty_here_tag(text) {
        // brush-parser 0.4's tokenizer never returns on `<<''` then a blank at the end of the
        // line (found by the fuzz target: it loops, growing its token queue without bound).
        return Some(NotProven::Unparsed);
    }
    if !words::too_costly_for_word_parser(text) {
        return None;
    }
    match fast::words(text) {
        Some(words) if !words.iter().any(|w| words::too_costly_for_word_parser(w)) => None,
        Some(_) | None => Some(NotProven::TooManyExpansions),
    }
}

/// A here-document operator (`<<`, `<<-`) whose tag is only quotes (`''`, `""`, `$''`...):
/// an empty tag once unquoted.
fn has_empty_here_tag(text: &str) -> bool {
    let bytes = text.as_bytes();
    let mut i = 0;
    while let Some(at) = text.get(i..).and_then(|rest| rest.find("<<")) {
        let start = i + at;
        i = start + 2;
        if bytes.get(i) == Some(&b'<') || (start > 0 && bytes.get(start - 1) == Some(&b'<')) {
            continue;
        }
        let mut j = i + usize::from(bytes.get(i) == Some(&b'-'));
        while matches!(bytes.get(j), Some(b' ' | b'\t')) {
            j += 1;
        }
        let tag = bytes
            .get(j..)
            .unwrap_or(&[])
            .iter()
            .take_while(|b| {
                !matches!(
                    b,
                    b' ' | b'\t' | b'\n' | b';' | b'&' | b'|' | b'<' | b'>' | b'(' | b')'
                )
            })
            .copied()
            .collect::<Vec<u8>>();
        if !tag.is_empty() && tag.iter().all(|b| matches!(b, b'\'' | b'"' | b'\\' | b'$')) {
            return true;
        }
    }
    false
}

/// How deep `(` nest in the text, quotes or not (a `)` closes one).
pub(super) fn paren_nesting(script: &str) -> usize {
    let (mut depth, mut deepest) = (0_usize, 0);
    for b in script.bytes() {
        match b {
            b'(' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b')' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

/// A run of 10 or more digits right before `<`/`>` (a descriptor, `i32` in the parser) or right
/// after `~`, `~+`, `~-` (a directory-stack index): brush-parser 0.4 panics on their overflow.
pub(super) fn has_overflowing_number(script: &str) -> bool {
    let bytes = script.as_bytes();
    let mut run_start = 0;
    let mut run = 0;
    for (i, &b) in bytes.iter().enumerate() {
        if b.is_ascii_digit() {
            if run == 0 {
                run_start = i;
            }
            run += 1;
            continue;
        }
        if run >= 10 && (matches!(b, b'<' | b'>') || after_tilde(bytes, run_start)) {
            return true;
        }
        run = 0;
    }
    run >= 10 && after_tilde(bytes, run_start)
}

/// Whether `~`, `~+` or `~-` ends right before `at`.
fn after_tilde(bytes: &[u8], at: usize) -> bool {
    let before = bytes.get(..at).unwrap_or(&[]);
    before.ends_with(b"~") || before.ends_with(b"~+") || before.ends_with(b"~-")
}

const HARMLESS_NAMES: &[&str] = &[
    "LANG",
    "LANGUAGE",
    "TZ",
    "NO_COLOR",
    "CLICOLOR",
    "CLICOLOR_FORCE",
    "FORCE_COLOR",
    "COLUMNS",
    "LINES",
    "TERM",
    "RUST_BACKTRACE",
];

/// Rule 10: `value` is `None` when the value is not a single fixed string. A `GIT_` name other
/// than `GIT_PAGER` is also noted: it can move the repository git works on.
fn check_assignment_name(found: &mut Found, name: &str, value: Option<Option<&str>>) -> Verdict {
    if name.starts_with("GIT_") && name != "GIT_PAGER" {
        found.moves = true;
    }
    let lowercase = !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
        && name.bytes().any(|b| b.is_ascii_lowercase());
    let harmless = lowercase
        || HARMLESS_NAMES.contains(&name)
        || (name.starts_with("LC_") && name.bytes().all(|b| b.is_ascii_uppercase() || b == b'_'))
        || (matches!(name, "PAGER" | "GIT_PAGER" | "MANPAGER") && value == Some(Some("cat")));
    if harmless {
        Ok(())
    } else {
        Err(NotProven::Assignment {
            name: name.to_owned(),
        })
    }
}

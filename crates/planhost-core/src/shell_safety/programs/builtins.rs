//! Shell builtins that assign, test or run code: `export` `declare` `typeset` `local`
//! `readonly`, `test` and `[`, `printf`, `set` and `read`; `eval`, `source`, `.` and the others
//! that run code. What they assign must be a harmless name (rule 10 of the classifier), and the
//! forms that assign through an argument or evaluate one as code (`test -v`, `printf -v`, `set`
//! beyond its listed options) are not proven; the builtins that run code never are.

use crate::shell_safety::reason::NotProven;
use crate::shell_safety::walk::Walker;
use crate::shell_safety::words::WordInfo;
use crate::shell_safety::{Verdict, check_assignment_name};

/// `eval`: runs its arguments as a command.
pub(super) fn eval(walker: &mut Walker<'_>, _: &str, _: &[WordInfo]) -> Verdict {
    walker.unknown_code();
    Err(NotProven::Eval)
}

/// `source`, `.`: run a script file.
pub(super) fn source(walker: &mut Walker<'_>, program: &str, _: &[WordInfo]) -> Verdict {
    walker.unknown_code();
    Err(NotProven::SourcesScript {
        program: program.to_owned(),
    })
}

/// `trap`, `alias`, `bind`, `complete`, `compgen`, `fc`, `mapfile`, `readarray`, `enable`: each
/// can make the shell run code it is given (a trap's action, an alias, a callback, a loaded
/// builtin), so what the line starts is not known.
pub(super) fn runs_code(walker: &mut Walker<'_>, program: &str, _: &[WordInfo]) -> Verdict {
    walker.unknown_code();
    Err(NotProven::UnknownProgram {
        name: program.to_owned(),
    })
}

fn unknown_form(program: &str, argument: &str) -> NotProven {
    NotProven::UnknownForm {
        program: program.to_owned(),
        argument: argument.to_owned(),
    }
}

pub(super) fn declaration(walker: &mut Walker<'_>, program: &str, args: &[WordInfo]) -> Verdict {
    let mut verdict = Ok(());
    for arg in args {
        let source = arg.source;
        if arg.lit() == Some("-p") {
            continue;
        }
        let name_len = source
            .bytes()
            .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
            .count();
        let name = source.get(..name_len).unwrap_or("");
        let rest = source.get(name_len..).unwrap_or("");
        let next = if name.is_empty() || name.starts_with(|c: char| c.is_ascii_digit()) {
            Err(unknown_form(program, source))
        } else if rest.is_empty() {
            check_assignment_name(walker.found, name, None)
        } else if rest.starts_with('=') {
            let value = arg.lit().and_then(|l| l.split_once('=')).map(|(_, v)| v);
            check_assignment_name(walker.found, name, Some(value))
        } else {
            Err(unknown_form(program, source))
        };
        verdict = verdict.and(next);
    }
    verdict
}

/// `[ ... ]`: `test` once its closing `]` is found.
pub(super) fn bracket(walker: &mut Walker<'_>, _: &str, args: &[WordInfo]) -> Verdict {
    match args.split_last() {
        Some((last, rest)) if last.lit() == Some("]") => test(walker, "[", rest),
        _ => Err(NotProven::UnclosedBracket),
    }
}

pub(super) fn test(walker: &mut Walker<'_>, program: &str, args: &[WordInfo]) -> Verdict {
    let program = if program == "[" { "[" } else { "test" };
    if args.iter().any(|a| matches!(a.lit(), Some("-v" | "-R"))) {
        walker.unknown_code();
        return Err(NotProven::TestVariable { program });
    }
    if args.iter().all(|a| a.lit().is_some()) {
        return Ok(());
    }
    let lits: Vec<Option<&str>> = args.iter().map(WordInfo::lit).collect();
    let single_words = args.iter().all(|a| !a.may_split);
    let shape_ok = match lits.as_slice() {
        [_] => true,
        [Some(op), _] => op.starts_with('-') || *op == "!",
        [_, Some(op), _] => matches!(
            *op,
            "=" | "=="
                | "!="
                | "<"
                | ">"
                | "-eq"
                | "-ne"
                | "-lt"
                | "-le"
                | "-gt"
                | "-ge"
                | "-nt"
                | "-ot"
                | "-ef"
        ),
        _ => false,
    };
    if single_words && shape_ok {
        Ok(())
    } else {
        // It could become `-v 'a[$(cmd)]'`.
        walker.unknown_code();
        Err(NotProven::TestUnknownArguments { program })
    }
}

pub(super) fn printf(_: &mut Walker<'_>, _: &str, args: &[WordInfo]) -> Verdict {
    match args.first() {
        None => Ok(()),
        Some(first) => match first.lit() {
            Some(text) if text == "--" || !text.starts_with('-') => Ok(()),
            Some(text) => Err(NotProven::PrintfOption {
                option: text.to_owned(),
            }),
            None => Err(NotProven::PrintfUnknownFirst {
                argument: first.source.to_owned(),
            }),
        },
    }
}

pub(super) fn set(args: &[&str]) -> Verdict {
    const NAMES: &[&str] = &[
        "pipefail",
        "errexit",
        "nounset",
        "xtrace",
        "noglob",
        "noclobber",
    ];
    let mut expect_name = false;
    for arg in args {
        if expect_name {
            if !NAMES.contains(arg) {
                return Err(unknown_form("set -o", arg));
            }
            expect_name = false;
            continue;
        }
        let flags = arg.strip_prefix('-').or_else(|| arg.strip_prefix('+'));
        match flags {
            Some(flags) if !flags.is_empty() && flags.chars().all(|c| "euxvfCo".contains(c)) => {
                expect_name = flags.contains('o');
            }
            _ => return Err(unknown_form("set", arg)),
        }
    }
    if expect_name {
        return Err(NotProven::SetOptionAlone);
    }
    Ok(())
}

/// `read` only assigns its variables: harmless names only (rule 10 of the module doc).
pub(super) fn read(walker: &mut Walker<'_>, _: &str, args: &[WordInfo]) -> Verdict {
    let mut verdict = Ok(());
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        i += 1;
        let Some(text) = arg.lit() else {
            return verdict.and(Err(NotProven::ArgumentAtRunTime {
                program: "read",
                argument: arg.source.to_owned(),
            }));
        };
        let next = match text {
            "-r" | "-s" | "-e" => Ok(()),
            "-d" | "-n" | "-N" | "-p" | "-t" | "-u" => {
                i += 1;
                Ok(())
            }
            "-a" => {
                let name = args.get(i).and_then(WordInfo::lit).unwrap_or("");
                i += 1;
                check_assignment_name(walker.found, name, None)
            }
            _ if text.starts_with('-') => Err(unknown_form("read", text)),
            name => check_assignment_name(walker.found, name, None),
        };
        verdict = verdict.and(next);
    }
    verdict
}

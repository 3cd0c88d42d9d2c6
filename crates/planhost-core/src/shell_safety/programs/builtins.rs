//! Shell builtins that only assign or test: `export` `declare` `typeset` `local` `readonly`,
//! `test` and `[`, `printf`, `set` and `read`. What they assign must be a harmless name (rule 10
//! of the classifier), and the forms that assign through an argument or evaluate one as code
//! (`test -v`, `printf -v`, `set` beyond its listed options) are not proven.

use crate::shell_safety::words::WordInfo;
use crate::shell_safety::{Verdict, check_assignment_name};

pub(super) fn declaration(program: &str, args: &[WordInfo]) -> Verdict {
    for arg in args {
        let source = arg.source.as_str();
        if arg.lit() == Some("-p") {
            continue;
        }
        let name_len = source
            .bytes()
            .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
            .count();
        let name = source.get(..name_len).unwrap_or("");
        let rest = source.get(name_len..).unwrap_or("");
        if name.is_empty() || name.starts_with(|c: char| c.is_ascii_digit()) {
            return Err(format!(
                "`{program} {source}` is not a known read-only form"
            ));
        }
        if rest.is_empty() {
            check_assignment_name(name, None)?;
        } else if rest.starts_with('=') {
            let value = arg.lit().and_then(|l| l.split_once('=')).map(|(_, v)| v);
            check_assignment_name(name, Some(value))?;
        } else {
            return Err(format!(
                "`{program} {source}` is not a known read-only form"
            ));
        }
    }
    Ok(())
}

pub(super) fn test(program: &str, args: &[WordInfo]) -> Verdict {
    if args.iter().any(|a| matches!(a.lit(), Some("-v" | "-R"))) {
        return Err(format!(
            "`{program} -v` evaluates an array index, which is not checked"
        ));
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
        Err(format!(
            "`{program}` gets arguments known only when the command runs, which could become `-v`"
        ))
    }
}

pub(super) fn printf(args: &[WordInfo]) -> Verdict {
    match args.first() {
        None => Ok(()),
        Some(first) => match first.lit() {
            Some(text) if text == "--" || !text.starts_with('-') => Ok(()),
            Some(text) => Err(format!(
                "`printf {text}` assigns a variable or is not a known form"
            )),
            None => Err(format!(
                "`printf` gets `{}` first, known only when the command runs, which could be `-v`",
                first.source
            )),
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
                return Err(format!("`set -o {arg}` is not a known read-only form"));
            }
            expect_name = false;
            continue;
        }
        let flags = arg.strip_prefix('-').or_else(|| arg.strip_prefix('+'));
        match flags {
            Some(flags) if !flags.is_empty() && flags.chars().all(|c| "euxvfCo".contains(c)) => {
                expect_name = flags.contains('o');
            }
            _ => return Err(format!("`set {arg}` is not a known read-only form")),
        }
    }
    if expect_name {
        return Err("`set -o` alone is not a known read-only form".to_owned());
    }
    Ok(())
}

/// `read` only assigns its variables: harmless names only (rule 10 of the module doc).
pub(super) fn read(args: &[WordInfo]) -> Verdict {
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        i += 1;
        let Some(text) = arg.lit() else {
            return Err(format!(
                "`read` gets `{}`, known only when the command runs",
                arg.source
            ));
        };
        match text {
            "-r" | "-s" | "-e" => {}
            "-d" | "-n" | "-N" | "-p" | "-t" | "-u" => i += 1,
            "-a" => {
                let name = args.get(i).and_then(WordInfo::lit).unwrap_or("");
                check_assignment_name(name, None)?;
                i += 1;
            }
            _ if text.starts_with('-') => {
                return Err(format!("`read {text}` is not a known read-only form"));
            }
            name => check_assignment_name(name, None)?,
        }
    }
    Ok(())
}

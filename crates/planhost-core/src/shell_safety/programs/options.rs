//! The readers that an option or an operand turns into writers: `fd`, `rg`, `sort`, `uniq`,
//! `xxd`, `tree`, `date`, `file`, `base64` and `hostname`. Each rule reads the fixed arguments
//! and names the first one that writes a file, runs a program or changes the system.

use crate::shell_safety::Verdict;
use crate::shell_safety::programs_util::long_is;
use crate::shell_safety::reason::{Effect, NotProven};

use super::short_has;

/// `program option` does `effect`.
pub(super) fn option(program: &str, option: &str, effect: Effect) -> NotProven {
    NotProven::WritingOption {
        program: program.to_owned(),
        option: option.to_owned(),
        effect,
    }
}

pub(super) fn fd(args: &[&str]) -> Verdict {
    for arg in args {
        if short_has(arg, 'x')
            || short_has(arg, 'X')
            || long_is(arg, "exec")
            || long_is(arg, "exec-batch")
        {
            return Err(option("fd", arg, Effect::RunsCommandOnEachFile));
        }
    }
    Ok(())
}

pub(super) fn rg(args: &[&str]) -> Verdict {
    for arg in args {
        if long_is(arg, "pre") || long_is(arg, "hostname-bin") {
            return Err(option("rg", arg, Effect::RunsCommand));
        }
        if long_is(arg, "search-zip") || short_has(arg, 'z') {
            return Err(option("rg", arg, Effect::RunsDecompressors));
        }
    }
    Ok(())
}

pub(super) fn sort(args: &[&str]) -> Verdict {
    for arg in args {
        if long_is(arg, "output") || short_has(arg, 'o') {
            return Err(option("sort", "-o", Effect::WritesOutputToFile));
        }
        if long_is(arg, "compress-program") {
            return Err(option("sort", "--compress-program", Effect::RunsProgram));
        }
    }
    Ok(())
}

/// Counts operands, skipping the values of `valued` short options (attached or next).
fn operands<'a>(args: &[&'a str], valued: &[char]) -> Vec<&'a str> {
    let mut out = Vec::new();
    let mut i = 0;
    let mut options_done = false;
    while let Some(arg) = args.get(i) {
        i += 1;
        if options_done || *arg == "-" || !arg.starts_with('-') {
            out.push(*arg);
        } else if *arg == "--" {
            options_done = true;
        } else if arg.starts_with("--") {
            // Long options here take their value with `=`.
        } else {
            let mut chars = arg.chars().skip(1);
            while let Some(c) = chars.next() {
                if valued.contains(&c) {
                    if chars.next().is_none() {
                        i += 1;
                    }
                    break;
                }
            }
        }
    }
    out
}

pub(super) fn uniq(args: &[&str]) -> Verdict {
    match operands(args, &['f', 's', 'w']).get(1) {
        Some(out) => Err(NotProven::SecondOperand {
            program: "uniq",
            operand: (*out).to_owned(),
        }),
        None => Ok(()),
    }
}

pub(super) fn xxd(args: &[&str]) -> Verdict {
    // xxd also spells its options as words (`-cols 8`): every `-word` taking a value starts
    // with one of these letters, so skipping the next argument after them undercounts nothing
    // but values.
    let mut count = Vec::new();
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        i += 1;
        if *arg == "-" || !arg.starts_with('-') {
            count.push(*arg);
        } else if matches!(
            *arg,
            "-c" | "-cols"
                | "-g"
                | "-groupsize"
                | "-l"
                | "-len"
                | "-s"
                | "-seek"
                | "-o"
                | "-offset"
                | "-n"
                | "-name"
        ) {
            i += 1;
        }
    }
    match count.get(1) {
        Some(out) => Err(NotProven::SecondOperand {
            program: "xxd",
            operand: (*out).to_owned(),
        }),
        None => Ok(()),
    }
}

pub(super) fn tree(args: &[&str]) -> Verdict {
    for arg in args {
        if short_has(arg, 'o') || long_is(arg, "output") {
            return Err(option("tree", "-o", Effect::WritesListingToFile));
        }
        if short_has(arg, 'R') {
            return Err(option("tree", "-R", Effect::WritesTreeHtml));
        }
    }
    Ok(())
}

pub(super) fn date(args: &[&str]) -> Verdict {
    let mut value_next = false;
    for arg in args {
        if short_has(arg, 's') || long_is(arg, "set") {
            return Err(option("date", "-s", Effect::SetsClock));
        }
        if std::mem::take(&mut value_next) {
            continue;
        }
        if matches!(
            *arg,
            "-d" | "--date" | "-f" | "--file" | "-r" | "--reference"
        ) {
            value_next = true;
        } else if !arg.starts_with('-') && !arg.starts_with('+') {
            return Err(option("date", arg, Effect::SetsClock));
        }
    }
    Ok(())
}

pub(super) fn file(args: &[&str]) -> Verdict {
    for arg in args {
        if short_has(arg, 'C') || long_is(arg, "compile") {
            return Err(option("file", "-C", Effect::WritesMagicFile));
        }
    }
    Ok(())
}

pub(super) fn base64(args: &[&str]) -> Verdict {
    for arg in args {
        if short_has(arg, 'o') || long_is(arg, "output") {
            return Err(option("base64", "-o", Effect::WritesOutputToFile));
        }
    }
    Ok(())
}

pub(super) fn hostname(args: &[&str]) -> Verdict {
    const DISPLAY: &[&str] = &[
        "-s",
        "--short",
        "-f",
        "--fqdn",
        "--long",
        "-d",
        "--domain",
        "-i",
        "--ip-address",
        "-I",
        "--all-ip-addresses",
        "-A",
        "--all-fqdns",
        "-a",
        "--alias",
    ];
    match args.iter().find(|a| !DISPLAY.contains(a)) {
        None => Ok(()),
        Some(arg) if arg.starts_with('-') => Err(NotProven::UnknownForm {
            program: "hostname".to_owned(),
            argument: (*arg).to_owned(),
        }),
        Some(arg) => Err(option("hostname", arg, Effect::SetsHostName)),
    }
}

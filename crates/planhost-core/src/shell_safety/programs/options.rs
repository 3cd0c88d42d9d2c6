//! The readers that an option or an operand turns into writers: `fd`, `rg`, `sort`, `uniq`,
//! `xxd`, `tree`, `date`, `file`, `base64` and `hostname`. Each rule reads the fixed arguments
//! and names the first one that writes a file, runs a program or changes the system.

use crate::shell_safety::Verdict;
use crate::shell_safety::programs_util::long_is;

use super::short_has;

pub(super) fn fd(args: &[&str]) -> Verdict {
    for arg in args {
        if short_has(arg, 'x')
            || short_has(arg, 'X')
            || long_is(arg, "exec")
            || long_is(arg, "exec-batch")
        {
            return Err(format!("`fd {arg}` runs a command on each file"));
        }
    }
    Ok(())
}

pub(super) fn rg(args: &[&str]) -> Verdict {
    for arg in args {
        if long_is(arg, "pre") || long_is(arg, "hostname-bin") {
            return Err(format!("`rg {arg}` runs a command"));
        }
        if long_is(arg, "search-zip") || short_has(arg, 'z') {
            return Err(format!("`rg {arg}` runs decompression programs"));
        }
    }
    Ok(())
}

pub(super) fn sort(args: &[&str]) -> Verdict {
    for arg in args {
        if long_is(arg, "output") || short_has(arg, 'o') {
            return Err("`sort -o` writes its output to a file".to_owned());
        }
        if long_is(arg, "compress-program") {
            return Err("`sort --compress-program` runs a program".to_owned());
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
        Some(out) => Err(format!("`uniq` writes to its second operand `{out}`")),
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
        Some(out) => Err(format!("`xxd` writes to its second operand `{out}`")),
        None => Ok(()),
    }
}

pub(super) fn tree(args: &[&str]) -> Verdict {
    for arg in args {
        if short_has(arg, 'o') || long_is(arg, "output") {
            return Err("`tree -o` writes its listing to a file".to_owned());
        }
        if short_has(arg, 'R') {
            return Err("`tree -R` writes `00Tree.html` into each directory".to_owned());
        }
    }
    Ok(())
}

pub(super) fn date(args: &[&str]) -> Verdict {
    let mut value_next = false;
    for arg in args {
        if short_has(arg, 's') || long_is(arg, "set") {
            return Err("`date -s` sets the system clock".to_owned());
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
            return Err(format!("`date {arg}` sets the system clock"));
        }
    }
    Ok(())
}

pub(super) fn file(args: &[&str]) -> Verdict {
    for arg in args {
        if short_has(arg, 'C') || long_is(arg, "compile") {
            return Err("`file -C` writes a compiled magic file".to_owned());
        }
    }
    Ok(())
}

pub(super) fn base64(args: &[&str]) -> Verdict {
    for arg in args {
        if short_has(arg, 'o') || long_is(arg, "output") {
            return Err("`base64 -o` writes its output to a file".to_owned());
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
        Some(arg) if arg.starts_with('-') => {
            Err(format!("`hostname {arg}` is not a known read-only form"))
        }
        Some(arg) => Err(format!("`hostname {arg}` sets the host name")),
    }
}

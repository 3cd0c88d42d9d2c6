//! Wrappers: programs that run another command (`exec`, `builtin`, `command`, `time`, `nice`,
//! `timeout`, `stdbuf`, `env`, `xargs`, `sh -c`). Each rule skips the wrapper's own options and
//! then checks the command it runs as any other with [`check_invocation`]: `xargs` with unknown
//! arguments for its input lines, `sh -c` by classifying its script, `env` with its assignments
//! held to the harmless names.

use crate::shell_safety::words::WordInfo;
use crate::shell_safety::{Verdict, check_assignment_name, classify_script};

use super::check_invocation;

/// A wrapper: options (`flags` alone, `valued` followed by a value, attached or not), then the
/// wrapped command. No command: the wrapper alone reads nothing and writes nothing.
pub(super) fn wrapped(
    program: &str,
    args: &[WordInfo],
    depth: usize,
    flags: &[&str],
    valued: &[&str],
) -> Verdict {
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        let Some(text) = arg.lit() else {
            return Err(format!(
                "`{program}` runs `{}`, known only when the command runs",
                arg.source
            ));
        };
        if text == "--" {
            i += 1;
            break;
        }
        if !text.starts_with('-') || text == "-" {
            break;
        }
        if flags.contains(&text) {
            i += 1;
        } else if valued.contains(&text) {
            i += 2;
        } else if valued
            .iter()
            .any(|v| text.starts_with(v) || long_value(text, v))
        {
            i += 1;
        } else {
            return Err(format!("`{program} {text}` is not a known read-only form"));
        }
    }
    run_wrapped(program, args.get(i..).unwrap_or(&[]), depth)
}

/// `--output=L` for the short `-o` of `stdbuf`.
fn long_value(text: &str, short: &str) -> bool {
    let long = match short {
        "-i" => "--input=",
        "-o" => "--output=",
        "-e" => "--error=",
        _ => return false,
    };
    text.starts_with(long)
}

fn run_wrapped(wrapper: &str, rest: &[WordInfo], depth: usize) -> Verdict {
    match rest.split_first() {
        None => Ok(()),
        Some((name, args)) => check_invocation(name, args, depth)
            .map_err(|inner| format!("`{wrapper}` runs a command: {inner}")),
    }
}

pub(super) fn nice(args: &[WordInfo], depth: usize) -> Verdict {
    let mut i = 0;
    while let Some(text) = args.get(i).and_then(WordInfo::lit) {
        if text == "-n" {
            i += 2;
        } else if text.starts_with("--adjustment=")
            || (text.len() > 1
                && text.starts_with('-')
                && text.bytes().skip(1).all(|b| b.is_ascii_digit()))
        {
            i += 1;
        } else {
            break;
        }
    }
    run_wrapped("nice", args.get(i..).unwrap_or(&[]), depth)
}

pub(super) fn timeout(args: &[WordInfo], depth: usize) -> Verdict {
    let mut i = 0;
    while let Some(text) = args.get(i).and_then(WordInfo::lit) {
        match text {
            "-s" | "-k" | "--signal" | "--kill-after" => i += 2,
            "--preserve-status" | "--foreground" | "-v" | "--verbose" => i += 1,
            _ if text.starts_with("--signal=") || text.starts_with("--kill-after=") => i += 1,
            _ if text.starts_with('-') => {
                return Err(format!("`timeout {text}` is not a known read-only form"));
            }
            _ => break,
        }
    }
    // The duration.
    match args.get(i) {
        Some(duration) if duration.lit().is_some() => {
            run_wrapped("timeout", args.get(i + 1..).unwrap_or(&[]), depth)
        }
        Some(duration) => Err(format!(
            "`timeout` gets `{}`, known only when the command runs",
            duration.source
        )),
        None => Ok(()),
    }
}

pub(super) fn env(args: &[WordInfo], depth: usize) -> Verdict {
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        let Some(text) = arg.lit() else {
            return Err(format!(
                "`env` gets `{}`, known only when the command runs",
                arg.source
            ));
        };
        match text {
            "-i" | "--ignore-environment" | "-0" | "--null" | "-" => i += 1,
            "-u" | "--unset" | "-C" | "--chdir" => i += 2,
            _ if text.starts_with("--unset=") || text.starts_with("--chdir=") => i += 1,
            _ if text.starts_with('-') => {
                return Err(format!("`env {text}` is not a known read-only form"));
            }
            _ => match text.split_once('=') {
                Some((name, value)) => {
                    check_assignment_name(name, Some(Some(value)))?;
                    i += 1;
                }
                None => break,
            },
        }
    }
    run_wrapped("env", args.get(i..).unwrap_or(&[]), depth)
}

pub(super) fn xargs(args: &[WordInfo], depth: usize) -> Verdict {
    let mut i = 0;
    let mut replaces = false;
    while let Some(arg) = args.get(i) {
        let Some(text) = arg.lit() else {
            return Err(format!(
                "`xargs` gets `{}`, known only when the command runs",
                arg.source
            ));
        };
        match text {
            "-0" | "--null" | "-r" | "--no-run-if-empty" | "-t" | "--verbose" | "-x" | "--exit" => {
                i += 1;
            }
            "-n" | "-L" | "-s" | "-P" | "-d" | "-E" | "-a" => i += 2,
            "-I" => {
                replaces = true;
                i += 2;
            }
            "-i" => {
                replaces = true;
                i += 1;
            }
            "--" => {
                i += 1;
                break;
            }
            _ if text.starts_with("--replace")
                || text.starts_with("-I")
                || text.starts_with("-i") =>
            {
                replaces = true;
                i += 1;
            }
            _ if [
                "--max-args=",
                "--max-lines=",
                "--max-chars=",
                "--max-procs=",
                "--delimiter=",
                "--eof=",
                "--arg-file=",
            ]
            .iter()
            .any(|p| text.starts_with(p))
                || ["-n", "-L", "-s", "-P", "-d", "-E", "-a"]
                    .iter()
                    .any(|p| text.starts_with(p)) =>
            {
                i += 1;
            }
            _ if text.starts_with('-') => {
                return Err(format!("`xargs {text}` is not a known read-only form"));
            }
            _ => break,
        }
    }
    let rest = args.get(i..).unwrap_or(&[]);
    let Some((name, wrapped_args)) = rest.split_first() else {
        // xargs alone runs `echo`.
        return Ok(());
    };
    let unknown = WordInfo {
        literal: None,
        may_split: true,
        source: "(input lines)".to_owned(),
        fixed_prefix: None,
    };
    let mut with_input: Vec<WordInfo> = if replaces {
        wrapped_args
            .iter()
            .map(|a| WordInfo {
                literal: None,
                may_split: true,
                source: a.source.clone(),
                fixed_prefix: None,
            })
            .collect()
    } else {
        wrapped_args.to_vec()
    };
    with_input.push(unknown);
    check_invocation(name, &with_input, depth)
        .map_err(|inner| format!("`xargs` runs a command on its input: {inner}"))
}

pub(super) fn shell_c(program: &str, args: &[WordInfo], depth: usize) -> Verdict {
    let flag = args.first().and_then(WordInfo::lit);
    let script = args.get(1);
    match (flag, script) {
        (Some("-c" | "-lc"), Some(script)) => {
            let Some(text) = script.lit() else {
                return Err(format!(
                    "`{program} -c` runs `{}`, known only when the command runs",
                    script.source
                ));
            };
            classify_script(text, depth + 1)
                .map_err(|inner| format!("`{program} -c` runs `{}`: {inner}", text.trim()))
        }
        _ => Err(format!(
            "`{program}` runs a script, never proven read-only except `{program} -c 'script'`"
        )),
    }
}

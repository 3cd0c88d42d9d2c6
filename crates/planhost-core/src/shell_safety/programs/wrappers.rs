//! Wrappers: programs that run another command (`exec`, `builtin`, `command`, `time`, `nice`,
//! `timeout`, `stdbuf`, `env`, `xargs`, `sh -c`). Each rule skips the wrapper's own options and
//! then checks the command it runs as any other with [`check_invocation`]: `xargs` with unknown
//! arguments for its input lines, `sh -c` by classifying its script, `env` with its assignments
//! held to the harmless names.

use crate::shell_safety::reason::NotProven;
use crate::shell_safety::walk::Walker;
use crate::shell_safety::words::WordInfo;
use crate::shell_safety::{Verdict, check_assignment_name, classify_script};

use super::check_invocation;

/// `program text` is not a known form, and the command it runs cannot be found.
fn unknown_form(walker: &mut Walker<'_>, program: &str, text: &str) -> NotProven {
    walker.unknown_code();
    NotProven::UnknownForm {
        program: program.to_owned(),
        argument: text.to_owned(),
    }
}

/// `program` gets `arg`, known only at run time, where the command it runs is looked for.
fn at_run_time(walker: &mut Walker<'_>, program: &'static str, arg: &WordInfo) -> NotProven {
    walker.unknown_code();
    NotProven::ArgumentAtRunTime {
        program,
        argument: arg.source.to_owned(),
    }
}

pub(super) fn exec(walker: &mut Walker<'_>, _: &str, args: &[WordInfo]) -> Verdict {
    wrapped(walker, "exec", args, &["-c", "-l"], &["-a"])
}

pub(super) fn builtin(walker: &mut Walker<'_>, _: &str, args: &[WordInfo]) -> Verdict {
    wrapped(walker, "builtin", args, &[], &[])
}

pub(super) fn time(walker: &mut Walker<'_>, _: &str, args: &[WordInfo]) -> Verdict {
    wrapped(walker, "time", args, &["-p"], &[])
}

pub(super) fn stdbuf(walker: &mut Walker<'_>, _: &str, args: &[WordInfo]) -> Verdict {
    wrapped(walker, "stdbuf", args, &[], &["-i", "-o", "-e"])
}

/// `command -v`/`-V` only looks a name up; otherwise it runs the command.
pub(super) fn command(walker: &mut Walker<'_>, _: &str, args: &[WordInfo]) -> Verdict {
    if args
        .first()
        .and_then(WordInfo::lit)
        .is_some_and(|a| a == "-v" || a == "-V")
    {
        Ok(())
    } else {
        wrapped(walker, "command", args, &["-p"], &[])
    }
}

/// `nohup` writes `nohup.out` when its output is a terminal: never proven, but what it runs
/// counts among the line's programs.
pub(super) fn nohup(walker: &mut Walker<'_>, _: &str, args: &[WordInfo]) -> Verdict {
    let _ = wrapped(walker, "nohup", args, &[], &[]);
    Err(NotProven::Nohup)
}

/// `setsid` starts its command in a new session, detached from the run's process group (the
/// host's runner still holds it): never proven, but what it runs counts among the line's
/// programs.
pub(super) fn setsid(walker: &mut Walker<'_>, _: &str, args: &[WordInfo]) -> Verdict {
    let _ = wrapped(
        walker,
        "setsid",
        args,
        &["-c", "--ctty", "-f", "--fork", "-w", "--wait"],
        &[],
    );
    Err(NotProven::Setsid)
}

/// A wrapper: options (`flags` alone, `valued` followed by a value, attached or not), then the
/// wrapped command. No command: the wrapper alone reads nothing and writes nothing.
fn wrapped(
    walker: &mut Walker<'_>,
    program: &'static str,
    args: &[WordInfo],
    flags: &[&str],
    valued: &[&str],
) -> Verdict {
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        let Some(text) = arg.lit() else {
            walker.unknown_code();
            return Err(NotProven::RunsUnknown {
                program: program.to_owned(),
                argument: arg.source.to_owned(),
            });
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
            return Err(unknown_form(walker, program, text));
        }
    }
    run_wrapped(walker, program, args.get(i..).unwrap_or(&[]))
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

fn run_wrapped(walker: &mut Walker<'_>, wrapper: &'static str, rest: &[WordInfo]) -> Verdict {
    match rest.split_first() {
        None => Ok(()),
        Some((name, args)) => {
            check_invocation(walker, name, args).map_err(|inner| NotProven::Wrapped {
                wrapper,
                inner: Box::new(inner),
            })
        }
    }
}

pub(super) fn nice(walker: &mut Walker<'_>, _: &str, args: &[WordInfo]) -> Verdict {
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
    run_wrapped(walker, "nice", args.get(i..).unwrap_or(&[]))
}

pub(super) fn timeout(walker: &mut Walker<'_>, _: &str, args: &[WordInfo]) -> Verdict {
    let mut i = 0;
    while let Some(text) = args.get(i).and_then(WordInfo::lit) {
        match text {
            "-s" | "-k" | "--signal" | "--kill-after" => i += 2,
            "--preserve-status" | "--foreground" | "-v" | "--verbose" => i += 1,
            _ if text.starts_with("--signal=") || text.starts_with("--kill-after=") => i += 1,
            _ if text.starts_with('-') => return Err(unknown_form(walker, "timeout", text)),
            _ => break,
        }
    }
    // The duration.
    match args.get(i) {
        Some(duration) if duration.lit().is_some() => {
            run_wrapped(walker, "timeout", args.get(i + 1..).unwrap_or(&[]))
        }
        Some(duration) => Err(at_run_time(walker, "timeout", duration)),
        None => Ok(()),
    }
}

pub(super) fn env(walker: &mut Walker<'_>, _: &str, args: &[WordInfo]) -> Verdict {
    let mut verdict = Ok(());
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        let Some(text) = arg.lit() else {
            return verdict.and(Err(at_run_time(walker, "env", arg)));
        };
        match text {
            "-i" | "--ignore-environment" | "-0" | "--null" | "-" => i += 1,
            "-u" | "--unset" => i += 2,
            "-C" | "--chdir" => {
                walker.found.moves = true;
                i += 2;
            }
            _ if text.starts_with("--unset=") => i += 1,
            _ if text.starts_with("--chdir=") => {
                walker.found.moves = true;
                i += 1;
            }
            _ if text.starts_with('-') => {
                return verdict.and(Err(unknown_form(walker, "env", text)));
            }
            _ => match text.split_once('=') {
                Some((name, value)) => {
                    let name = check_assignment_name(walker.found, name, Some(Some(value)));
                    verdict = verdict.and(name);
                    i += 1;
                }
                None => break,
            },
        }
    }
    verdict.and(run_wrapped(walker, "env", args.get(i..).unwrap_or(&[])))
}

pub(super) fn xargs(walker: &mut Walker<'_>, _: &str, args: &[WordInfo]) -> Verdict {
    let mut i = 0;
    let mut replaces = false;
    while let Some(arg) = args.get(i) {
        let Some(text) = arg.lit() else {
            return Err(at_run_time(walker, "xargs", arg));
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
            _ if text.starts_with('-') => return Err(unknown_form(walker, "xargs", text)),
            _ => break,
        }
    }
    let rest = args.get(i..).unwrap_or(&[]);
    let Some((name, wrapped_args)) = rest.split_first() else {
        // xargs alone runs `echo`.
        walker.found.program("echo");
        return Ok(());
    };
    let mut with_input: Vec<WordInfo> = if replaces {
        wrapped_args
            .iter()
            .map(|a| WordInfo {
                literal: None,
                may_split: true,
                source: a.source,
                fixed_prefix: None,
            })
            .collect()
    } else {
        wrapped_args.to_vec()
    };
    with_input.push(WordInfo::unknown("(input lines)"));
    check_invocation(walker, name, &with_input).map_err(|inner| NotProven::Xargs {
        inner: Box::new(inner),
    })
}

/// `sh -c 'script'`: the script is classified; any other use runs a script file or input.
pub(super) fn shell_c(walker: &mut Walker<'_>, program: &str, args: &[WordInfo]) -> Verdict {
    let flag = args.first().and_then(WordInfo::lit);
    let script = args.get(1);
    match (flag, script) {
        (Some("-c" | "-lc"), Some(script)) => {
            let form = format!("{program} -c");
            let Some(text) = script.lit() else {
                walker.unknown_code();
                return Err(NotProven::RunsUnknown {
                    program: form,
                    argument: script.source.to_owned(),
                });
            };
            classify_script(&mut walker.nested(), text).map_err(|inner| NotProven::Runs {
                form,
                script: text.trim().to_owned(),
                inner: Box::new(inner),
            })
        }
        _ => {
            walker.unknown_code();
            Err(NotProven::ShellScript {
                program: program.to_owned(),
            })
        }
    }
}

//! `find`: its `-exec` `-execdir` `-ok` `-okdir` actions are classified as the commands they run
//! on each file (their `{}` arguments unknown), and its other arguments may name no action that
//! deletes a file, writes a list into one or runs a command.

use crate::shell_safety::Verdict;
use crate::shell_safety::words::WordInfo;

use super::{check_invocation, checked};

/// `find` whose `-exec cmd ... ;` actions run known readers: each action is classified as a
/// command whose `{}` arguments are unknown; the rest is the `find` rule.
pub(super) fn find_with_exec(args: &[WordInfo], depth: usize) -> Verdict {
    let mut rest: Vec<WordInfo> = Vec::with_capacity(args.len());
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        i += 1;
        let Some(op @ ("-exec" | "-execdir" | "-ok" | "-okdir")) = arg.lit() else {
            rest.push(arg.clone());
            continue;
        };
        let start = i;
        while args
            .get(i)
            .is_some_and(|a| !matches!(a.lit(), Some(";" | "+")))
        {
            i += 1;
        }
        if args.get(i).is_none() {
            return Err(format!("`find {op}` without its closing `;` or `+`"));
        }
        let words: Vec<WordInfo> = args
            .get(start..i)
            .unwrap_or(&[])
            .iter()
            .map(|w| match w.lit() {
                Some(text) if text.contains("{}") => WordInfo {
                    literal: None,
                    may_split: false,
                    source: w.source.clone(),
                    fixed_prefix: None,
                },
                _ => w.clone(),
            })
            .collect();
        i += 1;
        let Some((name, exec_args)) = words.split_first() else {
            return Err(format!("`find {op}` without a command"));
        };
        check_invocation(name, exec_args, depth)
            .map_err(|inner| format!("`find {op}` runs a command on each file: {inner}"))?;
    }
    checked("find", find, &rest)
}

fn find(args: &[&str]) -> Verdict {
    for arg in args {
        let reason = match *arg {
            "-delete" => "`find -delete` deletes files",
            "-exec" | "-execdir" | "-ok" | "-okdir" => "runs a command on each file",
            "-fprint" | "-fprint0" | "-fprintf" | "-fls" => "writes its list into a file",
            _ => continue,
        };
        return Err(if arg == &"-delete" {
            reason.to_owned()
        } else {
            format!("`find {arg}` {reason}")
        });
    }
    Ok(())
}

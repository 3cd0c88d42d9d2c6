//! `find`: its `-exec` `-execdir` `-ok` `-okdir` actions are classified as the commands they run
//! on each file (their `{}` arguments unknown), and its other arguments may name no action that
//! deletes a file, writes a list into one or runs a command.

use crate::shell_safety::Verdict;
use crate::shell_safety::reason::{Effect, NotProven};
use crate::shell_safety::walk::Walker;
use crate::shell_safety::words::WordInfo;

use super::options::option;
use super::{UnknownArgs, check_invocation, checked};

/// `find` whose `-exec cmd ... ;` actions run known readers: each action is classified as a
/// command whose `{}` arguments are unknown; the rest is the `find` rule.
pub(super) fn find_with_exec(walker: &mut Walker<'_>, _: &str, args: &[WordInfo]) -> Verdict {
    let mut verdict = Ok(());
    let mut rest: Vec<WordInfo> = Vec::with_capacity(args.len());
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        i += 1;
        let Some(op @ ("-exec" | "-execdir" | "-ok" | "-okdir")) = arg.lit() else {
            rest.push(arg.clone());
            continue;
        };
        if matches!(op, "-execdir" | "-okdir") {
            // The command runs in each file's directory.
            walker.found.moves = true;
        }
        let start = i;
        while args
            .get(i)
            .is_some_and(|a| !matches!(a.lit(), Some(";" | "+")))
        {
            i += 1;
        }
        let words: Vec<WordInfo> = args
            .get(start..i)
            .unwrap_or(&[])
            .iter()
            .map(|w| match w.lit() {
                Some(text) if text.contains("{}") => WordInfo {
                    literal: None,
                    may_split: false,
                    source: w.source,
                    fixed_prefix: None,
                },
                _ => w.clone(),
            })
            .collect();
        let op = op.to_owned();
        let unclosed = args.get(i).is_none();
        i += 1;
        let action = match words.split_first() {
            // `find` itself refuses the line; nothing runs.
            _ if unclosed => Err(NotProven::FindExecUnclosed { op }),
            None => Err(NotProven::FindExecEmpty { op }),
            Some((name, exec_args)) => {
                check_invocation(walker, name, exec_args).map_err(|inner| NotProven::FindExec {
                    op,
                    inner: Box::new(inner),
                })
            }
        };
        verdict = verdict.and(action);
    }
    verdict.and(checked("find", UnknownArgs::FixedStart, find, &rest))
}

fn find(args: &[&str]) -> Verdict {
    for arg in args {
        let effect = match *arg {
            "-delete" => Effect::DeletesFiles,
            "-exec" | "-execdir" | "-ok" | "-okdir" => Effect::RunsCommandOnEachFile,
            "-fprint" | "-fprint0" | "-fprintf" | "-fls" => Effect::WritesListIntoFile,
            _ => continue,
        };
        return Err(option("find", arg, effect));
    }
    Ok(())
}

//! The table of known programs and the argument rules that keep each one a reader.
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
//! | `git` | read subcommands only, see [`git`]; no global `-c` `--config-env` `--exec-path` `-p` `--paginate`, no `--output` `--ext-diff`; fixed | configuration and pagers run programs |
//! | `command -v`/`-V` | any | it only looks a name up |
//!
//! Long options are matched by prefix (`--out` is `--output` to getopt and git), short options
//! inside clusters (`-ni` is `-n -i`). Every argument is scanned, even after `--`, because a
//! `--` may be the value of an option. Stricter than needed costs a question, never a file.

use super::words::WordInfo;
use super::{Verdict, check_assignment_name, classify_script, sed};

/// Programs no argument can make write (rule 14 of the module doc).
const ANY_ARGS: &[&str] = &[
    "ls",
    "cat",
    "head",
    "tail",
    "wc",
    "grep",
    "egrep",
    "fgrep",
    "echo",
    "pwd",
    "true",
    "false",
    ":",
    "which",
    "type",
    "whoami",
    "id",
    "uname",
    "stat",
    "du",
    "df",
    "basename",
    "dirname",
    "realpath",
    "readlink",
    "cut",
    "tr",
    "nl",
    "tac",
    "rev",
    "paste",
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
    "jq",
    "od",
    "hexdump",
    "strings",
    "column",
    "fold",
    "seq",
    "sleep",
    "expr",
    "ps",
    "printenv",
    "nproc",
    "cd",
    "pushd",
    "popd",
    "dirs",
];

/// Checks one simple command: `name` with `args`.
pub(super) fn check_invocation(name: &WordInfo, args: &[WordInfo], depth: usize) -> Verdict {
    let Some(raw) = name.lit() else {
        return Err(format!(
            "the program name `{}` is only known when the command runs",
            name.source
        ));
    };
    let program = raw
        .strip_prefix("/usr/bin/")
        .or_else(|| raw.strip_prefix("/bin/"))
        .unwrap_or(raw);
    if program.contains('/') || program.is_empty() {
        return Err(format!("`{raw}` is not a known read-only program"));
    }
    check_program(program, args, depth)
}

fn check_program(program: &str, args: &[WordInfo], depth: usize) -> Verdict {
    match program {
        "eval" => Err("`eval` runs a string as a command".to_owned()),
        "source" | "." => Err(format!("`{program}` runs a script file")),
        "nohup" => Err("`nohup` writes `nohup.out` when its output is a terminal".to_owned()),
        "exec" => wrapped(program, args, depth, &["-c", "-l"], &["-a"]),
        "builtin" => wrapped(program, args, depth, &[], &[]),
        "command" => {
            if args
                .first()
                .and_then(WordInfo::lit)
                .is_some_and(|a| a == "-v" || a == "-V")
            {
                Ok(())
            } else {
                wrapped(program, args, depth, &["-p"], &[])
            }
        }
        "time" => wrapped(program, args, depth, &["-p"], &[]),
        "nice" => nice(args, depth),
        "timeout" => timeout(args, depth),
        "stdbuf" => wrapped(program, args, depth, &[], &["-i", "-o", "-e"]),
        "env" => env(args, depth),
        "xargs" => xargs(args, depth),
        "sh" | "bash" | "dash" => shell_c(program, args, depth),
        "export" | "declare" | "typeset" | "local" | "readonly" => declaration(program, args),
        _ if ANY_ARGS.contains(&program) => Ok(()),
        "test" => test(program, args),
        "[" => match args.split_last() {
            Some((last, rest)) if last.lit() == Some("]") => test(program, rest),
            _ => Err("`[` without a closing `]`".to_owned()),
        },
        "printf" => printf(args),
        "read" => read(args),
        "find" => find_with_exec(args, depth),
        _ => {
            let Some(rule) = checked_rule(program) else {
                return Err(format!("`{program}` is not a known read-only program"));
            };
            checked(program, rule, args)
        }
    }
}

/// `find` whose `-exec cmd ... ;` actions run known readers: each action is classified as a
/// command whose `{}` arguments are unknown; the rest is the `find` rule.
fn find_with_exec(args: &[WordInfo], depth: usize) -> Verdict {
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

/// A program of the checked table on its arguments.
fn checked(program: &str, rule: Rule, args: &[WordInfo]) -> Verdict {
    {
        {
            // The fixed arguments alone first, for the most precise reason; then any unknown one.
            // A script or operand that is missing because it is unknown is no finding.
            // For programs whose rules only look for options (or count operands conservatively),
            // `src/*.rs` is checked as its fixed start `src/`: none of its words is an option.
            let globs_ok = matches!(
                program,
                "find" | "fd" | "fdfind" | "rg" | "sort" | "tree" | "file" | "base64" | "git"
            );
            let known: Vec<&str> = args
                .iter()
                .filter_map(|a| {
                    a.lit().or(if globs_ok {
                        a.fixed_prefix.as_deref()
                    } else {
                        None
                    })
                })
                .collect();
            match rule(&known) {
                Err(reason)
                    if !reason.starts_with("could not") && !reason.contains("without a") =>
                {
                    Err(reason)
                }
                _ if known.len() < args.len() => fixed_args(program, args, globs_ok).map(drop),
                verdict => verdict,
            }
        }
    }
}

type Rule = fn(&[&str]) -> Verdict;

fn checked_rule(program: &str) -> Option<Rule> {
    Some(match program {
        "fd" | "fdfind" => fd,
        "rg" => rg,
        "sed" => sed::check_sed,
        "sort" => sort,
        "uniq" => uniq,
        "xxd" => xxd,
        "tree" => tree,
        "date" => date,
        "file" => file,
        "base64" => base64,
        "hostname" => hostname,
        "set" => set,
        "git" => git,
        _ => return None,
    })
}

/// The arguments as fixed strings, or why not.
fn fixed_args<'a>(
    program: &str,
    args: &'a [WordInfo],
    globs_ok: bool,
) -> Result<Vec<&'a str>, String> {
    args.iter()
        .map(|arg| {
            arg.lit()
                .or(if globs_ok { arg.fixed_prefix.as_deref() } else { None })
                .ok_or_else(|| {
                format!(
                    "`{program}` gets the argument `{}`, known only when the command runs, and some `{program}` options write",
                    arg.source
                )
            })
        })
        .collect()
}

use super::programs_util::long_is;

/// A short option cluster (`-abc`) holding `flag`.
fn short_has(arg: &str, flag: char) -> bool {
    arg.strip_prefix('-')
        .is_some_and(|rest| !rest.starts_with('-') && rest.contains(flag))
}

/// A wrapper: options (`flags` alone, `valued` followed by a value, attached or not), then the
/// wrapped command. No command: the wrapper alone reads nothing and writes nothing.
fn wrapped(
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
        Some((name, args)) => super::programs::check_invocation(name, args, depth)
            .map_err(|inner| format!("`{wrapper}` runs a command: {inner}")),
    }
}

fn nice(args: &[WordInfo], depth: usize) -> Verdict {
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

fn timeout(args: &[WordInfo], depth: usize) -> Verdict {
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

fn env(args: &[WordInfo], depth: usize) -> Verdict {
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

fn xargs(args: &[WordInfo], depth: usize) -> Verdict {
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
                i += 1
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

fn shell_c(program: &str, args: &[WordInfo], depth: usize) -> Verdict {
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

fn declaration(program: &str, args: &[WordInfo]) -> Verdict {
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

fn test(program: &str, args: &[WordInfo]) -> Verdict {
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

fn printf(args: &[WordInfo]) -> Verdict {
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

fn fd(args: &[&str]) -> Verdict {
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

fn rg(args: &[&str]) -> Verdict {
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

fn sort(args: &[&str]) -> Verdict {
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

fn uniq(args: &[&str]) -> Verdict {
    match operands(args, &['f', 's', 'w']).get(1) {
        Some(out) => Err(format!("`uniq` writes to its second operand `{out}`")),
        None => Ok(()),
    }
}

fn xxd(args: &[&str]) -> Verdict {
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

fn tree(args: &[&str]) -> Verdict {
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

fn date(args: &[&str]) -> Verdict {
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

fn file(args: &[&str]) -> Verdict {
    for arg in args {
        if short_has(arg, 'C') || long_is(arg, "compile") {
            return Err("`file -C` writes a compiled magic file".to_owned());
        }
    }
    Ok(())
}

fn base64(args: &[&str]) -> Verdict {
    for arg in args {
        if short_has(arg, 'o') || long_is(arg, "output") {
            return Err("`base64 -o` writes its output to a file".to_owned());
        }
    }
    Ok(())
}

fn hostname(args: &[&str]) -> Verdict {
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

fn set(args: &[&str]) -> Verdict {
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

/// `git`: global options, then one read subcommand.
///
/// | subcommand | rule |
/// |---|---|
/// | `status` `log` `show` `diff` `blame` `shortlog` `whatchanged` `diff-tree` `diff-files` `diff-index` `rev-list` | no `--output` (writes a file), no `--ext-diff` (runs a program) |
/// | `grep` | as above, and no `-O` `--open-files-in-pager` (runs a program) |
/// | `ls-files` `ls-tree` `rev-parse` `describe` `cat-file` `merge-base` `name-rev` `for-each-ref` `show-ref` `count-objects` `check-ignore` `check-attr` `version` `var` | any fixed arguments |
/// | `branch` `tag` | listing options only; a name only with `-l`/`--list` (a name alone creates) |
/// | `remote` | no arguments, `-v`, or `get-url` |
/// | `config` | with `--get` `--get-all` `--get-regexp` `--list` `-l` (or the `get` `list` subcommands) and display options only |
/// | `stash` | `list`, `show` |
/// | `reflog` | alone, `show`, or options (show) |
/// | `worktree` | `list` |
///
/// Global options: `-C dir`, `--no-pager`, `-P`, `--no-optional-locks`, the pathspec switches.
/// `-c`, `--config-env` set configuration (`core.pager`, `diff.external`, `core.fsmonitor` run
/// programs), `--exec-path` picks the programs git runs, `-p`/`--paginate` forces a pager;
/// anything else is not proven. `--textconv` is git's default for `diff`/`log` and its drivers
/// come only from configuration, so it is not singled out; `--no-index` only reads.
fn git(args: &[&str]) -> Verdict {
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        match *arg {
            "-C" => i += 2,
            "--no-pager"
            | "-P"
            | "--no-optional-locks"
            | "--literal-pathspecs"
            | "--no-replace-objects"
            | "--glob-pathspecs"
            | "--noglob-pathspecs"
            | "--icase-pathspecs" => i += 1,
            "-c" => {
                return Err(
                    "`git -c` sets configuration, which can run programs (`core.pager`)".to_owned(),
                );
            }
            "-p" | "--paginate" => return Err("`git -p` forces a pager program".to_owned()),
            _ if arg.starts_with("--config-env") => {
                return Err(
                    "`git --config-env` sets configuration, which can run programs".to_owned(),
                );
            }
            _ if arg.starts_with("--exec-path") => {
                return Err("`git --exec-path` chooses the programs git runs".to_owned());
            }
            _ if arg.starts_with('-') => {
                return Err(format!("`git {arg}` is not a known read-only form"));
            }
            _ => break,
        }
    }
    let Some(sub) = args.get(i) else {
        return Ok(());
    };
    if let Some(help) = args.iter().find(|a| long_is(a, "help")) {
        return Err(format!(
            "`git {sub} {help}` runs the configured help viewer (`man`, a browser)"
        ));
    }
    let rest = args.get(i + 1..).unwrap_or(&[]);
    match *sub {
        "status" | "log" | "show" | "diff" | "blame" | "shortlog" | "whatchanged" | "diff-tree"
        | "diff-files" | "diff-index" | "rev-list" => git_output_options(sub, rest),
        "grep" => {
            if let Some(arg) = rest
                .iter()
                .find(|a| short_has(a, 'O') || long_is(a, "open-files-in-pager"))
            {
                return Err(format!("`git grep {arg}` runs a pager program"));
            }
            git_output_options(sub, rest)
        }
        "ls-files" | "ls-tree" | "rev-parse" | "describe" | "cat-file" | "merge-base"
        | "name-rev" | "for-each-ref" | "show-ref" | "count-objects" | "check-ignore"
        | "check-attr" | "version" | "var" => Ok(()),
        "branch" => git_listing(
            "branch",
            rest,
            &[
                "-a",
                "--all",
                "-r",
                "--remotes",
                "-v",
                "-vv",
                "--verbose",
                "--show-current",
                "-i",
                "--ignore-case",
                "--no-color",
                "--omit-empty",
            ],
            &[
                "--contains",
                "--no-contains",
                "--merged",
                "--no-merged",
                "--points-at",
                "--sort",
                "--format",
                "--color",
                "--column",
                "--abbrev",
            ],
            "creates a branch",
        ),
        "tag" => git_listing(
            "tag",
            rest,
            &["-i", "--ignore-case", "--no-color", "--omit-empty"],
            &[
                "--contains",
                "--no-contains",
                "--merged",
                "--no-merged",
                "--points-at",
                "--sort",
                "--format",
                "--color",
                "--column",
                "-n",
            ],
            "creates a tag",
        ),
        "remote" => match rest {
            [] | ["-v" | "--verbose"] => Ok(()),
            ["get-url", ..] => Ok(()),
            _ => Err(
                "`git remote` with arguments other than `-v` or `get-url` changes remotes"
                    .to_owned(),
            ),
        },
        "config" => git_config(rest),
        "stash" => match rest.first() {
            Some(&"list") | Some(&"show") => git_output_options("stash", rest),
            _ => Err(
                "`git stash` other than `list` or `show` changes the stash and the files"
                    .to_owned(),
            ),
        },
        "reflog" => match rest.first() {
            None => Ok(()),
            Some(&"show") => git_output_options("reflog", rest),
            Some(first) if first.starts_with('-') => git_output_options("reflog", rest),
            Some(first) => Err(format!("`git reflog {first}` may change the reflog")),
        },
        "worktree" => match rest.first() {
            Some(&"list") => Ok(()),
            _ => Err("`git worktree` other than `list` changes worktrees".to_owned()),
        },
        other => Err(format!(
            "`git {other}` is not a known read-only git subcommand"
        )),
    }
}

fn git_output_options(sub: &str, rest: &[&str]) -> Verdict {
    for arg in rest {
        if long_is(arg, "output") {
            return Err(format!("`git {sub} --output` writes into a file"));
        }
        if long_is(arg, "ext-diff") {
            return Err(format!(
                "`git {sub} --ext-diff` runs an external diff program"
            ));
        }
    }
    Ok(())
}

fn git_listing(
    sub: &str,
    rest: &[&str],
    flags: &[&str],
    valued: &[&str],
    creates: &str,
) -> Verdict {
    let listing = rest.iter().any(|a| matches!(*a, "-l" | "--list"));
    let mut i = 0;
    while let Some(arg) = rest.get(i) {
        i += 1;
        if matches!(*arg, "-l" | "--list") || flags.contains(arg) {
            continue;
        }
        if valued.contains(arg) {
            i += 1;
            continue;
        }
        if valued.iter().any(|v| arg.starts_with(&format!("{v}=")))
            || (sub == "tag" && arg.starts_with("-n"))
        {
            continue;
        }
        if arg.starts_with('-') {
            return Err(format!("`git {sub} {arg}` is not a known listing form"));
        }
        if !listing {
            return Err(format!("`git {sub}` with a name {creates}"));
        }
    }
    Ok(())
}

fn git_config(rest: &[&str]) -> Verdict {
    const READS: &[&str] = &[
        "--get",
        "--get-all",
        "--get-regexp",
        "--list",
        "-l",
        "get",
        "list",
    ];
    const DISPLAY: &[&str] = &[
        "--show-origin",
        "--show-scope",
        "--global",
        "--local",
        "--system",
        "--worktree",
        "--name-only",
        "-z",
        "--null",
        "--bool",
        "--int",
        "--path",
        "--includes",
        "--no-includes",
    ];
    let Some(mode) = rest.iter().position(|a| READS.contains(a)) else {
        return Err("`git config` without `--get` or `--list` may change configuration".to_owned());
    };
    if matches!(rest.get(mode), Some(&"get" | &"list")) && mode != 0 {
        return Err(
            "`git config` with options before `get`/`list` is not a known read form".to_owned(),
        );
    }
    let mut i = 0;
    while let Some(arg) = rest.get(i) {
        i += 1;
        if READS.contains(arg)
            || DISPLAY.contains(arg)
            || arg.starts_with("--type=")
            || arg.starts_with("--default=")
        {
            continue;
        }
        if matches!(*arg, "-f" | "--file" | "--blob" | "--type" | "--default") {
            i += 1;
            continue;
        }
        if arg.starts_with('-') {
            return Err(format!("`git config {arg}` may change configuration"));
        }
    }
    Ok(())
}

/// `read` only assigns its variables: harmless names only (rule 10 of the module doc).
fn read(args: &[WordInfo]) -> Verdict {
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

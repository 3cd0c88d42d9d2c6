//! The shell command classifier: is a command line *provably read-only*?
//!
//! Plan mode runs a provably read-only Bash call without asking a person; anything else needs a
//! person's yes. A false "read-only" is a security hole (the reported bug: `find . -name
//! victim.txt -delete` ran in Plan mode and deleted a file); a false "may change files" costs
//! one question. So [`classify_command`] answers [`CommandSafety::ReadOnly`] only when it has
//! proven, for every part of the line, that it cannot create, change or delete a file nor run a
//! program that could, and otherwise names the first thing it could not prove.
//!
//! The line is parsed by `brush-parser` (the parser of the brush shell), never by regexes; a
//! line it cannot parse is not proven. Every part of the syntax tree is seen.
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
//! | 20 | nesting of substitutions deeper than 16 | may change | bounds the work |
//!
//! Harmless assignment names (rule 10): lowercase names (`f`, `dir`: no program or shell
//! feature reads a lowercase variable to run something, and lowercase names are the loop
//! variables people write) and `LANG`, `LANGUAGE`, `LC_*`, `TZ`, `NO_COLOR`, `CLICOLOR`,
//! `CLICOLOR_FORCE`, `FORCE_COLOR`, `COLUMNS`, `LINES`, `TERM`, `RUST_BACKTRACE`; and `PAGER`,
//! `GIT_PAGER`, `MANPAGER` only with the literal value `cat`.
//!
//! The result is pure and deterministic: no I/O, no environment, no clock.

mod plain;
mod programs;
mod programs_util;
mod sed;
mod words;

#[cfg(test)]
mod tests;

use brush_parser::ParserOptions;
use brush_parser::ast::{
    AndOrList, Assignment, AssignmentName, AssignmentValue, BinaryPredicate, Command,
    CommandPrefixOrSuffixItem, CompoundCommand, CompoundList, ExtendedTestExpr, IoFileRedirectKind,
    IoFileRedirectTarget, IoRedirect, Pipeline, ProcessSubstitutionKind, RedirectList,
    SimpleCommand, UnaryPredicate, Word,
};

use crate::Dialect;

use words::WordInfo;

/// What the classifier proved about a command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommandSafety {
    /// Every part of the line is a known reader with arguments that cannot make it write.
    ReadOnly,
    /// Not provably read-only; `reason` is a short sentence for a person, naming what was found,
    /// e.g. "`find -delete` deletes files", "`>` redirects output into a file", "`rm` is not a
    /// known read-only program", "PowerShell commands are never proven read-only yet".
    MayChangeFiles {
        /// What was found, for a person.
        reason: String,
    },
}

impl CommandSafety {
    /// Whether the line was proven read-only.
    pub fn is_read_only(&self) -> bool {
        matches!(self, CommandSafety::ReadOnly)
    }

    /// Why the line was not proven read-only; `None` when it was.
    pub fn reason(&self) -> Option<&str> {
        match self {
            CommandSafety::ReadOnly => None,
            CommandSafety::MayChangeFiles { reason } => Some(reason),
        }
    }
}

/// Classifies one command line in the given dialect. Pure, no I/O, deterministic.
pub fn classify_command(command: &str, dialect: Dialect) -> CommandSafety {
    let verdict = match dialect {
        Dialect::Powershell => Err("PowerShell commands are never proven read-only yet".to_owned()),
        Dialect::Cmd => Err("cmd commands are never proven read-only yet".to_owned()),
        Dialect::Posix => classify_script(command, 0),
    };
    match verdict {
        Ok(()) => CommandSafety::ReadOnly,
        Err(reason) => CommandSafety::MayChangeFiles { reason },
    }
}

/// `Ok` when proven read-only, otherwise the reason.
pub(crate) type Verdict = Result<(), String>;

/// Substitutions nested deeper than this are not proven (rule 20).
const MAX_DEPTH: usize = 16;

pub(crate) fn parser_options() -> ParserOptions {
    ParserOptions::default()
}

/// Parses and classifies a script (the whole line, or the inside of a substitution).
pub(crate) fn classify_script(script: &str, depth: usize) -> Verdict {
    if depth > MAX_DEPTH {
        return Err("the command nests substitutions too deeply to check".to_owned());
    }
    if script.trim().is_empty() {
        return Ok(());
    }
    if has_overflowing_number(script) {
        return Err("a descriptor or `~N` number is too long to check".to_owned());
    }
    if let Some(verdict) = plain::classify_plain_line(script, depth) {
        return verdict;
    }
    classify_parsed(script, depth)
}

/// [`classify_script`] through brush-parser, for lines [`plain`] does not take.
fn classify_parsed(script: &str, depth: usize) -> Verdict {
    // brush-parser 0.4 unwraps a few integer parses (guarded above); a panic it still has is
    // "not proven", never a crash of the policy.
    let parsed = std::panic::catch_unwind(|| {
        brush_parser::Parser::new(script.as_bytes(), &parser_options()).parse_program()
    });
    let Ok(Ok(program)) = parsed else {
        return Err("could not parse the command line".to_owned());
    };
    let walker = Walker { depth };
    for list in &program.complete_commands {
        walker.compound_list(list)?;
    }
    Ok(())
}

/// A run of 10 or more digits right before `<`/`>` (a descriptor, `i32` in the parser) or right
/// after `~`, `~+`, `~-` (a directory-stack index): brush-parser 0.4 panics on their overflow.
fn has_overflowing_number(script: &str) -> bool {
    let bytes = script.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if !bytes.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
            continue;
        }
        let start = i;
        while bytes.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        if i - start < 10 {
            continue;
        }
        let before = script.get(..start).unwrap_or("");
        let tilde = before.ends_with('~') || before.ends_with("~+") || before.ends_with("~-");
        if tilde || matches!(bytes.get(i), Some(b'<' | b'>')) {
            return true;
        }
    }
    false
}

struct Walker {
    depth: usize,
}

impl Walker {
    fn word(&self, word: &Word) -> Result<WordInfo, String> {
        words::analyze_word(&word.value, self.depth)
    }

    fn compound_list(&self, list: &CompoundList) -> Verdict {
        for item in &list.0 {
            self.and_or(&item.0)?;
        }
        Ok(())
    }

    fn and_or(&self, list: &AndOrList) -> Verdict {
        self.pipeline(&list.first)?;
        for next in &list.additional {
            let (brush_parser::ast::AndOr::And(pipeline) | brush_parser::ast::AndOr::Or(pipeline)) =
                next;
            self.pipeline(pipeline)?;
        }
        Ok(())
    }

    fn pipeline(&self, pipeline: &Pipeline) -> Verdict {
        for command in &pipeline.seq {
            self.command(command)?;
        }
        Ok(())
    }

    fn command(&self, command: &Command) -> Verdict {
        match command {
            Command::Simple(simple) => self.simple(simple),
            Command::Compound(compound, redirects) => {
                self.redirects(redirects.as_ref())?;
                self.compound(compound)
            }
            Command::Function(function) => Err(format!(
                "defining the function `{}` is never proven read-only",
                function.fname.value
            )),
            Command::ExtendedTest(test, redirects) => {
                self.redirects(redirects.as_ref())?;
                self.extended_test(&test.expr)
            }
        }
    }

    fn redirects(&self, redirects: Option<&RedirectList>) -> Verdict {
        for redirect in redirects.iter().flat_map(|list| list.0.iter()) {
            self.redirect(redirect)?;
        }
        Ok(())
    }

    fn compound(&self, compound: &CompoundCommand) -> Verdict {
        match compound {
            CompoundCommand::Arithmetic(arith) => words::check_arithmetic(&arith.expr.value),
            CompoundCommand::ArithmeticForClause(clause) => {
                for expr in [&clause.initializer, &clause.condition, &clause.updater]
                    .into_iter()
                    .flatten()
                {
                    words::check_arithmetic(&expr.value)?;
                }
                self.compound_list(&clause.body.list)
            }
            CompoundCommand::BraceGroup(group) => self.compound_list(&group.list),
            CompoundCommand::Subshell(subshell) => self.compound_list(&subshell.list),
            CompoundCommand::ForClause(clause) => {
                check_assignment_name(&clause.variable_name, None)?;
                for value in clause.values.iter().flatten() {
                    self.word(value)?;
                }
                self.compound_list(&clause.body.list)
            }
            CompoundCommand::CaseClause(clause) => {
                self.word(&clause.value)?;
                for item in &clause.cases {
                    for pattern in &item.patterns {
                        self.word(pattern)?;
                    }
                    if let Some(list) = &item.cmd {
                        self.compound_list(list)?;
                    }
                }
                Ok(())
            }
            CompoundCommand::IfClause(clause) => {
                self.compound_list(&clause.condition)?;
                self.compound_list(&clause.then)?;
                for branch in clause.elses.iter().flatten() {
                    if let Some(condition) = &branch.condition {
                        self.compound_list(condition)?;
                    }
                    self.compound_list(&branch.body)?;
                }
                Ok(())
            }
            CompoundCommand::WhileClause(clause) | CompoundCommand::UntilClause(clause) => {
                self.compound_list(&clause.0)?;
                self.compound_list(&clause.1.list)
            }
            CompoundCommand::Coprocess(_) => {
                Err("`coproc` runs a command in the background, never proven read-only".to_owned())
            }
        }
    }

    fn extended_test(&self, expr: &ExtendedTestExpr) -> Verdict {
        match expr {
            ExtendedTestExpr::And(a, b) | ExtendedTestExpr::Or(a, b) => {
                self.extended_test(a)?;
                self.extended_test(b)
            }
            ExtendedTestExpr::Not(a) | ExtendedTestExpr::Parenthesized(a) => self.extended_test(a),
            ExtendedTestExpr::UnaryTest(predicate, word) => {
                if matches!(
                    predicate,
                    UnaryPredicate::ShellVariableIsSetAndAssigned
                        | UnaryPredicate::ShellVariableIsSetAndNameRef
                ) {
                    return Err(
                        "`[[ -v ]]` evaluates an array index, which is not checked".to_owned()
                    );
                }
                self.word(word).map(drop)
            }
            ExtendedTestExpr::BinaryTest(predicate, left, right) => {
                let left = self.word(left)?;
                let right = self.word(right)?;
                let arithmetic = matches!(
                    predicate,
                    BinaryPredicate::ArithmeticEqualTo
                        | BinaryPredicate::ArithmeticNotEqualTo
                        | BinaryPredicate::ArithmeticLessThan
                        | BinaryPredicate::ArithmeticLessThanOrEqualTo
                        | BinaryPredicate::ArithmeticGreaterThan
                        | BinaryPredicate::ArithmeticGreaterThanOrEqualTo
                );
                if arithmetic {
                    for side in [&left, &right] {
                        match side.lit() {
                            Some(text) => words::check_arithmetic(text)?,
                            None => {
                                return Err(format!(
                                    "`[[ {} ]]` evaluates `{}` as arithmetic, which is not checked",
                                    "-eq", side.source
                                ));
                            }
                        }
                    }
                }
                Ok(())
            }
        }
    }

    fn redirect(&self, redirect: &IoRedirect) -> Verdict {
        match redirect {
            IoRedirect::File(_, kind, target) => {
                let op = match kind {
                    IoFileRedirectKind::Read => "<",
                    IoFileRedirectKind::Write => ">",
                    IoFileRedirectKind::Append => ">>",
                    IoFileRedirectKind::ReadAndWrite => "<>",
                    IoFileRedirectKind::Clobber => ">|",
                    IoFileRedirectKind::DuplicateInput => "<&",
                    IoFileRedirectKind::DuplicateOutput => ">&",
                };
                match target {
                    IoFileRedirectTarget::Fd(_) => Ok(()),
                    IoFileRedirectTarget::ProcessSubstitution(sub_kind, subshell) => {
                        self.process_substitution(sub_kind, &subshell.list)
                    }
                    IoFileRedirectTarget::Filename(word)
                    | IoFileRedirectTarget::Duplicate(word) => {
                        let info = self.word(word)?;
                        match kind {
                            IoFileRedirectKind::Read => Ok(()),
                            IoFileRedirectKind::ReadAndWrite => {
                                Err(format!("`<>` opens `{}` for writing", info.source))
                            }
                            IoFileRedirectKind::DuplicateInput
                            | IoFileRedirectKind::DuplicateOutput
                                if info.lit().is_some_and(is_fd_target) =>
                            {
                                Ok(())
                            }
                            IoFileRedirectKind::DuplicateInput => Ok(()),
                            IoFileRedirectKind::Write
                            | IoFileRedirectKind::Append
                            | IoFileRedirectKind::Clobber
                            | IoFileRedirectKind::DuplicateOutput => output_target(op, &info),
                        }
                    }
                }
            }
            IoRedirect::HereDocument(_, doc) => {
                if doc.requires_expansion {
                    words::check_heredoc_body(&doc.doc.value, self.depth)
                } else {
                    Ok(())
                }
            }
            IoRedirect::HereString(_, word) => self.word(word).map(drop),
            IoRedirect::OutputAndError(word, append) => {
                let info = self.word(word)?;
                output_target(if *append { "&>>" } else { "&>" }, &info)
            }
        }
    }

    fn process_substitution(&self, kind: &ProcessSubstitutionKind, list: &CompoundList) -> Verdict {
        match kind {
            ProcessSubstitutionKind::Read => self
                .compound_list(list)
                .map_err(|inner| format!("`<(...)` runs a command: {inner}")),
            ProcessSubstitutionKind::Write => {
                Err("`>(...)` feeds output to a command, never proven read-only".to_owned())
            }
        }
    }

    fn assignment(&self, assignment: &Assignment) -> Verdict {
        let name = match &assignment.name {
            AssignmentName::VariableName(name) => name,
            AssignmentName::ArrayElementName(name, _) => {
                return Err(format!(
                    "assigning an element of `{name}` evaluates its index"
                ));
            }
        };
        match &assignment.value {
            AssignmentValue::Scalar(word) => {
                let info = self.word(word)?;
                check_assignment_name(name, Some(info.lit()))
            }
            AssignmentValue::Array(items) => {
                for (key, value) in items {
                    if let Some(key) = key {
                        self.word(key)?;
                    }
                    self.word(value)?;
                }
                check_assignment_name(name, None)
            }
        }
    }

    fn simple(&self, command: &SimpleCommand) -> Verdict {
        let mut args: Vec<WordInfo> = Vec::new();
        // Before the program name every assignment is one (`A=1 cmd`, or a line of them).
        for item in command.prefix.iter().flat_map(|p| p.0.iter()) {
            match item {
                CommandPrefixOrSuffixItem::AssignmentWord(assignment, _) => {
                    self.assignment(assignment)?;
                }
                other @ (CommandPrefixOrSuffixItem::IoRedirect(_)
                | CommandPrefixOrSuffixItem::Word(_)
                | CommandPrefixOrSuffixItem::ProcessSubstitution(..)) => {
                    self.argument_item(other, &mut args)?;
                }
            }
        }
        let mut name: Option<WordInfo> = match &command.word_or_name {
            Some(word) => Some(self.word(word)?),
            None => None,
        };
        // After it an assignment-looking word is an argument (`export A=1`, `env A=1`): the
        // program's rule decides.
        for item in command.suffix.iter().flat_map(|s| s.0.iter()) {
            match item {
                CommandPrefixOrSuffixItem::AssignmentWord(_, word) => args.push(self.word(word)?),
                other @ (CommandPrefixOrSuffixItem::IoRedirect(_)
                | CommandPrefixOrSuffixItem::Word(_)
                | CommandPrefixOrSuffixItem::ProcessSubstitution(..)) => {
                    self.argument_item(other, &mut args)?;
                }
            }
        }
        if name.is_none() && !args.is_empty() {
            // Redirections' process substitutions only; a name always comes first.
            return Err("could not parse the command line".to_owned());
        }
        match name.take() {
            None => Ok(()),
            Some(name) => programs::check_invocation(&name, &args, self.depth),
        }
    }
}

impl Walker {
    fn argument_item(&self, item: &CommandPrefixOrSuffixItem, args: &mut Vec<WordInfo>) -> Verdict {
        match item {
            CommandPrefixOrSuffixItem::IoRedirect(redirect) => self.redirect(redirect),
            CommandPrefixOrSuffixItem::Word(word)
            | CommandPrefixOrSuffixItem::AssignmentWord(_, word) => {
                args.push(self.word(word)?);
                Ok(())
            }
            CommandPrefixOrSuffixItem::ProcessSubstitution(kind, subshell) => {
                self.process_substitution(kind, &subshell.list)?;
                // Its value is a `/dev/fd/N` path: never an option.
                args.push(WordInfo {
                    literal: Some("/dev/fd/63".to_owned()),
                    may_split: false,
                    source: "<(...)".to_owned(),
                    fixed_prefix: None,
                });
                Ok(())
            }
        }
    }
}

/// `2>&1`, `>&-`: a descriptor number or a close.
fn is_fd_target(text: &str) -> bool {
    text == "-" || (!text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()))
}

fn output_target(op: &str, target: &WordInfo) -> Verdict {
    match target.lit() {
        Some("/dev/null") => Ok(()),
        Some(path) => Err(format!("`{op}` redirects output into `{path}`")),
        None => Err(format!(
            "`{op}` redirects output into `{}`, known only when the command runs",
            target.source
        )),
    }
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

/// Rule 10: `value` is `None` when the value is not a single fixed string.
pub(crate) fn check_assignment_name(name: &str, value: Option<Option<&str>>) -> Verdict {
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
        Err(format!(
            "setting `{name}` can change what a program does, so it is never proven read-only"
        ))
    }
}

//! The walk over a script's tree ([`super::syntax`]): the verdict (the first part not proven
//! read-only, in source order) and the facts (every program the line starts, and where git
//! runs), in one pass. The walk goes on past the first finding, so the facts cover the whole
//! line; the verdict stays the first finding.

use super::reason::NotProven;
use super::syntax::{
    Assignment, Direction, FileOp, Item, Node, Redirect, Script, Simple, Target, Test, Value,
};
use super::words::{self, WordInfo};
use super::{Verdict, check_assignment_name, programs};

/// What the walk found besides the verdict, for [`super::CommandFacts`].
#[derive(Debug, Default)]
pub(super) struct Found {
    /// Every literal program name started, first occurrence first.
    pub(super) programs: Vec<String>,
    /// Some program's name is known only at run time, or some code the walk cannot see runs.
    pub(super) unknown_program: bool,
    /// Some `git` runs.
    pub(super) git: bool,
    /// Some `git` runs in another or unknowable directory.
    pub(super) git_elsewhere: bool,
    /// The line changes directory or sets a `GIT_` variable somewhere.
    pub(super) moves: bool,
}

impl Found {
    /// Records a program the line starts.
    pub(super) fn program(&mut self, name: &str) {
        if !self.programs.iter().any(|p| p == name) {
            self.programs.push(name.to_owned());
        }
    }
}

/// One walk: the nesting depth of substitutions, and what was found so far.
pub(super) struct Walker<'f> {
    pub(super) depth: usize,
    pub(super) found: &'f mut Found,
}

impl Walker<'_> {
    /// A walker one substitution deeper, sharing the findings.
    pub(super) fn nested(&mut self) -> Walker<'_> {
        Walker {
            depth: self.depth + 1,
            found: self.found,
        }
    }

    /// Some code runs that the walk cannot see (and so may start any program).
    pub(super) fn unknown_code(&mut self) {
        self.found.unknown_program = true;
    }

    /// The word's text and every command its expansions run.
    pub(super) fn word<'w>(&mut self, word: &'w str) -> (WordInfo<'w>, Verdict) {
        words::analyze_word(self, word)
    }

    pub(super) fn script(&mut self, script: &Script) -> Verdict {
        let mut verdict = Ok(());
        for node in script {
            let next = self.node(node);
            verdict = verdict.and(next);
        }
        verdict
    }

    fn node(&mut self, node: &Node) -> Verdict {
        match node {
            Node::Simple(simple) => self.simple(simple),
            Node::Redirect(redirect) => self.redirect(redirect),
            Node::Word(word) => self.word(word).1,
            Node::ForVariable(name) => check_assignment_name(self.found, name, None),
            Node::Arithmetic(expr) => self.arithmetic(expr),
            Node::Test(test) => self.test(test),
            Node::Function(name, body) => {
                let verdict: Verdict = Err(NotProven::FunctionDefinition {
                    name: name.to_string(),
                });
                // The body runs when the function is called: its programs count.
                verdict.and(self.script(body))
            }
            Node::Coproc(body) => Err::<(), _>(NotProven::Coproc).and(self.script(body)),
        }
    }

    pub(super) fn arithmetic(&mut self, expr: &str) -> Verdict {
        let verdict = words::check_arithmetic(expr);
        if verdict.is_err() {
            // A variable's value is evaluated too, and `a[$(cmd)]` in it runs `cmd`.
            self.unknown_code();
        }
        verdict
    }

    fn test(&mut self, test: &Test) -> Verdict {
        match test {
            Test::Unary { variable, word } => {
                let (_, verdict) = self.word(word);
                if *variable {
                    self.unknown_code();
                    return Err::<(), _>(NotProven::ExtendedTestVariable).and(verdict);
                }
                verdict
            }
            Test::Binary {
                arithmetic,
                left,
                right,
            } => {
                let (left, left_verdict) = self.word(left);
                let (right, right_verdict) = self.word(right);
                let mut verdict = left_verdict.and(right_verdict);
                if *arithmetic {
                    for side in [&left, &right] {
                        let side_verdict = match side.lit() {
                            Some(text) => self.arithmetic(text),
                            None => {
                                self.unknown_code();
                                Err(NotProven::ExtendedTestArithmetic {
                                    operand: side.source.to_owned(),
                                })
                            }
                        };
                        verdict = verdict.and(side_verdict);
                    }
                }
                verdict
            }
        }
    }

    fn redirect(&mut self, redirect: &Redirect) -> Verdict {
        match redirect {
            Redirect::File(op, target) => match target {
                Target::Fd => Ok(()),
                Target::ProcessSubstitution(direction, body) => {
                    self.process_substitution(*direction, body)
                }
                Target::Word(word) => {
                    let (info, verdict) = self.word(word);
                    let target_verdict = match op {
                        FileOp::Read => Ok(()),
                        FileOp::ReadWrite => Err(NotProven::OpensForWriting {
                            target: info.source.to_owned(),
                        }),
                        FileOp::DuplicateInput | FileOp::DuplicateOutput
                            if info.lit().is_some_and(is_fd_target) =>
                        {
                            Ok(())
                        }
                        FileOp::DuplicateInput => Ok(()),
                        FileOp::Write
                        | FileOp::Append
                        | FileOp::Clobber
                        | FileOp::DuplicateOutput => output_target(op.as_str(), &info),
                    };
                    verdict.and(target_verdict)
                }
            },
            Redirect::HereDocument { expand, body } => {
                if *expand {
                    words::check_heredoc_body(self, body)
                } else {
                    Ok(())
                }
            }
            Redirect::HereString(word) => self.word(word).1,
            Redirect::OutputAndError { target, append } => {
                let (info, verdict) = self.word(target);
                verdict.and(output_target(if *append { "&>>" } else { "&>" }, &info))
            }
        }
    }

    fn process_substitution(&mut self, direction: Direction, body: &Script) -> Verdict {
        match direction {
            Direction::Read => self
                .script(body)
                .map_err(|inner| NotProven::ProcessSubstitution {
                    inner: Box::new(inner),
                }),
            Direction::Write => {
                // Its command runs: its programs count, but it is never proven.
                let _ = self.script(body);
                Err(NotProven::WriteProcessSubstitution)
            }
        }
    }

    fn assignment(&mut self, assignment: &Assignment) -> Verdict {
        let mut verdict = match &assignment.index {
            Some(_) => {
                self.unknown_code();
                Err(NotProven::ArrayElementAssignment {
                    name: assignment.name.to_string(),
                })
            }
            None => Ok(()),
        };
        match &assignment.value {
            Value::Scalar(word) => {
                let (info, word_verdict) = self.word(word);
                verdict = verdict.and(word_verdict);
                if assignment.index.is_none() {
                    let name =
                        check_assignment_name(self.found, &assignment.name, Some(info.lit()));
                    verdict = verdict.and(name);
                }
            }
            Value::Array(items) => {
                for (key, value) in items {
                    if let Some(key) = key {
                        verdict = verdict.and(self.word(key).1);
                    }
                    verdict = verdict.and(self.word(value).1);
                }
                if assignment.index.is_none() {
                    let name = check_assignment_name(self.found, &assignment.name, None);
                    verdict = verdict.and(name);
                }
            }
        }
        verdict
    }

    fn simple(&mut self, command: &Simple) -> Verdict {
        let mut verdict = Ok(());
        let mut args: Vec<WordInfo<'_>> =
            Vec::with_capacity(command.prefix.len() + command.suffix.len());
        for item in &command.prefix {
            let next = match item {
                Item::Assignment(assignment) => self.assignment(assignment),
                other @ (Item::Word(_) | Item::Redirect(_) | Item::ProcessSubstitution(..)) => {
                    self.argument_item(other, &mut args)
                }
            };
            verdict = verdict.and(next);
        }
        let name = match command.name.as_deref() {
            Some(name) => {
                let (info, name_verdict) = self.word(name);
                verdict = verdict.and(name_verdict);
                Some(info)
            }
            None => None,
        };
        for item in &command.suffix {
            let next = self.argument_item(item, &mut args);
            verdict = verdict.and(next);
        }
        match name {
            None if !args.is_empty() => {
                // Redirections' process substitutions only; a name always comes first.
                verdict.and(Err(NotProven::Unparsed))
            }
            None => verdict,
            Some(name) => {
                let run = programs::check_invocation(self, &name, &args);
                verdict.and(run)
            }
        }
    }

    fn argument_item<'w>(&mut self, item: &'w Item, args: &mut Vec<WordInfo<'w>>) -> Verdict {
        match item {
            Item::Redirect(redirect) => self.redirect(redirect),
            Item::Word(word) => {
                let (info, verdict) = self.word(word);
                args.push(info);
                verdict
            }
            Item::Assignment(assignment) => {
                // Only the prefix holds assignments; as an argument it would be its word.
                self.assignment(assignment)
            }
            Item::ProcessSubstitution(direction, body) => {
                let verdict = self.process_substitution(*direction, body);
                // Its value is a `/dev/fd/N` path: never an option.
                args.push(WordInfo {
                    literal: Some("/dev/fd/63".into()),
                    may_split: false,
                    source: "<(...)",
                    fixed_prefix: None,
                });
                verdict
            }
        }
    }
}

/// `2>&1`, `>&-`: a descriptor number or a close.
fn is_fd_target(text: &str) -> bool {
    text == "-" || (!text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()))
}

fn output_target(op: &'static str, target: &WordInfo) -> Verdict {
    match target.lit() {
        Some("/dev/null") => Ok(()),
        Some(path) => Err(NotProven::RedirectsIntoFile {
            op,
            path: path.to_owned(),
        }),
        None => Err(NotProven::RedirectsIntoUnknown {
            op,
            target: target.source.to_owned(),
        }),
    }
}

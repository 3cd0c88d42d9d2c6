//! brush-parser's syntax tree, read into the classifier's ([`super::syntax`]): the parser for
//! every line the fast one ([`super::fast`]) does not take.

use brush_parser::ast::{
    AndOr, AndOrList, Assignment as BrushAssignment, AssignmentName, AssignmentValue,
    BinaryPredicate, Command, CommandPrefixOrSuffixItem, CompoundCommand, CompoundList,
    ExtendedTestExpr, IoFileRedirectKind, IoFileRedirectTarget, IoRedirect, Pipeline,
    ProcessSubstitutionKind, RedirectList, SimpleCommand, UnaryPredicate,
};

use super::syntax::{
    Assignment, Direction, FileOp, Item, Node, Redirect, Script, Simple, Target, Test, Value,
};

/// Parses a script with brush-parser; `None` when it does not parse (or the parser panics).
pub(super) fn parse(script: &str) -> Option<Script<'static>> {
    // brush-parser 0.4 unwraps a few integer parses (guarded by the caller); a panic it still
    // has is "not proven", never a crash of the policy.
    let parsed = std::panic::catch_unwind(|| {
        brush_parser::Parser::new(script.as_bytes(), &brush_parser::ParserOptions::default())
            .parse_program()
    });
    let Ok(Ok(program)) = parsed else {
        return None;
    };
    let mut out = Vec::new();
    for list in &program.complete_commands {
        compound_list(list, &mut out)?;
    }
    Some(out)
}

fn compound_list(list: &CompoundList, out: &mut Script<'static>) -> Option<()> {
    for item in &list.0 {
        and_or(&item.0, out)?;
    }
    Some(())
}

fn and_or(list: &AndOrList, out: &mut Script<'static>) -> Option<()> {
    pipeline(&list.first, out)?;
    for next in &list.additional {
        let (AndOr::And(next) | AndOr::Or(next)) = next;
        pipeline(next, out)?;
    }
    Some(())
}

fn pipeline(pipeline: &Pipeline, out: &mut Script<'static>) -> Option<()> {
    for command in &pipeline.seq {
        self::command(command, out)?;
    }
    Some(())
}

fn command(command: &Command, out: &mut Script<'static>) -> Option<()> {
    match command {
        Command::Simple(simple) => out.push(Node::Simple(self::simple(simple)?)),
        Command::Compound(compound, redirects) => {
            self::redirects(redirects.as_ref(), out)?;
            self::compound(compound, out)?;
        }
        Command::Function(function) => {
            let mut body = Vec::new();
            self::redirects(function.body.1.as_ref(), &mut body)?;
            self::compound(&function.body.0, &mut body)?;
            out.push(Node::Function(function.fname.value.clone().into(), body));
        }
        Command::ExtendedTest(test, redirects) => {
            self::redirects(redirects.as_ref(), out)?;
            extended_test(&test.expr, out);
        }
    }
    Some(())
}

fn redirects(redirects: Option<&RedirectList>, out: &mut Script<'static>) -> Option<()> {
    for redirect in redirects.iter().flat_map(|list| list.0.iter()) {
        out.push(Node::Redirect(self::redirect(redirect)?));
    }
    Some(())
}

fn compound(compound: &CompoundCommand, out: &mut Script<'static>) -> Option<()> {
    match compound {
        CompoundCommand::Arithmetic(arith) => {
            out.push(Node::Arithmetic(arith.expr.value.clone().into()));
        }
        CompoundCommand::ArithmeticForClause(clause) => {
            for expr in [&clause.initializer, &clause.condition, &clause.updater]
                .into_iter()
                .flatten()
            {
                out.push(Node::Arithmetic(expr.value.clone().into()));
            }
            compound_list(&clause.body.list, out)?;
        }
        CompoundCommand::BraceGroup(group) => compound_list(&group.list, out)?,
        CompoundCommand::Subshell(subshell) => compound_list(&subshell.list, out)?,
        CompoundCommand::ForClause(clause) => {
            out.push(Node::ForVariable(clause.variable_name.clone().into()));
            for value in clause.values.iter().flatten() {
                out.push(Node::Word(value.value.clone().into()));
            }
            compound_list(&clause.body.list, out)?;
        }
        CompoundCommand::CaseClause(clause) => {
            out.push(Node::Word(clause.value.value.clone().into()));
            for item in &clause.cases {
                for pattern in &item.patterns {
                    out.push(Node::Word(pattern.value.clone().into()));
                }
                if let Some(list) = &item.cmd {
                    compound_list(list, out)?;
                }
            }
        }
        CompoundCommand::IfClause(clause) => {
            compound_list(&clause.condition, out)?;
            compound_list(&clause.then, out)?;
            for branch in clause.elses.iter().flatten() {
                if let Some(condition) = &branch.condition {
                    compound_list(condition, out)?;
                }
                compound_list(&branch.body, out)?;
            }
        }
        CompoundCommand::WhileClause(clause) | CompoundCommand::UntilClause(clause) => {
            compound_list(&clause.0, out)?;
            compound_list(&clause.1.list, out)?;
        }
        CompoundCommand::Coprocess(coproc) => {
            let mut body = Vec::new();
            command(&coproc.body, &mut body)?;
            out.push(Node::Coproc(body));
        }
    }
    Some(())
}

fn extended_test(expr: &ExtendedTestExpr, out: &mut Script<'static>) {
    match expr {
        ExtendedTestExpr::And(a, b) | ExtendedTestExpr::Or(a, b) => {
            extended_test(a, out);
            extended_test(b, out);
        }
        ExtendedTestExpr::Not(a) | ExtendedTestExpr::Parenthesized(a) => extended_test(a, out),
        ExtendedTestExpr::UnaryTest(predicate, word) => out.push(Node::Test(Test::Unary {
            variable: matches!(
                predicate,
                UnaryPredicate::ShellVariableIsSetAndAssigned
                    | UnaryPredicate::ShellVariableIsSetAndNameRef
            ),
            word: word.value.clone().into(),
        })),
        ExtendedTestExpr::BinaryTest(predicate, left, right) => {
            out.push(Node::Test(Test::Binary {
                arithmetic: matches!(
                    predicate,
                    BinaryPredicate::ArithmeticEqualTo
                        | BinaryPredicate::ArithmeticNotEqualTo
                        | BinaryPredicate::ArithmeticLessThan
                        | BinaryPredicate::ArithmeticLessThanOrEqualTo
                        | BinaryPredicate::ArithmeticGreaterThan
                        | BinaryPredicate::ArithmeticGreaterThanOrEqualTo
                ),
                left: left.value.clone().into(),
                right: right.value.clone().into(),
            }));
        }
    }
}

fn redirect(redirect: &IoRedirect) -> Option<Redirect<'static>> {
    Some(match redirect {
        IoRedirect::File(_, kind, target) => {
            let op = match kind {
                IoFileRedirectKind::Read => FileOp::Read,
                IoFileRedirectKind::Write => FileOp::Write,
                IoFileRedirectKind::Append => FileOp::Append,
                IoFileRedirectKind::ReadAndWrite => FileOp::ReadWrite,
                IoFileRedirectKind::Clobber => FileOp::Clobber,
                IoFileRedirectKind::DuplicateInput => FileOp::DuplicateInput,
                IoFileRedirectKind::DuplicateOutput => FileOp::DuplicateOutput,
            };
            let target = match target {
                IoFileRedirectTarget::Fd(_) => Target::Fd,
                IoFileRedirectTarget::Filename(word) | IoFileRedirectTarget::Duplicate(word) => {
                    Target::Word(word.value.clone().into())
                }
                IoFileRedirectTarget::ProcessSubstitution(kind, subshell) => {
                    let mut body = Vec::new();
                    compound_list(&subshell.list, &mut body)?;
                    Target::ProcessSubstitution(direction(kind), body)
                }
            };
            Redirect::File(op, target)
        }
        IoRedirect::HereDocument(_, doc) => Redirect::HereDocument {
            expand: doc.requires_expansion,
            body: doc.doc.value.clone().into(),
        },
        IoRedirect::HereString(_, word) => Redirect::HereString(word.value.clone().into()),
        IoRedirect::OutputAndError(word, append) => Redirect::OutputAndError {
            target: word.value.clone().into(),
            append: *append,
        },
    })
}

fn direction(kind: &ProcessSubstitutionKind) -> Direction {
    match kind {
        ProcessSubstitutionKind::Read => Direction::Read,
        ProcessSubstitutionKind::Write => Direction::Write,
    }
}

fn simple(command: &SimpleCommand) -> Option<Simple<'static>> {
    let mut prefix = Vec::new();
    for item in command.prefix.iter().flat_map(|p| p.0.iter()) {
        prefix.push(match item {
            // Before the program name an assignment is one (`A=1 cmd`).
            CommandPrefixOrSuffixItem::AssignmentWord(assignment, _) => {
                Item::Assignment(self::assignment(assignment))
            }
            other @ (CommandPrefixOrSuffixItem::IoRedirect(_)
            | CommandPrefixOrSuffixItem::Word(_)
            | CommandPrefixOrSuffixItem::ProcessSubstitution(..)) => self::item(other)?,
        });
    }
    let mut suffix = Vec::new();
    for item in command.suffix.iter().flat_map(|s| s.0.iter()) {
        // After it an assignment-looking word is an argument (`export A=1`).
        suffix.push(self::item(item)?);
    }
    Some(Simple {
        prefix,
        name: command
            .word_or_name
            .as_ref()
            .map(|w| w.value.clone().into()),
        suffix,
    })
}

fn item(item: &CommandPrefixOrSuffixItem) -> Option<Item<'static>> {
    Some(match item {
        CommandPrefixOrSuffixItem::IoRedirect(redirect) => {
            Item::Redirect(self::redirect(redirect)?)
        }
        CommandPrefixOrSuffixItem::Word(word)
        | CommandPrefixOrSuffixItem::AssignmentWord(_, word) => {
            Item::Word(word.value.clone().into())
        }
        CommandPrefixOrSuffixItem::ProcessSubstitution(kind, subshell) => {
            let mut body = Vec::new();
            compound_list(&subshell.list, &mut body)?;
            Item::ProcessSubstitution(direction(kind), body)
        }
    })
}

fn assignment(assignment: &BrushAssignment) -> Assignment<'static> {
    let (name, index) = match &assignment.name {
        AssignmentName::VariableName(name) => (name.clone().into(), None),
        AssignmentName::ArrayElementName(name, index) => {
            (name.clone().into(), Some(index.clone().into()))
        }
    };
    let value = match &assignment.value {
        AssignmentValue::Scalar(word) => Value::Scalar(word.value.clone().into()),
        AssignmentValue::Array(items) => Value::Array(
            items
                .iter()
                .map(|(key, value)| {
                    (
                        key.as_ref().map(|k| k.value.clone().into()),
                        value.value.clone().into(),
                    )
                })
                .collect(),
        ),
    };
    Assignment { name, index, value }
}

//! The classifier's own syntax tree: what a script runs, in the order the shell reaches it.
//!
//! Sequencing (`;`, `&&`, `||`, `|`, `&`, `!`, `time`) and grouping (`( )`, `{ }`, `if`,
//! `while`, `until`, `for`, `case` bodies) decide nothing about whether a line writes: every part
//! may run. So a script is a flat list of [`Node`]s in source order, and only what the rules look
//! at is kept: the words as written, assignments, redirections, and the nested scripts of process
//! substitutions and function bodies. Two parsers build it: [`super::fast`] for the common
//! shapes and [`super::from_brush`] (brush-parser) for everything; where the fast one answers,
//! both build the same tree (`fast_parser_agrees_with_brush`, and the `shell_classifier` fuzz
//! target).

use std::borrow::Cow;

/// Text as written: borrowed from the line by the fast parser, owned from brush-parser's tree.
pub(super) type Text<'s> = Cow<'s, str>;

/// A script: its parts in the order the shell reaches them.
pub(super) type Script<'s> = Vec<Node<'s>>;

/// One part of a script.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Node<'s> {
    /// A simple command (or a line of assignments and redirections).
    Simple(Simple<'s>),
    /// A redirection on a compound command or `[[ ]]`, walked before its body.
    Redirect(Redirect<'s>),
    /// A word a compound command expands: a `for` value, a `case` subject or pattern.
    Word(Text<'s>),
    /// The variable a `for` loop assigns.
    ForVariable(Text<'s>),
    /// An arithmetic expression: `(( ))`, and each part of `for (( ; ; ))`.
    Arithmetic(Text<'s>),
    /// One test of `[[ ]]` (their `&&`, `||`, `!` and parentheses flattened).
    Test(Test<'s>),
    /// A function definition: its name and body.
    Function(Text<'s>, Script<'s>),
    /// `coproc` and what it runs.
    Coproc(Script<'s>),
}

/// A simple command: assignments and redirections, a program name, its arguments.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(super) struct Simple<'s> {
    /// What comes before the name: assignments, redirections.
    pub(super) prefix: Vec<Item<'s>>,
    /// The program name as written; `None` for a line of assignments or redirections.
    pub(super) name: Option<Text<'s>>,
    /// What comes after the name: arguments (an assignment-looking one is a word), redirections.
    pub(super) suffix: Vec<Item<'s>>,
}

/// One item of a simple command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Item<'s> {
    /// An assignment (before the name only).
    Assignment(Assignment<'s>),
    /// A word as written.
    Word(Text<'s>),
    /// A redirection.
    Redirect(Redirect<'s>),
    /// `<(...)` or `>(...)` as an argument.
    ProcessSubstitution(Direction, Script<'s>),
}

/// Which way a process substitution carries data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Direction {
    /// `<(...)`: the command's output is read.
    Read,
    /// `>(...)`: the command reads what is written.
    Write,
}

/// `name=value`, `name+=value`, `name[i]=value`, `name=(a b)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Assignment<'s> {
    /// The variable.
    pub(super) name: Text<'s>,
    /// The index of `name[i]=`, as written.
    pub(super) index: Option<Text<'s>>,
    /// The value.
    pub(super) value: Value<'s>,
}

/// An assignment's value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Value<'s> {
    /// One word as written.
    Scalar(Text<'s>),
    /// `( [k]=v w ... )`: keys and values as written.
    Array(Vec<(Option<Text<'s>>, Text<'s>)>),
}

/// A redirection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Redirect<'s> {
    /// `<`, `>`, `>>`, `<>`, `>|`, `<&`, `>&` with a target.
    File(FileOp, Target<'s>),
    /// A here-document: `expand` when its delimiter is unquoted (its body is expanded).
    HereDocument {
        /// Whether the shell expands the body.
        expand: bool,
        /// The body.
        body: Text<'s>,
    },
    /// `<<< word`.
    HereString(Text<'s>),
    /// `&>` and `&>>` (`append`).
    OutputAndError {
        /// The file as written.
        target: Text<'s>,
        /// `&>>`.
        append: bool,
    },
}

/// The operator of a file redirection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum FileOp {
    /// `<`.
    Read,
    /// `>`.
    Write,
    /// `>>`.
    Append,
    /// `<>`.
    ReadWrite,
    /// `>|`.
    Clobber,
    /// `<&`.
    DuplicateInput,
    /// `>&`.
    DuplicateOutput,
}

impl FileOp {
    /// The operator as written.
    pub(super) fn as_str(self) -> &'static str {
        match self {
            FileOp::Read => "<",
            FileOp::Write => ">",
            FileOp::Append => ">>",
            FileOp::ReadWrite => "<>",
            FileOp::Clobber => ">|",
            FileOp::DuplicateInput => "<&",
            FileOp::DuplicateOutput => ">&",
        }
    }
}

/// Where a file redirection points.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Target<'s> {
    /// A descriptor number (`2>&1`).
    Fd,
    /// A word as written: a file, or for `<&`/`>&` a descriptor or `-`.
    Word(Text<'s>),
    /// `> >(...)`, `< <(...)`.
    ProcessSubstitution(Direction, Script<'s>),
}

/// One test of `[[ ]]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Test<'s> {
    /// `-v name` and `-R name` (`variable`), or another unary test.
    Unary {
        /// Whether it tests a variable by name (and so evaluates an array index).
        variable: bool,
        /// The operand as written.
        word: Text<'s>,
    },
    /// A binary test; `arithmetic` for `-eq` `-ne` `-lt` `-le` `-gt` `-ge`.
    Binary {
        /// Whether its operands are evaluated as arithmetic.
        arithmetic: bool,
        /// The left operand as written.
        left: Text<'s>,
        /// The right operand as written.
        right: Text<'s>,
    },
}

//! A fast parser for the shapes most command lines take, building the same tree as
//! brush-parser ([`super::from_brush`]) or giving up.
//!
//! brush-parser costs ~0.1–0.3 µs per byte (its tokenizer reads one `char` at a time through a
//! reader and allocates per token; its PEG grammar backtracks), which puts a 4 KiB line at
//! ~0.3 ms. This parser reads bytes once and takes: lists (`;` `&` newline), `&&` `||`, pipes
//! `|`, `!`; simple commands with assignments (`NAME=` `NAME+=`), words (plain, `'...'`,
//! `"..."`, `\x`, `$name`, `${simple}`, `$(...)`, backquotes), redirections (`<` `>` `>>`
//! `>|` `<>` `<&` `>&` `&>` `&>>` `<<<`, a descriptor number before them) and here-documents
//! (`<<WORD`, `<<'WORD'`, `<<"WORD"`, on a line whose rest is plain); `<(...)` `>(...)`;
//! `( )`, `{ }`, `if`, `while`, `until`, `for NAME in ...`, with redirections after them.
//!
//! Anything else gives up ([`Parsed::Unknown`]) and brush-parser decides: `case`, `[[ ]]`, `(( ))`,
//! `$(( ))`, functions, `coproc`, `time`, `select`, `|&`, `;;`, `$'...'`, an array assignment,
//! `<<-`, a line continuation, a control character, a `(` inside a word, nesting deeper than
//! [`MAX_NESTING`], and, inside `$(...)`, what brush-parser re-spaces there (a tab, a comment, a
//! here-document). So this parser never judges a line brush-parser would read differently:
//! where it answers, both trees are equal (the property test `fast_parser_agrees_with_brush`
//! and the `shell_classifier` fuzz target hold them to it).

mod lex;
mod redirect;

use lex::{Lexed, Tok};
use redirect::is_redirect;

use super::syntax::{Assignment, Item, Node, Script, Simple, Text, Value};

/// Compound commands and substitutions nested deeper than this give up.
const MAX_NESTING: u32 = 12;

/// What the fast parser made of a script.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Parsed<'s> {
    /// Its tree, which brush-parser's equals.
    Tree(Script<'s>),
    /// Cut short: a here-document without its closing line, or the end of the script where a
    /// command, a closing `)`, `}`, `fi`, `done` (...) must come. Everything before parsed in
    /// the shapes taken here, so brush-parser refuses the script too.
    Refused,
    /// A shape this parser does not take: brush-parser decides.
    Unknown,
}

/// Parses a script in the shapes this parser takes.
pub(super) fn parse(script: &str) -> Parsed<'_> {
    let mut parser = Parser {
        src: script,
        bytes: script.as_bytes(),
        pos: 0,
        depth: 0,
        raw: 0,
        skips: Vec::new(),
        peeked: None,
        cut_short: false,
    };
    // About one node per 16 bytes of a line: one allocation for most.
    let mut out = Vec::with_capacity(script.len() / 16 + 1);
    match parser.list(Stop::End, &mut out) {
        Some(()) => Parsed::Tree(out),
        None if parser.cut_short => Parsed::Refused,
        None => Parsed::Unknown,
    }
}

/// The words of a script as the fast lexer (brush-parser's tokenizer's way) delimits them,
/// grammar aside; `None` when it cannot lex the script (or meets a here-document, whose body
/// is not words).
pub(super) fn words(script: &str) -> Option<Vec<&str>> {
    let mut parser = Parser {
        src: script,
        bytes: script.as_bytes(),
        pos: 0,
        depth: 0,
        raw: 0,
        skips: Vec::new(),
        peeked: None,
        cut_short: false,
    };
    let mut words = Vec::new();
    loop {
        match parser.bump()? {
            Tok::End => return Some(words),
            Tok::Word(word) => words.push(word),
            Tok::Op("<<" | "<<-") => return None,
            Tok::Op(_) | Tok::Newline | Tok::ProcSub(_) => {}
        }
    }
}

/// What ends a list.
#[derive(Clone, Copy)]
enum Stop {
    /// The end of the script.
    End,
    /// A `)`.
    Paren,
    /// One of these words at a command's place (`then`, `fi`, `done`, `}`).
    Words(&'static [&'static str]),
}

/// Words that are syntax at a command's place; a command named so gives up unless the
/// grammar here expects it.
const RESERVED: &[&str] = &[
    "if", "then", "else", "elif", "fi", "do", "done", "case", "esac", "while", "until", "for",
    "in", "function", "select", "coproc", "time", "{", "}", "!", "[[", "]]",
];

struct Parser<'s> {
    src: &'s str,
    bytes: &'s [u8],
    pos: usize,
    /// Nesting of lists (compound commands, substitutions).
    depth: u32,
    /// Nesting of `$(...)`: brush-parser rebuilds their text from tokens, so anything it would
    /// re-space there gives up.
    raw: u32,
    /// Newlines after which here-document bodies were read: where to go on instead.
    skips: Vec<(usize, usize)>,
    /// The token at a position, once lexed.
    peeked: Option<(usize, Lexed<'s>)>,
    /// The script ended where more must come (see [`Parsed::Refused`]).
    cut_short: bool,
}

impl<'s> Parser<'s> {
    fn byte(&self, at: usize) -> Option<u8> {
        self.bytes.get(at).copied()
    }

    fn peek(&mut self) -> Option<Tok<'s>> {
        if let Some((at, lexed)) = self.peeked
            && at == self.pos
        {
            return Some(lexed.tok);
        }
        let start = self.pos;
        let lexed = self.lex()?;
        self.pos = start;
        self.peeked = Some((start, lexed));
        Some(lexed.tok)
    }

    fn bump(&mut self) -> Option<Tok<'s>> {
        let tok = self.peek()?;
        let (_, lexed) = self.peeked?;
        self.pos = lexed.end;
        Some(tok)
    }

    fn expect(&mut self, tok: Tok<'_>) -> Option<()> {
        let got = self.bump()?;
        self.cut_short |= got == Tok::End;
        (got == tok).then_some(())
    }

    /// A list one level deeper.
    fn nested(&mut self, stop: Stop, out: &mut Script<'s>) -> Option<()> {
        if self.depth >= MAX_NESTING {
            return None;
        }
        self.depth += 1;
        let done = self.list(stop, out);
        self.depth -= 1;
        done
    }

    fn skip_newlines(&mut self) -> Option<()> {
        while self.peek()? == Tok::Newline {
            self.bump()?;
        }
        Some(())
    }

    /// Commands separated by `;`, `&` and newlines, up to `stop` (not consumed); at least one
    /// inside a compound command or substitution.
    fn list(&mut self, stop: Stop, out: &mut Script<'s>) -> Option<()> {
        let mut commands = 0;
        loop {
            self.skip_newlines()?;
            let ends = match (self.peek()?, stop) {
                (Tok::End, Stop::End) | (Tok::Op(")"), Stop::Paren) => true,
                (Tok::Word(word), Stop::Words(words)) => words.contains(&word),
                _ => false,
            };
            if ends {
                return (commands > 0 || matches!(stop, Stop::End)).then_some(());
            }
            if self.peek()? == Tok::End {
                // Inside a compound command or substitution that never closes.
                self.cut_short = true;
                return None;
            }
            self.and_or(out)?;
            commands += 1;
            // After a command: a separator, a newline, the end, or the stop.
            match self.peek()? {
                Tok::Op(";" | "&") => {
                    self.bump()?;
                }
                Tok::Newline | Tok::End | Tok::Op(")") => {}
                Tok::Word(_) | Tok::Op(_) | Tok::ProcSub(_) => return None,
            }
        }
    }

    fn and_or(&mut self, out: &mut Script<'s>) -> Option<()> {
        self.pipeline(out)?;
        while matches!(self.peek()?, Tok::Op("&&" | "||")) {
            self.bump()?;
            self.skip_newlines()?;
            self.command_must_follow()?;
            self.pipeline(out)?;
        }
        Some(())
    }

    fn pipeline(&mut self, out: &mut Script<'s>) -> Option<()> {
        while self.peek()? == Tok::Word("!") {
            self.bump()?;
        }
        self.command(out)?;
        while self.peek()? == Tok::Op("|") {
            self.bump()?;
            self.skip_newlines()?;
            self.command_must_follow()?;
            self.command(out)?;
        }
        Some(())
    }

    /// After `&&`, `||`, `|`: the end of the script cuts it short.
    fn command_must_follow(&mut self) -> Option<()> {
        if self.peek()? == Tok::End {
            self.cut_short = true;
            return None;
        }
        Some(())
    }

    fn command(&mut self, out: &mut Script<'s>) -> Option<()> {
        match self.peek()? {
            Tok::Op("(") => {
                self.bump()?;
                // `((` is arithmetic, and brush-parser reads `( (` so too.
                if self.peek()? == Tok::Op("(") {
                    return None;
                }
                let start = out.len();
                self.nested(Stop::Paren, out)?;
                self.expect(Tok::Op(")"))?;
                self.compound_tail(start, out)
            }
            Tok::Word("{") => {
                self.bump()?;
                let start = out.len();
                self.nested(Stop::Words(&["}"]), out)?;
                self.expect(Tok::Word("}"))?;
                self.compound_tail(start, out)
            }
            Tok::Word("if") => self.if_clause(out),
            Tok::Word("while" | "until") => {
                self.bump()?;
                let start = out.len();
                self.nested(Stop::Words(&["do"]), out)?;
                self.expect(Tok::Word("do"))?;
                self.nested(Stop::Words(&["done"]), out)?;
                self.expect(Tok::Word("done"))?;
                self.compound_tail(start, out)
            }
            Tok::Word("for") => self.for_clause(out),
            Tok::Word(word) if RESERVED.contains(&word) => None,
            Tok::Word(_) | Tok::Op(_) => self.simple(out),
            Tok::Newline | Tok::ProcSub(_) | Tok::End => None,
        }
    }

    fn if_clause(&mut self, out: &mut Script<'s>) -> Option<()> {
        self.expect(Tok::Word("if"))?;
        let start = out.len();
        self.nested(Stop::Words(&["then"]), out)?;
        self.expect(Tok::Word("then"))?;
        self.nested(Stop::Words(&["elif", "else", "fi"]), out)?;
        loop {
            match self.bump()? {
                Tok::Word("elif") => {
                    self.nested(Stop::Words(&["then"]), out)?;
                    self.expect(Tok::Word("then"))?;
                    self.nested(Stop::Words(&["elif", "else", "fi"]), out)?;
                }
                Tok::Word("else") => {
                    self.nested(Stop::Words(&["fi"]), out)?;
                    self.expect(Tok::Word("fi"))?;
                    break;
                }
                Tok::Word("fi") => break,
                Tok::Word(_) | Tok::Op(_) | Tok::Newline | Tok::ProcSub(_) | Tok::End => {
                    return None;
                }
            }
        }
        self.compound_tail(start, out)
    }

    fn for_clause(&mut self, out: &mut Script<'s>) -> Option<()> {
        self.expect(Tok::Word("for"))?;
        let Tok::Word(name) = self.bump()? else {
            return None;
        };
        if !is_name(name) {
            return None;
        }
        self.expect(Tok::Word("in"))?;
        let start = out.len();
        out.push(Node::ForVariable(Text::Borrowed(name)));
        loop {
            match self.bump()? {
                Tok::Word(word) if !RESERVED.contains(&word) => {
                    out.push(Node::Word(Text::Borrowed(word)));
                }
                Tok::Op(";") | Tok::Newline => break,
                Tok::Word(_) | Tok::Op(_) | Tok::ProcSub(_) | Tok::End => return None,
            }
        }
        self.skip_newlines()?;
        self.expect(Tok::Word("do"))?;
        self.nested(Stop::Words(&["done"]), out)?;
        self.expect(Tok::Word("done"))?;
        self.compound_tail(start, out)
    }

    /// The redirections after a compound command whose body is `out[start..]`: they come
    /// first in the tree, then the body.
    fn compound_tail(&mut self, start: usize, out: &mut Script<'s>) -> Option<()> {
        let mut redirects = Vec::new();
        loop {
            match self.peek()? {
                Tok::Op(op) if is_redirect(op) => {}
                Tok::Word(word) if self.is_fd_number(word) => {
                    self.bump()?;
                }
                Tok::Word(_) | Tok::Op(_) | Tok::Newline | Tok::ProcSub(_) | Tok::End => break,
            }
            redirects.push(Node::Redirect(self.redirect()?));
        }
        if !redirects.is_empty() {
            out.splice(start..start, redirects);
        }
        Some(())
    }

    /// A word of digits right before `<` or `>`: the descriptor of a redirection.
    fn is_fd_number(&mut self, word: &str) -> bool {
        let Some((_, lexed)) = self.peeked else {
            return false;
        };
        !word.is_empty()
            && word.bytes().all(|b| b.is_ascii_digit())
            && matches!(self.byte(lexed.end), Some(b'<' | b'>'))
    }

    fn simple(&mut self, out: &mut Script<'s>) -> Option<()> {
        let mut command = Simple::default();
        loop {
            match self.peek()? {
                Tok::Word(word) if self.is_fd_number(word) => {
                    self.bump()?;
                    if !matches!(self.peek()?, Tok::Op(op) if is_redirect(op)) {
                        return None;
                    }
                    let redirect = Item::Redirect(self.redirect()?);
                    items(&mut command).push(redirect);
                }
                Tok::Word(word) if command.name.is_none() => {
                    self.bump()?;
                    if let Some(assignment) = assignment(word)? {
                        command.prefix.push(Item::Assignment(assignment));
                    } else if RESERVED.contains(&word) {
                        return None;
                    } else {
                        command.name = Some(Text::Borrowed(word));
                    }
                }
                Tok::Word(word) => {
                    self.bump()?;
                    command.suffix.push(Item::Word(Text::Borrowed(word)));
                }
                Tok::Op(op) if is_redirect(op) => {
                    let redirect = Item::Redirect(self.redirect()?);
                    items(&mut command).push(redirect);
                }
                Tok::ProcSub(direction) if command.name.is_some() => {
                    // `a<(ls)` is one word to bash.
                    if !matches!(self.byte(self.pos), Some(b' ' | b'\t')) {
                        return None;
                    }
                    self.bump()?;
                    let body = self.process_substitution()?;
                    command
                        .suffix
                        .push(Item::ProcessSubstitution(direction, body));
                }
                Tok::Op(_) | Tok::Newline | Tok::ProcSub(_) | Tok::End => break,
            }
        }
        if command.prefix.is_empty() && command.name.is_none() {
            return None;
        }
        out.push(Node::Simple(command));
        Some(())
    }

    /// The script of `<(...)` after its `(`, up to and past its `)`, which a blank or an
    /// operator must follow.
    fn process_substitution(&mut self) -> Option<Script<'s>> {
        let mut body = Vec::new();
        self.nested(Stop::Paren, &mut body)?;
        self.expect(Tok::Op(")"))?;
        match self.byte(self.pos) {
            None | Some(b' ' | b'\t' | b'\n' | b';' | b'&' | b'|' | b')' | b'<' | b'>') => {
                Some(body)
            }
            Some(_) => None,
        }
    }
}

/// Where a redirection of a simple command goes: before the name, or after it.
fn items<'c, 's>(command: &'c mut Simple<'s>) -> &'c mut Vec<Item<'s>> {
    if command.name.is_none() {
        &mut command.prefix
    } else {
        &mut command.suffix
    }
}

/// `[A-Za-z_][A-Za-z0-9_]*`.
fn is_name(text: &str) -> bool {
    text.bytes()
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && text.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// `NAME=value` or `NAME+=value` as an assignment; `Some(None)` for any other word; `None` for
/// a shape brush-parser decides (`NAME[...]=`).
fn assignment(word: &str) -> Option<Option<Assignment<'_>>> {
    let name_end = word
        .bytes()
        .position(|b| !(b.is_ascii_alphanumeric() || b == b'_'))
        .unwrap_or(word.len());
    let name = word.get(..name_end)?;
    let rest = word.get(name_end..)?;
    if rest.starts_with('[') && is_name(name) {
        return None;
    }
    let value = rest.strip_prefix("+=").or_else(|| rest.strip_prefix('='));
    match value {
        Some(value) if is_name(name) => Some(Some(Assignment {
            name: Text::Borrowed(name),
            index: None,
            value: Value::Scalar(Text::Borrowed(value)),
        })),
        _ => Some(None),
    }
}

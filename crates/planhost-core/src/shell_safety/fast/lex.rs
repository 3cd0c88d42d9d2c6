//! The fast parser's tokens: words as brush-parser's tokenizer delimits them (quotes,
//! escapes, `$(...)` found by parsing its script), operators, newlines.

use super::{Parser, Stop};
use crate::shell_safety::syntax::Direction;

/// One token.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Tok<'s> {
    Word(&'s str),
    Op(&'static str),
    Newline,
    /// `<(` or `>(`.
    ProcSub(Direction),
    End,
}

/// A token and where the next one starts.
#[derive(Clone, Copy, Debug)]
pub(super) struct Lexed<'s> {
    pub(super) tok: Tok<'s>,
    pub(super) end: usize,
}

/// The longest operator (brush-parser's set) starting with `first`, `second`, `third`.
fn operator(first: u8, second: Option<u8>, third: Option<u8>) -> &'static str {
    match (first, second, third) {
        (b'&', Some(b'&'), _) => "&&",
        (b'&', Some(b'>'), Some(b'>')) => "&>>",
        (b'&', Some(b'>'), _) => "&>",
        (b'&', _, _) => "&",
        (b'(', _, _) => "(",
        (b')', _, _) => ")",
        (b';', Some(b';'), Some(b'&')) => ";;&",
        (b';', Some(b';'), _) => ";;",
        (b';', Some(b'&'), _) => ";&",
        (b';', _, _) => ";",
        (b'|', Some(b'|'), _) => "||",
        (b'|', Some(b'&'), _) => "|&",
        (b'|', _, _) => "|",
        (b'<', Some(b'<'), Some(b'<')) => "<<<",
        (b'<', Some(b'<'), Some(b'-')) => "<<-",
        (b'<', Some(b'<'), _) => "<<",
        (b'<', Some(b'&'), _) => "<&",
        (b'<', Some(b'>'), _) => "<>",
        (b'<', _, _) => "<",
        (b'>', Some(b'>'), _) => ">>",
        (b'>', Some(b'&'), _) => ">&",
        (b'>', Some(b'|'), _) => ">|",
        _ => ">",
    }
}

impl<'s> Parser<'s> {
    /// Lexes the token at `self.pos`; leaves `self.pos` anywhere.
    pub(super) fn lex(&mut self) -> Option<Lexed<'s>> {
        let mut at = self.pos;
        loop {
            match self.byte(at) {
                Some(b' ') => at += 1,
                // brush-parser re-spaces a tab and drops a comment inside `$(...)`.
                Some(b'\t' | b'#') if self.raw > 0 => return None,
                Some(b'\t') => at += 1,
                Some(b'#') => {
                    while self.byte(at).is_some_and(|b| b != b'\n') {
                        at += 1;
                    }
                }
                _ => break,
            }
        }
        let tok_end = |tok, end| Some(Lexed { tok, end });
        match self.byte(at) {
            None => tok_end(Tok::End, at),
            Some(b'\n') => {
                let skip = self
                    .skips
                    .iter()
                    .find(|(nl, _)| *nl == at)
                    .map(|(_, to)| *to);
                tok_end(Tok::Newline, skip.unwrap_or(at + 1))
            }
            Some(b @ (b'<' | b'>')) if self.byte(at + 1) == Some(b'(') => {
                // `((` puts brush-parser's tokenizer in arithmetic mode (no here-documents).
                if self.byte(at + 2) == Some(b'(') {
                    return None;
                }
                let direction = if b == b'<' {
                    Direction::Read
                } else {
                    Direction::Write
                };
                tok_end(Tok::ProcSub(direction), at + 2)
            }
            Some(first @ (b'&' | b'(' | b')' | b';' | b'|' | b'<' | b'>')) => {
                let op = operator(first, self.byte(at + 1), self.byte(at + 2));
                tok_end(Tok::Op(op), at + op.len())
            }
            Some(_) => {
                let end = self.word_end(at)?;
                if end == at {
                    return None;
                }
                tok_end(Tok::Word(self.src.get(at..end)?), end)
            }
        }
    }

    /// Where the word starting at `start` ends.
    pub(super) fn word_end(&mut self, start: usize) -> Option<usize> {
        let mut at = start;
        loop {
            match self.byte(at) {
                None | Some(b' ' | b'\t' | b'\n' | b'&' | b')' | b';' | b'|' | b'<' | b'>') => {
                    return Some(at);
                }
                // An extglob, a function definition, `a=(...)`: brush-parser decides.
                Some(b'(') => return None,
                Some(b'\'') => {
                    // brush-parser's tokenizer opens an ANSI-C quote after any `$`, even an
                    // escaped one (`\$'...'`), where a backslash escapes the closing quote.
                    if at > start && self.byte(at - 1) == Some(b'$') {
                        return None;
                    }
                    at += 1;
                    while self.byte(at)? != b'\'' {
                        self.plain_byte(at)?;
                        at += 1;
                    }
                    at += 1;
                }
                Some(b'"') => at = self.double_quoted(at + 1)?,
                Some(b'\\') => at = self.escape(at)?,
                Some(b'$') => at = self.dollar(at)?,
                Some(b'`') => at = self.backquoted(at + 1)?,
                Some(_) => {
                    // A run of word bytes at once (most of a line is).
                    let run = self
                        .bytes
                        .get(at..)?
                        .iter()
                        .take_while(|b| is_word_byte(**b))
                        .count();
                    if run == 0 {
                        self.plain_byte(at)?;
                        at += 1;
                    } else {
                        at += run;
                    }
                }
            }
        }
    }

    /// Gives up on a control character (a newline is fine; a tab only outside `$(...)`).
    pub(super) fn plain_byte(&self, at: usize) -> Option<()> {
        match self.byte(at)? {
            b'\n' => Some(()),
            b'\t' if self.raw == 0 => Some(()),
            b if b < 0x20 || b == 0x7f => None,
            _ => Some(()),
        }
    }

    /// `\x`, not a line continuation.
    pub(super) fn escape(&self, at: usize) -> Option<usize> {
        match self.byte(at + 1)? {
            b'\n' => None,
            _ => {
                self.plain_byte(at + 1)?;
                Some(at + 2)
            }
        }
    }

    /// The end of `"..."` whose text starts at `at`.
    pub(super) fn double_quoted(&mut self, mut at: usize) -> Option<usize> {
        loop {
            match self.byte(at)? {
                b'"' => return Some(at + 1),
                b'\\' => at = self.escape(at)?,
                b'$' => at = self.dollar(at)?,
                b'`' => at = self.backquoted(at + 1)?,
                _ => {
                    self.plain_byte(at)?;
                    at += 1;
                }
            }
        }
    }

    /// The end of `` `...` `` whose text starts at `at`.
    pub(super) fn backquoted(&self, mut at: usize) -> Option<usize> {
        loop {
            match self.byte(at)? {
                b'`' => return Some(at + 1),
                b'\\' => {
                    self.plain_byte(at + 1)?;
                    at += 2;
                }
                _ => {
                    self.plain_byte(at)?;
                    at += 1;
                }
            }
        }
    }

    /// The end of what starts with the `$` at `at`.
    pub(super) fn dollar(&mut self, at: usize) -> Option<usize> {
        match self.byte(at + 1) {
            // `$((`, `$[`, `$'...'`, `$"..."`: brush-parser decides.
            Some(b'(') if self.byte(at + 2) == Some(b'(') => None,
            Some(b'[' | b'\'' | b'"') => None,
            Some(b'(') => {
                // `$(...)`: a script up to its `)`, parsed here only to find that `)`.
                let saved = (self.pos, self.peeked.take());
                self.pos = at + 2;
                self.raw += 1;
                let mut inner = Vec::new();
                let parsed = self.nested(Stop::Paren, &mut inner);
                self.raw -= 1;
                let close = self.pos;
                (self.pos, self.peeked) = saved;
                parsed?;
                if inner.is_empty() || self.byte(close) != Some(b')') {
                    return None;
                }
                Some(close + 1)
            }
            Some(b'{') => {
                let mut end = at + 2;
                while self.byte(end).is_some_and(|b| {
                    b.is_ascii_alphanumeric() || b"_#:-+=?%/.,*@!^~[]".contains(&b)
                }) {
                    end += 1;
                }
                (end > at + 2 && self.byte(end) == Some(b'}')).then_some(end + 1)
            }
            _ => Some(at + 1),
        }
    }
}

/// A byte that goes on a word as it is: none of the shell's special bytes, no control byte.
fn is_word_byte(b: u8) -> bool {
    WORD_BYTES.get(usize::from(b)).copied().unwrap_or(false)
}

/// [`is_word_byte`] as a table.
const WORD_BYTES: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0x21;
    while b < 256 {
        table[b] = !matches!(
            b as u8,
            b'&' | b'('
                | b')'
                | b';'
                | b'|'
                | b'<'
                | b'>'
                | b'\''
                | b'"'
                | b'\\'
                | b'$'
                | b'`'
                | 0x7f
        );
        b += 1;
    }
    table
};

//! The fast parser's redirections and here-documents.

use super::Parser;
use super::lex::Tok;
use crate::shell_safety::syntax::{FileOp, Redirect, Target, Text};

impl<'s> Parser<'s> {
    pub(super) fn target_word(&mut self) -> Option<Text<'s>> {
        match self.bump()? {
            Tok::Word(word) => Some(Text::Borrowed(word)),
            Tok::Op(_) | Tok::Newline | Tok::ProcSub(_) | Tok::End => None,
        }
    }

    pub(super) fn redirect(&mut self) -> Option<Redirect<'s>> {
        let Tok::Op(op) = self.bump()? else {
            return None;
        };
        let file = |op| -> Option<FileOp> {
            Some(match op {
                "<" => FileOp::Read,
                ">" => FileOp::Write,
                ">>" => FileOp::Append,
                "<>" => FileOp::ReadWrite,
                ">|" => FileOp::Clobber,
                "<&" => FileOp::DuplicateInput,
                ">&" => FileOp::DuplicateOutput,
                _ => return None,
            })
        };
        match op {
            "<<" => self.here_document(),
            "<<<" => Some(Redirect::HereString(self.target_word()?)),
            "&>" | "&>>" => Some(Redirect::OutputAndError {
                target: self.target_word()?,
                append: op == "&>>",
            }),
            _ => {
                let op = file(op)?;
                let target = match self.peek()? {
                    // brush-parser takes `< <(...)` and `> >(...)` only.
                    Tok::ProcSub(direction) if matches!(op, FileOp::Read | FileOp::Write) => {
                        self.bump()?;
                        Target::ProcessSubstitution(direction, self.process_substitution()?)
                    }
                    Tok::Word(_) | Tok::Op(_) | Tok::Newline | Tok::ProcSub(_) | Tok::End => {
                        Target::Word(self.target_word()?)
                    }
                };
                Some(Redirect::File(op, target))
            }
        }
    }

    /// `<<WORD`, `<<'WORD'`, `<<"WORD"` outside `$(...)`, on a line whose rest after the word
    /// is plain: the body is the lines after that line's newline up to the line `WORD`.
    pub(super) fn here_document(&mut self) -> Option<Redirect<'s>> {
        if self.raw > 0 {
            return None;
        }
        let Tok::Word(tag) = self.bump()? else {
            return None;
        };
        let quoted = tag
            .strip_prefix('\'')
            .and_then(|t| t.strip_suffix('\''))
            .or_else(|| tag.strip_prefix('"').and_then(|t| t.strip_suffix('"')));
        let delimiter = quoted.unwrap_or(tag);
        if delimiter.is_empty()
            || !delimiter
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"_.-".contains(&b))
        {
            return None;
        }
        let rest = self.src.get(self.pos..)?;
        let newline = self.pos + rest.find('\n')?;
        let line_rest = self.src.get(self.pos..newline)?;
        if line_rest
            .bytes()
            .any(|b| b"'\"`\\($\r".contains(&b) || b < 0x20 && b != b'\t')
        {
            return None;
        }
        let start = self
            .skips
            .iter()
            .find(|(nl, _)| *nl == newline)
            .map_or(newline + 1, |(_, to)| *to);
        let mut line = start;
        let (end, resume) = loop {
            let text = self.src.get(line..).unwrap_or("");
            if text.is_empty() {
                // Everything before it parsed alike, and brush-parser refuses this.
                self.cut_short = true;
                return None;
            }
            let length = text.find('\n').unwrap_or(text.len());
            if text.get(..length)? == delimiter {
                break (line, (line + length + 1).min(self.src.len()));
            }
            line += length + 1;
        };
        let body = self.src.get(start..end)?;
        if body.bytes().any(|b| b == b'\r' || b == 0) {
            return None;
        }
        self.skips.retain(|(nl, _)| *nl != newline);
        self.skips.push((newline, resume));
        self.peeked = None;
        Some(Redirect::HereDocument {
            expand: quoted.is_none(),
            body: Text::Borrowed(body),
        })
    }
}

pub(super) fn is_redirect(op: &str) -> bool {
    matches!(
        op,
        "<" | ">" | ">>" | ">|" | "<>" | "<&" | ">&" | "&>" | "&>>" | "<<<" | "<<"
    )
}

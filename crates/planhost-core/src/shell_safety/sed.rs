//! `sed`: its options, and a conservative reading of its script (GNU syntax).
//!
//! A script is proven only when it parses completely here and uses no command that writes or
//! runs: `w`, `W` write files, `e` runs a command, and the `w` and `e` flags of `s` do the same.
//! Anything this reader does not recognise is not proven.

use super::Verdict;
use super::programs_util::long_is;
use super::reason::{Effect, NotProven};

fn option(option: &str, effect: Effect) -> NotProven {
    NotProven::WritingOption {
        program: "sed".to_owned(),
        option: option.to_owned(),
        effect,
    }
}

fn unknown_form(arg: &str) -> NotProven {
    NotProven::UnknownForm {
        program: "sed".to_owned(),
        argument: arg.to_owned(),
    }
}

/// The rule for `sed` arguments (all fixed).
pub(super) fn check_sed(args: &[&str]) -> Verdict {
    let mut scripts: Vec<&str> = Vec::new();
    let mut operands: Vec<&str> = Vec::new();
    let mut i = 0;
    let mut options_done = false;
    while let Some(arg) = args.get(i) {
        i += 1;
        if options_done || *arg == "-" || !arg.starts_with('-') {
            operands.push(arg);
            continue;
        }
        if *arg == "--" {
            options_done = true;
            continue;
        }
        if let Some(long) = arg.strip_prefix("--") {
            if long_is(arg, "in-place") {
                return Err(option("-i", Effect::EditsInPlace));
            }
            if long_is(arg, "file") {
                return Err(option("-f", Effect::ScriptFromFile));
            }
            if long_is(arg, "expression") {
                match long.split_once('=') {
                    Some((_, script)) => scripts.push(script),
                    None => {
                        scripts.push(args.get(i).copied().unwrap_or(""));
                        i += 1;
                    }
                }
                continue;
            }
            let name = long.split('=').next().unwrap_or(long);
            if [
                "quiet",
                "silent",
                "regexp-extended",
                "separate",
                "null-data",
                "zero-terminated",
                "posix",
                "debug",
                "sandbox",
                "unbuffered",
                "line-length",
            ]
            .contains(&name)
            {
                continue;
            }
            return Err(unknown_form(arg));
        }
        let cluster = arg.get(1..).unwrap_or("");
        for (at, c) in cluster.char_indices() {
            match c {
                'n' | 'r' | 'E' | 's' | 'u' | 'z' => {}
                'i' => return Err(option("-i", Effect::EditsInPlace)),
                'f' => return Err(option("-f", Effect::ScriptFromFile)),
                'e' | 'l' => {
                    let attached = cluster.get(at + 1..).unwrap_or("");
                    let value = if attached.is_empty() {
                        i += 1;
                        args.get(i - 1).copied().unwrap_or("")
                    } else {
                        attached
                    };
                    if c == 'e' {
                        scripts.push(value);
                    }
                    break;
                }
                _ => return Err(unknown_form(arg)),
            }
        }
    }
    if scripts.is_empty() {
        if operands.is_empty() {
            return Err(NotProven::SedWithoutScript);
        }
        scripts.push(operands.remove(0));
    }
    let joined = scripts.join("\n");
    check_script(&joined)
}

struct Cursor<'a> {
    chars: Vec<char>,
    at: usize,
    script: &'a str,
}

impl Cursor<'_> {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.at).copied()
    }
    fn bump(&mut self) -> Option<char> {
        let c = self.peek();
        self.at += 1;
        c
    }
    fn skip_blanks(&mut self) {
        while matches!(self.peek(), Some(' ' | '\t')) {
            self.at += 1;
        }
    }
    fn unsure(&self) -> NotProven {
        NotProven::SedUnreadable {
            script: self.script.trim().to_owned(),
        }
    }
    fn digits(&mut self) -> bool {
        let start = self.at;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.at += 1;
        }
        self.at > start
    }
    /// Consumes up to and including the next unescaped `delim`.
    fn delimited(&mut self, delim: char) -> Result<(), NotProven> {
        loop {
            match self.bump() {
                None => return Err(self.unsure()),
                Some('\\') => {
                    if self.bump().is_none() {
                        return Err(self.unsure());
                    }
                }
                Some(c) if c == delim => return Ok(()),
                Some(_) => {}
            }
        }
    }
    fn skip_line(&mut self) {
        while let Some(c) = self.bump() {
            if c == '\\' {
                self.at += 1;
                continue;
            }
            if c == '\n' {
                break;
            }
        }
    }
    fn address(&mut self) -> Result<bool, NotProven> {
        match self.peek() {
            Some(c) if c.is_ascii_digit() => {
                self.digits();
                if self.peek() == Some('~') {
                    self.at += 1;
                    self.digits();
                }
                Ok(true)
            }
            Some('$') => {
                self.at += 1;
                Ok(true)
            }
            Some('/') => {
                self.at += 1;
                self.delimited('/')?;
                self.regex_flags();
                Ok(true)
            }
            Some('\\') => {
                self.at += 1;
                let delim = self.bump().ok_or_else(|| self.unsure())?;
                if delim == '\n' || delim == '\\' {
                    return Err(self.unsure());
                }
                self.delimited(delim)?;
                self.regex_flags();
                Ok(true)
            }
            _ => Ok(false),
        }
    }
    fn regex_flags(&mut self) {
        while matches!(self.peek(), Some('I' | 'M')) {
            self.at += 1;
        }
    }
    fn label(&mut self) {
        self.skip_blanks();
        while self
            .peek()
            .is_some_and(|c| !matches!(c, ';' | '\n' | ' ' | '\t' | '}'))
        {
            self.at += 1;
        }
    }
}

/// Parses a whole script; `Ok` only when every command is understood and none writes or runs.
pub(super) fn check_script(script: &str) -> Verdict {
    let mut cur = Cursor {
        chars: script.chars().collect(),
        at: 0,
        script,
    };
    loop {
        while matches!(cur.peek(), Some(' ' | '\t' | '\n' | ';')) {
            cur.at += 1;
        }
        let Some(c) = cur.peek() else {
            return Ok(());
        };
        if c == '#' {
            cur.skip_line();
            continue;
        }
        if cur.address()? {
            cur.skip_blanks();
            if cur.peek() == Some(',') {
                cur.at += 1;
                cur.skip_blanks();
                match cur.peek() {
                    Some('+' | '~') => {
                        cur.at += 1;
                        if !cur.digits() {
                            return Err(cur.unsure());
                        }
                    }
                    _ => {
                        if !cur.address()? {
                            return Err(cur.unsure());
                        }
                    }
                }
            }
        }
        cur.skip_blanks();
        while cur.peek() == Some('!') {
            cur.at += 1;
            cur.skip_blanks();
        }
        let command = cur.bump().ok_or_else(|| cur.unsure())?;
        match command {
            '{' => continue,
            '}' | '=' | 'd' | 'D' | 'g' | 'G' | 'h' | 'H' | 'n' | 'N' | 'p' | 'P' | 'x' | 'z'
            | 'F' => {}
            'l' | 'L' | 'q' | 'Q' => {
                cur.skip_blanks();
                cur.digits();
            }
            ':' | 'b' | 't' | 'T' | 'v' => cur.label(),
            'a' | 'i' | 'c' | 'r' | 'R' => {
                // Text or a file to read, to the end of the line.
                cur.skip_line();
                continue;
            }
            'w' | 'W' => {
                return Err(NotProven::SedCommand {
                    command,
                    effect: Effect::WritesToFile,
                });
            }
            'e' => {
                return Err(NotProven::SedCommand {
                    command,
                    effect: Effect::RunsShellCommand,
                });
            }
            's' => {
                let delim = cur.bump().ok_or_else(|| cur.unsure())?;
                if delim == '\n' || delim == '\\' {
                    return Err(cur.unsure());
                }
                cur.delimited(delim)?;
                cur.delimited(delim)?;
                while let Some(flag) = cur.peek() {
                    match flag {
                        'g' | 'p' | 'i' | 'I' | 'm' | 'M' | '0'..='9' => cur.at += 1,
                        'w' => {
                            return Err(NotProven::SedFlag {
                                flag,
                                effect: Effect::WritesToFile,
                            });
                        }
                        'e' => {
                            return Err(NotProven::SedFlag {
                                flag,
                                effect: Effect::RunsShellCommand,
                            });
                        }
                        _ => break,
                    }
                }
            }
            'y' => {
                let delim = cur.bump().ok_or_else(|| cur.unsure())?;
                if delim == '\n' || delim == '\\' {
                    return Err(cur.unsure());
                }
                cur.delimited(delim)?;
                cur.delimited(delim)?;
            }
            _ => return Err(cur.unsure()),
        }
        cur.skip_blanks();
        match cur.peek() {
            None | Some(';' | '\n' | '}' | '#') => {}
            Some(_) => return Err(cur.unsure()),
        }
    }
}

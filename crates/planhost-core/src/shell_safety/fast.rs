//! A parser-free path for lines made only of plain words: `ls -la src`, `git status && git log
//! -3`, `cat a | wc -l`.
//!
//! brush-parser costs ~0.1–0.3 µs per byte (its tokenizer reads one `char` at a time and
//! allocates per token); a line of plain words needs none of it. Here a line qualifies only
//! when every byte is a plain word byte (`[A-Za-z0-9_./=:,@%+-]`), a blank (space, tab), or one
//! of the separators `;`, newline, `|`, `||`, `&&`, with every command between separators
//! non-empty, no word a reserved word (or `time`), and no command starting with an assignment.
//! For such a line the parser's tree is a list of simple commands in source order whose words
//! are the blank-separated runs, and the walker checks them in that order: the verdict is
//! `check_invocation` on each, the first failure winning. Anything else (`&`, `|&`, `;;`, an
//! empty command, a trailing separator...) returns `None` and takes the full parser, so a line
//! the parser would reject is never judged here. The property test
//! `plain_path_agrees_with_the_parser` compares both paths' trees.

use super::syntax::{Item, Node, Script, Simple};

/// Bytes a plain word is made of: none of them is special to the shell tokenizer.
fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"_./=:,@%+-".contains(&b)
}

/// Words the parser reads as syntax in some position (POSIX and bash reserved words, and `time`
/// before a pipeline). A line containing one anywhere takes the parser.
const RESERVED: &[&str] = &[
    "case", "do", "done", "elif", "else", "esac", "fi", "for", "if", "in", "then", "until",
    "while", "function", "select", "coproc", "time",
];

/// The tree of a line of plain words, or `None` when the line needs the parser.
pub(super) fn parse(script: &str) -> Option<Script> {
    let bytes = script.as_bytes();
    if !bytes
        .iter()
        .all(|&b| is_word_byte(b) || matches!(b, b' ' | b'\t' | b'\n' | b';' | b'|' | b'&'))
    {
        return None;
    }
    let body = script.trim_matches([' ', '\t', '\n']);
    // Split into commands on `;`, newline, `|`, `||`, `&&`; validate the whole line before
    // judging any command, so a line the parser rejects never gets a verdict here.
    let mut commands: Script = Vec::new();
    let body_bytes = body.as_bytes();
    let mut start = 0;
    let mut i = 0;
    while i <= body_bytes.len() {
        let separator_len = match body_bytes.get(i) {
            None => 0,
            Some(b';' | b'\n') => 1,
            Some(b'|') => {
                if body_bytes.get(i + 1) == Some(&b'|') {
                    2
                } else {
                    1
                }
            }
            Some(b'&') => {
                if body_bytes.get(i + 1) == Some(&b'&') {
                    2
                } else {
                    // A lone `&` (background) or `&>`: the parser decides.
                    return None;
                }
            }
            Some(_) => {
                i += 1;
                continue;
            }
        };
        let segment = body.get(start..i)?;
        let words: Vec<&str> = segment
            .split([' ', '\t'])
            .filter(|w| !w.is_empty())
            .collect();
        let first = words.first()?;
        if first.contains('=') || words.iter().any(|w| RESERVED.contains(w)) {
            return None;
        }
        commands.push(Node::Simple(Simple {
            prefix: Vec::new(),
            name: Some((*first).to_owned()),
            suffix: words
                .get(1..)
                .unwrap_or(&[])
                .iter()
                .map(|w| Item::Word((*w).to_owned()))
                .collect(),
        }));
        if separator_len == 0 {
            break;
        }
        i += separator_len;
        start = i;
    }
    Some(commands)
}

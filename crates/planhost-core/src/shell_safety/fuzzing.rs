//! The classifier's internal agreements, for the `shell_classifier` fuzz target (feature
//! `fuzzing`) and this crate's tests: the fast parser against brush-parser, the fast word
//! reader against brush-parser's word parser.

use super::fast::{self, Parsed};
use super::walk::{Found, Walker};
use super::{from_brush, has_overflowing_number, too_hard_for_brush, words};

/// The fast parser's answer holds against brush-parser's: where it builds a tree, brush-parser
/// builds the same one; where it refuses a line cut short, brush-parser refuses it too.
///
/// # Errors
///
/// A description of the disagreement.
pub fn parsers_agree(line: &str) -> Result<(), String> {
    // The classifier refuses these before either parser runs (brush-parser panics on them).
    if has_overflowing_number(line) {
        return Ok(());
    }
    // ...and these before brush-parser runs (too slow): the fast parser's answer stands alone.
    if too_hard_for_brush(line).is_some() {
        return Ok(());
    }
    match fast::parse(line) {
        Parsed::Tree(tree) => {
            let brush = from_brush::parse(line);
            if brush.as_ref() != Some(&tree) {
                return Err(format!("{line:?}: fast {tree:?}, brush {brush:?}"));
            }
        }
        Parsed::Refused => {
            if let Some(brush) = from_brush::parse(line) {
                return Err(format!("{line:?}: fast refused it, brush {brush:?}"));
            }
        }
        Parsed::Unknown => {}
    }
    Ok(())
}

/// Where the fast word reader answers, brush-parser's word parser reads the word alike.
///
/// # Errors
///
/// A description of the disagreement.
pub fn word_agrees(word: &str) -> Result<(), String> {
    // Words the classifier never hands to brush-parser's word parser: no answer to compare.
    if has_overflowing_number(word) || words::too_hard_for_word_parser(word).is_some() {
        return Ok(());
    }
    let Some(fast) = words::quoted_word(word) else {
        return Ok(());
    };
    let mut found = Found::default();
    let mut walker = Walker {
        depth: 0,
        found: &mut found,
    };
    let (full, verdict) = words::parsed_word(&mut walker, word);
    if fast != full || verdict.is_err() {
        return Err(format!(
            "{word:?}: fast {fast:?}, parser {full:?} {verdict:?}"
        ));
    }
    Ok(())
}

/// Where the here-document shortcut says a body runs nothing, brush-parser's word parser finds
/// nothing that runs either.
///
/// # Errors
///
/// A description of the disagreement.
pub fn heredoc_agrees(body: &str) -> Result<(), String> {
    if has_overflowing_number(body)
        || words::too_hard_for_word_parser(body).is_some()
        || !words::runs_nothing(body)
    {
        return Ok(());
    }
    let mut found = Found::default();
    let mut walker = Walker {
        depth: 0,
        found: &mut found,
    };
    let verdict = words::parsed_heredoc_body(&mut walker, body);
    if verdict.is_err() || found.unknown_program || !found.programs.is_empty() {
        return Err(format!(
            "{body:?}: runs nothing, yet the parser: {verdict:?} {found:?}"
        ));
    }
    Ok(())
}

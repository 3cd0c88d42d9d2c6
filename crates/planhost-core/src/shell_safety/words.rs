//! What a single shell word can become: its fixed text when it has one, and every command it
//! runs while it is expanded.

use std::borrow::Cow;

use brush_parser::word::{ParameterExpr, WordPiece, WordPieceWithSource};

use super::reason::{NotProven, ParameterUse};
use super::walk::Walker;
use super::{MAX_PARENS_FOR_BRUSH, Verdict, classify_script, paren_nesting, parser_options};

/// A word after the checks on its expansions (borrowing the word as written).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct WordInfo<'w> {
    /// The text the word always expands to, or `None` when it depends on the run
    /// (parameter, command substitution, arithmetic, unquoted glob or brace expansion).
    pub(super) literal: Option<Cow<'w, str>>,
    /// Whether the word can expand into several words (or none): an unquoted expansion, glob
    /// or brace expansion.
    pub(super) may_split: bool,
    /// The word as written, for reasons.
    pub(super) source: &'w str,
    /// When the word is unknown but every word it can become starts with this fixed text
    /// (`src/*.rs`, `"dir/$x"`), which does not start with `-`: it can never be an option.
    pub(super) fixed_prefix: Option<String>,
}

impl<'w> WordInfo<'w> {
    /// The fixed text, if any.
    pub(super) fn lit(&self) -> Option<&str> {
        self.literal.as_deref()
    }

    /// A word that can be anything at all (one that does not parse, an input line).
    pub(super) fn unknown(source: &'w str) -> WordInfo<'w> {
        WordInfo {
            literal: None,
            may_split: true,
            source,
            fixed_prefix: None,
        }
    }
}

/// Works out a word's fixed text and checks every command it runs while it expands; the
/// verdict is the first expansion not proven.
pub(super) fn analyze_word<'w>(walker: &mut Walker<'_>, word: &'w str) -> (WordInfo<'w>, Verdict) {
    // Fast path: a word of plain characters is its own text (most words are).
    if !word.is_empty()
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./,:=+%@^".contains(&b))
    {
        let info = WordInfo {
            literal: Some(Cow::Borrowed(word)),
            may_split: false,
            source: word,
            fixed_prefix: None,
        };
        return (info, Ok(()));
    }
    if let Some(info) = quoted_word(word) {
        return (info, Ok(()));
    }
    parsed_word(walker, word)
}

/// [`analyze_word`] through brush-parser's word parser.
pub(super) fn parsed_word<'w>(walker: &mut Walker<'_>, word: &'w str) -> (WordInfo<'w>, Verdict) {
    if let Some(reason) = too_hard_for_word_parser(word) {
        walker.unknown_code();
        return (WordInfo::unknown(word), Err(reason));
    }
    // Like the program parser, brush-parser's word parser unwraps a few number parses; a panic
    // there is "not proven", never a crash of the policy.
    let parsed = std::panic::catch_unwind(|| brush_parser::word::parse(word, &parser_options()));
    let Ok(Ok(pieces)) = parsed else {
        // What it would run is unseen.
        walker.unknown_code();
        let reason = NotProven::UnparsedWord {
            word: word.to_owned(),
        };
        return (WordInfo::unknown(word), Err(reason));
    };
    let mut state = WordState::default();
    let verdict = walk_pieces(walker, &pieces, word, false, &mut state);
    if has_brace_expansion(word) {
        // `{a,b}` and `{1..3}` expand into several words when unquoted. A conservative
        // textual check: any `{` that is followed by `,` or `..` before `}`.
        state.dynamic = true;
        state.may_split = true;
        let brace = state.text.find('{').unwrap_or(0);
        state.prefix_end = Some(state.prefix_end.map_or(brace, |end| end.min(brace)));
    }
    (state.finish(word), verdict)
}

/// A word that runs nothing, without brush-parser: plain text, `~`, `'...'`, `"..."` without
/// `$`, `` ` `` or `\` inside, `\x`, `*` and `?` (globs), `$NAME` and `${NAME}`. `None` for
/// anything else (`[`, `{`, `$(`, ...), which [`parsed_word`] reads; where this answers, both
/// agree (`quoted_words_agree_with_the_word_parser`).
pub(super) fn quoted_word(word: &str) -> Option<WordInfo<'_>> {
    let bytes = word.as_bytes();
    // The brace-expansion check reads the text quotes and all: leave it to `parsed_word`.
    if has_brace_expansion(word) {
        return None;
    }
    let mut state = WordState::default();
    let mut i = 0;
    let mut quoted = false;
    while let Some(&b) = bytes.get(i) {
        match b {
            b'\'' if !quoted => {
                let len = word.get(i + 1..)?.find('\'')?;
                state.text.push_str(word.get(i + 1..i + 1 + len)?);
                i += len + 2;
            }
            b'"' => {
                quoted = !quoted;
                i += 1;
            }
            b'\\' if !quoted => {
                let c = word.get(i + 1..)?.chars().next()?;
                state.text.push(c);
                i += 1 + c.len_utf8();
            }
            b'$' => {
                let braced = bytes.get(i + 1) == Some(&b'{');
                let start = i + 1 + usize::from(braced);
                let len = bytes
                    .get(start..)?
                    .iter()
                    .position(|b| !(b.is_ascii_alphanumeric() || *b == b'_'))
                    .unwrap_or(bytes.len() - start);
                let name = word.get(start..start + len)?;
                if !name
                    .bytes()
                    .next()
                    .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
                {
                    return None;
                }
                i = start + len;
                if braced {
                    if bytes.get(i) != Some(&b'}') {
                        return None;
                    }
                    i += 1;
                }
                state.expansion(quoted);
            }
            b'*' | b'?' if !quoted => {
                state.unknown_from(state.text.len());
                state.may_split = true;
                state.text.push(char::from(b));
                i += 1;
            }
            b'`' | b'{' | b'\\' => return None,
            b'[' | b'(' if !quoted => return None,
            _ => {
                // Up to the next byte that means something here.
                let special: &[u8] = if quoted { b"\"$`\\{" } else { b"'\"\\$*?`[{(" };
                let len = bytes
                    .get(i..)?
                    .iter()
                    .position(|b| special.contains(b))
                    .unwrap_or(bytes.len() - i)
                    .max(1);
                let text = word.get(i..i + len)?;
                if text.bytes().any(|b| b < 0x20 || b == 0x7f) {
                    return None;
                }
                state.text.push_str(text);
                i += len;
            }
        }
    }
    (!quoted).then(|| state.finish(word))
}

/// Checks the commands an unquoted here-document body runs (`$(...)`, backquotes, `${...}`).
pub(super) fn check_heredoc_body(walker: &mut Walker<'_>, body: &str) -> Verdict {
    if runs_nothing(body) {
        return Ok(());
    }
    parsed_heredoc_body(walker, body)
}

/// [`check_heredoc_body`] through brush-parser's word parser.
pub(super) fn parsed_heredoc_body(walker: &mut Walker<'_>, body: &str) -> Verdict {
    if let Some(reason) = too_hard_for_word_parser(body) {
        walker.unknown_code();
        return Err(reason);
    }
    let parsed =
        std::panic::catch_unwind(|| brush_parser::word::parse_heredoc(body, &parser_options()));
    let Ok(Ok(pieces)) = parsed else {
        walker.unknown_code();
        return Err(NotProven::UnparsedHereDocument);
    };
    let mut state = WordState::default();
    walk_pieces(walker, &pieces, body, true, &mut state)
}

/// The word parser's cost bound, in units: a complex expansion (as counted by
/// [`complex_expansions`]) 4, each `[` and `(` 1. Its time grows some twentyfold with each
/// `${x[` left unclosed inside another (3: ~1 ms, 4: ~25 ms, 6: 10 s), and multiplies across
/// bracket globs and parentheses too: the fuzz target found a 184-byte here-document body that
/// took over 10 s and a 76-byte word that took 140 ms.
const MAX_WORD_PARSER_COST: usize = 10;

/// Whether a text is over [`MAX_WORD_PARSER_COST`].
pub(super) fn too_costly_for_word_parser(text: &str) -> bool {
    let cost =
        4 * complex_expansions(text) + text.bytes().filter(|b| matches!(b, b'[' | b'(')).count();
    cost > MAX_WORD_PARSER_COST
}

/// Why a word or here-document body is not handed to brush-parser's word parser.
pub(super) fn too_hard_for_word_parser(text: &str) -> Option<NotProven> {
    if paren_nesting(text) > MAX_PARENS_FOR_BRUSH {
        Some(NotProven::TooNested)
    } else if too_costly_for_word_parser(text) {
        Some(NotProven::TooManyExpansions)
    } else {
        None
    }
}

/// How many `${` not followed by `NAME}`, `$((` and `$[` the text holds, quotes or not.
pub(super) fn complex_expansions(text: &str) -> usize {
    let bytes = text.as_bytes();
    let mut count = 0;
    for (i, window) in bytes.windows(2).enumerate() {
        match window {
            [b'$', b'{'] => {
                let rest = bytes.get(i + 2..).unwrap_or(&[]);
                let name = rest
                    .iter()
                    .take_while(|b| b.is_ascii_alphanumeric() || **b == b'_')
                    .count();
                if name == 0 || rest.get(name) != Some(&b'}') {
                    count += 1;
                }
            }
            [b'$', b'['] => count += 1,
            [b'$', b'('] if bytes.get(i + 2) == Some(&b'(') => count += 1,
            _ => {}
        }
    }
    count
}

/// A here-document body whose only expansions are `$NAME`, `${NAME}` and the special
/// parameters: nothing in it runs, without brush-parser's word parser (most bodies are so).
pub(super) fn runs_nothing(body: &str) -> bool {
    let bytes = body.as_bytes();
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        i += 1;
        match b {
            b'`' => return false,
            // An escaped `$` or backquote is text.
            b'\\' => i += 1,
            b'$' => match bytes.get(i) {
                Some(b'(' | b'[' | b'\'' | b'"') => return false,
                Some(b'{') => {
                    let rest = bytes.get(i + 1..).unwrap_or(&[]);
                    let name = rest
                        .iter()
                        .take_while(|b| b.is_ascii_alphanumeric() || **b == b'_')
                        .count();
                    if name == 0 || rest.get(name) != Some(&b'}') {
                        return false;
                    }
                    i += name + 2;
                }
                _ => {}
            },
            _ => {}
        }
    }
    true
}

#[derive(Default)]
struct WordState {
    text: String,
    dynamic: bool,
    may_split: bool,
    /// Where the fixed start of the word ends: set at the first unknown piece.
    prefix_end: Option<usize>,
    /// An unquoted parameter, command or arithmetic expansion: split into any words.
    unquoted_expansion: bool,
}

impl WordState {
    /// The word's information once every piece is read.
    fn finish(self, word: &str) -> WordInfo<'_> {
        let fixed_prefix = match self.prefix_end {
            Some(end) if self.dynamic && !self.unquoted_expansion => self
                .text
                .get(..end)
                .filter(|p| !p.is_empty() && !p.starts_with('-'))
                .map(str::to_owned),
            _ => None,
        };
        WordInfo {
            literal: (!self.dynamic).then_some(Cow::Owned(self.text)),
            may_split: self.may_split,
            source: word,
            fixed_prefix,
        }
    }

    fn unknown_from(&mut self, at: usize) {
        self.dynamic = true;
        if self.prefix_end.is_none() {
            self.prefix_end = Some(at);
        }
    }

    fn expansion(&mut self, quoted: bool) {
        self.unknown_from(self.text.len());
        self.may_split |= !quoted;
        self.unquoted_expansion |= !quoted;
    }
}

fn walk_pieces(
    walker: &mut Walker<'_>,
    pieces: &[WordPieceWithSource],
    source: &str,
    quoted: bool,
    state: &mut WordState,
) -> Verdict {
    let mut verdict = Ok(());
    for piece in pieces {
        let piece_source = source
            .get(piece.start_index..piece.end_index)
            .unwrap_or(source);
        match &piece.piece {
            WordPiece::Text(text) => {
                if !quoted && is_pattern(text) {
                    let first = text.find(['*', '?', '[', '(']).unwrap_or(0);
                    state.unknown_from(state.text.len() + first);
                    state.may_split = true;
                }
                state.text.push_str(text);
            }
            WordPiece::SingleQuotedText(text) => state.text.push_str(text),
            WordPiece::AnsiCQuotedText(_) => {
                // `$'...'` escapes are not decoded here: the value counts as unknown.
                state.unknown_from(state.text.len());
            }
            WordPiece::EscapeSequence(seq) => {
                let mut chars = seq.chars();
                match (chars.next(), chars.next()) {
                    (Some('\\'), Some(c)) => state.text.push(c),
                    _ => state.text.push_str(seq),
                }
            }
            WordPiece::DoubleQuotedSequence(inner)
            | WordPiece::GettextDoubleQuotedSequence(inner) => {
                let inner = walk_pieces(walker, inner, source, true, state);
                verdict = verdict.and(inner);
            }
            WordPiece::TildeExpansion(_) => {
                // `~` expands to a home directory: an absolute path, never an option.
                state.text.push_str(piece_source);
            }
            WordPiece::ParameterExpansion(expr) => {
                let parameter = check_parameter(expr, piece_source);
                if parameter.is_err() {
                    // It runs or evaluates what the walk does not see.
                    walker.unknown_code();
                }
                verdict = verdict.and(parameter);
                state.expansion(quoted);
            }
            WordPiece::CommandSubstitution(script) => {
                verdict = verdict.and(check_substitution(walker, script, "$(...)"));
                state.expansion(quoted);
            }
            WordPiece::BackquotedCommandSubstitution(script) => {
                let script = unescape_backquoted(script);
                verdict = verdict.and(check_substitution(walker, &script, "`...`"));
                state.expansion(quoted);
            }
            WordPiece::ArithmeticExpression(expr) => {
                verdict = verdict.and(walker.arithmetic(&expr.value));
                state.expansion(quoted);
            }
        }
    }
    verdict
}

/// A command substitution's script is itself classified.
fn check_substitution(walker: &mut Walker<'_>, script: &str, form: &str) -> Verdict {
    classify_script(&mut walker.nested(), script).map_err(|inner| NotProven::Runs {
        form: form.to_owned(),
        script: script.trim().to_owned(),
        inner: Box::new(inner),
    })
}

/// Inside backquotes the shell removes the backslash before `$`, `` ` `` and `\` before it
/// parses the command (the parser already did `` ` ``).
fn unescape_backquoted(script: &str) -> String {
    let mut out = String::with_capacity(script.len());
    let mut chars = script.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\'
            && let Some(&next) = chars.peek()
            && matches!(next, '$' | '\\' | '`')
        {
            out.push(next);
            chars.next();
            continue;
        }
        out.push(c);
    }
    out
}

/// Arithmetic is proven harmless only when it names no variable: a variable's value is itself
/// evaluated as arithmetic, and `a[$(cmd)]` in it runs `cmd`; `x=1` and `x++` assign.
pub(super) fn check_arithmetic(expr: &str) -> Verdict {
    let plain = expr
        .chars()
        .all(|c| c.is_ascii_digit() || c.is_ascii_whitespace() || "+-*/%()<>=!&|^~?:,".contains(c));
    if plain {
        Ok(())
    } else {
        Err(NotProven::Arithmetic {
            expr: expr.trim().to_owned(),
        })
    }
}

fn check_parameter(expr: &ParameterExpr, source: &str) -> Verdict {
    let not_proven = |does| NotProven::Parameter {
        source: source.to_owned(),
        does,
    };
    let inner = source.strip_prefix("${").and_then(|s| s.strip_suffix('}'));
    if let Some(inner) = inner {
        if inner.contains("$(")
            || inner.contains('`')
            || inner.contains("<(")
            || inner.contains(">(")
        {
            return Err(not_proven(ParameterUse::RunsCommand));
        }
        if inner.starts_with('!') {
            return Err(not_proven(ParameterUse::Indirect));
        }
        if inner.contains('=') {
            return Err(not_proven(ParameterUse::MayAssign));
        }
        if inner.contains("@P") {
            return Err(not_proven(ParameterUse::Prompt));
        }
        if let Some(open) = inner.find('[') {
            let index = inner
                .get(open + 1..)
                .and_then(|rest| rest.split(']').next());
            if !matches!(index, Some("@" | "*"))
                && !index.is_some_and(|i| !i.is_empty() && i.bytes().all(|b| b.is_ascii_digit()))
            {
                return Err(not_proven(ParameterUse::ArrayIndex));
            }
        }
    }
    if let ParameterExpr::Substring { offset, length, .. } = expr {
        check_arithmetic(&offset.value)?;
        if let Some(length) = length {
            check_arithmetic(&length.value)?;
        }
    }
    Ok(())
}

fn has_brace_expansion(word: &str) -> bool {
    let mut rest = word;
    while let Some(open) = rest.find('{') {
        let after = rest.get(open + 1..).unwrap_or("");
        let body = after.split('}').next().unwrap_or("");
        if after.contains('}') && (body.contains(',') || body.contains("..")) {
            return true;
        }
        rest = after;
    }
    false
}

/// Unquoted text the shell may expand as a pattern: `*`, `?`, `[...]`, extglob `(`.
fn is_pattern(text: &str) -> bool {
    text.contains(['*', '?', '('])
        || text
            .find('[')
            .is_some_and(|open| text.get(open + 1..).is_some_and(|rest| rest.contains(']')))
}

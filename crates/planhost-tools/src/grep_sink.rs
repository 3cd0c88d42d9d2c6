//! The per-file sink that turns searcher callbacks into Grep results.

use grep_searcher::{Searcher, Sink, SinkContext, SinkContextKind, SinkMatch};
use planhost_core::LineKind;

use crate::grep::GrepMode;
use crate::text::{cut_chars, strip_terminator};

/// Longest line text returned by Grep, in characters; a match in a minified file should not
/// spend the whole output budget.
pub const GREP_MAX_LINE_CHARS: usize = 1000;

/// Whether the sink stopped a file's search early because it had enough lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Capped {
    No,
    Yes,
}

/// Whether the searcher met binary data in the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Binary {
    No,
    Yes,
}

/// Collects one file's results.
#[derive(Debug)]
pub(crate) struct Collector {
    mode: GrepMode,
    line_cap: usize,
    pub(crate) matches: u64,
    pub(crate) lines: Vec<(u64, LineKind, String)>,
    pub(crate) capped: Capped,
    pub(crate) binary: Binary,
}

impl Collector {
    pub(crate) fn new(mode: GrepMode, line_cap: usize) -> Self {
        Self {
            mode,
            line_cap,
            matches: 0,
            lines: Vec::new(),
            capped: Capped::No,
            binary: Binary::No,
        }
    }

    fn push(&mut self, line_number: Option<u64>, kind: LineKind, bytes: &[u8]) -> bool {
        let mut text = String::from_utf8_lossy(strip_terminator(bytes)).into_owned();
        cut_chars(&mut text, GREP_MAX_LINE_CHARS);
        self.lines.push((line_number.unwrap_or(0), kind, text));
        if self.lines.len() >= self.line_cap {
            self.capped = Capped::Yes;
            return false;
        }
        true
    }
}

impl Sink for Collector {
    type Error = std::io::Error;

    fn matched(&mut self, _: &Searcher, mat: &SinkMatch<'_>) -> Result<bool, Self::Error> {
        self.matches += 1;
        match self.mode {
            // One match is enough to list the file.
            GrepMode::Files => Ok(false),
            GrepMode::Count => Ok(true),
            GrepMode::Content => Ok(self.push(mat.line_number(), LineKind::Match, mat.bytes())),
        }
    }

    fn context(&mut self, _: &Searcher, ctx: &SinkContext<'_>) -> Result<bool, Self::Error> {
        match ctx.kind() {
            SinkContextKind::Before | SinkContextKind::After | SinkContextKind::Other => {
                Ok(self.push(ctx.line_number(), LineKind::Context, ctx.bytes()))
            }
        }
    }

    fn binary_data(&mut self, _: &Searcher, _offset: u64) -> Result<bool, Self::Error> {
        // Binary files are skipped whole, including matches seen before the NUL.
        self.binary = Binary::Yes;
        Ok(false)
    }
}

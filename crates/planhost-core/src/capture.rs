//! Capture of a `<proposed_plan>` block from a final assistant message (seed 004, "Stream capture").
//!
//! The rules, where seed 004 is silent, are these:
//!
//! - **Lines.** A line ends at `\n`. Any `\r` immediately before that `\n` belongs to the line
//!   ending: it is ignored when a line is classified and dropped from the artifact, so the captured
//!   Markdown never contains `\r\n`. A `\r` elsewhere is content. The last line of a block need not
//!   end with `\n`.
//! - **Delimiters.** A line is a delimiter when, after at most three leading spaces (U+0020, as in
//!   CommonMark; a tab or a fourth space makes it an indented-code line), it is exactly
//!   `<proposed_plan>` or `</proposed_plan>` (case-sensitive), followed only by spaces and tabs
//!   (then the line ending). Anything else on the line (`text <proposed_plan>`) makes it content.
//! - **Fences.** Outside a fence, a line opens one when, after at most three leading spaces, it
//!   starts with a run of three or more `` ` `` or `~`; a backtick fence's info string may not
//!   contain a backtick (CommonMark). The fence closes on a line that is, after at most three
//!   leading spaces, a run of the same character at least as long, followed only by spaces and
//!   tabs. Inside a fence, delimiter lines are content. An unclosed fence runs to the end of its
//!   content block; when it was opened inside a plan body, that plan is therefore incomplete.
//!   Fences inside block quotes or list items are not recognised.
//! - **Blocks.** Each text content block is its own document: fence state and line numbers restart
//!   in each. A plan opened in one block and not closed in it is rejected (`CAPTURE_SPANS_BLOCKS`
//!   when the next text block's first delimiter is a close, `CAPTURE_INCOMPLETE` otherwise).
//! - **One plan.** A message holds at most one plan; a second complete or opened plan anywhere in
//!   the message is `CAPTURE_DUPLICATE_DELIMITER`. The first violation in reading order is reported.
//! - **Body.** The artifact is the lines strictly between the delimiters, each followed by `\n`
//!   (so it always ends with `\n`), with line-ending `\r`s removed. A body that is empty or only
//!   whitespace (`str::trim`) is `CAPTURE_EMPTY`; one larger than [`MAX_PLAN_BYTES`] is
//!   `CAPTURE_TOO_LARGE`, detected while streaming so memory stays bounded.
//! - **Eligibility.** Only a message begun in planning, stopped with `stop` and carrying no tool
//!   call is scanned; any other message captures nothing (`Ok(None)`), and [`eligibility`] says why.

use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};

use crate::{EntryId, MAX_PLAN_BYTES, sha256_hex};

/// The opening delimiter line.
pub const OPEN_DELIMITER: &str = "<proposed_plan>";
/// The closing delimiter line.
pub const CLOSE_DELIMITER: &str = "</proposed_plan>";

/// Why an assistant turn ended, as the provider reported it.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// The model finished its answer.
    Stop,
    /// The model stopped to call tools.
    ToolUse,
    /// The output limit cut the answer off.
    Length,
    /// The provider failed.
    Error,
    /// The user or host aborted the turn.
    Aborted,
}

impl StopReason {
    /// The stable string used on the wire and in the fingerprint.
    pub fn as_str(self) -> &'static str {
        match self {
            StopReason::Stop => "stop",
            StopReason::ToolUse => "tool_use",
            StopReason::Length => "length",
            StopReason::Error => "error",
            StopReason::Aborted => "aborted",
        }
    }
}

/// One content block of an assistant message, in transcript order.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentBlock {
    /// Visible assistant text; the only kind that can carry a plan.
    Text {
        /// The block's exact text.
        text: String,
    },
    /// A tool call; its presence makes the message ineligible.
    ToolCall {
        /// The provider's call id.
        id: String,
        /// The tool name.
        name: String,
        /// The arguments, exactly as serialised by the adapter.
        arguments: String,
    },
    /// Anything else (thinking, images, …): never scanned, but part of the fingerprint.
    Other {
        /// The provider's block type.
        kind: String,
        /// A stable serialisation chosen by the adapter.
        payload: String,
    },
}

/// A final assistant message offered for capture.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AssistantMessage {
    /// The unique persisted transcript entry holding the message.
    pub entry_id: EntryId,
    /// The content blocks in order.
    pub content: Vec<ContentBlock>,
    /// How the turn ended.
    pub stop_reason: StopReason,
    /// Whether the session was planning when the message began (a host fact, not content).
    pub started_in_planning: bool,
}

/// A captured plan, bound to the exact message and block it came from.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Capture {
    /// The source transcript entry.
    pub entry_id: EntryId,
    /// [`fingerprint`] of the whole source message.
    pub fingerprint: String,
    /// Index of the plan's block in [`AssistantMessage::content`].
    pub block_index: usize,
    /// Byte offset in the block's text where the body starts (just after the open line).
    pub body_start: usize,
    /// Byte offset in the block's text where the body ends (the start of the close line).
    pub body_end: usize,
    /// The artifact: the body with line-ending `\r`s removed.
    pub markdown: String,
    /// Lowercase hex SHA-256 of `markdown`.
    pub sha256: String,
}

impl Capture {
    /// The dedup identity `(entry_id, fingerprint, block_index)`: the same entry offered again
    /// yields the same identity, so a store keyed on it never creates a second revision.
    pub fn identity(&self) -> (&str, &str, usize) {
        (self.entry_id.as_str(), &self.fingerprint, self.block_index)
    }
}

/// A plan found by [`ProposedPlanParser`], before it is bound to a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanBlock {
    /// The content block the plan is in.
    pub block_index: usize,
    /// 1-based line of the open delimiter within the block.
    pub open_line: usize,
    /// 1-based line of the close delimiter within the block.
    pub close_line: usize,
    /// Byte offset where the body starts.
    pub body_start: usize,
    /// Byte offset where the body ends.
    pub body_end: usize,
    /// The normalised body.
    pub markdown: String,
}

/// Why a message's plan delimiters were rejected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CaptureErrorKind {
    /// An open delimiter inside an open plan body.
    NestedDelimiter,
    /// A second plan in the same message.
    DuplicateDelimiter,
    /// A close delimiter with no open plan.
    StrayDelimiter,
    /// A plan still open at the end of its content block.
    Incomplete,
    /// A plan opened in one block and closed in the next text block.
    SpansBlocks,
    /// A plan body with nothing but whitespace.
    Empty,
    /// A plan body larger than [`MAX_PLAN_BYTES`].
    TooLarge,
}

impl CaptureErrorKind {
    /// The stable wire code.
    pub fn code(self) -> crate::ErrorCode {
        match self {
            CaptureErrorKind::NestedDelimiter => crate::ErrorCode::CaptureNestedDelimiter,
            CaptureErrorKind::DuplicateDelimiter => crate::ErrorCode::CaptureDuplicateDelimiter,
            CaptureErrorKind::StrayDelimiter => crate::ErrorCode::CaptureStrayDelimiter,
            CaptureErrorKind::Incomplete => crate::ErrorCode::CaptureIncomplete,
            CaptureErrorKind::SpansBlocks => crate::ErrorCode::CaptureSpansBlocks,
            CaptureErrorKind::Empty => crate::ErrorCode::CaptureEmpty,
            CaptureErrorKind::TooLarge => crate::ErrorCode::CaptureTooLarge,
        }
    }

    fn describe(self) -> &'static str {
        match self {
            CaptureErrorKind::NestedDelimiter => "<proposed_plan> inside an open plan",
            CaptureErrorKind::DuplicateDelimiter => "a second <proposed_plan> in one message",
            CaptureErrorKind::StrayDelimiter => "</proposed_plan> without an open plan",
            CaptureErrorKind::Incomplete => "<proposed_plan> never closed in its content block",
            CaptureErrorKind::SpansBlocks => "plan delimiters span two content blocks",
            CaptureErrorKind::Empty => "the plan body is empty",
            CaptureErrorKind::TooLarge => "the plan body is larger than 4 MiB",
        }
    }
}

/// A rejected capture: what, and where the delimiter at fault is. Returned by [`capture`] and
/// [`ProposedPlanParser::finish`]; nothing is captured from that message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("{} (content block {block_index}, line {line})", .kind.describe())]
pub struct CaptureError {
    /// What is wrong.
    pub kind: CaptureErrorKind,
    /// The content block of the delimiter at fault.
    pub block_index: usize,
    /// Its 1-based line: the inner open (nested), the second open (duplicate), the close (stray,
    /// and the close of a spanning plan), or the plan's open line (incomplete, empty, too large).
    pub line: usize,
}

impl CaptureError {
    /// The stable wire code.
    pub fn code(&self) -> crate::ErrorCode {
        self.kind.code()
    }
}

/// Why a message is not a capture candidate; [`capture`] returns `Ok(None)` for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Ineligible {
    /// The message began outside Plan mode.
    #[error("the message did not begin in planning")]
    NotStartedInPlanning,
    /// The turn ended some other way than `stop`.
    #[error("the message ended with {}, not stop", .0.as_str())]
    StopReason(StopReason),
    /// The message calls tools.
    #[error("the message has {0} tool call(s)")]
    ToolCalls(usize),
}

impl Ineligible {
    /// The stable wire code, shared by every reason.
    pub fn code(&self) -> crate::ErrorCode {
        crate::ErrorCode::CaptureNotEligible
    }
}

/// Checks seed 004's eligibility rule, reporting the first failing condition.
pub fn eligibility(msg: &AssistantMessage) -> Result<(), Ineligible> {
    if !msg.started_in_planning {
        return Err(Ineligible::NotStartedInPlanning);
    }
    if msg.stop_reason != StopReason::Stop {
        return Err(Ineligible::StopReason(msg.stop_reason));
    }
    let calls = msg
        .content
        .iter()
        .filter(|b| matches!(b, ContentBlock::ToolCall { .. }))
        .count();
    if calls > 0 {
        return Err(Ineligible::ToolCalls(calls));
    }
    Ok(())
}

/// Captures the message's one plan: `Ok(None)` when it is ineligible or has no plan.
pub fn capture(msg: &AssistantMessage) -> Result<Option<Capture>, CaptureError> {
    if eligibility(msg).is_err() {
        return Ok(None);
    }
    let mut parser: Option<ProposedPlanParser> = None;
    for (index, block) in msg.content.iter().enumerate() {
        match block {
            ContentBlock::Text { text } => {
                let p = parser.get_or_insert_with(|| ProposedPlanParser::new(index));
                if p.block_index != index {
                    p.next_block(index);
                }
                p.push(text);
            }
            ContentBlock::ToolCall { .. } | ContentBlock::Other { .. } => {}
        }
    }
    let Some(plan) = parser
        .map(ProposedPlanParser::finish)
        .transpose()?
        .flatten()
    else {
        return Ok(None);
    };
    Ok(Some(Capture {
        entry_id: msg.entry_id.clone(),
        fingerprint: fingerprint(msg),
        block_index: plan.block_index,
        body_start: plan.body_start,
        body_end: plan.body_end,
        sha256: sha256_hex(plan.markdown.as_bytes()),
        markdown: plan.markdown,
    }))
}

/// Version tag that opens the canonical encoding; bump it if the encoding ever changes.
const FINGERPRINT_TAG: &str = "planhost/capture-fingerprint/v1";

/// The canonical bytes behind [`fingerprint`]: a sequence of netstrings (`<decimal byte
/// length>:<bytes>,`) holding the version tag, the entry id, the stop reason, the block count,
/// then per block its kind (`text`, `tool_call`, `other`) and fields (text; id, name, arguments;
/// kind, payload). `started_in_planning` is a host fact and is not encoded.
pub fn canonical_encoding(msg: &AssistantMessage) -> Vec<u8> {
    let mut out = Vec::new();
    encode(msg, &mut |bytes| out.extend_from_slice(bytes));
    out
}

/// Lowercase hex SHA-256 of [`canonical_encoding`]; equal messages agree, any change differs.
pub fn fingerprint(msg: &AssistantMessage) -> String {
    let mut hasher = Sha256::new();
    encode(msg, &mut |bytes| hasher.update(bytes));
    hex::encode(hasher.finalize())
}

fn encode(msg: &AssistantMessage, sink: &mut dyn FnMut(&[u8])) {
    let mut field = |s: &str| {
        sink(s.len().to_string().as_bytes());
        sink(b":");
        sink(s.as_bytes());
        sink(b",");
    };
    field(FINGERPRINT_TAG);
    field(msg.entry_id.as_str());
    field(msg.stop_reason.as_str());
    field(&msg.content.len().to_string());
    for block in &msg.content {
        match block {
            ContentBlock::Text { text } => {
                field("text");
                field(text);
            }
            ContentBlock::ToolCall {
                id,
                name,
                arguments,
            } => {
                field("tool_call");
                field(id);
                field(name);
                field(arguments);
            }
            ContentBlock::Other { kind, payload } => {
                field("other");
                field(kind);
                field(payload);
            }
        }
    }
}

/// A fence that is open: its character and run length.
#[derive(Debug, Clone, Copy)]
struct Fence {
    ch: u8,
    len: usize,
}

/// An open plan body.
#[derive(Debug)]
struct OpenPlan {
    open_line: usize,
    body_start: usize,
    markdown: String,
}

/// The streaming `<proposed_plan>` line parser. Feed a message's text blocks in order with
/// [`push`](Self::push) (chunks may split lines anywhere) and [`next_block`](Self::next_block);
/// it keeps only the current partial line and the open plan's body.
#[derive(Debug)]
pub struct ProposedPlanParser {
    block_index: usize,
    /// Lines completed in the current block.
    line_no: usize,
    /// Byte offset, in the current block, where the partial line starts.
    offset: usize,
    partial: String,
    fence: Option<Fence>,
    open: Option<OpenPlan>,
    found: Option<PlanBlock>,
    /// A plan left open at the end of the previous block: (block, open line).
    dangling: Option<(usize, usize)>,
    error: Option<CaptureError>,
}

impl ProposedPlanParser {
    /// A parser positioned at the start of content block `block_index`.
    pub fn new(block_index: usize) -> Self {
        ProposedPlanParser {
            block_index,
            line_no: 0,
            offset: 0,
            partial: String::new(),
            fence: None,
            open: None,
            found: None,
            dangling: None,
            error: None,
        }
    }

    /// Feeds the next chunk of the current block's text.
    pub fn push(&mut self, chunk: &str) {
        if self.error.is_some() {
            return;
        }
        let mut rest = chunk;
        if !self.partial.is_empty() {
            let Some(i) = find_newline(rest) else {
                self.partial.push_str(rest);
                return;
            };
            let mut line = std::mem::take(&mut self.partial);
            line.push_str(&rest[..i]);
            self.line(&line, 1);
            line.clear();
            self.partial = line;
            rest = &rest[i + 1..];
        }
        while let Some(i) = find_newline(rest) {
            if self.error.is_some() {
                return;
            }
            self.line(&rest[..i], 1);
            rest = &rest[i + 1..];
        }
        if self.error.is_none() {
            self.partial.push_str(rest);
        }
    }

    /// Ends the current block and starts content block `block_index`.
    pub fn next_block(&mut self, block_index: usize) {
        self.end_block();
        self.block_index = block_index;
        self.line_no = 0;
        self.offset = 0;
        self.fence = None;
    }

    /// Ends the last block: the message's one plan, none, or the first violation.
    pub fn finish(mut self) -> Result<Option<PlanBlock>, CaptureError> {
        self.end_block();
        if let Some((block_index, line)) = self.dangling {
            self.fail(CaptureErrorKind::Incomplete, block_index, line);
        }
        match self.error {
            Some(error) => Err(error),
            None => Ok(self.found),
        }
    }

    fn end_block(&mut self) {
        if !self.partial.is_empty() {
            let line = std::mem::take(&mut self.partial);
            self.line(&line, 0);
        }
        if let Some((block_index, line)) = self.dangling.take() {
            self.fail(CaptureErrorKind::Incomplete, block_index, line);
        }
        if let Some(open) = self.open.take()
            && self.error.is_none()
        {
            self.dangling = Some((self.block_index, open.open_line));
        }
    }

    fn fail(&mut self, kind: CaptureErrorKind, block_index: usize, line: usize) {
        if self.error.is_none() {
            self.error = Some(CaptureError {
                kind,
                block_index,
                line,
            });
        }
    }

    /// Handles one line (without its `\n`); `terminator` is 1 when a `\n` followed it.
    fn line(&mut self, raw: &str, terminator: usize) {
        if self.error.is_some() {
            return;
        }
        self.line_no += 1;
        let line_start = self.offset;
        self.offset += raw.len() + terminator;
        let text = raw.trim_end_matches('\r');
        if let Some(fence) = self.fence {
            if closes_fence(text, fence) {
                self.fence = None;
            }
            self.append(text);
            return;
        }
        match classify(text) {
            Line::Open => self.on_open(),
            Line::Close => self.on_close(line_start),
            Line::Fence(fence) => {
                self.fence = Some(fence);
                self.append(text);
            }
            Line::Text => self.append(text),
        }
    }

    fn on_open(&mut self) {
        let (block, line) = (self.block_index, self.line_no);
        if let Some((dangling_block, dangling_line)) = self.dangling {
            self.fail(CaptureErrorKind::Incomplete, dangling_block, dangling_line);
        } else if self.open.is_some() {
            self.fail(CaptureErrorKind::NestedDelimiter, block, line);
        } else if self.found.is_some() {
            self.fail(CaptureErrorKind::DuplicateDelimiter, block, line);
        } else {
            self.open = Some(OpenPlan {
                open_line: line,
                body_start: self.offset,
                markdown: String::new(),
            });
        }
    }

    fn on_close(&mut self, line_start: usize) {
        let (block, line) = (self.block_index, self.line_no);
        if self.dangling.is_some() {
            self.fail(CaptureErrorKind::SpansBlocks, block, line);
            return;
        }
        let Some(open) = self.open.take() else {
            self.fail(CaptureErrorKind::StrayDelimiter, block, line);
            return;
        };
        if open.markdown.trim().is_empty() {
            self.fail(CaptureErrorKind::Empty, block, open.open_line);
            return;
        }
        self.found = Some(PlanBlock {
            block_index: block,
            open_line: open.open_line,
            close_line: line,
            body_start: open.body_start,
            body_end: line_start,
            markdown: open.markdown,
        });
    }

    /// Adds a content line to the open body, if any.
    fn append(&mut self, text: &str) {
        let Some(open) = self.open.as_mut() else {
            return;
        };
        if open.markdown.len() + text.len() + 1 > MAX_PLAN_BYTES {
            let line = open.open_line;
            self.open = None;
            self.fail(CaptureErrorKind::TooLarge, self.block_index, line);
            return;
        }
        open.markdown.push_str(text);
        open.markdown.push('\n');
    }
}

/// Byte offset of the first `\n` (memchr: vectorised for long chunks, cheap for the few bytes of
/// a streamed token; measured in `benches/capture.rs`).
fn find_newline(s: &str) -> Option<usize> {
    memchr::memchr(b'\n', s.as_bytes())
}

/// What a line outside a fence is.
enum Line {
    Open,
    Close,
    Fence(Fence),
    Text,
}

/// Classifies a line whose line-ending `\r`s are already removed.
fn classify(text: &str) -> Line {
    let bytes = text.as_bytes();
    let indent = bytes.iter().take(4).take_while(|b| **b == b' ').count();
    match bytes.get(indent) {
        Some(b'<') if indent <= 3 => {
            let rest = text[indent..].trim_end_matches([' ', '\t']);
            if rest == OPEN_DELIMITER {
                Line::Open
            } else if rest == CLOSE_DELIMITER {
                Line::Close
            } else {
                Line::Text
            }
        }
        Some(&ch @ (b'`' | b'~')) if indent <= 3 => {
            let len = bytes[indent..].iter().take_while(|b| **b == ch).count();
            let info = &bytes[indent + len..];
            if len >= 3 && (ch == b'~' || !info.contains(&b'`')) {
                Line::Fence(Fence { ch, len })
            } else {
                Line::Text
            }
        }
        _ => Line::Text,
    }
}

/// Whether `text` closes `fence`.
fn closes_fence(text: &str, fence: Fence) -> bool {
    let bytes = text.as_bytes();
    let indent = bytes.iter().take(4).take_while(|b| **b == b' ').count();
    if indent > 3 {
        return false;
    }
    let len = bytes[indent..]
        .iter()
        .take_while(|b| **b == fence.ch)
        .count();
    len >= fence.len
        && bytes[indent + len..]
            .iter()
            .all(|b| matches!(b, b' ' | b'\t'))
}

#[cfg(test)]
#[path = "capture_tests.rs"]
mod tests;

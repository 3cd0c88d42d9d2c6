//! The `<proposed_plan>` capture parser: `capture` on a whole message and the streaming
//! `ProposedPlanParser` under any chunking agree, and a captured body is exactly its source slice
//! with line-ending `\r`s dropped.

use libfuzzer_sys::arbitrary::{self, Arbitrary};
use planhost_core::{
    AssistantMessage, CLOSE_DELIMITER, CaptureError, ContentBlock, MAX_PLAN_BYTES, OPEN_DELIMITER,
    PlanBlock, ProposedPlanParser, StopReason, canonical_encoding, capture, eligibility,
    fingerprint, sha256_hex,
};

/// A message shaped by the fuzzer: pieces that reach every rule, and raw text for the rest.
#[derive(Debug, Arbitrary)]
pub struct Message {
    blocks: Vec<Block>,
    stop: u8,
    not_started_in_planning: bool,
    /// Where to cut each text block into chunks (taken modulo its length).
    cuts: Vec<u16>,
}

#[derive(Debug, Arbitrary)]
enum Block {
    Text(Vec<Piece>),
    ToolCall,
    Other(String),
}

#[derive(Debug, Arbitrary)]
enum Piece {
    Open,
    Close,
    Indent(u8),
    Fence { tilde: bool, len: u8 },
    Newline,
    CrLf,
    Cr,
    Tab,
    Text(String),
}

impl Piece {
    fn push(&self, out: &mut String) {
        match self {
            Piece::Open => out.push_str(OPEN_DELIMITER),
            Piece::Close => out.push_str(CLOSE_DELIMITER),
            Piece::Indent(n) => out.extend(std::iter::repeat_n(' ', usize::from(n % 6))),
            Piece::Fence { tilde, len } => {
                let c = if *tilde { '~' } else { '`' };
                out.extend(std::iter::repeat_n(c, usize::from(len % 6)));
            }
            Piece::Newline => out.push('\n'),
            Piece::CrLf => out.push_str("\r\n"),
            Piece::Cr => out.push('\r'),
            Piece::Tab => out.push('\t'),
            Piece::Text(s) => out.push_str(s),
        }
    }
}

impl Message {
    fn message(&self) -> AssistantMessage {
        let content = self
            .blocks
            .iter()
            .enumerate()
            .map(|(i, b)| match b {
                Block::Text(pieces) => {
                    let mut text = String::new();
                    for p in pieces {
                        p.push(&mut text);
                    }
                    ContentBlock::Text { text }
                }
                Block::ToolCall => ContentBlock::ToolCall {
                    id: format!("call-{i}"),
                    name: "Read".into(),
                    arguments: "{}".into(),
                },
                Block::Other(payload) => ContentBlock::Other {
                    kind: "thinking".into(),
                    payload: payload.clone(),
                },
            })
            .collect();
        let stop_reason = match self.stop % 8 {
            1 => StopReason::ToolUse,
            2 => StopReason::Length,
            3 => StopReason::Error,
            4 => StopReason::Aborted,
            _ => StopReason::Stop,
        };
        AssistantMessage {
            entry_id: "entry".into(),
            content,
            stop_reason,
            started_in_planning: !self.not_started_in_planning,
        }
    }
}

/// The parser fed as `capture` feeds it, each text block cut at `cuts` (char boundaries).
fn stream(msg: &AssistantMessage, cuts: &[u16]) -> Result<Option<PlanBlock>, CaptureError> {
    let mut parser: Option<ProposedPlanParser> = None;
    for (index, block) in msg.content.iter().enumerate() {
        let ContentBlock::Text { text } = block else {
            continue;
        };
        match parser.as_mut() {
            None => parser = Some(ProposedPlanParser::new(index)),
            Some(p) => p.next_block(index),
        }
        let Some(p) = parser.as_mut() else { continue };
        let mut at: Vec<usize> = cuts
            .iter()
            .map(|c| usize::from(*c) % (text.len() + 1))
            .map(|mut i| {
                while !text.is_char_boundary(i) {
                    i -= 1;
                }
                i
            })
            .collect();
        at.push(text.len());
        at.sort_unstable();
        let mut from = 0;
        for to in at {
            p.push(&text[from..to]);
            from = to;
        }
    }
    parser
        .map(ProposedPlanParser::finish)
        .transpose()
        .map(Option::flatten)
}

fn text_of(msg: &AssistantMessage, index: usize) -> &str {
    match msg.content.get(index) {
        Some(ContentBlock::Text { text }) => text,
        other => panic!("block {index} is not a text block: {other:?}"),
    }
}

/// Every invariant of one message.
pub fn check(input: &Message) {
    let msg = input.message();
    let whole = stream(&msg, &[]);
    let chunked = stream(&msg, &input.cuts);
    assert_eq!(whole, chunked, "chunking changed the outcome");
    assert_eq!(fingerprint(&msg), sha256_hex(&canonical_encoding(&msg)));
    let captured = capture(&msg);
    match eligibility(&msg) {
        Err(why) => {
            assert_eq!(why.code().as_str(), "CAPTURE_NOT_ELIGIBLE");
            assert_eq!(captured, Ok(None), "an ineligible message captured");
        }
        Ok(()) => match (&captured, &whole) {
            (Ok(None), Ok(None)) => {}
            (Err(a), Err(b)) => assert_eq!(a, b),
            (Ok(Some(c)), Ok(Some(p))) => {
                assert_eq!(c.block_index, p.block_index);
                assert_eq!((c.body_start, c.body_end), (p.body_start, p.body_end));
                assert_eq!(c.markdown, p.markdown);
                assert_eq!(c.sha256, sha256_hex(c.markdown.as_bytes()));
                assert_eq!(c.fingerprint, fingerprint(&msg));
                assert_eq!(c.entry_id, msg.entry_id);
            }
            other => panic!("capture and the parser disagree: {other:?}"),
        },
    }
    match &whole {
        Ok(None) => {}
        Ok(Some(plan)) => {
            let text = text_of(&msg, plan.block_index);
            assert!(plan.open_line < plan.close_line);
            assert!(plan.body_start <= plan.body_end && plan.body_end <= text.len());
            let raw = &text[plan.body_start..plan.body_end];
            let normalised: String = raw
                .split_inclusive('\n')
                .map(|l| format!("{}\n", l.trim_end_matches(['\n', '\r'])))
                .collect();
            assert_eq!(
                plan.markdown, normalised,
                "the body is not its source slice"
            );
            assert!(!plan.markdown.contains("\r\n"));
            assert!(plan.markdown.ends_with('\n'));
            assert!(!plan.markdown.trim().is_empty());
            assert!(plan.markdown.len() <= MAX_PLAN_BYTES);
        }
        Err(e) => {
            assert!(e.code().as_str().starts_with("CAPTURE_"), "{e:?}");
            let _ = text_of(&msg, e.block_index);
            assert!(e.line >= 1, "{e:?}");
        }
    }
}

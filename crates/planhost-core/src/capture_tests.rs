use super::*;
use pretty_assertions::assert_eq;
use proptest::prelude::*;

// ---------------------------------------------------------------------------------------------
// A whole-string reference, written from the module rules in a different shape from the parser:
// pass 1 tokenises every line of a block, pass 2 pairs the delimiter tokens across blocks.

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Open,
    Close,
    Content,
}

#[derive(Debug)]
struct RefLine<'a> {
    number: usize,
    start: usize,
    /// Offset just past the line's `\n` (or its end, for a last line without one).
    end: usize,
    /// The line without its line-ending `\r`s.
    text: &'a str,
    tok: Tok,
}

/// The text after 0–3 leading spaces, or `None` when indented further.
fn after_indent(s: &str) -> Option<&str> {
    let body = s.trim_start_matches(' ');
    (s.len() - body.len() <= 3).then_some(body)
}

fn is_delim(s: &str, tag: &str) -> bool {
    after_indent(s).is_some_and(|t| t.trim_end_matches([' ', '\t']) == tag)
}

fn fence_opener(s: &str) -> Option<(char, usize)> {
    let t = after_indent(s)?;
    let c = t.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let run = t.chars().take_while(|x| *x == c).count();
    let info = &t[run..];
    (run >= 3 && !(c == '`' && info.contains('`'))).then_some((c, run))
}

fn fence_closer(s: &str, (c, n): (char, usize)) -> bool {
    after_indent(s).is_some_and(|t| {
        let t = t.trim_end_matches([' ', '\t']);
        !t.is_empty() && t.chars().all(|x| x == c) && t.chars().count() >= n
    })
}

fn tokenize(text: &str) -> Vec<RefLine<'_>> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut fence: Option<(char, usize)> = None;
    let pieces: Vec<&str> = text.split('\n').collect();
    let last = pieces.len() - 1;
    for (i, raw) in pieces.into_iter().enumerate() {
        if i == last && raw.is_empty() {
            break; // text ending in `\n` has no further line
        }
        let end = start + raw.len() + usize::from(i < last);
        let stripped = raw.trim_end_matches('\r');
        let tok = match fence {
            Some(f) => {
                if fence_closer(stripped, f) {
                    fence = None;
                }
                Tok::Content
            }
            None if is_delim(stripped, "<proposed_plan>") => Tok::Open,
            None if is_delim(stripped, "</proposed_plan>") => Tok::Close,
            None => {
                fence = fence_opener(stripped);
                Tok::Content
            }
        };
        out.push(RefLine {
            number: i + 1,
            start,
            end,
            text: stripped,
            tok,
        });
        start = end;
    }
    out
}

fn err(kind: CaptureErrorKind, block_index: usize, line: usize) -> CaptureError {
    CaptureError {
        kind,
        block_index,
        line,
    }
}

fn reference(blocks: &[(usize, &str)]) -> Result<Option<PlanBlock>, CaptureError> {
    let mut found: Option<PlanBlock> = None;
    let mut dangling: Option<(usize, usize)> = None;
    for &(b, text) in blocks {
        let lines = tokenize(text);
        let delims: Vec<usize> = (0..lines.len())
            .filter(|i| lines[*i].tok != Tok::Content)
            .collect();
        if let Some((db, dl)) = dangling {
            return Err(match delims.first().map(|i| &lines[*i]) {
                Some(l) if l.tok == Tok::Close => err(CaptureErrorKind::SpansBlocks, b, l.number),
                _ => err(CaptureErrorKind::Incomplete, db, dl),
            });
        }
        let mut k = 0;
        while k < delims.len() {
            let open = &lines[delims[k]];
            if open.tok == Tok::Close {
                return Err(err(CaptureErrorKind::StrayDelimiter, b, open.number));
            }
            if found.is_some() {
                return Err(err(CaptureErrorKind::DuplicateDelimiter, b, open.number));
            }
            let stop = delims.get(k + 1).copied().unwrap_or(lines.len());
            let body: String = lines[delims[k] + 1..stop]
                .iter()
                .map(|l| format!("{}\n", l.text))
                .collect();
            if body.len() > MAX_PLAN_BYTES {
                return Err(err(CaptureErrorKind::TooLarge, b, open.number));
            }
            let Some(&close_at) = delims.get(k + 1) else {
                dangling = Some((b, open.number));
                break;
            };
            let close = &lines[close_at];
            if close.tok == Tok::Open {
                return Err(err(CaptureErrorKind::NestedDelimiter, b, close.number));
            }
            if body.trim().is_empty() {
                return Err(err(CaptureErrorKind::Empty, b, open.number));
            }
            found = Some(PlanBlock {
                block_index: b,
                open_line: open.number,
                close_line: close.number,
                body_start: open.end,
                body_end: close.start,
                markdown: body,
            });
            k += 2;
        }
    }
    match dangling {
        Some((db, dl)) => Err(err(CaptureErrorKind::Incomplete, db, dl)),
        None => Ok(found),
    }
}

/// Streams `blocks` through the parser, cutting each block's text at the given fractions.
fn stream(blocks: &[(usize, &str)], cuts: &[f64]) -> Result<Option<PlanBlock>, CaptureError> {
    let mut parser = ProposedPlanParser::new(blocks.first().map_or(0, |b| b.0));
    for (n, &(b, text)) in blocks.iter().enumerate() {
        if n > 0 {
            parser.next_block(b);
        }
        let mut points: Vec<usize> = cuts
            .iter()
            .map(|f| {
                let mut p = (f * text.len() as f64) as usize;
                while !text.is_char_boundary(p) {
                    p -= 1;
                }
                p
            })
            .collect();
        points.push(text.len());
        points.sort_unstable();
        let mut at = 0;
        for p in points {
            parser.push(&text[at..p]);
            at = p;
        }
    }
    parser.finish()
}

// ---------------------------------------------------------------------------------------------
// Generators.

const LINES: &[&str] = &[
    "Intro text.",
    "",
    "   ",
    "héllo wörld ✓ 計画",
    "- step one",
    "a\rb",
    "text <proposed_plan>",
    "<proposed_plan> trailing",
    "<PROPOSED_PLAN>",
    "`inline` and ``two``",
    "<proposed_plan>",
    "<proposed_plan>",
    "</proposed_plan>",
    "</proposed_plan>",
    "   <proposed_plan>",
    "<proposed_plan>  \t",
    "  </proposed_plan> ",
    "    <proposed_plan>",
    "\t</proposed_plan>",
    "```",
    "```rust",
    "~~~",
    "~~~~",
    "````",
    "   ```",
    "    ```",
    "``` a`b",
    "~~~ a`b",
    "```  ",
];

fn block_text() -> impl Strategy<Value = String> {
    let line = (
        prop::sample::select(LINES),
        prop::sample::select(&["\n", "\n", "\r\n", "\r\r\n"][..]),
    );
    (prop::collection::vec(line, 0..14), any::<bool>()).prop_map(|(lines, final_newline)| {
        let mut s = String::new();
        let count = lines.len();
        for (i, (text, ending)) in lines.into_iter().enumerate() {
            s.push_str(text);
            if i + 1 < count || final_newline {
                s.push_str(ending);
            }
        }
        s
    })
}

fn blocks() -> impl Strategy<Value = Vec<(usize, String)>> {
    prop::collection::vec((block_text(), 1..3usize), 1..4).prop_map(|v| {
        // Gaps in the indices stand for non-text blocks between the text blocks.
        let mut index = 0;
        v.into_iter()
            .map(|(text, gap)| {
                index += gap;
                (index - 1, text)
            })
            .collect()
    })
}

fn borrowed(v: &[(usize, String)]) -> Vec<(usize, &str)> {
    v.iter().map(|(b, t)| (*b, t.as_str())).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2_000))]

    #[test]
    fn streaming_matches_reference_under_any_chunking(
        v in blocks(),
        cuts_a in prop::collection::vec(0.0..1.0f64, 0..6),
        cuts_b in prop::collection::vec(0.0..1.0f64, 0..40),
    ) {
        let blocks = borrowed(&v);
        let expected = reference(&blocks);
        prop_assert_eq!(&stream(&blocks, &[]), &expected);
        prop_assert_eq!(&stream(&blocks, &cuts_a), &expected);
        prop_assert_eq!(&stream(&blocks, &cuts_b), &expected);
    }

    #[test]
    fn find_newline_agrees_with_str_find(s in "[a\n\r é✓]{0,40}") {
        for start in (0..=s.len()).filter(|i| s.is_char_boundary(*i)) {
            prop_assert_eq!(find_newline(&s[start..]), s[start..].find('\n'));
        }
    }

    #[test]
    fn captured_bodies_are_clean(v in blocks()) {
        let blocks = borrowed(&v);
        if let Ok(Some(plan)) = stream(&blocks, &[]) {
            prop_assert!(!plan.markdown.contains("\r\n"));
            prop_assert!(plan.markdown.ends_with('\n'));
            // The body is exactly the source slice with line-ending `\r`s dropped.
            let Some((_, text)) = blocks.iter().find(|b| b.0 == plan.block_index) else {
                return Err(TestCaseError::fail("capture names a missing block"));
            };
            let raw = &text[plan.body_start..plan.body_end];
            let normalised: String =
                raw.split_inclusive('\n').map(|l| format!("{}\n", l.trim_end_matches(['\n', '\r']))).collect();
            prop_assert_eq!(&plan.markdown, &normalised);
            // Outside fences, the body holds no delimiter line.
            prop_assert!(tokenize(&plan.markdown).iter().all(|l| l.tok == Tok::Content));
        }
    }
}

#[test]
fn generator_reaches_every_outcome() {
    use proptest::strategy::ValueTree as _;
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let mut seen = std::collections::BTreeSet::new();
    for _ in 0..3_000 {
        let Ok(tree) = blocks().new_tree(&mut runner) else {
            continue;
        };
        let v = tree.current();
        seen.insert(match reference(&borrowed(&v)) {
            Ok(Some(_)) => "plan",
            Ok(None) => "none",
            Err(e) => e.code().as_str(),
        });
    }
    let want = [
        "plan",
        "none",
        "CAPTURE_NESTED_DELIMITER",
        "CAPTURE_DUPLICATE_DELIMITER",
        "CAPTURE_STRAY_DELIMITER",
        "CAPTURE_INCOMPLETE",
        "CAPTURE_SPANS_BLOCKS",
        "CAPTURE_EMPTY",
    ];
    for outcome in want {
        assert!(seen.contains(outcome), "generator never produced {outcome}");
    }
}

// ---------------------------------------------------------------------------------------------
// Unit tests for what the generators do not reach.

fn message(content: Vec<ContentBlock>) -> AssistantMessage {
    AssistantMessage {
        entry_id: "e1".into(),
        content,
        stop_reason: StopReason::Stop,
        started_in_planning: true,
    }
}

fn text(s: &str) -> ContentBlock {
    ContentBlock::Text { text: s.into() }
}

#[test]
fn byte_by_byte_streaming_equals_one_push() {
    let src = "pre\r\n```\n<proposed_plan>\n```\n<proposed_plan>\r\n# Plan ✓\r\n\r\nstep\n</proposed_plan>";
    let mut whole = ProposedPlanParser::new(0);
    whole.push(src);
    let mut bytes = ProposedPlanParser::new(0);
    for (i, c) in src.char_indices() {
        bytes.push(&src[i..i + c.len_utf8()]);
    }
    let plan = whole.finish();
    assert_eq!(bytes.finish(), plan);
    let plan = plan
        .ok()
        .flatten()
        .map(|p| (p.markdown, p.open_line, p.close_line));
    assert_eq!(plan, Some(("# Plan ✓\n\nstep\n".to_owned(), 5, 9)));
}

#[test]
fn too_large_is_reported_at_the_open_line() {
    let line = "x".repeat(1023);
    let mut parser = ProposedPlanParser::new(0);
    parser.push("intro\n<proposed_plan>\n");
    for _ in 0..(MAX_PLAN_BYTES / 1024) {
        parser.push(&line);
        parser.push("\n");
    }
    parser.push("one more\n</proposed_plan>\n");
    assert_eq!(parser.finish(), Err(err(CaptureErrorKind::TooLarge, 0, 2)),);
}

#[test]
fn body_of_exactly_the_limit_is_accepted() {
    let body = format!("{}\n", "y".repeat(MAX_PLAN_BYTES - 1));
    let src = format!("<proposed_plan>\n{body}</proposed_plan>\n");
    let got = capture(&message(vec![text(&src)])).ok().flatten();
    assert_eq!(got.map(|c| c.markdown.len()), Some(MAX_PLAN_BYTES));
}

#[test]
fn fingerprint_is_stable_and_sensitive_to_every_field() {
    let base = message(vec![
        ContentBlock::Other {
            kind: "thinking".into(),
            payload: "hmm".into(),
        },
        text("ab"),
        text(""),
    ]);
    assert_eq!(fingerprint(&base), fingerprint(&base.clone()));
    assert_eq!(
        fingerprint(&base),
        crate::sha256_hex(&canonical_encoding(&base))
    );
    let mut variants = Vec::new();
    let mut v = base.clone();
    v.entry_id = "e2".into();
    variants.push(v);
    let mut v = base.clone();
    v.stop_reason = StopReason::Length;
    variants.push(v);
    let mut v = base.clone();
    v.content[1] = text("a");
    v.content[2] = text("b");
    variants.push(v);
    let mut v = base.clone();
    v.content.swap(1, 2);
    variants.push(v);
    let mut v = base.clone();
    v.content[0] = ContentBlock::Other {
        kind: "thinkin".into(),
        payload: "ghmm".into(),
    };
    variants.push(v);
    let mut v = base.clone();
    v.content.push(text(""));
    variants.push(v);
    let mut seen = std::collections::BTreeSet::from([fingerprint(&base)]);
    for v in &variants {
        assert!(seen.insert(fingerprint(v)), "collision for {v:?}");
    }
    // A host fact, not message content.
    let mut v = base.clone();
    v.started_in_planning = false;
    assert_eq!(fingerprint(&v), fingerprint(&base));
}

#[test]
fn identity_binds_entry_fingerprint_and_block() {
    let msg = message(vec![
        ContentBlock::Other {
            kind: "thinking".into(),
            payload: String::new(),
        },
        text("<proposed_plan>\nDo it.\n</proposed_plan>\n"),
    ]);
    let first = capture(&msg).ok().flatten();
    let again = capture(&msg.clone()).ok().flatten();
    let Some(first) = first else {
        panic!("expected a capture");
    };
    assert_eq!(
        again.as_ref().map(Capture::identity),
        Some(first.identity())
    );
    assert_eq!(first.identity(), ("e1", fingerprint(&msg).as_str(), 1));
    assert_eq!(first.sha256, crate::sha256_hex(b"Do it.\n"));
    assert_eq!((first.body_start, first.body_end), (16, 23));
}

#[test]
fn eligibility_reports_the_first_failing_rule() {
    let mut msg = message(vec![
        text("<proposed_plan>\nx\n</proposed_plan>"),
        ContentBlock::ToolCall {
            id: "c1".into(),
            name: "read".into(),
            arguments: "{}".into(),
        },
    ]);
    assert_eq!(eligibility(&msg), Err(Ineligible::ToolCalls(1)));
    msg.stop_reason = StopReason::ToolUse;
    assert_eq!(
        eligibility(&msg),
        Err(Ineligible::StopReason(StopReason::ToolUse))
    );
    msg.started_in_planning = false;
    assert_eq!(eligibility(&msg), Err(Ineligible::NotStartedInPlanning));
    assert_eq!(
        Ineligible::ToolCalls(1).code().as_str(),
        "CAPTURE_NOT_ELIGIBLE"
    );
    // Ineligible messages are not even scanned: malformed delimiters there are harmless.
    msg.content[0] = text("</proposed_plan>");
    assert_eq!(capture(&msg), Ok(None));
}

#[test]
fn codes_are_stable() {
    let codes = [
        (
            CaptureErrorKind::NestedDelimiter,
            "CAPTURE_NESTED_DELIMITER",
        ),
        (
            CaptureErrorKind::DuplicateDelimiter,
            "CAPTURE_DUPLICATE_DELIMITER",
        ),
        (CaptureErrorKind::StrayDelimiter, "CAPTURE_STRAY_DELIMITER"),
        (CaptureErrorKind::Incomplete, "CAPTURE_INCOMPLETE"),
        (CaptureErrorKind::SpansBlocks, "CAPTURE_SPANS_BLOCKS"),
        (CaptureErrorKind::Empty, "CAPTURE_EMPTY"),
        (CaptureErrorKind::TooLarge, "CAPTURE_TOO_LARGE"),
    ];
    for (kind, code) in codes {
        assert_eq!(err(kind, 0, 1).code().as_str(), code);
    }
}

//! The `<proposed_plan>` capture corpus: one row per edge case, run through [`capture`].

use planhost_core::{AssistantMessage, ContentBlock, StopReason, capture, sha256_hex};

#[derive(Debug)]
enum Block {
    Text(&'static str),
    Tool,
    Other,
}

#[derive(Debug)]
enum Want {
    Plan {
        block: usize,
        markdown: &'static str,
    },
    Nothing,
    Error {
        code: &'static str,
        block: usize,
        line: usize,
    },
}

struct Case {
    name: &'static str,
    blocks: &'static [Block],
    stop: StopReason,
    planning: bool,
    want: Want,
}

const fn case(name: &'static str, blocks: &'static [Block], want: Want) -> Case {
    Case {
        name,
        blocks,
        stop: StopReason::Stop,
        planning: true,
        want,
    }
}

const fn plan(block: usize, markdown: &'static str) -> Want {
    Want::Plan { block, markdown }
}

const fn error(code: &'static str, block: usize, line: usize) -> Want {
    Want::Error { code, block, line }
}

use Block::{Other, Text, Tool};

const CORPUS: &[Case] = &[
    case(
        "plain",
        &[Text(
            "Here is my plan.\n\n<proposed_plan>\n# Plan\n\n1. Do it.\n</proposed_plan>\n\nThanks.",
        )],
        plan(0, "# Plan\n\n1. Do it.\n"),
    ),
    case(
        "close at end of text, no final newline",
        &[Text("<proposed_plan>\nstep\n</proposed_plan>")],
        plan(0, "step\n"),
    ),
    case(
        "backtick fence with delimiters before the plan is an example",
        &[Text(
            "Format:\n```\n<proposed_plan>\n...\n</proposed_plan>\n```\n<proposed_plan>\nReal\n</proposed_plan>\n",
        )],
        plan(0, "Real\n"),
    ),
    case(
        "tilde fence with delimiters inside the body is content",
        &[Text(
            "<proposed_plan>\n~~~md\n<proposed_plan>\n</proposed_plan>\n~~~\nstep\n</proposed_plan>\n",
        )],
        plan(0, "~~~md\n<proposed_plan>\n</proposed_plan>\n~~~\nstep\n"),
    ),
    case(
        "a shorter run does not close a longer fence",
        &[Text(
            "<proposed_plan>\n````\n```\n</proposed_plan>\n```\n````\n</proposed_plan>\n",
        )],
        plan(0, "````\n```\n</proposed_plan>\n```\n````\n"),
    ),
    case(
        "a tilde run does not close a backtick fence",
        &[Text(
            "<proposed_plan>\n```\n~~~\n</proposed_plan>\n```\n</proposed_plan>",
        )],
        plan(0, "```\n~~~\n</proposed_plan>\n```\n"),
    ),
    case(
        "a closing fence may be longer and carry trailing spaces",
        &[Text("<proposed_plan>\n~~~\nx\n~~~~~  \n</proposed_plan>\n")],
        plan(0, "~~~\nx\n~~~~~  \n"),
    ),
    case(
        "backticks in a backtick info string: not a fence",
        &[Text("<proposed_plan>\n``` a`b\n</proposed_plan>\n")],
        plan(0, "``` a`b\n"),
    ),
    case(
        "a fence indented by four is not a fence",
        &[Text("<proposed_plan>\n    ```\n</proposed_plan>\n")],
        plan(0, "    ```\n"),
    ),
    case(
        "unclosed fence inside the body hides the close: incomplete",
        &[Text("<proposed_plan>\n```\nx\n</proposed_plan>\n")],
        error("CAPTURE_INCOMPLETE", 0, 1),
    ),
    case(
        "unclosed fence in prose: later tags are content",
        &[Text("```\n<proposed_plan>\nx\n</proposed_plan>\n")],
        Want::Nothing,
    ),
    case(
        "nested open",
        &[Text(
            "<proposed_plan>\na\n<proposed_plan>\nb\n</proposed_plan>\n</proposed_plan>\n",
        )],
        error("CAPTURE_NESTED_DELIMITER", 0, 3),
    ),
    case(
        "duplicate plan",
        &[Text(
            "<proposed_plan>\na\n</proposed_plan>\n\n<proposed_plan>\nb\n</proposed_plan>\n",
        )],
        error("CAPTURE_DUPLICATE_DELIMITER", 0, 5),
    ),
    case(
        "duplicate plan in a second text block",
        &[
            Text("<proposed_plan>\na\n</proposed_plan>\n"),
            Text("more\n<proposed_plan>\nb\n</proposed_plan>\n"),
        ],
        error("CAPTURE_DUPLICATE_DELIMITER", 1, 2),
    ),
    case(
        "stray close",
        &[Text("text\n</proposed_plan>\n")],
        error("CAPTURE_STRAY_DELIMITER", 0, 2),
    ),
    case(
        "stray close after a complete plan",
        &[Text(
            "<proposed_plan>\na\n</proposed_plan>\n</proposed_plan>\n",
        )],
        error("CAPTURE_STRAY_DELIMITER", 0, 4),
    ),
    case(
        "an open tag after text is content, so its close is stray",
        &[Text("Plan: <proposed_plan>\nx\n</proposed_plan>\n")],
        error("CAPTURE_STRAY_DELIMITER", 0, 3),
    ),
    case(
        "incomplete",
        &[Text("intro\n<proposed_plan>\nstep\n")],
        error("CAPTURE_INCOMPLETE", 0, 2),
    ),
    case(
        "open tag as the very last line",
        &[Text("intro\n<proposed_plan>")],
        error("CAPTURE_INCOMPLETE", 0, 2),
    ),
    case(
        "empty body",
        &[Text("<proposed_plan>\n</proposed_plan>\n")],
        error("CAPTURE_EMPTY", 0, 1),
    ),
    case(
        "whitespace-only body",
        &[Text(
            "x\n<proposed_plan>\n  \n\t\r\n\u{3000}\n</proposed_plan>\n",
        )],
        error("CAPTURE_EMPTY", 0, 2),
    ),
    case(
        "CRLF throughout",
        &[Text(
            "intro\r\n<proposed_plan>\r\n# Plan\r\n\r\n- a\r\n</proposed_plan>\r\nbye\r\n",
        )],
        plan(0, "# Plan\n\n- a\n"),
    ),
    case(
        "mixed endings; a bare CR mid-line is content",
        &[Text(
            "<proposed_plan>\n- a\r\r\n- b\rc\n- d\r\n</proposed_plan>",
        )],
        plan(0, "- a\n- b\rc\n- d\n"),
    ),
    case(
        "delimiters with trailing spaces and tabs",
        &[Text("<proposed_plan>  \t\nx\n</proposed_plan> \r\n")],
        plan(0, "x\n"),
    ),
    case(
        "delimiters indented by up to three spaces",
        &[Text("   <proposed_plan>\nx\n  </proposed_plan>\n")],
        plan(0, "x\n"),
    ),
    case(
        "delimiters indented by four are content",
        &[Text("    <proposed_plan>\nx\n    </proposed_plan>\n")],
        Want::Nothing,
    ),
    case(
        "tab-indented delimiters are content",
        &[Text("\t<proposed_plan>\nx\n\t</proposed_plan>\n")],
        Want::Nothing,
    ),
    case(
        "tags are case-sensitive",
        &[Text("<Proposed_Plan>\nx\n</PROPOSED_PLAN>\n")],
        Want::Nothing,
    ),
    case(
        "tags in two content blocks",
        &[
            Text("intro\n<proposed_plan>\nstep\n"),
            Text("</proposed_plan>\n"),
        ],
        error("CAPTURE_SPANS_BLOCKS", 1, 1),
    ),
    case(
        "tags in two text blocks around a non-text block",
        &[
            Text("<proposed_plan>\nx"),
            Other,
            Text("y\n</proposed_plan>"),
        ],
        error("CAPTURE_SPANS_BLOCKS", 2, 2),
    ),
    case(
        "open in one block, nothing in the next",
        &[Text("<proposed_plan>\nx\n"), Text("more prose\n")],
        error("CAPTURE_INCOMPLETE", 0, 1),
    ),
    case(
        "a fence does not carry into the next block",
        &[
            Text("```\n"),
            Text("<proposed_plan>\nx\n</proposed_plan>\n"),
        ],
        plan(1, "x\n"),
    ),
    case(
        "plan after a thinking block binds its own block index",
        &[Other, Text("<proposed_plan>\nx\n</proposed_plan>\n")],
        plan(1, "x\n"),
    ),
    case(
        "unicode",
        &[Text(
            "Voilà:\n<proposed_plan>\n# 計画 ✓\n- café → naïve 🚀\n</proposed_plan>\n",
        )],
        plan(0, "# 計画 ✓\n- café → naïve 🚀\n"),
    ),
    case("no plan", &[Text("Just an answer.\n")], Want::Nothing),
    case("no text at all", &[Other], Want::Nothing),
    case(
        "a tool-call message captures nothing",
        &[Text("<proposed_plan>\nx\n</proposed_plan>\n"), Tool],
        Want::Nothing,
    ),
    case(
        "a tool-call message is not scanned, even when malformed",
        &[Text("</proposed_plan>\n"), Tool],
        Want::Nothing,
    ),
];

/// Rows that differ only in how the message ended or began.
const VALID: &[Block] = &[Text("<proposed_plan>\nx\n</proposed_plan>\n")];

fn extra_cases() -> Vec<Case> {
    let mut out: Vec<Case> = [
        StopReason::ToolUse,
        StopReason::Length,
        StopReason::Error,
        StopReason::Aborted,
    ]
    .into_iter()
    .map(|stop| Case {
        name: "a non-stop message captures nothing",
        blocks: VALID,
        stop,
        planning: true,
        want: Want::Nothing,
    })
    .collect();
    out.push(Case {
        name: "a message not begun in planning captures nothing",
        blocks: VALID,
        stop: StopReason::Stop,
        planning: false,
        want: Want::Nothing,
    });
    out
}

fn message(case: &Case) -> AssistantMessage {
    let content = case
        .blocks
        .iter()
        .enumerate()
        .map(|(i, b)| match b {
            Text(t) => ContentBlock::Text {
                text: (*t).to_owned(),
            },
            Tool => ContentBlock::ToolCall {
                id: format!("call-{i}"),
                name: "read".into(),
                arguments: "{\"path\":\"README.md\"}".into(),
            },
            Other => ContentBlock::Other {
                kind: "thinking".into(),
                payload: "considering".into(),
            },
        })
        .collect();
    AssistantMessage {
        entry_id: "entry-1".into(),
        content,
        stop_reason: case.stop,
        started_in_planning: case.planning,
    }
}

#[test]
fn corpus() {
    for case in CORPUS.iter().chain(extra_cases().iter()) {
        let msg = message(case);
        let got = capture(&msg);
        match (&got, &case.want) {
            (Ok(None), Want::Nothing) => {}
            (Ok(Some(c)), Want::Plan { block, markdown }) => {
                assert_eq!(
                    (c.block_index, c.markdown.as_str()),
                    (*block, *markdown),
                    "{}",
                    case.name
                );
                assert_eq!(c.sha256, sha256_hex(markdown.as_bytes()), "{}", case.name);
                assert_eq!(c.entry_id, "entry-1");
                let ContentBlock::Text { text } = &msg.content[c.block_index] else {
                    panic!("{}: capture names a non-text block", case.name);
                };
                let raw = &text[c.body_start..c.body_end];
                assert_eq!(
                    raw.replace("\r\r\n", "\n").replace("\r\n", "\n"),
                    c.markdown,
                    "{}: offsets",
                    case.name
                );
            }
            (Err(e), Want::Error { code, block, line }) => {
                assert_eq!(
                    (e.code().as_str(), e.block_index, e.line),
                    (*code, *block, *line),
                    "{}",
                    case.name
                );
            }
            (got, want) => panic!("{}: got {got:?}, want {want:?}", case.name),
        }
    }
}

#[test]
fn replayed_entry_has_the_same_identity_and_an_edit_does_not() {
    let msg = message(&CORPUS[0]);
    let first = capture(&msg).unwrap().unwrap();
    let replay = capture(&msg.clone()).unwrap().unwrap();
    assert_eq!(first.identity(), replay.identity());
    assert_eq!(first, replay);

    let mut edited = msg.clone();
    edited.content.push(ContentBlock::Text {
        text: "P.S.".into(),
    });
    let other = capture(&edited).unwrap().unwrap();
    assert_eq!(other.markdown, first.markdown);
    assert_ne!(other.identity(), first.identity());
}

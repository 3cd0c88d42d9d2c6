//! Properties of the host's line decoder (`planhost_service::host::decode_line`: bytes → a request, a client
//! notification, or PARSE_ERROR / INVALID_REQUEST with the id when it can be read). The decoder
//! is driven through the real `planhost serve --stdio` (framing included), one
//! host per property, a case at a time: the case's line, then a sentinel request whose answer
//! marks the end of the case's answers. The library half (`ClientRequest::parse`) has its own
//! properties in `crates/planhost-protocol/tests/properties.rs`; the `protocol_decoder` fuzz
//! target runs both halves in-process (`fuzz/`).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::wildcard_enum_match_arm
)]

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use planhost_core::{PlanCommand, parse_plan_command};
use planhost_protocol::{PROTOCOL_VERSION, RequestId, Response, codes};
use proptest::prelude::*;
use proptest::test_runner::{TestCaseError, TestRunner};
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(20);

/// `planhost serve --stdio` in its own state directory, read by a thread.
struct Host {
    _tmp: tempfile::TempDir,
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
    sentinel: u64,
}

impl Host {
    fn start() -> Self {
        let tmp = tempfile::Builder::new()
            .prefix("phd")
            .tempdir_in("/tmp")
            .unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_planhost"))
            .arg("--state-dir")
            .arg(tmp.path().join("state"))
            .arg("--socket")
            .arg(tmp.path().join("s.sock"))
            .args(["serve", "--stdio"])
            .env_remove("PLANHOST_LOG")
            .env_remove("PLANHOST_STATE_DIR")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            let mut line = String::new();
            while reader.read_line(&mut line).is_ok_and(|n| n > 0) {
                if tx.send(std::mem::take(&mut line)).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        Self {
            _tmp: tmp,
            child,
            stdin,
            lines,
            sentinel: 0,
        }
    }

    fn initialize(&mut self) {
        let hello = json!({
            "jsonrpc": "2.0", "id": "hello", "method": "initialize",
            "params": {"protocolVersion": PROTOCOL_VERSION, "clientName": "decoder-props", "roles": ["observer"]},
        });
        let answers = self.exchange(hello.to_string().as_bytes());
        let hello = answers
            .iter()
            .find(|r| r.id == Some(RequestId::String("hello".into())));
        assert!(hello.is_some_and(|r| r.result.is_some()), "{answers:?}");
    }

    /// Sends `line` and a sentinel; returns every response before the sentinel's (and, once
    /// initialized, any response to `expect` that comes after it: requests run concurrently).
    fn exchange_expecting(&mut self, line: &[u8], expect: Option<&RequestId>) -> Vec<Response> {
        assert!(!line.contains(&b'\n'));
        self.sentinel += 1;
        let sentinel = RequestId::String(format!("\u{1}sentinel-{}", self.sentinel));
        let probe = json!({"jsonrpc": "2.0", "id": sentinel, "method": "app.health"});
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(line).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.write_all(format!("{probe}\n").as_bytes()).unwrap();
        stdin.flush().unwrap();
        let mut answers = Vec::new();
        let mut seen_sentinel = false;
        loop {
            let done = seen_sentinel
                && expect
                    .is_none_or(|id| answers.iter().any(|r: &Response| r.id.as_ref() == Some(id)));
            if done {
                return answers;
            }
            let text = self.lines.recv_timeout(WAIT).unwrap_or_else(|e| {
                let shown = String::from_utf8_lossy(&line[..line.len().min(200)]);
                panic!("no answer to {shown:?} ({} bytes): {e}", line.len())
            });
            let value: Value = serde_json::from_str(&text).unwrap();
            if value.get("method").is_some() {
                continue; // a notification
            }
            let response: Response = serde_json::from_value(value).unwrap();
            if response.id.as_ref() == Some(&sentinel) {
                seen_sentinel = true;
            } else {
                answers.push(response);
            }
        }
    }

    fn exchange(&mut self, line: &[u8]) -> Vec<Response> {
        self.exchange_expecting(line, None)
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        drop(self.stdin.take());
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn readable_id(value: &Value) -> Option<RequestId> {
    value
        .get("id")
        .and_then(|v| serde_json::from_value::<RequestId>(v.clone()).ok())
}

fn request_id() -> impl Strategy<Value = RequestId> {
    prop_oneof![
        any::<i64>().prop_map(RequestId::Number),
        any::<String>().prop_map(RequestId::String),
    ]
}

/// Lines without a newline: raw bytes, JSON-ish soup, and real JSON values.
fn line() -> impl Strategy<Value = Vec<u8>> {
    let soup = prop::collection::vec(
        prop::sample::select(vec![
            "{",
            "}",
            "[",
            "]",
            ":",
            ",",
            " ",
            "\"jsonrpc\"",
            "\"2.0\"",
            "\"1.0\"",
            "\"id\"",
            "\"method\"",
            "\"params\"",
            "\"app.health\"",
            "\"plans.parseCommand\"",
            "\"x\"",
            "null",
            "true",
            "7",
            "-1",
            "1.5",
            "\"\\ud800\"",
            "\"\\udc00\"",
            "\"\\\\ud800\"",
            "\"\\ud800\\udc00\"",
            "\"é\"",
            "\\",
            "\"",
            "\r",
            "\t",
        ]),
        0..24,
    )
    .prop_map(|v| v.concat().into_bytes());
    let object = (
        prop::option::of(prop_oneof![
            Just(json!("2.0")),
            Just(json!("1.0")),
            Just(json!(2))
        ]),
        prop::option::of(prop_oneof![
            request_id().prop_map(|id| serde_json::to_value(id).unwrap()),
            Just(Value::Null),
            Just(json!(1.5)),
            Just(json!([1])),
            Just(json!(true)),
        ]),
        prop::option::of(prop_oneof![
            Just(json!("app.health")),
            Just(json!("no.such")),
            Just(json!("plans.parseCommand")),
            Just(json!(3)),
        ]),
        prop::option::of(prop_oneof![
            Just(json!({})),
            Just(json!({"line": "/plan"})),
            Just(json!({"extra": 1})),
            Just(json!([])),
            Just(Value::Null),
        ]),
    )
        .prop_map(|(jsonrpc, id, method, params)| {
            let mut m = serde_json::Map::new();
            for (k, v) in [
                ("jsonrpc", jsonrpc),
                ("id", id),
                ("method", method),
                ("params", params),
            ] {
                if let Some(v) = v {
                    m.insert(k.into(), v);
                }
            }
            serde_json::to_vec(&Value::Object(m)).unwrap()
        });
    prop_oneof![
        2 => prop::collection::vec(any::<u8>().prop_filter("no newline", |b| *b != b'\n'), 0..64),
        3 => soup,
        4 => object,
    ]
    // `initialize` would end the handshake phase; it is its own case below.
    .prop_filter("not initialize", |l| {
        !String::from_utf8_lossy(l).contains("initialize")
    })
}

/// One line's answers, as the decoder promises them.
fn check_line(host: &mut Host, line: &[u8], initialized: bool) -> Result<(), TestCaseError> {
    let value: Option<Value> = serde_json::from_slice(line).ok();
    // Once initialized, a decoded request runs concurrently with the sentinel: wait for the
    // answer with the line's id too (a wrong id shows as no answer).
    let expect = value.as_ref().and_then(readable_id).filter(|_| initialized);
    let answers = host.exchange_expecting(line, expect.as_ref());
    let shown = String::from_utf8_lossy(line);
    let notification = value.as_ref().is_some_and(|v| {
        v.get("jsonrpc") == Some(&json!("2.0"))
            && v.get("method").is_some_and(Value::is_string)
            && v.get("id").is_none_or(Value::is_null)
    });
    if notification {
        prop_assert!(
            answers.is_empty(),
            "{}: a notification was answered: {:?}",
            shown,
            answers
        );
        return Ok(());
    }
    let request_with_id = value.as_ref().and_then(readable_id);
    prop_assert_eq!(answers.len(), 1, "{}: {:?}", shown, answers);
    let answer = &answers[0];
    let Some(error) = &answer.error else {
        prop_assert!(
            initialized,
            "{}: answered before initialize: {:?}",
            shown,
            answer
        );
        prop_assert_eq!(&answer.id, &request_with_id, "{}", shown);
        return Ok(());
    };
    let stable = error.stable_code().map(planhost_core::ErrorCode::as_str);
    match &value {
        None => {
            prop_assert_eq!(error.code, codes::PARSE_ERROR, "{}", shown);
            prop_assert_eq!(stable, Some("PARSE_ERROR"));
            if answer.id.is_some() {
                // Only a lone surrogate escape lets the id of invalid JSON be read.
                prop_assert!(shown.to_ascii_lowercase().contains("\\ud"), "{}", shown);
            }
        }
        Some(v) => {
            // The readable id is echoed, whatever else is wrong.
            prop_assert_eq!(&answer.id, &readable_id(v), "{}: {:?}", shown, answer);
            let expected: &[i64] = if !v.is_object()
                || v.get("jsonrpc") != Some(&json!("2.0"))
                || !v.get("method").is_some_and(Value::is_string)
                || readable_id(v).is_none()
            {
                &[codes::INVALID_REQUEST]
            } else if !initialized {
                &[codes::NOT_INITIALIZED]
            } else {
                &[
                    codes::METHOD_NOT_FOUND,
                    codes::INVALID_PARAMS,
                    codes::REFUSED,
                ]
            };
            prop_assert!(expected.contains(&error.code), "{}: {:?}", shown, answer);
            prop_assert!(stable.is_some(), "{}: no stable code: {:?}", shown, answer);
        }
    }
    Ok(())
}

/// A request whose params hold a lone surrogate escape: PARSE_ERROR carrying the request's id.
fn check_surrogate(
    host: &mut Host,
    id: &RequestId,
    text: &str,
    low: u16,
) -> Result<(), TestCaseError> {
    let body = serde_json::to_string(text).unwrap();
    let inner = &body[1..body.len() - 1];
    let line = format!(
        r#"{{"jsonrpc":"2.0","id":{},"method":"plans.parseCommand","params":{{"line":"{inner}\u{:04x}"}}}}"#,
        serde_json::to_string(id).unwrap(),
        0xd800 + low
    );
    let answers = host.exchange(line.as_bytes());
    prop_assert_eq!(answers.len(), 1, "{}: {:?}", line, answers);
    let error = answers[0].error.as_ref();
    prop_assert_eq!(error.map(|e| e.code), Some(codes::PARSE_ERROR), "{}", line);
    prop_assert_eq!(answers[0].id.as_ref(), Some(id), "{}", line);
    Ok(())
}

fn run<S: Strategy>(
    initialized: bool,
    strategy: S,
    test: impl Fn(&mut Host, S::Value) -> Result<(), TestCaseError>,
) {
    let mut host = Host::start();
    if initialized {
        host.initialize();
    }
    let host = std::cell::RefCell::new(host);
    let mut runner = TestRunner::default();
    if let Err(e) = runner.run(&strategy, |value| test(&mut host.borrow_mut(), value)) {
        panic!("{e}");
    }
}

/// Before the handshake: any line is answered once (a client notification not at all), with
/// PARSE_ERROR, INVALID_REQUEST or NOT_INITIALIZED, echoing the id whenever it is readable.
#[test]
fn any_line_before_initialize_gets_one_stable_answer() {
    run(false, line(), |host, line| check_line(host, &line, false));
}

/// After it: the same, except that a well-formed request is decoded and dispatched (answered
/// with its own result or a method's refusal, never a decoder error).
#[test]
fn any_line_after_initialize_gets_one_stable_answer() {
    run(true, line(), |host, line| check_line(host, &line, true));
}

/// A lone UTF-16 surrogate escape is PARSE_ERROR that still carries the id, before and after
/// the handshake.
#[test]
fn a_lone_surrogate_is_a_parse_error_with_the_id() {
    for initialized in [false, true] {
        run(
            initialized,
            (request_id(), any::<String>(), 0u16..0x800),
            |host, (id, text, low)| check_surrogate(host, &id, &text, low),
        );
    }
}

/// A valid request, encoded with any id and any line text, is decoded to the same method,
/// params and id: the host answers that id, and `plans.parseCommand` answers for exactly the
/// line that was sent.
#[test]
fn valid_requests_decode_to_the_same_method_params_and_id() {
    let text = prop_oneof![
        any::<String>(),
        prop::collection::vec(
            prop::sample::select(vec![
                "/plan", " ", "\t", "save", "exit", "-h", "x", "\r\n", "é"
            ]),
            0..5
        )
        .prop_map(|v| v.concat()),
    ];
    run(true, (request_id(), text), |host, (id, text)| {
        let line = json!({
            "jsonrpc": "2.0", "id": id, "method": "plans.parseCommand", "params": {"line": text},
        });
        let answers: Vec<Response> = host
            .exchange_expecting(line.to_string().as_bytes(), Some(&id))
            .into_iter()
            .filter(|r| r.id.as_ref() == Some(&id))
            .collect();
        prop_assert_eq!(answers.len(), 1, "{}: {:?}", line, answers);
        let result = answers[0].result.clone().unwrap_or_default();
        let command: Option<PlanCommand> =
            serde_json::from_value(result["command"].clone()).unwrap();
        prop_assert_eq!(
            command,
            parse_plan_command(&text).ok(),
            "{}: {}",
            line,
            result
        );
        Ok(())
    });
}

/// Found by reading the decoder while writing its fuzz target: the id recovery counted the
/// backslashes before every byte, so a line of N backslashes took O(N²) steps (1 MiB: 171 s in a
/// release build; a 16 MiB line, hours), stalling a runtime thread. Now it is answered at once.
#[test]
fn a_long_run_of_backslashes_is_answered_at_once() {
    let mut host = Host::start();
    let mut line = vec![b'\\'; 4 * 1024 * 1024];
    line.extend_from_slice(b"ud800");
    let started = std::time::Instant::now();
    let answers = host.exchange(&line);
    assert_eq!(answers.len(), 1, "{answers:?}");
    assert_eq!(
        answers[0].error.as_ref().map(|e| e.code),
        Some(codes::PARSE_ERROR)
    );
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
}

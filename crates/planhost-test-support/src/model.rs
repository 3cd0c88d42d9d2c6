//! A scripted streaming model server on 127.0.0.1: no model service is reachable from tests, so
//! an agent under test is pointed at this. It speaks OpenAI's chat completions
//! (`/v1/chat/completions`, for pi) and Anthropic's Messages API (`/v1/messages`, for Claude
//! Code). Each model request takes the next scripted reply and streams it back as server-sent
//! events, in small chunks, the way a real provider does.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::Duration;

use serde_json::{Value, json};

/// One scripted assistant reply.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// Plain text, finishing with `stop`.
    Text(String),
    /// Tool calls (name, arguments), finishing with `tool_calls`; text may come first.
    Tools {
        /// Text streamed before the calls (may be empty).
        text: String,
        /// The calls, in batch order.
        calls: Vec<(String, Value)>,
    },
    /// Text streamed slowly, one chunk every `pause`, so a test can abort mid-stream.
    Slow {
        /// The text.
        text: String,
        /// The pause between chunks.
        pause: Duration,
    },
}

impl Reply {
    /// A reply that calls one tool.
    pub fn tool(name: &str, arguments: Value) -> Self {
        Reply::Tools {
            text: String::new(),
            calls: vec![(name.to_owned(), arguments)],
        }
    }

    /// A reply of plain text.
    pub fn text(text: &str) -> Self {
        Reply::Text(text.to_owned())
    }
}

#[derive(Default)]
struct State {
    script: VecDeque<Reply>,
    requests: Vec<Value>,
}

/// The running server. Clones share it; it serves until the process ends and keeps every request
/// body (see [`ModelServer::requests`]), so a long benchmark should use one per measured part.
#[derive(Clone)]
pub struct ModelServer {
    port: u16,
    state: Arc<(Mutex<State>, Condvar)>,
}

impl std::fmt::Debug for ModelServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModelServer")
            .field("port", &self.port)
            .finish_non_exhaustive()
    }
}

/// Characters per streamed chunk: small, so streaming parsers see split tokens and delimiters.
const CHUNK: usize = 7;

impl ModelServer {
    /// Starts a server on an ephemeral port of 127.0.0.1.
    pub fn start() -> std::io::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let port = listener.local_addr()?.port();
        let state: Arc<(Mutex<State>, Condvar)> = Arc::default();
        let shared = Arc::clone(&state);
        std::thread::Builder::new()
            .name("model-server".into())
            .spawn(move || {
                for stream in listener.incoming().flatten() {
                    let state = Arc::clone(&shared);
                    std::thread::spawn(move || {
                        let _ = serve(stream, &state);
                    });
                }
            })?;
        Ok(Self { port, state })
    }

    /// The OpenAI-compatible base URL (`…/v1`).
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }

    /// The Anthropic base URL (`ANTHROPIC_BASE_URL`: the client appends `/v1/messages`).
    pub fn anthropic_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Queues the reply to the next request.
    pub fn push(&self, reply: Reply) {
        let (lock, ready) = &*self.state;
        lock.lock()
            .unwrap_or_else(PoisonError::into_inner)
            .script
            .push_back(reply);
        ready.notify_all();
    }

    /// Every chat completion request body received so far, in order.
    pub fn requests(&self) -> Vec<Value> {
        self.state
            .0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .requests
            .clone()
    }

    /// Forgets the request bodies kept so far (each holds the whole conversation, so a long
    /// benchmark would otherwise keep quadratic memory).
    pub fn forget_requests(&self) {
        self.state
            .0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .requests
            .clear();
    }

    /// Replies still queued.
    pub fn pending(&self) -> usize {
        self.state
            .0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .script
            .len()
    }

    /// A pi `models.json` with one provider `scripted` serving `model` from this server.
    pub fn models_json(&self, model: &str) -> Value {
        json!({
            "providers": {
                "scripted": {
                    "baseUrl": self.base_url(),
                    "api": "openai-completions",
                    "apiKey": "scripted",
                    "compat": { "supportsDeveloperRole": false, "supportsReasoningEffort": false },
                    "models": [{ "id": model, "name": "Scripted", "reasoning": false,
                                 "input": ["text"], "contextWindow": 128000, "maxTokens": 16000 }]
                }
            }
        })
    }
}

/// Tool call ids, unique across every request of the process.
static NEXT_CALL: AtomicU64 = AtomicU64::new(1);

/// How long a request waits for a reply to be scripted before it gets a default one.
const SCRIPT_WAIT: Duration = Duration::from_secs(10);

/// Records the request and takes the next scripted reply, waiting up to [`SCRIPT_WAIT`] for one.
fn next_reply(state: &(Mutex<State>, Condvar), request: Value) -> Reply {
    let (lock, ready) = state;
    let mut guard = lock.lock().unwrap_or_else(PoisonError::into_inner);
    guard.requests.push(request);
    let deadline = std::time::Instant::now() + SCRIPT_WAIT;
    while guard.script.is_empty() && std::time::Instant::now() < deadline {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        guard = ready
            .wait_timeout(guard, left)
            .unwrap_or_else(PoisonError::into_inner)
            .0;
    }
    guard
        .script
        .pop_front()
        .unwrap_or_else(|| Reply::text("(the scripted model has nothing more to say)"))
}

fn serve(stream: TcpStream, state: &(Mutex<State>, Condvar)) -> std::io::Result<()> {
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut line = String::new();
    reader.read_line(&mut line)?;
    let mut length = 0usize;
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header)? == 0 || header == "\r\n" || header == "\n" {
            break;
        }
        if let Some((name, value)) = header.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().unwrap_or(0);
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body)?;
    let mut out = stream;
    if line.contains("/v1/messages/count_tokens") {
        let text = r#"{"input_tokens":100}"#;
        return write!(
            out,
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{text}",
            text.len()
        );
    }
    if line.starts_with("POST ") && line.contains("/v1/messages") {
        let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        // Side requests without tools (a title, a summary) are not the agent's turn: they get a
        // short text and take nothing from the script.
        let reply = if request["tools"].as_array().is_some_and(|t| !t.is_empty()) {
            next_reply(state, request)
        } else {
            Reply::text("Scripted")
        };
        return anthropic::stream(&mut out, &reply);
    }
    if !line.contains("/chat/completions") {
        let text = r#"{"object":"list","data":[]}"#;
        return write!(
            out,
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{text}",
            text.len()
        );
    }
    let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let reply = next_reply(state, request);
    write!(
        out,
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\nconnection: close\r\n\r\n"
    )?;
    let chunk = |delta: Value, finish: Option<&str>| {
        json!({
            "id": "chatcmpl-scripted", "object": "chat.completion.chunk", "created": 0,
            "model": "scripted",
            "choices": [{ "index": 0, "delta": delta, "finish_reason": finish }],
        })
    };
    let mut send = |value: &Value| -> std::io::Result<()> {
        write!(out, "data: {value}\n\n")?;
        out.flush()
    };
    send(&chunk(json!({"role": "assistant", "content": ""}), None))?;
    let stream_text = |send: &mut dyn FnMut(&Value) -> std::io::Result<()>,
                       text: &str,
                       pause: Option<Duration>|
     -> std::io::Result<()> {
        let chars: Vec<char> = text.chars().collect();
        for piece in chars.chunks(CHUNK) {
            let piece: String = piece.iter().collect();
            send(&chunk(json!({ "content": piece }), None))?;
            if let Some(pause) = pause {
                std::thread::sleep(pause);
            }
        }
        Ok(())
    };
    match reply {
        Reply::Text(text) => {
            stream_text(&mut send, &text, None)?;
            send(&chunk(json!({}), Some("stop")))?;
        }
        Reply::Slow { text, pause } => {
            stream_text(&mut send, &text, Some(pause))?;
            send(&chunk(json!({}), Some("stop")))?;
        }
        Reply::Tools { text, calls } => {
            stream_text(&mut send, &text, None)?;
            for (index, (name, arguments)) in calls.iter().enumerate() {
                let id = format!("call_{}", NEXT_CALL.fetch_add(1, Ordering::Relaxed));
                let args = arguments.to_string();
                send(&chunk(
                    json!({ "tool_calls": [{ "index": index, "id": id, "type": "function",
                        "function": { "name": name, "arguments": "" } }] }),
                    None,
                ))?;
                let chars: Vec<char> = args.chars().collect();
                for piece in chars.chunks(CHUNK) {
                    let piece: String = piece.iter().collect();
                    send(&chunk(
                        json!({ "tool_calls": [{ "index": index, "function": { "arguments": piece } }] }),
                        None,
                    ))?;
                }
            }
            send(&chunk(json!({}), Some("tool_calls")))?;
        }
    }
    write!(out, "data: [DONE]\n\n")?;
    out.flush()
}

/// Anthropic's Messages API stream: `message_start`, a content block per text or tool call
/// (text deltas, `input_json_delta`s), `message_delta` with the stop reason, `message_stop`.
mod anthropic {
    use std::io::Write;
    use std::sync::atomic::Ordering;
    use std::time::Duration;

    use serde_json::{Value, json};

    use super::{CHUNK, NEXT_CALL, Reply};

    fn event(out: &mut impl Write, value: &Value) -> std::io::Result<()> {
        let name = value["type"].as_str().unwrap_or("message");
        write!(out, "event: {name}\ndata: {value}\n\n")?;
        out.flush()
    }

    fn pieces(text: &str) -> Vec<String> {
        let chars: Vec<char> = text.chars().collect();
        chars.chunks(CHUNK).map(|c| c.iter().collect()).collect()
    }

    fn text_block(
        out: &mut impl Write,
        index: usize,
        text: &str,
        pause: Option<Duration>,
    ) -> std::io::Result<()> {
        event(
            out,
            &json!({ "type": "content_block_start", "index": index,
                     "content_block": { "type": "text", "text": "" } }),
        )?;
        for piece in pieces(text) {
            event(
                out,
                &json!({ "type": "content_block_delta", "index": index,
                         "delta": { "type": "text_delta", "text": piece } }),
            )?;
            if let Some(pause) = pause {
                std::thread::sleep(pause);
            }
        }
        event(
            out,
            &json!({ "type": "content_block_stop", "index": index }),
        )
    }

    pub(super) fn stream(out: &mut impl Write, reply: &Reply) -> std::io::Result<()> {
        write!(
            out,
            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\nconnection: close\r\n\r\n"
        )?;
        let id = NEXT_CALL.fetch_add(1, Ordering::Relaxed);
        event(
            out,
            &json!({ "type": "message_start", "message": {
                "id": format!("msg_scripted_{id}"), "type": "message", "role": "assistant",
                "model": "scripted", "content": [], "stop_reason": null, "stop_sequence": null,
                "usage": { "input_tokens": 100, "output_tokens": 1 } } }),
        )?;
        let stop = match reply {
            Reply::Text(text) => {
                text_block(out, 0, text, None)?;
                "end_turn"
            }
            Reply::Slow { text, pause } => {
                text_block(out, 0, text, Some(*pause))?;
                "end_turn"
            }
            Reply::Tools { text, calls } => {
                let mut index = 0;
                if !text.is_empty() {
                    text_block(out, index, text, None)?;
                    index += 1;
                }
                for (name, input) in calls {
                    let call = format!(
                        "toolu_scripted_{}",
                        NEXT_CALL.fetch_add(1, Ordering::Relaxed)
                    );
                    event(
                        out,
                        &json!({ "type": "content_block_start", "index": index,
                                 "content_block": { "type": "tool_use", "id": call, "name": name, "input": {} } }),
                    )?;
                    for piece in pieces(&input.to_string()) {
                        event(
                            out,
                            &json!({ "type": "content_block_delta", "index": index,
                                     "delta": { "type": "input_json_delta", "partial_json": piece } }),
                        )?;
                    }
                    event(
                        out,
                        &json!({ "type": "content_block_stop", "index": index }),
                    )?;
                    index += 1;
                }
                "tool_use"
            }
        };
        event(
            out,
            &json!({ "type": "message_delta", "delta": { "stop_reason": stop, "stop_sequence": null },
                     "usage": { "output_tokens": 10 } }),
        )?;
        event(out, &json!({ "type": "message_stop" }))
    }
}

//! Replies chosen from what the model is asked, not from a fixed queue: an agent (and an
//! extension inside it) may call the model a varying number of times — after a tool result, for
//! a follow-up message — so a scenario states rules ("after the `SubmitPlan` result, say …;
//! when the approved plan arrives, call `edit`") and [`Responder`] applies them to each request
//! of a [`ModelServer`] as it arrives.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::Value;

use crate::{ModelServer, Reply};

/// The last message of a chat completion request, the thing a reply answers.
#[derive(Debug, Clone, PartialEq)]
pub enum Last {
    /// A user message with this text.
    User(String),
    /// A tool result: the tool's name (looked up from the assistant's call) and the text.
    ToolResult {
        /// The tool that ran.
        name: String,
        /// Its result text.
        text: String,
    },
    /// Anything else (system prompt only, assistant, unknown shapes).
    Other(Value),
}

/// A view of one chat completion request body.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatRequest {
    /// The body as received.
    pub body: Value,
    /// Its position among the server's requests (0-based).
    pub index: usize,
}

impl ChatRequest {
    /// The request's messages.
    pub fn messages(&self) -> &[Value] {
        self.body
            .get("messages")
            .and_then(Value::as_array)
            .map_or(&[], Vec::as_slice)
    }

    /// The last message, classified.
    pub fn last(&self) -> Last {
        let Some(last) = self.messages().last() else {
            return Last::Other(Value::Null);
        };
        match last.get("role").and_then(Value::as_str) {
            Some("user") => Last::User(text_of(last.get("content"))),
            Some("tool") => {
                let id = last.get("tool_call_id").and_then(Value::as_str);
                Last::ToolResult {
                    name: id.and_then(|id| self.tool_name(id)).unwrap_or_default(),
                    text: text_of(last.get("content")),
                }
            }
            _ => Last::Other(last.clone()),
        }
    }

    /// The name of the tool an assistant message called with this id.
    pub fn tool_name(&self, call_id: &str) -> Option<String> {
        self.messages()
            .iter()
            .filter_map(|m| m.get("tool_calls").and_then(Value::as_array))
            .flatten()
            .find(|c| c.get("id").and_then(Value::as_str) == Some(call_id))
            .and_then(|c| c.pointer("/function/name").and_then(Value::as_str))
            .map(str::to_owned)
    }

    /// Every tool result in the conversation, in order: (tool name, text).
    pub fn tool_results(&self) -> Vec<(String, String)> {
        self.messages()
            .iter()
            .filter(|m| m.get("role").and_then(Value::as_str) == Some("tool"))
            .map(|m| {
                let name = m
                    .get("tool_call_id")
                    .and_then(Value::as_str)
                    .and_then(|id| self.tool_name(id))
                    .unwrap_or_default();
                (name, text_of(m.get("content")))
            })
            .collect()
    }

    /// How many results of `tool` the conversation holds.
    pub fn results_of(&self, tool: &str) -> usize {
        self.tool_results()
            .iter()
            .filter(|(n, _)| n == tool)
            .count()
    }

    /// How many results of `tool` come after the first user message containing `needle`
    /// (`None` when no user message contains it).
    pub fn results_of_after(&self, tool: &str, needle: &str) -> Option<usize> {
        let messages = self.messages();
        let start = messages.iter().position(|m| {
            m.get("role").and_then(Value::as_str) == Some("user")
                && text_of(m.get("content")).contains(needle)
        })?;
        let later = ChatRequest {
            body: serde_json::json!({ "messages": messages[start..].to_vec() }),
            index: self.index,
        };
        // Tool names come from the assistant calls, which all follow the user message.
        Some(later.results_of(tool))
    }

    /// The text of every user message, in order.
    pub fn user_texts(&self) -> Vec<String> {
        self.messages()
            .iter()
            .filter(|m| m.get("role").and_then(Value::as_str) == Some("user"))
            .map(|m| text_of(m.get("content")))
            .collect()
    }

    /// Whether any user message contains `needle`.
    pub fn any_user_contains(&self, needle: &str) -> bool {
        self.messages()
            .iter()
            .filter(|m| m.get("role").and_then(Value::as_str) == Some("user"))
            .any(|m| text_of(m.get("content")).contains(needle))
    }

    /// The tool names the request offers the model.
    pub fn offered_tools(&self) -> Vec<String> {
        self.body
            .get("tools")
            .and_then(Value::as_array)
            .map(|tools| {
                tools
                    .iter()
                    .filter_map(|t| t.pointer("/function/name").and_then(Value::as_str))
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// A message content's text: a string, or the `text` of each part.
fn text_of(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        Some(Value::Null | Value::Bool(_) | Value::Number(_) | Value::Object(_)) | None => {
            String::new()
        }
    }
}

/// Replies after which a [`Responder`] stops applying its rule and only says
/// [`Responder::ENOUGH`]: a rule that loops (a tool call answered by another tool call forever)
/// ends instead of spinning until the test's bound.
pub const MAX_REPLIES: usize = 60;

/// Answers each request of a server with `rule(request)`, until dropped.
#[derive(Debug)]
pub struct Responder {
    stop: Arc<AtomicBool>,
}

impl Responder {
    /// What the model says once [`MAX_REPLIES`] are spent.
    pub const ENOUGH: &'static str = "(the scripted model has said enough)";

    /// Starts answering. The server must not have replies queued by other means.
    pub fn start(
        server: &ModelServer,
        mut rule: impl FnMut(&ChatRequest) -> Reply + Send + 'static,
    ) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let server = server.clone();
        std::thread::Builder::new()
            .name("model-responder".into())
            .spawn(move || {
                let mut answered = server.requests().len();
                while !flag.load(Ordering::Relaxed) {
                    let requests = server.requests();
                    while answered < requests.len() {
                        let request = ChatRequest {
                            body: requests[answered].clone(),
                            index: answered,
                        };
                        let reply = if answered < MAX_REPLIES {
                            rule(&request)
                        } else {
                            Reply::text(Self::ENOUGH)
                        };
                        server.push(reply);
                        answered += 1;
                    }
                    std::thread::sleep(Duration::from_millis(5));
                }
            })
            .ok();
        Self { stop }
    }
}

impl Drop for Responder {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

//! The one connection loop every line transport shares (stdio and the unix socket): framing
//! errors, the handshake, the in-flight limit, and encoding the service's typed results and
//! notifications. Decisions are the service's; this only carries them.

use std::sync::Arc;

use planhost_core::ErrorCode;
use planhost_protocol::{
    ClientRequest, Incoming, MAX_LINE_BYTES, Notification, RequestId, Response, RpcError,
    ServerNotification, ServerResult,
};
use serde_json::Value;
use tokio::sync::{Semaphore, mpsc};
use tokio_util::bytes::BytesMut;
use tokio_util::sync::CancellationToken;

use super::framing::Frame;
use crate::{Notifications, Peer, Service, ServiceError};

/// Requests one connection may have in flight; further reads wait (backpressure, not failure).
const MAX_IN_FLIGHT: usize = 64;

fn encode(response: &Response) -> Arc<str> {
    match serde_json::to_string(response) {
        Ok(line) => Arc::from(line),
        Err(_) => Arc::from(
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"unencodable response","data":{"code":"INTERNAL_ERROR"}}}"#,
        ),
    }
}

fn encode_note(note: &ServerNotification) -> Option<Arc<str>> {
    let params = note.params().ok()?;
    serde_json::to_string(&Notification::new(note.method(), params))
        .ok()
        .map(Arc::from)
}

/// A success reply, written straight from the typed result (no `Value` in between).
#[derive(serde::Serialize)]
struct Success<'a> {
    jsonrpc: &'static str,
    id: &'a Option<RequestId>,
    result: &'a ServerResult,
}

fn reply(id: Option<RequestId>, result: Result<ServerResult, ServiceError>) -> Arc<str> {
    let error = match result {
        Ok(result) => {
            let line = serde_json::to_string(&Success {
                jsonrpc: "2.0",
                id: &id,
                result: &result,
            });
            match line {
                Ok(line) => return Arc::from(line),
                Err(e) => ServiceError::Internal(e.to_string()),
            }
        }
        Err(error) => error,
    };
    encode(&Response::err(id, error.to_rpc()))
}

pub(crate) fn error_line(
    id: Option<RequestId>,
    code: ErrorCode,
    message: impl Into<String>,
) -> Arc<str> {
    encode(&Response::err(id, RpcError::new(code, message)))
}

/// How long a connection may take to complete `initialize`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Handshake {
    /// Within this long of being served; then it is told `INITIALIZE_TIMEOUT` and closed.
    Within(std::time::Duration),
    /// As long as it takes (the one client of `serve --stdio`).
    Unbounded,
}

/// How a connection ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[must_use]
pub(crate) enum Ended {
    /// Its input ended, it was killed, or it failed.
    Closed,
    /// The host closes it and queued a last line saying why; the transport should let the
    /// writer send it before closing.
    Told,
}

/// Serves one connection until its input ends, it is killed (slow client), it fails, or it does
/// not complete `initialize` within `handshake`. `peer` is who is at the other end, for the
/// service's handshake (the approver lineage rule).
pub(crate) async fn serve_lines(
    service: Service,
    peer: Peer,
    handshake: Handshake,
    mut lines: mpsc::Receiver<std::io::Result<Frame>>,
    out: mpsc::Sender<Arc<str>>,
    kill: CancellationToken,
) -> Ended {
    let hello = initialize(&service, peer, &mut lines, &out, &kill);
    let initialized = match handshake {
        Handshake::Unbounded => hello.await,
        Handshake::Within(limit) => match tokio::time::timeout(limit, hello).await {
            Ok(initialized) => initialized,
            Err(_) => {
                tracing::debug!(?peer, "closed: no initialize within {limit:?}");
                let message = format!(
                    "this connection did not complete initialize within {} s of being \
                     accepted, so planhost closes it: a client sends initialize first, as soon \
                     as it connects",
                    limit.as_secs_f64()
                );
                // A client that never reads may have filled its queue: it is closed all the same.
                let _ = out.try_send(error_line(None, ErrorCode::InitializeTimeout, message));
                return Ended::Told;
            }
        },
    };
    let Some((conn, notes)) = initialized else {
        return Ended::Closed;
    };
    tracing::debug!(connection = conn.id(), roles = ?conn.roles(), "initialized");
    // A connection the service drops (it stopped reading) ends the transport too.
    let dropped = conn.closed_token();
    let (responses, writer) = spawn_writer(notes, out.clone(), kill.clone());
    let slots = Arc::new(Semaphore::new(MAX_IN_FLIGHT));
    loop {
        let line = tokio::select! {
            () = dropped.cancelled() => break,
            line = next_line(&mut lines, &out, &kill) => line,
        };
        let Some(bytes) = line else { break };
        let Decoded { id, request } = match decode_request(&bytes) {
            Ok(Some(decoded)) => decoded,
            Ok(None) => continue,
            Err((id, error)) => {
                let _ = responses.send(encode(&Response::err(id, error))).await;
                continue;
            }
        };
        drop(bytes);
        let Ok(permit) = Arc::clone(&slots).acquire_owned().await else {
            break;
        };
        let (conn, responses) = (conn.clone(), responses.clone());
        tokio::spawn(async move {
            let line = match request {
                Ok(parsed) => reply(id, conn.handle(parsed).await),
                Err(error) => encode(&Response::err(id, error)),
            };
            let _ = responses.send(line).await;
            drop(permit);
        });
    }
    // Whatever the client was running dies with its connection.
    conn.close();
    if dropped.is_cancelled() {
        kill.cancel();
    }
    drop(responses);
    let _ = writer.await;
    Ended::Closed
}

/// The handshake: nothing but `initialize` is served before it. The connection and its
/// notifications once it succeeded; `None` when the input ended first.
async fn initialize(
    service: &Service,
    peer: Peer,
    lines: &mut mpsc::Receiver<std::io::Result<Frame>>,
    out: &mpsc::Sender<Arc<str>>,
    kill: &CancellationToken,
) -> Option<(crate::Connection, Notifications)> {
    loop {
        let bytes = next_line(lines, out, kill).await?;
        let request = match decode_line(&bytes) {
            Ok(Some(request)) => request,
            Ok(None) => continue,
            Err((id, error)) => {
                let _ = out.send(encode(&Response::err(id, error))).await;
                continue;
            }
        };
        let id = request.id.clone();
        if request.method != "initialize" {
            let line = error_line(id, ErrorCode::NotInitialized, "send initialize first");
            let _ = out.send(line).await;
            continue;
        }
        let params = request.params.unwrap_or(Value::Null);
        if let Err(error) = Service::check_hello_version(&params) {
            let _ = out.send(encode(&Response::err(id, error.to_rpc()))).await;
            continue;
        }
        let hello = match ClientRequest::parse("initialize", params) {
            Ok(ClientRequest::Initialize(hello)) => hello,
            Ok(_) => continue,
            Err(e) => {
                let error = RpcError::with_field(e.code, e.message, e.field);
                let _ = out.send(encode(&Response::err(id, error))).await;
                continue;
            }
        };
        match service.connect(&hello, peer) {
            Ok((conn, notes, result)) => {
                let value = serde_json::to_value(result).unwrap_or(Value::Null);
                let _ = out.send(encode(&Response::ok(id, value))).await;
                return Some((conn, notes));
            }
            Err(error) => {
                let _ = out.send(encode(&Response::err(id, error.to_rpc()))).await;
            }
        }
    }
}

/// The one writer of a connection: notifications first whenever one is queued, so a state
/// change published before a reply is always written before that reply.
fn spawn_writer(
    mut notes: Notifications,
    out: mpsc::Sender<Arc<str>>,
    kill: CancellationToken,
) -> (mpsc::Sender<Arc<str>>, tokio::task::JoinHandle<()>) {
    let (tx, mut rx) = mpsc::channel::<Arc<str>>(MAX_IN_FLIGHT);
    let task = tokio::spawn(async move {
        loop {
            let line = tokio::select! {
                biased;
                () = kill.cancelled() => return,
                Some(note) = notes.recv() => encode_note(&note),
                response = rx.recv() => match response {
                    Some(line) => Some(line),
                    None => break,
                },
            };
            if let Some(line) = line
                && out.send(line).await.is_err()
            {
                return;
            }
        }
        // The last replies are out; send what was published before them, then stop.
        while let Some(note) = notes.try_recv() {
            if let Some(line) = encode_note(&note)
                && out.send(line).await.is_err()
            {
                return;
            }
        }
    });
    (tx, task)
}

/// The next line's bytes; framing problems are answered here. `None` at the end of input.
async fn next_line(
    lines: &mut mpsc::Receiver<std::io::Result<Frame>>,
    out: &mpsc::Sender<Arc<str>>,
    kill: &CancellationToken,
) -> Option<BytesMut> {
    loop {
        let line = tokio::select! {
            () = kill.cancelled() => return None,
            line = lines.recv() => line,
        };
        match line {
            None => return None,
            Some(Err(error)) => {
                tracing::warn!(%error, "connection read failed");
                return None;
            }
            Some(Ok(Frame::TooLong)) => {
                let message = format!("line longer than {MAX_LINE_BYTES} bytes; discarded");
                let _ = out
                    .send(error_line(None, ErrorCode::LineTooLong, message))
                    .await;
            }
            Some(Ok(Frame::OverBudget)) => {
                let message = "the host already holds as many unfinished lines as it buffers \
                               for all its connections together; this line was discarded, \
                               send it again";
                let _ = out
                    .send(error_line(None, ErrorCode::InputBufferFull, message))
                    .await;
            }
            Some(Ok(Frame::Line(bytes))) => return Some(bytes),
        }
    }
}

/// The one line decoder every transport uses: one line (without its newline) → a request, or
/// `Ok(None)` for a client notification (no id, which needs no answer), or the JSON-RPC error to
/// send back with the request's id when it can still be read (a line that is invalid only for a
/// lone UTF-16 surrogate escape keeps its id). Public for the fuzzer and for an embedder's own
/// transport.
pub fn decode_line(bytes: &[u8]) -> Result<Option<Incoming>, (Option<RequestId>, RpcError)> {
    let value: Value = serde_json::from_slice(bytes).map_err(|e| {
        (
            lenient_id(bytes),
            RpcError::new(ErrorCode::ParseError, format!("invalid JSON: {e}")),
        )
    })?;
    let id = value
        .get("id")
        .and_then(|v| serde_json::from_value::<RequestId>(v.clone()).ok());
    if !value.is_object() {
        return Err((
            id,
            RpcError::new(
                ErrorCode::InvalidRequest,
                "expected one JSON object per line",
            ),
        ));
    }
    let incoming: Incoming = serde_json::from_value(value).map_err(|e| {
        (
            id.clone(),
            RpcError::new(
                ErrorCode::InvalidRequest,
                format!("not a JSON-RPC request: {e}"),
            ),
        )
    })?;
    if incoming.jsonrpc != "2.0" {
        return Err((
            id,
            RpcError::new(ErrorCode::InvalidRequest, "jsonrpc must be \"2.0\""),
        ));
    }
    Ok(incoming.id.is_some().then_some(incoming))
}

/// A request line's envelope read in place: the method and the params' text borrowed from the
/// line. Only a plain object line with unescaped `jsonrpc` and `method` and no other member
/// reads this way (serde skips an unknown member without checking that its numbers fit, which
/// the `Value` way refuses); every other line takes [`decode_line`]'s way.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Envelope<'a> {
    jsonrpc: &'a str,
    #[serde(default)]
    id: Option<RequestId>,
    method: &'a str,
    #[serde(default, borrow)]
    params: Option<&'a serde_json::value::RawValue>,
}

/// A request decoded from its line: its id, and its typed request or why it is refused.
#[derive(Debug)]
pub struct Decoded {
    /// The request's id (a notification is never decoded into one).
    pub id: Option<RequestId>,
    /// The typed request, or the error to answer it with.
    pub request: Result<ClientRequest, RpcError>,
}

/// One line (without its newline) → a typed request (`Ok(Some)`), a client notification
/// (`Ok(None)`), or the error for the line with its id when it can be read: exactly what
/// [`decode_line`] then [`ClientRequest::parse`] give, the same requests and the same errors.
/// A valid request is read straight from the line's bytes into its typed params, with no
/// `serde_json::Value` in between (the cost paid on every tool call); anything else, a
/// notification or a line with any fault, goes the `Value` way, which says what is wrong.
pub fn decode_request(bytes: &[u8]) -> Result<Option<Decoded>, (Option<RequestId>, RpcError)> {
    let object = bytes.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{');
    if object
        && let Ok(envelope) = serde_json::from_slice::<Envelope<'_>>(bytes)
        && envelope.jsonrpc == "2.0"
        && let Some(id) = envelope.id
        && let Some(request) = ClientRequest::parse_text(
            envelope.method,
            envelope.params.map(serde_json::value::RawValue::get),
        )
    {
        return Ok(Some(Decoded {
            id: Some(id),
            request: Ok(request),
        }));
    }
    decode_by_value(bytes)
}

/// The `Value` way: [`decode_line`], then [`ClientRequest::parse`]. What [`decode_request`]
/// falls back to, and what it is held to (its property test, the fuzz target).
pub fn decode_by_value(bytes: &[u8]) -> Result<Option<Decoded>, (Option<RequestId>, RpcError)> {
    Ok(decode_line(bytes)?.map(|incoming| Decoded {
        id: incoming.id,
        request: ClientRequest::parse(&incoming.method, incoming.params.unwrap_or(Value::Null))
            .map_err(|e| RpcError::with_field(e.code, e.message, e.field)),
    }))
}

/// The id of a line that is not valid JSON only because a string holds a lone UTF-16
/// surrogate escape (`"\ud800"`): every surrogate escape is replaced by U+FFFD and the line
/// parsed again, for its id alone. The request itself is still refused.
fn lenient_id(bytes: &[u8]) -> Option<RequestId> {
    let mut patched = Vec::with_capacity(bytes.len());
    let mut i = 0;
    let mut changed = false;
    while i < bytes.len() {
        let escape = bytes.get(i..i + 6).filter(|w| {
            w[0] == b'\\'
                && w[1] == b'u'
                && matches!(w[2], b'd' | b'D')
                && matches!(w[3], b'8'..=b'9' | b'a'..=b'f' | b'A'..=b'F')
                && w[4].is_ascii_hexdigit()
                && w[5].is_ascii_hexdigit()
        });
        // An even run of backslashes before `\u` means the escape itself is escaped.
        let escaped = escape.is_some()
            && bytes[..i].iter().rev().take_while(|b| **b == b'\\').count() % 2 == 1;
        if escape.is_some() && !escaped {
            patched.extend_from_slice(b"\\ufffd");
            i += 6;
            changed = true;
        } else {
            patched.push(bytes[i]);
            i += 1;
        }
    }
    if !changed {
        return None;
    }
    let value: Value = serde_json::from_slice(&patched).ok()?;
    value
        .get("id")
        .and_then(|v| serde_json::from_value(v.clone()).ok())
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn same(bytes: &[u8]) -> Result<(), TestCaseError> {
        type Seen = Result<Option<(Option<RequestId>, Result<ClientRequest, RpcError>)>, String>;
        let seen = |r: Result<Option<Decoded>, (Option<RequestId>, RpcError)>| -> Seen {
            match r {
                Ok(d) => Ok(d.map(|d| (d.id, d.request))),
                Err((id, e)) => Err(format!("{id:?} {e:?}")),
            }
        };
        let fast = seen(decode_request(bytes));
        let slow = seen(decode_by_value(bytes));
        prop_assert_eq!(fast, slow, "line {}", String::from_utf8_lossy(bytes));
        Ok(())
    }

    /// Valid lines, and lines one edit away from valid: the envelope's every shape (escaped
    /// names, duplicate keys, an array, `jsonrpc` 1.0, ids of every kind), the params of the
    /// hot methods valid, mistyped, missing a field, with an unknown field, absent or null.
    fn lines() -> Vec<String> {
        let authorize = r#"{"sessionId":"s1","turnId":"t1","toolCallId":"c1","toolName":"bash","batchIndex":0,"batchSize":1,"provenance":{"kind":"builtIn"},"input":{"command":"ls -la","n":[1,2.5,-3,1e400,null,true]}}"#;
        let mut lines = Vec::new();
        for params in [
            None,
            Some("null"),
            Some("{}"),
            Some("[]"),
            Some(authorize),
            Some(r#"{"sessionId":"s1","turnId":"t1"}"#),
            Some(
                r#"{"sessionId":"s1","sessionId":"s2","turnId":"t1","toolCallId":"c1","toolName":"bash","batchIndex":0,"batchSize":1,"provenance":{"kind":"builtIn"}}"#,
            ),
            Some(
                r#"{"sessionId":"s1","turnId":"t1","toolCallId":"c1","toolName":"bash","batchIndex":-1,"batchSize":1,"provenance":{"kind":"builtIn"}}"#,
            ),
            Some(
                r#"{"sessionId":"s1","turnId":"t1","toolCallId":"c1","toolName":"bash","batchIndex":0,"batchSize":1,"provenance":{"kind":"builtIn","x":1}}"#,
            ),
            Some(r#"{"sessionId":"s1","extra":true}"#),
            Some(r#"{"limit":5}"#),
            Some("7"),
        ] {
            for method in [
                "tools.authorize",
                "app.health",
                "sessions.get",
                "sessions.list",
                "tools.finished",
                "no.such",
                r"app.health",
            ] {
                for (jsonrpc, id) in [
                    ("2.0", Some("1")),
                    ("2.0", Some(r#""a""#)),
                    ("2.0", None),
                    ("2.0", Some("null")),
                    ("2.0", Some("{}")),
                    ("1.0", Some("2")),
                    (r"2.0", Some("3")),
                ] {
                    let mut line = format!(r#"{{"jsonrpc":"{jsonrpc}","method":"{method}""#);
                    if let Some(id) = id {
                        line.push_str(&format!(r#","id":{id}"#));
                    }
                    if let Some(params) = params {
                        line.push_str(&format!(r#","params":{params}"#));
                    }
                    line.push('}');
                    lines.push(line);
                }
            }
        }
        lines.push(r#"["2.0",1,"app.health",{}]"#.to_owned());
        lines.push(
            r#"  {"jsonrpc":"2.0","id":1,"method":"app.health","method":"no.such"}"#.to_owned(),
        );
        lines
    }

    /// The hot requests really take the typed way (were it never taken, every line would still
    /// decode the same, by the fallback), and give what the `Value` way gives.
    #[test]
    fn valid_requests_are_read_the_typed_way() {
        let authorize = r#"{"sessionId":"s1","turnId":"t1","toolCallId":"c1","toolName":"bash","batchIndex":0,"batchSize":1,"provenance":{"kind":"builtIn"},"input":{"command":"ls -la","n":[1,2.5,-3,null,true]}}"#;
        for (method, params) in [
            ("tools.authorize", Some(authorize)),
            ("app.health", None),
            ("app.health", Some("{}")),
            ("sessions.list", Some(r#"{"limit":5}"#)),
        ] {
            let typed = ClientRequest::parse_text(method, params)
                .unwrap_or_else(|| panic!("{method} {params:?} did not read the typed way"));
            let value = params.map_or(Value::Null, |p| serde_json::from_str(p).unwrap());
            assert_eq!(Some(typed), ClientRequest::parse(method, value).ok());
        }
        assert!(ClientRequest::parse_text("sessions.get", Some(r#"{"extra":1}"#)).is_none());
    }

    #[test]
    fn every_template_decodes_as_the_value_way_did() {
        for line in lines() {
            same(line.as_bytes()).unwrap();
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]
        #[test]
        fn a_line_one_edit_from_valid_decodes_as_the_value_way_did(
            pick in any::<prop::sample::Index>(),
            at in any::<prop::sample::Index>(),
            byte in prop::sample::select(b" {}[]\",:0123456789aeflnrstu.-\x00\xff".to_vec()),
            how in 0..3_u8,
        ) {
            let lines = lines();
            let mut line = lines[pick.index(lines.len())].clone().into_bytes();
            let i = at.index(line.len());
            match how {
                0 => line[i] = byte,
                1 => line.insert(i, byte),
                _ => { line.remove(i); }
            }
            same(&line)?;
        }
    }

    #[test]
    fn a_lone_surrogate_keeps_its_id() {
        let line = br#"{"jsonrpc":"2.0","id":7,"method":"app.health","params":{"x":"\ud800"}}"#;
        assert!(serde_json::from_slice::<Value>(line).is_err());
        assert_eq!(lenient_id(line), Some(RequestId::Number(7)));
        let escaped = br#"{"jsonrpc":"2.0","id":"a","x":"\\ud800"#;
        assert_eq!(lenient_id(escaped), None);
        assert_eq!(lenient_id(b"not json"), None);
    }
}

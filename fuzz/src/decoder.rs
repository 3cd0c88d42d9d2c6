//! The host's line decoder: `decode_line` (one line → a request, a client notification, or
//! a JSON-RPC error with the id when it can be read) and then `ClientRequest::parse` (method and
//! params → a typed request), exactly as the host's connection loop
//! (`planhost_service::host`) chains them.

use planhost_core::ErrorCode;
use planhost_protocol::{ClientRequest, Incoming, RequestId, Response, RpcError, codes};
use serde_json::Value;

/// The host's own decoder, from the library every transport uses.
pub use planhost_service::host::decode_line;

/// The host's connection loop reads a line with `decode_request`, which reads a valid request
/// straight into its typed params: it must give what `decode_line` then `ClientRequest::parse`
/// give, request or error, for every line.
fn check_same_as_the_value_way(bytes: &[u8]) {
    type Decoded = Result<Option<planhost_service::host::Decoded>, (Option<RequestId>, RpcError)>;
    type Seen = Result<Option<(Option<RequestId>, Result<ClientRequest, RpcError>)>, String>;
    let seen = |r: Decoded| -> Seen {
        match r {
            Ok(d) => Ok(d.map(|d| (d.id, d.request))),
            Err((id, e)) => Err(format!("{id:?} {e:?}")),
        }
    };
    let fast = seen(planhost_service::host::decode_request(bytes));
    let slow = seen(planhost_service::host::decode_by_value(bytes));
    assert_eq!(fast, slow, "decode_request and the Value way differ");
}

/// The id a well-formed JSON object carries, read the way a client reads it.
fn readable_id(value: &Value) -> Option<RequestId> {
    value
        .get("id")
        .and_then(|v| serde_json::from_value::<RequestId>(v.clone()).ok())
}

/// Every invariant of one line through the decoder.
pub fn check_line(bytes: &[u8]) {
    check_same_as_the_value_way(bytes);
    let value: Option<Value> = serde_json::from_slice(bytes).ok();
    match decode_line(bytes) {
        Err((id, error)) => {
            let code = error
                .stable_code()
                .unwrap_or_else(|| panic!("a decoder error without a stable code: {error:?}"));
            match code {
                ErrorCode::ParseError => {
                    assert!(value.is_none(), "valid JSON answered PARSE_ERROR");
                    assert_eq!(error.code, codes::PARSE_ERROR);
                    if id.is_some() {
                        // Only a lone surrogate escape lets the id of invalid JSON be read.
                        let lower = String::from_utf8_lossy(bytes).to_ascii_lowercase();
                        assert!(
                            lower.contains("\\ud"),
                            "an id read from invalid JSON: {id:?}"
                        );
                    }
                }
                ErrorCode::InvalidRequest => {
                    let value = value.unwrap_or_else(|| panic!("invalid JSON answered {code:?}"));
                    assert_eq!(error.code, codes::INVALID_REQUEST);
                    assert_eq!(id, readable_id(&value), "the readable id is echoed");
                }
                other => panic!("the decoder answered {other:?}: {error:?}"),
            }
            check_error_encodes(id, error);
        }
        Ok(None) => {
            let value = value.unwrap_or_else(|| panic!("invalid JSON accepted as a notification"));
            assert!(
                value.get("id").is_none_or(Value::is_null),
                "a line with an id was taken for a notification: {value}"
            );
            assert_eq!(value.get("jsonrpc"), Some(&Value::from("2.0")));
        }
        Ok(Some(incoming)) => {
            let value = value.unwrap_or_else(|| panic!("invalid JSON accepted as a request"));
            assert_eq!(incoming.jsonrpc, "2.0");
            assert!(incoming.id.is_some());
            assert_eq!(incoming.id, readable_id(&value), "the id is the line's id");
            check_request(&incoming);
        }
    }
}

/// The error response a decoder error becomes encodes and reads back with the same id and code.
fn check_error_encodes(id: Option<RequestId>, error: RpcError) {
    let response = Response::err(id, error);
    let line = serde_json::to_string(&response).unwrap_or_else(|e| panic!("unencodable: {e}"));
    assert!(!line.contains('\n'), "a response line holds a newline");
    let back: Response = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"));
    assert_eq!(back, response);
}

/// Method and params → a typed request or `METHOD_NOT_FOUND` / `INVALID_PARAMS`; a typed request
/// re-encodes to a line that decodes to the same request with the same id.
pub fn check_request(incoming: &Incoming) {
    let params = incoming.params.clone().unwrap_or(Value::Null);
    match ClientRequest::parse(&incoming.method, params) {
        Err(e) => {
            let known = planhost_protocol::method(&incoming.method).is_some();
            match e.code {
                ErrorCode::MethodNotFound => assert!(!known, "{} is a method", incoming.method),
                ErrorCode::InvalidParams => assert!(known, "{} is no method", incoming.method),
                other => panic!("ClientRequest::parse answered {other:?}: {e:?}"),
            }
            let rpc = RpcError::with_field(e.code, e.message, e.field);
            let expected = if known {
                codes::INVALID_PARAMS
            } else {
                codes::METHOD_NOT_FOUND
            };
            assert_eq!(rpc.code, expected);
            check_error_encodes(incoming.id.clone(), rpc);
        }
        Ok(request) => {
            assert_eq!(request.method(), incoming.method);
            check_round_trip(incoming.id.clone(), &request);
        }
    }
}

/// encode → decode gives the same method, params and id.
pub fn check_round_trip(id: Option<RequestId>, request: &ClientRequest) {
    let params = request
        .params()
        .unwrap_or_else(|e| panic!("{request:?} does not encode: {e}"));
    let line = serde_json::to_vec(&Incoming {
        jsonrpc: "2.0".into(),
        id: id.clone(),
        method: request.method().into(),
        params: Some(params),
    })
    .unwrap_or_else(|e| panic!("{e}"));
    match decode_line(&line) {
        Ok(Some(incoming)) => {
            assert_eq!(incoming.id, id);
            assert_eq!(incoming.method, request.method());
            let again = ClientRequest::parse(&incoming.method, incoming.params.unwrap_or_default())
                .unwrap_or_else(|e| panic!("{request:?} re-encoded does not parse: {e:?}"));
            // Exactly, floats included (`serde_json/float_roundtrip`, found by the properties).
            assert_eq!(&again, request, "round trip changed the request");
        }
        Ok(None) if id.is_none() => {}
        other => panic!("{request:?} re-encoded decodes to {other:?}"),
    }
}

/// A request whose params hold a lone UTF-16 surrogate escape is `PARSE_ERROR` carrying its id.
pub fn check_lone_surrogate(id: &RequestId, method: &str, text: &str, surrogate: u16) {
    let surrogate = 0xd800 | (surrogate & 0x07ff);
    let text = serde_json::to_string(text).unwrap_or_else(|e| panic!("{e}"));
    let (open, inner) = text.split_at(1);
    let inner = &inner[..inner.len() - 1];
    let line = format!(
        r#"{{"jsonrpc":"2.0","id":{},"method":{},"params":{{"x":{open}{inner}\u{surrogate:04x}"}}}}"#,
        serde_json::to_string(id).unwrap_or_else(|e| panic!("{e}")),
        serde_json::to_string(method).unwrap_or_else(|e| panic!("{e}")),
    );
    match decode_line(line.as_bytes()) {
        Err((got, error)) => {
            assert_eq!(error.stable_code(), Some(ErrorCode::ParseError), "{line}");
            assert_eq!(got.as_ref(), Some(id), "{line}");
        }
        Ok(other) => panic!("a lone surrogate was accepted: {other:?}: {line}"),
    }
}

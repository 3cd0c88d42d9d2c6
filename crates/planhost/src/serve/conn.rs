//! One connection: framing, the handshake, dispatch, and clean-up when it goes away.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use planhost_protocol::{
    Incoming, InitializeParams, InitializeResult, METHODS, PROTOCOL_VERSION, RequestId, Response,
    RpcError, codes,
};
use serde_json::Value;
use tokio::sync::{Semaphore, mpsc};
use tokio_util::sync::CancellationToken;

use super::lines::Line;
use super::service::{Caller, Service, params, to_value};

/// Requests one connection may have in flight; further reads wait (backpressure, not failure).
const MAX_IN_FLIGHT: usize = 64;

static NEXT_CONN: AtomicU64 = AtomicU64::new(1);

/// A fresh connection id.
pub fn next_id() -> u64 {
    NEXT_CONN.fetch_add(1, Ordering::Relaxed)
}

fn encode(response: &Response) -> Arc<str> {
    match serde_json::to_string(response) {
        Ok(line) => Arc::from(line),
        Err(_) => Arc::from(
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"unencodable response"}}"#,
        ),
    }
}

/// Serves one connection until its input ends, it is killed (slow client), or it fails.
pub async fn serve(
    svc: Arc<Service>,
    conn: u64,
    mut lines: mpsc::Receiver<std::io::Result<Line>>,
    outbound: mpsc::Sender<Arc<str>>,
    kill: CancellationToken,
) {
    let caller = Caller {
        conn,
        outbound: outbound.clone(),
        kill: kill.clone(),
    };
    let slots = Arc::new(Semaphore::new(MAX_IN_FLIGHT));
    let mut initialized = false;
    loop {
        let line = tokio::select! {
            () = kill.cancelled() => break,
            line = lines.recv() => line,
        };
        let bytes = match line {
            None | Some(Ok(Line::Eof)) => break,
            Some(Err(error)) => {
                tracing::warn!(conn, %error, "connection read failed");
                break;
            }
            Some(Ok(Line::TooLong)) => {
                let error = RpcError::new(
                    codes::INVALID_REQUEST,
                    "LINE_TOO_LONG",
                    format!(
                        "line longer than {} bytes; discarded",
                        planhost_protocol::MAX_LINE_BYTES
                    ),
                );
                let _ = outbound.send(encode(&Response::err(None, error))).await;
                continue;
            }
            Some(Ok(Line::Data(bytes))) => bytes,
        };
        let request = match parse(&bytes) {
            Ok(Some(request)) => request,
            Ok(None) => continue,
            Err((id, error)) => {
                let _ = outbound.send(encode(&Response::err(id, error))).await;
                continue;
            }
        };
        let id = request.id.clone();
        if request.method == "initialize" {
            let response = match initialize(request.params.unwrap_or(Value::Null)) {
                Ok(result) => {
                    initialized = true;
                    svc.clients.add(conn, outbound.clone(), kill.clone());
                    Response::ok(id, result)
                }
                Err(error) => Response::err(id, error),
            };
            let _ = outbound.send(encode(&response)).await;
            continue;
        }
        if !initialized {
            let error = RpcError::new(
                codes::NOT_INITIALIZED,
                "NOT_INITIALIZED",
                "send initialize first",
            );
            let _ = outbound.send(encode(&Response::err(id, error))).await;
            continue;
        }
        let Ok(permit) = Arc::clone(&slots).acquire_owned().await else {
            break;
        };
        let (svc, caller) = (Arc::clone(&svc), caller.clone());
        tokio::spawn(async move {
            let method = request.method;
            let result = svc
                .dispatch(&caller, &method, request.params.unwrap_or(Value::Null))
                .await;
            let response = match result {
                Ok(value) => Response::ok(id, value),
                Err(error) => Response::err(id, error),
            };
            let _ = caller.outbound.send(encode(&response)).await;
            drop(permit);
        });
    }
    svc.clients.remove(conn);
    svc.tools.connection_closed(conn);
}

/// Parses one line. `Ok(None)` is a client notification (no id), which needs no answer.
fn parse(bytes: &[u8]) -> Result<Option<Incoming>, (Option<RequestId>, RpcError)> {
    let value: Value = serde_json::from_slice(bytes).map_err(|e| {
        (
            None,
            RpcError::new(
                codes::PARSE_ERROR,
                "PARSE_ERROR",
                format!("invalid JSON: {e}"),
            ),
        )
    })?;
    let id = value
        .get("id")
        .and_then(|v| serde_json::from_value::<RequestId>(v.clone()).ok());
    if !value.is_object() {
        return Err((
            id,
            RpcError::new(
                codes::INVALID_REQUEST,
                "INVALID_REQUEST",
                "expected one JSON object per line",
            ),
        ));
    }
    let incoming: Incoming = serde_json::from_value(value).map_err(|e| {
        (
            id.clone(),
            RpcError::new(
                codes::INVALID_REQUEST,
                "INVALID_REQUEST",
                format!("not a JSON-RPC request: {e}"),
            ),
        )
    })?;
    if incoming.jsonrpc != "2.0" {
        return Err((
            id,
            RpcError::new(
                codes::INVALID_REQUEST,
                "INVALID_REQUEST",
                "jsonrpc must be \"2.0\"",
            ),
        ));
    }
    Ok(incoming.id.is_some().then_some(incoming))
}

fn initialize(p: Value) -> Result<Value, RpcError> {
    let p: InitializeParams = params(p)?;
    if p.protocol_version != PROTOCOL_VERSION {
        return Err(RpcError::new(
            codes::INCOMPATIBLE_VERSION,
            "PROTOCOL_VERSION_MISMATCH",
            format!(
                "client {} speaks protocol v{}, this planhost speaks v{}",
                p.client_name, p.protocol_version, PROTOCOL_VERSION
            ),
        ));
    }
    to_value(InitializeResult {
        protocol_version: PROTOCOL_VERSION,
        server_name: "planhost".into(),
        server_version: env!("CARGO_PKG_VERSION").into(),
        methods: METHODS.iter().map(|m| m.name.to_owned()).collect(),
    })
}

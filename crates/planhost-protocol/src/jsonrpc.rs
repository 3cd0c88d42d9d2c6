//! JSON-RPC 2.0 envelopes, one JSON object per line.

use planhost_core::ErrorCode;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The largest line either side accepts: a 4 MiB plan, JSON-escaped, fits with room to spare.
pub const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

/// A request id: a number or a string, echoed in the response.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum RequestId {
    /// Numeric id.
    Number(i64),
    /// String id.
    String(String),
}

/// A request (with `id`) or a notification (without) as it arrives.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Incoming {
    /// Must be `"2.0"`.
    pub jsonrpc: String,
    /// Absent for notifications.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<RequestId>,
    /// Method name.
    pub method: String,
    /// Parameters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Value>,
}

/// A response: exactly one of `result` or `error`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Response {
    /// Always `"2.0"`.
    pub jsonrpc: String,
    /// The request's id; `null` when the request's id could not be read.
    pub id: Option<RequestId>,
    /// Success.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// Failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<RpcError>,
}

impl Response {
    /// A success response.
    pub fn ok(id: Option<RequestId>, result: Value) -> Self {
        Self {
            jsonrpc: "2.0".into(),
            id,
            result: Some(result),
            error: None,
        }
    }

    /// An error response.
    pub fn err(id: Option<RequestId>, error: RpcError) -> Self {
        Self {
            jsonrpc: "2.0".into(),
            id,
            result: None,
            error: Some(error),
        }
    }
}

/// A server-to-client notification.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Notification {
    /// Always `"2.0"`.
    pub jsonrpc: String,
    /// Notification name.
    pub method: String,
    /// Payload.
    pub params: Value,
}

impl Notification {
    /// A notification.
    pub fn new(method: &str, params: Value) -> Self {
        Self {
            jsonrpc: "2.0".into(),
            method: method.into(),
            params,
        }
    }
}

/// A JSON-RPC error object. `data.code` carries planhost's stable code.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RpcError {
    /// JSON-RPC numeric code (the class of `data.code`).
    pub code: i64,
    /// Human-readable message.
    pub message: String,
    /// Stable code and details.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<ErrorData>,
}

/// The machine-readable part of an error.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ErrorData {
    /// Stable code, e.g. `PLAN_APPROVAL_TIMEOUT`.
    pub code: ErrorCode,
    /// The offending parameter, for invalid params.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
}

/// JSON-RPC numeric codes of the error classes (see [`planhost_core::CodeClass`]).
pub mod codes {
    /// Invalid JSON.
    pub const PARSE_ERROR: i64 = -32700;
    /// Not a valid request object.
    pub const INVALID_REQUEST: i64 = -32600;
    /// Unknown method.
    pub const METHOD_NOT_FOUND: i64 = -32601;
    /// Parameters do not match the method.
    pub const INVALID_PARAMS: i64 = -32602;
    /// A host fault.
    pub const INTERNAL_ERROR: i64 = -32603;
    /// planhost refused the request; `data.code` says why. Nothing changed.
    pub const REFUSED: i64 = -32000;
    /// The client and host speak incompatible protocol versions.
    pub const INCOMPATIBLE_VERSION: i64 = -32001;
    /// A method other than `initialize` arrived before it.
    pub const NOT_INITIALIZED: i64 = -32002;
    /// The host could not persist the change; nothing was granted.
    pub const PERSISTENCE_FAILED: i64 = -32003;
    /// The connection's roles do not allow the method; nothing changed.
    pub const FORBIDDEN: i64 = -32004;
}

impl RpcError {
    /// An error carrying `code`, with the numeric code of its class.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code: code.class().numeric().unwrap_or(codes::INTERNAL_ERROR),
            message: message.into(),
            data: Some(ErrorData { code, field: None }),
        }
    }

    /// [`RpcError::new`] naming the offending parameter.
    pub fn with_field(code: ErrorCode, message: impl Into<String>, field: Option<String>) -> Self {
        let mut error = Self::new(code, message);
        if let Some(data) = error.data.as_mut() {
            data.field = field;
        }
        error
    }

    /// The stable code, if any.
    pub fn stable_code(&self) -> Option<ErrorCode> {
        self.data.as_ref().map(|d| d.code)
    }
}

//! planhost's wire protocol: JSON-RPC 2.0 over newline-delimited JSON. This crate holds the
//! envelopes, the params and result of every method, the notifications, the numeric and stable
//! error codes, and the JSON Schema export. It has no logic.
//!
//! ```
//! use planhost_protocol::{method, PROTOCOL_VERSION};
//!
//! assert!(method("plans.resolve").is_some());
//! assert!(method("plans.approveEverything").is_none());
//! assert_eq!(PROTOCOL_VERSION, 1);
//! ```

mod jsonrpc;
mod methods;
mod plans;
mod types;

pub use jsonrpc::{
    ErrorData, Incoming, MAX_LINE_BYTES, Notification, RequestId, Response, RpcError, codes,
};
pub use methods::{METHODS, MethodSpec, PROTOCOL_VERSION, method, notifications, protocol_schema};
pub use planhost_core::{Event, EventBody};
pub use plans::*;
pub use types::*;

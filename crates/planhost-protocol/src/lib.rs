//! planhost's wire protocol, v2: JSON-RPC 2.0 over newline-delimited JSON. This crate holds the
//! contract — every method's name, role rule, params and result in one table ([`ClientRequest`],
//! [`ServerResult`], [`methods`]) — the envelopes, the notifications, the stable codes (from
//! `planhost-core`'s registry) and the JSON Schema export. It has no logic.
//!
//! ```
//! use planhost_protocol::{ClientRequest, Method, methods, PROTOCOL_VERSION};
//! use planhost_core::Access;
//!
//! let request = ClientRequest::parse("plans.resolve", serde_json::json!({
//!     "proposalId": "p", "sessionId": "s", "turnId": "t", "toolCallId": "c", "action": "approve",
//! })).unwrap();
//! assert_eq!(request.access(), Access::Approver);
//! assert_eq!(methods::PlansResolve::NAME, "plans.resolve");
//! assert!(ClientRequest::parse("plans.approveEverything", serde_json::Value::Null).is_err());
//! assert_eq!(PROTOCOL_VERSION, 2);
//! ```

#[macro_use]
mod wire;

mod agent;
mod app;
mod changes;
mod checkpoints;
mod contract;
mod jsonrpc;
mod plans;
mod publications;
mod schema;
mod sessions;
mod tools;

pub use agent::*;
pub use app::*;
pub use changes::*;
pub use checkpoints::*;
pub use contract::{
    ClientRequest, METHODS, Method, MethodSpec, NOTIFICATIONS, NotificationSpec, PROTOCOL_VERSION,
    RequestError, ServerNotification, ServerResult, method, methods, notifications,
};
pub use jsonrpc::{
    ErrorData, Incoming, MAX_LINE_BYTES, Notification, RequestId, Response, RpcError, codes,
};
pub use planhost_core::{Event, EventBody};
pub use plans::*;
pub use publications::*;
pub use schema::protocol_schema;
pub use sessions::*;
pub use tools::*;

//! planhost's service: the whole host contract behind one typed API. It owns sessions, turns,
//! the fail-closed tool authority (grants, asks, the execute-time re-check, audit rows), the
//! policy cache, plans and approvals, capture, publication, shell pins and the event stream.
//! Its store is private: every transport (stdio, the unix socket, later HTTP and MCP) and every
//! embedding app reach the same contract through a [`Connection`], so there is no second way to
//! execute and no way around the gate.
//!
//! An embedding Rust app uses the in-process client directly:
//!
//! ```
//! use std::sync::Arc;
//! use planhost_core::{Interactivity, ManualClock, Mode, Platform, Role, Timestamp};
//! use planhost_protocol::{methods, InitializeParams, OpenSessionParams, PROTOCOL_VERSION};
//! use planhost_service::{Peer, Service, ServiceConfig};
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let state = tempfile::tempdir().unwrap();
//! let workspace = tempfile::tempdir().unwrap();
//! let config = ServiceConfig {
//!     clock: Arc::new(ManualClock::new(Timestamp(0))),
//!     ..ServiceConfig::new(state.path())
//! };
//! let service = Service::start(config).unwrap().service;
//! let hello = InitializeParams {
//!     protocol_version: PROTOCOL_VERSION,
//!     client_name: "my-app".into(),
//!     client_version: None,
//!     roles: vec![Role::Agent],
//!     tool_activity: false,
//!     events: planhost_protocol::EventScope::All,
//!     agent_process: None,
//! };
//! let (conn, _events, _) = service.connect(&hello, Peer::Embedded).unwrap();
//! let session = conn
//!     .call::<methods::SessionsOpen>(OpenSessionParams {
//!         workspace_root: workspace.path().display().to_string(),
//!         external_id: None,
//!         interactivity: Interactivity::Interactive,
//!         persistence: None,
//!         agent: Some(planhost_core::Agent::ClaudeCode),
//!     })
//!     .await
//!     .unwrap();
//! assert_eq!(session.mode, Mode::Agent);
//! assert_eq!(session.agent, planhost_core::Agent::ClaudeCode);
//! // An agent-only connection can never approve: that takes the approver role.
//! let set_mode = planhost_protocol::SetModeParams { session_id: session.id, mode: Mode::Plan };
//! let refused = conn.call::<methods::SessionsSetMode>(set_mode).await.unwrap_err();
//! assert_eq!(refused.code().as_str(), "ROLE_FORBIDDEN");
//! conn.close();
//! service.shutdown();
//! # });
//! ```

mod actor;
mod authority;
mod clock;
mod connection;
mod convert;
mod diff;
mod engine;
mod error;
mod fanout;
mod handlers;
pub mod host;
mod lineage;
mod publish;
mod reach;
mod service;
mod shells;

pub use clock::{SystemClock, UuidIds, new_id};
pub use connection::{Connection, Notifications};
pub use error::{Result, ServiceError};
pub use fanout::CONNECTION_QUEUE;
pub use lineage::Peer;
pub use planhost_store::{FenceReport, MigrationReport, dump_database};
pub use service::{PageStarter, Service, ServiceConfig, Started, WebTokenRotation};

#[cfg(test)]
mod tests;

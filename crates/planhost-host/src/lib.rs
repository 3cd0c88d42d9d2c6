//! planhost's host service: the authoritative store plus the work that spans adapters — ids,
//! workspace roots, the SubmitPlan artifact — and the actor thread that owns it and expires
//! approvals at their deadline.
//!
//! ```
//! use std::sync::Arc;
//! use planhost_core::{Interactivity, ManualClock, Mode, Timestamp};
//! use planhost_host::Host;
//!
//! let state = tempfile::tempdir().unwrap();
//! let workspace = tempfile::tempdir().unwrap();
//! let clock = Arc::new(ManualClock::new(Timestamp(0)));
//! let mut host = Host::open(&state.path().join("planhost.sqlite"), clock).unwrap().host;
//! let session = host.open_session(workspace.path(), Some("pi-1"), Interactivity::Interactive).unwrap();
//! assert_eq!(session.mode, Mode::Agent);
//! ```

mod actor;
mod error;
mod host;
mod plans;

pub use actor::{HostGone, HostHandle, HostThread, spawn_host};
pub use error::{HostError, Result};
pub use host::{Host, Startup, SystemClock, artifact_file_name, new_id};
pub use plans::{Overwrite, PlanStatus, PublishOutcome, PublishStart};

//! planhost's durable state in SQLite: the schema, migrations with backups, the startup fence,
//! and one transaction for each transition of the pure domain in `planhost-core`.
//!
//! ```
//! use std::sync::Arc;
//! use planhost_core::{Interactivity, ManualClock, Mode, SequentialIds, Timestamp};
//! use planhost_store::{OpenSession, Store};
//!
//! let dir = tempfile::tempdir().unwrap();
//! let clock = Arc::new(ManualClock::new(Timestamp(1_000)));
//! let ids = Arc::new(SequentialIds::default());
//! let mut store = Store::open(&dir.path().join("planhost.sqlite"), clock, ids)
//!     .unwrap()
//!     .store;
//! let session = store
//!     .open_session(
//!         &OpenSession {
//!             workspace_root: "/work/repo".into(),
//!             external_id: Some("pi-123".into()),
//!             interactivity: Interactivity::Interactive,
//!             agent: None,
//!         },
//!         &"s-1".into(),
//!     )
//!     .unwrap();
//! assert_eq!(session.mode, Mode::Agent);
//! assert_eq!(store.set_mode(&session.id, Mode::Plan).unwrap().mode, Mode::Plan);
//! ```

/// `fail::fail_point!` with the test-only `failpoints` feature (see docs/reliability.md);
/// without it, nothing at all.
#[cfg(feature = "failpoints")]
macro_rules! fail_point {
    ($($t:tt)*) => { fail::fail_point!($($t)*) };
}
#[cfg(not(feature = "failpoints"))]
macro_rules! fail_point {
    ($($t:tt)*) => {};
}

mod approvals;
mod audit_writer;
mod blobs;
mod error;
mod executions;
mod fence;
pub mod migrate;
mod plans;
mod queries;
mod records;
mod schema;
mod sessions;
pub mod settings;
mod store;
mod turns;
mod tx;

pub use approvals::{ApprovalFilter, ApprovalQuery, ArtifactRef, ExecutionFilter, SubmitContext};
pub use audit_writer::{AuditRow, AuditSink, AuditWriter, journal_path};
pub use blobs::Stored;
pub use error::{Result, StoreError};
pub use fence::{FenceReport, HOST_RESTARTED};
pub use migrate::{Migration, MigrationReport, Migrator};
pub use plans::steering::HandoffRequest;
pub use plans::{
    CaptureBinding, CheckpointRecord, CheckpointSource, PlanIdentity, PublicationRecord,
    SavedCheckpoint, StatusChange,
};
pub use queries::{AskRecord, PolicySnapshot, dump_database};
pub use records::{ApprovalRecord, AuditRecord, SessionRecord, TurnRecord};
pub use schema::CURRENT_VERSION;
#[doc(hidden)]
pub use schema::SCHEMA_V1;
pub use sessions::{Configure, Ended, OpenSession, SessionLife};
pub use settings::SettingKey;
pub use store::{MIGRATOR, Opened, Store};
pub use turns::{PolicyPin, ShellPin};
pub use tx::AuditSubject;

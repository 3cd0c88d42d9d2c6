//! The one wall clock and the one id generator of production: the adapters below the service
//! (the store) are handed them, as tests hand them a `ManualClock` and `SequentialIds`.

use planhost_core::Timestamp;

/// The wall clock: what production always uses (DESIGN.md decision 3). Tests use
/// [`planhost_core::ManualClock`].
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl planhost_core::Clock for SystemClock {
    #[allow(
        clippy::disallowed_methods,
        reason = "the one place the wall clock is read"
    )]
    fn now(&self) -> Timestamp {
        let ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
        Timestamp(ms)
    }
}

/// UUID v7 ids (DESIGN.md decision 5): time-ordered, so ids sort by creation. Tests use
/// [`planhost_core::SequentialIds`].
#[derive(Debug, Clone, Copy, Default)]
pub struct UuidIds;

impl planhost_core::IdSource for UuidIds {
    fn new_id(&self) -> String {
        new_id()
    }
}

/// A new UUID v7.
pub fn new_id() -> String {
    uuid::Uuid::now_v7().to_string()
}

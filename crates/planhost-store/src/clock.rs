//! The one wall clock and the one id generator every adapter above the domain uses.

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

/// A new UUID v7 (DESIGN.md decision 5): time-ordered, so ids sort by creation.
pub fn new_id() -> String {
    uuid::Uuid::now_v7().to_string()
}

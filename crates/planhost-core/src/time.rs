//! Time as a value. The domain never reads a clock; adapters pass `now` in.

use std::sync::atomic::{AtomicI64, Ordering};

/// Milliseconds since the Unix epoch, UTC.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(transparent)]
pub struct Timestamp(pub i64);

impl Timestamp {
    /// The instant `ms` milliseconds after this one (saturating).
    pub fn plus_ms(self, ms: i64) -> Self {
        Self(self.0.saturating_add(ms))
    }

    /// Milliseconds from `self` until `later`; negative when `later` is earlier.
    pub fn until(self, later: Self) -> i64 {
        later.0.saturating_sub(self.0)
    }
}

/// How long a pending approval stays actionable: 30 minutes, absolute, from creation (seed 000 §3 rule 4).
pub const APPROVAL_TTL_MS: i64 = 30 * 60 * 1000;

/// A source of the current time. Production uses the system clock; tests move a [`ManualClock`].
pub trait Clock: Send + Sync + std::fmt::Debug {
    /// The current instant.
    fn now(&self) -> Timestamp;
}

/// A clock that only moves when told to. It reads no system time, so it belongs in the pure domain.
#[derive(Debug)]
pub struct ManualClock {
    now: AtomicI64,
}

impl ManualClock {
    /// A clock stopped at `start`.
    pub fn new(start: Timestamp) -> Self {
        Self {
            now: AtomicI64::new(start.0),
        }
    }

    /// Moves the clock forward (or back, for tests of skew) by `ms`.
    pub fn advance_ms(&self, ms: i64) {
        self.now.fetch_add(ms, Ordering::SeqCst);
    }

    /// Sets the clock to `at`.
    pub fn set(&self, at: Timestamp) {
        self.now.store(at.0, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Timestamp {
        Timestamp(self.now.load(Ordering::SeqCst))
    }
}

/// A source of fresh ids. Production uses UUID v7 (time-ordered, so ids sort by creation:
/// DESIGN decision 5) from the service; tests count with [`SequentialIds`]. Like the clock, it
/// is handed to the adapters that stamp rows, so none of them makes ids of its own.
pub trait IdSource: Send + Sync + std::fmt::Debug {
    /// A new id, never returned before by this source.
    fn new_id(&self) -> String;
}

/// Ids that only count, shaped like UUID v7 (`00000000-0000-7000-8000-00000000000n`), so they
/// sort by creation too. It reads no time and no randomness, so it belongs in the pure domain.
#[derive(Debug, Default)]
pub struct SequentialIds {
    next: std::sync::atomic::AtomicU64,
}

impl IdSource for SequentialIds {
    fn new_id(&self) -> String {
        let n = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        format!("00000000-0000-7000-8000-{n:012x}")
    }
}

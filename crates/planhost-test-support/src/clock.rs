//! The debug host's test clock, one for every end-to-end harness: `PLANHOST_TEST_CLOCK_FILE`
//! names a file holding a millisecond offset the host adds to the wall clock. A test moves time
//! forward by writing a larger offset (atomically: a rename), so "later" never waits on a sleep.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI64, Ordering};

/// The variable a debug `planhost` reads the offset file's path from (a release build never does).
pub const TEST_CLOCK_VAR: &str = "PLANHOST_TEST_CLOCK_FILE";

/// An offset file, 0 at first.
#[derive(Debug)]
pub struct TestClock {
    file: PathBuf,
    offset: AtomicI64,
}

impl TestClock {
    /// A clock whose offset file is `dir/clock-offset-ms`, at 0.
    pub fn new(dir: &Path) -> Self {
        let clock = Self {
            file: dir.join("clock-offset-ms"),
            offset: AtomicI64::new(0),
        };
        clock.set(0);
        clock
    }

    /// The offset file, for [`TEST_CLOCK_VAR`].
    pub fn file(&self) -> &Path {
        &self.file
    }

    /// Sets the offset to `ms`.
    #[allow(
        clippy::expect_used,
        reason = "a test harness: a failed write fails the test"
    )]
    pub fn set(&self, ms: i64) {
        self.offset.store(ms, Ordering::SeqCst);
        let next = self.file.with_extension("next");
        fs_err::write(&next, format!("{ms}\n")).expect("write the clock offset");
        fs_err::rename(&next, &self.file).expect("replace the clock offset");
    }

    /// Moves the host's time `ms` forward: whatever it stamps next is at least that much later
    /// than what it stamped before.
    pub fn advance(&self, ms: i64) {
        self.set(self.offset.load(Ordering::SeqCst) + ms);
    }
}

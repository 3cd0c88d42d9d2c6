//! Bounded waiting: something that should happen in milliseconds gets a generous bound before
//! the test fails. Never a measurement.

use std::time::{Duration, Instant};

/// The generous bound on every wait.
pub const BOUND: Duration = Duration::from_secs(10);

/// Calls `f` until it yields a value; panics naming `what` once `bound` has passed.
pub fn poll_until<T>(what: &str, bound: Duration, mut f: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + bound;
    let mut pause = Duration::from_millis(2);
    loop {
        if let Some(value) = f() {
            return value;
        }
        assert!(
            Instant::now() < deadline,
            "gave up after {bound:?} waiting for {what}"
        );
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(50));
    }
}

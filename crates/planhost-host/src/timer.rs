//! The expiry timer: expires pending approvals at their absolute deadline. Resolve enforces the
//! same deadline on its own, so a late timer can never let a late approval through.

use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use planhost_store::ApprovalRecord;

use crate::Host;

/// Longest sleep between checks: bounds the damage of a wall-clock jump.
const MAX_SLEEP: Duration = Duration::from_secs(30);
/// Pause after a failed check before trying again, so a broken disk is not spun on.
const RETRY_AFTER_ERROR: Duration = Duration::from_secs(1);

type OnExpired = Box<dyn Fn(Vec<ApprovalRecord>) + Send>;

#[derive(Default)]
struct Flags {
    stop: bool,
    poked: bool,
}

struct Shared {
    flags: Mutex<Flags>,
    wake: Condvar,
}

/// A background thread that expires approvals when their deadline passes. Dropping it stops it.
pub struct ExpiryTimer {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for ExpiryTimer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExpiryTimer").finish_non_exhaustive()
    }
}

impl ExpiryTimer {
    /// Starts the timer over `host`; `on_expired` receives every batch of expired approvals.
    pub fn start(host: Arc<Mutex<Host>>, on_expired: OnExpired) -> std::io::Result<Self> {
        let shared = Arc::new(Shared {
            flags: Mutex::new(Flags::default()),
            wake: Condvar::new(),
        });
        let worker = Arc::clone(&shared);
        let thread = std::thread::Builder::new()
            .name("planhost-expiry".into())
            .spawn(move || run(&host, &worker, &on_expired))?;
        Ok(Self {
            shared,
            thread: Some(thread),
        })
    }

    /// Re-checks now: call after a new approval, or after moving a test clock.
    pub fn poke(&self) {
        let mut flags = self
            .shared
            .flags
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        flags.poked = true;
        self.shared.wake.notify_all();
    }
}

impl Drop for ExpiryTimer {
    fn drop(&mut self) {
        {
            let mut flags = self
                .shared
                .flags
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            flags.stop = true;
            self.shared.wake.notify_all();
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn run(host: &Mutex<Host>, shared: &Shared, on_expired: &OnExpired) {
    loop {
        let sleep = match check(host) {
            Ok((expired, sleep)) => {
                if !expired.is_empty() {
                    on_expired(expired);
                }
                sleep
            }
            Err(error) => {
                tracing::error!(code = error.code(), %error, "expiry check failed");
                RETRY_AFTER_ERROR
            }
        };
        let mut flags = shared.flags.lock().unwrap_or_else(PoisonError::into_inner);
        if !flags.stop && !flags.poked {
            flags = shared
                .wake
                .wait_timeout(flags, sleep)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
        if flags.stop {
            return;
        }
        flags.poked = false;
    }
}

fn check(host: &Mutex<Host>) -> crate::Result<(Vec<ApprovalRecord>, Duration)> {
    let mut host = host.lock().unwrap_or_else(PoisonError::into_inner);
    let expired = host.store().expire_due()?;
    let next = host.store().next_deadline()?;
    let now = host.now();
    let sleep = match next {
        Some(deadline) => {
            let ms = u64::try_from(now.until(deadline)).unwrap_or(0);
            Duration::from_millis(ms).min(MAX_SLEEP)
        }
        None => MAX_SLEEP,
    };
    Ok((expired, sleep))
}

//! The actor: one thread owns the [`Engine`] (and so the only SQLite writer). Callers send it
//! closures; it runs them one at a time, publishes the events they committed, and doubles as the
//! expiry timer, waking at the earliest pending deadline.

use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::Duration;

use planhost_core::Event;

use crate::engine::Engine;

/// Longest wait between deadline checks: bounds the damage of a wall-clock jump.
const MAX_SLEEP: Duration = Duration::from_secs(30);
/// Pause after a failed expiry check, so a broken disk is not spun on.
const RETRY_AFTER_ERROR: Duration = Duration::from_secs(1);

/// A reply, delivered only after the job's events were published, so any cache invalidated by
/// those events is invalid before the caller can act on the reply.
type Reply = Box<dyn FnOnce() + Send>;
type Job = Box<dyn FnOnce(&mut Engine) -> Reply + Send>;

enum Msg {
    Job(Job),
    Poke,
    Stop,
}

/// The actor thread stopped (shut down or failed); the call did not run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct HostGone;

/// A cloneable handle to the actor.
#[derive(Clone)]
pub(crate) struct HostHandle {
    tx: mpsc::Sender<Msg>,
}

impl std::fmt::Debug for HostHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("HostHandle")
    }
}

/// The running actor thread.
#[derive(Debug)]
pub(crate) struct HostThread {
    thread: JoinHandle<()>,
}

impl HostThread {
    /// Waits for the actor to finish its queued work and stop.
    pub(crate) fn join(self) {
        let _ = self.thread.join();
    }
}

/// Starts the actor over `host`. `on_events` receives, after each job or expiry, the events that
/// committed, in commit order — before the job's caller receives its reply.
pub(crate) fn spawn_host(
    host: Engine,
    on_events: impl FnMut(Vec<Event>) + Send + 'static,
) -> std::io::Result<(HostHandle, HostThread)> {
    let (tx, rx) = mpsc::channel();
    let thread = std::thread::Builder::new()
        .name("planhost-engine".into())
        .spawn(move || run(host, &rx, on_events))?;
    Ok((HostHandle { tx }, HostThread { thread }))
}

impl HostHandle {
    /// Runs `f` on the host thread and returns its result.
    pub(crate) async fn call<R: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Engine) -> R + Send + 'static,
    ) -> Result<R, HostGone> {
        let (reply, answer) = tokio::sync::oneshot::channel();
        let job: Job = Box::new(move |host| {
            let value = f(host);
            Box::new(move || {
                let _ = reply.send(value);
            })
        });
        self.tx.send(Msg::Job(job)).map_err(|_| HostGone)?;
        answer.await.map_err(|_| HostGone)
    }

    /// Makes the actor re-check deadlines now (after moving a test clock).
    pub(crate) fn poke(&self) {
        let _ = self.tx.send(Msg::Poke);
    }

    /// Makes the actor finish the jobs already queued and stop; later calls are `HostGone`.
    pub(crate) fn stop(&self) {
        let _ = self.tx.send(Msg::Stop);
    }
}

fn run(mut host: Engine, rx: &mpsc::Receiver<Msg>, mut on_events: impl FnMut(Vec<Event>)) {
    let mut sleep = Duration::ZERO;
    loop {
        let reply = match rx.recv_timeout(sleep) {
            Ok(Msg::Job(job)) => Some(job(&mut host)),
            Ok(Msg::Poke) | Err(RecvTimeoutError::Timeout) => None,
            Ok(Msg::Stop) | Err(RecvTimeoutError::Disconnected) => return,
        };
        sleep = expire_and_measure(&mut host);
        let events = host.store().take_events();
        if !events.is_empty() {
            on_events(events);
        }
        if let Some(reply) = reply {
            reply();
        }
    }
}

/// Expires what is due and returns how long to sleep until the next deadline.
fn expire_and_measure(host: &mut Engine) -> Duration {
    let result = (|| {
        let now = host.now();
        let mut next = host.store().next_deadline()?;
        if next.is_some_and(|deadline| deadline <= now) {
            host.store().expire_due()?;
            next = host.store().next_deadline()?;
        }
        Ok::<_, crate::ServiceError>(match next {
            Some(deadline) => {
                let ms = u64::try_from(now.until(deadline)).unwrap_or(0);
                Duration::from_millis(ms).min(MAX_SLEEP)
            }
            None => MAX_SLEEP,
        })
    })();
    match result {
        Ok(sleep) => sleep,
        Err(error) => {
            tracing::error!(code = %error.code(), %error, "expiry check failed");
            RETRY_AFTER_ERROR
        }
    }
}

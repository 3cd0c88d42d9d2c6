//! The host actor: one thread owns the [`Host`] (and so the only SQLite writer). Callers send it
//! closures; it runs them one at a time, publishes the events they committed, and doubles as the
//! expiry timer, waking at the earliest pending deadline.

use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::Duration;

use planhost_core::Event;

use crate::Host;

/// Longest wait between deadline checks: bounds the damage of a wall-clock jump.
const MAX_SLEEP: Duration = Duration::from_secs(30);
/// Pause after a failed expiry check, so a broken disk is not spun on.
const RETRY_AFTER_ERROR: Duration = Duration::from_secs(1);

/// A reply, delivered only after the job's events were published, so any cache invalidated by
/// those events is invalid before the caller can act on the reply.
type Reply = Box<dyn FnOnce() + Send>;
type Job = Box<dyn FnOnce(&mut Host) -> Reply + Send>;

enum Msg {
    Job(Job),
    Poke,
}

/// The actor thread stopped (its host failed or shut down); the call did not run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the host is not running")]
pub struct HostGone;

/// A cloneable handle to the host actor.
#[derive(Debug, Clone)]
pub struct HostHandle {
    tx: mpsc::Sender<Msg>,
}

/// The running actor thread; dropping every [`HostHandle`] ends it, and `join` waits for that.
#[derive(Debug)]
pub struct HostThread {
    thread: JoinHandle<()>,
}

impl HostThread {
    /// Waits for the actor to finish its queued work and stop.
    pub fn join(self) {
        let _ = self.thread.join();
    }
}

/// Starts the actor over `host`. `on_events` receives, after each job or expiry, the events that
/// committed, in commit order — before the job's caller receives its reply.
pub fn spawn_host(
    host: Host,
    on_events: impl FnMut(Vec<Event>) + Send + 'static,
) -> std::io::Result<(HostHandle, HostThread)> {
    let (tx, rx) = mpsc::channel();
    let thread = std::thread::Builder::new()
        .name("planhost-host".into())
        .spawn(move || run(host, &rx, on_events))?;
    Ok((HostHandle { tx }, HostThread { thread }))
}

impl HostHandle {
    /// Runs `f` on the host thread and returns its result.
    pub async fn call<R: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Host) -> R + Send + 'static,
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

    /// [`HostHandle::call`] for threads outside an async runtime.
    pub fn call_blocking<R: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Host) -> R + Send + 'static,
    ) -> Result<R, HostGone> {
        let (reply, answer) = mpsc::sync_channel(1);
        let job: Job = Box::new(move |host| {
            let value = f(host);
            Box::new(move || {
                let _ = reply.send(value);
            })
        });
        self.tx.send(Msg::Job(job)).map_err(|_| HostGone)?;
        answer.recv().map_err(|_| HostGone)
    }

    /// Makes the actor re-check deadlines now (after moving a test clock).
    pub fn poke(&self) {
        let _ = self.tx.send(Msg::Poke);
    }
}

fn run(mut host: Host, rx: &mpsc::Receiver<Msg>, mut on_events: impl FnMut(Vec<Event>)) {
    let mut sleep = Duration::ZERO;
    loop {
        let reply = match rx.recv_timeout(sleep) {
            Ok(Msg::Job(job)) => Some(job(&mut host)),
            Ok(Msg::Poke) | Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => return,
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
fn expire_and_measure(host: &mut Host) -> Duration {
    let result = (|| {
        let now = host.now();
        let mut next = host.store().next_deadline()?;
        if next.is_some_and(|deadline| deadline <= now) {
            host.store().expire_due()?;
            next = host.store().next_deadline()?;
        }
        Ok::<_, crate::HostError>(match next {
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
            tracing::error!(code = error.code(), %error, "expiry check failed");
            RETRY_AFTER_ERROR
        }
    }
}

//! The one thread that starts this process's children: every run's shell and the watchdog.
//!
//! Each child asks the kernel for a signal when its parent dies (`PR_SET_PDEATHSIG`, set before
//! its exec): a run's shell gets SIGKILL, the watchdog a signal it waits for. The kernel sends it
//! when the *thread* that forked the child exits, in that thread's own exit, which comes before
//! the process can be reaped and, when the thread is not the last one to go, before the address
//! space is torn down. That is the earliest moment anything learns of a SIGKILLed host. But a
//! thread of a runtime may exit while the process lives on (tokio's blocking pool retires a
//! thread after 10 s idle, `block_in_place` hands a worker's core to a new thread, a library
//! user may run `run()` on any thread), and that would kill a shell mid-command. So every fork
//! happens on this thread, which is started once and never returns: its exit is the process's.

use std::sync::mpsc;
use std::sync::{Mutex, PoisonError};

type Job = Box<dyn FnOnce() + Send>;

/// The spawner's queue; `None` until the thread is started (again after a failed start).
static QUEUE: Mutex<Option<mpsc::Sender<Job>>> = Mutex::new(None);

/// Runs `job` on the spawner thread and returns what it returned. Keep `job` short (a fork, or
/// std's fork and exec): spawns of the whole process queue behind it. A panic in `job` is
/// resumed here; the spawner thread lives on.
pub(crate) fn on_spawner<T: Send + 'static>(
    job: impl FnOnce() -> T + Send + 'static,
) -> std::io::Result<T> {
    let (done_tx, done_rx) = mpsc::sync_channel(1);
    let job: Job = Box::new(move || {
        let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
        let _ = done_tx.send(out);
    });
    queue()?
        .send(job)
        .map_err(|_| std::io::Error::other("the spawner thread is gone"))?;
    match done_rx.recv() {
        Ok(Ok(out)) => Ok(out),
        Ok(Err(panic)) => std::panic::resume_unwind(panic),
        Err(_) => Err(std::io::Error::other("the spawner thread dropped a job")),
    }
}

fn queue() -> std::io::Result<mpsc::Sender<Job>> {
    let mut queue = QUEUE.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(tx) = &*queue {
        return Ok(tx.clone());
    }
    let (tx, rx) = mpsc::channel::<Job>();
    std::thread::Builder::new()
        .name("planhost-spawn".into())
        .spawn(move || {
            // The sender is kept in `QUEUE` for the process's life, so `recv` never fails; if
            // it ever did, this thread must still not exit (its children would be signalled).
            while let Ok(job) = rx.recv() {
                job();
            }
            loop {
                std::thread::park();
            }
        })?;
    *queue = Some(tx.clone());
    Ok(tx)
}

/// This process's pid, which a child compares with `getppid()` right after `PR_SET_PDEATHSIG`:
/// when they differ, the parent died before the request was made, and no signal will come.
pub(crate) fn parent_pid() -> libc::pid_t {
    rustix::process::getpid().as_raw_nonzero().get()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn running(pid: i32) -> bool {
        super::super::procfs::read_stat(pid).is_some_and(|st| !st.is_dead())
    }

    /// A run asked for by a thread that then exits (a retired blocking-pool thread, a
    /// `block_in_place` hand-off) keeps running: its shell's death signal is tied to the
    /// spawner thread, not to the thread that asked. Both spawn paths.
    #[test]
    fn a_shell_outlives_the_thread_that_asked_for_it() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let dir = tempfile::tempdir().unwrap();
        for containment in [crate::Containment::Auto, crate::Containment::ProcfsOnly] {
            let shell = crate::effective_shell(crate::Platform::Linux, &crate::probe(), None)
                .expect("bash on this machine");
            let mut spec = crate::CommandSpec::new(shell, "exec sleep 30", dir.path());
            spec.env = vec![("PATH".into(), std::env::var("PATH").unwrap_or_default())];
            spec.containment = containment;
            let handle = runtime.handle().clone();
            let asker = std::thread::spawn(move || {
                let _entered = handle.enter();
                crate::sys::spawn(&spec)
            });
            let crate::sys::Spawned { mut child, tree } = asker.join().unwrap().unwrap();
            let pid = i32::try_from(child.id().unwrap()).unwrap();
            // The asking thread is gone; a death signal tied to it would have fired by now.
            std::thread::sleep(std::time::Duration::from_millis(200));
            assert!(
                running(pid),
                "{containment:?}: the shell died with the thread"
            );
            runtime.block_on(async {
                tree.terminate().await;
                let _ = child.wait().await;
            });
            assert!(!running(pid));
        }
    }

    #[test]
    fn jobs_run_on_one_long_lived_thread_and_a_panic_comes_back_to_the_caller() {
        let name = || std::thread::current().name().map(str::to_owned);
        let first = on_spawner(name).unwrap();
        assert_eq!(first.as_deref(), Some("planhost-spawn"));
        let id = on_spawner(|| std::thread::current().id()).unwrap();
        let panicked = std::panic::catch_unwind(|| on_spawner(|| panic!("in a job")));
        assert!(panicked.is_err());
        // The same thread still serves.
        assert_eq!(on_spawner(|| std::thread::current().id()).unwrap(), id);
        // From other threads too, at once.
        let ids: Vec<_> = (0..4)
            .map(|_| std::thread::spawn(|| on_spawner(|| std::thread::current().id()).unwrap()))
            .collect::<Vec<_>>()
            .into_iter()
            .map(|h| h.join().unwrap())
            .collect();
        assert!(ids.iter().all(|i| *i == id));
    }
}

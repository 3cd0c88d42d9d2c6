//! Non-Linux unix (macOS): the shell's own process group is signalled. There is no subreaper or
//! cgroup there, so descendants that leave the group are not found. Not built or tested in CI.

use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal};

/// How long SIGTERM'd processes get before SIGKILL.
pub const TERM_GRACE: Duration = Duration::from_millis(1_000);

#[derive(Debug)]
pub(crate) struct Tree {
    pgid: i32,
}

impl Tree {
    pub(crate) fn new(root_pid: i32) -> Self {
        Self { pgid: root_pid }
    }

    pub(crate) fn root_reaped(&mut self) {}

    pub(crate) fn release(self) {}

    fn signal(&self, sig: Signal) -> bool {
        Pid::from_raw(self.pgid)
            .is_some_and(|p| rustix::process::kill_process_group(p, sig).is_ok())
    }

    pub(crate) async fn terminate(self) {
        if !self.signal(Signal::TERM) {
            return;
        }
        let _ = self.signal(Signal::CONT);
        let until = Instant::now() + TERM_GRACE;
        while Instant::now() < until {
            tokio::time::sleep(Duration::from_millis(10)).await;
            if !self.signal(Signal::CONT) {
                return;
            }
        }
        let _ = self.signal(Signal::KILL);
    }
}

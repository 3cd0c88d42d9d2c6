//! Spawning straight into the run's cgroup: `clone3(CLONE_INTO_CGROUP | CLONE_PIDFD)`.
//!
//! Moving a process into a cgroup after it exists (writing `cgroup.procs`) takes the kernel's
//! cgroup thread-group lock for writing, which waits for an RCU grace period: 5–14 ms on the
//! machine in docs/benchmarks.md after a moment of idle, against ~1 ms for the whole spawn when
//! the child is born in its cgroup. Born there, the shell is also a member from its first
//! instruction: there is no moment in which it, or a child it forks, is outside.
//!
//! The child runs only async-signal-safe system calls prepared by the parent (no allocation, no
//! locks): `prctl(PR_SET_PDEATHSIG)`, `setsid`, signal reset, `dup2`, `chdir`, `execve`. Exec
//! failure comes back through a close-on-exec pipe, as std does it. When the kernel or a seccomp
//! filter refuses `clone3`, the caller falls back to std's spawn and a `cgroup.procs` write.

use std::ffi::{CString, OsStr};
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

use rustix::pipe::{PipeFlags, pipe_with};
use rustix::process::{WaitId, WaitIdOptions};
use tokio::io::Interest;
use tokio::io::unix::AsyncFd;

const CLONE_PIDFD: u64 = 0x1000;
const CLONE_INTO_CGROUP: u64 = 0x2_0000_0000;

/// `struct clone_args` up to `cgroup` (CLONE_ARGS_SIZE_VER2, Linux 5.7).
#[repr(C, align(8))]
#[derive(Default)]
struct CloneArgs {
    flags: u64,
    pidfd: u64,
    child_tid: u64,
    parent_tid: u64,
    exit_signal: u64,
    stack: u64,
    stack_size: u64,
    tls: u64,
    set_tid: u64,
    set_tid_size: u64,
    cgroup: u64,
}

/// Set once `clone3` was refused as unsupported: every later spawn goes the std way.
static UNSUPPORTED: AtomicBool = AtomicBool::new(false);

/// Whether shells are still born in their cgroups (no `clone3` refusal was seen).
pub(crate) fn in_use() -> bool {
    !UNSUPPORTED.load(Ordering::SeqCst)
}

/// What the child needs, all allocated before the clone.
pub(crate) struct Plan {
    program: CString,
    argv: Vec<CString>,
    envp: Vec<CString>,
    cwd: CString,
}

impl Plan {
    /// `None` when a string holds a NUL (the caller's std path reports that) or the program is not
    /// an absolute path (std's `PATH` search is not reimplemented here).
    pub(crate) fn new<'a>(
        program: &Path,
        args: impl IntoIterator<Item = &'a OsStr>,
        env: impl IntoIterator<Item = (&'a str, &'a str)>,
        cwd: &Path,
    ) -> Option<Self> {
        if !program.is_absolute() {
            return None;
        }
        let program = CString::new(program.as_os_str().as_bytes()).ok()?;
        let mut argv = vec![program.clone()];
        for a in args {
            argv.push(CString::new(a.as_bytes()).ok()?);
        }
        // As std does: a later entry for a name replaces an earlier one (the run marker last).
        let mut entries: Vec<(&str, &str)> = Vec::new();
        for (k, v) in env {
            entries.retain(|(name, _)| *name != k);
            entries.push((k, v));
        }
        let envp = entries
            .into_iter()
            .map(|(k, v)| CString::new(format!("{k}={v}")).ok())
            .collect::<Option<Vec<_>>>()?;
        Some(Self {
            program,
            argv,
            envp,
            cwd: CString::new(cwd.as_os_str().as_bytes()).ok()?,
        })
    }
}

/// A shell started by [`spawn`]: its pidfd and the parent's ends of its output pipes.
#[derive(Debug)]
pub(crate) struct Child {
    pid: i32,
    pidfd: Option<AsyncFd<OwnedFd>>,
    pub(crate) stdout: Option<OwnedFd>,
    pub(crate) stderr: Option<OwnedFd>,
    status: Option<std::process::ExitStatus>,
    /// See [`Child::alone`].
    alone: bool,
}

/// Why [`spawn`] did not start the shell.
#[derive(Debug)]
pub(crate) enum Refused {
    /// `clone3` or `CLONE_INTO_CGROUP` is not available here: spawn the std way.
    Unsupported,
    /// This run's cgroup would not take the shell: spawn this one the std way.
    NotHere,
    /// The spawn itself failed (resources, or exec of the program).
    Failed(io::Error),
}

/// Starts `plan` in its own session, inside the cgroup whose directory is `cgroup`, with stdin at
/// `/dev/null` and stdout/stderr on fresh pipes. The clone itself runs on the spawner thread
/// (see `tree::spawner`), so the shell's `PR_SET_PDEATHSIG` (SIGKILL) fires only when this
/// process dies; waiting for its exec happens here.
pub(crate) fn spawn(plan: Plan, cgroup: &OwnedFd) -> Result<Child, Refused> {
    if UNSUPPORTED.load(Ordering::SeqCst) {
        return Err(Refused::Unsupported);
    }
    let failed = |e: rustix::io::Errno| Refused::Failed(e.into());
    let null = dev_null().map_err(failed)?;
    let (out_r, out_w) = pipe_with(PipeFlags::CLOEXEC).map_err(failed)?;
    let (err_r, err_w) = pipe_with(PipeFlags::CLOEXEC).map_err(failed)?;
    let (report_r, report_w) = pipe_with(PipeFlags::CLOEXEC).map_err(failed)?;

    let fds = ChildFds {
        null: null.as_raw_fd(),
        out: out_w.as_raw_fd(),
        err: err_w.as_raw_fd(),
        report: report_w.as_raw_fd(),
        parent: crate::tree::spawner::parent_pid(),
    };
    let cgroup_fd = cgroup.as_raw_fd();
    // The descriptors stay open here until the job has returned: this call waits for it.
    let cloned = crate::tree::spawner::on_spawner(move || clone_into(&plan, cgroup_fd, &fds))
        .map_err(Refused::Failed)?;
    let (ret, pidfd) = cloned.map_err(refusal)?;
    let pid = i32::try_from(ret).unwrap_or(i32::MAX);
    // SAFETY: CLONE_PIDFD stored a fresh pidfd (close-on-exec) that nothing else owns.
    let pidfd = unsafe { OwnedFd::from_raw_fd(pidfd) };
    drop((out_w, err_w, report_w));

    // EOF: exec succeeded (the pipe was close-on-exec). Four bytes: the child's errno.
    let mut errno = [0u8; 4];
    let mut got = 0;
    while got < errno.len() {
        match rustix::io::read(&report_r, &mut errno[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(rustix::io::Errno::INTR) => {}
            Err(_) => break,
        }
    }
    if got == errno.len() {
        // The child exits at once; reap it so no zombie is left.
        let _ = rustix::process::waitid(WaitId::PidFd(pidfd.as_fd()), WaitIdOptions::EXITED);
        return Err(Refused::Failed(io::Error::from_raw_os_error(
            i32::from_ne_bytes(errno),
        )));
    }
    // SAFETY: the pidfd is owned by the AsyncFd from here on and closed only when it is dropped.
    let pidfd = match unsafe { AsyncFd::register_with_interest(pidfd, Interest::READABLE) } {
        Ok(fd) => fd,
        Err(e) => {
            let (pidfd, e) = e.into_parts();
            let _ = rustix::process::pidfd_send_signal(&pidfd, rustix::process::Signal::KILL);
            let _ = rustix::process::waitid(WaitId::PidFd(pidfd.as_fd()), WaitIdOptions::EXITED);
            return Err(Refused::Failed(e));
        }
    };
    Ok(Child {
        pid,
        pidfd: Some(pidfd),
        stdout: Some(out_r),
        stderr: Some(err_r),
        status: None,
        alone: false,
    })
}

/// `/dev/null`, opened (close-on-exec) once for the process's life: every shell's stdin is a
/// `dup2` of it.
fn dev_null() -> rustix::io::Result<BorrowedFd<'static>> {
    static NULL: OnceLock<OwnedFd> = OnceLock::new();
    if let Some(fd) = NULL.get() {
        return Ok(fd.as_fd());
    }
    let fd = rustix::fs::open(
        "/dev/null",
        rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::CLOEXEC,
        rustix::fs::Mode::empty(),
    )?;
    // A thread that got here first wins; this descriptor is then closed.
    Ok(NULL.get_or_init(|| fd).as_fd())
}

/// What a `clone3` error means for this spawn.
fn refusal(e: io::Error) -> Refused {
    match e.raw_os_error() {
        // No clone3 (Linux < 5.3, or a seccomp filter), no CLONE_INTO_CGROUP (< 5.7), or a
        // filter that refuses it: the std spawn still works.
        Some(libc::ENOSYS | libc::EINVAL | libc::E2BIG | libc::EPERM) => {
            tracing::debug!(error = %e, "clone3 into a cgroup refused; using fork");
            UNSUPPORTED.store(true, Ordering::SeqCst);
            Refused::Unsupported
        }
        // This cgroup would not take a process (no write access to the common ancestor, a
        // threaded or invalid domain, gone): the std spawn still runs the command, with the
        // procfs walk in charge, as when its `cgroup.procs` write fails.
        Some(
            libc::EACCES
            | libc::EBUSY
            | libc::EOPNOTSUPP
            | libc::ENODEV
            | libc::ENOENT
            | libc::EBADF,
        ) => {
            tracing::debug!(error = %e, "the run cgroup refused the shell; using fork");
            Refused::NotHere
        }
        _ => Refused::Failed(e),
    }
}

#[derive(Clone, Copy)]
struct ChildFds {
    null: RawFd,
    out: RawFd,
    err: RawFd,
    report: RawFd,
    /// The host's pid, for the child's check after `PR_SET_PDEATHSIG`.
    parent: libc::pid_t,
}

/// The clone itself, on the spawner thread: `clone3` into the cgroup whose directory is open as
/// `cgroup`; the child becomes `plan` (see [`exec_child`]). Returns the child's pid and its
/// pidfd (owned by the caller from here on), or the `clone3` error.
fn clone_into(plan: &Plan, cgroup: RawFd, fds: &ChildFds) -> io::Result<(i64, RawFd)> {
    let argv: Vec<*const libc::c_char> = plan
        .argv
        .iter()
        .map(|a| a.as_ptr())
        .chain([std::ptr::null()])
        .collect();
    let envp: Vec<*const libc::c_char> = plan
        .envp
        .iter()
        .map(|e| e.as_ptr())
        .chain([std::ptr::null()])
        .collect();
    let mut pidfd: RawFd = -1;
    let mut args = CloneArgs {
        flags: CLONE_PIDFD | CLONE_INTO_CGROUP,
        pidfd: std::ptr::from_mut(&mut pidfd) as u64,
        exit_signal: libc::SIGCHLD as u64,
        cgroup: cgroup as u64,
        ..CloneArgs::default()
    };
    // SAFETY: clone3 without CLONE_VM or a stack gives the child a copy of this address space,
    // like fork. The child runs only `exec_child`, which makes async-signal-safe calls on data
    // prepared above and never returns.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_clone3,
            std::ptr::from_mut(&mut args),
            size_of::<CloneArgs>(),
        )
    };
    if ret == 0 {
        // SAFETY: in the child, see above.
        unsafe { exec_child(plan, &argv, &envp, fds) }
    }
    if ret < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok((ret, pidfd))
}

/// The child side: never returns.
///
/// # Safety
/// Only in the child of a fork-like clone, with every pointer prepared by the parent.
unsafe fn exec_child(
    plan: &Plan,
    argv: &[*const libc::c_char],
    envp: &[*const libc::c_char],
    fds: &ChildFds,
) -> ! {
    // SAFETY: every call is async-signal-safe and uses memory the parent prepared; failure
    // reports errno through the close-on-exec pipe and exits without running destructors.
    unsafe {
        let step = |r: libc::c_int| {
            if r < 0 {
                let errno = io::Error::last_os_error().raw_os_error().unwrap_or(0);
                let bytes = errno.to_ne_bytes();
                libc::write(fds.report, bytes.as_ptr().cast(), bytes.len());
                libc::_exit(127);
            }
        };
        // SIGKILL when the host dies (the spawner thread's exit is the process's). Best effort:
        // the watchdog still ends the tree where this is refused. If the host died before the
        // request, no signal will come: the parent is another process by now.
        libc::prctl(
            libc::PR_SET_PDEATHSIG,
            libc::SIGKILL as libc::c_ulong,
            0,
            0,
            0,
        );
        if libc::getppid() != fds.parent {
            libc::_exit(127);
        }
        step(libc::setsid());
        // A clean signal state: std ignores SIGPIPE, and the mask is inherited.
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&raw mut set);
        step(libc::sigprocmask(
            libc::SIG_SETMASK,
            &raw const set,
            std::ptr::null_mut(),
        ));
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        for (from, to) in [(fds.null, 0), (fds.out, 1), (fds.err, 2)] {
            if from == to {
                // dup2 onto itself keeps close-on-exec; clear it instead.
                step(libc::fcntl(to, libc::F_SETFD, 0));
            } else {
                step(libc::dup2(from, to));
            }
        }
        step(libc::chdir(plan.cwd.as_ptr()));
        libc::execve(plan.program.as_ptr(), argv.as_ptr(), envp.as_ptr());
        step(-1);
        libc::_exit(127)
    }
}

impl Child {
    pub(crate) fn id(&self) -> i32 {
        self.pid
    }

    /// A second descriptor for the shell's pidfd (for the tree, which signals through it), while
    /// the shell is not reaped yet.
    pub(crate) fn pidfd(&self) -> Option<OwnedFd> {
        let fd = self.pidfd.as_ref()?.get_ref().try_clone();
        fd.map_err(|e| tracing::debug!(error = %e, "cannot duplicate the shell's pidfd"))
            .ok()
    }

    /// Whether the shell, now reaped, was provably the only process of its run: when it had
    /// exited but was not reaped yet (its pid still taken, so the counter cannot have come back
    /// to it), the last pid handed out in this pid namespace was still its own. No process or
    /// thread was created here after it, so it started none. Every process of the run descends
    /// from the shell, and a nested pid namespace takes a pid here too.
    pub(crate) fn alone(&self) -> bool {
        self.alone
    }

    /// Waits for the shell to exit and reaps it. Cancel-safe; after the first success it returns
    /// the same status again.
    pub(crate) async fn wait(&mut self) -> io::Result<std::process::ExitStatus> {
        if let Some(status) = self.status {
            return Ok(status);
        }
        let Some(pidfd) = &self.pidfd else {
            return Err(io::Error::other("the shell was not waited for"));
        };
        loop {
            let mut ready = pidfd.readable().await?;
            let fd = pidfd.get_ref().as_fd();
            // Exited (a zombie now, its pid still held)? Then read the pid counter before the
            // reap below frees that pid.
            let peek = WaitIdOptions::EXITED | WaitIdOptions::NOHANG | WaitIdOptions::NOWAIT;
            let alone = match rustix::process::waitid(WaitId::PidFd(fd), peek) {
                Ok(Some(_)) => crate::tree::last_pid() == Some(self.pid),
                Ok(None) => {
                    ready.clear_ready();
                    continue;
                }
                Err(rustix::io::Errno::INTR) => continue,
                Err(e) => return Err(e.into()),
            };
            let opts = WaitIdOptions::EXITED | WaitIdOptions::NOHANG;
            match rustix::process::waitid(WaitId::PidFd(fd), opts) {
                Ok(Some(st)) => {
                    let raw = match (st.exit_status(), st.terminating_signal()) {
                        (Some(code), _) => (code & 0xff) << 8,
                        (None, Some(sig)) => sig & 0x7f,
                        (None, None) => 0,
                    };
                    let status = std::process::ExitStatus::from_raw(raw);
                    self.status = Some(status);
                    self.alone = alone;
                    self.pidfd = None;
                    return Ok(status);
                }
                Ok(None) => ready.clear_ready(),
                Err(rustix::io::Errno::INTR) => {}
                Err(e) => return Err(e.into()),
            }
        }
    }
}

impl Drop for Child {
    /// Dropped before it was reaped (the run future was dropped): kill it and reap it off-thread,
    /// as tokio's `kill_on_drop` does, so no zombie is left.
    fn drop(&mut self) {
        let Some(pidfd) = self.pidfd.take() else {
            return;
        };
        let pidfd = pidfd.into_inner();
        let _ = rustix::process::pidfd_send_signal(&pidfd, rustix::process::Signal::KILL);
        let reaper = std::thread::Builder::new()
            .name("planhost-reap".into())
            .spawn(move || {
                let _ =
                    rustix::process::waitid(WaitId::PidFd(pidfd.as_fd()), WaitIdOptions::EXITED);
            });
        if let Err(e) = reaper {
            tracing::warn!(error = %e, "cannot start a reaper thread; a zombie may remain");
        }
    }
}

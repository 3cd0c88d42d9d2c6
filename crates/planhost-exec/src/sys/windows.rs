//! Spawning on Windows: a job object with kill-on-close holds the whole tree.
//!
//! Not built or tested here (the CI host is Linux). Kept small on purpose.

use std::process::Stdio;

use windows_sys::Win32::Foundation::{CloseHandle, HANDLE};
use windows_sys::Win32::System::JobObjects::{
    AssignProcessToJobObject, CreateJobObjectW, JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
    JOBOBJECT_EXTENDED_LIMIT_INFORMATION, JobObjectExtendedLimitInformation,
    SetInformationJobObject, TerminateJobObject,
};

use crate::args::{Arg, shell_args};
use crate::error::{ExecError, Result};
use crate::spec::CommandSpec;

/// Exit code given to processes killed through the job (mirrors 128 + SIGKILL).
const KILLED_EXIT_CODE: u32 = 137;
/// CREATE_NEW_PROCESS_GROUP | CREATE_NO_WINDOW.
const CREATION_FLAGS: u32 = 0x0000_0200 | 0x0800_0000;

#[derive(Debug)]
pub(crate) struct Spawned {
    pub(crate) child: tokio::process::Child,
    pub(crate) tree: Tree,
}

/// The job object; closing it kills every process still in it.
#[derive(Debug)]
pub(crate) struct Tree {
    job: HANDLE,
    keep: bool,
}

// SAFETY: a job HANDLE is a kernel object reference usable from any thread.
unsafe impl Send for Tree {}

impl Tree {
    pub(crate) fn root_reaped(&mut self) {}

    pub(crate) fn release(mut self) {
        self.keep = true;
    }

    pub(crate) async fn terminate(self) {
        // SAFETY: `job` is a valid job handle owned by self until Drop.
        unsafe { TerminateJobObject(self.job, KILLED_EXIT_CODE) };
    }
}

impl Drop for Tree {
    fn drop(&mut self) {
        if self.keep {
            // Without kill-on-close the processes outlive the handle; clear the limit first.
            // SAFETY: all-zero is a valid "no limits" JOBOBJECT_EXTENDED_LIMIT_INFORMATION.
            let info: JOBOBJECT_EXTENDED_LIMIT_INFORMATION = unsafe { std::mem::zeroed() };
            // SAFETY: `info` is a valid, correctly sized structure for this information class.
            unsafe {
                SetInformationJobObject(
                    self.job,
                    JobObjectExtendedLimitInformation,
                    std::ptr::from_ref(&info).cast(),
                    size_of::<JOBOBJECT_EXTENDED_LIMIT_INFORMATION>() as u32,
                )
            };
        }
        // SAFETY: `job` is owned by self and closed exactly once here.
        unsafe { CloseHandle(self.job) };
    }
}

fn new_job() -> std::io::Result<HANDLE> {
    // SAFETY: null attributes and name create an anonymous job owned by this process.
    let job = unsafe { CreateJobObjectW(std::ptr::null(), std::ptr::null()) };
    if job.is_null() {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: an all-zero JOBOBJECT_EXTENDED_LIMIT_INFORMATION is a valid "no limits" value.
    let mut info: JOBOBJECT_EXTENDED_LIMIT_INFORMATION = unsafe { std::mem::zeroed() };
    info.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
    // SAFETY: `info` outlives the call and the size matches the information class.
    let ok = unsafe {
        SetInformationJobObject(
            job,
            JobObjectExtendedLimitInformation,
            std::ptr::from_ref(&info).cast(),
            size_of::<JOBOBJECT_EXTENDED_LIMIT_INFORMATION>() as u32,
        )
    };
    if ok == 0 {
        let e = std::io::Error::last_os_error();
        // SAFETY: `job` was created above and is not used again.
        unsafe { CloseHandle(job) };
        return Err(e);
    }
    Ok(job)
}

pub(crate) fn spawn(spec: &CommandSpec) -> Result<Spawned> {
    let failed = |source| ExecError::SpawnFailed {
        program: spec.shell.executable.clone(),
        source,
    };
    let job = new_job().map_err(failed)?;
    let tree = Tree { job, keep: false };
    let mut cmd = tokio::process::Command::new(&spec.shell.executable);
    for arg in shell_args(spec.shell.dialect, &spec.command) {
        match arg {
            Arg::Plain(a) => cmd.arg(a),
            Arg::Raw(a) => cmd.raw_arg(a),
        };
    }
    cmd.env_clear()
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .current_dir(&spec.cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .creation_flags(CREATION_FLAGS)
        .kill_on_drop(true);
    let child = cmd.spawn().map_err(failed)?;
    // Known gap: a grandchild started before this assignment is outside the job.
    let Some(handle) = child.raw_handle() else {
        return Err(failed(std::io::Error::other(
            "spawned process has no handle",
        )));
    };
    // SAFETY: both handles are valid: the job above and the live child's process handle.
    if unsafe { AssignProcessToJobObject(tree.job, handle as HANDLE) } == 0 {
        return Err(failed(std::io::Error::last_os_error()));
    }
    Ok(Spawned { child, tree })
}

//! Reading `/proc`: the parent links, states and start times the tree walk needs.

use fs_err as fs;

/// The fields of `/proc/<pid>/stat` the tree walk uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ProcStat {
    pub(crate) pid: i32,
    pub(crate) state: u8,
    pub(crate) ppid: i32,
    pub(crate) pgrp: i32,
    pub(crate) session: i32,
    /// Start time in clock ticks since boot: with the pid, it names one process, not a reused pid.
    pub(crate) start: u64,
    /// The kernel's `PF_*` flags.
    pub(crate) flags: u32,
    /// The controlling terminal's device number; 0 when it has none.
    pub(crate) tty: i64,
}

/// `PF_EXITING`: set first thing in `do_exit`, before the memory (so the environment) and the
/// cgroup go; it never clears.
const PF_EXITING: u32 = 0x0000_0004;

impl ProcStat {
    /// Dead processes (zombies) can no longer run, fork or write.
    pub(crate) fn is_dead(&self) -> bool {
        matches!(self.state, b'Z' | b'X' | b'x')
    }

    /// Dead or on its way: its environment and cgroup no longer say what it was.
    pub(crate) fn is_exiting(&self) -> bool {
        self.is_dead() || self.flags & PF_EXITING != 0
    }
}

/// Parses one `/proc/<pid>/stat` line. `comm` may contain spaces and parentheses, so the fixed
/// fields are counted from the last `)`.
pub(crate) fn parse_stat(line: &str) -> Option<ProcStat> {
    let (head, rest) = line.rsplit_once(')')?;
    let pid = head.split_once(" (")?.0.trim().parse().ok()?;
    // rest = " S ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime
    //          cutime cstime priority nice threads itrealvalue starttime ..."
    let fields: Vec<&str> = rest.split_ascii_whitespace().take(20).collect();
    if fields.len() < 20 {
        return None;
    }
    Some(ProcStat {
        pid,
        state: *fields[0].as_bytes().first()?,
        ppid: fields[1].parse().ok()?,
        pgrp: fields[2].parse().ok()?,
        session: fields[3].parse().ok()?,
        flags: fields[6].parse().ok()?,
        tty: fields[4].parse().ok()?,
        start: fields[19].parse().ok()?,
    })
}

/// Reads the file at `path` (relative to `dir`) into `buf` without allocating; how many bytes
/// it holds (at most `buf.len()`), or `None` when it cannot be read. With `line`, a read that
/// ends in a newline ends the file (a one-line file is then whole without a read for EOF).
pub(crate) fn read_small(
    dir: impl rustix::fd::AsFd,
    path: &str,
    buf: &mut [u8],
    line: bool,
) -> Option<usize> {
    use rustix::fs::{Mode, OFlags};
    let fd = rustix::fs::openat(dir, path, OFlags::RDONLY | OFlags::CLOEXEC, Mode::empty()).ok()?;
    let mut len = 0;
    loop {
        match rustix::io::read(&fd, &mut buf[len..]) {
            Ok(0) => return Some(len),
            Ok(n) => {
                len += n;
                if len == buf.len() || (line && buf[len - 1] == b'\n') {
                    return Some(len);
                }
            }
            Err(rustix::io::Errno::INTR) => {}
            Err(_) => return None,
        }
    }
}

/// The stat of one process, or `None` when it no longer exists.
pub(crate) fn read_stat(pid: i32) -> Option<ProcStat> {
    read_stat_at(rustix::fs::CWD, &format!("/proc/{pid}/stat"))
}

/// Reads a stat file into a stack buffer: the tree walk reads one per process on the machine,
/// so it allocates nothing per file.
fn read_stat_at(dir: impl rustix::fd::AsFd, path: &str) -> Option<ProcStat> {
    // comm is at most 64 bytes and the 52 numeric fields fit well within the rest.
    let mut buf = [0u8; 1024];
    // The line is whole once it ends in its newline: no read just to see EOF (the walk does
    // this for every process on the machine).
    let len = read_small(dir, path, &mut buf, true)?;
    match std::str::from_utf8(&buf[..len]) {
        Ok(line) => parse_stat(line),
        // A comm that is not UTF-8: only the numbers after it matter.
        Err(_) => parse_stat(&String::from_utf8_lossy(&buf[..len])),
    }
}

/// Every process visible in `/proc` (thread-group leaders only).
pub(crate) fn all() -> Vec<ProcStat> {
    use rustix::fs::{Mode, OFlags};
    let Ok(proc) = rustix::fs::open(
        "/proc",
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    ) else {
        return Vec::new();
    };
    let Ok(dir) = rustix::fs::Dir::read_from(&proc) else {
        return Vec::new();
    };
    let mut path = String::with_capacity(24);
    let mut out = Vec::with_capacity(256);
    for entry in dir.flatten() {
        let name = entry.file_name().to_bytes();
        if name.is_empty() || !name.iter().all(u8::is_ascii_digit) {
            continue;
        }
        path.clear();
        path.push_str(std::str::from_utf8(name).unwrap_or_default());
        path.push_str("/stat");
        if let Some(st) = read_stat_at(&proc, &path) {
            out.push(st);
        }
    }
    out
}

/// The last pid the kernel handed out in this process's pid namespace
/// (`/proc/sys/kernel/ns_last_pid`), or `None` where it cannot be read (a kernel without
/// `CONFIG_CHECKPOINT_RESTORE`). Every new process or thread of the namespace, and of any
/// namespace below it, takes its pid from the same cyclic counter; only a task holding
/// `CAP_CHECKPOINT_RESTORE` over the namespace can move the counter by hand or take a pid
/// without moving it (`clone3`'s `set_tid`).
pub(crate) fn last_pid() -> Option<i32> {
    use rustix::fs::{Mode, OFlags};
    use std::os::fd::OwnedFd;
    use std::sync::OnceLock;
    // Opened once: each read is one `pread`, no path lookup. A failed open is tried again next
    // time rather than remembered.
    static FILE: OnceLock<OwnedFd> = OnceLock::new();
    let fd = match FILE.get() {
        Some(fd) => fd,
        None => {
            let fd = rustix::fs::open(
                "/proc/sys/kernel/ns_last_pid",
                OFlags::RDONLY | OFlags::CLOEXEC,
                Mode::empty(),
            )
            .ok()?;
            FILE.get_or_init(|| fd)
        }
    };
    let mut buf = [0u8; 16];
    let n = loop {
        match rustix::io::pread(fd, &mut buf, 0) {
            Ok(n) => break n,
            Err(rustix::io::Errno::INTR) => {}
            Err(_) => return None,
        }
    };
    std::str::from_utf8(&buf[..n]).ok()?.trim().parse().ok()
}

/// The value of `name` in `/proc/<pid>/environ`, if the process has it (and it is readable).
pub(crate) fn environ_value(pid: i32, name: &str) -> Option<Vec<u8>> {
    value_in(&environ(pid)?, name)
}

/// `/proc/<pid>/environ`, `None` when it cannot be read.
pub(crate) fn environ(pid: i32) -> Option<Vec<u8>> {
    fs::read(format!("/proc/{pid}/environ")).ok()
}

/// The value of `name` in an environment block (`NAME=value` entries separated by NULs).
pub(crate) fn value_in(env: &[u8], name: &str) -> Option<Vec<u8>> {
    let prefix = format!("{name}=");
    env.split(|&b| b == 0)
        .find_map(|e| e.strip_prefix(prefix.as_bytes()).map(<[u8]>::to_vec))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_comm_with_spaces_and_parens() {
        let line = "4242 (we (ird) name) S 1 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 \
                    987654 12345 67 18446744073709551615";
        let st = parse_stat(line).unwrap();
        assert_eq!(
            st,
            ProcStat {
                pid: 4242,
                state: b'S',
                ppid: 1,
                pgrp: 4242,
                session: 4242,
                start: 987654,
                flags: 4194560,
                tty: 0,
            }
        );
        assert!(!st.is_dead() && !st.is_exiting());
        let exiting = "4242 (x) R 1 4242 4242 0 -1 4194564 100 0 0 0 1 2 0 0 20 0 1 0 987654 1";
        assert!(
            parse_stat(exiting).unwrap().is_exiting(),
            "PF_EXITING is 0x4"
        );
        assert!(parse_stat("12 (x) Z 1 2").is_none());
    }

    #[test]
    fn the_last_pid_moves_with_each_new_task() {
        let Some(before) = last_pid() else {
            return; // no CONFIG_CHECKPOINT_RESTORE: the runner never skips its walk there
        };
        std::thread::spawn(|| ()).join().unwrap();
        assert_ne!(last_pid(), Some(before), "a new thread takes a pid");
    }

    #[test]
    fn reads_this_process() {
        let me = std::process::id() as i32;
        let st = read_stat(me).unwrap();
        assert_eq!(st.pid, me);
        assert!(all().iter().any(|p| p.pid == me));
    }
}

//! Harness: temporary state directories, the real `planhost` binary as a child (killed and
//! reaped on drop), protocol connections that can be cut mid-call, and bounded polling.

pub(crate) use planhost_test_support::{BOUND, poll_until};

/// A run-size knob from the environment (decimal, or hex with `0x`), else `default`.
pub(crate) fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| {
            let v = v.trim();
            v.strip_prefix("0x")
                .map_or_else(|| v.parse().ok(), |h| u64::from_str_radix(h, 16).ok())
        })
        .unwrap_or(default)
}

/// SQLite's verdict on the state directory's database, read-only beside a running host.
pub(crate) fn integrity_check(env: &Env) -> String {
    let db = rusqlite::Connection::open_with_flags(
        env.state_dir().join("planhost.sqlite"),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .expect("open the database read-only");
    db.query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .expect("integrity_check")
}

/// The binary under test.
pub(crate) fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_planhost")
}

/// A temporary home for one test ([`Home`] for the binary under test).
pub(crate) fn home() -> Env {
    Env::new(bin())
}

/// The `it` tests call a test's home its `Env`.
pub(crate) type Env = Home;

/// `planhost serve` on a unix socket.
pub(crate) type SocketHost = Served;

pub(crate) use planhost_test_support::host::{
    ALL_ROLES, Conn, Home, Reaped, ServeOptions, Served, StdioHost, assert_code, assert_refused,
    response_error, stable, streamed,
};

// ---- processes ----

/// Whether `pid` is a live process (a zombie is dead, merely not yet reaped).
pub(crate) fn alive(pid: i32) -> bool {
    match fs_err::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|state| state != "Z" && state != "X"),
        Err(_) => false,
    }
}

/// Waits until every pid is gone.
pub(crate) fn wait_gone(pids: &[i32]) {
    poll_until("the process tree to die", BOUND, || {
        pids.iter().all(|p| !alive(*p)).then_some(())
    });
}

/// Kills the given `sleep` processes on drop if they somehow survived, so that a failing test
/// leaves nothing behind.
#[derive(Debug, Default)]
pub(crate) struct Leftovers(pub Vec<i32>);

impl Drop for Leftovers {
    fn drop(&mut self) {
        for pid in &self.0 {
            let is_sleep = fs_err::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| c.starts_with(b"sleep") || c.starts_with(b"/usr/bin/sleep"));
            if alive(*pid)
                && is_sleep
                && let Some(p) = rustix::process::Pid::from_raw(*pid)
            {
                let _ = rustix::process::kill_process(p, rustix::process::Signal::KILL);
            }
        }
    }
}

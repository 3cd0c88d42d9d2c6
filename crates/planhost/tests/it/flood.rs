//! Connection slots under a flood (issue 28): processes of the same user open thousands of
//! connections, some never sending a byte, some initialized, and hold them. A new client still
//! gets in and is served as it would be without the flood: pi's extension (initialize with its
//! roles, then `sessions.open`), Claude Code's hook (the real `planhost-hook`, a tool call at
//! the gate) and the CLI. Connections that do not initialize are told and closed after the
//! deadline; one process past its bound is told so while the others go on.
//!
//! The floods are children of this test forked without exec, each a process of its own to the
//! kernel, as a fork loop of the same user would be. Before the fix one process held all 512
//! slots for as long as it liked and every new client was refused.

use std::collections::HashSet;
use std::io::Read as _;
use std::os::unix::ffi::OsStrExt as _;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use planhost_core::Role;
use planhost_protocol::{Empty, EventScope, HealthStatus, InitializeParams, methods};
use planhost_test_support::host::params;
use serde_json::json;

use crate::support::*;

/// The host's defaults this file floods against.
const PER_PROCESS: usize = 128;
const MAX: usize = 512;
const RESERVED: usize = 64;
/// How long the host waits for `initialize`.
const DEADLINE: Duration = Duration::from_secs(5);

/// What each connection of a flood sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Says {
    /// Not a byte.
    Nothing,
    /// `initialize` as an observer, then nothing more (it never reads either).
    Initialize,
}

/// Forked children of this test, each holding connections to a socket until the flood is
/// dropped (then killed and reaped).
#[derive(Debug)]
struct Flood {
    children: Vec<libc::pid_t>,
    /// How many connections each child got through `connect(2)`.
    connected: Vec<u32>,
}

impl Flood {
    /// `processes` children, each connecting `each` times; connection `i` sends `says(i)`.
    /// Returns once every child has made all its connections.
    fn start(socket: &Path, processes: usize, each: usize, says: impl Fn(usize) -> Says) -> Self {
        // Everything the children use is made before the fork: a forked child of a threaded
        // process may only make system calls (no allocation, no lock).
        let plan: Vec<bool> = (0..each).map(|i| says(i) == Says::Initialize).collect();
        let hello = format!(
            "{}\n",
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": planhost_protocol::PROTOCOL_VERSION, "clientName": "flood",
                "roles": ["observer"], "events": "own"}})
        )
        .into_bytes();
        let (addr, addr_len) = sockaddr(socket);
        let mut ready = [0; 2];
        // SAFETY: a plain pipe(2) into an array of two descriptors.
        assert_eq!(
            unsafe { libc::pipe2(ready.as_mut_ptr(), libc::O_CLOEXEC) },
            0
        );
        let mut flood = Self {
            children: Vec::with_capacity(processes),
            connected: Vec::with_capacity(processes),
        };
        for _ in 0..processes {
            // SAFETY: the child makes system calls only, on what was prepared above, and never
            // returns (it ends in `_exit` or is killed).
            let pid = unsafe { libc::fork() };
            assert!(pid >= 0, "fork: {}", std::io::Error::last_os_error());
            if pid == 0 {
                // SAFETY: as above.
                unsafe { flood_child(&addr, addr_len, &plan, &hello, ready[1]) }
            }
            flood.children.push(pid);
        }
        // SAFETY: the write end is this process's to close.
        unsafe { libc::close(ready[1]) };
        // SAFETY: the read end is this process's, owned from here on.
        let read_end =
            unsafe { <std::os::fd::OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(ready[0]) };
        let mut reports = std::fs::File::from(read_end);
        let mut report = [0u8; 4];
        for _ in 0..processes {
            // Each child reports once, when it has made all its connections (a connect waits
            // while the host's listen queue is full, so this is as fast as the host takes them).
            let mut waiting = libc::pollfd {
                fd: ready[0],
                events: libc::POLLIN,
                revents: 0,
            };
            let bound = i32::try_from((3 * BOUND).as_millis()).unwrap();
            // SAFETY: poll(2) on one descriptor this process owns.
            let polled = unsafe { libc::poll(&raw mut waiting, 1, bound) };
            assert_eq!(
                polled,
                1,
                "a flood child did not report within {:?}",
                3 * BOUND
            );
            reports
                .read_exact(&mut report)
                .expect("every flood child reports its connections");
            flood.connected.push(u32::from_ne_bytes(report));
        }
        flood
    }
}

impl Drop for Flood {
    fn drop(&mut self) {
        for &pid in &self.children {
            // SAFETY: our own children, killed and reaped.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
                libc::waitpid(pid, std::ptr::null_mut(), 0);
            }
        }
    }
}

/// The body of a flood child: connect `plan.len()` times, send `hello` where the plan says,
/// report the count, and hold everything until killed.
///
/// # Safety
/// Only in a freshly forked child: it makes system calls only and never returns.
unsafe fn flood_child(
    addr: &libc::sockaddr_un,
    addr_len: libc::socklen_t,
    plan: &[bool],
    hello: &[u8],
    ready: libc::c_int,
) -> ! {
    // The other tests' descriptors this process held at the fork (their connections, their
    // hosts' pipes) are theirs: held here, a connection they close would stay open.
    // SAFETY: close_range(2) on this child's own descriptor table.
    unsafe {
        if ready > 3 {
            libc::syscall(libc::SYS_close_range, 3, ready - 1, 0);
        }
        libc::syscall(libc::SYS_close_range, ready + 1, libc::c_uint::MAX, 0);
    }
    let mut connected: u32 = 0;
    for &initialize in plan {
        // SAFETY: system calls on descriptors this child owns and memory prepared before the
        // fork. Blocking sockets: a connect waits while the host's listen queue is full.
        unsafe {
            let fd = libc::socket(libc::AF_UNIX, libc::SOCK_STREAM, 0);
            if fd < 0 {
                break;
            }
            let addr = std::ptr::from_ref(addr).cast::<libc::sockaddr>();
            if libc::connect(fd, addr, addr_len) != 0 {
                libc::close(fd);
                continue;
            }
            connected += 1;
            if initialize {
                // The host may have refused and closed it already: no SIGPIPE.
                libc::send(fd, hello.as_ptr().cast(), hello.len(), libc::MSG_NOSIGNAL);
            }
        }
    }
    let report = connected.to_ne_bytes();
    // SAFETY: as above; then the child waits to be killed, holding every connection.
    unsafe {
        libc::write(ready, report.as_ptr().cast(), report.len());
        libc::close(ready);
        loop {
            libc::pause();
        }
    }
}

fn sockaddr(path: &Path) -> (libc::sockaddr_un, libc::socklen_t) {
    // SAFETY: sockaddr_un is plain data; all zeroes is a valid (empty) address.
    let mut addr: libc::sockaddr_un = unsafe { std::mem::zeroed() };
    addr.sun_family = libc::AF_UNIX as libc::sa_family_t;
    let bytes = path.as_os_str().as_bytes();
    assert!(bytes.len() < addr.sun_path.len(), "socket path too long");
    for (to, from) in addr.sun_path.iter_mut().zip(bytes) {
        *to = *from as libc::c_char;
    }
    let len = std::mem::size_of::<libc::sa_family_t>() + bytes.len() + 1;
    (addr, libc::socklen_t::try_from(len).unwrap())
}

/// Lets this process (and the host and floods it starts) open enough descriptors: a flood of
/// 2,000 connections needs 2,000 in the child, and the host one per connection it is handed.
fn raise_descriptor_limit(need: u64) {
    use rustix::process::{Resource, getrlimit, setrlimit};
    let limit = getrlimit(Resource::Nofile);
    let hard = limit.maximum.unwrap_or(u64::MAX);
    assert!(
        hard >= need,
        "the flood needs {need} descriptors and the hard limit is {hard}"
    );
    if limit.current.is_some_and(|soft| soft < need) {
        let raised = rustix::process::Rlimit {
            current: Some(hard.min(65_536)),
            maximum: limit.maximum,
        };
        setrlimit(Resource::Nofile, raised).expect("raise RLIMIT_NOFILE");
    }
}

/// The connections the host `pid` holds on its socket: its descriptors that are connected unix
/// sockets accepted on its listener (`/proc/net/unix` gives them the listener's path: the
/// hidden name it was bound under, before the rename).
fn host_connections(pid: u32) -> usize {
    let Ok(fds) = fs_err::read_dir(format!("/proc/{pid}/fd")) else {
        return 0;
    };
    let mine: HashSet<String> = fds
        .filter_map(Result::ok)
        .filter_map(|fd| fs_err::read_link(fd.path()).ok())
        .filter_map(|link| {
            let link = link.to_string_lossy().into_owned();
            Some(link.strip_prefix("socket:[")?.strip_suffix(']')?.to_owned())
        })
        .collect();
    let net = fs_err::read_to_string("/proc/net/unix").unwrap();
    // Num RefCount Protocol Flags Type St Inode Path: flags 00010000 is a listener, St 03 is
    // connected.
    let rows: Vec<Vec<&str>> = net
        .lines()
        .skip(1)
        .map(|line| line.split_whitespace().collect::<Vec<_>>())
        .filter(|fields| fields.len() == 8 && mine.contains(fields[6]))
        .collect();
    let Some(listener) = rows.iter().find(|f| f[3] == "00010000").map(|f| f[7]) else {
        return 0;
    };
    rows.iter()
        .filter(|f| f[5] == "03" && f[7] == listener)
        .count()
}

/// Waits until the host holds at most `most` connections on its socket.
fn until_held_at_most(host: &SocketHost, most: usize, what: &str, bound: Duration) -> usize {
    poll_until(what, bound, || {
        let held = host_connections(host.pid());
        (held <= most).then_some(held)
    })
}

/// pi's extension: `initialize` with its roles and its own events, then `sessions.open`.
fn pi_like(host: &SocketHost, env: &Env) -> Conn {
    let started = Instant::now();
    let mut pi = host.connect_raw();
    pi.read_timeout(BOUND);
    let hello = pi.try_call::<methods::Initialize>(InitializeParams {
        protocol_version: planhost_protocol::PROTOCOL_VERSION,
        client_name: "pi-planhost".into(),
        client_version: None,
        roles: vec![Role::Agent, Role::Approver],
        tool_activity: false,
        events: EventScope::Own,
        agent_process: None,
    });
    assert!(hello.is_ok(), "pi's extension was refused: {hello:?}");
    let session = pi.try_call::<methods::SessionsOpen>(params::open(&env.workspace()));
    assert!(session.is_ok(), "pi's sessions.open failed: {session:?}");
    eprintln!(
        "pi's extension: connected, initialized and opened its session in {:?}",
        started.elapsed()
    );
    pi
}

/// Claude Code's hook, the real binary, at the gate: a `Read` is allowed.
fn hook_allows_a_read(env: &Env) {
    let event = json!({
        "session_id": "cc-flood",
        "cwd": env.workspace().display().to_string(),
        "hook_event_name": "PreToolUse",
        "permission_mode": "default",
        "tool_name": "Read",
        "tool_use_id": "toolu_flood",
        "tool_input": {"file_path": env.workspace().join("README.md").display().to_string()},
    });
    let mut sh = Command::new("sh");
    sh.arg("-c")
        .arg(format!(
            "printf '%s' '{event}' | '{}' claude-code",
            env!("CARGO_BIN_EXE_planhost-hook")
        ))
        .env("PLANHOST_STATE_DIR", env.state_dir())
        .env("PLANHOST_SOCKET", env.socket())
        .env("HOME", env.root());
    let started = Instant::now();
    let run = planhost_test_support::run_detached(&sh, BOUND);
    // With the detached start and the poll for its exit (every 10 ms or so) included.
    eprintln!("the hook: answered in {:?}", started.elapsed());
    assert_eq!(run.code, Some(0), "the hook was not served: {run:?}");
    assert!(
        run.stdout.contains(r#""permissionDecision":"allow""#),
        "the hook did not allow the Read: {run:?}"
    );
}

/// The CLI, as a person runs it.
fn cli_lists_plans(env: &Env) {
    let run = crate::cli::cli(env, &["plans", "--json"]);
    assert_eq!(run.code, Some(0), "the CLI was not served: {run:?}");
}

#[test]
fn a_flood_from_one_process_leaves_room_and_its_silent_connections_are_closed() {
    raise_descriptor_limit(4096);
    let env = home();
    let host = SocketHost::start(&env);
    // 2,000 connections from one process, every other one silent.
    let flood = Flood::start(env.socket().as_path(), 1, 2000, |i| {
        if i % 2 == 0 {
            Says::Nothing
        } else {
            Says::Initialize
        }
    });
    assert_eq!(
        flood.connected,
        vec![2000],
        "the flood made every connection"
    );

    // pi's extension is served at once. The host accepts in the order of connect(2), so by
    // now it has taken or refused every connection of the flood.
    let mut pi = pi_like(&host, &env);
    // The flood holds its bound (the rest was refused and closed), pi its one.
    let held = until_held_at_most(
        &host,
        PER_PROCESS + 1,
        "the flood to be held to its bound",
        BOUND,
    );
    eprintln!("one process's 2,000 connections: the host holds {held}, pi's one included");
    assert!(
        held > PER_PROCESS / 2,
        "the flood was served up to its bound: {held}"
    );
    hook_allows_a_read(&env);
    cli_lists_plans(&env);

    // A silent connection is told why it is closed, after the deadline.
    let mut silent = UnixStream::connect(env.socket()).unwrap();
    silent.set_read_timeout(Some(DEADLINE + BOUND)).unwrap();
    let mut told = String::new();
    silent
        .read_to_string(&mut told)
        .expect("closed by the host");
    assert!(told.contains("INITIALIZE_TIMEOUT"), "told: {told:?}");
    // The flood's silent half is gone by now; its initialized half stays.
    let held = until_held_at_most(
        &host,
        PER_PROCESS / 2 + 1,
        "the flood's silent connections to be closed",
        DEADLINE + BOUND,
    );
    eprintln!("after the deadline: {held}");
    assert!(
        held >= PER_PROCESS / 2,
        "initialized connections stay: {held}"
    );

    // pi's connection sat idle past the deadline: initialized, it is still served.
    let health = pi.try_call::<methods::AppHealth>(Empty {});
    assert!(
        health.is_ok_and(|h| h.status == HealthStatus::Ok),
        "pi's idle connection was closed"
    );
    drop(flood);
}

#[test]
fn a_flood_from_many_processes_leaves_room_for_new_clients() {
    raise_descriptor_limit(4096);
    let env = home();
    let host = SocketHost::start(&env);
    // Eight processes, 250 initialized connections each: no deadline frees them, and together
    // they want four times the cap.
    let flood = Flood::start(env.socket().as_path(), 8, 250, |_| Says::Initialize);
    assert_eq!(
        flood.connected,
        vec![250; 8],
        "the flood made every connection"
    );
    // A new client gets in: the host has taken or refused every connection of the flood
    // before (it accepts in the order of connect(2)), so all but the reserve is the flood's.
    let mut pi = pi_like(&host, &env);
    // What processes that hold connections can take: all but the reserve, plus the one first
    // connection each of them may have landed there; pi has its one.
    let held = until_held_at_most(
        &host,
        MAX - RESERVED + 8 + 1,
        "the flood to be held out of the reserve",
        BOUND,
    );
    eprintln!("eight processes' 2,000 connections: the host holds {held}, pi's one included");
    assert!(
        held > MAX - RESERVED,
        "the flood took every shared slot, so pi got in through the reserve: {held}"
    );
    hook_allows_a_read(&env);
    cli_lists_plans(&env);
    let health = pi.try_call::<methods::AppHealth>(Empty {});
    assert!(health.is_ok_and(|h| h.status == HealthStatus::Ok));
    drop(flood);
}

#[test]
fn one_process_past_its_bound_is_told_so_and_others_are_not() {
    raise_descriptor_limit(1024);
    let env = home();
    let host = SocketHost::start(&env);
    // The start's probe connection is closed; wait until the host has seen it go.
    until_held_at_most(&host, 0, "the start's probe to close", BOUND);
    let mut held: Vec<Conn> = (0..PER_PROCESS)
        .map(|i| {
            let mut c = host.connect_raw();
            c.read_timeout(BOUND);
            c.initialize_as(&format!("many-{i}"), &[Role::Observer]);
            c
        })
        .collect();
    let mut one_more = UnixStream::connect(env.socket()).unwrap();
    one_more.set_read_timeout(Some(BOUND)).unwrap();
    let mut told = String::new();
    one_more
        .read_to_string(&mut told)
        .expect("closed by the host");
    let refusal: serde_json::Value = serde_json::from_str(told.trim()).unwrap();
    assert_eq!(
        refusal["error"]["data"]["code"], "TOO_MANY_PROCESS_CONNECTIONS",
        "{refusal}"
    );
    let message = refusal["error"]["message"].as_str().unwrap();
    assert!(
        message.contains(&format!("pid {}", std::process::id())),
        "names the process: {message}"
    );
    // This process's connections go on, and other processes are served.
    let health = held[0].try_call::<methods::AppHealth>(Empty {});
    assert!(health.is_ok_and(|h| h.status == HealthStatus::Ok));
    hook_allows_a_read(&env);
    cli_lists_plans(&env);
    // One closed: this process gets a slot again.
    held.pop();
    until_held_at_most(&host, PER_PROCESS - 1, "the closed one to go", BOUND);
    let mut again = host.connect_raw();
    again.read_timeout(BOUND);
    again.initialize_as("again", &[Role::Observer]);
}

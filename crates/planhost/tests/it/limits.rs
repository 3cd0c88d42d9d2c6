//! What a client may hold of the host (issue 17's outside attack): connections past the
//! descriptor limit are refused clearly while the host keeps serving the ones it has, without
//! spinning or flooding its log; unfinished lines across connections are bounded, and the
//! memory they took is given back. The figures are in docs/reliability.md; these tests hold
//! the bounds, far above what the fixed host does and far below what the attack reached.

use std::io::{Read as _, Write as _};
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt as _;
use std::time::Duration;

use planhost_protocol::{Empty, HealthStatus, methods};

use crate::support::{BOUND, ServeOptions, SocketHost, home, poll_until};

/// The host's CPU time so far, in clock ticks (`utime + stime`).
fn cpu_ticks(pid: u32) -> u64 {
    let stat = fs_err::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // After the command's closing parenthesis: state is field 3, utime 14, stime 15.
    let rest = &stat[stat.rfind(')').unwrap() + 2..];
    let fields: Vec<&str> = rest.split(' ').collect();
    fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
}

/// A `/proc/<pid>/status` figure in KiB.
fn status_kib(pid: u32, key: &str) -> u64 {
    let status = fs_err::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with(key)).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

fn health(conn: &mut crate::support::Conn) {
    let answer = conn.call::<methods::AppHealth>(Empty {});
    assert_eq!(answer.status, HealthStatus::Ok);
}

/// Whatever a raw connection was sent so far, without waiting.
fn pending_text(mut stream: &UnixStream) -> String {
    stream.set_nonblocking(true).unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    while let Ok(n) = stream.read(&mut buf) {
        if n == 0 {
            break;
        }
        got.extend_from_slice(&buf[..n]);
    }
    stream.set_nonblocking(false).unwrap();
    String::from_utf8_lossy(&got).into_owned()
}

#[test]
fn at_the_descriptor_limit_the_host_refuses_clearly_backs_off_and_keeps_serving() {
    let env = home();
    let mut command = env.command();
    // SAFETY: setrlimit is async-signal-safe and allocates nothing.
    unsafe {
        command.pre_exec(|| {
            let limit = rustix::process::Rlimit {
                current: Some(64),
                maximum: Some(64),
            };
            rustix::process::setrlimit(rustix::process::Resource::Nofile, limit)
                .map_err(std::io::Error::from)
        });
    }
    let host = SocketHost::start_from(&env, command, ServeOptions::default());
    let pid = host.pid();
    let mut first = host.connect("first");
    health(&mut first);

    // More clients than the host has descriptors: the rest wait in the listen queue.
    let mut held: Vec<UnixStream> = (0..120)
        .map(|_| UnixStream::connect(env.socket()).expect("connect"))
        .collect();
    std::thread::sleep(Duration::from_millis(500));
    let (cpu_before, log_before) = (cpu_ticks(pid), host.stderr.text().len());
    std::thread::sleep(Duration::from_secs(3));
    let (cpu, log) = (
        cpu_ticks(pid) - cpu_before,
        host.stderr.text().len() - log_before,
    );
    eprintln!("at the descriptor limit for 3 s: {cpu} ticks of CPU, {log} bytes of log");
    // Before: a tight accept loop, 3 s of CPU (300 ticks) and ~85 MB of log in 3 s.
    assert!(cpu < 60, "the host spins at the limit: {cpu} ticks in 3 s");
    assert!(
        log < 4096,
        "the host floods its log: {log} bytes in 3 s:\n{}",
        host.stderr.text()
    );
    assert!(
        host.stderr.text().contains("accept failed"),
        "the host never reached its descriptor limit; the test proves nothing:\n{}",
        host.stderr.text()
    );
    // The connections it has are served all along.
    health(&mut first);
    // Waiting clients are told why they are refused, not left hanging.
    let refused = held
        .iter()
        .filter(|s| pending_text(s).contains("TOO_MANY_CONNECTIONS"))
        .count();
    assert!(refused >= 1, "no waiting client was told it is refused");

    // Descriptors free: new clients are served again.
    held.clear();
    let mut again = poll_until("a new client to be served", BOUND, || {
        let stream = UnixStream::connect(env.socket()).ok()?;
        stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
        let mut client = planhost_client::Client::from_streams(stream.try_clone().ok()?, stream);
        client
            .initialize("again", &[planhost_core::Role::Observer])
            .ok()
            .map(|_| client)
    });
    let answer = again
        .call::<methods::AppHealth>(Empty {})
        .expect("served again");
    assert_eq!(answer.status, HealthStatus::Ok);
}

#[test]
fn unfinished_lines_are_bounded_across_connections_and_their_memory_is_given_back() {
    let env = home();
    let host = SocketHost::start(&env);
    let pid = host.pid();
    let mut first = host.connect("first");
    health(&mut first);
    let base = status_kib(pid, "VmRSS:");

    // 32 clients, each in the middle of a 15 MiB line.
    let line = vec![b'x'; 15 * 1024 * 1024];
    let writers: Vec<_> = (0..32)
        .map(|_| {
            let mut stream = UnixStream::connect(env.socket()).expect("connect");
            let line = line.clone();
            std::thread::spawn(move || {
                stream.write_all(&line).expect("the host reads every byte");
                stream
            })
        })
        .collect();
    let streams: Vec<UnixStream> = writers.into_iter().map(|w| w.join().unwrap()).collect();
    std::thread::sleep(Duration::from_millis(300));
    let peak = status_kib(pid, "VmHWM:");
    let during = status_kib(pid, "VmRSS:");
    let told = streams
        .iter()
        .filter(|s| pending_text(s).contains("INPUT_BUFFER_FULL"))
        .count();
    eprintln!(
        "32 x 15 MiB unfinished: RSS {base} KiB before, {during} KiB during, peak {peak} KiB; \
         {told} clients told INPUT_BUFFER_FULL"
    );
    // Before: +453 MB. The budget is 64 MiB.
    assert!(
        peak - base < 200 * 1024,
        "RSS grew by {} KiB for 32 unfinished lines",
        peak - base
    );
    assert!(
        told >= 24,
        "only {told} of 32 clients were told their line did not fit"
    );
    health(&mut first);

    drop(streams);
    // The host notices 32 closed connections and trims after each large buffer it frees; on a
    // machine busy with the rest of the suite that has taken longer than 10 s once (RSS alone:
    // 40–55 MB within 3 s), so the wait is longer than the usual bound. How much comes back is
    // what is checked, not how fast.
    let after = poll_until("the memory to be given back", 3 * BOUND, || {
        let rss = status_kib(pid, "VmRSS:");
        (rss < base + 48 * 1024).then_some(rss)
    });
    eprintln!("after the clients left: RSS {after} KiB");
    health(&mut first);
}

//! Robustness of the transports: bad input never kills a connection, a client that stops
//! reading is dropped without slowing anyone down, and one host owns a state directory.

use std::io::{BufRead, BufReader, ErrorKind, Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixStream;
use std::process::Stdio;

use planhost_core::{Interactivity, Mode};
use planhost_protocol::{Empty, HealthStatus, codes, methods};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::steps::*;
use crate::support::*;

/// A 17 MiB line is answered with `LINE_TOO_LONG`, discarded, and the next request works.
fn over_long_line_is_discarded(c: &mut Conn) {
    let pad = "x".repeat(17 * 1024 * 1024);
    c.send_raw(&format!(
        r#"{{"jsonrpc":"2.0","id":77,"method":"app.health","params":{{"pad":"{pad}"}}}}"#
    ));
    let response = c.next_response();
    assert_eq!(response.id, None, "the request was never parsed");
    let error = response_error(&response);
    assert_code(&error, codes::INVALID_REQUEST, "LINE_TOO_LONG");
    assert_eq!(
        c.call::<methods::AppHealth>(Empty {}).status,
        HealthStatus::Ok
    );
}

#[test]
fn an_over_long_line_on_the_socket_is_discarded() {
    let env = home();
    let host = SocketHost::start(&env);
    let mut c = host.connect("e2e-long");
    over_long_line_is_discarded(&mut c);
}

#[test]
fn bad_input_on_stdio_is_answered_and_stdout_stays_protocol() {
    let env = home();
    let (mut host, mut c) = StdioHost::start(&env);
    c.send_raw("this is not json");
    let parse = c.next_response();
    assert_code(&response_error(&parse), codes::PARSE_ERROR, "PARSE_ERROR");
    // Raw: a method the contract does not have.
    let unknown = c.call_json_err("no.such.method", json!({}));
    assert_code(&unknown, codes::METHOD_NOT_FOUND, "METHOD_NOT_FOUND");
    over_long_line_is_discarded(&mut c);
    c.close();
    let status = host.child.wait_exit("serve --stdio to exit");
    assert!(status.success(), "{status}");
    host.assert_stdout_is_protocol();
    assert_eq!(host.stdout_lines().len(), 5, "{:?}", host.stdout_lines());
}

/// Upper bound on the events the busy client generates while waiting for the slow one to be
/// dropped: the slow client's queue holds `CLIENT_QUEUE` (4,096) lines, its socket buffers and
/// the host's write buffer a few thousand more.
const MAX_TOGGLES: usize = 30_000;
const DROPPED: &str = "dropping a connection that stopped reading";

#[test]
fn a_client_that_stops_reading_is_dropped_and_blocks_nobody() {
    let env = home();
    let host = SocketHost::start(&env);

    let mut slow = UnixStream::connect(env.socket()).unwrap();
    let hello = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": { "protocolVersion": planhost_protocol::PROTOCOL_VERSION, "clientName": "slow", "roles": ["observer"] },
    });
    writeln!(slow, "{hello}").unwrap();
    let mut slow_reader = BufReader::new(slow.try_clone().unwrap());
    let mut line = String::new();
    slow_reader.read_line(&mut line).unwrap();
    assert!(line.contains("\"result\""), "{line}");
    // From here on the slow client reads nothing until the end of the test.

    let mut busy = host.connect("e2e-busy");
    let sid = busy.open_session(&env.workspace(), Interactivity::Interactive);
    let modes = [Mode::Plan, Mode::Agent];
    let mut toggles = 0;
    let toggle = |busy: &mut Conn, toggles: &mut usize| {
        let mode = modes[*toggles % 2];
        assert_eq!(busy.set_mode(&sid, mode).mode, mode);
        *toggles += 1;
    };
    while !host.stderr.text().contains(DROPPED) {
        for _ in 0..250 {
            toggle(&mut busy, &mut toggles);
        }
        assert!(
            toggles < MAX_TOGGLES,
            "the slow client was not dropped after {toggles} events; stderr:\n{}",
            host.stderr.text()
        );
    }
    // The busy client carries on regardless.
    for _ in 0..250 {
        toggle(&mut busy, &mut toggles);
    }
    let total = toggles;
    let last = modes[(total - 1) % 2];
    assert_eq!(busy.get_session(&sid).mode, last);
    assert_eq!(
        busy.call::<methods::AppHealth>(Empty {}).status,
        HealthStatus::Ok
    );

    // The host closes the slow client's socket without waiting for it to read: writing to it
    // eventually fails.
    slow.set_nonblocking(true).unwrap();
    let probe = format!(
        "{}\n",
        json!({ "jsonrpc": "2.0", "id": 2, "method": "app.health" })
    );
    poll_until(
        "the host to close the slow client's socket",
        BOUND,
        || match slow.write(probe.as_bytes()) {
            Err(e) if matches!(e.kind(), ErrorKind::BrokenPipe | ErrorKind::ConnectionReset) => {
                Some(())
            }
            Ok(_) | Err(_) => None,
        },
    );

    // What it had been sent is valid protocol, ends in EOF, and is less than everything.
    slow.set_nonblocking(false).unwrap();
    slow.set_read_timeout(Some(BOUND)).unwrap();
    let mut rest = String::new();
    slow_reader
        .read_to_string(&mut rest)
        .expect("EOF from the host, not a timeout");
    let events = rest
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).expect("a JSON line"))
        .filter(|v| v["method"] == "state.changed")
        .count();
    assert!(
        events < total,
        "the slow client received all {total} events; it was never dropped"
    );
    let stderr = host.stderr.text();
    let reason = stderr.lines().find(|l| l.contains(DROPPED)).unwrap();
    assert!(
        reason.contains("queue=4096"),
        "the reason names the full queue: {reason}"
    );
}

#[test]
fn one_host_per_state_directory_and_a_private_socket() {
    let env = home();
    let host = SocketHost::start(&env);
    let mode = fs_err::metadata(env.socket()).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600, "socket mode {mode:o}");
    let holder = format!("pid {}", host.pid());

    for args in [&["serve"][..], &["serve", "--stdio"][..]] {
        let mut second = Reaped::new(
            env.command()
                .args(args)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap(),
        );
        let status = second.wait_exit("the second host to give up");
        let mut stderr = String::new();
        second
            .child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut stderr)
            .unwrap();
        let mut stdout = String::new();
        second
            .child
            .stdout
            .take()
            .unwrap()
            .read_to_string(&mut stdout)
            .unwrap();
        assert_eq!(status.code(), Some(3), "{args:?}: {status}; {stderr}");
        assert!(
            stderr.contains(&holder),
            "{args:?}: {stderr:?} lacks {holder}"
        );
        assert_eq!(stdout, "", "{args:?}");
    }
    // The first host still serves on its socket, untouched by the second.
    let mut c = host.connect("e2e-after-lock");
    let health = c.call::<methods::AppHealth>(Empty {});
    assert_eq!(health.pid, host.pid());
}

/// An embedding app that stops reading stdout, then closes stdin, does not keep the host (and
/// its state-directory lock) alive forever: the host exits after a bounded drain.
#[test]
fn a_stdio_host_whose_stdout_is_never_read_still_exits_when_stdin_closes() {
    use std::io::Write as _;
    let env = home();
    let mut child = Reaped::new(
        env.command()
            .args(["serve", "--stdio"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap(),
    );
    let mut stdin = child.child.stdin.take().unwrap();
    let _unread_stdout = child.child.stdout.take().unwrap();
    let hello = json!({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": { "protocolVersion": planhost_protocol::PROTOCOL_VERSION, "clientName": "mute", "roles": ["observer"] },
    });
    let mut batch = format!("{hello}\n");
    for i in 1..=2_000 {
        batch.push_str(&format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{i},\"method\":\"app.version\",\"params\":{{}}}}\n"
        ));
    }
    stdin.write_all(batch.as_bytes()).unwrap();
    drop(stdin);
    // Far more than a pipe holds was answered and never read; the host still exits.
    let status = poll_until(
        "the host to exit",
        std::time::Duration::from_secs(60),
        || child.child.try_wait().unwrap(),
    );
    assert!(status.code().is_some(), "{status:?}");
}

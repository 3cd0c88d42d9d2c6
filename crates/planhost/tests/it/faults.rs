//! Regression tests for issue 10's socket and state-directory defects, each named after what
//! it was: a second host took over a live socket, `--socket` on a regular file deleted it, and
//! a state directory others could write to was used as it was.

use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;
use std::process::{Command, Stdio};

use planhost_protocol::{Empty, methods};

use crate::cli::cli;
use crate::support::*;

/// Runs `planhost --state-dir <state> --socket <socket> serve` to its exit; returns (exit code,
/// stderr).
fn serve_exit(state: &Path, socket: &Path) -> (Option<i32>, String) {
    let out = Command::new(bin())
        .arg("--state-dir")
        .arg(state)
        .arg("--socket")
        .arg(socket)
        .arg("serve")
        .env_remove("PLANHOST_LOG")
        .env_remove("PLANHOST_STATE_DIR")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .expect("run planhost serve");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_second_host_never_takes_over_a_live_socket() {
    let first = home();
    let host = SocketHost::start(&first);
    let other = home();
    let (code, stderr) = serve_exit(&other.state_dir(), &first.socket());
    assert_ne!(code, Some(0), "the second host served: {stderr}");
    assert!(stderr.contains("never replaced"), "{stderr}");
    assert!(
        stderr.contains(&format!("pid {}", host.pid())),
        "the refusal names the holder: {stderr}"
    );
    // The first host still answers on its socket.
    let mut c = host.connect("e2e-still-mine");
    assert_eq!(c.call::<methods::AppHealth>(Empty {}).pid, host.pid());
}

#[test]
fn socket_on_a_regular_file_is_refused_and_the_file_kept() {
    let env = home();
    fs_err::write(env.socket(), b"precious\n").unwrap();
    let (code, stderr) = serve_exit(&env.state_dir(), &env.socket());
    assert_ne!(code, Some(0), "{stderr}");
    assert!(stderr.contains("is not a socket"), "{stderr}");
    assert_eq!(fs_err::read(env.socket()).unwrap(), b"precious\n");
}

#[test]
fn a_state_dir_others_can_write_is_refused_and_doctor_flags_it() {
    let env = home();
    fs_err::create_dir(env.state_dir()).unwrap();
    fs_err::set_permissions(env.state_dir(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let (code, stderr) = serve_exit(&env.state_dir(), &env.socket());
    assert_ne!(code, Some(0), "{stderr}");
    assert!(stderr.contains("writable by others"), "{stderr}");
    assert!(
        !env.state_dir().join("planhost.sqlite").exists(),
        "a database was created in an unsafe directory"
    );
    let run = cli(&env, &["doctor", "--json"]);
    assert_eq!(run.code, Some(1), "doctor is unhealthy: {run:#?}");
    let doctor: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let check = doctor["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "permissions")
        .cloned()
        .unwrap();
    assert_eq!(check["ok"], false, "{doctor}");
    assert!(
        check["detail"]
            .as_str()
            .unwrap()
            .contains("writable by others"),
        "{check}"
    );
}

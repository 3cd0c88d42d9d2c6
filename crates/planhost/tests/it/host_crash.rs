//! Interrupted means stopped (DESIGN decision 10): a command never outlives its host by more
//! than a moment. When `serve` is SIGKILLed mid-Bash, its watchdog ends the command's tree at
//! once; when even the watchdog is gone, the next host ends the leftovers before it serves, and
//! removes the dead host's cgroups.

use serde_json::json;

use crate::steps::*;
use crate::support::*;

/// Writes a timestamp to `side.txt` every 20 ms from an escapee in its own session, prints its
/// pid, and waits.
const WRITER: &str = r#"setsid sh -c 'while true; do date +%s%N >> side.txt; sleep 0.02; done' & echo "esc $!"; sleep 600"#;

/// Starts the writer through the host; returns the escapee's pid once it is running.
fn start_writer(host: &SocketHost, env: &Env, leftovers: &mut Leftovers) -> (Conn, i32) {
    let mut c = host.connect("e2e-crash");
    let sid = open_session(&mut c, &env.workspace(), "interactive");
    c.call(
        "sessions.configure",
        json!({ "sessionId": sid, "permissionMode": "auto" }),
    );
    let turn = begin_turn(&mut c, &sid);
    let input = json!({ "command": WRITER });
    let allowed = authorize_input(&mut c, &sid, &turn, "w1", "Bash", input.clone());
    assert_eq!(allowed["decision"], "allow", "{allowed}");
    c.send(
        "tools.execute",
        execute_params(&sid, &turn, "w1", "Bash", input),
    );
    let pid = c.wait_until("the escapee's pid", |notes| {
        streamed(notes, "w1", "stdout")
            .lines()
            .find_map(|l| l.strip_prefix("esc ")?.trim().parse::<i32>().ok())
    });
    leftovers.0.push(pid);
    poll_until("the side effect to start", BOUND, || {
        env.workspace().join("side.txt").exists().then_some(())
    });
    (c, pid)
}

fn side_lines(env: &Env) -> usize {
    fs_err::read_to_string(env.workspace().join("side.txt"))
        .map(|t| t.lines().count())
        .unwrap_or(0)
}

/// The host's watchdog: its child marked `PLANHOST_WATCHDOG`.
fn watchdog_of(host_pid: u32) -> Option<i32> {
    fs_err::read_dir("/proc").ok()?.find_map(|e| {
        let pid: i32 = e.ok()?.file_name().to_str()?.parse().ok()?;
        let stat = fs_err::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        let ppid: u32 = stat
            .rsplit_once(')')?
            .1
            .split_whitespace()
            .nth(1)?
            .parse()
            .ok()?;
        let env = fs_err::read(format!("/proc/{pid}/environ")).ok()?;
        (ppid == host_pid && env.split(|b| *b == 0).any(|v| v == b"PLANHOST_WATCHDOG=1"))
            .then_some(pid)
    })
}

#[test]
fn a_killed_host_takes_its_commands_with_it() {
    let env = Env::new();
    let mut leftovers = Leftovers::default();
    let mut host = SocketHost::start(&env);
    let (_c, escapee) = start_writer(&host, &env, &mut leftovers);
    host.kill();
    // The watchdog sees the host's end at once and ends the tree; the side effect stops.
    wait_gone(&[escapee]);
    let after_kill = side_lines(&env);
    std::thread::sleep(std::time::Duration::from_millis(200));
    assert_eq!(
        side_lines(&env),
        after_kill,
        "the command kept writing after its host died"
    );
}

#[test]
fn the_next_host_ends_what_a_dead_host_left_before_it_serves() {
    let env = Env::new();
    let mut leftovers = Leftovers::default();
    let mut host = SocketHost::start(&env);
    let (_c, escapee) = start_writer(&host, &env, &mut leftovers);
    // Take the watchdog first: the leftovers are now the next host's to end.
    let watchdog = poll_until("the host's watchdog", BOUND, || watchdog_of(host.pid()));
    let _ = rustix::process::kill_process(
        rustix::process::Pid::from_raw(watchdog).expect("pid"),
        rustix::process::Signal::KILL,
    );
    let cgroup = fs_err::read_to_string(format!("/proc/{escapee}/cgroup"))
        .ok()
        .and_then(|c| {
            c.lines()
                .find_map(|l| l.strip_prefix("0::").map(str::to_owned))
        })
        .filter(|c| c.contains("planhost-"));
    wait_gone(&[watchdog]);
    host.kill();
    // Only a host's start-up sweep can end the escapee now. Any host started meanwhile does it
    // (tests run in parallel, and every host ends every dead host's leftovers); this one must
    // find it done or do it before it serves.
    // By the time the new host accepts connections, the leftover is dead and its cgroup gone.
    let next = SocketHost::start(&env);
    assert!(
        !alive(escapee),
        "the leftover survived the next host's start"
    );
    if let Some(cgroup) = cgroup {
        let path = planhost_test_support::procs::cgroup2_mount()
            .expect("a cgroup2 mount, since the run had a cgroup")
            .join(cgroup.trim_start_matches('/'));
        assert!(
            !path.exists(),
            "the dead host's cgroup {path:?} is still there"
        );
    }
    let after = side_lines(&env);
    std::thread::sleep(std::time::Duration::from_millis(200));
    assert_eq!(side_lines(&env), after, "the side effect went on");
    drop(next);
}

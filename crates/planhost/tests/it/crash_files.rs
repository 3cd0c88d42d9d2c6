//! What a crash can leave on disk: temp files in `.pi/plan/` and `.pi/plans/` are swept by the
//! next host before it serves (only a dead process's; a live one's is about to be committed),
//! and `doctor` lists complete plan files that no approval points to.

use crate::cli::cli;
use crate::steps::*;
use crate::support::*;

/// A pid no process has: one that just exited and was reaped.
fn dead_pid() -> u32 {
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    pid
}

#[test]
fn crash_temps_are_swept_at_startup_and_doctor_lists_orphan_artifacts() {
    let env = Env::new();
    let mut host = SocketHost::start(&env);
    let mut c = host.connect("e2e-files");
    let sid = open_session(&mut c, &env.workspace(), "interactive");
    let (_turn, approval) = submit_plan(&mut c, &sid, "Kept");
    let referenced = approval["artifactRelativePath"]
        .as_str()
        .unwrap()
        .to_owned();
    host.kill();

    let plan_dir = env.workspace().join(".pi/plan");
    let plans_dir = env.workspace().join(".pi/plans");
    fs_err::create_dir_all(&plans_dir).unwrap();
    let dead = dead_pid();
    let stale = [
        plan_dir.join(format!(".planhost-tmp-{dead}-0")),
        plans_dir.join(format!(".planhost-tmp-{dead}-1")),
    ];
    // The test process is alive: its temp must be left for it to commit.
    let live = plan_dir.join(format!(".planhost-tmp-{}-7", std::process::id()));
    for path in stale.iter().chain([&live]) {
        fs_err::write(path, b"# half a pla").unwrap();
    }
    let orphan = plan_dir.join("2026-12-01-orphan.md");
    fs_err::write(
        &orphan,
        b"# Plan: written, then the host died before its row\n",
    )
    .unwrap();

    let host = SocketHost::start(&env);
    for path in &stale {
        assert!(!path.exists(), "{path:?} survived the next host's start");
    }
    assert!(live.exists(), "a live process's temp file was removed");
    assert!(
        env.workspace().join(&referenced).exists(),
        "the approval's artifact must stay"
    );

    let doctor = cli(&env, &["doctor", "--json"]).json();
    let files = doctor["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "plan files")
        .unwrap_or_else(|| panic!("no plan files check: {doctor}"));
    let detail = files["detail"].as_str().unwrap();
    assert!(detail.contains("1 orphan artifact"), "{detail}");
    assert!(detail.contains("2026-12-01-orphan.md"), "{detail}");
    assert!(!detail.contains(&referenced), "{detail}");
    assert!(!detail.contains(".planhost-tmp-"), "{detail}");
    drop(host);
}

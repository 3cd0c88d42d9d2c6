//! What a crash can leave on disk: temp files in `.pi/plan/` and `.pi/plans/` are swept by the
//! next host before it serves (only a dead process's; a live one's is about to be committed),
//! and `doctor` lists complete plan files that no approval points to.

use planhost_core::{ApprovalAction, Interactivity};
use planhost_protocol::{
    RequestOutcome, RequestPublicationParams, ResolvePublicationParams, SaveCheckpointParams,
    methods,
};

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
    let env = home();
    let mut host = SocketHost::start(&env);
    let mut c = host.connect("e2e-files");
    let sid = c.open_session(&env.workspace(), Interactivity::Interactive);
    let (_turn, approval) = c.submit_plan(&sid, "Kept");
    let referenced = approval.artifact_relative_path;
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

/// Under umask `000` (an outside attack found plan files created `0666` there), nothing the host
/// creates is group- or world-writable: the workspace's `.pi` directories `0755`, the plan
/// artifact and the publication `0644`; the state directory `0700`, the database, its WAL and
/// SHM, the lock and the socket `0600`. Only the host runs under that umask (set in its child
/// before exec), never this test process.
#[test]
fn under_umask_000_nothing_the_host_creates_is_group_or_world_writable() {
    use std::os::unix::fs::PermissionsExt as _;
    use std::os::unix::process::CommandExt as _;
    let env = home();
    let mut command = env.command();
    // SAFETY: umask(2) is async-signal-safe and allocates nothing.
    unsafe {
        command.pre_exec(|| {
            rustix::process::umask(rustix::fs::Mode::empty());
            Ok(())
        });
    }
    let host = SocketHost::start_from(&env, command, ServeOptions::default());
    let mut c = host.connect("e2e-umask");
    let sid = c.open_session(&env.workspace(), Interactivity::Interactive);
    let (_turn, approval) = c.submit_plan(&sid, "Modes");
    let branch = vec!["root".into(), "m".into()];
    c.call::<methods::CheckpointsSave>(SaveCheckpointParams {
        session_id: sid.clone(),
        branch_path: branch.clone(),
        markdown: "# Plan: modes\n".into(),
        expected_revision: 0,
    });
    let published = c.call::<methods::PublicationsRequest>(RequestPublicationParams {
        session_id: sid.clone(),
        branch_path: branch,
        overwrite_conflict: false,
    });
    let publication = published.publication.expect("a publication");
    if published.outcome == RequestOutcome::Pending {
        c.call::<methods::PublicationsResolve>(ResolvePublicationParams {
            publication_id: publication.publication_id.clone(),
            action: ApprovalAction::Approve,
        });
    }
    let ws = env.workspace();
    let state = env.state_dir();
    let artifact = &approval.artifact_relative_path;
    let publication = &publication.relative_path;
    let mut modes: Vec<(String, String)> = Vec::new();
    let mut expected: Vec<(String, String)> = Vec::new();
    for (path, want) in [
        (ws.join(".pi"), 0o755),
        (ws.join(".pi/plan"), 0o755),
        (ws.join(".pi/plans"), 0o755),
        (ws.join(artifact), 0o644),
        (ws.join(publication), 0o644),
        (state.clone(), 0o700),
        (state.join("planhost.sqlite"), 0o600),
        (state.join("planhost.sqlite-wal"), 0o600),
        (state.join("planhost.sqlite-shm"), 0o600),
        (state.join("planhost.lock"), 0o600),
        (env.socket(), 0o600),
    ] {
        let mode = fs_err::symlink_metadata(&path)
            .map(|m| format!("{:03o}", m.permissions().mode() & 0o7777))
            .unwrap_or_else(|e| format!("missing: {e}"));
        modes.push((path.display().to_string(), mode));
        expected.push((path.display().to_string(), format!("{want:03o}")));
    }
    assert_eq!(modes, expected);
    // Nothing else in the state directory is writable by others either.
    for entry in fs_err::read_dir(&state).unwrap() {
        let entry = entry.unwrap();
        let mode = entry.metadata().unwrap().permissions().mode();
        assert_eq!(mode & 0o022, 0, "{:?} is {:o}", entry.path(), mode & 0o7777);
    }
    drop(host);
}

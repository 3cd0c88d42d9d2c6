//! Disk full (issue 10): the state directory and the workspace each on a small tmpfs that is
//! then filled. SubmitPlan, checkpoints, publication and the audit writer get a clear error
//! with a stable code, nothing is half-written at a final name, no tool call is allowed
//! unaudited, the host keeps serving, and once space is back the database is intact and work
//! goes on. Needs `mount` (root, as in CI); elsewhere it says so
//! and checks nothing.

use std::path::{Path, PathBuf};
use std::process::Command;

use planhost_core::{
    ApprovalAction, ApprovalStatus, AuditAction, EntryId, HostTool, Interactivity, Mode, SessionId,
    ToolCallId,
};
use planhost_protocol::{
    ApprovalInfo, AuditFilter, BranchRef, DecisionKind, RequestPublicationParams,
    ResolvePublicationParams, RpcError, SaveCheckpointParams, methods,
};
use planhost_test_support::host::params;
use serde_json::json;

use crate::steps::*;
use crate::support::*;

/// A tmpfs mounted on `dir` for the test's life.
struct Tmpfs(PathBuf);

impl Tmpfs {
    fn mount(dir: &Path, size: &str, mode: &str) -> Option<Self> {
        fs_err::create_dir_all(dir).ok()?;
        let ok = Command::new("mount")
            .args([
                "-t",
                "tmpfs",
                "-o",
                &format!("size={size},mode={mode}"),
                "tmpfs",
            ])
            .arg(dir)
            .status()
            .is_ok_and(|s| s.success());
        ok.then(|| Self(dir.to_path_buf()))
    }

    /// Fills the filesystem: a filler file written until the disk says no.
    fn fill(&self) -> PathBuf {
        use std::io::Write as _;
        let path = self.0.join("filler");
        let mut f = fs_err::File::create(&path).unwrap();
        let block = vec![0u8; 64 * 1024];
        while f.write_all(&block).is_ok() {}
        // The last partial block, byte-sized, so not even a small write fits.
        while f.write_all(&[0]).is_ok() {}
        let _ = f.flush();
        path
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

fn save(
    sid: &SessionId,
    branch: &[EntryId],
    markdown: &str,
    expected: i64,
) -> SaveCheckpointParams {
    SaveCheckpointParams {
        session_id: sid.clone(),
        branch_path: branch.to_vec(),
        markdown: markdown.into(),
        expected_revision: expected,
    }
}

fn code_of(error: &RpcError) -> String {
    stable(error).unwrap_or("<none>").to_owned()
}

/// The files at final names in `.pi/plan/` (temp files are not final).
fn final_plan_files(env: &Env) -> Vec<String> {
    let Ok(dir) = fs_err::read_dir(env.workspace().join(".pi/plan")) else {
        return Vec::new();
    };
    let mut names: Vec<String> = dir
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| !n.starts_with(".planhost-tmp-"))
        .collect();
    names.sort();
    names
}

#[test]
fn a_full_disk_gets_clear_errors_and_leaves_everything_intact() {
    let env = home();
    let state = Tmpfs::mount(&env.state_dir(), "3m", "0700");
    if !planhost_test_support::capability::present(
        planhost_test_support::capability::Capability::Tmpfs,
        state.is_some(),
        "a_full_disk_gets_clear_errors_and_leaves_everything_intact",
        "mounting a tmpfs failed",
    ) {
        return;
    }
    let Some(state) = state else { return };
    let ws = Tmpfs::mount(&env.workspace(), "1m", "0755").expect("a second tmpfs");
    let host = SocketHost::start(&env);
    let mut c = host.connect("e2e-disk-full");
    let sid = c.open_session(&env.workspace(), Interactivity::Interactive);
    c.set_mode(&sid, Mode::Plan);
    let branch = vec![EntryId::from("root")];
    c.call::<methods::CheckpointsSave>(save(&sid, &branch, "# Plan: before\n", 0));

    // The workspace is full: SubmitPlan cannot write its artifact.
    let ws_filler = ws.fill();
    let turn = c.begin_turn(&sid);
    let allowed = c.authorize(&sid, &turn, "submit-1", "SubmitPlan");
    assert_eq!(allowed.decision, DecisionKind::Allow, "{allowed:?}");
    let err =
        c.call_err::<methods::PlansSubmit>(params::submit(&sid, &turn, "submit-1", "Full", PLAN));
    assert_eq!(code_of(&err), "PLAN_ARTIFACT_WRITE_FAILED", "{err:?}");
    assert_eq!(
        final_plan_files(&env),
        Vec::<String>::new(),
        "a file at a final name"
    );
    assert_eq!(
        c.pending_plans(),
        Vec::<ApprovalInfo>::new(),
        "a row without its artifact"
    );
    // Publication needs the workspace too.
    match c.try_call::<methods::PublicationsRequest>(RequestPublicationParams {
        session_id: sid.clone(),
        branch_path: branch.clone(),
        overwrite_conflict: false,
    }) {
        Ok(r) => {
            // A pending publication asks first; approving it is what writes.
            let id = r.publication.expect("a pending publication").publication_id;
            let err = c.call_err::<methods::PublicationsResolve>(ResolvePublicationParams {
                publication_id: id,
                action: ApprovalAction::Approve,
            });
            assert_eq!(code_of(&err), "PUBLISH_WRITE_FAILED", "{err:?}");
        }
        Err(err) => assert_eq!(code_of(&err), "PUBLISH_WRITE_FAILED", "{err:?}"),
    }
    assert!(
        !env.workspace().join(".pi/plans").exists()
            || fs_err::read_dir(env.workspace().join(".pi/plans"))
                .unwrap()
                .filter_map(|e| e.ok()?.file_name().into_string().ok())
                .all(|n| n.starts_with(".planhost-tmp-")),
        "a publication at a final name"
    );

    // The state directory is full too. The audit writer: a tool decision that cannot be
    // recorded is not answered (fail closed), so nothing is allowed unaudited. The WAL may hold
    // room for a few rows already; the disk says no within a few calls.
    let state_filler = state.fill();
    let read = json!({ "path": "notes.txt" });
    let mut answered = Vec::new();
    let refused = (0..200).find_map(|i| {
        let call = format!("read-full-{i}");
        match c.try_call::<methods::ToolsAuthorize>(params::authorize(
            &sid,
            &turn,
            &call,
            "Read",
            read.clone(),
        )) {
            Ok(r) => {
                assert_eq!(r.decision, DecisionKind::Allow, "{r:?}");
                answered.push(call);
                None
            }
            Err(err) => Some((call, err)),
        }
    });
    let (refused_call, err) = refused.expect("200 audit rows were written to a full disk");
    eprintln!(
        "disk full: {} tool decisions fitted before the audit insert failed",
        answered.len()
    );
    assert_eq!(code_of(&err), "STORE_PERSISTENCE_FAILED", "{err:?}");
    assert!(
        answered.len() < 20,
        "{} decisions fitted on a full disk",
        answered.len()
    );
    // That call was granted nothing.
    let err = c.call_err::<methods::ToolsExecute>(params::execute(
        &sid,
        &turn,
        &refused_call,
        HostTool::Read,
        read.clone(),
    ));
    assert_eq!(code_of(&err), "TOOL_NOT_AUTHORIZED", "{err:?}");

    // A checkpoint cannot be committed.
    let big = format!("# Plan: after\n\n{}\n", "x".repeat(256 * 1024));
    let err = c.call_err::<methods::CheckpointsSave>(save(&sid, &branch, &big, 1));
    assert_eq!(code_of(&err), "STORE_PERSISTENCE_FAILED", "{err:?}");
    // Still serving, and still what it was.
    let latest = c.call::<methods::CheckpointsLatest>(BranchRef {
        session_id: sid.clone(),
        branch_path: branch.clone(),
    });
    assert_eq!(latest.markdown, "# Plan: before\n", "{latest:?}");

    // Space is back: the database is intact and work goes on.
    fs_err::remove_file(state_filler).unwrap();
    fs_err::remove_file(ws_filler).unwrap();
    assert_eq!(integrity_check(&env), "ok");
    // Every decision that was answered is in the audit log; the refused one is not.
    let log = c.call::<methods::AuditList>(AuditFilter {
        session_id: Some(sid.clone()),
        limit: Some(500),
    });
    let allowed: Vec<&str> = log
        .items
        .iter()
        .filter(|r| r.action == AuditAction::ToolAllow)
        .filter_map(|r| r.tool_call_id.as_ref().map(ToolCallId::as_str))
        .collect();
    for call in &answered {
        assert!(
            allowed.contains(&call.as_str()),
            "{call} was allowed unaudited"
        );
    }
    assert!(!allowed.contains(&refused_call.as_str()), "{log:?}");
    // The audit writer writes again: a new decision is answered, recorded, and runs.
    fs_err::write(env.workspace().join("notes.txt"), "space is back\n").unwrap();
    let allowed = c.authorize_input(&sid, &turn, "read-after", "Read", read.clone());
    assert_eq!(allowed.decision, DecisionKind::Allow, "{allowed:?}");
    let ran = c.call::<methods::ToolsExecute>(params::execute(
        &sid,
        &turn,
        "read-after",
        HostTool::Read,
        read,
    ));
    let ran = serde_json::to_string(&ran).unwrap();
    assert!(ran.contains("space is back"), "{ran}");
    let saved = c.call::<methods::CheckpointsSave>(save(&sid, &branch, &big, 1));
    assert_eq!(saved.checkpoint.revision, 2, "{saved:?}");
    let submit = || params::submit(&sid, &turn, "submit-2", "Room", PLAN);
    let err = c.try_call::<methods::PlansSubmit>(submit());
    // The turn's SubmitPlan call id was authorized once; a new call needs its own grant.
    if err.is_err() {
        let allowed = c.authorize(&sid, &turn, "submit-2", "SubmitPlan");
        assert_eq!(allowed.decision, DecisionKind::Allow, "{allowed:?}");
        let approval = c.call::<methods::PlansSubmit>(submit());
        assert_eq!(approval.status, ApprovalStatus::Pending, "{approval:?}");
    }
    assert_eq!(
        final_plan_files(&env).len(),
        1,
        "{:?}",
        final_plan_files(&env)
    );
    drop(c);
    drop(host);
    drop(ws);
    drop(state);
}

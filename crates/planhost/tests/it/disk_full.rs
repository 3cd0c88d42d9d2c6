//! Disk full (issue 10): the state directory and the workspace each on a small tmpfs that is
//! then filled. SubmitPlan, checkpoints, publication and the audit writer get a clear error
//! with a stable code, nothing is half-written at a final name, no tool call is allowed
//! unaudited, the host keeps serving, and once space is back the database is intact and work
//! goes on. Needs `mount` (root, as in CI); elsewhere it says so
//! and checks nothing.

use std::path::{Path, PathBuf};
use std::process::Command;

use planhost_protocol::RpcError;
use serde_json::{Value, json};

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
    let sid = open_session(&mut c, &env.workspace(), "interactive");
    set_mode(&mut c, &sid, "plan");
    let branch = json!(["root"]);
    c.call_json(
        "checkpoints.save",
        json!({ "sessionId": sid, "branchPath": branch, "markdown": "# Plan: before\n", "expectedRevision": 0 }),
    );

    // The workspace is full: SubmitPlan cannot write its artifact.
    let ws_filler = ws.fill();
    let turn = begin_turn(&mut c, &sid);
    let allowed = authorize(&mut c, &sid, &turn, "submit-1", "SubmitPlan");
    assert_eq!(allowed["decision"], "allow", "{allowed}");
    let err = c.call_json_err(
        "plans.submit",
        submit_params(&sid, &turn, "submit-1", "Full", 1),
    );
    assert_eq!(code_of(&err), "PLAN_ARTIFACT_WRITE_FAILED", "{err:?}");
    assert_eq!(
        final_plan_files(&env),
        Vec::<String>::new(),
        "a file at a final name"
    );
    assert_eq!(
        pending_plans(&mut c),
        Vec::<Value>::new(),
        "a row without its artifact"
    );
    // Publication needs the workspace too.
    match c.try_call_json(
        "publications.request",
        json!({ "sessionId": sid, "branchPath": branch }),
    ) {
        Ok(r) => {
            // A pending publication asks first; approving it is what writes.
            let id = r["publication"]["publicationId"].clone();
            let err = c.call_json_err(
                "publications.resolve",
                json!({ "publicationId": id, "action": "approve" }),
            );
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
        let mut params = authorize_params(&sid, &turn, &call, "Read", 1);
        params["input"] = read.clone();
        match c.try_call_json("tools.authorize", params) {
            Ok(r) => {
                assert_eq!(r["decision"], "allow", "{r}");
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
    let err = c.call_json_err(
        "tools.execute",
        execute_params(&sid, &turn, &refused_call, "Read", read.clone()),
    );
    assert_eq!(code_of(&err), "TOOL_NOT_AUTHORIZED", "{err:?}");

    // A checkpoint cannot be committed.
    let big = format!("# Plan: after\n\n{}\n", "x".repeat(256 * 1024));
    let err = c.call_json_err(
        "checkpoints.save",
        json!({ "sessionId": sid, "branchPath": branch, "markdown": big, "expectedRevision": 1 }),
    );
    assert_eq!(code_of(&err), "STORE_PERSISTENCE_FAILED", "{err:?}");
    // Still serving, and still what it was.
    let latest = c.call_json(
        "checkpoints.latest",
        json!({ "sessionId": sid, "branchPath": branch }),
    );
    assert_eq!(latest["markdown"], "# Plan: before\n", "{latest}");

    // Space is back: the database is intact and work goes on.
    fs_err::remove_file(state_filler).unwrap();
    fs_err::remove_file(ws_filler).unwrap();
    assert_eq!(integrity_check(&env), "ok");
    // Every decision that was answered is in the audit log; the refused one is not.
    let log = c.call_json("audit.list", json!({ "sessionId": sid, "limit": 500 }));
    let allowed: Vec<&str> = items(&log)
        .iter()
        .filter(|r| r["action"] == "tool.allow")
        .filter_map(|r| r["toolCallId"].as_str())
        .collect();
    for call in &answered {
        assert!(
            allowed.contains(&call.as_str()),
            "{call} was allowed unaudited"
        );
    }
    assert!(!allowed.contains(&refused_call.as_str()), "{log}");
    // The audit writer writes again: a new decision is answered, recorded, and runs.
    fs_err::write(env.workspace().join("notes.txt"), "space is back\n").unwrap();
    let mut params = authorize_params(&sid, &turn, "read-after", "Read", 1);
    params["input"] = read.clone();
    let allowed = c.call_json("tools.authorize", params);
    assert_eq!(allowed["decision"], "allow", "{allowed}");
    let ran = c.call_json(
        "tools.execute",
        execute_params(&sid, &turn, "read-after", "Read", read),
    );
    assert!(ran.to_string().contains("space is back"), "{ran}");
    let saved = c.call_json(
        "checkpoints.save",
        json!({ "sessionId": sid, "branchPath": branch, "markdown": big, "expectedRevision": 1 }),
    );
    assert_eq!(saved["checkpoint"]["revision"], 2, "{saved}");
    let err = c.try_call_json(
        "plans.submit",
        submit_params(&sid, &turn, "submit-2", "Room", 1),
    );
    // The turn's SubmitPlan call id was authorized once; a new call needs its own grant.
    if err.is_err() {
        let allowed = authorize(&mut c, &sid, &turn, "submit-2", "SubmitPlan");
        assert_eq!(allowed["decision"], "allow", "{allowed}");
        let approval = c.call_json(
            "plans.submit",
            submit_params(&sid, &turn, "submit-2", "Room", 1),
        );
        assert_eq!(approval["status"], "pending", "{approval}");
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

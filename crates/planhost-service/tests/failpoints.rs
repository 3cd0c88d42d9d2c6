//! The service under the fs and store failpoints (issue 10): every armed point gives the caller
//! a clear error with the host's stable code, never an approval row without its artifact, never
//! a file at a final name that is not complete, never a tool call allowed unaudited, and no
//! state change after a failed commit; once the point is disarmed the same service goes on.
//! A separate test binary: failpoints are process-global, and every test holds `FailScenario`,
//! so they run one at a time and meet no other test.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::wildcard_enum_match_arm
)]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use fail::FailScenario;
use planhost_core::{ManualClock, Role, Timestamp};
use planhost_protocol::{ClientRequest, InitializeParams, PROTOCOL_VERSION};
use planhost_service::{Connection, Service, ServiceConfig, ServiceError};
use serde_json::{Value, json};

/// The fs adapter's failpoints, in the order a write meets them.
const FS_POINTS: [&str; 4] = ["fs::write", "fs::fsync", "fs::rename", "fs::fsync_dir"];
const TEMP_PREFIX: &str = ".planhost-tmp-";
const PLAN: &str = "# Plan: failpoints\n\n1. Write `out.txt`.\n";

/// 2025-11-30 00:00:00 UTC.
const T0: Timestamp = Timestamp(1_764_460_800_000);

struct Host {
    rt: tokio::runtime::Runtime,
    service: Service,
    conn: Connection,
    clock: Arc<ManualClock>,
    state: Arc<tempfile::TempDir>,
    workspace: Arc<tempfile::TempDir>,
}

impl Host {
    fn start() -> Self {
        let state = tempfile::tempdir().unwrap();
        let workspace = tempfile::tempdir().unwrap();
        let clock = Arc::new(ManualClock::new(T0));
        Self::start_on(Arc::new(state), Arc::new(workspace), clock)
    }

    fn start_on(
        state: Arc<tempfile::TempDir>,
        workspace: Arc<tempfile::TempDir>,
        clock: Arc<ManualClock>,
    ) -> Self {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let config = ServiceConfig {
            clock: clock.clone(),
            ..ServiceConfig::new(state.path())
        };
        let service = rt
            .block_on(async { Service::start(config) })
            .unwrap()
            .service;
        let hello = InitializeParams {
            protocol_version: PROTOCOL_VERSION,
            client_name: "failpoints".into(),
            client_version: None,
            roles: vec![Role::Agent, Role::Approver, Role::Observer],
            tool_activity: false,
            events: planhost_protocol::EventScope::All,
            agent_process: None,
        };
        let (conn, _events, _) = rt
            .block_on(async { service.connect(&hello, planhost_service::Peer::Embedded) })
            .unwrap();
        Self {
            rt,
            service,
            conn,
            clock,
            state,
            workspace,
        }
    }

    /// Stops this service and starts another on the same files: a restart.
    fn restart(self) -> (Self, planhost_service::Started) {
        let (state, workspace, clock) = (
            Arc::clone(&self.state),
            Arc::clone(&self.workspace),
            Arc::clone(&self.clock),
        );
        drop(self);
        let config = ServiceConfig {
            clock: clock.clone(),
            ..ServiceConfig::new(state.path())
        };
        let started = Service::start(config).unwrap();
        started.service.shutdown();
        (Self::start_on(state, workspace, clock), started)
    }

    fn try_call(&self, method: &str, params: Value) -> Result<Value, ServiceError> {
        let request = ClientRequest::parse(method, params).unwrap();
        self.rt
            .block_on(self.conn.handle(request))
            .map(|r| r.to_value().unwrap())
    }

    #[track_caller]
    fn call(&self, method: &str, params: Value) -> Value {
        match self.try_call(method, params.clone()) {
            Ok(v) => v,
            Err(e) => panic!("{method} {params} failed: {e} ({})", e.code().as_str()),
        }
    }

    /// The stable code of a call that must fail.
    #[track_caller]
    fn code_of(&self, method: &str, params: Value) -> String {
        match self.try_call(method, params) {
            Ok(v) => panic!("{method} succeeded under a failpoint: {v}"),
            Err(e) => e.code().as_str().to_owned(),
        }
    }

    fn ws(&self) -> &Path {
        self.workspace.path()
    }

    fn open_session(&self) -> String {
        let s = self.call(
            "sessions.open",
            json!({ "workspaceRoot": self.ws().display().to_string(), "interactivity": "interactive" }),
        );
        s["id"].as_str().unwrap().to_owned()
    }

    fn set_mode(&self, sid: &str, mode: &str) {
        self.call(
            "sessions.setMode",
            json!({ "sessionId": sid, "mode": mode }),
        );
    }

    fn begin_turn(&self, sid: &str) -> String {
        let t = self.call("turns.begin", json!({ "sessionId": sid }));
        t["id"].as_str().unwrap().to_owned()
    }

    fn authorize(&self, sid: &str, turn: &str, call: &str, tool: &str, input: Value) -> Value {
        self.call(
            "tools.authorize",
            authorize_params(sid, turn, call, tool, input),
        )
    }

    fn pending_plans(&self) -> Vec<Value> {
        let list = self.call("plans.list", json!({ "status": ["pending"] }));
        list["items"].as_array().unwrap().clone()
    }

    /// Plan mode and a turn, ready for SubmitPlan.
    fn planning(&self) -> (String, String) {
        let sid = self.open_session();
        self.set_mode(&sid, "plan");
        let turn = self.begin_turn(&sid);
        (sid, turn)
    }

    /// SubmitPlan authorized for `call`, then submitted.
    fn submit(&self, sid: &str, turn: &str, call: &str) -> Result<Value, ServiceError> {
        let allowed = self.authorize(sid, turn, call, "SubmitPlan", json!({}));
        assert_eq!(allowed["decision"], "allow", "{allowed}");
        self.try_call("plans.submit", submit_params(sid, turn, call))
    }

    fn save_checkpoint(
        &self,
        sid: &str,
        markdown: &str,
        expected: i64,
    ) -> Result<Value, ServiceError> {
        self.try_call(
            "checkpoints.save",
            json!({ "sessionId": sid, "branchPath": ["root"], "markdown": markdown, "expectedRevision": expected }),
        )
    }

    fn latest(&self, sid: &str) -> Value {
        self.call(
            "checkpoints.latest",
            json!({ "sessionId": sid, "branchPath": ["root"] }),
        )
    }

    fn request_publication(&self, sid: &str) -> Value {
        let r = self.call(
            "publications.request",
            json!({ "sessionId": sid, "branchPath": ["root"] }),
        );
        r["publication"].clone()
    }

    fn audit_calls(&self, action: &str) -> Vec<String> {
        let log = self.call("audit.list", json!({ "limit": 500 }));
        let mut calls: Vec<String> = log["items"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["action"] == action)
            .filter_map(|r| r["toolCallId"].as_str().map(str::to_owned))
            .collect();
        calls.sort();
        calls
    }

    /// The database's rows, once the decisions recorded so far are in the audit log (they
    /// reach it from the decision journal a few milliseconds after they were answered).
    fn dump(&self) -> String {
        self.call("audit.list", json!({ "limit": 1 }));
        planhost_service::dump_database(&self.state.path().join("planhost.sqlite")).unwrap()
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        self.conn.close();
        self.service.shutdown();
    }
}

fn authorize_params(sid: &str, turn: &str, call: &str, tool: &str, input: Value) -> Value {
    json!({
        "sessionId": sid, "turnId": turn, "toolCallId": call, "toolName": tool,
        "batchIndex": 0, "batchSize": 1, "provenance": { "kind": "builtIn" }, "input": input,
    })
}

fn submit_params(sid: &str, turn: &str, call: &str) -> Value {
    json!({
        "sessionId": sid, "turnId": turn, "toolCallId": call, "batchIndex": 0,
        "batchSize": 1, "title": "Failpoints", "markdown": PLAN,
        "question": "Shall I implement this plan?",
    })
}

fn resolve_params(approval: &Value, action: &str) -> Value {
    let mut p = json!({
        "proposalId": approval["proposalId"], "sessionId": approval["sessionId"],
        "turnId": approval["turnId"], "toolCallId": approval["toolCallId"],
        "version": approval["version"], "artifactSha256": approval["artifactSha256"],
        "action": action,
    });
    if action == "approve" {
        p["targetPermissionMode"] = json!("auto");
    }
    p
}

fn names(dir: &Path) -> Vec<String> {
    let Ok(entries) = fs_err::read_dir(dir) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    names
}

fn plan_dir(h: &Host) -> PathBuf {
    h.ws().join(".pi/plan")
}

fn plans_dir(h: &Host) -> PathBuf {
    h.ws().join(".pi/plans")
}

/// Arms `point` (every evaluation fails) around `f`.
fn armed<T>(point: &str, actions: &str, f: impl FnOnce() -> T) -> T {
    fail::cfg(point, actions).unwrap();
    let out = f();
    fail::remove(point);
    out
}

/// Every approval row's artifact is on disk with its recorded digest and size.
fn assert_every_approval_has_its_artifact(h: &Host) {
    let list = h.call("plans.list", json!({ "limit": 500 }));
    for a in list["items"].as_array().unwrap() {
        let path = h.ws().join(a["artifactRelativePath"].as_str().unwrap());
        let bytes =
            fs_err::read(&path).unwrap_or_else(|e| panic!("a row without its artifact: {e}"));
        assert_eq!(
            planhost_core::sha256_hex(&bytes),
            a["artifactSha256"].as_str().unwrap(),
            "{}",
            path.display()
        );
    }
}

#[test]
fn submit_plan_fails_cleanly_at_every_fs_point() {
    let scenario = FailScenario::setup();
    for point in FS_POINTS {
        let h = Host::start();
        let (sid, turn) = h.planning();
        let before = h.dump();
        let err = armed(point, "return", || h.submit(&sid, &turn, "submit-1")).unwrap_err();
        assert_eq!(
            err.code().as_str(),
            "PLAN_ARTIFACT_WRITE_FAILED",
            "{point}: {err}"
        );
        assert!(err.to_string().contains("no space left"), "{point}: {err}");
        // No row, no file at a final name, no temp.
        assert_eq!(h.pending_plans(), Vec::<Value>::new(), "{point}");
        assert_eq!(names(&plan_dir(&h)), Vec::<String>::new(), "{point}");
        // Only the authorize decision's audit row was added.
        assert_eq!(h.audit_calls("tool.allow"), vec!["submit-1"], "{point}");
        assert_ne!(h.dump(), before);
        // Disarmed: the next SubmitPlan works and its row has its artifact.
        let approval = h.submit(&sid, &turn, "submit-2").unwrap();
        assert_eq!(approval["status"], "pending", "{point}: {approval}");
        assert_eq!(names(&plan_dir(&h)).len(), 1, "{point}");
        assert_every_approval_has_its_artifact(&h);
    }
    scenario.teardown();
}

#[test]
fn submit_plan_whose_row_cannot_commit_leaves_no_approval() {
    let scenario = FailScenario::setup();
    let h = Host::start();
    let (sid, turn) = h.planning();
    let allowed = h.authorize(&sid, &turn, "submit-1", "SubmitPlan", json!({}));
    assert_eq!(allowed["decision"], "allow");
    let before = h.dump();
    let code = armed("store::commit", "return", || {
        h.code_of("plans.submit", submit_params(&sid, &turn, "submit-1"))
    });
    assert_eq!(code, "STORE_PERSISTENCE_FAILED");
    assert_eq!(h.dump(), before, "a failed commit changed the database");
    assert_eq!(h.pending_plans(), Vec::<Value>::new());
    // The artifact was written before the row: a complete orphan no approval points at (what
    // `planhost doctor` lists), never a temp.
    let files = names(&plan_dir(&h));
    assert_eq!(files.len(), 1, "{files:?}");
    assert!(!files[0].starts_with(TEMP_PREFIX), "{files:?}");
    let approval = h.submit(&sid, &turn, "submit-2").unwrap();
    assert_eq!(approval["status"], "pending", "{approval}");
    assert_every_approval_has_its_artifact(&h);
    scenario.teardown();
}

#[test]
fn an_approval_whose_commit_fails_changes_nothing() {
    let scenario = FailScenario::setup();
    let h = Host::start();
    let (sid, turn) = h.planning();
    let approval = h.submit(&sid, &turn, "submit-1").unwrap();
    let before = h.dump();
    for action in ["approve", "reject"] {
        let code = armed("store::commit", "return", || {
            h.code_of("plans.resolve", resolve_params(&approval, action))
        });
        assert_eq!(code, "STORE_PERSISTENCE_FAILED", "{action}");
        assert_eq!(
            h.dump(),
            before,
            "{action}: a failed commit changed the database"
        );
        let session = h.call("sessions.get", json!({ "sessionId": sid }));
        assert_eq!(session["mode"], "plan", "{session}");
    }
    // The very same request goes through once the disk is back.
    let approved = h.call("plans.resolve", resolve_params(&approval, "approve"));
    assert_eq!(approved["status"], "approved", "{approved}");
    let session = h.call("sessions.get", json!({ "sessionId": sid }));
    assert_eq!(session["mode"], "agent", "{session}");
    scenario.teardown();
}

#[test]
fn a_checkpoint_whose_commit_fails_keeps_the_previous_one() {
    let scenario = FailScenario::setup();
    let h = Host::start();
    let sid = h.open_session();
    h.set_mode(&sid, "plan");
    h.save_checkpoint(&sid, "# Plan: one\n", 0).unwrap();
    let before = h.dump();
    let err = armed("store::commit", "return", || {
        h.save_checkpoint(&sid, "# Plan: two\n", 1)
    })
    .unwrap_err();
    assert_eq!(err.code().as_str(), "STORE_PERSISTENCE_FAILED", "{err}");
    assert_eq!(h.dump(), before);
    assert_eq!(h.latest(&sid)["markdown"], "# Plan: one\n");
    let saved = h.save_checkpoint(&sid, "# Plan: two\n", 1).unwrap();
    assert_eq!(saved["checkpoint"]["revision"], 2, "{saved}");
    scenario.teardown();
}

#[test]
fn a_publication_that_fails_at_an_fs_point_is_failed_or_complete_never_partial() {
    let scenario = FailScenario::setup();
    for point in FS_POINTS {
        let h = Host::start();
        let sid = h.open_session();
        h.set_mode(&sid, "plan");
        let markdown = format!("# Plan: published\n\n{}\n", "step\n".repeat(1_000));
        h.save_checkpoint(&sid, &markdown, 0).unwrap();
        let publication = h.request_publication(&sid);
        assert_eq!(publication["status"], "pending", "{publication}");
        let id = publication["publicationId"].clone();
        let resolved = armed(point, "return", || {
            h.try_call(
                "publications.resolve",
                json!({ "publicationId": id, "action": "approve" }),
            )
        });
        let path = h.ws().join(publication["relativePath"].as_str().unwrap());
        match point {
            // After the rename the bytes are in place: the host checks the disk and records
            // the publication as written.
            "fs::fsync_dir" => {
                let r = resolved.unwrap();
                assert_eq!(r["publication"]["status"], "completed", "{point}: {r}");
                assert_eq!(fs_err::read_to_string(&path).unwrap(), markdown, "{point}");
            }
            _ => {
                let err = resolved.unwrap_err();
                assert_eq!(
                    err.code().as_str(),
                    "PUBLISH_WRITE_FAILED",
                    "{point}: {err}"
                );
                assert!(!path.exists(), "{point}: a file at the final name");
                let list = h.call("publications.list", json!({ "sessionId": sid }));
                assert_eq!(list["items"][0]["status"], "failed", "{point}: {list}");
                // Disarmed, a new request publishes it.
                let again = h.request_publication(&sid);
                let r = h.call(
                    "publications.resolve",
                    json!({ "publicationId": again["publicationId"], "action": "approve" }),
                );
                assert_eq!(r["publication"]["status"], "completed", "{point}: {r}");
                let path = h
                    .ws()
                    .join(r["publication"]["relativePath"].as_str().unwrap());
                assert_eq!(fs_err::read_to_string(&path).unwrap(), markdown, "{point}");
            }
        }
        let temps: Vec<String> = names(&plans_dir(&h))
            .into_iter()
            .filter(|n| n.starts_with(TEMP_PREFIX))
            .collect();
        assert!(temps.is_empty(), "{point}: temps left: {temps:?}");
    }
    scenario.teardown();
}

#[test]
fn a_publication_whose_commits_fail_writes_nothing_or_is_reconciled() {
    let scenario = FailScenario::setup();
    let h = Host::start();
    let sid = h.open_session();
    h.set_mode(&sid, "plan");
    h.save_checkpoint(&sid, "# Plan: published\n", 0).unwrap();
    let publication = h.request_publication(&sid);
    let id = publication["publicationId"].clone();
    let path = h.ws().join(publication["relativePath"].as_str().unwrap());
    let approve = json!({ "publicationId": id, "action": "approve" });

    // The approval itself cannot commit: nothing is written, it stays pending.
    let before = h.dump();
    let code = armed("store::commit", "return", || {
        h.code_of("publications.resolve", approve.clone())
    });
    assert_eq!(code, "STORE_PERSISTENCE_FAILED");
    assert_eq!(h.dump(), before);
    assert!(!path.exists(), "written without a committed approval");

    // The approval commits, the file is written, and recording it fails: the call fails, and
    // the row, left `approved`, is settled from the disk by the next call that looks at it.
    // Two commits pass (the plan identity, the approval), the third (completion) fails.
    let code = armed("store::commit", "2*off->return", || {
        h.code_of("publications.resolve", approve.clone())
    });
    assert_eq!(code, "STORE_PERSISTENCE_FAILED");
    assert_eq!(
        fs_err::read_to_string(&path).unwrap(),
        "# Plan: published\n"
    );
    let list = h.call("publications.list", json!({ "sessionId": sid }));
    assert_eq!(list["items"][0]["status"], "completed", "{list}");
    // It blocks nothing: the next publication (an update of the same file) can be asked for.
    h.save_checkpoint(&sid, "# Plan: published\n\nmore\n", 1)
        .unwrap();
    let next = h.request_publication(&sid);
    assert_eq!(next["relativePath"], publication["relativePath"], "{next}");
    // And a restart finds nothing left to reconcile.
    let (_h, started) = h.restart();
    assert_eq!(started.reconciled.len(), 0, "{:?}", started.reconciled);
    scenario.teardown();
}

#[test]
fn a_publication_whose_write_and_failure_both_go_unrecorded_is_settled_as_failed() {
    let scenario = FailScenario::setup();
    let h = Host::start();
    let sid = h.open_session();
    h.set_mode(&sid, "plan");
    h.save_checkpoint(&sid, "# Plan: unwritten\n", 0).unwrap();
    let publication = h.request_publication(&sid);
    let id = publication["publicationId"].clone();
    let path = h.ws().join(publication["relativePath"].as_str().unwrap());
    let approve = json!({ "publicationId": id, "action": "approve" });
    // The approval commits, the write fails, and so does recording the failure.
    fail::cfg("fs::rename", "return").unwrap();
    let code = armed("store::commit", "2*off->return", || {
        h.code_of("publications.resolve", approve.clone())
    });
    fail::remove("fs::rename");
    assert_eq!(code, "STORE_PERSISTENCE_FAILED");
    assert!(!path.exists());
    let list = h.call("publications.list", json!({ "sessionId": sid }));
    assert_eq!(list["items"][0]["status"], "failed", "{list}");
    assert_eq!(
        list["items"][0]["errorCode"], "PUBLISH_WRITE_FAILED",
        "{list}"
    );
    // A new request publishes it.
    let again = h.request_publication(&sid);
    assert_eq!(again["status"], "pending", "{again}");
    scenario.teardown();
}

#[test]
fn a_tool_decision_that_cannot_be_audited_is_never_answered() {
    let scenario = FailScenario::setup();
    let h = Host::start();
    let sid = h.open_session();
    fs_err::write(h.ws().join("a.txt"), "hello\n").unwrap();
    h.call(
        "sessions.configure",
        json!({ "sessionId": sid, "permissionMode": "auto" }),
    );
    let turn = h.begin_turn(&sid);
    let read = json!({ "path": "a.txt" });

    // An allow that cannot be recorded is an error, and grants nothing.
    let code = armed("store::audit::journal", "return", || {
        h.code_of(
            "tools.authorize",
            authorize_params(&sid, &turn, "read-1", "Read", read.clone()),
        )
    });
    assert_eq!(code, "STORE_PERSISTENCE_FAILED");
    let code = h.code_of(
        "tools.execute",
        json!({ "sessionId": sid, "turnId": turn, "toolCallId": "read-1", "tool": "Read", "input": read }),
    );
    assert_eq!(code, "TOOL_NOT_AUTHORIZED", "a tool call ran unaudited");
    // So is a deny (Plan mode refuses Write).
    h.call(
        "turns.end",
        json!({ "sessionId": sid, "turnId": turn, "outcome": "completed" }),
    );
    h.set_mode(&sid, "plan");
    let turn = h.begin_turn(&sid);
    let write = json!({ "path": "b.txt", "content": "x" });
    let code = armed("store::audit::journal", "return", || {
        h.code_of(
            "tools.authorize",
            authorize_params(&sid, &turn, "write-1", "Write", write.clone()),
        )
    });
    assert_eq!(code, "STORE_PERSISTENCE_FAILED");
    assert_eq!(h.audit_calls("tool.allow"), Vec::<String>::new());
    assert_eq!(h.audit_calls("tool.deny"), Vec::<String>::new());

    // Disarmed: the decisions are answered and recorded, and the allowed call runs.
    let denied = h.authorize(&sid, &turn, "write-2", "Write", write);
    assert_eq!(denied["decision"], "deny", "{denied}");
    let allowed = h.authorize(&sid, &turn, "read-2", "Read", read.clone());
    assert_eq!(allowed["decision"], "allow", "{allowed}");
    let ran = h.call(
        "tools.execute",
        json!({ "sessionId": sid, "turnId": turn, "toolCallId": "read-2", "tool": "Read", "input": read }),
    );
    assert!(ran.to_string().contains("hello"), "{ran}");
    assert_eq!(h.audit_calls("tool.allow"), vec!["read-2"]);
    assert_eq!(h.audit_calls("tool.deny"), vec!["write-2"]);

    // The log cannot be written, the journal can: the decision is recorded there, so it is
    // answered, and the log gets it once it can be written again.
    let allowed = armed("store::audit::commit", "return", || {
        h.authorize(&sid, &turn, "read-3", "Read", read.clone())
    });
    assert_eq!(allowed["decision"], "allow", "{allowed}");
    assert_eq!(h.audit_calls("tool.allow"), vec!["read-2", "read-3"]);
    scenario.teardown();
}

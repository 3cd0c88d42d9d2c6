//! Failpoints at the store's commit points (issue 10): a transition whose commit fails reports
//! `STORE_PERSISTENCE_FAILED` and leaves every table exactly as it was, with no event; a failed
//! migration or backup leaves the old version authoritative; a failed audit batch tells its
//! waiters and never wedges the writer. A separate test binary: failpoints are process-global,
//! and every test here holds `FailScenario` (one at a time).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::wildcard_enum_match_arm
)]

use std::path::Path;
use std::sync::Arc;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use fail::FailScenario;
use planhost_core::{
    AuditAction, CheckpointSource, EntryId, Interactivity, ManualClock, Mode, SessionId, Timestamp,
    ToolCallId, TurnId, TurnOrigin,
};
use planhost_store::migrate::{backup_path, user_version};
use planhost_store::{AuditRow, AuditWriter, OpenSession, Store};
use rusqlite::Connection;

fn clock() -> Arc<ManualClock> {
    Arc::new(ManualClock::new(Timestamp(1_000)))
}

fn open(db: &Path) -> Store {
    Store::open(
        db,
        clock(),
        Arc::new(planhost_core::SequentialIds::default()),
    )
    .unwrap()
    .store
}

fn session(store: &mut Store, id: &str) {
    store
        .open_session(
            &OpenSession {
                workspace_root: "/work/repo".into(),
                external_id: None,
                interactivity: Interactivity::Interactive,
                agent: None,
            },
            &SessionId::from(id),
        )
        .unwrap();
}

fn code(e: &planhost_store::StoreError) -> &'static str {
    e.code().as_str()
}

/// Runs `change` with `store::commit` armed: it must fail with the persistence code and leave
/// the database byte for byte as it was, with no event; disarmed, the same change commits.
fn commit_fails_cleanly<T: std::fmt::Debug>(
    store: &mut Store,
    what: &str,
    mut change: impl FnMut(&mut Store) -> planhost_store::Result<T>,
) -> T {
    let _ = store.take_events();
    let before = store.dump().unwrap();
    fail::cfg("store::commit", "return").unwrap();
    let err = change(store).unwrap_err();
    fail::remove("store::commit");
    assert_eq!(code(&err), "STORE_PERSISTENCE_FAILED", "{what}: {err}");
    assert!(
        err.to_string().contains("disk is full"),
        "{what}: the error does not say why: {err}"
    );
    assert_eq!(
        store.dump().unwrap(),
        before,
        "{what}: a failed commit changed state"
    );
    assert!(
        store.take_events().is_empty(),
        "{what}: an event of a failed commit"
    );
    let done = change(store).unwrap();
    assert_ne!(store.dump().unwrap(), before, "{what}: committed nothing");
    done
}

#[test]
fn a_failed_commit_changes_nothing_and_the_next_one_works() {
    let scenario = FailScenario::setup();
    let dir = tempfile::tempdir().unwrap();
    let mut store = open(&dir.path().join("planhost.sqlite"));
    let _ = store.take_events();
    // Opening a session: no row at all.
    let before = store.dump().unwrap();
    let s1 = SessionId::from("s-1");
    fail::cfg("store::commit", "return").unwrap();
    let err = store
        .open_session(
            &OpenSession {
                workspace_root: "/work/repo".into(),
                external_id: Some("pi-1".into()),
                interactivity: Interactivity::Interactive,
                agent: None,
            },
            &s1,
        )
        .unwrap_err();
    fail::remove("store::commit");
    assert_eq!(code(&err), "STORE_PERSISTENCE_FAILED");
    assert_eq!(store.dump().unwrap(), before);
    assert!(store.session(&s1).is_err());
    session(&mut store, "s-1");

    commit_fails_cleanly(&mut store, "set_mode", |s| s.set_mode(&s1, Mode::Plan));
    let turn = commit_fails_cleanly(&mut store, "begin_turn", |s| {
        s.begin_turn(&s1, TurnOrigin::User, None, &TurnId::from("t-1"))
    });
    let branch = vec![EntryId::from("root")];
    let saved = commit_fails_cleanly(&mut store, "save_checkpoint", |s| {
        s.save_checkpoint(
            &s1,
            &branch,
            "# Plan\n",
            Some(0),
            CheckpointSource::Draft,
            None,
        )
    });
    assert_eq!(saved.record.revision, 1, "{saved:?}");
    commit_fails_cleanly(&mut store, "record_audit", |s| {
        s.record_audit(
            planhost_store::AuditSubject {
                session_id: Some(&s1),
                ..Default::default()
            },
            AuditAction::ToolAllow,
            &serde_json::json!({}),
        )
    });
    commit_fails_cleanly(&mut store, "end_turn", |s| s.end_turn(&s1, &turn.id));
    scenario.teardown();
}

#[test]
fn a_fence_whose_commit_fails_opens_nothing_and_the_next_open_fences() {
    let scenario = FailScenario::setup();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("planhost.sqlite");
    {
        let mut store = open(&db);
        session(&mut store, "s-1");
        store
            .begin_turn(
                &SessionId::from("s-1"),
                TurnOrigin::User,
                None,
                &TurnId::from("t-1"),
            )
            .unwrap();
    }
    fail::cfg("store::commit", "return").unwrap();
    let err = Store::open(
        &db,
        clock(),
        Arc::new(planhost_core::SequentialIds::default()),
    )
    .unwrap_err();
    fail::remove("store::commit");
    assert_eq!(code(&err), "STORE_PERSISTENCE_FAILED", "{err}");
    let opened = Store::open(
        &db,
        clock(),
        Arc::new(planhost_core::SequentialIds::default()),
    )
    .unwrap();
    assert_eq!(opened.fence.aborted_turns, vec![TurnId::from("t-1")]);
    scenario.teardown();
}

#[test]
fn a_new_database_whose_creation_fails_stays_empty_and_is_created_next_time() {
    let scenario = FailScenario::setup();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("planhost.sqlite");
    fail::cfg("store::migrate::commit", "return").unwrap();
    let err = Store::open(
        &db,
        clock(),
        Arc::new(planhost_core::SequentialIds::default()),
    )
    .unwrap_err();
    fail::remove("store::migrate::commit");
    assert_eq!(code(&err), "STORE_PERSISTENCE_FAILED", "{err}");
    {
        let conn = Connection::open(&db).unwrap();
        assert_eq!(user_version(&conn).unwrap(), 0);
        let tables: i64 = conn
            .query_row("SELECT count(*) FROM sqlite_schema", [], |r| r.get(0))
            .unwrap();
        assert_eq!(tables, 0, "a half-created schema");
    }
    let mut store = open(&db);
    session(&mut store, "s-1");
    scenario.teardown();
}

fn production_v1(db: &Path) {
    let conn = Connection::open(db).unwrap();
    conn.pragma_update(None, "journal_mode", "WAL").unwrap();
    conn.execute_batch(planhost_store::SCHEMA_V1).unwrap();
    conn.execute(
        "INSERT INTO sessions (id, workspace_root, interactivity, mode, plan_state, permission_mode, \
         created_at, updated_at) VALUES ('s1', '/w', 'interactive', 'plan', 'planning', 'ask', 1, 1)",
        [],
    )
    .unwrap();
    conn.pragma_update(None, "user_version", 1).unwrap();
}

#[test]
fn a_migration_whose_commit_fails_keeps_the_old_version() {
    let scenario = FailScenario::setup();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("planhost.sqlite");
    production_v1(&db);
    fail::cfg("store::migrate::commit", "return").unwrap();
    let err = Store::open(
        &db,
        clock(),
        Arc::new(planhost_core::SequentialIds::default()),
    )
    .unwrap_err();
    fail::remove("store::migrate::commit");
    assert_eq!(code(&err), "STORE_MIGRATION_FAILED", "{err}");
    assert_eq!(user_version(&Connection::open(&db).unwrap()).unwrap(), 1);
    // The backup was written first and is the v1 database.
    let backup = backup_path(&db, 1);
    assert_eq!(
        user_version(&Connection::open(&backup).unwrap()).unwrap(),
        1
    );
    let mut store = open(&db);
    assert_eq!(
        store.session(&SessionId::from("s1")).unwrap().mode,
        Mode::Plan
    );
    scenario.teardown();
}

#[test]
fn a_backup_that_cannot_be_renamed_migrates_nothing() {
    let scenario = FailScenario::setup();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("planhost.sqlite");
    production_v1(&db);
    fail::cfg("store::backup::rename", "return").unwrap();
    let err = Store::open(
        &db,
        clock(),
        Arc::new(planhost_core::SequentialIds::default()),
    )
    .unwrap_err();
    fail::remove("store::backup::rename");
    assert_eq!(code(&err), "STORE_BACKUP_FAILED", "{err}");
    assert_eq!(user_version(&Connection::open(&db).unwrap()).unwrap(), 1);
    let backup = backup_path(&db, 1);
    assert!(!backup.exists(), "a backup at its final name");
    // Next time the stale temp copy is replaced and the migration runs.
    let mut store = open(&db);
    assert_eq!(
        store.session(&SessionId::from("s1")).unwrap().mode,
        Mode::Plan
    );
    assert!(backup.exists());
    let names: Vec<String> = fs_err::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert!(names.is_empty(), "temp backups left: {names:?}");
    scenario.teardown();
}

fn row(call: &str) -> AuditRow {
    AuditRow {
        at: Timestamp(2_000),
        session_id: Some("s-1".into()),
        turn_id: None,
        tool_call_id: Some(ToolCallId::from(call)),
        action: AuditAction::ToolAllow,
        detail: "{}".into(),
    }
}

/// Waits until everything `sink` queued is in the audit log, or for the error that kept it out.
fn flushed(sink: &planhost_store::AuditSink) -> planhost_store::Result<()> {
    let (tx, rx) = mpsc::channel();
    sink.flush(move |r| tx.send(r).unwrap());
    rx.recv_timeout(Duration::from_secs(10)).unwrap()
}

fn audited_calls(store: &mut Store) -> Vec<String> {
    let mut calls: Vec<String> = store
        .audit(Some(&SessionId::from("s-1")), 1_000)
        .unwrap()
        .into_iter()
        .filter(|r| r.action == AuditAction::ToolAllow)
        .filter_map(|r| r.tool_call_id.map(|c| c.0))
        .collect();
    calls.sort();
    calls
}

#[test]
fn a_failed_audit_batch_keeps_its_journaled_rows_and_never_wedges_the_writer() {
    let scenario = FailScenario::setup();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("planhost.sqlite");
    let mut store = open(&db);
    session(&mut store, "s-1");
    let (sink, writer) = AuditWriter::spawn(&db).unwrap();

    sink.record_durable(row("before")).unwrap();
    flushed(&sink).unwrap();
    // The log cannot be written: a decision is still recorded (the journal has it), and the
    // failed batch is reported to whoever waits on it.
    fail::cfg("store::audit::commit", "return").unwrap();
    sink.record_durable(row("while-failing")).unwrap();
    let err = flushed(&sink).unwrap_err();
    assert_eq!(code(&err), "STORE_PERSISTENCE_FAILED", "{err}");
    assert!(err.to_string().contains("not written"), "{err}");
    fail::remove("store::audit::commit");

    // The failed batch's transaction is gone: the host's own connection writes at once
    // (a writer left holding the lock would make this wait out the busy timeout and fail).
    let started = Instant::now();
    store.set_mode(&SessionId::from("s-1"), Mode::Plan).unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "the host waited {:?} for the audit writer's lock",
        started.elapsed()
    );
    // The kept row goes in with the next batch, once, before the newer one.
    sink.record_durable(row("after")).unwrap();
    flushed(&sink).unwrap();
    assert_eq!(
        audited_calls(&mut store),
        vec!["after", "before", "while-failing"]
    );

    // The journal cannot be written: nothing is recorded, and the caller hears it.
    fail::cfg("store::audit::journal", "return").unwrap();
    let err = sink.record_durable(row("refused")).unwrap_err();
    fail::remove("store::audit::journal");
    assert_eq!(code(&err), "STORE_PERSISTENCE_FAILED", "{err}");
    flushed(&sink).unwrap();
    assert_eq!(
        audited_calls(&mut store),
        vec!["after", "before", "while-failing"]
    );
    sink.stop();
    writer.join();
    scenario.teardown();
}

/// planhost killed after a decision was journaled and answered, before the writer put it in the
/// log: the next start puts it there, once, and skips a line a power loss cut short.
#[test]
fn decisions_the_journal_holds_beyond_the_log_are_recorded_at_the_next_start() {
    // Arms nothing, but opens stores: it waits its turn with the tests that arm failpoints.
    let scenario = FailScenario::setup();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("planhost.sqlite");
    let mut store = open(&db);
    session(&mut store, "s-1");
    let (sink, writer) = AuditWriter::spawn(&db).unwrap();
    sink.record_durable(row("logged")).unwrap();
    flushed(&sink).unwrap();
    // The writer is gone (as if killed): these reach only the journal.
    sink.stop();
    writer.join();
    sink.record_durable(row("journaled-1")).unwrap();
    sink.record_durable(row("journaled-2")).unwrap();
    assert_eq!(audited_calls(&mut store), vec!["logged"]);
    let journal = planhost_store::journal_path(&db);
    let mut text = fs_err::read_to_string(&journal).unwrap();
    assert_eq!(text.lines().count(), 3, "{text}");
    text.push_str("{\"seq\":99,\"at\":");
    fs_err::write(&journal, text).unwrap();

    let (sink, writer) = AuditWriter::spawn(&db).unwrap();
    assert_eq!(
        audited_calls(&mut store),
        vec!["journaled-1", "journaled-2", "logged"],
        "each journaled decision is in the log once"
    );
    assert_eq!(fs_err::read_to_string(&journal).unwrap(), "", "emptied");
    // Lines go on after the last readable one.
    sink.record_durable(row("next")).unwrap();
    flushed(&sink).unwrap();
    assert!(
        fs_err::read_to_string(&journal)
            .unwrap()
            .starts_with("{\"seq\":4,"),
    );
    sink.stop();
    writer.join();
    // A start with nothing new changes nothing.
    let (sink, writer) = AuditWriter::spawn(&db).unwrap();
    sink.stop();
    writer.join();
    assert_eq!(
        audited_calls(&mut store),
        vec!["journaled-1", "journaled-2", "logged", "next"]
    );
    scenario.teardown();
}

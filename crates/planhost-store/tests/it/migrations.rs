//! The migration runner, proven on a test-only older schema (there is no older planhost schema).

use std::path::Path;
use std::sync::Arc;

use planhost_core::{ManualClock, Timestamp};
use planhost_store::migrate::{backup_path, migrate, user_version};
use planhost_store::{Migration, MigrationReport, Migrator, Store, StoreError};
use rusqlite::{Connection, Transaction};

/// A "v1" of some older schema: chat-era modes and a settings table.
fn create_old_v1(path: &Path, default_shell: &str) {
    let conn = Connection::open(path).unwrap();
    conn.pragma_update(None, "journal_mode", "WAL").unwrap();
    conn.execute_batch(
        "CREATE TABLE settings (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL);
         CREATE TABLE sessions (id TEXT PRIMARY KEY, mode TEXT NOT NULL);
         INSERT INTO sessions VALUES ('a', 'chat'), ('b', 'agent'), ('c', 'plan');",
    )
    .unwrap();
    conn.execute(
        "INSERT INTO settings VALUES ('default_shell', ?1)",
        [default_shell],
    )
    .unwrap();
    conn.pragma_update(None, "user_version", 1).unwrap();
}

fn rows(conn: &Connection) -> Vec<(String, String)> {
    conn.prepare("SELECT id, mode FROM sessions ORDER BY id")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap()
}

fn step_v1_to_v2(tx: &Transaction<'_>) -> rusqlite::Result<()> {
    // Persisted chat values become plan (seed 000 §7), and a column is added.
    tx.execute_batch(
        "UPDATE sessions SET mode = 'plan' WHERE mode = 'chat';
         ALTER TABLE sessions ADD COLUMN permission_mode TEXT NOT NULL DEFAULT 'ask';",
    )
}

fn step_that_fails_halfway(tx: &Transaction<'_>) -> rusqlite::Result<()> {
    // A destructive statement succeeds, then the step fails: all of it must roll back.
    tx.execute_batch("DROP TABLE sessions; CREATE TABLE sessions (id TEXT);")?;
    tx.execute_batch("INSERT INTO no_such_table VALUES (1)")
}

fn no_create(_: &Transaction<'_>) -> rusqlite::Result<()> {
    Ok(())
}

fn validate_settings(tx: &Transaction<'_>) -> planhost_store::Result<()> {
    planhost_store::settings::validate_all(tx)
}

fn migrator(step: fn(&Transaction<'_>) -> rusqlite::Result<()>) -> Vec<Migration> {
    vec![Migration {
        from: 1,
        apply: step,
    }]
}

#[test]
fn migration_and_rollback_writes_an_exact_backup_then_applies_atomically() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("pi.sqlite");
    create_old_v1(&db, "bash");
    let steps = migrator(step_v1_to_v2);
    let m = Migrator {
        target: 2,
        create: no_create,
        steps: &steps,
        validate: validate_settings,
    };
    let mut conn = Connection::open(&db).unwrap();
    let report = migrate(&mut conn, &db, &m).unwrap();

    let backup = backup_path(&db, 1);
    assert_eq!(
        report,
        MigrationReport::Migrated {
            from: 1,
            to: 2,
            backup: backup.clone()
        }
    );
    assert_eq!(user_version(&conn).unwrap(), 2);
    assert_eq!(rows(&conn)[0], ("a".into(), "plan".into()));

    let copy = Connection::open(&backup).unwrap();
    assert_eq!(user_version(&copy).unwrap(), 1);
    assert_eq!(
        rows(&copy),
        vec![
            ("a".into(), "chat".into()),
            ("b".into(), "agent".into()),
            ("c".into(), "plan".into())
        ]
    );
}

#[test]
fn migration_and_rollback_failure_keeps_the_old_version_authoritative() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("pi.sqlite");
    create_old_v1(&db, "bash");
    let before = rows(&Connection::open(&db).unwrap());
    let steps = migrator(step_that_fails_halfway);
    let m = Migrator {
        target: 2,
        create: no_create,
        steps: &steps,
        validate: validate_settings,
    };
    let mut conn = Connection::open(&db).unwrap();
    let err = migrate(&mut conn, &db, &m).unwrap_err();
    assert_eq!(err.code().as_str(), "STORE_MIGRATION_FAILED");
    assert!(err.to_string().contains("v1 is unchanged"), "{err}");
    drop(conn);

    let original = Connection::open(&db).unwrap();
    assert_eq!(user_version(&original).unwrap(), 1);
    assert_eq!(rows(&original), before);
    let copy = Connection::open(backup_path(&db, 1)).unwrap();
    assert_eq!(user_version(&copy).unwrap(), 1);
    assert_eq!(rows(&copy), before);
}

#[test]
fn invalid_settings_fail_closed_during_migration() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("pi.sqlite");
    create_old_v1(&db, "zsh");
    let steps = migrator(step_v1_to_v2);
    let m = Migrator {
        target: 2,
        create: no_create,
        steps: &steps,
        validate: validate_settings,
    };
    let mut conn = Connection::open(&db).unwrap();
    let err = migrate(&mut conn, &db, &m).unwrap_err();
    assert_eq!(err.code().as_str(), "STORE_MIGRATION_FAILED");
    assert!(err.to_string().contains("default_shell"), "{err}");
    assert_eq!(user_version(&conn).unwrap(), 1);
    assert_eq!(
        rows(&conn)[0],
        ("a".into(), "chat".into()),
        "the chat → plan mapping rolled back"
    );
}

#[test]
fn a_newer_schema_is_refused_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("planhost.sqlite");
    {
        let conn = Connection::open(&db).unwrap();
        conn.pragma_update(None, "user_version", 99).unwrap();
    }
    let clock = Arc::new(ManualClock::new(Timestamp(0)));
    let err = Store::open(
        &db,
        clock,
        Arc::new(planhost_core::SequentialIds::default()),
    )
    .unwrap_err();
    assert!(
        matches!(
            err,
            StoreError::SchemaTooNew {
                found: 99,
                supported: planhost_store::CURRENT_VERSION
            }
        ),
        "{err}"
    );
    assert_eq!(user_version(&Connection::open(&db).unwrap()).unwrap(), 99);
}

#[test]
fn fresh_database_is_created_at_the_current_version_with_wal() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("planhost.sqlite");
    let clock = Arc::new(ManualClock::new(Timestamp(0)));
    let opened = Store::open(
        &db,
        clock.clone(),
        Arc::new(planhost_core::SequentialIds::default()),
    )
    .unwrap();
    assert_eq!(opened.migration, MigrationReport::Created);
    drop(opened);
    let conn = Connection::open(&db).unwrap();
    assert_eq!(
        user_version(&conn).unwrap(),
        planhost_store::CURRENT_VERSION
    );
    let mode: String = conn
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
    assert_eq!(
        Store::open(
            &db,
            clock,
            Arc::new(planhost_core::SequentialIds::default())
        )
        .unwrap()
        .migration,
        MigrationReport::Current
    );
}

#[test]
fn invalid_stored_settings_refuse_to_open() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("planhost.sqlite");
    let clock = Arc::new(ManualClock::new(Timestamp(0)));
    drop(
        Store::open(
            &db,
            clock.clone(),
            Arc::new(planhost_core::SequentialIds::default()),
        )
        .unwrap(),
    );
    Connection::open(&db)
        .unwrap()
        .execute(
            "INSERT INTO settings VALUES ('default_permission_mode', 'yolo')",
            [],
        )
        .unwrap();
    let err = Store::open(
        &db,
        clock,
        Arc::new(planhost_core::SequentialIds::default()),
    )
    .unwrap_err();
    assert_eq!(err.code().as_str(), "SETTINGS_INVALID");
}

#[test]
fn a_foreign_database_is_not_adopted() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("other.sqlite");
    Connection::open(&db)
        .unwrap()
        .execute_batch("CREATE TABLE t (x);")
        .unwrap();
    let clock = Arc::new(ManualClock::new(Timestamp(0)));
    assert_eq!(
        Store::open(
            &db,
            clock,
            Arc::new(planhost_core::SequentialIds::default())
        )
        .unwrap_err()
        .code()
        .as_str(),
        "STORE_CORRUPT"
    );
}

/// The real steps from v1 to the current version (v7): a database written by the v1 schema, with live data, is backed up
/// exactly and gains the checkpoint tables in one transaction; its rows are unchanged.
#[test]
fn production_v1_database_migrates_to_current_with_a_backup() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("planhost.sqlite");
    {
        let conn = Connection::open(&db).unwrap();
        conn.pragma_update(None, "journal_mode", "WAL").unwrap();
        conn.execute_batch(planhost_store::SCHEMA_V1).unwrap();
        conn.execute(
            "INSERT INTO sessions (id, workspace_root, interactivity, mode, plan_state, permission_mode, \
             created_at, updated_at) VALUES ('s1', '/w', 'interactive', 'plan', 'planning', 'ask', 1, 1)",
            [],
        )
        .unwrap();
        conn.execute("INSERT INTO settings VALUES ('default_shell', 'bash')", [])
            .unwrap();
        conn.pragma_update(None, "user_version", 1).unwrap();
    }
    let clock = Arc::new(ManualClock::new(Timestamp(0)));
    let opened = Store::open(
        &db,
        clock,
        Arc::new(planhost_core::SequentialIds::default()),
    )
    .unwrap();
    let backup = backup_path(&db, 1);
    assert_eq!(
        opened.migration,
        MigrationReport::Migrated {
            from: 1,
            to: planhost_store::CURRENT_VERSION,
            backup: backup.clone()
        }
    );
    let mut store = opened.store;
    assert_eq!(
        store.session(&"s1".into()).unwrap().mode,
        planhost_core::Mode::Plan
    );
    drop(store);
    let conn = Connection::open(&db).unwrap();
    assert_eq!(
        user_version(&conn).unwrap(),
        planhost_store::CURRENT_VERSION
    );
    let tables: i64 = conn
        .query_row(
            "SELECT count(*) FROM sqlite_schema WHERE name = 'plan_checkpoints'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(tables, 1);
    let copy = Connection::open(&backup).unwrap();
    assert_eq!(user_version(&copy).unwrap(), 1);
    let v1_tables: i64 = copy
        .query_row(
            "SELECT count(*) FROM sqlite_schema WHERE name = 'plan_checkpoints'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(v1_tables, 0, "the backup is the v1 database as it was");
}

/// After the migration a v1 turn row has no policy pin, and a new turn gets one.
#[test]
fn migrated_turns_table_gains_policy_pins() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("planhost.sqlite");
    {
        let conn = Connection::open(&db).unwrap();
        conn.execute_batch(planhost_store::SCHEMA_V1).unwrap();
        conn.pragma_update(None, "user_version", 1).unwrap();
    }
    let clock = Arc::new(ManualClock::new(Timestamp(0)));
    let mut store = Store::open(
        &db,
        clock,
        Arc::new(planhost_core::SequentialIds::default()),
    )
    .unwrap()
    .store;
    let s = store
        .open_session(
            &planhost_store::OpenSession {
                workspace_root: "/w".into(),
                external_id: None,
                interactivity: planhost_core::Interactivity::Interactive,
                agent: None,
            },
            &"s".into(),
        )
        .unwrap();
    store
        .begin_turn(&s.id, planhost_core::TurnOrigin::User, None, &"t".into())
        .unwrap();
    let pin = store.policy_snapshot(&s.id).unwrap().turn_pin.unwrap();
    assert_eq!(pin.permission, planhost_core::EffectivePermission::Ask);
    assert_eq!(pin.preset, planhost_core::PolicyPreset::Host);
}

/// v6 → v7 from a v1 database: a session from before serves pi (the only client there was), a
/// new one records the agent it names, reopening it with another agent is refused and without
/// one keeps it, and the column accepts only the known agents.
#[test]
fn migrated_sessions_serve_pi_and_new_ones_record_their_agent() {
    use planhost_core::{Agent, Interactivity};
    use planhost_store::OpenSession;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("planhost.sqlite");
    {
        let conn = Connection::open(&db).unwrap();
        conn.execute_batch(planhost_store::SCHEMA_V1).unwrap();
        conn.execute(
            "INSERT INTO sessions (id, external_id, workspace_root, interactivity, mode, plan_state, \
             permission_mode, created_at, updated_at) \
             VALUES ('old', 'pi-1', '/w', 'interactive', 'agent', 'inactive', 'ask', 1, 1)",
            [],
        )
        .unwrap();
        conn.pragma_update(None, "user_version", 1).unwrap();
    }
    let clock = Arc::new(ManualClock::new(Timestamp(0)));
    let mut store = Store::open(
        &db,
        clock,
        Arc::new(planhost_core::SequentialIds::default()),
    )
    .unwrap()
    .store;
    assert_eq!(store.session(&"old".into()).unwrap().agent, Agent::Pi);
    assert_eq!(
        store.policy_snapshot(&"old".into()).unwrap().agent,
        Agent::Pi
    );
    let open = |external: &str, agent| OpenSession {
        workspace_root: "/w".into(),
        external_id: Some(external.into()),
        interactivity: Interactivity::Interactive,
        agent,
    };
    // The pi session reopened by a client that names pi, or names nothing.
    assert_eq!(
        store
            .open_session(&open("pi-1", Some(Agent::Pi)), &"x".into())
            .unwrap()
            .id,
        "old"
    );
    assert_eq!(
        store
            .open_session(&open("pi-1", None), &"x".into())
            .unwrap()
            .id,
        "old"
    );
    let codex = store
        .open_session(&open("codex-1", Some(Agent::Codex)), &"new".into())
        .unwrap();
    assert_eq!(codex.agent, Agent::Codex);
    assert_eq!(
        store.policy_snapshot(&"new".into()).unwrap().agent,
        Agent::Codex
    );
    assert_eq!(
        store
            .open_session(&open("codex-1", None), &"y".into())
            .unwrap()
            .agent,
        Agent::Codex
    );
    let err = store
        .open_session(&open("codex-1", Some(Agent::ClaudeCode)), &"z".into())
        .unwrap_err();
    assert_eq!(err.code().as_str(), "SESSION_AGENT_MISMATCH");
    assert_eq!(store.session(&"new".into()).unwrap().agent, Agent::Codex);
    drop(store);
    let conn = Connection::open(&db).unwrap();
    let refused = conn.execute("UPDATE sessions SET agent = 'cursor' WHERE id = 'new'", []);
    assert!(
        refused.is_err(),
        "an agent outside the set is refused by the schema"
    );
}

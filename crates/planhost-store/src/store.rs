//! The store handle: one connection, one writer, one transaction per transition.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use planhost_core::{Clock, Event, IdSource};
use rusqlite::{Connection, OpenFlags, Transaction, TransactionBehavior};

use crate::fence::FenceReport;
use crate::migrate::{Migration, MigrationReport, Migrator, migrate};
use crate::schema::{
    CURRENT_VERSION, SCHEMA_V1, SCHEMA_V2, SCHEMA_V3, SCHEMA_V4, SCHEMA_V5, SCHEMA_V6, SCHEMA_V7,
    SCHEMA_V8, SCHEMA_V9,
};
use crate::tx::Tx;
use crate::{Result, settings};

/// The production migrator: fresh databases get every schema at once; v1 databases step to v2.
pub const MIGRATOR: Migrator<'static> = Migrator {
    target: CURRENT_VERSION,
    create: create_current,
    steps: &[
        Migration {
            from: 1,
            apply: v1_to_v2,
        },
        Migration {
            from: 2,
            apply: v2_to_v3,
        },
        Migration {
            from: 3,
            apply: v3_to_v4,
        },
        Migration {
            from: 4,
            apply: v4_to_v5,
        },
        Migration {
            from: 5,
            apply: v5_to_v6,
        },
        Migration {
            from: 6,
            apply: v6_to_v7,
        },
        Migration {
            from: 7,
            apply: v7_to_v8,
        },
        Migration {
            from: 8,
            apply: v8_to_v9,
        },
    ],
    validate: validate_current,
};

fn create_current(tx: &Transaction<'_>) -> rusqlite::Result<()> {
    tx.execute_batch(SCHEMA_V1)?;
    tx.execute_batch(SCHEMA_V2)?;
    tx.execute_batch(SCHEMA_V3)?;
    tx.execute_batch(SCHEMA_V4)?;
    tx.execute_batch(SCHEMA_V5)?;
    tx.execute_batch(SCHEMA_V6)?;
    tx.execute_batch(SCHEMA_V7)?;
    tx.execute_batch(SCHEMA_V8)?;
    tx.execute_batch(SCHEMA_V9)
}

fn v8_to_v9(tx: &Transaction<'_>) -> rusqlite::Result<()> {
    tx.execute_batch(SCHEMA_V9)
}

fn v7_to_v8(tx: &Transaction<'_>) -> rusqlite::Result<()> {
    tx.execute_batch(SCHEMA_V8)
}

fn v6_to_v7(tx: &Transaction<'_>) -> rusqlite::Result<()> {
    tx.execute_batch(SCHEMA_V7)
}

fn v5_to_v6(tx: &Transaction<'_>) -> rusqlite::Result<()> {
    tx.execute_batch(SCHEMA_V6)
}

fn v4_to_v5(tx: &Transaction<'_>) -> rusqlite::Result<()> {
    tx.execute_batch(SCHEMA_V5)
}

fn v3_to_v4(tx: &Transaction<'_>) -> rusqlite::Result<()> {
    tx.execute_batch(SCHEMA_V4)
}

fn v2_to_v3(tx: &Transaction<'_>) -> rusqlite::Result<()> {
    tx.execute_batch(SCHEMA_V3)
}

fn v1_to_v2(tx: &Transaction<'_>) -> rusqlite::Result<()> {
    tx.execute_batch(SCHEMA_V2)
}

fn validate_current(tx: &Transaction<'_>) -> Result<()> {
    settings::validate_all(tx)
}

/// The database holds every plan and decision: only its owner may read it. SQLite creates the
/// `-wal` and `-shm` files with the database file's mode, so creating the database `0600`
/// covers them; files an older planhost left `0644` are tightened here too.
fn owner_only(path: &Path) -> Result<()> {
    use fs_err::os::unix::fs::OpenOptionsExt;
    use std::os::unix::fs::PermissionsExt;
    let io = |e: std::io::Error| crate::StoreError::Io(e);
    fs_err::OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(path)
        .map_err(io)?;
    for suffix in ["", "-wal", "-shm"] {
        let file = PathBuf::from(format!("{}{suffix}", path.display()));
        match fs_err::metadata(&file) {
            Ok(meta) if meta.permissions().mode() & 0o077 != 0 => {
                fs_err::set_permissions(&file, std::fs::Permissions::from_mode(0o600))
                    .map_err(io)?;
            }
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(io(e)),
        }
    }
    Ok(())
}

/// planhost's durable state. Not `Sync`: the host gives it one writer thread.
#[derive(Debug)]
pub struct Store {
    pub(crate) conn: Connection,
    pub(crate) clock: Arc<dyn Clock>,
    ids: Arc<dyn IdSource>,
    path: PathBuf,
    events: Vec<Event>,
}

/// What [`Store::open`] did before returning.
#[derive(Debug)]
pub struct Opened {
    /// The open store, already fenced.
    pub store: Store,
    /// What happened to the schema.
    pub migration: MigrationReport,
    /// What the startup fence interrupted.
    pub fence: FenceReport,
}

/// How many prepared statements the connection keeps: more than the store has.
const STATEMENT_CACHE: usize = 256;

impl Store {
    /// Opens (creating if needed) the database at `path`, migrates it with a backup, validates the
    /// settings (fail closed), and runs the startup fence — all before anything can be served.
    pub fn open(path: &Path, clock: Arc<dyn Clock>, ids: Arc<dyn IdSource>) -> Result<Opened> {
        Self::open_with(path, clock, ids, &MIGRATOR)
    }

    /// [`Store::open`] with another schema history; tests use it to prove the migration runner.
    pub fn open_with(
        path: &Path,
        clock: Arc<dyn Clock>,
        ids: Arc<dyn IdSource>,
        migrator: &Migrator<'_>,
    ) -> Result<Opened> {
        owner_only(path)?;
        let mut conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE
                | OpenFlags::SQLITE_OPEN_CREATE
                | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        // WAL for concurrent readers; FULL so every committed transition survives power loss.
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "FULL")?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        conn.busy_timeout(std::time::Duration::from_secs(5))?;
        // The store prepares about sixty distinct statements; rusqlite keeps 16 by default,
        // and a hook's reopen-and-authorize then parsed SQL on every call.
        conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
        let migration = migrate(&mut conn, path, migrator)?;
        let mut store = Store {
            conn,
            clock,
            ids,
            path: path.to_owned(),
            events: Vec::new(),
        };
        let fence = store.fence()?;
        Ok(Opened {
            store,
            migration,
            fence,
        })
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The clock this store stamps rows with.
    pub fn clock(&self) -> &Arc<dyn Clock> {
        &self.clock
    }

    /// The SQLite library version.
    pub fn sqlite_version() -> &'static str {
        rusqlite::version()
    }

    /// Events committed since the last call, in commit order.
    pub fn take_events(&mut self) -> Vec<Event> {
        std::mem::take(&mut self.events)
    }

    /// Runs `f` in one IMMEDIATE transaction; commits if it succeeds, rolls back otherwise.
    /// Events are published only after the commit.
    pub(crate) fn transact<T>(&mut self, f: impl FnOnce(&mut Tx<'_>) -> Result<T>) -> Result<T> {
        let now = self.clock.now();
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let mut ctx = Tx {
            tx,
            now,
            ids: Arc::clone(&self.ids),
            events: Vec::new(),
        };
        let value = f(&mut ctx)?;
        let Tx { tx, events, .. } = ctx;
        fail_point!("store::commit", |_| Err(crate::tx::injected(
            "store::commit"
        )));
        tx.commit()?;
        self.events.extend(events);
        Ok(value)
    }

    /// Runs `f` in a read transaction that is always rolled back.
    pub(crate) fn read<T>(&mut self, f: impl FnOnce(&Tx<'_>) -> Result<T>) -> Result<T> {
        let now = self.clock.now();
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Deferred)?;
        let ctx = Tx {
            tx,
            now,
            ids: Arc::clone(&self.ids),
            events: Vec::new(),
        };
        let value = f(&ctx)?;
        ctx.tx.rollback()?;
        Ok(value)
    }
}

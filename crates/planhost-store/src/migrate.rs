//! The `user_version` migration runner (seed 000 §7): checkpoint the WAL, write an exact readable
//! `<db>.v<N>.bak` before any destructive step, apply one atomic transaction that validates the
//! settings and writes `user_version` last, and fail closed leaving the old version authoritative.

use std::path::{Path, PathBuf};

use rusqlite::{Connection, MAIN_DB, OpenFlags, Transaction, TransactionBehavior};

use crate::{Result, StoreError};

/// One step from `from` to `from + 1`.
#[derive(Debug, Clone, Copy)]
pub struct Migration {
    /// The version this step starts from.
    pub from: u32,
    /// Applies the step inside the migration transaction.
    pub apply: fn(&Transaction<'_>) -> rusqlite::Result<()>,
}

/// A schema's history: how to create it fresh, how to step older versions up, how to validate.
#[derive(Debug, Clone, Copy)]
pub struct Migrator<'a> {
    /// The version this build writes.
    pub target: u32,
    /// Creates the target schema in an empty database.
    pub create: fn(&Transaction<'_>) -> rusqlite::Result<()>,
    /// Steps from older versions, one per version.
    pub steps: &'a [Migration],
    /// Checks the migrated data (settings, modes); an error aborts the transaction.
    pub validate: fn(&Transaction<'_>) -> Result<()>,
}

/// What opening did to the schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MigrationReport {
    /// The database was empty and was created at the target version.
    Created,
    /// The database was already at the target version.
    Current,
    /// The database was migrated; the exact pre-migration copy is at `backup`.
    Migrated {
        /// Version before.
        from: u32,
        /// Version after.
        to: u32,
        /// The backup file.
        backup: PathBuf,
    },
}

/// Reads `PRAGMA user_version`.
pub fn user_version(conn: &Connection) -> Result<u32> {
    Ok(conn.query_row("PRAGMA user_version", [], |r| r.get::<_, u32>(0))?)
}

/// The backup path for version `from` of `db`: `<db>.v<from>.bak`.
pub fn backup_path(db: &Path, from: u32) -> PathBuf {
    let mut name = db.as_os_str().to_owned();
    name.push(format!(".v{from}.bak"));
    PathBuf::from(name)
}

/// Brings `conn` (the database at `db_path`) to `migrator.target`, or fails leaving it as it was.
pub fn migrate(
    conn: &mut Connection,
    db_path: &Path,
    migrator: &Migrator<'_>,
) -> Result<MigrationReport> {
    let found = user_version(conn)?;
    if found > migrator.target {
        return Err(StoreError::SchemaTooNew {
            found,
            supported: migrator.target,
        });
    }
    if found == migrator.target {
        let tx = conn.transaction_with_behavior(TransactionBehavior::Deferred)?;
        (migrator.validate)(&tx)?;
        tx.rollback()?;
        return Ok(MigrationReport::Current);
    }
    if found == 0 {
        let tables: i64 = conn.query_row(
            "SELECT count(*) FROM sqlite_schema WHERE name NOT LIKE 'sqlite_%'",
            [],
            |r| r.get(0),
        )?;
        if tables != 0 {
            return Err(crate::error::corrupt(
                "sqlite_schema",
                "user_version is 0 but the database has tables: not a planhost database",
            ));
        }
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        (migrator.create)(&tx)?;
        (migrator.validate)(&tx)?;
        tx.pragma_update(None, "user_version", migrator.target)?;
        fail_point!("store::migrate::commit", |_| Err(crate::tx::injected(
            "store::migrate::commit"
        )));
        tx.commit()?;
        return Ok(MigrationReport::Created);
    }

    let backup = write_backup(conn, db_path, found)?;
    let outcome = apply_steps(conn, found, migrator);
    match outcome {
        Ok(()) => Ok(MigrationReport::Migrated {
            from: found,
            to: migrator.target,
            backup,
        }),
        Err(error) => Err(StoreError::MigrationFailed {
            from: found,
            to: migrator.target,
            backup: backup.display().to_string(),
            reason: error.to_string(),
        }),
    }
}

fn apply_steps(conn: &mut Connection, found: u32, migrator: &Migrator<'_>) -> Result<()> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let mut version = found;
    while version < migrator.target {
        let step = migrator
            .steps
            .iter()
            .find(|s| s.from == version)
            .ok_or_else(|| {
                crate::error::corrupt("migrations", format!("no migration from v{version}"))
            })?;
        (step.apply)(&tx)?;
        version += 1;
    }
    (migrator.validate)(&tx)?;
    // Written last: until this commits, the old version is the one on disk.
    tx.pragma_update(None, "user_version", migrator.target)?;
    fail_point!("store::migrate::commit", |_| Err(crate::tx::injected(
        "store::migrate::commit"
    )));
    tx.commit()?;
    Ok(())
}

/// Checkpoints the WAL into the main file, then writes an exact copy next to it through SQLite's
/// online backup, to a temporary name renamed into place once it is complete and synced.
fn write_backup(conn: &Connection, db_path: &Path, version: u32) -> Result<PathBuf> {
    let path = backup_path(db_path, version);
    let failed = |reason: String| StoreError::BackupFailed {
        path: path.display().to_string(),
        reason,
    };
    conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| {
        r.get::<_, i64>(0)
    })?;
    let mut tmp = path.clone().into_os_string();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    if tmp.exists() {
        fs_err::remove_file(&tmp).map_err(|e| failed(e.to_string()))?;
    }
    conn.backup(MAIN_DB, &tmp, None::<fn(rusqlite::backup::Progress)>)
        .map_err(|e| failed(e.to_string()))?;
    {
        // The copy must open and say the version it was taken at.
        let copy = Connection::open_with_flags(&tmp, OpenFlags::SQLITE_OPEN_READ_ONLY)
            .map_err(|e| failed(e.to_string()))?;
        let copied = user_version(&copy).map_err(|e| failed(e.to_string()))?;
        if copied != version {
            return Err(failed(format!(
                "backup reports v{copied}, expected v{version}"
            )));
        }
    }
    let file = fs_err::File::open(&tmp).map_err(|e| failed(e.to_string()))?;
    file.sync_all().map_err(|e| failed(e.to_string()))?;
    fail_point!("store::backup::rename", |_| Err(failed(
        "failpoint store::backup::rename: no space left on device".into()
    )));
    fs_err::rename(&tmp, &path).map_err(|e| failed(e.to_string()))?;
    if let Some(dir) = path.parent() {
        let dir = if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir
        };
        fs_err::File::open(dir)
            .and_then(|d| d.sync_all())
            .map_err(|e| failed(e.to_string()))?;
    }
    Ok(path)
}

//! Group-committed audit rows for tool decisions (allow and deny), off the host thread.
//!
//! State transitions commit with `synchronous=FULL` on the host's own connection. A tool
//! decision that changes no state is only a record of what was decided; waiting an fsync for it
//! would put a disk flush on the path of every tool call. So these rows go to a second
//! connection on its own thread, batched, with `synchronous=NORMAL` (in WAL mode: durable at the
//! next checkpoint; a power loss can drop the last few decision rows, never a state change).

use std::path::Path;
use std::sync::mpsc;
use std::thread::JoinHandle;

use planhost_core::{SessionId, Timestamp, ToolCallId, TurnId};
use rusqlite::{Connection, params};

/// Largest batch in one transaction: bounds how long the writer holds SQLite's write lock.
const MAX_BATCH: usize = 512;
/// How long the first row of a batch waits for company: one commit per few milliseconds
/// instead of one per tool call keeps the writer off the CPU the tool calls need.
const GATHER: std::time::Duration = std::time::Duration::from_millis(5);

/// One decision to record.
#[derive(Debug, Clone)]
pub struct AuditRow {
    /// When.
    pub at: Timestamp,
    /// Session.
    pub session_id: Option<SessionId>,
    /// Turn.
    pub turn_id: Option<TurnId>,
    /// Tool call.
    pub tool_call_id: Option<ToolCallId>,
    /// e.g. `tool.allow`.
    pub action: planhost_core::AuditAction,
    /// JSON detail.
    pub detail: String,
}

/// Told once whether a confirmed row committed; dropped untold (the writer stopped first, or
/// its thread died), it tells the caller the row was not recorded.
struct Done(Option<Box<dyn FnOnce(crate::Result<()>) + Send>>);

impl Done {
    fn tell(mut self, result: crate::Result<()>) {
        if let Some(done) = self.0.take() {
            done(result);
        }
    }
}

impl Drop for Done {
    fn drop(&mut self) {
        if let Some(done) = self.0.take() {
            done(Err(unrecorded(
                rusqlite::ffi::SQLITE_ABORT,
                "the audit writer stopped before this row was written".into(),
            )));
        }
    }
}

enum Msg {
    Row(AuditRow, Option<Done>),
    Stop,
}

/// The sending side; cheap to clone. Rows sent after the writer stopped are logged and dropped.
#[derive(Debug, Clone)]
pub struct AuditSink {
    tx: mpsc::Sender<Msg>,
}

/// The writer thread; dropping every sink ends it after it wrote what was queued.
#[derive(Debug)]
pub struct AuditWriter {
    thread: JoinHandle<()>,
}

impl AuditWriter {
    /// Starts the writer on its own connection to the database at `path`.
    pub fn spawn(path: &Path) -> crate::Result<(AuditSink, AuditWriter)> {
        let conn = Connection::open(path)?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        // SQLite's automatic checkpoint runs inside COMMIT, that is, before a confirmed row's
        // caller hears back. This connection checkpoints itself after telling them (see `run`).
        conn.pragma_update(None, "wal_autocheckpoint", 0)?;
        conn.busy_timeout(std::time::Duration::from_secs(10))?;
        let (tx, rx) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("planhost-audit".into())
            .spawn(move || run(&conn, &rx))
            .map_err(|e| crate::error::corrupt("audit_log", e))?;
        Ok((AuditSink { tx }, AuditWriter { thread }))
    }

    /// Waits until every row queued before [`AuditSink::stop`] (or before every sink was
    /// dropped) is written.
    pub fn join(self) {
        let _ = self.thread.join();
    }
}

impl AuditSink {
    /// Queues a row; never blocks.
    pub fn record(&self, row: AuditRow) {
        if self.tx.send(Msg::Row(row, None)).is_err() {
            tracing::error!("audit writer stopped; a decision row was not recorded");
        }
    }

    /// Queues a row and calls `done` exactly once: `Ok` when the row's batch committed, or the
    /// error (`STORE_PERSISTENCE_FAILED`) that kept it out — for a decision that must not be
    /// acted on unrecorded. A confirmed row ends the gathering of its batch, so it waits for one
    /// commit (no fsync: `synchronous=NORMAL`), never the gather window.
    pub fn record_confirmed(
        &self,
        row: AuditRow,
        done: impl FnOnce(crate::Result<()>) + Send + 'static,
    ) {
        let done = Done(Some(Box::new(done)));
        // The row comes back when the writer is gone; dropping it tells `done`.
        let _unsent = self.tx.send(Msg::Row(row, Some(done)));
    }

    /// Asks the writer to finish what is queued and stop, even while other sinks exist.
    pub fn stop(&self) {
        let _ = self.tx.send(Msg::Stop);
    }
}

/// Committed batches between two of the writer's own WAL checkpoints: a batch adds a few pages,
/// so this keeps the WAL near SQLite's default of 1,000 pages.
const CHECKPOINT_EVERY: u32 = 256;

fn run(conn: &Connection, rx: &mpsc::Receiver<Msg>) {
    let mut stopping = false;
    let mut since_checkpoint = 0;
    while !stopping {
        let first = match rx.recv() {
            Ok(Msg::Row(row, done)) => (row, done),
            Ok(Msg::Stop) | Err(_) => return,
        };
        // Someone waits on a confirmed row: take only what is already queued.
        let mut waited_on = first.1.is_some();
        let mut batch = vec![first];
        let until = std::time::Instant::now() + GATHER;
        while batch.len() < MAX_BATCH {
            let left = if waited_on {
                std::time::Duration::ZERO
            } else {
                until.saturating_duration_since(std::time::Instant::now())
            };
            match rx.recv_timeout(left) {
                Ok(Msg::Row(row, done)) => {
                    waited_on |= done.is_some();
                    batch.push((row, done));
                }
                Ok(Msg::Stop) => {
                    stopping = true;
                    break;
                }
                Err(_) => break,
            }
        }
        let written = write(conn, &batch);
        if let Err(error) = &written {
            tracing::error!(%error, rows = batch.len(), "could not write audit rows");
        }
        for (_, done) in batch {
            if let Some(done) = done {
                done.tell(match &written {
                    Ok(()) => Ok(()),
                    Err(error) => Err(unrecorded(
                        error
                            .sqlite_error()
                            .map_or(rusqlite::ffi::SQLITE_IOERR, |e| e.extended_code),
                        format!("the audit row was not recorded: {error}"),
                    )),
                });
            }
        }
        if written.is_ok() {
            since_checkpoint += 1;
        }
        // After the callers heard back, so the checkpoint's copy and fsync are off their path.
        if since_checkpoint >= CHECKPOINT_EVERY {
            since_checkpoint = 0;
            if let Err(error) = conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(())) {
                tracing::warn!(%error, "audit WAL checkpoint failed");
            }
        }
    }
}

/// A row that did not reach the database, as the store's persistence error.
fn unrecorded(code: std::ffi::c_int, reason: String) -> crate::StoreError {
    crate::StoreError::Sqlite(rusqlite::Error::SqliteFailure(
        rusqlite::ffi::Error::new(code),
        Some(reason),
    ))
}

fn write(conn: &Connection, batch: &[(AuditRow, Option<Done>)]) -> rusqlite::Result<()> {
    conn.execute_batch("BEGIN IMMEDIATE")?;
    let result = (|| {
        let mut stmt = conn.prepare_cached(
            "INSERT INTO audit_log (at, session_id, turn_id, tool_call_id, proposal_id, action, detail) \
             VALUES (?1, ?2, ?3, ?4, NULL, ?5, ?6)",
        )?;
        for (row, _) in batch {
            stmt.execute(params![
                row.at.0,
                row.session_id.as_ref().map(SessionId::as_str),
                row.turn_id.as_ref().map(TurnId::as_str),
                row.tool_call_id.as_ref().map(ToolCallId::as_str),
                row.action.as_str(),
                row.detail
            ])?;
        }
        Ok(())
    })();
    let result = result.and_then(|()| {
        fail_point!("store::audit::commit", |_| Err(crate::tx::injected_sqlite(
            "store::audit::commit"
        )));
        conn.execute_batch("COMMIT")
    });
    // A failed COMMIT (SQLITE_FULL, an I/O error) can leave the transaction open, holding the
    // write lock: end it, or no later batch and no transition of the host could write.
    if result.is_err() && !conn.is_autocommit() {
        let _ = conn.execute_batch("ROLLBACK");
    }
    result
}

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

use planhost_core::Timestamp;
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
    pub session_id: Option<String>,
    /// Turn.
    pub turn_id: Option<String>,
    /// Tool call.
    pub tool_call_id: Option<String>,
    /// e.g. `tool.allow`.
    pub action: planhost_core::AuditAction,
    /// JSON detail.
    pub detail: String,
}

enum Msg {
    Row(AuditRow),
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
        if self.tx.send(Msg::Row(row)).is_err() {
            tracing::error!("audit writer stopped; a decision row was not recorded");
        }
    }

    /// Asks the writer to finish what is queued and stop, even while other sinks exist.
    pub fn stop(&self) {
        let _ = self.tx.send(Msg::Stop);
    }
}

fn run(conn: &Connection, rx: &mpsc::Receiver<Msg>) {
    let mut stopping = false;
    while !stopping {
        let first = match rx.recv() {
            Ok(Msg::Row(row)) => row,
            Ok(Msg::Stop) | Err(_) => return,
        };
        let mut batch = vec![first];
        let until = std::time::Instant::now() + GATHER;
        while batch.len() < MAX_BATCH {
            let left = until.saturating_duration_since(std::time::Instant::now());
            match rx.recv_timeout(left) {
                Ok(Msg::Row(row)) => batch.push(row),
                Ok(Msg::Stop) => {
                    stopping = true;
                    break;
                }
                Err(_) => break,
            }
        }
        if let Err(error) = write(conn, &batch) {
            tracing::error!(%error, rows = batch.len(), "could not write audit rows");
        }
    }
}

fn write(conn: &Connection, batch: &[AuditRow]) -> rusqlite::Result<()> {
    conn.execute_batch("BEGIN IMMEDIATE")?;
    let result = (|| {
        let mut stmt = conn.prepare_cached(
            "INSERT INTO audit_log (at, session_id, turn_id, tool_call_id, proposal_id, action, detail) \
             VALUES (?1, ?2, ?3, ?4, NULL, ?5, ?6)",
        )?;
        for row in batch {
            stmt.execute(params![
                row.at.0,
                row.session_id,
                row.turn_id,
                row.tool_call_id,
                row.action.as_str(),
                row.detail
            ])?;
        }
        Ok(())
    })();
    match result {
        Ok(()) => conn.execute_batch("COMMIT"),
        Err(error) => {
            let _ = conn.execute_batch("ROLLBACK");
            Err(error)
        }
    }
}

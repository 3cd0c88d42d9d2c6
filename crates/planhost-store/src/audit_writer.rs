//! Audit rows for tool decisions (allow and deny), off the host thread, and the decision
//! journal that lets a decision be answered as soon as it is recorded.
//!
//! State transitions commit with `synchronous=FULL` on the host's own connection. A tool
//! decision changes no state: it is a record of what was decided, and it must exist before the
//! decision is acted on. Two ways to record one:
//!
//! - [`AuditSink::record_durable`] appends the row to the decision journal (`<db>-decisions`,
//!   one JSON line, one `write(2)` on an append-only file) on the caller's own thread and returns
//!   once the kernel has it: a crash of planhost after that loses nothing. Only a power loss or
//!   a kernel crash can, the same as for the rows SQLite writes with `synchronous=NORMAL`. A
//!   failed append (a full disk) is the caller's error, so the decision is never answered.
//! - [`AuditSink::record`] only queues the row (a `tool.executed` after the tool ran).
//!
//! Either way a writer thread inserts the rows into `audit_log` on its own connection, in
//! batches (one commit per few milliseconds, `synchronous=NORMAL`), and records in the same
//! transaction how far into the journal it got (`audit_journal.seq`). A batch that fails (a
//! full disk) keeps its journaled rows for the next one. At start, rows the journal holds beyond
//! that mark (planhost was killed before the writer inserted them) are inserted first, then the
//! journal is emptied; it is emptied again whenever the writer has caught up with it and it has
//! grown past [`JOURNAL_TRIM`].

use std::collections::VecDeque;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use planhost_core::{AuditAction, SessionId, Timestamp, ToolCallId, TurnId};
use rusqlite::{Connection, OptionalExtension, params};
use serde::{Deserialize, Serialize};

/// Largest batch in one transaction: bounds how long the writer holds SQLite's write lock.
const MAX_BATCH: usize = 512;
/// How long the first row of a batch waits for company: one commit per few milliseconds
/// instead of one per tool call keeps the writer off the CPU the tool calls need.
const GATHER: Duration = Duration::from_millis(5);
/// After a failed batch, how long the writer waits before it tries its journaled rows again
/// when nothing new arrives.
const RETRY: Duration = Duration::from_millis(250);
/// The journal is emptied once the writer has caught up with it and it is at least this long.
const JOURNAL_TRIM: u64 = 256 * 1024;

/// One decision to record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
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
    pub action: AuditAction,
    /// JSON detail.
    pub detail: String,
}

/// One line of the journal: a row (borrowed when written, owned when read back) and its place
/// in it.
#[derive(Serialize, Deserialize)]
struct Line<R> {
    seq: u64,
    #[serde(flatten)]
    row: R,
}

/// Told once whether a flush wrote everything queued before it.
type Done = Box<dyn FnOnce(crate::Result<()>) + Send>;

/// A queued row: journaled (with its line's `seq`) or not.
struct Queued {
    row: AuditRow,
    seq: Option<u64>,
}

#[derive(Default)]
struct Queue {
    rows: Vec<Queued>,
    /// Callers waiting until what was queued before them is written.
    flushes: Vec<Done>,
    stop: bool,
}

/// The append side of the journal.
struct Journal {
    file: fs_err::File,
    /// The `seq` of the next line.
    next: u64,
    /// Bytes in the file.
    len: u64,
}

struct Shared {
    queue: Mutex<Queue>,
    ready: Condvar,
    journal: Mutex<Journal>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The sending side; cheap to clone. Rows sent after the writer stopped are logged and dropped.
#[derive(Clone)]
pub struct AuditSink {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for AuditSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuditSink").finish_non_exhaustive()
    }
}

/// The writer thread; [`AuditWriter::join`] waits until it wrote what was queued.
#[derive(Debug)]
pub struct AuditWriter {
    thread: JoinHandle<()>,
}

/// Where the journal of the database at `db` lives.
pub fn journal_path(db: &Path) -> PathBuf {
    PathBuf::from(format!("{}-decisions", db.display()))
}

impl AuditWriter {
    /// Opens the writer's own connection to the database at `path`, inserts what its journal
    /// holds beyond the last batch written (planhost stopped before the writer got to it),
    /// empties the journal, and starts the writer.
    pub fn spawn(path: &Path) -> crate::Result<(AuditSink, AuditWriter)> {
        let conn = Connection::open(path)?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        // SQLite's automatic checkpoint runs inside COMMIT; this connection checkpoints itself
        // between batches (see `run`).
        conn.pragma_update(None, "wal_autocheckpoint", 0)?;
        conn.busy_timeout(Duration::from_secs(10))?;
        let journal = recover(&conn, &journal_path(path))?;
        let shared = Arc::new(Shared {
            queue: Mutex::new(Queue::default()),
            ready: Condvar::new(),
            journal: Mutex::new(journal),
        });
        let writer = Arc::clone(&shared);
        let thread = std::thread::Builder::new()
            .name("planhost-audit".into())
            .spawn(move || run(&conn, &writer))
            .map_err(|e| crate::error::corrupt("audit_log", e))?;
        Ok((AuditSink { shared }, AuditWriter { thread }))
    }

    /// Waits until every row queued before [`AuditSink::stop`] is written (or could not be).
    pub fn join(self) {
        let _ = self.thread.join();
    }
}

impl AuditSink {
    /// Queues a row; never blocks. Its decision must not depend on it being recorded.
    pub fn record(&self, row: AuditRow) {
        self.push(Queued { row, seq: None });
    }

    /// Records a row for a decision that must not be acted on unrecorded: appends it to the
    /// journal (one `write(2)`; no fsync) and queues it for the audit log. `Ok` once the
    /// journal holds it; otherwise `STORE_PERSISTENCE_FAILED` and nothing was recorded.
    pub fn record_durable(&self, row: AuditRow) -> crate::Result<()> {
        // Held until the row is queued: rows reach the queue in journal order, so a batch's
        // mark never passes a line that is still on its way.
        let mut journal = lock(&self.shared.journal);
        let seq = journal.next;
        let mut text = serde_json::to_string(&Line { seq, row: &row })
            .map_err(|e| crate::error::corrupt("audit_journal", e))?;
        text.push('\n');
        fail_point!("store::audit::journal", |_| Err(unrecorded(
            rusqlite::ffi::SQLITE_FULL,
            "failpoint store::audit::journal: no space left on device".into(),
        )));
        if let Err(error) = journal.file.write_all(text.as_bytes()) {
            // A partial line is cut off, so the next one starts clean (a torn line left
            // behind is skipped at recovery either way).
            let len = journal.len;
            let _ = journal.file.file().set_len(len);
            return Err(unrecorded(
                rusqlite::ffi::SQLITE_IOERR,
                format!("the decision was not recorded: {error}"),
            ));
        }
        journal.next += 1;
        journal.len += text.len() as u64;
        self.push(Queued {
            row,
            seq: Some(seq),
        });
        drop(journal);
        Ok(())
    }

    fn push(&self, queued: Queued) {
        let mut queue = lock(&self.shared.queue);
        if queue.stop {
            tracing::error!("audit writer stopped; a decision row was not written to the log");
            return;
        }
        let wake = queue.rows.is_empty();
        queue.rows.push(queued);
        drop(queue);
        // Only the first row of a batch wakes the writer; the rest join it while it gathers.
        if wake {
            self.shared.ready.notify_one();
        }
    }

    /// Calls `done` once everything queued before this call is in the audit log (at once,
    /// without the gather window), or with the error that kept it out.
    pub fn flush(&self, done: impl FnOnce(crate::Result<()>) + Send + 'static) {
        let mut queue = lock(&self.shared.queue);
        if queue.stop {
            drop(queue);
            done(Err(unrecorded(
                rusqlite::ffi::SQLITE_ABORT,
                "the audit writer stopped".into(),
            )));
            return;
        }
        queue.flushes.push(Box::new(done));
        drop(queue);
        self.shared.ready.notify_one();
    }

    /// Asks the writer to write what is queued and stop, even while other sinks exist.
    pub fn stop(&self) {
        lock(&self.shared.queue).stop = true;
        self.shared.ready.notify_one();
    }
}

/// Reads the journal at `path` into the audit log (the lines past `audit_journal.seq`), empties
/// it, and opens it for appending.
fn recover(conn: &Connection, path: &Path) -> crate::Result<Journal> {
    use fs_err::os::unix::fs::OpenOptionsExt;
    let io = crate::StoreError::Io;
    let mark = ingested(conn)?;
    let mut last = mark;
    let mut rows = Vec::new();
    match fs_err::File::open(path) {
        Ok(file) => {
            for (n, line) in std::io::BufReader::new(file).split(b'\n').enumerate() {
                let line = line.map_err(io)?;
                match serde_json::from_slice::<Line<AuditRow>>(&line) {
                    Ok(l) => {
                        last = last.max(l.seq);
                        if l.seq > mark {
                            rows.push(Queued {
                                row: l.row,
                                seq: Some(l.seq),
                            });
                        }
                    }
                    // A line cut short by a power loss or a full disk: never answered.
                    Err(error) => tracing::warn!(
                        %error, line = n + 1, journal = %path.display(),
                        "skipping an unreadable line of the decision journal"
                    ),
                }
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(io(e)),
    }
    if !rows.is_empty() {
        tracing::info!(
            rows = rows.len(),
            "recording decisions the journal held beyond the audit log"
        );
        write(conn, &rows)?;
    }
    let file = fs_err::OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(path)
        .map_err(io)?;
    file.file().set_len(0).map_err(io)?;
    Ok(Journal {
        file,
        next: last + 1,
        len: 0,
    })
}

/// The last journal line the audit log holds.
fn ingested(conn: &Connection) -> crate::Result<u64> {
    let seq: Option<i64> = conn
        .query_row("SELECT seq FROM audit_journal WHERE id = 1", [], |r| {
            r.get(0)
        })
        .optional()?;
    Ok(seq.and_then(|s| u64::try_from(s).ok()).unwrap_or(0))
}

/// What the writer takes from the queue for one batch.
struct Batch {
    rows: Vec<Queued>,
    flushes: Vec<Done>,
    stop: bool,
}

/// Waits for the first row (or a flush, or the stop), then gathers for [`GATHER`] unless a
/// flush or the stop cuts it short. With rows carried from a failed batch, wakes after
/// [`RETRY`] even when nothing arrives.
fn take(shared: &Shared, carried: bool) -> Batch {
    let mut queue = lock(&shared.queue);
    let idle_until = carried.then(|| Instant::now() + RETRY);
    while queue.rows.is_empty() && queue.flushes.is_empty() && !queue.stop {
        match idle_until {
            Some(until) => match wait_until(shared, queue, until) {
                Some(q) => queue = q,
                None => {
                    queue = lock(&shared.queue);
                    break;
                }
            },
            None => {
                queue = shared
                    .ready
                    .wait(queue)
                    .unwrap_or_else(PoisonError::into_inner);
            }
        }
    }
    let until = Instant::now() + GATHER;
    while queue.flushes.is_empty() && !queue.stop && queue.rows.len() < MAX_BATCH {
        match wait_until(shared, queue, until) {
            Some(q) => queue = q,
            None => {
                queue = lock(&shared.queue);
                break;
            }
        }
    }
    Batch {
        rows: std::mem::take(&mut queue.rows),
        flushes: std::mem::take(&mut queue.flushes),
        stop: queue.stop,
    }
}

/// Waits on the queue's condition until `until`: the guard back after a wake-up, or `None` (the
/// guard released) once `until` has passed.
fn wait_until<'a>(
    shared: &'a Shared,
    queue: MutexGuard<'a, Queue>,
    until: Instant,
) -> Option<MutexGuard<'a, Queue>> {
    let left = until.saturating_duration_since(Instant::now());
    if left.is_zero() {
        return None;
    }
    Some(
        shared
            .ready
            .wait_timeout(queue, left)
            .unwrap_or_else(PoisonError::into_inner)
            .0,
    )
}

/// Committed batches between two of the writer's own WAL checkpoints: a batch adds a few pages,
/// so this keeps the WAL near SQLite's default of 1,000 pages.
const CHECKPOINT_EVERY: u32 = 256;

fn run(conn: &Connection, shared: &Shared) {
    let mut since_checkpoint = 0;
    // Journaled rows of failed batches, oldest first: tried again before anything newer.
    let mut carried: VecDeque<Queued> = VecDeque::new();
    loop {
        let batch = take(shared, !carried.is_empty());
        let mut rows: Vec<Queued> = carried.drain(..).collect();
        rows.extend(batch.rows);
        let mut result = Ok(());
        for chunk in rows.chunks(MAX_BATCH) {
            if let Err(error) = write(conn, chunk) {
                tracing::error!(%error, rows = chunk.len(), "could not write audit rows");
                result = Err(error);
                break;
            }
        }
        if result.is_err() {
            // What the journal holds is kept for the next try; a row that was only queued
            // (not journaled) is lost with the batch, as it is logged above.
            let written = ingested(conn).unwrap_or(0);
            carried = rows
                .into_iter()
                .filter(|q| q.seq.is_some_and(|s| s > written))
                .collect();
        } else {
            since_checkpoint += 1;
            trim(conn, shared);
        }
        for done in batch.flushes {
            done(match &result {
                Ok(()) => Ok(()),
                Err(error) => Err(unrecorded(
                    error
                        .sqlite_error()
                        .map_or(rusqlite::ffi::SQLITE_IOERR, |e| e.extended_code),
                    format!("the audit rows were not written: {error}"),
                )),
            });
        }
        // Between batches, so the checkpoint's copy and fsync are off every caller's path.
        if since_checkpoint >= CHECKPOINT_EVERY {
            since_checkpoint = 0;
            if let Err(error) = conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(())) {
                tracing::warn!(%error, "audit WAL checkpoint failed");
            }
        }
        if batch.stop {
            // A flush asked for after the stop was answered by `flush` itself.
            return;
        }
    }
}

/// Empties the journal when the audit log holds every line of it and it has grown long.
fn trim(conn: &Connection, shared: &Shared) {
    let mut journal = lock(&shared.journal);
    if journal.len < JOURNAL_TRIM {
        return;
    }
    match ingested(conn) {
        Ok(seq) if seq + 1 == journal.next => {
            if let Err(error) = journal.file.file().set_len(0) {
                tracing::warn!(%error, "could not empty the decision journal");
            } else {
                journal.len = 0;
            }
        }
        Ok(_) => {}
        Err(error) => tracing::warn!(%error, "could not read the decision journal's mark"),
    }
}

/// A row that did not reach the journal or the log, as the store's persistence error.
fn unrecorded(code: std::ffi::c_int, reason: String) -> crate::StoreError {
    crate::StoreError::Sqlite(rusqlite::Error::SqliteFailure(
        rusqlite::ffi::Error::new(code),
        Some(reason),
    ))
}

fn write(conn: &Connection, batch: &[Queued]) -> rusqlite::Result<()> {
    conn.execute_batch("BEGIN IMMEDIATE")?;
    let result = (|| {
        let mut stmt = conn.prepare_cached(
            "INSERT INTO audit_log (at, session_id, turn_id, tool_call_id, proposal_id, action, detail) \
             VALUES (?1, ?2, ?3, ?4, NULL, ?5, ?6)",
        )?;
        for Queued { row, .. } in batch {
            stmt.execute(params![
                row.at.0,
                row.session_id.as_ref().map(SessionId::as_str),
                row.turn_id.as_ref().map(TurnId::as_str),
                row.tool_call_id.as_ref().map(ToolCallId::as_str),
                row.action.as_str(),
                row.detail
            ])?;
        }
        if let Some(seq) = batch.iter().filter_map(|q| q.seq).max() {
            conn.prepare_cached(
                "INSERT INTO audit_journal (id, seq) VALUES (1, ?1) \
                 ON CONFLICT (id) DO UPDATE SET seq = max(seq, excluded.seq)",
            )?
            .execute([i64::try_from(seq).unwrap_or(i64::MAX)])?;
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

//! Settings, the audit log, and a canonical dump for state-before == state-after checks.

use rusqlite::params;
use serde_json::json;

use crate::records::{AuditRecord, audit_from_row};
use crate::settings::{SettingKey, validate_setting};
use crate::tx::AuditSubject;
use crate::{Result, Store, settings};

impl Store {
    /// Every stored setting.
    pub fn settings(&mut self) -> Result<Vec<(SettingKey, String)>> {
        self.read(|t| {
            let mut out = Vec::new();
            for key in SettingKey::ALL {
                if let Some(value) = settings::read(&t.tx, key)? {
                    out.push((key, value));
                }
            }
            Ok(out)
        })
    }

    /// Writes one setting after validating it; `None` removes it.
    pub fn set_setting(&mut self, key: SettingKey, value: Option<&str>) -> Result<()> {
        if let Some(value) = value {
            validate_setting(key, value)?;
        }
        self.transact(|t| {
            match value {
                Some(v) => t.tx.execute(
                    "INSERT INTO settings (key, value) VALUES (?1, ?2) \
                     ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                    params![key.as_str(), v],
                )?,
                None => {
                    t.tx.execute("DELETE FROM settings WHERE key = ?1", [key.as_str()])?
                }
            };
            t.audit(
                AuditSubject::default(),
                "settings.set",
                &json!({ "key": key, "value": value }),
            )
        })
    }

    /// Appends an audit row for a decision made outside the store (e.g. tool policy).
    pub fn record_audit(
        &mut self,
        subject: AuditSubject<'_>,
        action: &str,
        detail: &serde_json::Value,
    ) -> Result<()> {
        self.transact(|t| t.audit(subject, action, detail))
    }

    /// Audit rows, newest first, optionally for one session.
    pub fn audit(&mut self, session_id: Option<&str>, limit: u32) -> Result<Vec<AuditRecord>> {
        self.read(|t| {
            let mut stmt = t.tx.prepare(
                "SELECT id, at, session_id, turn_id, tool_call_id, proposal_id, action, detail \
                 FROM audit_log WHERE ?1 IS NULL OR session_id = ?1 ORDER BY id DESC LIMIT ?2",
            )?;
            let rows = stmt.query_map(params![session_id, limit], audit_from_row)?;
            Ok(rows.collect::<rusqlite::Result<_>>()?)
        })
    }

    /// Every row of every table in a fixed order, for tests and diagnostics that must prove a
    /// refused request changed nothing.
    pub fn dump(&mut self) -> Result<String> {
        self.read(|t| {
            let mut out = String::new();
            let tables: Vec<String> = t
                .tx
                .prepare("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")?
                .query_map([], |r| r.get(0))?
                .collect::<rusqlite::Result<_>>()?;
            for table in tables {
                out.push_str(&format!("## {table}\n"));
                let mut stmt = t.tx.prepare(&format!("SELECT * FROM \"{table}\" ORDER BY rowid"))?;
                let columns = stmt.column_count();
                let mut rows = stmt.query([])?;
                while let Some(row) = rows.next()? {
                    let mut cells = Vec::with_capacity(columns);
                    for i in 0..columns {
                        let value: rusqlite::types::Value = row.get(i)?;
                        cells.push(format!("{value:?}"));
                    }
                    out.push_str(&cells.join(" | "));
                    out.push('\n');
                }
            }
            Ok(out)
        })
    }
}

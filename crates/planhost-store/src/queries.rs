//! Settings, the audit log, and a canonical dump for state-before == state-after checks.

use rusqlite::{OptionalExtension, params};
use serde_json::json;

use planhost_core::{AskId, SessionId, ToolCallId, TurnId};

use crate::records::{AuditRecord, IdColumn, audit_from_row};
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
                planhost_core::AuditAction::SettingsSet,
                &json!({ "key": key, "value": value }),
            )
        })
    }

    /// Appends an audit row for a decision made outside the store (e.g. tool policy).
    pub fn record_audit(
        &mut self,
        subject: AuditSubject<'_>,
        action: planhost_core::AuditAction,
        detail: &serde_json::Value,
    ) -> Result<()> {
        self.transact(|t| t.audit(subject, action, detail))
    }

    /// Audit rows, newest first, optionally for one session.
    pub fn audit(
        &mut self,
        session_id: Option<&SessionId>,
        limit: u32,
    ) -> Result<Vec<AuditRecord>> {
        self.read(|t| {
            let mut stmt = t.tx.prepare(
                "SELECT id, at, session_id, turn_id, tool_call_id, proposal_id, action, detail \
                 FROM audit_log WHERE ?1 IS NULL OR session_id = ?1 ORDER BY id DESC LIMIT ?2",
            )?;
            let rows = stmt.query_map(
                params![session_id.map(SessionId::as_str), limit],
                audit_from_row,
            )?;
            rows.collect::<rusqlite::Result<Vec<_>>>()?
                .into_iter()
                .collect()
        })
    }

    /// Every row of every table in a fixed order, for tests and diagnostics that must prove a
    /// refused request changed nothing.
    pub fn dump(&mut self) -> Result<String> {
        self.read(|t| dump_conn(&t.tx))
    }
}

/// [`Store::dump`] of a database file, read on a read-only connection of its own (a running
/// service keeps its store to itself).
pub fn dump_database(path: &std::path::Path) -> Result<String> {
    let conn = rusqlite::Connection::open_with_flags(
        path,
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    dump_conn(&conn)
}

fn dump_conn(conn: &rusqlite::Connection) -> Result<String> {
    let mut out = String::new();
    let tables: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")?
        .query_map([], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    for table in tables {
        out.push_str(&format!("## {table}\n"));
        let mut stmt = conn.prepare(&format!("SELECT * FROM \"{table}\" ORDER BY rowid"))?;
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
}

/// An ask raised by the tool policy, recorded with the event that announces it.
#[derive(Debug, Clone, Copy)]
pub struct AskRecord<'a> {
    /// Session.
    pub session_id: &'a SessionId,
    /// Turn.
    pub turn_id: &'a TurnId,
    /// Tool call.
    pub tool_call_id: &'a ToolCallId,
    /// The ask's id.
    pub request_id: &'a AskId,
    /// The tool.
    pub tool_name: &'a str,
    /// Why the policy asks.
    pub reason: &'a str,
}

impl Store {
    /// The session's running turn, if any.
    pub fn active_turn(&mut self, session_id: &SessionId) -> Result<Option<crate::TurnRecord>> {
        self.read(|t| {
            let id: Option<TurnId> = t
                .tx
                .prepare_cached("SELECT id FROM turns WHERE session_id = ?1 AND state = 'running'")?
                .query_row([session_id.as_str()], |r| r.id(0))
                .optional()?;
            match id {
                Some(id) => t.turn(&id),
                None => Ok(None),
            }
        })
    }

    /// Records an ask (audit row + `permissionAsked` event) in one durable transaction; refused
    /// unless the ask's turn is the session's running turn.
    pub fn record_ask(&mut self, ask: &AskRecord<'_>) -> Result<()> {
        self.transact(|t| {
            let view = t.view(ask.session_id)?;
            if view.active_turn.as_ref().is_none_or(|turn| turn.id != *ask.turn_id) {
                return Err(planhost_core::CoreError::TurnNotActive { turn_id: ask.turn_id.clone() }.into());
            }
            let subject = AuditSubject {
                session_id: Some(ask.session_id),
                turn_id: Some(ask.turn_id),
                tool_call_id: Some(ask.tool_call_id),
                proposal_id: None,
            };
            t.audit(
                subject,
                planhost_core::AuditAction::ToolAsk,
                &json!({ "requestId": ask.request_id, "tool": ask.tool_name, "reason": ask.reason }),
            )?;
            t.emit(
                ask.session_id,
                planhost_core::EventBody::PermissionAsked {
                    request_id: ask.request_id.clone(),
                    turn_id: ask.turn_id.clone(),
                    tool_call_id: ask.tool_call_id.clone(),
                    tool_name: ask.tool_name.into(),
                    reason: ask.reason.into(),
                },
            )
        })
    }

    /// Records an ask's answer (audit row + `permissionResolved` event) in one transaction;
    /// refused unless the ask's turn is still running.
    pub fn record_ask_answer(
        &mut self,
        ask: &AskRecord<'_>,
        decision: planhost_core::PermissionDecision,
        note: Option<&str>,
        by: &planhost_core::Resolver,
    ) -> Result<()> {
        self.transact(|t| {
            let view = t.view(ask.session_id)?;
            if view.active_turn.as_ref().is_none_or(|turn| turn.id != *ask.turn_id) {
                return Err(planhost_core::CoreError::TurnNotActive { turn_id: ask.turn_id.clone() }.into());
            }
            let subject = AuditSubject {
                session_id: Some(ask.session_id),
                turn_id: Some(ask.turn_id),
                tool_call_id: Some(ask.tool_call_id),
                proposal_id: None,
            };
            t.audit(
                subject,
                planhost_core::AuditAction::ToolAskAnswered,
                &json!({ "requestId": ask.request_id, "tool": ask.tool_name, "decision": decision, "note": note, "by": by }),
            )?;
            t.emit(
                ask.session_id,
                planhost_core::EventBody::PermissionResolved {
                    request_id: ask.request_id.clone(),
                    decision,
                    resolved_by: Some(by.clone()),
                },
            )
        })
    }
}

impl Store {
    /// A person stopped a tool call the host was running: on record with who did.
    pub fn record_tool_stopped(
        &mut self,
        session_id: &planhost_core::SessionId,
        turn_id: &planhost_core::TurnId,
        tool_call_id: &planhost_core::ToolCallId,
        tool_name: &str,
        by: &planhost_core::Resolver,
    ) -> Result<()> {
        self.transact(|t| {
            let subject = AuditSubject {
                session_id: Some(session_id),
                turn_id: Some(turn_id),
                tool_call_id: Some(tool_call_id),
                proposal_id: None,
            };
            t.audit(
                subject,
                planhost_core::AuditAction::ToolStopped,
                &json!({ "tool": tool_name, "by": by }),
            )
        })
    }
}

/// What tool policy reads from the durable state, in one statement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicySnapshot {
    /// The session's policy now, host defaults resolved.
    pub live: planhost_core::PolicyView,
    /// The running turn, if any.
    pub active_turn: Option<TurnId>,
    /// The policy the running turn started with (absent for turns from before schema v3).
    pub turn_pin: Option<planhost_core::PolicyView>,
    /// The running turn's pinned shell dialect (absent without a turn or a shell pin).
    pub turn_dialect: Option<planhost_core::Dialect>,
    /// The agent the session serves: whose catalog names its tools.
    pub agent: planhost_core::Agent,
    /// The session's workspace root (where its shell commands run).
    pub workspace_root: String,
}

/// Host defaults as stored; a value that does not parse (never written by planhost: settings
/// are validated on write and at open) is treated as unset.
pub(crate) fn policy_defaults(
    permission: Option<String>,
    preset: Option<String>,
) -> planhost_core::PolicyDefaults {
    planhost_core::PolicyDefaults {
        permission: permission
            .and_then(|v| v.parse::<planhost_core::TargetPermissionMode>().ok())
            .map(planhost_core::EffectivePermission::from),
        preset: preset.and_then(|v| v.parse().ok()),
    }
}

impl Store {
    /// Reads everything the tool policy needs about one session with a single query.
    pub fn policy_snapshot(&mut self, session_id: &SessionId) -> Result<PolicySnapshot> {
        let row = self
            .conn
            .prepare_cached(
                "SELECT s.mode, s.permission_mode, s.policy_preset, \
                 (SELECT id FROM turns WHERE session_id = s.id AND state = 'running'), \
                 (SELECT value FROM settings WHERE key = 'default_permission_mode'), \
                 (SELECT value FROM settings WHERE key = 'default_policy_preset'), \
                 t.policy_mode, t.policy_permission, t.policy_preset, t.shell_dialect, s.agent, \
                 s.workspace_root \
                 FROM sessions s LEFT JOIN turns t ON t.session_id = s.id AND t.state = 'running' \
                 WHERE s.id = ?1",
            )?
            .query_row([session_id.as_str()], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, Option<String>>(2)?,
                    r.id_opt::<TurnId>(3)?,
                    r.get::<_, Option<String>>(4)?,
                    r.get::<_, Option<String>>(5)?,
                    (
                        r.get::<_, Option<String>>(6)?,
                        r.get::<_, Option<String>>(7)?,
                        r.get::<_, Option<String>>(8)?,
                    ),
                    r.get::<_, Option<String>>(9)?,
                    (r.get::<_, String>(10)?, r.get::<_, String>(11)?),
                ))
            })
            .optional()?
            .ok_or_else(|| crate::StoreError::SessionNotFound(session_id.clone()))?;
        let live = planhost_core::live_policy(
            crate::records::parse("sessions", row.0)?,
            crate::records::parse("sessions", row.1)?,
            row.2
                .map(|p| crate::records::parse("sessions", p))
                .transpose()?,
            policy_defaults(row.4, row.5),
        );
        Ok(PolicySnapshot {
            live,
            active_turn: row.3,
            turn_pin: match row.6 {
                (Some(mode), Some(permission), Some(preset)) => Some(planhost_core::PolicyView {
                    mode: crate::records::parse("turns", mode)?,
                    permission: crate::records::parse::<planhost_core::TargetPermissionMode>(
                        "turns", permission,
                    )?
                    .into(),
                    preset: crate::records::parse("turns", preset)?,
                }),
                (_, _, _) => None,
            },
            turn_dialect: row
                .7
                .map(|d| crate::records::parse("turns", d))
                .transpose()?,
            agent: crate::records::parse("sessions", row.8.0)?,
            workspace_root: row.8.1,
        })
    }
}

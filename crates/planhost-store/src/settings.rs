//! Host settings: a few typed keys, validated on every write and at every open (fail closed).

use std::str::FromStr;

use planhost_core::{PermissionMode, PolicyPreset};
use rusqlite::{Connection, OptionalExtension};

use crate::{Result, StoreError};

/// The shell ids any platform's catalog may hold (seed 000 §8). Availability is the exec
/// crate's business; the store only refuses ids that exist nowhere.
pub const KNOWN_SHELL_IDS: [&str; 4] = ["windows-powershell", "cmd", "git-bash", "bash"];

/// A settings key the host understands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum SettingKey {
    /// Permission mode a session with `inherit` uses: `ask`, `accept-edits` or `auto`.
    DefaultPermissionMode,
    /// The configured shell id.
    DefaultShell,
    /// The tool-policy preset for sessions that name none.
    DefaultPolicyPreset,
}

impl SettingKey {
    /// Every key.
    pub const ALL: [SettingKey; 3] = [
        SettingKey::DefaultPermissionMode,
        SettingKey::DefaultShell,
        SettingKey::DefaultPolicyPreset,
    ];

    /// The stored key string.
    pub fn as_str(self) -> &'static str {
        match self {
            SettingKey::DefaultPermissionMode => "default_permission_mode",
            SettingKey::DefaultShell => "default_shell",
            SettingKey::DefaultPolicyPreset => "default_policy_preset",
        }
    }

    fn parse(key: &str) -> Option<SettingKey> {
        SettingKey::ALL.into_iter().find(|k| k.as_str() == key)
    }
}

/// Checks one value for its key.
pub fn validate_setting(key: SettingKey, value: &str) -> Result<()> {
    let invalid = |reason: String| StoreError::SettingsInvalid {
        key: key.as_str().into(),
        reason,
    };
    match key {
        SettingKey::DefaultPermissionMode => match PermissionMode::from_str(value) {
            Ok(PermissionMode::Inherit) => Err(invalid("the default cannot be inherit".into())),
            Ok(PermissionMode::Ask | PermissionMode::AcceptEdits | PermissionMode::Auto) => Ok(()),
            Err(e) => Err(invalid(e.to_string())),
        },
        SettingKey::DefaultShell if KNOWN_SHELL_IDS.contains(&value) => Ok(()),
        SettingKey::DefaultShell => Err(invalid(format!("unknown shell id {value:?}"))),
        SettingKey::DefaultPolicyPreset => PolicyPreset::from_str(value)
            .map(|_| ())
            .map_err(|e| invalid(e.to_string())),
    }
}

/// Validates every stored setting; unknown keys and bad values fail closed.
pub fn validate_all(conn: &Connection) -> Result<()> {
    let mut stmt = conn.prepare("SELECT key, value FROM settings ORDER BY key")?;
    let rows = stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))?;
    for row in rows {
        let (key, value) = row?;
        let Some(parsed) = SettingKey::parse(&key) else {
            return Err(StoreError::SettingsInvalid {
                key,
                reason: "unknown setting".into(),
            });
        };
        validate_setting(parsed, &value)?;
    }
    Ok(())
}

pub(crate) fn read(conn: &Connection, key: SettingKey) -> Result<Option<String>> {
    Ok(conn
        .query_row(
            "SELECT value FROM settings WHERE key = ?1",
            [key.as_str()],
            |r| r.get(0),
        )
        .optional()?)
}

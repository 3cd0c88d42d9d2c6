//! The shell catalog as the service serves it: probed now, resolved with the configured id, and
//! pinned on each turn at its start (seed 000 §8).

use std::str::FromStr;

use planhost_core::{Platform, SessionId, ShellId};
use planhost_exec::{effective_shell, probe};
use planhost_protocol::{EffectiveShellInfo, ShellCatalog, ShellOptionInfo};
use planhost_store::{SettingKey, ShellPin};

use crate::engine::Engine;
use crate::{Result, ServiceError};

/// The service's view of the platform's shells.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Shells {
    pub(crate) platform: Platform,
}

impl Shells {
    /// The catalog with availability now, and the shell a new turn would pin.
    pub(crate) fn catalog(&self, configured: Option<ShellId>) -> ShellCatalog {
        let probes = probe();
        let options = planhost_exec::catalog(self.platform, &probes)
            .into_iter()
            .map(|o| ShellOptionInfo {
                id: o.id,
                label: o.label,
                dialect: o.dialect,
                available: o.available,
                is_default: o.is_default,
            })
            .collect();
        let effective = effective_shell(self.platform, &probes, configured)
            .ok()
            .map(|e| EffectiveShellInfo {
                id: e.id,
                dialect: e.dialect,
                fallback: e.fallback,
            });
        ShellCatalog {
            platform: self.platform,
            options,
            configured,
            effective,
        }
    }

    /// A settings write: unknown, unavailable and wrong-platform ids are `COMMAND_SHELL_INVALID`.
    pub(crate) fn validate_setting(&self, id: ShellId) -> Result<()> {
        planhost_exec::validate_shell_setting(self.platform, &probe(), id.as_str())
            .map(drop)
            .map_err(|e| ServiceError::refused(e.code(), e.to_string()))
    }

    /// The host's default shell setting, if any.
    pub(crate) fn default_setting(engine: &mut Engine) -> Result<Option<ShellId>> {
        Ok(engine
            .store()
            .settings()?
            .into_iter()
            .find(|(k, _)| *k == SettingKey::DefaultShell)
            .and_then(|(_, v)| ShellId::from_str(&v).ok()))
    }

    /// The configured shell of a session (its own, else the host default).
    pub(crate) fn configured(
        engine: &mut Engine,
        session_id: &SessionId,
    ) -> Result<Option<ShellId>> {
        let own = engine.store().session(session_id)?.shell_id;
        match own {
            Some(id) => Ok(Some(id)),
            None => Self::default_setting(engine),
        }
    }

    /// The shell to pin at turn launch, or `None` when no shell is available (Bash will then
    /// report `SHELL_NOT_FOUND`).
    pub(crate) fn pin_for(
        &self,
        engine: &mut Engine,
        session_id: &SessionId,
    ) -> Result<Option<ShellPin>> {
        let configured = Self::configured(engine, session_id)?;
        Ok(effective_shell(self.platform, &probe(), configured)
            .ok()
            .map(|e| ShellPin {
                id: e.id,
                dialect: e.dialect,
            }))
    }
}

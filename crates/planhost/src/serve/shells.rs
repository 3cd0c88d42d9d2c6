//! The shell catalog as the host serves it: probed now, resolved with the configured id.

use std::str::FromStr;

use planhost_exec::{Platform, ShellId, effective_shell, probe};
use planhost_host::{Host, HostError};
use planhost_protocol::{EffectiveShellInfo, RpcError, ShellCatalog, ShellOptionInfo};
use planhost_store::{SettingKey, ShellPin};

use super::convert::refused;

/// The host's view of the platform's shells.
#[derive(Debug, Clone, Copy)]
pub struct Shells {
    pub platform: Platform,
}

fn dialect_str(d: planhost_exec::Dialect) -> &'static str {
    match d {
        planhost_exec::Dialect::Powershell => "powershell",
        planhost_exec::Dialect::Cmd => "cmd",
        planhost_exec::Dialect::Posix => "posix",
    }
}

fn platform_str(p: Platform) -> &'static str {
    match p {
        Platform::Windows => "windows",
        Platform::MacOs => "macos",
        Platform::Linux => "linux",
    }
}

impl Shells {
    /// The catalog with availability now, and the shell a new turn would pin.
    pub fn catalog(&self, configured: Option<&str>) -> ShellCatalog {
        let probes = probe();
        let options = planhost_exec::catalog(self.platform, &probes)
            .into_iter()
            .map(|o| ShellOptionInfo {
                id: o.id.as_str().into(),
                label: o.label,
                dialect: dialect_str(o.dialect).into(),
                available: o.available,
                is_default: o.is_default,
            })
            .collect();
        let persisted = configured.and_then(|s| ShellId::from_str(s).ok());
        let effective = effective_shell(self.platform, &probes, persisted)
            .ok()
            .map(|e| EffectiveShellInfo {
                id: e.id.as_str().into(),
                dialect: dialect_str(e.dialect).into(),
                fallback: e.fallback,
            });
        ShellCatalog {
            platform: platform_str(self.platform).into(),
            options,
            effective,
        }
    }

    /// A settings write: unknown, unavailable and wrong-platform ids are `COMMAND_SHELL_INVALID`.
    pub fn validate_setting(&self, id: &str) -> Result<(), RpcError> {
        planhost_exec::validate_shell_setting(self.platform, &probe(), id)
            .map(drop)
            .map_err(|e| refused(e.code(), e.to_string()))
    }

    /// The configured shell id of a session (its own, else the host default).
    pub fn configured(h: &mut Host, session_id: &str) -> Result<Option<ShellId>, HostError> {
        let own = h.store().session(session_id)?.shell_id;
        let configured = match own {
            Some(id) => Some(id),
            None => h
                .store()
                .settings()?
                .into_iter()
                .find(|(k, _)| *k == SettingKey::DefaultShell)
                .map(|(_, v)| v),
        };
        Ok(configured.and_then(|s| ShellId::from_str(&s).ok()))
    }

    /// The shell to pin at turn launch, or `None` when no shell is available (Bash will then
    /// report `SHELL_NOT_FOUND`).
    pub fn pin_for(&self, h: &mut Host, session_id: &str) -> Result<Option<ShellPin>, HostError> {
        let configured = Self::configured(h, session_id)?;
        Ok(effective_shell(self.platform, &probe(), configured)
            .ok()
            .map(|e| ShellPin {
                id: e.id.as_str().into(),
                dialect: dialect_str(e.dialect).into(),
            }))
    }
}

//! The shell catalog: which shells a platform offers, which one is effective, and the turn pin.
//!
//! Everything here is pure: the catalog is a function of ([`Platform`], [`ProbeResults`]), so
//! the Windows rules are tested on any machine. [`crate::probe`] does the real I/O.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::error::{ExecError, Result, ShellInvalidReason};

pub use planhost_core::{Dialect, Platform, ShellId};

/// Parses a wire id exactly (case-sensitive); anything else is `COMMAND_SHELL_INVALID`.
pub fn parse_shell_id(s: &str) -> Result<ShellId> {
    ShellId::from_str(s).map_err(|_| ExecError::ShellInvalid {
        id: s.to_owned(),
        reason: ShellInvalidReason::Unknown,
    })
}

/// One entry of the catalog a settings page shows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ShellOption {
    /// The stable id.
    pub id: ShellId,
    /// The display label.
    pub label: String,
    /// The command language.
    pub dialect: Dialect,
    /// Whether the probe found its executable.
    pub available: bool,
    /// Whether this is what an unset setting resolves to: the first available shell.
    pub is_default: bool,
}

/// What [`crate::probe`] found: the executable of each shell that exists on this machine.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProbeResults {
    found: BTreeMap<ShellId, PathBuf>,
}

impl ProbeResults {
    /// No shell found.
    pub fn none() -> Self {
        Self::default()
    }

    /// Records that `id` exists at `executable`.
    #[must_use]
    pub fn with(mut self, id: ShellId, executable: impl Into<PathBuf>) -> Self {
        self.found.insert(id, executable.into());
        self
    }

    /// The executable found for `id`, if any.
    pub fn executable(&self, id: ShellId) -> Option<&Path> {
        self.found.get(&id).map(PathBuf::as_path)
    }
}

/// The shell a command will actually run in, after fallback.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EffectiveShell {
    /// The effective id.
    pub id: ShellId,
    /// Its dialect.
    pub dialect: Dialect,
    /// True when a persisted id was unavailable and the first available shell was chosen.
    pub fallback: bool,
    /// The executable the runner starts.
    pub executable: PathBuf,
}

/// The shell identity fixed at turn launch; it never changes for the rest of the turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PinnedShell {
    /// The pinned id.
    pub id: ShellId,
    /// The pinned dialect.
    pub dialect: Dialect,
}

impl PinnedShell {
    /// Pins the shell resolved at turn launch.
    pub fn pin(effective: &EffectiveShell) -> Self {
        Self {
            id: effective.id,
            dialect: effective.dialect,
        }
    }
}

/// The platform's catalog, with availability and the default marker.
pub fn catalog(platform: Platform, probes: &ProbeResults) -> Vec<ShellOption> {
    let default = first_available(platform, probes);
    platform
        .shell_ids()
        .iter()
        .map(|&id| ShellOption {
            id,
            label: id.label().to_owned(),
            dialect: id.dialect(),
            available: probes.executable(id).is_some(),
            is_default: default == Some(id),
        })
        .collect()
}

/// Checks a settings write; unknown, wrong-platform and unavailable ids are
/// `COMMAND_SHELL_INVALID`.
pub fn validate_shell_setting(
    platform: Platform,
    probes: &ProbeResults,
    requested: &str,
) -> Result<ShellId> {
    let id: ShellId = parse_shell_id(requested)?;
    let reason = if !platform.shell_ids().contains(&id) {
        ShellInvalidReason::WrongPlatform
    } else if probes.executable(id).is_none() {
        ShellInvalidReason::Unavailable
    } else {
        return Ok(id);
    };
    Err(ExecError::ShellInvalid {
        id: requested.to_owned(),
        reason,
    })
}

/// Resolves the shell to use: the persisted id when it is available on this platform, else the
/// first available shell (`fallback: true` when a persisted id was passed over). `SHELL_NOT_FOUND`
/// when nothing is available.
pub fn effective_shell(
    platform: Platform,
    probes: &ProbeResults,
    persisted: Option<ShellId>,
) -> Result<EffectiveShell> {
    if let Some(id) = persisted
        && platform.shell_ids().contains(&id)
        && let Some(exe) = probes.executable(id)
    {
        return Ok(effective(id, exe, false));
    }
    let id = first_available(platform, probes).ok_or(ExecError::ShellNotFound { platform })?;
    let exe = probes
        .executable(id)
        .ok_or(ExecError::ShellNotFound { platform })?;
    Ok(effective(id, exe, persisted.is_some()))
}

/// Checks, just before spawn, that the request's expected id and the freshly resolved shell both
/// still match the turn's pin; any difference is `COMMAND_SHELL_CHANGED`.
///
/// This is a catalog identity check (id and dialect), not an executable-path check.
pub fn verify_pin(pinned: &PinnedShell, expected: ShellId, current: &EffectiveShell) -> Result<()> {
    if pinned.id == expected && current.id == pinned.id && current.dialect == pinned.dialect {
        Ok(())
    } else {
        Err(ExecError::ShellChanged {
            pinned: pinned.id,
            expected,
            current: current.id,
        })
    }
}

/// Resolves the catalog again and verifies the pin: what a Bash call does just before spawn.
pub fn resolve_pinned(
    platform: Platform,
    probes: &ProbeResults,
    persisted: Option<ShellId>,
    pinned: &PinnedShell,
    expected: ShellId,
) -> Result<EffectiveShell> {
    let current = effective_shell(platform, probes, persisted)?;
    verify_pin(pinned, expected, &current)?;
    Ok(current)
}

fn first_available(platform: Platform, probes: &ProbeResults) -> Option<ShellId> {
    platform
        .shell_ids()
        .iter()
        .copied()
        .find(|&id| probes.executable(id).is_some())
}

#[cfg(test)]
mod tests;

fn effective(id: ShellId, exe: &Path, fallback: bool) -> EffectiveShell {
    EffectiveShell {
        id,
        dialect: id.dialect(),
        fallback,
        executable: exe.to_path_buf(),
    }
}

//! The permission mode the policy applies: [`EffectivePermission`] is a session's
//! [`PermissionMode`] with `inherit` resolved by [`effective_permission`], to the host's default
//! or else to `ask`.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::{PermissionMode, TargetPermissionMode};

/// A permission mode with `inherit` resolved: what the policy actually applies.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EffectivePermission {
    /// Ask a person before each Write, Edit, Bash or plugin call. The default: seed 000 §1
    /// defaults the explicit choice to Ask.
    #[default]
    Ask,
    /// Run Write and Edit; ask for Bash and plugin tools.
    AcceptEdits,
    /// Run everything the mode and preset permit.
    Auto,
}

impl EffectivePermission {
    /// Every value, in declaration order.
    pub const ALL: &'static [EffectivePermission] = &[
        EffectivePermission::Ask,
        EffectivePermission::AcceptEdits,
        EffectivePermission::Auto,
    ];

    /// The stable wire string, the same as [`PermissionMode`]'s.
    pub fn as_str(self) -> &'static str {
        PermissionMode::from(self).as_str()
    }

    /// The explicit mode a [`PermissionMode`] names, or `None` for `inherit`.
    pub fn explicit(mode: PermissionMode) -> Option<EffectivePermission> {
        match mode {
            PermissionMode::Inherit => None,
            PermissionMode::Ask => Some(EffectivePermission::Ask),
            PermissionMode::AcceptEdits => Some(EffectivePermission::AcceptEdits),
            PermissionMode::Auto => Some(EffectivePermission::Auto),
        }
    }
}

impl fmt::Display for EffectivePermission {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl From<EffectivePermission> for PermissionMode {
    fn from(value: EffectivePermission) -> Self {
        match value {
            EffectivePermission::Ask => PermissionMode::Ask,
            EffectivePermission::AcceptEdits => PermissionMode::AcceptEdits,
            EffectivePermission::Auto => PermissionMode::Auto,
        }
    }
}

impl From<TargetPermissionMode> for EffectivePermission {
    fn from(value: TargetPermissionMode) -> Self {
        match value {
            TargetPermissionMode::Ask => EffectivePermission::Ask,
            TargetPermissionMode::AcceptEdits => EffectivePermission::AcceptEdits,
            TargetPermissionMode::Auto => EffectivePermission::Auto,
        }
    }
}

/// Resolves a session's permission mode: an explicit mode wins; `inherit` takes the host
/// default (`default_permission_mode`), and `ask` when none is configured.
pub fn effective_permission(
    session: PermissionMode,
    host_default: Option<EffectivePermission>,
) -> EffectivePermission {
    EffectivePermission::explicit(session)
        .or(host_default)
        .unwrap_or_default()
}

//! Which policy a tool call is held to: the session's durable settings with the host defaults
//! resolved, and — inside a turn — what the turn pinned at its start, never looser than the
//! durable mode.

use crate::{EffectivePermission, Mode, PermissionMode, PolicyPreset, effective_permission};

/// What the tool policy applies, every default resolved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PolicyView {
    /// The named preset.
    pub preset: PolicyPreset,
    /// The mode.
    pub mode: Mode,
    /// The permission mode, `inherit` resolved.
    pub permission: EffectivePermission,
}

/// The host-wide defaults a session inherits.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PolicyDefaults {
    /// `default_permission_mode`, if set.
    pub permission: Option<EffectivePermission>,
    /// `default_policy_preset`, if set.
    pub preset: Option<PolicyPreset>,
}

/// The policy a session applies now: its own permission mode and preset, else the host's
/// defaults, else `ask` and `host`.
pub fn live_policy(
    mode: Mode,
    permission_mode: PermissionMode,
    preset: Option<PolicyPreset>,
    defaults: PolicyDefaults,
) -> PolicyView {
    PolicyView {
        preset: preset.or(defaults.preset).unwrap_or(PolicyPreset::Host),
        mode,
        permission: effective_permission(permission_mode, defaults.permission),
    }
}

/// The stricter of two modes: Plan whenever either is Plan.
pub fn stricter_mode(a: Mode, b: Mode) -> Mode {
    match (a, b) {
        (Mode::Agent, Mode::Agent) => Mode::Agent,
        (Mode::Plan, Mode::Agent | Mode::Plan) | (Mode::Agent, Mode::Plan) => Mode::Plan,
    }
}

/// The view a running turn is held to. The turn keeps the permission mode and preset it pinned
/// at its start, so a change of the host defaults never reaches a running turn (seed 000 §4);
/// its mode is the stricter of the pinned and the durable one, so a turn that was planning stays
/// planning after its plan is approved (execution is the separate, claimed turn) and a turn that
/// enters Plan is planning at once. Without a pin (no turn, or a turn from before the pins were
/// recorded) the live policy applies.
pub fn turn_policy(live: PolicyView, pinned: Option<PolicyView>) -> PolicyView {
    match pinned {
        Some(pin) => PolicyView {
            preset: pin.preset,
            mode: stricter_mode(pin.mode, live.mode),
            permission: pin.permission,
        },
        None => live,
    }
}

/// Seed 004: only a message begun in planning may be captured. Whether it was is the host's fact,
/// never the client's claim: the message's turn started in Plan, or it is still running and its
/// session entered Plan during it (EnterPlanMode). A replay of an Agent turn's message after a
/// switch to Plan is never captured.
pub fn began_in_planning(
    turn_pinned_mode: Option<Mode>,
    turn_running: bool,
    session: Mode,
) -> bool {
    turn_pinned_mode == Some(Mode::Plan) || (turn_running && session == Mode::Plan)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(mode: Mode, permission: EffectivePermission, preset: PolicyPreset) -> PolicyView {
        PolicyView {
            preset,
            mode,
            permission,
        }
    }

    #[test]
    fn defaults_fill_only_what_the_session_leaves_open() {
        let defaults = PolicyDefaults {
            permission: Some(EffectivePermission::Auto),
            preset: Some(PolicyPreset::Strict),
        };
        assert_eq!(
            live_policy(Mode::Agent, PermissionMode::Inherit, None, defaults),
            view(Mode::Agent, EffectivePermission::Auto, PolicyPreset::Strict)
        );
        assert_eq!(
            live_policy(
                Mode::Plan,
                PermissionMode::Ask,
                Some(PolicyPreset::Explore),
                defaults
            ),
            view(Mode::Plan, EffectivePermission::Ask, PolicyPreset::Explore)
        );
        assert_eq!(
            live_policy(
                Mode::Agent,
                PermissionMode::Inherit,
                None,
                PolicyDefaults::default()
            ),
            view(Mode::Agent, EffectivePermission::Ask, PolicyPreset::Host)
        );
    }

    #[test]
    fn a_turn_keeps_its_pin_but_never_a_looser_mode() {
        let pinned = view(Mode::Agent, EffectivePermission::Ask, PolicyPreset::Host);
        let live = view(Mode::Plan, EffectivePermission::Auto, PolicyPreset::Explore);
        // Entered Plan during the turn: planning at once, with the pinned permission and preset.
        assert_eq!(
            turn_policy(live, Some(pinned)),
            view(Mode::Plan, EffectivePermission::Ask, PolicyPreset::Host)
        );
        // Approved during a planning turn: the turn stays planning.
        let planning = view(Mode::Plan, EffectivePermission::Ask, PolicyPreset::Host);
        let approved = view(Mode::Agent, EffectivePermission::Auto, PolicyPreset::Host);
        assert_eq!(turn_policy(approved, Some(planning)).mode, Mode::Plan);
        assert_eq!(turn_policy(approved, None), approved);
        for a in Mode::ALL {
            for b in Mode::ALL {
                let s = stricter_mode(*a, *b);
                assert_eq!(s == Mode::Plan, *a == Mode::Plan || *b == Mode::Plan);
            }
        }
    }

    #[test]
    fn only_planning_messages_are_captured() {
        assert!(began_in_planning(Some(Mode::Plan), false, Mode::Agent));
        assert!(began_in_planning(Some(Mode::Agent), true, Mode::Plan));
        assert!(!began_in_planning(Some(Mode::Agent), false, Mode::Plan));
        assert!(!began_in_planning(None, false, Mode::Plan));
        assert!(!began_in_planning(Some(Mode::Agent), true, Mode::Agent));
    }
}

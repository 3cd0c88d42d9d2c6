//! The vocabulary of seed 000 §2, each value with its stable wire string.

macro_rules! wire_enum {
    ($(#[$meta:meta])* $name:ident { $($(#[$vmeta:meta])* $variant:ident = $text:literal),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
        #[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
        pub enum $name {
            $($(#[$vmeta])* #[serde(rename = $text)] $variant),+
        }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The stable string used on the wire and in the database.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text),+
                }
            }
        }

        impl std::str::FromStr for $name {
            type Err = crate::UnknownValue;

            fn from_str(s: &str) -> std::result::Result<Self, Self::Err> {
                match s {
                    $($text => Ok($name::$variant),)+
                    other => Err(crate::UnknownValue {
                        kind: stringify!($name),
                        value: other.to_owned(),
                    }),
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

wire_enum! {
    /// The durable operating mode of a session; the host's SQLite is its authority.
    Mode { Agent = "agent", Plan = "plan" }
}

wire_enum! {
    /// The live Plan state: a projection of the mode, the pending approval and the last outcome.
    PlanState {
        Planning = "planning",
        AwaitingApproval = "awaiting_approval",
        Inactive = "inactive",
        Stopped = "stopped",
    }
}

wire_enum! {
    /// `plan_approvals.status`.
    ApprovalStatus {
        Pending = "pending",
        Approved = "approved",
        Rejected = "rejected",
        Expired = "expired",
        Interrupted = "interrupted",
    }
}

wire_enum! {
    /// `plan_approvals.execution_state`; NULL until approval.
    ExecutionState {
        Queued = "queued",
        Running = "running",
        Completed = "completed",
        Interrupted = "interrupted",
    }
}

wire_enum! {
    /// A session's permission mode. `inherit` defers to the host default.
    PermissionMode {
        Inherit = "inherit",
        Ask = "ask",
        AcceptEdits = "accept-edits",
        Auto = "auto",
    }
}

wire_enum! {
    /// The explicit permission mode chosen at approval; `inherit` is not a choice there.
    TargetPermissionMode { Ask = "ask", AcceptEdits = "accept-edits", Auto = "auto" }
}

wire_enum! {
    /// The two answers an approval surface offers.
    ApprovalAction { Approve = "approve", Reject = "reject" }
}

wire_enum! {
    /// Whether a person is present to answer approvals for this session.
    Interactivity { Interactive = "interactive", Unattended = "unattended" }
}

wire_enum! {
    /// Whether the client keeps its own session across restarts (pi's `--no-session` is
    /// ephemeral): host state is always durable, but an ephemeral client cannot come back to it.
    ClientPersistence { Persisted = "persisted", Ephemeral = "ephemeral" }
}

wire_enum! {
    /// Who started a turn: a person's prompt, a schedule, or the approved execution.
    TurnOrigin { User = "user", Scheduled = "scheduled", Execution = "execution" }
}

wire_enum! {
    /// `turns.state`.
    TurnState { Running = "running", Completed = "completed", Aborted = "aborted" }
}

wire_enum! {
    /// How an execution ends.
    ExecutionOutcome { Completed = "completed", Interrupted = "interrupted" }
}

wire_enum! {
    /// The named tool-policy presets of DESIGN.md: `host` = seed 000, `strict` = 003, `explore` = 004.
    PolicyPreset { Host = "host", Strict = "strict", Explore = "explore" }
}

impl ApprovalStatus {
    /// True for every status but `pending`: terminal rows never change status again.
    pub fn is_terminal(self) -> bool {
        match self {
            ApprovalStatus::Pending => false,
            ApprovalStatus::Approved
            | ApprovalStatus::Rejected
            | ApprovalStatus::Expired
            | ApprovalStatus::Interrupted => true,
        }
    }
}

impl ExecutionState {
    /// Queued or running: the one live execution a session may have.
    pub fn is_live(self) -> bool {
        match self {
            ExecutionState::Queued | ExecutionState::Running => true,
            ExecutionState::Completed | ExecutionState::Interrupted => false,
        }
    }
}

impl From<TargetPermissionMode> for PermissionMode {
    fn from(value: TargetPermissionMode) -> Self {
        match value {
            TargetPermissionMode::Ask => PermissionMode::Ask,
            TargetPermissionMode::AcceptEdits => PermissionMode::AcceptEdits,
            TargetPermissionMode::Auto => PermissionMode::Auto,
        }
    }
}

impl From<ExecutionOutcome> for ExecutionState {
    fn from(value: ExecutionOutcome) -> Self {
        match value {
            ExecutionOutcome::Completed => ExecutionState::Completed,
            ExecutionOutcome::Interrupted => ExecutionState::Interrupted,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::str::FromStr;

    #[test]
    fn wire_strings_round_trip() {
        for m in PermissionMode::ALL {
            assert_eq!(PermissionMode::from_str(m.as_str()).ok(), Some(*m));
        }
        assert_eq!(PlanState::AwaitingApproval.as_str(), "awaiting_approval");
        assert_eq!(PermissionMode::AcceptEdits.as_str(), "accept-edits");
        assert!(Mode::from_str("chat").is_err());
    }

    #[test]
    fn terminal_and_live() {
        assert!(!ApprovalStatus::Pending.is_terminal());
        assert!(ApprovalStatus::Interrupted.is_terminal());
        assert!(ExecutionState::Queued.is_live());
        assert!(!ExecutionState::Completed.is_live());
    }
}

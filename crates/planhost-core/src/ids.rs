//! Typed ids: a session id cannot be passed where a turn id is expected. Each is a plain string
//! on the wire and in the database.

macro_rules! string_id {
    ($($(#[$meta:meta])* $name:ident;)+) => {$(
        $(#[$meta])*
        #[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
        #[cfg_attr(feature = "schema", schemars(transparent))]
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
        #[serde(transparent)]
        pub struct $name(pub String);

        impl $name {
            /// The id as text.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl From<String> for $name {
            fn from(value: String) -> Self {
                Self(value)
            }
        }

        impl From<&str> for $name {
            fn from(value: &str) -> Self {
                Self(value.to_owned())
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }

        impl PartialEq<str> for $name {
            fn eq(&self, other: &str) -> bool {
                self.0 == other
            }
        }

        impl PartialEq<&str> for $name {
            fn eq(&self, other: &&str) -> bool {
                self.0 == *other
            }
        }
    )+};
}

string_id! {
    /// A host session (UUID v7).
    SessionId;
    /// A turn of a session (UUID v7).
    TurnId;
    /// The client's id for one tool call (pi's `toolCallId`).
    ToolCallId;
    /// A seed 000 plan approval, `plan_approvals.request_id` (UUID v7).
    ProposalId;
    /// The execution an approval queued (UUID v7).
    ExecutionId;
    /// A permission ask raised by the tool policy (UUID v7).
    AskId;
    /// A publication approval (`/plan save`) (UUID v7).
    PublicationId;
    /// The stable plan identity of a session (UUID v7).
    PlanId;
    /// A client transcript entry (pi's entry id): branch paths and capture sources.
    EntryId;
}

/// A stored plan checkpoint; newer checkpoints have larger ids.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(transparent))]
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(transparent)]
pub struct CheckpointId(pub i64);

impl std::fmt::Display for CheckpointId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// How a typed id prefix or suffix matched the known ids (people type shortened ids).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IdMatch {
    /// Exactly one id matches.
    One(String),
    /// Nothing matches (or the text is too short to be taken as a prefix).
    None,
    /// More than one matches; every candidate, sorted.
    Ambiguous(Vec<String>),
}

/// The shortest prefix or suffix accepted for a shortened id: long enough that a random UUID v7
/// suffix is practically unique, short enough to type.
pub const MIN_ID_PREFIX: usize = 8;

/// How an id is shown to a person everywhere (the CLI, the page, the agents' sentences): its last
/// [`MIN_ID_PREFIX`] characters, the random end of a UUID v7 (its start is a timestamp, which
/// plans made within a minute share). [`match_id`] takes it back.
pub fn short_id(id: &str) -> &str {
    id.len()
        .checked_sub(MIN_ID_PREFIX)
        .and_then(|start| id.get(start..))
        .unwrap_or(id)
}

/// Resolves what a person typed against the known ids: an exact id wins; otherwise a unique
/// prefix or suffix of at least [`MIN_ID_PREFIX`] characters (`planhost plans` prints the random
/// suffix of a UUID v7, whose prefix is only a timestamp).
pub fn match_id<'a>(typed: &str, known: impl IntoIterator<Item = &'a str>) -> IdMatch {
    let mut matches = Vec::new();
    for id in known {
        if id == typed {
            return IdMatch::One(id.to_owned());
        }
        if typed.len() >= MIN_ID_PREFIX && (id.starts_with(typed) || id.ends_with(typed)) {
            matches.push(id.to_owned());
        }
    }
    matches.sort();
    matches.dedup();
    match matches.len() {
        0 => IdMatch::None,
        1 => IdMatch::One(matches.swap_remove(0)),
        _ => IdMatch::Ambiguous(matches),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const IDS: [&str; 3] = [
        "01a22a2e-686d-719e-bc7a-3a29d09703b1",
        "01a22a2e-6873-71d9-9fff-5307c0256a2f",
        "01a22a2e-6873-71d9-9fff-5307c0256a2e",
    ];

    #[test]
    fn exact_prefix_suffix_and_ambiguity() {
        assert_eq!(match_id(IDS[0], IDS), IdMatch::One(IDS[0].into()));
        assert_eq!(match_id("d09703b1", IDS), IdMatch::One(IDS[0].into()));
        assert_eq!(match_id("01a22a2e-686d", IDS), IdMatch::One(IDS[0].into()));
        assert_eq!(
            match_id("01a22a2e-6873", IDS),
            IdMatch::Ambiguous(vec![IDS[2].into(), IDS[1].into()])
        );
        // Short text is never a prefix: "01a2" would match every id of the same millisecond.
        assert_eq!(match_id("01a2", IDS), IdMatch::None);
        assert_eq!(match_id("ffffffff", IDS), IdMatch::None);
    }

    #[test]
    fn ids_are_plain_strings_on_the_wire() {
        let id = SessionId::from("s-1");
        assert_eq!(serde_json::to_string(&id).unwrap(), "\"s-1\"");
        assert_eq!(serde_json::to_string(&CheckpointId(7)).unwrap(), "7");
    }
}

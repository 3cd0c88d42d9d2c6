//! The `/plan` command grammar of seed 003 ("Command lifecycle").
//!
//! Rules, where the seed is silent:
//! - The input is the whole line as typed. Spaces, tabs, `\r` and `\n` at either end are ignored,
//!   so a trailing newline is fine.
//! - The command word is exactly `/plan`; `/planx`, `/PLAN` and `plan` are not it.
//! - At most one argument follows, separated by one or more spaces or tabs. Arguments are
//!   case-sensitive: `save`, `preview`, `exit`, `status`, `help`, `--help`, `-h`.
//! - Seed 004's handoff flags are admitted too (DESIGN's grammar row: 003's grammar plus 004's
//!   four flags): `--review`, `--retry`, `--cancel-handoff`, and `--execute-fresh`, which is
//!   parsed so that it can say it is unavailable.
//! - Anything else after `/plan` (`/plan <task>`, `/plan pause`, `/plan save now`, an argument
//!   joined by a newline or a non-ASCII space) is rejected with [`HELP_TEXT`]: the task is given as
//!   a normal prompt once Plan mode is active.

/// Usage shown by `/plan help` and with every rejected `/plan` line.
pub const HELP_TEXT: &str = "\
Usage:
  /plan            Enter Plan mode (restores this session's plan; a no-op while active)
  /plan save       Checkpoint if needed, then publish the latest exact checkpoint; stays in Plan mode
  /plan preview    Show the latest exact checkpoint without publishing or starting a turn
  /plan exit       Leave Plan mode, first offering to publish an unpublished checkpoint
  /plan status     Show mode, revision, publication state, path and session persistence
  /plan help       Show this help (also /plan --help and /plan -h)

A plan the model proposed in a <proposed_plan> block can be handed to execution:
  /plan --review          Review the proposed plan and confirm its execution (or a pending handoff)
  /plan --retry           Confirm a pending handoff again (after a restart it is never sent by itself)
  /plan --cancel-handoff  Cancel a pending handoff and keep planning
  /plan --execute-fresh   Execute in a fresh session (unavailable: pi cannot persist one first)

Enter Plan mode first, then give the task as a normal prompt.
";

/// Autocomplete arguments in seed 003's order: the subcommands, then the retained aliases, then
/// seed 004's handoff flags.
pub const COMPLETIONS: [&str; 11] = [
    "save",
    "preview",
    "exit",
    "status",
    "help",
    "--help",
    "-h",
    "--review",
    "--retry",
    "--cancel-handoff",
    "--execute-fresh",
];

/// The command word every accepted line starts with.
const COMMAND: &str = "/plan";

/// One accepted `/plan` command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub enum PlanCommand {
    /// `/plan`: enter (or restore) Plan mode.
    Enter,
    /// `/plan save`: publish the latest exact checkpoint and stay in Plan mode.
    Save,
    /// `/plan preview`: show the latest checkpoint without publishing.
    Preview,
    /// `/plan exit`: the one leave/pause command.
    Exit,
    /// `/plan status`: report state without an agent turn.
    Status,
    /// `/plan help`, `--help`, `-h`: show usage without changing state.
    Help,
    /// `/plan --review`: review the ready plan (or a pending handoff) for execution (seed 004).
    Review,
    /// `/plan --retry`: confirm a pending handoff again with a fresh token (seed 004).
    Retry,
    /// `/plan --cancel-handoff`: a pending handoff goes back to ready (seed 004).
    CancelHandoff,
    /// `/plan --execute-fresh`: reported unavailable (seed 004 "Public API limitation").
    ExecuteFresh,
}

impl PlanCommand {
    /// The argument that names the command; `None` for bare `/plan`.
    pub fn argument(self) -> Option<&'static str> {
        match self {
            PlanCommand::Enter => None,
            PlanCommand::Save => Some("save"),
            PlanCommand::Preview => Some("preview"),
            PlanCommand::Exit => Some("exit"),
            PlanCommand::Status => Some("status"),
            PlanCommand::Help => Some("help"),
            PlanCommand::Review => Some("--review"),
            PlanCommand::Retry => Some("--retry"),
            PlanCommand::CancelHandoff => Some("--cancel-handoff"),
            PlanCommand::ExecuteFresh => Some("--execute-fresh"),
        }
    }
}

/// A rejected `/plan` line. Its [`Display`](std::fmt::Display) ends with [`HELP_TEXT`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanCommandError {
    /// The line does not start with the command word `/plan` (`/planx`, empty input).
    #[error("not a /plan command: {command:?}\n\n{HELP_TEXT}")]
    NotPlanCommand {
        /// The first word of the line, or the whole trimmed line.
        command: String,
    },
    /// The text after `/plan` is not exactly one accepted argument.
    #[error("/plan does not accept {argument:?}\n\n{HELP_TEXT}")]
    InvalidArgument {
        /// Everything after `/plan`, trimmed.
        argument: String,
    },
}

impl PlanCommandError {
    /// The stable wire code.
    pub fn code(&self) -> crate::ErrorCode {
        crate::ErrorCode::PlanCommandInvalid
    }

    /// The offending text.
    pub fn argument(&self) -> &str {
        match self {
            PlanCommandError::NotPlanCommand { command } => command,
            PlanCommandError::InvalidArgument { argument } => argument,
        }
    }

    /// The usage to show with the rejection.
    pub fn help(&self) -> &'static str {
        HELP_TEXT
    }
}

/// Parses a whole `/plan` command line as typed.
pub fn parse_plan_command(input: &str) -> Result<PlanCommand, PlanCommandError> {
    let line = input.trim_matches([' ', '\t', '\r', '\n']);
    let (word, rest) = match line.find([' ', '\t']) {
        Some(i) => (&line[..i], &line[i..]),
        None => (line, ""),
    };
    if word != COMMAND {
        return Err(PlanCommandError::NotPlanCommand {
            command: word.to_owned(),
        });
    }
    let argument = rest.trim_start_matches([' ', '\t']);
    match argument {
        "" => Ok(PlanCommand::Enter),
        "save" => Ok(PlanCommand::Save),
        "preview" => Ok(PlanCommand::Preview),
        "exit" => Ok(PlanCommand::Exit),
        "status" => Ok(PlanCommand::Status),
        "help" | "--help" | "-h" => Ok(PlanCommand::Help),
        "--review" => Ok(PlanCommand::Review),
        "--retry" => Ok(PlanCommand::Retry),
        "--cancel-handoff" => Ok(PlanCommand::CancelHandoff),
        "--execute-fresh" => Ok(PlanCommand::ExecuteFresh),
        other => Err(PlanCommandError::InvalidArgument {
            argument: other.to_owned(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn every_completion_parses_to_a_command() {
        for word in COMPLETIONS {
            let parsed = parse_plan_command(&format!("/plan {word}"));
            assert!(parsed.is_ok(), "{word}: {parsed:?}");
        }
    }

    #[test]
    fn argument_round_trips() {
        for cmd in [
            PlanCommand::Enter,
            PlanCommand::Save,
            PlanCommand::Preview,
            PlanCommand::Exit,
            PlanCommand::Status,
            PlanCommand::Help,
            PlanCommand::Review,
            PlanCommand::Retry,
            PlanCommand::CancelHandoff,
            PlanCommand::ExecuteFresh,
        ] {
            let line = match cmd.argument() {
                Some(arg) => format!("/plan {arg}"),
                None => "/plan".to_owned(),
            };
            assert_eq!(parse_plan_command(&line), Ok(cmd));
        }
    }

    /// Accepted iff the line, split on runs of spaces/tabs after trimming, is `/plan` plus at most
    /// one accepted word. Written from the module rules, independently of the parser.
    fn reference(input: &str) -> Option<&'static str> {
        let trimmed = input.trim_matches(|c| matches!(c, ' ' | '\t' | '\r' | '\n'));
        let words: Vec<&str> = trimmed
            .split([' ', '\t'])
            .filter(|w| !w.is_empty())
            .collect();
        match words.as_slice() {
            ["/plan"] => Some(""),
            ["/plan", w] => COMPLETIONS.iter().copied().find(|c| c == w),
            _ => None,
        }
    }

    fn soup() -> impl Strategy<Value = String> {
        let piece = prop::sample::select(vec![
            "/plan",
            "/planx",
            "/PLAN",
            "plan",
            " ",
            "  ",
            "\t",
            "\n",
            "\r\n",
            "save",
            "Save",
            "preview",
            "exit",
            "status",
            "help",
            "--help",
            "-h",
            "-H",
            "pause",
            "now",
            "\u{a0}",
            "--review",
            "--retry",
            "--cancel-handoff",
            "--execute-fresh",
            "--Review",
            "é",
            "",
        ]);
        prop::collection::vec(piece, 0..6).prop_map(|v| v.concat())
    }

    proptest! {
        #[test]
        fn arbitrary_strings_never_panic(s in ".*") {
            let _ = parse_plan_command(&s);
        }

        #[test]
        fn only_accepted_spellings_parse(s in soup()) {
            match (parse_plan_command(&s), reference(&s)) {
                (Ok(cmd), Some(word)) => {
                    let expected = match word {
                        "" => None,
                        "--help" | "-h" => Some("help"),
                        other => Some(other),
                    };
                    prop_assert_eq!(cmd.argument(), expected);
                }
                (Err(e), None) => {
                    prop_assert_eq!(e.code().as_str(), "PLAN_COMMAND_INVALID");
                    prop_assert!(e.to_string().ends_with(HELP_TEXT));
                }
                (got, want) => prop_assert!(false, "{s:?}: parser {got:?}, reference {want:?}"),
            }
        }
    }
}

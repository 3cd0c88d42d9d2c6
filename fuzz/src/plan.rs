//! The `/plan` grammar: accepted exactly when the line is `/plan` and at most one accepted word
//! (the reference below, written from the module rules, independently of the parser); every
//! rejection is `PLAN_COMMAND_INVALID` and ends with the help text.

use planhost_core::{COMPLETIONS, HELP_TEXT, PlanCommand, parse_plan_command};

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

/// Every invariant of one line.
pub fn check(input: &str) {
    let parsed = parse_plan_command(input);
    match (&parsed, reference(input)) {
        (Ok(cmd), Some(word)) => {
            let expected = match word {
                "" => None,
                "--help" | "-h" => Some("help"),
                other => Some(other),
            };
            assert_eq!(cmd.argument(), expected);
            // The canonical spelling parses to the same command.
            let canonical = match cmd.argument() {
                Some(arg) => format!("/plan {arg}"),
                None => "/plan".to_owned(),
            };
            assert_eq!(parse_plan_command(&canonical).as_ref(), Ok(cmd));
        }
        (Err(e), None) => {
            assert_eq!(e.code().as_str(), "PLAN_COMMAND_INVALID");
            assert!(e.to_string().ends_with(HELP_TEXT));
            assert_eq!(e.help(), HELP_TEXT);
        }
        (got, want) => panic!("{input:?}: parser {got:?}, reference {want:?}"),
    }
    // Surrounding spaces, tabs and line endings never change the answer.
    assert_eq!(parse_plan_command(&format!(" \t{input}\r\n")), parsed);
    // The wire form round-trips.
    if let Ok(cmd) = parsed {
        let json = serde_json::to_string(&cmd).unwrap_or_else(|e| panic!("{e}"));
        let back: PlanCommand = serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(back, cmd);
    }
}

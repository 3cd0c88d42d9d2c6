//! The `/plan` grammar corpus: every line a person might type, and what it means.

use planhost_core::{COMPLETIONS, HELP_TEXT, PlanCommand, parse_plan_command};

/// `Ok(command)` or `Err(offending text)`.
type Want = Result<PlanCommand, &'static str>;

const CORPUS: &[(&str, Want)] = &[
    ("/plan", Ok(PlanCommand::Enter)),
    ("/plan\n", Ok(PlanCommand::Enter)),
    ("/plan\r\n", Ok(PlanCommand::Enter)),
    ("  /plan  ", Ok(PlanCommand::Enter)),
    ("/plan save", Ok(PlanCommand::Save)),
    ("/plan  save ", Ok(PlanCommand::Save)),
    ("/plan\tsave\n", Ok(PlanCommand::Save)),
    ("/plan \t preview", Ok(PlanCommand::Preview)),
    ("/plan exit", Ok(PlanCommand::Exit)),
    ("/plan status", Ok(PlanCommand::Status)),
    ("/plan help", Ok(PlanCommand::Help)),
    ("/plan --help", Ok(PlanCommand::Help)),
    ("/plan -h", Ok(PlanCommand::Help)),
    // Rejected arguments: the seed's examples, then near misses.
    ("/plan pause", Err("pause")),
    ("/plan cancel", Err("cancel")),
    ("/plan add a login page", Err("add a login page")),
    ("/plan save now", Err("save now")),
    ("/plan save  now\n", Err("save  now")),
    ("/plan Save", Err("Save")),
    ("/plan SAVE", Err("SAVE")),
    ("/plan --HELP", Err("--HELP")),
    ("/plan -help", Err("-help")),
    ("/plan --h", Err("--h")),
    ("/plan ?", Err("?")),
    ("/plan help help", Err("help help")),
    // Seed 004's flags, exactly as spelled (DESIGN's grammar row).
    ("/plan --review", Ok(PlanCommand::Review)),
    ("/plan --retry", Ok(PlanCommand::Retry)),
    ("/plan --cancel-handoff", Ok(PlanCommand::CancelHandoff)),
    ("/plan --execute-fresh", Ok(PlanCommand::ExecuteFresh)),
    ("/plan --Review", Err("--Review")),
    ("/plan review", Err("review")),
    ("/plan --review now", Err("--review now")),
    ("/plan --cancel", Err("--cancel")),
    ("/plan save\u{a0}", Err("save\u{a0}")),
    ("/plan \u{a0}save", Err("\u{a0}save")),
    // Not the command word.
    ("/planx", Err("/planx")),
    ("/plansave", Err("/plansave")),
    ("/PLAN", Err("/PLAN")),
    ("plan save", Err("plan")),
    ("/plan\nsave", Err("/plan\nsave")),
    ("/plan\u{a0}save", Err("/plan\u{a0}save")),
    ("", Err("")),
    ("   \n", Err("")),
    ("//plan", Err("//plan")),
];

#[test]
fn corpus() {
    for (input, want) in CORPUS {
        let got = parse_plan_command(input);
        match (&got, want) {
            (Ok(cmd), Ok(expected)) => assert_eq!(cmd, expected, "{input:?}"),
            (Err(e), Err(argument)) => {
                assert_eq!(e.argument(), *argument, "{input:?}");
                assert_eq!(e.code().as_str(), "PLAN_COMMAND_INVALID", "{input:?}");
                assert_eq!(e.help(), HELP_TEXT);
                assert!(e.to_string().ends_with(HELP_TEXT), "{input:?}");
            }
            (got, want) => panic!("{input:?}: got {got:?}, want {want:?}"),
        }
    }
}

#[test]
fn help_documents_every_subcommand_and_the_task_rule() {
    for word in [
        "/plan ",
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
    ] {
        assert!(HELP_TEXT.contains(word), "{word}");
    }
    assert!(HELP_TEXT.contains("Enter Plan mode first, then give the task as a normal prompt."));
}

#[test]
fn completions_follow_the_seed_order() {
    assert_eq!(
        COMPLETIONS,
        [
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
            "--execute-fresh"
        ]
    );
}

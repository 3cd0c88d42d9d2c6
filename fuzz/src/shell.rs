//! The shell classifier on any line: deterministic; `command_facts` gives `classify_command`'s
//! verdict; a proven line starts no unknown program and stays unproven once a writing command
//! follows (or precedes) it on its own line; an unknown program never leaves git "here"; the
//! fast parser, the fast word reader and the here-document shortcut agree with brush-parser
//! wherever they answer (`planhost_core::shell_fuzzing`); and each line is classified within a
//! bound of time.

use std::sync::Once;
use std::time::{Duration, Instant};

use planhost_core::{Dialect, GitUse, classify_command, command_facts, shell_fuzzing};

/// Commands that write, each on its own line after (or before) a proven line.
const WRITERS: &[&str] = &["rm -f x", "echo x > f", "find . -delete", "sed -i s/a/b/ f"];

/// Far above the classifier's cost (~50 µs for 4 KiB in a release build): a line that takes
/// this long is a way to stall the policy.
const TIME_BOUND: Duration = Duration::from_secs(2);

/// brush-parser unwraps a few number parses; the classifier catches a panic there and answers
/// "not proven". libFuzzer's hook aborts on any panic before it unwinds, so a panic raised
/// inside brush-parser is let unwind to the classifier's catch; if the classifier did not
/// catch it, libfuzzer-sys still aborts. Any other panic aborts at once, as before.
fn let_brush_panics_unwind() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let abort = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let in_brush = info
                .location()
                .is_some_and(|at| at.file().contains("brush-parser"));
            if !in_brush {
                abort(info);
            }
        }));
    });
}

/// Every invariant of one line.
pub fn check(line: &str) {
    let_brush_panics_unwind();
    let start = Instant::now();
    let facts = command_facts(line, Dialect::Posix);
    let took = start.elapsed();
    assert!(took < TIME_BOUND, "{line:?} took {took:?}");

    assert_eq!(command_facts(line, Dialect::Posix), facts, "{line:?}");
    assert_eq!(
        classify_command(line, Dialect::Posix),
        facts.safety,
        "{line:?}"
    );
    if let Some(reason) = facts.safety.reason() {
        assert!(!reason.to_string().is_empty(), "{line:?}");
    }
    if facts.unknown_program {
        assert!(
            !facts.safety.is_read_only(),
            "{line:?}: proven, yet an unknown program"
        );
        assert_ne!(facts.git, GitUse::Here, "{line:?}");
    }
    if facts.git != GitUse::None {
        let git = facts
            .programs
            .iter()
            .any(|p| p.rsplit('/').next() == Some("git"));
        assert!(
            git,
            "{line:?}: git {:?} without a git among {:?}",
            facts.git, facts.programs
        );
    }
    for (i, program) in facts.programs.iter().enumerate() {
        assert!(
            !facts.programs[..i].contains(program),
            "{line:?}: {program} twice"
        );
    }
    if facts.safety.is_read_only() {
        for writer in WRITERS {
            for joined in [format!("{line}\n{writer}"), format!("{writer}\n{line}")] {
                let verdict = classify_command(&joined, Dialect::Posix);
                assert!(!verdict.is_read_only(), "{joined:?} is proven read-only");
            }
        }
    }

    shell_fuzzing::parsers_agree(line).unwrap_or_else(|e| panic!("{e}"));
    shell_fuzzing::heredoc_agrees(line).unwrap_or_else(|e| panic!("{e}"));
    for word in line.split([' ', '\t', '\n', ';', '|', '&', '<', '>', '(', ')']) {
        shell_fuzzing::word_agrees(word).unwrap_or_else(|e| panic!("{e}"));
    }
}

use super::*;
use crate::{CatalogEntry, CommandInput, PermissionMode, TargetPermissionMode};
use pretty_assertions::assert_eq;
use proptest::prelude::*;
use serde::Deserialize;
use std::collections::BTreeSet;

const ALONE: BatchPosition = BatchPosition { index: 0, size: 1 };

const GENUINE_WEB: &str = "/home/u/.pi/agent/npm/node_modules/@pithos-kit/web/dist/index.js";

fn ext(package: &str, source_path: &str) -> ToolProvenance {
    ToolProvenance::Extension {
        package: package.into(),
        source_path: source_path.into(),
    }
}

fn decide(
    preset: PolicyPreset,
    mode: Mode,
    permission_mode: EffectivePermission,
    tool_name: &str,
    provenance: &ToolProvenance,
    batch: BatchPosition,
) -> Decision {
    decide_command(
        preset,
        mode,
        permission_mode,
        tool_name,
        provenance,
        batch,
        None,
    )
}

/// A command line that writes, and one the classifier proves read-only.
const WRITES: &str = "find . -name victim.txt -delete";
const READS: &str = "ls";

fn decide_command(
    preset: PolicyPreset,
    mode: Mode,
    permission_mode: EffectivePermission,
    tool_name: &str,
    provenance: &ToolProvenance,
    batch: BatchPosition,
    command: Option<&str>,
) -> Decision {
    let allow_list = default_strict_allow_list();
    authorize(&AuthorizeInput {
        facts: &CallFacts::NONE,
        agent: Agent::Pi,
        preset,
        mode,
        permission_mode,
        tool_name,
        provenance,
        batch,
        allow_list: &allow_list,
        command,
        dialect: Dialect::Posix,
        verdict: None,
    })
}

fn strict_plan(tool_name: &str, provenance: &ToolProvenance) -> Decision {
    decide(
        PolicyPreset::Strict,
        Mode::Plan,
        EffectivePermission::Auto,
        tool_name,
        provenance,
        ALONE,
    )
}

/// "allow", "ask", or the deny code.
fn outcome(decision: &Decision) -> &'static str {
    match decision {
        Decision::Allow { .. } => "allow",
        Decision::Ask { .. } => "ask",
        Decision::Deny { code, .. } => code.as_str(),
    }
}

// ---------------------------------------------------------------------------------------------
// The expectation table. Written from DESIGN.md and the seeds, row by row; the first row that
// matches wins. `*` matches anything, `a|b` matches either.

/// Every name the table is checked with, and its class in the table's own words.
const NAMES: &[(&str, &str)] = &[
    ("Read", "read"),
    ("read", "read"),
    ("Glob", "read"),
    ("find", "read"),
    ("ls", "read"),
    ("Grep", "read"),
    ("grep", "read"),
    ("Write", "write"),
    ("write", "write"),
    ("Edit", "edit"),
    ("edit", "edit"),
    ("apply_patch", "writer-elsewhere"),
    ("Bash", "shell"),
    ("bash", "shell"),
    ("EnterPlanMode", "enter"),
    ("SubmitPlan", "submit"),
    ("update_plan_draft", "draft"),
    ("create_plan", "create"),
    ("CompactContext", "utility"),
    ("BrowserPreview", "utility"),
    ("web_search", "web"),
    ("web_fetch", "web"),
    ("READ", "unknown"),
    ("Delete", "unknown"),
    ("task", "unknown"),
    ("mcp__github__create_issue", "unknown"),
    ("", "unknown"),
];

/// Provenances the table is checked with.
fn provenances() -> Vec<(&'static str, ToolProvenance)> {
    vec![
        ("builtin", ToolProvenance::BuiltIn),
        ("ext-web", ext(WEB_TOOLS_PACKAGE, GENUINE_WEB)),
        (
            "ext-other",
            ext("my-tools", "/home/u/proj/node_modules/my-tools/index.js"),
        ),
        (
            "ext-spoof",
            ext(WEB_TOOLS_PACKAGE, "/home/u/.pi/agent/extensions/web.ts"),
        ),
    ]
}

const EXT: &str = "ext-web|ext-other|ext-spoof";
const KNOWN_NAMES: &str = "read|write|edit|shell|shell-ro|enter|submit|draft|create|utility|web";

/// (preset, mode, permission, tool class, provenance) => outcome.
const TABLE: &[[&str; 6]] = &[
    // Plan never writes files, whoever provides the tool (000 §1, 003, 004, DESIGN).
    [
        "*",
        "plan",
        "*",
        "write|edit|writer-elsewhere",
        "*",
        "POLICY_PLAN_WRITE_DENIED",
    ],
    // The host's catalog: anything else claimed as built-in is refused (decision 4).
    [
        "*",
        "*",
        "*",
        "web",
        "builtin",
        "POLICY_PROVENANCE_MISMATCH",
    ],
    // Another agent's writer is no pi built-in (Agent mode; Plan denied it by name above).
    [
        "*",
        "*",
        "*",
        "unknown|writer-elsewhere",
        "builtin",
        "POLICY_UNKNOWN_TOOL",
    ],
    [
        "*",
        "*",
        "*",
        "create",
        "builtin",
        "POLICY_PUBLICATION_COMMAND_ONLY",
    ],
    // Agent mode, DESIGN "Permission modes".
    ["*", "agent", "*", "read|utility|enter", "builtin", "allow"],
    ["*", "agent", "ask", "write|edit", "builtin", "ask"],
    [
        "*",
        "agent",
        "accept-edits|auto",
        "write|edit",
        "builtin",
        "allow",
    ],
    ["*", "agent", "auto", "shell|shell-ro", "builtin", "allow"],
    [
        "*",
        "agent",
        "ask|accept-edits",
        "shell-ro",
        "builtin",
        "allow",
    ],
    ["*", "agent", "ask|accept-edits", "shell", "builtin", "ask"],
    [
        "*",
        "agent",
        "*",
        "submit|draft",
        "builtin",
        "POLICY_PLAN_MODE_NOT_ACTIVE",
    ],
    ["*", "agent", "auto", "*", EXT, "allow"],
    ["*", "agent", "ask|accept-edits", "*", EXT, "ask"],
    // Plan, host = seed 000 §1.
    [
        "host",
        "plan",
        "*",
        "read|utility|enter|submit|draft",
        "builtin",
        "allow",
    ],
    // Decision 11: in Plan a command runs unasked only when proven read-only, whatever the
    // permission mode an earlier approval left.
    ["host", "plan", "*", "shell-ro", "builtin", "allow"],
    ["host", "plan", "*", "shell", "builtin", "ask"],
    ["host", "plan", "*", "*", EXT, "POLICY_PLUGIN_DENIED"],
    // Plan, literal = seed 000 §1 word for word: Bash strictly by the permission mode.
    [
        "literal",
        "plan",
        "*",
        "read|utility|enter|submit|draft",
        "builtin",
        "allow",
    ],
    [
        "literal",
        "plan",
        "auto",
        "shell|shell-ro",
        "builtin",
        "allow",
    ],
    [
        "literal",
        "plan",
        "ask|accept-edits",
        "shell|shell-ro",
        "builtin",
        "ask",
    ],
    ["literal", "plan", "*", "*", EXT, "POLICY_PLUGIN_DENIED"],
    // Plan, strict = seed 003.
    ["strict", "plan", "*", "read|draft", "builtin", "allow"],
    [
        "strict",
        "plan",
        "*",
        "shell|shell-ro",
        "builtin",
        "POLICY_PLAN_SHELL_DENIED",
    ],
    [
        "strict",
        "plan",
        "*",
        "utility|enter|submit",
        "builtin",
        "POLICY_STRICT_TOOL_DENIED",
    ],
    ["strict", "plan", "*", "web", "ext-web", "allow"],
    [
        "strict",
        "plan",
        "*",
        KNOWN_NAMES,
        EXT,
        "POLICY_PROVENANCE_MISMATCH",
    ],
    [
        "strict",
        "plan",
        "*",
        "unknown",
        EXT,
        "POLICY_PLUGIN_DENIED",
    ],
    // Plan, explore = seed 004: only the file writers are blocked.
    [
        "explore",
        "plan",
        "*",
        "read|utility|enter|submit|draft",
        "builtin",
        "allow",
    ],
    ["explore", "plan", "*", "shell-ro", "builtin", "allow"],
    ["explore", "plan", "auto", "shell", "builtin", "allow"],
    [
        "explore",
        "plan",
        "ask|accept-edits",
        "shell",
        "builtin",
        "ask",
    ],
    ["explore", "plan", "auto", "*", EXT, "allow"],
    ["explore", "plan", "ask|accept-edits", "*", EXT, "ask"],
];

fn cell_matches(cell: &str, value: &str) -> bool {
    cell == "*" || cell.split('|').any(|c| c == value)
}

#[test]
fn every_combination_matches_the_expectation_table() {
    let mut used = BTreeSet::new();
    let mut checked = 0;
    for preset in PolicyPreset::ALL {
        for mode in Mode::ALL {
            for permission in EffectivePermission::ALL {
                let calls = NAMES.iter().flat_map(|&(name, class)| {
                    if class == "shell" {
                        vec![
                            (name, "shell", Some(WRITES)),
                            (name, "shell-ro", Some(READS)),
                        ]
                    } else {
                        vec![(name, class, None)]
                    }
                });
                for (name, class, command) in calls {
                    for (prov_label, provenance) in provenances() {
                        let key = [
                            preset.as_str(),
                            mode.as_str(),
                            permission.as_str(),
                            class,
                            prov_label,
                        ];
                        let row = TABLE.iter().position(|row| {
                            row.iter().zip(key).all(|(cell, v)| cell_matches(cell, v))
                        });
                        let Some(row) = row else {
                            panic!("no expectation row for {key:?} ({name})");
                        };
                        used.insert(row);
                        let got = decide_command(
                            *preset,
                            *mode,
                            *permission,
                            name,
                            &provenance,
                            ALONE,
                            command,
                        );
                        assert_eq!(
                            outcome(&got),
                            TABLE[row][5],
                            "{key:?} tool {name:?}: {got:?} (row {row})"
                        );
                        checked += 1;
                    }
                }
            }
        }
    }
    let shells = NAMES.iter().filter(|(_, c)| *c == "shell").count();
    assert_eq!(checked, 4 * 2 * 3 * (NAMES.len() + shells) * 4);
    let unused: Vec<_> = (0..TABLE.len()).filter(|i| !used.contains(i)).collect();
    assert!(
        unused.is_empty(),
        "expectation rows never exercised: {unused:?}"
    );
}

#[test]
fn classification_covers_host_and_pi_names() {
    for (name, class) in NAMES {
        let nature = Agent::Pi.classify(name).nature;
        let expected = match *class {
            "read" => ToolNature::ReadsFiles,
            "write" | "edit" => ToolNature::ChangesFiles,
            "shell" => ToolNature::RunsCommands,
            "enter" => ToolNature::EnterPlan,
            "submit" => ToolNature::SubmitPlan,
            "draft" => ToolNature::DraftPlan,
            "create" => ToolNature::PublishPlan,
            "utility" => ToolNature::HostUtility,
            "web" => ToolNature::ExtensionWeb,
            other => {
                assert!(matches!(other, "unknown" | "writer-elsewhere"), "{other}");
                ToolNature::Unknown
            }
        };
        // pi's searches are searches; the table calls them reads.
        let nature = if nature == ToolNature::SearchesFiles {
            ToolNature::ReadsFiles
        } else {
            nature
        };
        assert_eq!(nature, expected, "{name}");
    }
}

// ---------------------------------------------------------------------------------------------
// Seed 003: "Same-named SDK, top-level, path-escaping, spoofed-source, and unrelated custom
// tools stay blocked."

#[test]
fn strict_admits_the_genuine_web_tools() {
    for tool in ["web_search", "web_fetch"] {
        for path in [
            GENUINE_WEB,
            "/usr/lib/node_modules/@pithos-kit/web/index.js",
            "/p/node_modules/.pnpm/x/node_modules/@pithos-kit/web/src/tools/fetch.ts",
            "C:\\Users\\u\\AppData\\node_modules\\@pithos-kit\\web\\dist\\index.js",
            "D:/npm/node_modules/@pithos-kit/web/index.js",
        ] {
            let d = strict_plan(tool, &ext(WEB_TOOLS_PACKAGE, path));
            assert_eq!(
                d.rule().as_str(),
                "plan.strict.allow_listed_extension",
                "{tool} {path}"
            );
            assert_eq!(outcome(&d), "allow");
        }
    }
}

#[test]
fn strict_blocks_every_spoof_of_seed_003() {
    const WEB: &str = WEB_TOOLS_PACKAGE;
    const MISMATCH: &str = "POLICY_PROVENANCE_MISMATCH";
    const PLUGIN: &str = "POLICY_PLUGIN_DENIED";
    // Same-named SDK tools: a built-in claim for a web tool.
    for tool in ["web_search", "web_fetch"] {
        assert_eq!(
            outcome(&strict_plan(tool, &ToolProvenance::BuiltIn)),
            MISMATCH
        );
    }
    // (case, tool, package, source path, expected)
    #[rustfmt::skip]
    let cases = [
        // top-level extension files, not inside the package
        ("top-level", "web_search", WEB, "/u/.pi/agent/extensions/web_search.ts", MISMATCH),
        ("project top-level", "web_fetch", WEB, "/repo/.pi/extensions/index.ts", MISMATCH),
        // path-escaping
        ("dot-dot out", "web_search", WEB, "/u/node_modules/@pithos-kit/web/../../e/i.js", MISMATCH),
        ("dot-dot in", "web_search", WEB, "/e/x/../node_modules/@pithos-kit/web/i.js", MISMATCH),
        ("dot", "web_search", WEB, "/u/node_modules/@pithos-kit/./web/i.js", MISMATCH),
        ("windows dot-dot", "web_fetch", WEB, r"C:\u\node_modules\@pithos-kit\web\..\e.js", MISMATCH),
        ("relative", "web_search", WEB, "node_modules/@pithos-kit/web/i.js", MISMATCH),
        ("UNC", "web_search", WEB, r"\\h\s\node_modules\@pithos-kit\web\i.js", MISMATCH),
        ("empty component", "web_search", WEB, "/u/node_modules//@pithos-kit/web/i.js", MISMATCH),
        // spoofed source: the package claim and the path disagree
        ("other package dir", "web_search", WEB, "/u/node_modules/@evil/web/i.js", MISMATCH),
        ("prefix package", "web_search", WEB, "/u/node_modules/@pithos-kit/webx/i.js", MISMATCH),
        ("nested dependency", "web_search", WEB, "/u/node_modules/@pithos-kit/web/node_modules/e/i.js", MISMATCH),
        ("package dir, no file", "web_search", WEB, "/u/node_modules/@pithos-kit/web", MISMATCH),
        ("backslash in a POSIX name", "web_search", WEB, r"/u/node_modules\@pithos-kit\web\i.js", MISMATCH),
        ("case variant", "web_search", WEB, "/u/node_modules/@Pithos-Kit/web/i.js", MISMATCH),
        ("other package claimed", "web_search", "@evil/web", GENUINE_WEB, MISMATCH),
        ("look-alike package", "web_search", "@pithos-kit/web ", GENUINE_WEB, MISMATCH),
        // same-named overrides of trusted built-ins
        ("extension read", "read", WEB, GENUINE_WEB, MISMATCH),
        ("extension grep", "grep", "my-tools", "/u/node_modules/my-tools/i.js", MISMATCH),
        ("extension draft", "update_plan_draft", "t", "/u/node_modules/t/i.js", MISMATCH),
        // unrelated custom tools, even from the trusted package
        ("custom tool", "docs_lookup", "my-tools", "/u/node_modules/my-tools/i.js", PLUGIN),
        ("custom tool, web package", "web_crawl", WEB, GENUINE_WEB, PLUGIN),
    ];
    for (case, tool, package, path, code) in cases {
        let d = strict_plan(tool, &ext(package, path));
        assert_eq!(outcome(&d), code, "{case}: {d:?}");
    }
}

#[test]
fn strict_with_an_empty_allow_list_admits_no_extension() {
    let provenance = ext(WEB_TOOLS_PACKAGE, GENUINE_WEB);
    let d = authorize(&AuthorizeInput {
        facts: &CallFacts::NONE,
        agent: Agent::Pi,
        preset: PolicyPreset::Strict,
        mode: Mode::Plan,
        permission_mode: EffectivePermission::Auto,
        tool_name: "web_search",
        provenance: &provenance,
        batch: ALONE,
        allow_list: &[],
        command: None,
        dialect: Dialect::Posix,
        verdict: None,
    });
    assert_eq!(outcome(&d), "POLICY_PLUGIN_DENIED");
}

#[test]
fn a_configured_allow_list_entry_is_provenance_checked() {
    let allow_list = [AllowedTool::package("docs_lookup", "@acme/docs")];
    let run = |provenance: &ToolProvenance| {
        outcome(&authorize(&AuthorizeInput {
            facts: &CallFacts::NONE,
            agent: Agent::Pi,
            preset: PolicyPreset::Strict,
            mode: Mode::Plan,
            permission_mode: EffectivePermission::Ask,
            tool_name: "docs_lookup",
            provenance,
            batch: ALONE,
            allow_list: &allow_list,
            command: None,
            dialect: Dialect::Posix,
            verdict: None,
        }))
    };
    assert_eq!(
        run(&ext("@acme/docs", "/n/node_modules/@acme/docs/index.js")),
        "allow"
    );
    assert_eq!(
        run(&ext("@acme/docs", "/n/extensions/docs.ts")),
        "POLICY_PROVENANCE_MISMATCH"
    );
    assert_eq!(
        run(&ext("other", "/n/node_modules/other/index.js")),
        "POLICY_PROVENANCE_MISMATCH"
    );
    assert_eq!(run(&ToolProvenance::BuiltIn), "POLICY_UNKNOWN_TOOL");
}

#[test]
fn unscoped_packages_follow_the_same_path_rule() {
    assert!(source_in_package("/a/node_modules/pkg/lib/x.js", "pkg"));
    assert!(!source_in_package("/a/node_modules/pkg", "pkg"));
    assert!(!source_in_package("/a/node_modules/pkg2/x.js", "pkg"));
    assert!(!source_in_package("/a/node_modules/pkg/x.js", ""));
    assert!(!source_in_package("", "pkg"));
    assert!(!source_in_package("/", "pkg"));
}

// ---------------------------------------------------------------------------------------------
// Batch rules: seed 000 §3 rule 2, and malformed positions.

#[test]
fn enter_and_submit_must_stand_alone() {
    let batches = [
        BatchPosition { index: 0, size: 2 },
        BatchPosition { index: 1, size: 2 },
        BatchPosition { index: 2, size: 3 },
    ];
    for batch in batches {
        for permission in EffectivePermission::ALL {
            let agent_enter = decide(
                PolicyPreset::Host,
                Mode::Agent,
                *permission,
                "EnterPlanMode",
                &ToolProvenance::BuiltIn,
                batch,
            );
            assert_eq!(outcome(&agent_enter), "POLICY_TOOL_NOT_ALONE_IN_BATCH");
            for preset in [PolicyPreset::Host, PolicyPreset::Explore] {
                for tool in ["EnterPlanMode", "SubmitPlan"] {
                    let d = decide(
                        preset,
                        Mode::Plan,
                        *permission,
                        tool,
                        &ToolProvenance::BuiltIn,
                        batch,
                    );
                    assert_eq!(outcome(&d), "POLICY_TOOL_NOT_ALONE_IN_BATCH", "{tool}");
                }
                // Other tools share batches freely.
                for tool in ["Read", "update_plan_draft", "CompactContext"] {
                    let d = decide(
                        preset,
                        Mode::Plan,
                        *permission,
                        tool,
                        &ToolProvenance::BuiltIn,
                        batch,
                    );
                    assert_eq!(outcome(&d), "allow", "{tool}");
                }
            }
        }
    }
}

#[test]
fn a_malformed_batch_position_denies_every_tool() {
    for batch in [
        BatchPosition { index: 0, size: 0 },
        BatchPosition { index: 1, size: 1 },
        BatchPosition { index: 5, size: 3 },
    ] {
        for (name, _) in NAMES {
            for (_, provenance) in provenances() {
                let d = decide(
                    PolicyPreset::Explore,
                    Mode::Agent,
                    EffectivePermission::Auto,
                    name,
                    &provenance,
                    batch,
                );
                assert_eq!(outcome(&d), "POLICY_BATCH_INVALID", "{name} {batch:?}");
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Permission resolution, wire shapes, decision accessors.

#[test]
fn inherit_resolves_to_the_host_default_then_ask() {
    use EffectivePermission as E;
    assert_eq!(effective_permission(PermissionMode::Inherit, None), E::Ask);
    assert_eq!(
        effective_permission(PermissionMode::Inherit, Some(E::Auto)),
        E::Auto
    );
    assert_eq!(
        effective_permission(PermissionMode::AcceptEdits, Some(E::Auto)),
        E::AcceptEdits
    );
    assert_eq!(
        effective_permission(PermissionMode::Ask, Some(E::Auto)),
        E::Ask
    );
    for target in TargetPermissionMode::ALL {
        let effective = E::from(*target);
        assert_eq!(effective.as_str(), target.as_str());
        assert_eq!(
            PermissionMode::from(effective),
            PermissionMode::from(*target)
        );
    }
}

#[test]
fn provenance_wire_shape() {
    use serde::de::value::{Error, MapDeserializer};
    let parse = |pairs: Vec<(&str, &str)>| {
        ToolProvenance::deserialize(MapDeserializer::<_, Error>::new(pairs.into_iter()))
    };
    assert_eq!(
        parse(vec![("kind", "builtIn")]),
        Ok(ToolProvenance::BuiltIn)
    );
    assert_eq!(
        parse(vec![
            ("kind", "extension"),
            ("package", WEB_TOOLS_PACKAGE),
            ("sourcePath", GENUINE_WEB),
        ]),
        Ok(ext(WEB_TOOLS_PACKAGE, GENUINE_WEB))
    );
    assert!(parse(vec![("kind", "extension"), ("package", "p")]).is_err());
    assert!(parse(vec![("kind", "builtin")]).is_err());
    assert!(
        parse(vec![
            ("kind", "extension"),
            ("package", "p"),
            ("sourcePath", "/s"),
            ("trusted", "yes"),
        ])
        .is_err()
    );
}

#[test]
fn deny_codes_are_stable_and_distinct() {
    let codes: BTreeSet<&str> = DenyCode::ALL.iter().map(|c| c.as_str()).collect();
    assert_eq!(codes.len(), DenyCode::ALL.len());
    assert!(codes.iter().all(|c| c.starts_with("POLICY_")));
    assert_eq!(
        DenyCode::PlanWriteDenied.to_string(),
        "POLICY_PLAN_WRITE_DENIED"
    );
}

#[test]
fn plan_write_and_agent_bash_name_their_rules() {
    let d = decide(
        PolicyPreset::Host,
        Mode::Plan,
        EffectivePermission::Auto,
        "write",
        &ToolProvenance::BuiltIn,
        ALONE,
    );
    assert_eq!(d.rule().as_str(), "plan.write_denied");
    assert_eq!(d.deny_code(), Some(DenyCode::PlanWriteDenied));
    let d = decide(
        PolicyPreset::Host,
        Mode::Agent,
        EffectivePermission::Ask,
        "bash",
        &ToolProvenance::BuiltIn,
        ALONE,
    );
    assert_eq!(d.rule().as_str(), "agent.shell_by_permission");
    assert_eq!(d.deny_code(), None);
}

/// Decision 11, as the reported bug met it: `find -delete` in Plan after an Auto approval asks,
/// says why, and offers Deny first; `ls` runs unasked; Agent-mode asks offer Allow first.
#[test]
fn plan_asks_before_a_command_that_may_change_files_deny_first() {
    for permission in EffectivePermission::ALL {
        let d = decide_command(
            PolicyPreset::Host,
            Mode::Plan,
            *permission,
            "Bash",
            &ToolProvenance::BuiltIn,
            ALONE,
            Some(WRITES),
        );
        let Decision::Ask {
            rule,
            reason,
            default,
        } = d
        else {
            panic!("{permission}: {d:?}");
        };
        assert_eq!(rule.as_str(), "plan.host.shell_may_change");
        assert_eq!(default, PermissionDecision::Deny);
        assert!(
            reason.starts_with("Plan mode: this command may change files ("),
            "{reason}"
        );
        let d = decide_command(
            PolicyPreset::Host,
            Mode::Plan,
            *permission,
            "bash",
            &ToolProvenance::BuiltIn,
            ALONE,
            Some(READS),
        );
        assert_eq!(d.rule().as_str(), "plan.host.shell_read_only", "{d:?}");
    }
    let d = decide_command(
        PolicyPreset::Host,
        Mode::Agent,
        EffectivePermission::AcceptEdits,
        "bash",
        &ToolProvenance::BuiltIn,
        ALONE,
        Some(WRITES),
    );
    assert!(
        matches!(&d, Decision::Ask { default: PermissionDecision::Allow, reason, .. }
            if reason.contains("may change files")),
        "{d:?}"
    );
    // A kept verdict is what the policy decides by: classified once, reused as it is.
    let cell = std::cell::OnceCell::new();
    let allow_list = default_strict_allow_list();
    let input = |verdict| AuthorizeInput {
        facts: &CallFacts::NONE,
        agent: Agent::Pi,
        preset: PolicyPreset::Host,
        mode: Mode::Plan,
        permission_mode: EffectivePermission::Ask,
        tool_name: "Bash",
        provenance: &ToolProvenance::BuiltIn,
        batch: ALONE,
        allow_list: &allow_list,
        command: Some(READS),
        dialect: Dialect::Posix,
        verdict,
    };
    assert_eq!(outcome(&authorize(&input(Some(&cell)))), "allow");
    assert_eq!(cell.get(), Some(&CommandSafety::ReadOnly));
    let kept = std::cell::OnceCell::from(CommandSafety::MayChangeFiles {
        reason: crate::NotProven::Unparsed,
    });
    assert_eq!(outcome(&authorize(&input(Some(&kept)))), "ask");
    // No command line at all is never read-only.
    let d = decide(
        PolicyPreset::Host,
        Mode::Plan,
        EffectivePermission::Auto,
        "Bash",
        &ToolProvenance::BuiltIn,
        ALONE,
    );
    assert_eq!(outcome(&d), "ask");
}

#[test]
fn plan_toolset_removes_what_the_preset_denies_and_adds_the_planning_tools() {
    let builtin = ToolProvenance::BuiltIn;
    let plugin = ext("some-pkg", "/x/node_modules/some-pkg/index.js");
    let offered = [
        OfferedTool {
            name: "read",
            provenance: &builtin,
        },
        OfferedTool {
            name: "bash",
            provenance: &builtin,
        },
        OfferedTool {
            name: "edit",
            provenance: &builtin,
        },
        OfferedTool {
            name: "write",
            provenance: &builtin,
        },
        OfferedTool {
            name: "grep",
            provenance: &builtin,
        },
        OfferedTool {
            name: "my_tool",
            provenance: &plugin,
        },
        OfferedTool {
            name: "EnterPlanMode",
            provenance: &builtin,
        },
        OfferedTool {
            name: "SubmitPlan",
            provenance: &builtin,
        },
        OfferedTool {
            name: "update_plan_draft",
            provenance: &builtin,
        },
        OfferedTool {
            name: "read_plan",
            provenance: &builtin,
        },
    ];
    let baseline: Vec<String> = [
        "read",
        "bash",
        "edit",
        "write",
        "my_tool",
        "EnterPlanMode",
        "gone",
    ]
    .map(str::to_owned)
    .to_vec();
    let set = |preset| plan_toolset(Agent::Pi, preset, &baseline, &offered);
    assert_eq!(
        set(PolicyPreset::Host),
        [
            "read",
            "bash",
            "SubmitPlan",
            "update_plan_draft",
            "read_plan"
        ]
    );
    assert_eq!(set(PolicyPreset::Literal), set(PolicyPreset::Host));
    assert_eq!(
        set(PolicyPreset::Strict),
        ["read", "update_plan_draft", "read_plan"]
    );
    assert_eq!(
        set(PolicyPreset::Explore),
        [
            "read",
            "bash",
            "my_tool",
            "SubmitPlan",
            "update_plan_draft",
            "read_plan"
        ]
    );
}

// ---------------------------------------------------------------------------------------------
// Properties over arbitrary input.

fn any_provenance() -> impl Strategy<Value = ToolProvenance> {
    prop_oneof![
        Just(ToolProvenance::BuiltIn),
        (".{0,24}", ".{0,60}").prop_map(|(p, s)| ext(&p, &s)),
        Just(ext(WEB_TOOLS_PACKAGE, GENUINE_WEB)),
    ]
}

fn any_allow_list() -> impl Strategy<Value = Vec<AllowedTool>> {
    let tool = prop_oneof![
        prop::sample::select(vec!["Write", "write", "Edit", "edit", "apply_patch"])
            .prop_map(str::to_owned),
        "[a-zA-Z_]{0,12}",
    ];
    let package = prop_oneof![Just(WEB_TOOLS_PACKAGE.to_owned()), ".{0,16}"];
    prop::collection::vec(
        (tool, package).prop_map(|(tool, package)| AllowedTool::package(&tool, &package)),
        0..4,
    )
}

fn any_batch() -> impl Strategy<Value = BatchPosition> {
    (0u32..4, 0u32..4).prop_map(|(index, size)| BatchPosition { index, size })
}

proptest! {
    #[test]
    fn plan_never_allows_write_or_edit(
        preset in prop::sample::select(PolicyPreset::ALL.to_vec()),
        permission_mode in prop::sample::select(EffectivePermission::ALL.to_vec()),
        tool_name in prop::sample::select(vec!["Write", "write", "Edit", "edit", "apply_patch"]),
        provenance in any_provenance(),
        batch in any_batch(),
        allow_list in any_allow_list(),
    ) {
        let d = authorize(&AuthorizeInput {
        facts: &CallFacts::NONE,
        agent: Agent::Pi,
            preset,
            mode: Mode::Plan,
            permission_mode,
            tool_name,
            provenance: &provenance,
            batch,
            allow_list: &allow_list,
            command: None,
            dialect: Dialect::Posix,
            verdict: None,
        });
        prop_assert!(matches!(d, Decision::Deny { .. }), "{:?}", d);
    }

    #[test]
    fn an_unknown_built_in_is_never_allowed(
        agent in prop::sample::select(Agent::ALL.to_vec()),
        preset in prop::sample::select(PolicyPreset::ALL.to_vec()),
        mode in prop::sample::select(Mode::ALL.to_vec()),
        permission_mode in prop::sample::select(EffectivePermission::ALL.to_vec()),
        tool_name in ".{0,20}",
        batch in any_batch(),
        allow_list in any_allow_list(),
    ) {
        prop_assume!(agent.classify(&tool_name).nature == ToolNature::Unknown);
        let d = authorize(&AuthorizeInput {
        facts: &CallFacts::NONE,
            agent,
            preset,
            mode,
            permission_mode,
            tool_name: &tool_name,
            provenance: &ToolProvenance::BuiltIn,
            batch,
            allow_list: &allow_list,
            command: None,
            dialect: Dialect::Posix,
            verdict: None,
        });
        prop_assert!(matches!(d, Decision::Deny { .. }), "{:?}", d);
    }

    #[test]
    fn a_path_with_dot_dot_is_never_inside_a_package(
        before in "(/[a-z@.-]{1,8}){0,4}",
        after in "(/[a-z@.-]{1,8}){0,4}",
        package in prop::sample::select(vec![WEB_TOOLS_PACKAGE, "pkg", "@a/b"]),
    ) {
        let path = format!("{before}/..{after}/node_modules/{package}/index.js");
        prop_assert!(!source_in_package(&path, package), "{}", path);
    }
}

// ---------------------------------------------------------------------------------------------
// Every agent's published tool names through its catalog, under every preset (issue "Tool names
// are pi's"). One row per name (two for a shell: a proven read-only command and one that
// writes), one column per preset in Plan with the permission mode `ask`, then `auto` in Plan
// under `host`, then Agent mode with `ask`. `ask!` is an ask whose first answer is Deny.

/// A call's input with `line` where the entry says its command line is (a Codex `shell` argv as
/// `bash -lc`), and the command line as the policy gets it.
fn shell_input(entry: &CatalogEntry, line: &str) -> serde_json::Value {
    match entry.command {
        CommandInput::Field { name, .. } if entry.name == "shell" => {
            serde_json::json!({ name: ["bash", "-lc", line] })
        }
        CommandInput::Field { name, .. } => serde_json::json!({ name: line }),
        CommandInput::None => serde_json::json!({}),
    }
}

fn cell(
    agent: Agent,
    preset: PolicyPreset,
    mode: Mode,
    permission: EffectivePermission,
    name: &str,
    input: &serde_json::Value,
) -> String {
    let classified = agent.classify(name);
    let command = classified.command.command_line(input);
    let allow_list = default_strict_allow_list();
    let d = authorize(&AuthorizeInput {
        facts: &CallFacts::NONE,
        agent,
        preset,
        mode,
        permission_mode: permission,
        tool_name: name,
        provenance: &ToolProvenance::BuiltIn,
        batch: ALONE,
        allow_list: &allow_list,
        command: command.as_ref().map(|c| c.line.as_ref()),
        dialect: command
            .as_ref()
            .and_then(|c| c.dialect)
            .unwrap_or(Dialect::Posix),
        verdict: None,
    });
    match d {
        Decision::Allow { .. } => "allow".into(),
        Decision::Ask {
            default: PermissionDecision::Deny,
            ..
        } => "ask!".into(),
        Decision::Ask { .. } => "ask".into(),
        Decision::Deny { code, .. } => code.as_str().trim_start_matches("POLICY_").to_lowercase(),
    }
}

#[test]
fn every_agents_published_names_under_every_preset() {
    let mut out = String::from(
        "agent | tool | nature | host | literal | strict | explore | host auto | agent ask\n",
    );
    for &agent in Agent::ALL {
        let mut rows: Vec<(String, ToolNature, serde_json::Value)> = Vec::new();
        // The canonical names mean the same to every agent: shown once, for the fallback.
        let host: &[CatalogEntry] = if agent == Agent::Other {
            Agent::host_table()
        } else {
            &[]
        };
        for entry in agent.table().iter().chain(host) {
            match entry.command {
                CommandInput::Field { .. } => {
                    rows.push((
                        format!("{} `ls`", entry.name),
                        entry.nature,
                        shell_input(entry, READS),
                    ));
                    rows.push((
                        format!("{} `find -delete`", entry.name),
                        entry.nature,
                        shell_input(entry, WRITES),
                    ));
                }
                CommandInput::None => {
                    rows.push((entry.name.to_owned(), entry.nature, serde_json::json!({})));
                }
            }
        }
        for extra in [
            agent.mcp_name("github", "create_issue").unwrap_or_default(),
            "NoSuchTool".to_owned(),
        ] {
            if !extra.is_empty() {
                let nature = agent.classify(&extra).nature;
                rows.push((extra, nature, serde_json::json!({})));
            }
        }
        for (label, nature, input) in rows {
            let name = label.split(' ').next().unwrap_or_default();
            let mut line = format!("{agent} | {label} | {nature}");
            for preset in PolicyPreset::ALL {
                line.push_str(" | ");
                line.push_str(&cell(
                    agent,
                    *preset,
                    Mode::Plan,
                    EffectivePermission::Ask,
                    name,
                    &input,
                ));
            }
            line.push_str(" | ");
            line.push_str(&cell(
                agent,
                PolicyPreset::Host,
                Mode::Plan,
                EffectivePermission::Auto,
                name,
                &input,
            ));
            line.push_str(" | ");
            line.push_str(&cell(
                agent,
                PolicyPreset::Host,
                Mode::Agent,
                EffectivePermission::Ask,
                name,
                &input,
            ));
            out.push_str(&line);
            out.push('\n');
        }
    }
    insta::assert_snapshot!(out);
}

/// The promises the table above makes, checked without the snapshot: in Plan, no agent's file
/// writer runs under any preset or permission, no unproven command runs unasked under `host`,
/// and every unknown built-in is denied.
#[test]
fn no_agents_writer_or_unproven_command_runs_in_plan() {
    for &agent in Agent::ALL {
        for entry in agent.table().iter().chain(Agent::host_table()) {
            for preset in PolicyPreset::ALL {
                for permission in EffectivePermission::ALL {
                    let input = shell_input(entry, WRITES);
                    let got = cell(agent, *preset, Mode::Plan, *permission, entry.name, &input);
                    let shell = matches!(
                        entry.nature,
                        ToolNature::RunsCommands | ToolNature::RunsSkill
                    );
                    if entry.nature == ToolNature::ChangesFiles {
                        assert_eq!(got, "plan_write_denied", "{agent} {}", entry.name);
                    } else if shell && *preset == PolicyPreset::Host {
                        assert_eq!(got, "ask!", "{agent} {}", entry.name);
                    }
                }
            }
        }
    }
}

#[test]
fn strict_admits_an_mcp_tool_only_by_its_server_and_name() {
    let allow_list = [AllowedTool::mcp("get_issue", "github")];
    let run = |agent: Agent, name: &str| {
        outcome(&authorize(&AuthorizeInput {
            facts: &CallFacts::NONE,
            agent,
            preset: PolicyPreset::Strict,
            mode: Mode::Plan,
            permission_mode: EffectivePermission::Auto,
            tool_name: name,
            provenance: &ToolProvenance::BuiltIn,
            batch: ALONE,
            allow_list: &allow_list,
            command: None,
            dialect: Dialect::Posix,
            verdict: None,
        }))
    };
    assert_eq!(run(Agent::ClaudeCode, "mcp__github__get_issue"), "allow");
    assert_eq!(run(Agent::Codex, "mcp__github__get_issue"), "allow");
    assert_eq!(run(Agent::GeminiCli, "mcp_github_get_issue"), "allow");
    // Another server's tool of the same name, another tool of the server, another agent's
    // spelling: not the admitted tool.
    assert_eq!(
        run(Agent::ClaudeCode, "mcp__evil__get_issue"),
        "POLICY_MCP_DENIED"
    );
    assert_eq!(
        run(Agent::ClaudeCode, "mcp__github__delete_repo"),
        "POLICY_MCP_DENIED"
    );
    assert_eq!(
        run(Agent::ClaudeCode, "mcp_github_get_issue"),
        "POLICY_UNKNOWN_TOOL"
    );
    assert_eq!(
        run(Agent::Pi, "mcp__github__get_issue"),
        "POLICY_UNKNOWN_TOOL"
    );
    // The host preset admits no MCP tool in Plan, allow-listed or not.
    let host = outcome(&authorize(&AuthorizeInput {
        facts: &CallFacts::NONE,
        agent: Agent::ClaudeCode,
        preset: PolicyPreset::Host,
        mode: Mode::Plan,
        permission_mode: EffectivePermission::Auto,
        tool_name: "mcp__github__get_issue",
        provenance: &ToolProvenance::BuiltIn,
        batch: ALONE,
        allow_list: &allow_list,
        command: None,
        dialect: Dialect::Posix,
        verdict: None,
    }));
    assert_eq!(host, "POLICY_MCP_DENIED");
}

#[test]
fn an_agents_built_in_web_tool_is_admitted_only_for_that_agent() {
    let allow_list = default_strict_allow_list();
    let run = |agent: Agent, name: &str, provenance: &ToolProvenance| {
        outcome(&authorize(&AuthorizeInput {
            facts: &CallFacts::NONE,
            agent,
            preset: PolicyPreset::Strict,
            mode: Mode::Plan,
            permission_mode: EffectivePermission::Ask,
            tool_name: name,
            provenance,
            batch: ALONE,
            allow_list: &allow_list,
            command: None,
            dialect: Dialect::Posix,
            verdict: None,
        }))
    };
    let builtin = ToolProvenance::BuiltIn;
    assert_eq!(run(Agent::ClaudeCode, "WebFetch", &builtin), "allow");
    assert_eq!(run(Agent::GeminiCli, "web_fetch", &builtin), "allow");
    // pi's web_fetch is the extension's, never a built-in.
    assert_eq!(
        run(Agent::Pi, "web_fetch", &builtin),
        "POLICY_PROVENANCE_MISMATCH"
    );
    assert_eq!(
        run(Agent::Pi, "web_fetch", &ext(WEB_TOOLS_PACKAGE, GENUINE_WEB)),
        "allow"
    );
    // Claude Code's name in a Codex session is nothing Codex has.
    assert_eq!(
        run(Agent::Codex, "WebFetch", &builtin),
        "POLICY_UNKNOWN_TOOL"
    );
}

/// Decides `tool` of Claude Code with `facts`, under `preset`, `mode` and `permission`.
fn decide_with(
    facts: &CallFacts,
    preset: PolicyPreset,
    mode: Mode,
    permission_mode: EffectivePermission,
    tool_name: &str,
    command: Option<&str>,
) -> Decision {
    let allow_list = default_strict_allow_list();
    authorize(&AuthorizeInput {
        facts,
        agent: Agent::ClaudeCode,
        preset,
        mode,
        permission_mode,
        tool_name,
        provenance: &ToolProvenance::BuiltIn,
        batch: ALONE,
        allow_list: &allow_list,
        command,
        dialect: Dialect::Posix,
        verdict: None,
    })
}

#[test]
fn the_agents_own_draft_is_the_one_write_plan_admits_under_every_preset() {
    let draft = CallFacts {
        draft: DraftWrite::AgentsOwnDraft,
        ..CallFacts::NONE
    };
    for preset in PolicyPreset::ALL {
        for tool in ["Write", "Edit", "MultiEdit"] {
            let d = decide_with(
                &draft,
                *preset,
                Mode::Plan,
                EffectivePermission::Ask,
                tool,
                None,
            );
            assert_eq!(d.rule(), PolicyRule::PlanDraftFile, "{preset} {tool}");
            let other = decide_with(
                &CallFacts::NONE,
                *preset,
                Mode::Plan,
                EffectivePermission::Auto,
                tool,
                None,
            );
            assert_eq!(
                outcome(&other),
                "POLICY_PLAN_WRITE_DENIED",
                "{preset} {tool}"
            );
        }
        // A shell is never a draft write, whatever the facts say.
        let bash = decide_with(
            &draft,
            *preset,
            Mode::Plan,
            EffectivePermission::Auto,
            "Bash",
            Some("rm x"),
        );
        assert_ne!(bash.rule(), PolicyRule::PlanDraftFile, "{preset}");
    }
}

#[test]
fn a_command_that_reaches_an_approval_surface_or_escapes_is_denied_in_plan() {
    let surface = CallFacts {
        reach: CommandReach::ApprovalSurface {
            what: "the `planhost` program".into(),
        },
        ..CallFacts::NONE
    };
    let escape = CallFacts {
        reach: CommandReach::EscapesScope {
            program: "systemd-run".into(),
        },
        ..CallFacts::NONE
    };
    for preset in [
        PolicyPreset::Host,
        PolicyPreset::Literal,
        PolicyPreset::Explore,
    ] {
        for permission in [EffectivePermission::Ask, EffectivePermission::Auto] {
            let run = |facts| {
                outcome(&decide_with(
                    facts,
                    preset,
                    Mode::Plan,
                    permission,
                    "Bash",
                    Some("ls"),
                ))
            };
            assert_eq!(run(&surface), "POLICY_PLAN_APPROVAL_SURFACE", "{preset}");
            assert_eq!(run(&escape), "POLICY_SCOPE_ESCAPE", "{preset}");
        }
    }
    // Agent mode: an escape asks (Deny first) unless the mode is auto; a surface is for the
    // roles to decide (`planhost status` reads; `planhost approve` is refused the approver role).
    let agent = |facts, permission| {
        decide_with(
            facts,
            PolicyPreset::Host,
            Mode::Agent,
            permission,
            "Bash",
            Some("ls"),
        )
    };
    let asked = agent(&escape, EffectivePermission::AcceptEdits);
    assert_eq!(asked.rule(), PolicyRule::AgentScopeEscapeAsks);
    assert!(
        matches!(
            asked,
            Decision::Ask {
                default: PermissionDecision::Deny,
                ..
            }
        ),
        "{asked:?}"
    );
    assert_eq!(outcome(&agent(&escape, EffectivePermission::Auto)), "allow");
    assert_eq!(outcome(&agent(&surface, EffectivePermission::Ask)), "allow");
}

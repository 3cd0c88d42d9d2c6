//! `planhost setup claude-code`: written next to what the file holds, removed exactly.

use crate::harness::{Fixture, text};

const THEIRS: &str = r#"{
  // my settings
  "model": "opus",
  "hooks": {
    "PreToolUse": [
      { "matcher": "Bash", "hooks": [{ "type": "command", "command": "~/bin/audit.sh" }] }
    ]
  },
  "permissions": { "allow": ["Bash(ls:*)"] }
}
"#;

/// (10) Setup then uninstall leaves `settings.json` byte-identical, setup twice changes
/// nothing, and without a file before, uninstall leaves none.
#[test]
fn setup_then_uninstall_gives_back_the_exact_file() {
    let fx = Fixture::new();
    let settings = fx.settings();
    fs_err::create_dir_all(settings.parent().unwrap()).unwrap();
    fs_err::write(&settings, THEIRS).unwrap();
    fx.setup();
    let once = fs_err::read_to_string(&settings).unwrap();
    assert!(
        once.contains("planhost-hook claude-code") && once.contains("~/bin/audit.sh"),
        "{once}"
    );
    let again = fx.planhost(&["setup", "claude-code"]);
    assert!(again.status.success(), "{}", text(&again));
    assert!(
        String::from_utf8_lossy(&again.stdout).contains("nothing changed"),
        "{}",
        text(&again)
    );
    assert_eq!(fs_err::read_to_string(&settings).unwrap(), once);
    let out = fx.planhost(&["setup", "claude-code", "--uninstall"]);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(fs_err::read_to_string(&settings).unwrap(), THEIRS);

    fs_err::remove_file(&settings).unwrap();
    fx.setup();
    assert!(settings.exists());
    let out = fx.planhost(&["setup", "claude-code", "--uninstall"]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(!settings.exists(), "no file before, none after");
}

/// A settings file planhost cannot edit is refused, untouched, saying why.
#[test]
fn a_broken_settings_file_is_left_alone() {
    let fx = Fixture::new();
    let settings = fx.settings();
    fs_err::create_dir_all(settings.parent().unwrap()).unwrap();
    fs_err::write(&settings, "{ \"hooks\": [ }").unwrap();
    let out = fx.planhost(&["setup", "claude-code"]);
    assert!(!out.status.success(), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("nothing was changed"),
        "{}",
        text(&out)
    );
    assert_eq!(
        fs_err::read_to_string(&settings).unwrap(),
        "{ \"hooks\": [ }"
    );
}

/// `--scope project` is for a team: the checked-in settings name `planhost-hook` on PATH, never
/// a path of this machine, so a teammate with another HOME (and planhost installed elsewhere)
/// is gated too; uninstall takes the hooks out and leaves no empty `.claude/` behind.
#[test]
fn project_scope_names_the_hook_on_path_and_works_from_another_home() {
    let fx = Fixture::new();
    let out = fx.planhost(&["setup", "claude-code", "--scope", "project"]);
    assert!(out.status.success(), "{}", text(&out));
    let settings = fx.workspace().join(".claude/settings.json");
    let written = fs_err::read_to_string(&settings).unwrap();
    assert!(
        written.contains("\"planhost-hook claude-code\""),
        "{written}"
    );
    assert!(
        !written.contains(&fx.dirs.root().display().to_string())
            && !written.contains("target/debug"),
        "no path of this machine: {written}"
    );
    // A teammate: another HOME, planhost's binaries somewhere on their PATH.
    let home2 = fx.dirs.root().join("teammate");
    fs_err::create_dir_all(&home2).unwrap();
    let bin_dir = std::path::Path::new(crate::harness::hook_bin())
        .parent()
        .unwrap()
        .display()
        .to_string();
    let path = format!("{bin_dir}:{}", std::env::var("PATH").unwrap_or_default());
    let target = fx.workspace().join("a.txt");
    fx.model.push(planhost_test_support::Reply::tool(
        "Write",
        serde_json::json!({ "file_path": target.display().to_string(), "content": "x\n" }),
    ));
    fx.model
        .push(planhost_test_support::Reply::text("Could not."));
    let run = fx.claude_in(
        &["write a.txt", "--permission-mode", "plan"],
        &[("HOME", home2.display().to_string()), ("PATH", path)],
    );
    let _host = fx.adopt_host();
    let results = run.tool_results();
    assert!(
        results.len() == 1 && results[0].1 && results[0].0.contains("POLICY_PLAN_WRITE_DENIED"),
        "the project's hooks gate the teammate's Claude Code: {}",
        run.dump()
    );
    assert!(!target.exists());
    let out = fx.planhost(&["setup", "claude-code", "--scope", "project", "--uninstall"]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(!settings.exists(), "no settings file was there before");
    assert!(
        !fx.workspace().join(".claude").exists(),
        "no empty .claude/ is left behind"
    );
}

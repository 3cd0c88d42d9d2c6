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

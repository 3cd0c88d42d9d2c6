//! `npx planhost setup claude-code` in a clean HOME: the hooks name a copy of the binary that
//! outlives npx's cache, a real Claude Code tool call is gated by it after that cache is gone,
//! `planhost doctor` tells when the hook's binary is missing, and the uninstall gives back the
//! exact settings file and takes the copy away.

use planhost_test_support::Reply;
use serde_json::json;

use crate::claude_harness::Fixture;
use crate::clean::{Clean, text};

/// A person's own settings (plain JSON: Claude Code reads no comments in them).
const THEIRS: &str = r#"{
  "model": "opus",
  "permissions": { "allow": ["Bash(ls:*)"] }
}
"#;

#[test]
fn npx_setup_survives_a_cleared_cache_gates_a_tool_call_and_uninstalls_exactly() {
    let fx = Fixture::new();
    let clean = Clean::at(&fx.home());
    let npx = |args: &[&str]| {
        clean
            .command("npx")
            .args(["--yes", "planhost"])
            .args(args)
            .env("PLANHOST_STATE_DIR", fx.dirs.state_dir())
            .env("PLANHOST_SOCKET", fx.dirs.socket())
            .current_dir(fx.workspace())
            .output()
            .unwrap()
    };
    let settings = fx.settings();
    fs_err::create_dir_all(settings.parent().unwrap()).unwrap();
    fs_err::write(&settings, THEIRS).unwrap();

    let out = npx(&["setup", "claude-code"]);
    assert!(out.status.success(), "npx planhost setup: {}", text(&out));
    let said = String::from_utf8_lossy(&out.stdout);
    println!("npx planhost setup claude-code said:\n{said}");
    assert!(
        said.contains("Undo with `npx planhost setup claude-code --scope user --uninstall`"),
        "{said}"
    );
    let copies = fx.home().join(".local/share/planhost/bin");
    assert!(
        said.contains("package runner's cache") && said.contains(&copies.display().to_string()),
        "setup says where the hook's binary went: {said}"
    );
    let written = fs_err::read_to_string(&settings).unwrap();
    let hook = copies.join("planhost-hook");
    assert!(
        written.contains(&format!("{} claude-code", hook.display())) && !written.contains("_npx"),
        "the hooks name the copy, never npx's cache: {written}"
    );
    let npx_cache = clean.cache().join("_npx");
    assert!(npx_cache.is_dir(), "npx ran from {}", npx_cache.display());
    fs_err::remove_dir_all(&npx_cache).unwrap();

    let target = fx.workspace().join("a.txt");
    fx.model.push(Reply::tool(
        "Write",
        json!({ "file_path": target.display().to_string(), "content": "x\n" }),
    ));
    fx.model.push(Reply::text("Could not."));
    let run = fx.claude_in(
        &["write a.txt", "--permission-mode", "plan"],
        &[("PATH", clean.path())],
    );
    let results = run.tool_results();
    assert!(
        results.len() == 1 && results[0].1 && results[0].0.contains("POLICY_PLAN_WRITE_DENIED"),
        "the hook gates Claude Code's Write: {}",
        run.dump()
    );
    assert!(!target.exists());
    let host = fx.adopt_host();
    let exe = fs_err::read_link(format!("/proc/{}/exe", host.pid())).unwrap();
    assert_eq!(
        exe,
        copies.join("planhost"),
        "the hook started the kept copy"
    );
    drop(host);

    // The hook's binary gone: doctor says so.
    let aside = fx.home().join("planhost-hook.aside");
    fs_err::rename(&hook, &aside).unwrap();
    let doctor = npx(&["doctor"]);
    let report = String::from_utf8_lossy(&doctor.stdout);
    assert!(!doctor.status.success(), "{}", text(&doctor));
    assert!(
        report.contains("FAIL Claude Code") && report.contains("planhost's hook is missing"),
        "{report}"
    );
    fs_err::rename(&aside, &hook).unwrap();

    let out = npx(&["setup", "claude-code", "--uninstall"]);
    assert!(out.status.success(), "uninstall: {}", text(&out));
    assert_eq!(fs_err::read_to_string(&settings).unwrap(), THEIRS);
    assert!(
        !fx.home().join(".local/share/planhost").exists(),
        "the copies went with the hooks: {}",
        text(&out)
    );
}

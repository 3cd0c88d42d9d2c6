//! planhost's hooks in a Claude Code `settings.json`: written next to whatever else the file
//! holds, and taken out again exactly.
//!
//! The file is edited as text through a concrete syntax tree (jsonc-parser's CST), so every
//! other key keeps its place, its comments and its spacing. planhost's own hook handlers are the
//! ones whose command runs `… hook claude-code`: writing first takes out any left by an earlier
//! setup (another binary path, older timeouts), so writing twice gives the same file, and
//! removing takes out exactly those handlers, then any matcher group or event list that held
//! only them.

use jsonc_parser::ParseOptions;
use jsonc_parser::cst::{CstArray, CstInputValue, CstObject, CstRootNode};

/// The argument list planhost's handlers end with: how they are recognised.
pub const HOOK_ARGS: &str = "hook claude-code";

/// The argument `planhost-hook` takes: the agent whose hook it is.
pub const AGENT_ARG: &str = "claude-code";

/// Where a `settings.json` applies (Claude Code's own scopes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// `~/.claude/settings.json`: every project of this user.
    User,
    /// `<project>/.claude/settings.json`: checked in, for everyone on the project.
    Project,
    /// `<project>/.claude/settings.local.json`: this user, this project, not checked in.
    Local,
}

impl Scope {
    /// The settings file of this scope.
    pub fn path(self, home: &std::path::Path, project: &std::path::Path) -> std::path::PathBuf {
        match self {
            Scope::User => home.join(".claude/settings.json"),
            Scope::Project => project.join(".claude/settings.json"),
            Scope::Local => project.join(".claude/settings.local.json"),
        }
    }
}

/// One Claude Code hook event planhost handles, with what its handler needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EventHook {
    /// The event (`PreToolUse`, …).
    pub event: &'static str,
    /// The tool matcher, for tool events.
    pub matcher: Option<&'static str>,
    /// Seconds Claude Code waits for the handler.
    pub timeout_secs: u32,
    /// Whether a handler that fails (cannot start, crashes, times out) blocks: set where the
    /// hook is the gate, so that a missing planhost never lets a tool run. The events that only
    /// record (a prompt, a finished call, a stop) fail open: blocking them would stop the person
    /// from talking to Claude Code at all, and nothing runs through them.
    pub block_on_failure: bool,
}

/// The events planhost handles, in the order they are written.
pub const EVENTS: &[EventHook] = &[
    EventHook {
        event: "SessionStart",
        matcher: None,
        timeout_secs: 15,
        block_on_failure: false,
    },
    EventHook {
        event: "UserPromptSubmit",
        matcher: None,
        timeout_secs: 15,
        block_on_failure: false,
    },
    EventHook {
        event: "PreToolUse",
        matcher: Some("*"),
        timeout_secs: 30,
        block_on_failure: true,
    },
    EventHook {
        event: "PermissionRequest",
        matcher: Some("*"),
        timeout_secs: 30,
        block_on_failure: true,
    },
    EventHook {
        event: "PostToolUse",
        matcher: Some("*"),
        timeout_secs: 15,
        block_on_failure: false,
    },
    EventHook {
        event: "Stop",
        matcher: None,
        timeout_secs: 15,
        block_on_failure: false,
    },
    EventHook {
        event: "SessionEnd",
        matcher: None,
        timeout_secs: 15,
        block_on_failure: false,
    },
];

/// Why a settings file could not be edited.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SettingsError {
    /// Not JSON (with comments) at all.
    #[error("not valid JSON: {0}")]
    Parse(String),
    /// JSON, but not the shape Claude Code reads where planhost writes.
    #[error("{0}")]
    Shape(String),
}

/// The command a handler runs, quoted for the shell Claude Code runs hook commands with:
/// `planhost-hook claude-code` for the hook binary, `planhost hook claude-code` ([`HOOK_ARGS`])
/// for the full one.
pub fn hook_command(bin: &std::path::Path) -> String {
    let quoted = shell_quote(&bin.to_string_lossy());
    if bin.file_name() == Some(std::ffi::OsStr::new(crate::process::HOOK_BINARY)) {
        format!("{quoted} {AGENT_ARG}")
    } else {
        format!("{quoted} {HOOK_ARGS}")
    }
}

fn shell_quote(text: &str) -> String {
    let plain = !text.is_empty()
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._-+:@%=,".contains(&b));
    if plain {
        text.to_owned()
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

/// Whether a handler's command is planhost's: `… hook claude-code`, or the hook binary's
/// `…/planhost-hook claude-code` (its path quoted or not).
pub fn is_ours(command: &str) -> bool {
    let command = command.trim_end();
    if command.ends_with(&format!(" {HOOK_ARGS}")) {
        return true;
    }
    command
        .strip_suffix(AGENT_ARG)
        .and_then(|rest| rest.strip_suffix(' '))
        .map(|bin| bin.trim_end_matches('\''))
        .is_some_and(|bin| bin.ends_with(crate::process::HOOK_BINARY))
}

fn parse(text: &str) -> Result<CstRootNode, SettingsError> {
    let text = if text.trim().is_empty() { "{}" } else { text };
    let root = CstRootNode::parse(text, &ParseOptions::default())
        .map_err(|e| SettingsError::Parse(e.to_string()))?;
    match root.value() {
        Some(value) if value.as_object().is_none() => Err(SettingsError::Shape(
            "the file's top level is not an object".into(),
        )),
        _ => Ok(root),
    }
}

/// The `hooks` object, if there is one; an error if `hooks` is something else.
fn hooks_object(root: &CstRootNode, create: bool) -> Result<Option<CstObject>, SettingsError> {
    let top = root.object_value_or_set();
    match top.get("hooks") {
        None if create => Ok(Some(top.object_value_or_set("hooks"))),
        None => Ok(None),
        Some(prop) => prop
            .object_value()
            .map(Some)
            .ok_or_else(|| SettingsError::Shape("\"hooks\" is not an object".into())),
    }
}

/// Takes planhost's handlers out of one event's matcher groups; drops groups left empty by it.
/// Returns how many handlers were taken out.
fn remove_from_event(groups: &CstArray) -> usize {
    let mut removed = 0;
    for group in groups.elements() {
        let Some(group) = group.as_object() else {
            continue;
        };
        let Some(handlers) = group.array_value("hooks") else {
            continue;
        };
        let before = handlers.elements().len();
        for handler in handlers.elements() {
            let command = handler
                .as_object()
                .and_then(|h| h.get("command"))
                .and_then(|p| p.value())
                .and_then(|v| v.as_string_lit())
                .and_then(|s| s.decoded_value().ok());
            if command.as_deref().is_some_and(is_ours) {
                handler.remove();
                removed += 1;
            }
        }
        if before > 0 && handlers.elements().is_empty() {
            group.remove();
        }
    }
    removed
}

fn remove_ours(root: &CstRootNode) -> Result<usize, SettingsError> {
    let Some(hooks) = hooks_object(root, false)? else {
        return Ok(0);
    };
    let mut removed = 0;
    for prop in hooks.properties() {
        let Some(groups) = prop.array_value() else {
            continue;
        };
        let had = groups.elements().len();
        let n = remove_from_event(&groups);
        removed += n;
        if n > 0 && had > 0 && groups.elements().is_empty() {
            prop.remove();
        }
    }
    if removed > 0
        && hooks.properties().is_empty()
        && let Some(prop) = root.object_value_or_set().get("hooks")
    {
        prop.remove();
    }
    Ok(removed)
}

fn handler(command: &str, hook: &EventHook) -> CstInputValue {
    let mut fields = vec![
        ("type".to_owned(), CstInputValue::from("command")),
        ("command".to_owned(), CstInputValue::from(command)),
        ("timeout".to_owned(), CstInputValue::from(hook.timeout_secs)),
    ];
    if hook.block_on_failure {
        fields.push(("onFailure".to_owned(), CstInputValue::from("block")));
    }
    CstInputValue::Object(fields)
}

/// The file with planhost's handlers written (any earlier ones replaced), everything else as
/// it was. `text` may be empty (no file yet).
pub fn install(text: &str, command: &str) -> Result<String, SettingsError> {
    let root = parse(text)?;
    remove_ours(&root)?;
    let hooks = hooks_object(&root, true)?
        .ok_or_else(|| SettingsError::Shape("\"hooks\" could not be made".into()))?;
    for hook in EVENTS {
        let groups = match hooks.get(hook.event) {
            None => hooks.array_value_or_set(hook.event),
            Some(prop) => prop.array_value().ok_or_else(|| {
                SettingsError::Shape(format!("\"hooks.{}\" is not a list", hook.event))
            })?,
        };
        let mut group = Vec::new();
        if let Some(matcher) = hook.matcher {
            group.push(("matcher".to_owned(), CstInputValue::from(matcher)));
        }
        group.push((
            "hooks".to_owned(),
            CstInputValue::Array(vec![handler(command, hook)]),
        ));
        groups.append(CstInputValue::Object(group));
        groups.ensure_multiline();
    }
    hooks.ensure_multiline();
    root.object_value_or_set().ensure_multiline();
    let mut out = root.to_string();
    if !out.ends_with('\n') {
        out.push('\n');
    }
    Ok(out)
}

/// The file with planhost's handlers taken out, and how many there were.
pub fn uninstall(text: &str) -> Result<(String, usize), SettingsError> {
    let root = parse(text)?;
    let removed = remove_ours(&root)?;
    if removed == 0 {
        return Ok((text.to_owned(), 0));
    }
    Ok((root.to_string(), removed))
}

/// planhost's handlers in the file: `(event, command)` for each.
pub fn installed(text: &str) -> Result<Vec<(String, String)>, SettingsError> {
    let value: serde_json::Value = match parse(text)?.to_serde_value() {
        Some(value) => value,
        None => return Ok(Vec::new()),
    };
    let mut found = Vec::new();
    if let Some(hooks) = value.get("hooks").and_then(|h| h.as_object()) {
        for (event, groups) in hooks {
            for group in groups.as_array().into_iter().flatten() {
                for handler in group["hooks"].as_array().into_iter().flatten() {
                    if let Some(command) = handler["command"].as_str()
                        && is_ours(command)
                    {
                        found.push((event.clone(), command.to_owned()));
                    }
                }
            }
        }
    }
    Ok(found)
}

/// The file's content as a JSON value (comments dropped), for comparing two versions.
pub fn value_of(text: &str) -> Result<serde_json::Value, SettingsError> {
    Ok(parse(text)?
        .to_serde_value()
        .unwrap_or(serde_json::Value::Object(serde_json::Map::new())))
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    const CMD: &str = "/usr/local/bin/planhost hook claude-code";

    const THEIRS: &str = r#"{
  // the user's own settings
  "model": "opus",
  "permissions": { "allow": ["Bash(ls:*)"] },
  "hooks": {
    "PreToolUse": [
      {
        "matcher": "Bash",
        "hooks": [{ "type": "command", "command": "~/bin/audit.sh" }]
      }
    ]
  }
}
"#;

    #[test]
    fn install_keeps_everything_else_and_marks_every_event() {
        let out = install(THEIRS, CMD).unwrap();
        assert!(out.contains("// the user's own settings"), "{out}");
        assert!(out.contains("~/bin/audit.sh"), "{out}");
        let value = value_of(&out).unwrap();
        assert_eq!(value["model"], "opus");
        assert_eq!(value["permissions"]["allow"][0], "Bash(ls:*)");
        let ours = installed(&out).unwrap();
        let events: Vec<&str> = ours.iter().map(|(e, _)| e.as_str()).collect();
        for hook in EVENTS {
            assert!(events.contains(&hook.event), "{} in {events:?}", hook.event);
        }
        assert_eq!(ours.len(), EVENTS.len());
        let pre = &value["hooks"]["PreToolUse"];
        assert_eq!(pre.as_array().unwrap().len(), 2, "theirs and ours: {pre}");
        assert_eq!(pre[1]["matcher"], "*");
        assert_eq!(pre[1]["hooks"][0]["onFailure"], "block");
        assert_eq!(pre[1]["hooks"][0]["command"], CMD);
        let stop = &value["hooks"]["Stop"][0]["hooks"][0];
        assert!(
            stop.get("onFailure").is_none(),
            "a stop never blocks: {stop}"
        );
    }

    #[test]
    fn install_is_idempotent_and_replaces_an_older_binary() {
        let once = install(THEIRS, CMD).unwrap();
        assert_eq!(install(&once, CMD).unwrap(), once);
        let moved = install(&once, "/opt/planhost hook claude-code").unwrap();
        let ours = installed(&moved).unwrap();
        assert_eq!(ours.len(), EVENTS.len());
        assert!(
            ours.iter()
                .all(|(_, c)| c == "/opt/planhost hook claude-code")
        );
    }

    #[test]
    fn uninstall_takes_out_exactly_ours() {
        let once = install(THEIRS, CMD).unwrap();
        let (back, removed) = uninstall(&once).unwrap();
        assert_eq!(removed, EVENTS.len());
        assert_eq!(value_of(&back).unwrap(), value_of(THEIRS).unwrap());
        assert_eq!(back, THEIRS, "byte for byte");
        assert!(installed(&back).unwrap().is_empty());
        // Nothing of ours: the text is returned untouched.
        assert_eq!(uninstall(THEIRS).unwrap(), (THEIRS.to_owned(), 0));
    }

    #[test]
    fn a_new_file_and_an_empty_one() {
        for start in ["", "{}\n"] {
            let out = install(start, CMD).unwrap();
            assert_eq!(installed(&out).unwrap().len(), EVENTS.len());
            let (back, _) = uninstall(&out).unwrap();
            assert_eq!(value_of(&back).unwrap(), serde_json::json!({}));
        }
    }

    #[test]
    fn files_planhost_cannot_edit_are_refused_untouched() {
        assert!(matches!(
            install("{ nope", CMD),
            Err(SettingsError::Parse(_))
        ));
        assert!(matches!(install("[1]", CMD), Err(SettingsError::Shape(_))));
        assert!(matches!(
            install(r#"{"hooks": 3}"#, CMD),
            Err(SettingsError::Shape(_))
        ));
        assert!(matches!(
            install(r#"{"hooks": {"PreToolUse": {}}}"#, CMD),
            Err(SettingsError::Shape(_))
        ));
    }

    #[test]
    fn a_binary_path_with_spaces_is_quoted() {
        let cmd = hook_command(std::path::Path::new("/home/a b/planhost"));
        assert_eq!(cmd, "'/home/a b/planhost' hook claude-code");
        assert!(is_ours(&cmd));
        assert_eq!(
            hook_command(std::path::Path::new("/usr/bin/planhost")),
            "/usr/bin/planhost hook claude-code"
        );
    }

    #[test]
    fn the_hook_binary_takes_only_the_agent_and_is_known_as_ours() {
        let plain = hook_command(std::path::Path::new("/usr/bin/planhost-hook"));
        assert_eq!(plain, "/usr/bin/planhost-hook claude-code");
        let quoted = hook_command(std::path::Path::new("/home/a b/planhost-hook"));
        assert_eq!(quoted, "'/home/a b/planhost-hook' claude-code");
        assert!(is_ours(&plain) && is_ours(&quoted));
        // Someone else's hook with the same argument is not planhost's.
        assert!(!is_ours("/usr/bin/other-hook claude-code"));
        assert!(!is_ours("claude-code"));
    }
}

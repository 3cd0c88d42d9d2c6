//! The agent's own plan draft (Claude Code's `~/.claude/plans/<slug>.md`): which write is one,
//! checked on the disk, and its text read back. The one file an agent writes in Plan.

use std::io::Read as _;
use std::path::{Path, PathBuf};

use planhost_core::{AgentProfile, MAX_PLAN_BYTES, ToolNature};
use serde_json::Value;

/// The draft a file writer's call writes, if it writes the agent's own: the path's shape by the
/// profile, and on the disk the configuration directory and its plans directory real
/// directories (or not there yet) and the file a regular file (or not there yet), none of them
/// a symlink.
pub(crate) fn target(
    profile: &AgentProfile,
    config_dir: Option<&str>,
    tool: &str,
    input: Option<&Value>,
) -> Option<PathBuf> {
    let draft = profile.draft?;
    let config_dir = config_dir?;
    if profile.agent.classify(tool).nature != ToolNature::ChangesFiles {
        return None;
    }
    let path = input?.get(draft.path_field)?.as_str()?;
    if !profile.is_draft_path(config_dir, path) {
        return None;
    }
    let config = Path::new(config_dir);
    let plans = config.join(draft.dir);
    let real_dir = |dir: &Path| match fs_err::symlink_metadata(dir) {
        Ok(meta) => meta.is_dir(),
        Err(e) => e.kind() == std::io::ErrorKind::NotFound,
    };
    if !real_dir(config) || !real_dir(&plans) {
        return None;
    }
    let path = PathBuf::from(path);
    match fs_err::symlink_metadata(&path) {
        Ok(meta) if meta.is_file() => Some(path),
        Ok(_) => None,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Some(path),
        Err(_) => None,
    }
}

/// The draft's text: a regular file opened without following a symlink, at most a plan's size,
/// UTF-8, not blank; `None` otherwise.
pub(crate) fn read(path: &Path) -> Option<String> {
    use fs_err::os::unix::fs::OpenOptionsExt as _;
    let file = fs_err::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
        .ok()?;
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    let mut bytes = Vec::new();
    file.take(MAX_PLAN_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .ok()?;
    if bytes.len() > MAX_PLAN_BYTES {
        return None;
    }
    let text = String::from_utf8(bytes).ok()?;
    (!text.trim().is_empty()).then_some(text)
}

//! Glob: files whose path matches a glob, gitignore-aware.

use globset::GlobBuilder;
use serde::{Deserialize, Serialize};

use crate::context::ToolContext;
use crate::error::{Result, ToolError};
use crate::walk::{builder, display_name};

/// Files returned when the request gives no `limit`; enough to orient, small enough for a
/// model's window. Narrow the pattern for more.
pub const GLOB_DEFAULT_LIMIT: usize = 1000;
/// Largest `limit` accepted; past this a listing stops being useful to a model.
pub const GLOB_MAX_LIMIT: usize = 20_000;

/// `Glob { pattern, path?, limit? }`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GlobRequest {
    /// A glob matched against each file's path relative to `path`. `*` does not cross `/`;
    /// use `**/` for any depth (`**/*.rs`).
    pub pattern: String,
    /// Directory to search (default: the workspace root).
    #[serde(default)]
    pub path: Option<String>,
    /// Most files to return (default [`GLOB_DEFAULT_LIMIT`], at most [`GLOB_MAX_LIMIT`]).
    #[serde(default)]
    pub limit: Option<usize>,
}

/// Matching files, sorted by path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GlobResult {
    /// Workspace-relative paths (absolute for a granted outside directory), byte-order sorted.
    pub files: Vec<String>,
    /// Whether more files matched than `limit`.
    pub truncated: bool,
    /// Matching files left out because their path is not valid UTF-8.
    pub skipped_non_utf8: u64,
}

/// Runs Glob.
pub fn glob(ctx: &ToolContext, request: &GlobRequest) -> Result<GlobResult> {
    let limit = checked_limit(request.limit, GLOB_DEFAULT_LIMIT, GLOB_MAX_LIMIT)?;
    let pattern = request
        .pattern
        .strip_prefix("./")
        .unwrap_or(&request.pattern);
    if pattern.is_empty() {
        return Err(ToolError::InvalidGlob {
            message: "pattern is empty".to_owned(),
        });
    }
    let matcher = GlobBuilder::new(pattern)
        .literal_separator(true)
        .build()
        .map_err(|e| ToolError::InvalidGlob {
            message: e.to_string(),
        })?
        .compile_matcher();
    let target = ctx.resolve_read(request.path.as_deref().unwrap_or("."))?;
    if !ctx.require_exists(&target)?.is_dir() {
        return Err(ToolError::invalid(format!(
            "Glob path is not a directory: {}",
            target.display()
        )));
    }
    let root = target.absolute();
    let mut files = Vec::new();
    let mut skipped_non_utf8 = 0;
    // Unreadable entries are skipped, as ripgrep skips them (it warns on stderr).
    for entry in builder(root).build().flatten() {
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let Ok(relative) = entry.path().strip_prefix(root) else {
            continue;
        };
        if !matcher.is_match(relative) {
            continue;
        }
        match display_name(ctx, &target, entry.path()) {
            Some(name) => files.push(name),
            None => skipped_non_utf8 += 1,
        }
    }
    files.sort_unstable();
    let truncated = files.len() > limit;
    files.truncate(limit);
    Ok(GlobResult {
        files,
        truncated,
        skipped_non_utf8,
    })
}

pub(crate) fn checked_limit(requested: Option<usize>, default: usize, max: usize) -> Result<usize> {
    match requested {
        None => Ok(default),
        Some(0) => Err(ToolError::invalid("limit must be at least 1")),
        Some(n) if n > max => Err(ToolError::invalid(format!("limit must be at most {max}"))),
        Some(n) => Ok(n),
    }
}

//! Glob: files whose path matches a glob, gitignore-aware.

use std::ops::ControlFlow;

use globset::GlobBuilder;
use ignore::overrides::Override;
use planhost_core::GlobResult;
use serde::{Deserialize, Serialize};

use crate::context::ToolContext;
use crate::error::{Result, ToolError};
use crate::walk::{Filters, Start, display_name, open_start};

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
    let not_a_directory = || {
        ToolError::invalid(format!(
            "Glob path is not a directory: {}",
            target.display()
        ))
    };
    if !ctx.require_exists(&target)? {
        return Err(not_a_directory());
    }
    // The walk lists each directory through its own handle, opened without following links
    // from its parent's: a directory swapped for a symlink is skipped, never listed through.
    let Start::Dir(tree) = open_start(ctx, &target)? else {
        return Err(not_a_directory());
    };
    let mut files = Vec::new();
    let mut skipped_non_utf8 = 0;
    // Unreadable directories are skipped, as ripgrep skips them (it warns on stderr).
    tree.walk(&Filters::new(Override::empty()), |found| {
        if matcher.is_match(found.relative) {
            match display_name(&target, found.relative) {
                Some(name) => files.push(name),
                None => skipped_non_utf8 += 1,
            }
        }
        ControlFlow::Continue(())
    });
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

//! The gitignore-aware walk shared by Glob and Grep.

use std::path::Path;

use ignore::WalkBuilder;

use crate::context::{ReadTarget, ToolContext};

/// A walk over `root` with ripgrep's default filters: hidden files and directories skipped,
/// `.gitignore`, `.ignore` and `.git/info/exclude` respected, symlinks not followed.
///
/// `.gitignore` applies even when the workspace is not a git repository (`require_git(false)`),
/// so what the tools see does not depend on whether `git init` ran.
pub(crate) fn builder(root: &Path) -> WalkBuilder {
    let mut builder = WalkBuilder::new(root);
    builder
        .standard_filters(true)
        .require_git(false)
        .follow_links(false);
    builder
}

/// How a walked path is named in results, or `None` when it is not valid UTF-8.
pub(crate) fn display_name(ctx: &ToolContext, target: &ReadTarget, path: &Path) -> Option<String> {
    match target {
        ReadTarget::Inside(_) => match ctx.workspace().relative_of(path) {
            Ok(Some(rel)) => Some(rel),
            // The walk does not follow links, so a walked path is always under the root.
            Ok(None) | Err(_) => None,
        },
        ReadTarget::Outside(_) => path.to_str().map(str::to_owned),
    }
}

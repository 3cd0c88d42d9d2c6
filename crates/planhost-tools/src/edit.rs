//! Edit: exact `oldString` → `newString` replacement that keeps the file's line endings.

use std::io::Read as _;
use std::os::unix::fs::PermissionsExt as _;

use memchr::memmem;
use planhost_core::{EditResult, LineEnding};
use planhost_fs::{MissingDirs, Permissions};
use serde::{Deserialize, Serialize};

use crate::context::ToolContext;
use crate::error::{Access, Result, ToolError};
use crate::read::READ_MAX_FILE_BYTES;
use crate::text::looks_binary;
use crate::write::KEPT_PERMISSION_BITS;

/// `Edit { path, oldString, newString, replaceAll? }`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EditRequest {
    /// Workspace-relative or absolute path of an existing file inside the workspace.
    pub path: String,
    /// Exact text to find (non-empty). In a CRLF file, `\n` here matches `\r\n`.
    pub old_string: String,
    /// Replacement text. In a CRLF file, its `\n` is written as `\r\n`.
    pub new_string: String,
    /// Replace every occurrence instead of requiring exactly one.
    #[serde(default)]
    pub replace_all: bool,
}

/// Runs Edit.
pub fn edit(ctx: &ToolContext, request: &EditRequest) -> Result<EditResult> {
    if request.old_string.is_empty() {
        return Err(ToolError::invalid("oldString must not be empty"));
    }
    if request.old_string == request.new_string {
        return Err(ToolError::invalid("oldString and newString are identical"));
    }
    let path = ctx.resolve_write(&request.path)?;
    let shown = path.relative().to_owned();
    let read_err = |e| ToolError::from_fs(e, Access::Read);
    // One walk: the file is read, and later replaced, through the same directory handle, so a
    // directory swapped on the path in between cannot redirect the write to another file.
    let (walked, leaf) = ctx
        .workspace()
        .open_parent(&path, MissingDirs::Refuse)
        .map_err(read_err)?;
    let dir = walked.dir;
    let file = dir.open_file(leaf).map_err(read_err)?;
    let metadata = file
        .metadata()
        .map_err(|e| crate::context::read_io(path.absolute(), &e))?;
    // The permission bits of the file read, not of whatever holds the name by the time of the
    // write (setuid, setgid and sticky are dropped, as Write drops them).
    let permissions = Permissions::Exact(metadata.permissions().mode() & KEPT_PERMISSION_BITS);
    let mut bytes = Vec::new();
    (&file)
        .take(READ_MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| crate::context::read_io(path.absolute(), &e))?;
    if bytes.len() as u64 > READ_MAX_FILE_BYTES {
        return Err(ToolError::FileTooLarge {
            path: shown,
            size: bytes.len() as u64,
            limit: READ_MAX_FILE_BYTES,
        });
    }
    if looks_binary(&bytes) {
        return Err(ToolError::BinaryFile { path: shown });
    }
    let line_ending = detect_line_ending(&bytes);
    let (old, new) = match line_ending {
        LineEnding::Crlf => (to_crlf(&request.old_string), to_crlf(&request.new_string)),
        LineEnding::Lf | LineEnding::None => {
            (request.old_string.clone(), request.new_string.clone())
        }
        LineEnding::Mixed => {
            let as_given = memmem::find(&bytes, request.old_string.as_bytes()).is_some();
            if as_given {
                (request.old_string.clone(), request.new_string.clone())
            } else {
                (to_crlf(&request.old_string), to_crlf(&request.new_string))
            }
        }
    };
    let count = memmem::find_iter(&bytes, old.as_bytes()).count();
    match (count, request.replace_all) {
        (0, _) => return Err(ToolError::EditNoMatch { path: shown }),
        (1, _) | (_, true) => {}
        (_, false) => return Err(ToolError::EditNotUnique { path: shown, count }),
    }
    let edited = replace(&bytes, old.as_bytes(), new.as_bytes());
    let write_err = |e| ToolError::from_fs(e, Access::Write);
    // Replaced only if the name still holds the very file that was read (same device and
    // inode, compared atomically by exchanging the names); otherwise nothing is written.
    if !dir
        .replace_if_holds(leaf, &file, &edited, permissions)
        .map_err(write_err)?
    {
        return Err(ToolError::FileChanged { path: shown });
    }
    Ok(EditResult {
        path: shown,
        replacements: count as u64,
        line_ending,
    })
}

/// Classifies the file's line breaks.
pub fn detect_line_ending(bytes: &[u8]) -> LineEnding {
    let newlines = memchr::memchr_iter(b'\n', bytes).count();
    let crlf = memmem::find_iter(bytes, b"\r\n").count();
    match (newlines, crlf) {
        (0, _) => LineEnding::None,
        (n, c) if n == c => LineEnding::Crlf,
        (_, 0) => LineEnding::Lf,
        (_, _) => LineEnding::Mixed,
    }
}

/// Writes every line break of `text` as `\r\n` (existing `\r\n` stay single).
fn to_crlf(text: &str) -> String {
    text.replace("\r\n", "\n").replace('\n', "\r\n")
}

/// Replaces every non-overlapping `old` in `haystack` with `new`.
fn replace(haystack: &[u8], old: &[u8], new: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(haystack.len());
    let mut last = 0;
    for at in memmem::find_iter(haystack, old) {
        out.extend_from_slice(&haystack[last..at]);
        out.extend_from_slice(new);
        last = at + old.len();
    }
    out.extend_from_slice(&haystack[last..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_endings() {
        assert_eq!(detect_line_ending(b"a\r\nb\r\n"), LineEnding::Crlf);
        assert_eq!(detect_line_ending(b"a\nb"), LineEnding::Lf);
        assert_eq!(detect_line_ending(b"a\r\nb\n"), LineEnding::Mixed);
        assert_eq!(detect_line_ending(b"ab"), LineEnding::None);
    }

    #[test]
    fn crlf_conversion_is_idempotent() {
        assert_eq!(to_crlf("a\nb\r\nc"), "a\r\nb\r\nc");
    }

    #[test]
    fn replaces_all_non_overlapping() {
        assert_eq!(replace(b"aaaa", b"aa", b"b"), b"bb");
        assert_eq!(replace(b"xay", b"a", b""), b"xy");
    }
}

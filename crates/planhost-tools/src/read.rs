//! Read: line-numbered text with offset/limit paging.

use std::io::Read as _;

use planhost_core::ReadResult;
use serde::{Deserialize, Serialize};

use crate::context::ToolContext;
use crate::error::{Result, ToolError};
use crate::text::{Cut, cut_chars, looks_binary, strip_terminator};

/// Largest file Read loads. Read holds the whole file to count `totalLines`; past this size an
/// agent should page with Grep instead, and a host must not balloon its memory per call.
pub const READ_MAX_FILE_BYTES: u64 = 32 * 1024 * 1024;
/// Lines returned when the request gives no `limit`: a few screens of code, enough context for a
/// model without flooding its window.
pub const READ_DEFAULT_LIMIT: u64 = 2000;
/// Longest line returned, in characters; minified files would otherwise spend the whole output
/// budget on one line.
pub const READ_MAX_LINE_CHARS: usize = 2000;
/// Most bytes of numbered text returned by one call; the rest is reached with `offset`.
pub const READ_MAX_OUTPUT_BYTES: usize = 256 * 1024;

/// `Read { path, offset?, limit? }`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReadRequest {
    /// Workspace-relative or absolute path of a regular file.
    pub path: String,
    /// 1-based line to start at (default 1).
    #[serde(default)]
    pub offset: Option<u64>,
    /// Most lines to return (default [`READ_DEFAULT_LIMIT`]).
    #[serde(default)]
    pub limit: Option<u64>,
}

/// Runs Read.
pub fn read(ctx: &ToolContext, request: &ReadRequest) -> Result<ReadResult> {
    let start_line = match request.offset {
        None => 1,
        Some(0) => return Err(ToolError::invalid("offset is 1-based; 0 is not a line")),
        Some(n) => n,
    };
    let limit = match request.limit {
        None => READ_DEFAULT_LIMIT,
        Some(0) => return Err(ToolError::invalid("limit must be at least 1")),
        Some(n) => n,
    };
    let target = ctx.resolve_read(&request.path)?;
    let file = ctx.open_read(&target)?;
    let shown = target.display();
    let size = file
        .metadata()
        .map_err(|e| crate::context::read_io(target.absolute(), &e))?
        .len();
    if size > READ_MAX_FILE_BYTES {
        return Err(ToolError::FileTooLarge {
            path: shown,
            size,
            limit: READ_MAX_FILE_BYTES,
        });
    }
    let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
    // `take` bounds a file that grows between fstat and read.
    file.take(READ_MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| crate::context::read_io(target.absolute(), &e))?;
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
    Ok(number_lines(shown, &bytes, start_line, limit))
}

fn number_lines(path: String, bytes: &[u8], start_line: u64, limit: u64) -> ReadResult {
    let total_lines = bytes.split_inclusive(|b| *b == b'\n').count() as u64;
    let mut content = String::new();
    let mut lines_returned = 0u64;
    let mut truncated = false;
    let lines = bytes
        .split_inclusive(|b| *b == b'\n')
        .enumerate()
        .skip(usize::try_from(start_line - 1).unwrap_or(usize::MAX));
    for (index, raw) in lines {
        if lines_returned == limit {
            break;
        }
        let mut line = String::from_utf8_lossy(strip_terminator(raw)).into_owned();
        if cut_chars(&mut line, READ_MAX_LINE_CHARS) == Cut::Cut {
            truncated = true;
        }
        let numbered = format!("{:>6}\t{line}\n", index + 1);
        if lines_returned > 0 && content.len() + numbered.len() > READ_MAX_OUTPUT_BYTES {
            break;
        }
        content.push_str(&numbered);
        lines_returned += 1;
    }
    let end = start_line - 1 + lines_returned;
    let next_offset = (end < total_lines).then_some(end + 1);
    truncated |= next_offset.is_some();
    ReadResult {
        path,
        content,
        start_line,
        lines_returned,
        total_lines,
        truncated,
        next_offset,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_final_line_without_newline() {
        let r = number_lines("f".into(), b"a\nb", 1, 10);
        assert_eq!(r.total_lines, 2);
        assert_eq!(r.content, "     1\ta\n     2\tb\n");
        assert!(!r.truncated);
        assert_eq!(number_lines("f".into(), b"", 1, 10).total_lines, 0);
    }

    #[test]
    fn window_and_next_offset() {
        let r = number_lines("f".into(), b"1\r\n2\r\n3\r\n4\r\n", 2, 2);
        assert_eq!(r.content, "     2\t2\n     3\t3\n");
        assert_eq!(r.next_offset, Some(4));
        assert!(r.truncated);
        let past = number_lines("f".into(), b"1\n", 5, 2);
        assert_eq!(past.lines_returned, 0);
        assert_eq!(past.next_offset, None);
    }
}

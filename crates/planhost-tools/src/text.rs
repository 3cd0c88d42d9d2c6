//! Byte-level text helpers shared by Read, Edit and Grep.

/// How many leading bytes are sniffed for a NUL (git's and ripgrep's binary heuristic).
pub const BINARY_SNIFF_BYTES: usize = 8 * 1024;

/// Whether `bytes` looks binary: a NUL byte within the first [`BINARY_SNIFF_BYTES`].
pub(crate) fn looks_binary(bytes: &[u8]) -> bool {
    let head = &bytes[..bytes.len().min(BINARY_SNIFF_BYTES)];
    memchr::memchr(0, head).is_some()
}

/// Cuts `text` to at most `max_chars` characters; returns whether it cut.
pub(crate) fn cut_chars(text: &mut String, max_chars: usize) -> Cut {
    match text.char_indices().nth(max_chars) {
        Some((at, _)) => {
            text.truncate(at);
            Cut::Cut
        }
        None => Cut::Whole,
    }
}

/// Whether [`cut_chars`] shortened its input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cut {
    /// The text was left whole.
    Whole,
    /// The text was shortened.
    Cut,
}

/// A line's bytes without its `\n` or `\r\n` terminator.
pub(crate) fn strip_terminator(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

//! Newline-delimited framing with a hard cap: a line over the cap is consumed and discarded up to
//! its newline, reported once, and the connection keeps working.

use std::io::BufRead;

use tokio::io::{AsyncBufRead, AsyncBufReadExt};

/// One framed unit.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Line {
    /// A complete line, without its newline.
    Data(Vec<u8>),
    /// A line longer than the cap; its bytes were discarded.
    TooLong,
    /// End of input.
    Eof,
}

fn take(buf: &[u8], line: &mut Vec<u8>, max: usize, discarding: &mut bool) -> (usize, bool) {
    match memchr_newline(buf) {
        Some(i) => {
            if !*discarding && line.len() + i <= max {
                line.extend_from_slice(&buf[..i]);
            } else {
                *discarding = true;
            }
            (i + 1, true)
        }
        None => {
            if !*discarding && line.len() + buf.len() <= max {
                line.extend_from_slice(buf);
            } else {
                *discarding = true;
                line.clear();
            }
            (buf.len(), false)
        }
    }
}

fn memchr_newline(buf: &[u8]) -> Option<usize> {
    memchr::memchr(b'\n', buf)
}

fn finish(line: Vec<u8>, discarding: bool) -> Line {
    if discarding {
        Line::TooLong
    } else {
        Line::Data(line)
    }
}

/// Reads one line from a blocking reader. `std`'s `fill_buf` retries `EINTR` itself.
pub(crate) fn read_line_blocking(reader: &mut impl BufRead, max: usize) -> std::io::Result<Line> {
    let mut line = Vec::new();
    let mut discarding = false;
    loop {
        let buf = match reader.fill_buf() {
            Ok(buf) => buf,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if buf.is_empty() {
            return Ok(if line.is_empty() && !discarding {
                Line::Eof
            } else {
                finish(line, discarding)
            });
        }
        let (used, done) = take(buf, &mut line, max, &mut discarding);
        reader.consume(used);
        if done {
            return Ok(finish(line, discarding));
        }
    }
}

/// Reads one line from an async reader.
pub(crate) async fn read_line(
    reader: &mut (impl AsyncBufRead + Unpin),
    max: usize,
) -> std::io::Result<Line> {
    let mut line = Vec::new();
    let mut discarding = false;
    loop {
        let buf = reader.fill_buf().await?;
        if buf.is_empty() {
            return Ok(if line.is_empty() && !discarding {
                Line::Eof
            } else {
                finish(line, discarding)
            });
        }
        let (used, done) = take(buf, &mut line, max, &mut discarding);
        reader.consume(used);
        if done {
            return Ok(finish(line, discarding));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn over_long_lines_are_discarded_and_framing_survives() {
        let input = b"short\nthis line is too long\nok\nlast-without-newline";
        let mut reader = std::io::BufReader::with_capacity(4, &input[..]);
        let mut got = Vec::new();
        loop {
            match read_line_blocking(&mut reader, 10).unwrap() {
                Line::Eof => break,
                other @ (Line::Data(_) | Line::TooLong) => got.push(other),
            }
        }
        assert_eq!(
            got,
            vec![
                Line::Data(b"short".to_vec()),
                Line::TooLong,
                Line::Data(b"ok".to_vec()),
                Line::TooLong,
            ]
        );
    }

    #[test]
    fn exact_cap_is_accepted() {
        let mut reader = &b"0123456789\n"[..];
        assert_eq!(
            read_line_blocking(&mut reader, 10).unwrap(),
            Line::Data(b"0123456789".to_vec())
        );
    }
}

//! The bounded per-stream record: byte count, head and tail.

use crate::spec::StreamSummary;
use crate::utf8::{ceil_char_boundary, complete_prefix_len};

/// Bytes kept from the start of each stream.
pub const HEAD_BYTES: usize = 32 * 1024;
/// Bytes kept from the end of each stream.
pub const TAIL_BYTES: usize = 32 * 1024;

/// Keeps at most `head + tail` bytes of a stream, whatever its length.
#[derive(Debug)]
pub(crate) struct Capture {
    head_cap: usize,
    tail_cap: usize,
    head: Vec<u8>,
    /// Up to twice `tail_cap` bytes, so trimming is an occasional memmove, not per write.
    tail: Vec<u8>,
    total: u64,
}

impl Capture {
    pub(crate) fn new(head_cap: usize, tail_cap: usize) -> Self {
        Self {
            head_cap,
            tail_cap,
            head: Vec::with_capacity(head_cap.min(4096)),
            tail: Vec::new(),
            total: 0,
        }
    }

    pub(crate) fn push(&mut self, mut bytes: &[u8]) {
        self.total += bytes.len() as u64;
        let room = self.head_cap - self.head.len();
        if room > 0 {
            let n = room.min(bytes.len());
            self.head.extend_from_slice(&bytes[..n]);
            bytes = &bytes[n..];
        }
        if bytes.len() >= self.tail_cap {
            self.tail.clear();
            self.tail
                .extend_from_slice(&bytes[bytes.len() - self.tail_cap..]);
            return;
        }
        self.tail.extend_from_slice(bytes);
        if self.tail.len() > 2 * self.tail_cap {
            self.tail.drain(..self.tail.len() - self.tail_cap);
        }
    }

    /// Bytes currently retained (bounded by `head + 2 * tail`).
    #[cfg(test)]
    pub(crate) fn retained(&self) -> usize {
        self.head.len() + self.tail.len()
    }

    fn tail(&self) -> &[u8] {
        &self.tail[self.tail.len().saturating_sub(self.tail_cap)..]
    }

    pub(crate) fn summary(&self) -> StreamSummary {
        let tail = self.tail();
        let kept_raw = (self.head.len() + tail.len()) as u64;
        if kept_raw == self.total {
            let mut all = self.head.clone();
            all.extend_from_slice(tail);
            return StreamSummary {
                total_bytes: self.total,
                kept: String::from_utf8_lossy(&all).into_owned(),
                elided_bytes: 0,
            };
        }
        // Cut on character boundaries so the elision never manufactures U+FFFD.
        let head_end = complete_prefix_len(&self.head);
        let tail_start = ceil_char_boundary(tail, 0);
        let elided = self.total - head_end as u64 - (tail.len() - tail_start) as u64;
        let mut kept = String::from_utf8_lossy(&self.head[..head_end]).into_owned();
        kept.push_str(&elision_marker(elided));
        kept.push_str(&String::from_utf8_lossy(&tail[tail_start..]));
        StreamSummary {
            total_bytes: self.total,
            kept,
            elided_bytes: elided,
        }
    }
}

/// The text standing in for the elided middle of a stream.
pub fn elision_marker(elided_bytes: u64) -> String {
    format!("\n[… {elided_bytes} bytes elided …]\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn short_stream_is_kept_whole() {
        let mut c = Capture::new(4, 4);
        c.push(b"abc");
        c.push(b"defgh");
        let s = c.summary();
        assert_eq!(
            (s.total_bytes, s.kept.as_str(), s.elided_bytes),
            (8, "abcdefgh", 0)
        );
    }

    #[test]
    fn long_stream_keeps_head_and_tail_and_counts_the_middle() {
        let mut c = Capture::new(4, 4);
        for chunk in [&b"0123"[..], b"456789", b"ab", b"cdefghij"] {
            c.push(chunk);
        }
        let s = c.summary();
        assert_eq!(s.total_bytes, 20);
        assert_eq!(s.elided_bytes, 12);
        assert_eq!(s.kept, format!("0123{}ghij", elision_marker(12)));
    }

    #[test]
    fn cuts_land_on_character_boundaries() {
        let mut c = Capture::new(4, 4);
        c.push("aa€€€bb€".as_bytes()); // 2 + 9 + 2 + 3 = 16 bytes
        let s = c.summary();
        assert!(!s.kept.contains('\u{FFFD}'), "{:?}", s.kept);
        assert_eq!(s.kept, format!("aa{}b€", elision_marker(16 - 2 - 4)));
        assert_eq!(s.elided_bytes, 10);
    }

    proptest! {
        #[test]
        fn retained_is_bounded_and_accounting_is_exact(
            chunks in proptest::collection::vec(proptest::collection::vec(b'a'..=b'z', 0..50), 0..40)
        ) {
            let mut c = Capture::new(16, 16);
            let mut all = Vec::new();
            for ch in &chunks {
                c.push(ch);
                all.extend_from_slice(ch);
                prop_assert!(c.retained() <= 16 + 32);
            }
            let s = c.summary();
            prop_assert_eq!(s.total_bytes, all.len() as u64);
            if all.len() <= 32 {
                prop_assert_eq!(s.kept, String::from_utf8(all).unwrap());
            } else {
                let want = format!(
                    "{}{}{}",
                    String::from_utf8_lossy(&all[..16]),
                    elision_marker(all.len() as u64 - 32),
                    String::from_utf8_lossy(&all[all.len() - 16..])
                );
                prop_assert_eq!(s.kept, want);
            }
        }
    }
}

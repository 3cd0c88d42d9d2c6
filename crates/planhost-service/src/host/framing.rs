//! Newline-delimited framing with two caps: one line is at most [`MAX_LINE_BYTES`], and the
//! unfinished lines of every connection together hold at most a host-wide budget. A line over
//! either cap is consumed and discarded up to its newline, reported once, and the connection
//! keeps working. The buffer that held it is given back at once, not kept at its peak size.
//!
//! One [`Decoder`] serves both drivers: tokio-util's `FramedRead` on a socket, and the blocking
//! loop the stdio thread runs ([`read_frame_blocking`]).

use std::io::Read;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio_util::bytes::{Buf as _, BytesMut};
use tokio_util::codec::Decoder;

pub use planhost_protocol::MAX_LINE_BYTES;

/// A buffer is not counted against the budget (and not given back) below this size: every
/// connection holds one read buffer of about this size whatever it sends.
const UNCOUNTED: usize = 64 * 1024;
/// The size a buffer is brought back to once it held a large line.
const RESTART: usize = 8 * 1024;
/// Freeing a buffer at least this large gives memory back to the system.
const GIVE_BACK: usize = 1024 * 1024;

/// One framed unit.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Frame {
    /// A complete line, without its newline.
    Line(BytesMut),
    /// A line longer than the cap; its bytes were discarded.
    TooLong,
    /// A line that did not fit in what the host buffers for all connections together; its
    /// bytes were discarded.
    OverBudget,
}

/// Whether the rest of a line is being thrown away.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Discarding {
    No,
    /// Until the newline; then `report` is said (or nothing, when it was said already).
    Yes {
        report: Option<Report>,
    },
}

/// Why a line was thrown away.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Report {
    TooLong,
}

impl Report {
    fn frame(self) -> Frame {
        match self {
            Report::TooLong => Frame::TooLong,
        }
    }
}

/// The bytes of unfinished lines the host holds for all its connections together.
#[derive(Debug)]
pub(crate) struct Budget {
    limit: usize,
    held: AtomicUsize,
}

impl Budget {
    /// A budget of `limit` bytes.
    pub(crate) fn new(limit: usize) -> Arc<Self> {
        Arc::new(Self {
            limit,
            held: AtomicUsize::new(0),
        })
    }

    /// What is held now.
    #[cfg(test)]
    pub(crate) fn held(&self) -> usize {
        self.held.load(Ordering::Relaxed)
    }

    fn try_take(&self, bytes: usize) -> bool {
        self.held
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |held| {
                held.checked_add(bytes).filter(|total| *total <= self.limit)
            })
            .is_ok()
    }

    fn give(&self, bytes: usize) {
        self.held.fetch_sub(bytes, Ordering::AcqRel);
    }
}

/// The decoder of one connection.
#[derive(Debug)]
pub(crate) struct LineCodec {
    max: usize,
    /// Where the search for a newline resumes.
    scanned: usize,
    /// Inside a line that is being thrown away, until its newline.
    discarding: Discarding,
    budget: Arc<Budget>,
    /// What this connection holds of the budget.
    taken: usize,
}

impl LineCodec {
    /// A decoder with the host's line cap and the shared budget.
    pub(crate) fn new(max: usize, budget: Arc<Budget>) -> Self {
        Self {
            max,
            scanned: 0,
            discarding: Discarding::No,
            budget,
            taken: 0,
        }
    }

    /// Brings the buffer back to a small one (the memory goes back to the allocator, and from
    /// there to the system, see [`give_back_memory`]) and returns this connection's share.
    fn shrink(&mut self, buf: &mut BytesMut) {
        if buf.capacity() > UNCOUNTED {
            let large = buf.capacity() >= GIVE_BACK;
            let mut small = BytesMut::with_capacity(RESTART.max(buf.len()));
            small.extend_from_slice(buf);
            *buf = small;
            if large {
                give_back_memory();
            }
        }
        self.settle(buf);
    }

    /// Throws away what is buffered.
    fn drop_all(&mut self, buf: &mut BytesMut) {
        self.scanned = 0;
        buf.clear();
        self.shrink(buf);
    }

    /// After a line: a large line's buffer is not kept for the next, small one.
    fn after_line(&mut self, buf: &mut BytesMut) {
        if buf.capacity() > UNCOUNTED && buf.len() <= UNCOUNTED {
            self.shrink(buf);
        } else {
            // Only ever smaller than before: always fits.
            self.settle(buf);
        }
    }

    /// Counts the buffer's capacity against the budget: `false` when it does not fit.
    fn settle(&mut self, buf: &BytesMut) -> bool {
        let want = if buf.capacity() > UNCOUNTED {
            buf.capacity()
        } else {
            0
        };
        if want > self.taken {
            if !self.budget.try_take(want - self.taken) {
                return false;
            }
        } else {
            self.budget.give(self.taken - want);
        }
        self.taken = want;
        true
    }
}

impl Drop for LineCodec {
    fn drop(&mut self) {
        if self.taken > 0 {
            self.budget.give(self.taken);
            // The buffer is freed by now: `FramedRead` drops its read buffer before its decoder
            // (field order), and the stdio thread's buffer is a local of the closure that owns
            // the decoder. (Were it not, the memory would stay, and the limits test would say.)
            if self.taken >= GIVE_BACK {
                give_back_memory();
            }
            self.taken = 0;
        }
    }
}

impl Decoder for LineCodec {
    type Item = Frame;
    type Error = std::io::Error;

    fn decode(&mut self, buf: &mut BytesMut) -> std::io::Result<Option<Frame>> {
        loop {
            let from = self.scanned.min(buf.len());
            let found = memchr::memchr(b'\n', &buf[from..]).map(|i| from + i);
            match (found, self.discarding) {
                (Some(end), Discarding::Yes { report }) => {
                    buf.advance(end + 1);
                    self.scanned = 0;
                    self.discarding = Discarding::No;
                    self.after_line(buf);
                    match report {
                        Some(frame) => return Ok(Some(frame.frame())),
                        // Reported when it began: go on with what follows.
                        None => continue,
                    }
                }
                (Some(end), Discarding::No) => {
                    self.scanned = 0;
                    let frame = if end > self.max {
                        buf.advance(end + 1);
                        Frame::TooLong
                    } else {
                        let mut line = buf.split_to(end + 1);
                        line.truncate(end);
                        Frame::Line(line)
                    };
                    self.after_line(buf);
                    return Ok(Some(frame));
                }
                (None, Discarding::Yes { .. }) => {
                    self.drop_all(buf);
                    return Ok(None);
                }
                (None, Discarding::No) if buf.len() > self.max => {
                    self.discarding = Discarding::Yes {
                        report: Some(Report::TooLong),
                    };
                    self.drop_all(buf);
                    return Ok(None);
                }
                (None, Discarding::No) => {
                    if self.settle(buf) {
                        self.scanned = buf.len();
                        return Ok(None);
                    }
                    // Said at once, so the client need not send the rest to learn it.
                    self.discarding = Discarding::Yes { report: None };
                    self.drop_all(buf);
                    return Ok(Some(Frame::OverBudget));
                }
            }
        }
    }

    fn decode_eof(&mut self, buf: &mut BytesMut) -> std::io::Result<Option<Frame>> {
        if let Some(frame) = self.decode(buf)? {
            return Ok(Some(frame));
        }
        // The last line has no newline: it still counts as a line.
        self.scanned = 0;
        if let Discarding::Yes { report } = std::mem::replace(&mut self.discarding, Discarding::No)
        {
            buf.clear();
            return Ok(report.map(Report::frame));
        }
        if buf.is_empty() {
            return Ok(None);
        }
        let line = buf.split();
        self.shrink(buf);
        Ok(Some(Frame::Line(line)))
    }
}

/// The next frame from a blocking reader; `None` at the end of input. `std`'s reads retry
/// `EINTR` here.
pub(crate) fn read_frame_blocking(
    reader: &mut impl Read,
    codec: &mut LineCodec,
    buf: &mut BytesMut,
) -> std::io::Result<Option<Frame>> {
    loop {
        if let Some(frame) = codec.decode(buf)? {
            return Ok(Some(frame));
        }
        if buf.capacity() - buf.len() < 4096 {
            buf.reserve(64 * 1024);
        }
        let start = buf.len();
        let window = (buf.capacity() - start).min(64 * 1024);
        buf.resize(start + window, 0);
        let read = loop {
            match reader.read(&mut buf[start..]) {
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                other => break other,
            }
        };
        match read {
            Ok(0) => {
                buf.truncate(start);
                return codec.decode_eof(buf);
            }
            Ok(n) => buf.truncate(start + n),
            Err(e) => {
                buf.truncate(start);
                return Err(e);
            }
        }
    }
}

/// Returns freed memory to the system. glibc's allocator raises its mmap threshold to the size
/// of the largest block freed, so after one 16 MiB line, blocks that size come from the heap
/// and stay in the process when freed: a host that once buffered 32 large lines would keep
/// hundreds of MiB for good. Called only after a buffer of at least [`GIVE_BACK`] was freed, so
/// a client pays a MiB of input for each call.
pub(crate) fn give_back_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only walks the allocator's own free lists; it takes the allocator's
    // locks itself and touches no memory the program owns.
    unsafe {
        libc::malloc_trim(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frames(input: &[u8], max: usize, budget: usize, chunk: usize) -> Vec<Frame> {
        struct Chunks<'a>(&'a [u8], usize);
        impl Read for Chunks<'_> {
            fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
                let n = self.0.len().min(self.1).min(out.len());
                out[..n].copy_from_slice(&self.0[..n]);
                self.0 = &self.0[n..];
                Ok(n)
            }
        }
        let mut reader = Chunks(input, chunk);
        let mut codec = LineCodec::new(max, Budget::new(budget));
        let mut buf = BytesMut::new();
        let mut got = Vec::new();
        while let Some(frame) = read_frame_blocking(&mut reader, &mut codec, &mut buf).unwrap() {
            got.push(frame);
        }
        got
    }

    fn line(text: &str) -> Frame {
        Frame::Line(BytesMut::from(text.as_bytes()))
    }

    #[test]
    fn over_long_lines_are_discarded_and_framing_survives() {
        let input = b"short\nthis line is too long\nok\nlast-without-newline";
        for chunk in [1, 3, 4, 64] {
            assert_eq!(
                frames(input, 10, usize::MAX, chunk),
                vec![line("short"), Frame::TooLong, line("ok"), Frame::TooLong],
                "read {chunk} bytes at a time"
            );
        }
    }

    #[test]
    fn exact_cap_is_accepted_and_one_more_byte_is_not() {
        assert_eq!(
            frames(b"0123456789\n01234567890\n", 10, usize::MAX, 7),
            vec![line("0123456789"), Frame::TooLong]
        );
    }

    #[test]
    fn a_line_over_the_shared_budget_is_discarded_and_the_budget_comes_back() {
        let budget = Budget::new(256 * 1024);
        let mut a = LineCodec::new(MAX_LINE_BYTES, Arc::clone(&budget));
        let mut b = LineCodec::new(MAX_LINE_BYTES, Arc::clone(&budget));
        let mut a_buf = BytesMut::with_capacity(200 * 1024);
        a_buf.extend_from_slice(&[b'x'; 150 * 1024]);
        assert_eq!(a.decode(&mut a_buf).unwrap(), None);
        assert!(budget.held() >= 150 * 1024, "a holds its partial line");
        let mut b_buf = BytesMut::with_capacity(200 * 1024);
        b_buf.extend_from_slice(&[b'y'; 150 * 1024]);
        assert_eq!(
            b.decode(&mut b_buf).unwrap(),
            Some(Frame::OverBudget),
            "said at once"
        );
        assert!(b_buf.capacity() <= UNCOUNTED, "b's buffer was given back");
        b_buf.extend_from_slice(b"yyy");
        assert_eq!(
            b.decode(&mut b_buf).unwrap(),
            None,
            "the rest is thrown away"
        );
        b_buf.extend_from_slice(b"yyy\n{}\n");
        assert_eq!(b.decode(&mut b_buf).unwrap(), Some(line("{}")));
        a_buf.extend_from_slice(b"\n");
        assert!(
            matches!(a.decode(&mut a_buf).unwrap(), Some(Frame::Line(l)) if l.len() == 150 * 1024)
        );
        assert_eq!(budget.held(), 0, "a finished line returns its share");
        drop((a, b));
        assert_eq!(budget.held(), 0);
    }

    #[test]
    fn a_closed_connection_returns_its_share() {
        let budget = Budget::new(usize::MAX);
        let mut codec = LineCodec::new(MAX_LINE_BYTES, Arc::clone(&budget));
        let mut buf = BytesMut::with_capacity(1 << 20);
        buf.extend_from_slice(&[b'z'; 1 << 19]);
        assert_eq!(codec.decode(&mut buf).unwrap(), None);
        assert!(budget.held() > 0);
        drop(codec);
        assert_eq!(budget.held(), 0);
    }
}

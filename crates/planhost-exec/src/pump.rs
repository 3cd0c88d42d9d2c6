//! Reading stdout and stderr as they arrive and turning them into ordered chunks.

use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::capture::{Capture, HEAD_BYTES, TAIL_BYTES};
use crate::spec::{OutputChunk, Stream, StreamSummary};
use crate::utf8::Utf8Stream;

/// Size of each read from a pipe.
const READ_BYTES: usize = 64 * 1024;

/// One pipe being read.
struct Side<R> {
    stream: Stream,
    reader: Option<R>,
    decoder: Utf8Stream,
    capture: Capture,
    buf: Vec<u8>,
}

impl<R> Side<R> {
    fn new(stream: Stream, reader: Option<R>) -> Self {
        Self {
            stream,
            reader,
            decoder: Utf8Stream::default(),
            capture: Capture::new(HEAD_BYTES, TAIL_BYTES),
            buf: vec![0; READ_BYTES],
        }
    }

    /// Records `n` freshly read bytes and returns their decoded text.
    fn take(&mut self, n: usize) -> String {
        self.capture.push(&self.buf[..n]);
        self.decoder.push(&self.buf[..n])
    }
}

/// Assigns sequence numbers in send order, so seq is strictly increasing across streams.
struct Emitter {
    events: mpsc::Sender<OutputChunk>,
    seq: u64,
}

impl Emitter {
    async fn emit(&mut self, stream: Stream, text: String) {
        if text.is_empty() {
            return;
        }
        let chunk = OutputChunk {
            stream,
            seq: self.seq,
            text,
        };
        self.seq += 1;
        // A receiver that went away only loses live events; the final result still has the output.
        let _ = self.events.send(chunk).await;
    }
}

/// Reads both pipes until both reach end of file, or until `stop` fires; then drains what is
/// already buffered without waiting, so a descendant holding a pipe open cannot hang the run.
pub(crate) async fn pump<O, E>(
    stdout: Option<O>,
    stderr: Option<E>,
    events: mpsc::Sender<OutputChunk>,
    stop: CancellationToken,
) -> (StreamSummary, StreamSummary)
where
    O: AsyncRead + Unpin + Drain,
    E: AsyncRead + Unpin + Drain,
{
    let mut out = Side::new(Stream::Stdout, stdout);
    let mut err = Side::new(Stream::Stderr, stderr);
    let mut emitter = Emitter { events, seq: 0 };
    while out.reader.is_some() || err.reader.is_some() {
        tokio::select! {
            biased;
            () = stop.cancelled() => {
                drain(&mut out, &mut emitter).await;
                drain(&mut err, &mut emitter).await;
                break;
            }
            r = read(&mut out.reader, &mut out.buf) => step(&mut out, r, &mut emitter).await,
            r = read(&mut err.reader, &mut err.buf) => step(&mut err, r, &mut emitter).await,
        }
    }
    let tail_out = out.decoder.finish();
    emitter.emit(Stream::Stdout, tail_out).await;
    let tail_err = err.decoder.finish();
    emitter.emit(Stream::Stderr, tail_err).await;
    (out.capture.summary(), err.capture.summary())
}

async fn read<R: AsyncRead + Unpin>(
    reader: &mut Option<R>,
    buf: &mut [u8],
) -> std::io::Result<usize> {
    match reader {
        Some(r) => r.read(buf).await,
        None => std::future::pending().await,
    }
}

async fn step<R>(side: &mut Side<R>, r: std::io::Result<usize>, emitter: &mut Emitter) {
    match r {
        Ok(0) => side.reader = None,
        Ok(n) => {
            let text = side.take(n);
            emitter.emit(side.stream, text).await;
        }
        Err(e) => {
            tracing::warn!(stream = ?side.stream, error = %e, "read failed; closing stream");
            side.reader = None;
        }
    }
}

async fn drain<R: Drain>(side: &mut Side<R>, emitter: &mut Emitter) {
    let Some(reader) = side.reader.take() else {
        return;
    };
    loop {
        match reader.read_now(&mut side.buf) {
            Some(n) if n > 0 => {
                let text = side.take(n);
                emitter.emit(side.stream, text).await;
            }
            _ => return,
        }
    }
}

/// A non-blocking read of what a pipe already holds.
pub(crate) trait Drain {
    /// Bytes read now; `None` when nothing is buffered (or on error), `Some(0)` at end of file.
    fn read_now(&self, buf: &mut [u8]) -> Option<usize>;
}

#[cfg(windows)]
mod windows {
    // Windows child pipes are read through blocking threads; there is no non-blocking peek, so
    // a stopped pump keeps only what it had already read.
    impl super::Drain for tokio::process::ChildStdout {
        fn read_now(&self, _buf: &mut [u8]) -> Option<usize> {
            None
        }
    }
    impl super::Drain for tokio::process::ChildStderr {
        fn read_now(&self, _buf: &mut [u8]) -> Option<usize> {
            None
        }
    }
}

#[cfg(unix)]
mod unix {
    use std::os::fd::AsFd;

    impl<T: AsFd> super::Drain for T {
        fn read_now(&self, buf: &mut [u8]) -> Option<usize> {
            // tokio keeps child pipes in O_NONBLOCK mode, so this returns EAGAIN when empty.
            rustix::io::read(self.as_fd(), buf).ok()
        }
    }
}

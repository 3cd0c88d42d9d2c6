//! One client on this process's stdin and stdout (the app that started this host).

use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;
use tokio_util::bytes::BytesMut;
use tokio_util::sync::CancellationToken;

use super::conn::Handshake;
use super::framing::read_frame_blocking;
use super::listen::Live;
use super::{HostError, conn};
use crate::{Peer, Service};

/// How long `serve --stdio` waits, after its input ended, for the client to read what is left.
const STDOUT_DRAIN: Duration = Duration::from_secs(5);

pub(crate) async fn serve(svc: Service, live: &Live) -> Result<(), HostError> {
    let slot = match live.admit(Peer::Embedded) {
        Ok(slot) => slot,
        Err(line) => {
            let mut out = std::io::stdout().lock();
            writeln!(out, "{line}")?;
            return Ok(());
        }
    };
    let (frame_tx, frame_rx) = mpsc::channel(64);
    let (out_tx, out_rx) = mpsc::channel::<Arc<str>>(crate::CONNECTION_QUEUE);
    let mut codec = live.codec();
    // Dedicated OS threads, not the runtime's stdin/stdout adapters: a blocked terminal or pipe
    // never stalls a runtime worker, and the framing is the socket's own decoder.
    std::thread::Builder::new()
        .name("planhost-stdin".into())
        .spawn(move || {
            let mut stdin = std::io::stdin().lock();
            let mut buf = BytesMut::with_capacity(64 * 1024);
            loop {
                let frame = match read_frame_blocking(&mut stdin, &mut codec, &mut buf) {
                    Ok(Some(frame)) => Ok(frame),
                    Ok(None) => return,
                    Err(e) => Err(e),
                };
                let stop = frame.is_err();
                if frame_tx.blocking_send(frame).is_err() || stop {
                    return;
                }
            }
        })?;
    let writer = std::thread::Builder::new()
        .name("planhost-stdout".into())
        .spawn(move || stdout_loop(out_rx))?;
    let kill = CancellationToken::new();
    // The app on the other end of the pipes started this host: as before, its roles stand.
    // No deadline for `initialize`: the app started this host for this one connection, and
    // closing it would end the host; there is no slot to win back from it.
    let _ = conn::serve_lines(
        svc,
        Peer::Embedded,
        Handshake::Unbounded,
        frame_rx,
        out_tx,
        kill.clone(),
    )
    .await;
    // stdin ended: whatever the client was running dies with its connection.
    kill.cancel();
    drop(slot);
    // Every sender is gone once in-flight requests finish; the writer then drains and stops. An
    // app that stopped reading stdout would keep the writer blocked in write(2) forever, so the
    // wait is bounded: the process then exits and takes the blocked thread with it.
    let drained = tokio::task::spawn_blocking(move || writer.join());
    if tokio::time::timeout(STDOUT_DRAIN, drained).await.is_err() {
        tracing::warn!("stdout is not being read; exiting without draining it");
    }
    Ok(())
}

fn stdout_loop(mut rx: mpsc::Receiver<Arc<str>>) {
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::with_capacity(64 * 1024, stdout.lock());
    while let Some(line) = rx.blocking_recv() {
        let ok = write_retrying(&mut out, line.as_bytes())
            .and_then(|()| write_retrying(&mut out, b"\n"));
        let ok = ok.and_then(|()| {
            if rx.is_empty() {
                flush_retrying(&mut out)
            } else {
                Ok(())
            }
        });
        if let Err(error) = ok {
            tracing::error!(%error, "stdout failed; stopping");
            return;
        }
    }
    let _ = flush_retrying(&mut out);
}

/// `write_all` that also survives `EAGAIN` on a non-blocking stdout.
fn write_retrying(out: &mut impl Write, mut bytes: &[u8]) -> std::io::Result<()> {
    while !bytes.is_empty() {
        match out.write(bytes) {
            Ok(0) => return Err(std::io::ErrorKind::WriteZero.into()),
            Ok(n) => bytes = &bytes[n..],
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                std::thread::sleep(Duration::from_millis(1));
            }
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

fn flush_retrying(out: &mut impl Write) -> std::io::Result<()> {
    loop {
        match out.flush() {
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::Interrupted | std::io::ErrorKind::WouldBlock
                ) =>
            {
                std::thread::sleep(Duration::from_millis(1));
            }
            other => return other,
        }
    }
}

//! Streaming, ordering, decoding, the bounded result and the process environment.

use std::time::Duration;

use planhost_exec::{ExitStatus, HEAD_BYTES, Stream, TAIL_BYTES, elision_marker};
use pretty_assertions::assert_eq;
use tokio_util::sync::CancellationToken;

use crate::support::{run_collect, spec, unique_tag};

const BOUND: Duration = Duration::from_secs(30);

#[tokio::test]
async fn stdout_and_stderr_arrive_separately_in_causal_order() {
    let dir = tempfile::tempdir().unwrap();
    // Each write waits for a file the test creates only after seeing the previous chunk, so the
    // order of arrival is fixed by causality, not by timing.
    let cmd = r#"echo out1; until [ -e "$D/a" ]; do sleep 0.01; done
                 echo err1 >&2; until [ -e "$D/b" ]; do sleep 0.01; done
                 echo out2"#;
    let d = dir.path().to_path_buf();
    let (res, chunks) = tokio::time::timeout(
        BOUND,
        run_collect(
            spec(cmd, dir.path(), &unique_tag("order")),
            CancellationToken::new(),
            move |c, _| match c.text.as_str() {
                "out1\n" => fs_err::write(d.join("a"), b"").unwrap(),
                "err1\n" => fs_err::write(d.join("b"), b"").unwrap(),
                _ => {}
            },
        ),
    )
    .await
    .unwrap();
    let res = res.unwrap();
    let view: Vec<(Stream, &str)> = chunks.iter().map(|c| (c.stream, c.text.as_str())).collect();
    assert_eq!(
        view,
        [
            (Stream::Stdout, "out1\n"),
            (Stream::Stderr, "err1\n"),
            (Stream::Stdout, "out2\n")
        ]
    );
    assert!(chunks.windows(2).all(|w| w[0].seq < w[1].seq), "{chunks:?}");
    assert_eq!(chunks[0].seq, 0);
    assert_eq!(res.stdout.kept, "out1\nout2\n");
    assert_eq!(res.stderr.kept, "err1\n");
    assert_eq!((res.stdout.total_bytes, res.stderr.total_bytes), (10, 5));
    assert_eq!(res.exit, ExitStatus::Code(0));
    assert!(!res.timed_out && !res.cancelled);
}

#[tokio::test]
async fn seq_is_strictly_increasing_across_interleaved_streams() {
    let dir = tempfile::tempdir().unwrap();
    let cmd = "for i in $(seq 300); do echo o$i; echo e$i >&2; done";
    let (res, chunks) = run_collect(
        spec(cmd, dir.path(), &unique_tag("seq")),
        CancellationToken::new(),
        |_, _| {},
    )
    .await;
    let res = res.unwrap();
    assert!(chunks.windows(2).all(|w| w[1].seq > w[0].seq));
    let joined = |s: Stream| -> String {
        chunks
            .iter()
            .filter(|c| c.stream == s)
            .map(|c| c.text.as_str())
            .collect()
    };
    let want_out: String = (1..=300).map(|i| format!("o{i}\n")).collect();
    let want_err: String = (1..=300).map(|i| format!("e{i}\n")).collect();
    assert_eq!(joined(Stream::Stdout), want_out);
    assert_eq!(joined(Stream::Stderr), want_err);
    assert_eq!(res.stdout.kept, want_out);
}

#[tokio::test]
async fn chunks_never_split_a_character_and_invalid_bytes_become_fffd() {
    let dir = tempfile::tempdir().unwrap();
    // The euro sign's first two bytes, a pause (so the reader very likely sees them alone), the last.
    let cmd = r"printf '\xe2\x82'; sleep 0.3; printf '\xac|a\xffb\n'; printf '\xf0\x9f' >&2";
    let (res, chunks) = run_collect(
        spec(cmd, dir.path(), &unique_tag("utf8")),
        CancellationToken::new(),
        |_, _| {},
    )
    .await;
    let res = res.unwrap();
    let out: String = chunks
        .iter()
        .filter(|c| c.stream == Stream::Stdout)
        .map(|c| c.text.as_str())
        .collect();
    assert_eq!(out, "€|a\u{FFFD}b\n");
    let mut stdout_chunks = chunks.iter().filter(|c| c.stream == Stream::Stdout);
    assert!(
        stdout_chunks.all(|c| !c.text.starts_with('\u{FFFD}')),
        "{chunks:?}"
    );
    assert_eq!(res.stdout.kept, "€|a\u{FFFD}b\n");
    // A character cut off by end of stream is one U+FFFD.
    assert_eq!(res.stderr.kept, "\u{FFFD}");
}

#[tokio::test]
async fn long_output_keeps_head_and_tail_and_says_what_was_elided() {
    let dir = tempfile::tempdir().unwrap();
    let cmd = "printf BEGIN; head -c 1000000 /dev/zero | tr '\\0' x; printf END";
    let (res, _) = run_collect(
        spec(cmd, dir.path(), &unique_tag("elide")),
        CancellationToken::new(),
        |_, _| {},
    )
    .await;
    let out = res.unwrap().stdout;
    assert_eq!(out.total_bytes, 1_000_008);
    let elided = 1_000_008 - (HEAD_BYTES + TAIL_BYTES) as u64;
    assert_eq!(out.elided_bytes, elided);
    assert!(out.kept.starts_with("BEGINxxx") && out.kept.ends_with("xxxEND"));
    assert!(out.kept.contains(&elision_marker(elided)));
    assert_eq!(
        out.kept.len(),
        HEAD_BYTES + TAIL_BYTES + elision_marker(elided).len()
    );
}

#[tokio::test]
async fn exit_codes_and_signals_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    let tag = unique_tag("exit");
    let (res, _) = run_collect(
        spec("exit 7", dir.path(), &tag),
        CancellationToken::new(),
        |_, _| {},
    )
    .await;
    assert_eq!(res.unwrap().exit, ExitStatus::Code(7));
    let (res, _) = run_collect(
        spec("kill -KILL $$", dir.path(), &tag),
        CancellationToken::new(),
        |_, _| {},
    )
    .await;
    assert_eq!(res.unwrap().exit, ExitStatus::Signal(9));
}

#[tokio::test]
async fn own_session_null_stdin_clean_env_and_cwd() {
    let dir = tempfile::tempdir().unwrap();
    let cmd = r#"read -r _ _ _ _ pgrp sid _ < /proc/$$/stat; echo "ids $$ $pgrp $sid"
                 echo "stdin $(readlink /proc/$$/fd/0)"; cat; echo "cat rc=$?"
                 echo "cwd $(pwd)"; env | sort"#;
    let mut s = spec(cmd, dir.path(), &unique_tag("env"));
    s.env.push(("FOO".into(), "bar baz".into()));
    let (res, _) = run_collect(s, CancellationToken::new(), |_, _| {}).await;
    let out = res.unwrap().stdout.kept;
    let ids: Vec<&str> = out.lines().next().unwrap().split(' ').skip(1).collect();
    assert_eq!(ids.len(), 3);
    assert!(
        ids.iter().all(|i| *i == ids[0]),
        "pid, pgid and sid differ: {ids:?}"
    );
    assert!(out.contains("stdin /dev/null\n"), "{out}");
    assert!(out.contains("cat rc=0\n"));
    assert!(out.contains(&format!("cwd {}\n", dir.path().display())));
    assert!(out.contains("\nFOO=bar baz\n"));
    assert!(out.contains("\nPLANHOST_EXEC_RUN="));
    // Nothing of the test process's own environment leaks through.
    if std::env::var_os("HOME").is_some() {
        assert!(!out.contains("\nHOME="), "{out}");
    }
    assert!(!out.contains("CARGO"), "{out}");
}

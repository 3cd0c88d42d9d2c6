//! The outside-path request kind and the workspace boundary.

use planhost_fs::Workspace;
use planhost_tools::{
    GrepMode, GrepOutput, GrepRequest, OutsideAccess, ReadRequest, ToolContext, WriteRequest, grep,
    read, write,
};

#[test]
fn outside_reads_need_an_explicit_grant() {
    let ws = tempfile::tempdir().unwrap();
    let other = tempfile::tempdir().unwrap();
    let file = other.path().join("doc.txt");
    fs_err::write(&file, b"outside needle\n").unwrap();
    let request = ReadRequest {
        path: file.to_str().unwrap().into(),
        offset: None,
        limit: None,
    };

    let denied = ToolContext::new(Workspace::new(ws.path()).unwrap());
    assert_eq!(
        read(&denied, &request).unwrap_err().code().as_str(),
        "TOOL_PATH_OUTSIDE_WORKSPACE"
    );

    let granted = denied
        .clone()
        .with_outside_access(OutsideAccess::AllowReads);
    let r = read(&granted, &request).unwrap();
    assert_eq!(r.content, "     1\toutside needle\n");
    assert_eq!(std::path::Path::new(&r.path), file.canonicalize().unwrap());

    let g = GrepRequest {
        pattern: "needle".into(),
        path: Some(other.path().to_str().unwrap().into()),
        glob: None,
        mode: GrepMode::Files,
        context: None,
        context_before: None,
        context_after: None,
        case_insensitive: false,
        limit: None,
    };
    let found = grep(&granted, &g).unwrap();
    let expected = file.canonicalize().unwrap().to_str().unwrap().to_owned();
    assert_eq!(
        found.output,
        GrepOutput::Files {
            files: vec![expected]
        }
    );

    // Writes never go outside, grant or not.
    let w = WriteRequest {
        path: other.path().join("new.txt").to_str().unwrap().into(),
        content: "x".into(),
    };
    assert_eq!(
        write(&granted, &w).unwrap_err().code().as_str(),
        "TOOL_PATH_OUTSIDE_WORKSPACE"
    );
    assert!(!other.path().join("new.txt").exists());
}

#[test]
fn symlink_escape_is_refused_even_with_outside_grant() {
    let ws = tempfile::tempdir().unwrap();
    let other = tempfile::tempdir().unwrap();
    fs_err::write(other.path().join("s.txt"), b"s").unwrap();
    fs_err::os::unix::fs::symlink(other.path(), ws.path().join("out")).unwrap();
    let ctx = ToolContext::new(Workspace::new(ws.path()).unwrap())
        .with_outside_access(OutsideAccess::AllowReads);
    let r = ReadRequest {
        path: "out/s.txt".into(),
        offset: None,
        limit: None,
    };
    assert_eq!(
        read(&ctx, &r).unwrap_err().code().as_str(),
        "TOOL_SYMLINK_REFUSED"
    );
}

/// Issue 10, defect b: resolution used to answer differently depending on what existed behind a
/// symlink leading out ("not a directory" for an outside file, an I/O error for an outside
/// loop, "symlink refused" for nothing), a one-bit probe of outside names. Now every path that
/// leaves the workspace gets the same answer, with or without an outside grant, from every tool.
#[test]
fn paths_through_an_outside_symlink_get_one_answer_whatever_exists_outside() {
    use planhost_tools::{EditRequest, edit};
    let ws = tempfile::tempdir().unwrap();
    let other = tempfile::tempdir().unwrap();
    fs_err::write(other.path().join("file.txt"), b"OUTSIDE_SECRET\n").unwrap();
    fs_err::create_dir(other.path().join("dir")).unwrap();
    fs_err::os::unix::fs::symlink("/nonexistent/planhost", other.path().join("dangling")).unwrap();
    fs_err::os::unix::fs::symlink(other.path().join("loop"), other.path().join("loop")).unwrap();
    fs_err::os::unix::fs::symlink(other.path(), ws.path().join("out")).unwrap();
    let denied = ToolContext::new(Workspace::new(ws.path()).unwrap());
    let granted = denied
        .clone()
        .with_outside_access(OutsideAccess::AllowReads);
    let mut answers = std::collections::BTreeMap::new();
    for name in [
        "missing",
        "file.txt",
        "dir",
        "dangling",
        "loop",
        "missing/x",
        "file.txt/x",
        "dir/x",
        "dangling/x",
        "loop/x",
    ] {
        let path = format!("out/{name}");
        let read_req = ReadRequest {
            path: path.clone(),
            offset: None,
            limit: None,
        };
        let write_req = WriteRequest {
            path: path.clone(),
            content: "x".into(),
        };
        let edit_req = EditRequest {
            path: path.clone(),
            old_string: "OUTSIDE".into(),
            new_string: "x".into(),
            replace_all: false,
        };
        let full = ws.path().canonicalize().unwrap().join(&path);
        // The answer, with the requested path itself taken out of the message.
        let shown = |e: planhost_tools::ToolError| {
            let text = e.to_string().replace(full.to_str().unwrap(), "<path>");
            format!("{}: {text}", e.code().as_str())
        };
        let answer = [
            read(&denied, &read_req).map(|_| ()).map_err(shown),
            read(&granted, &read_req).map(|_| ()).map_err(shown),
            write(&granted, &write_req).map(|_| ()).map_err(shown),
            edit(&granted, &edit_req).map(|_| ()).map_err(shown),
        ];
        answers.insert(path, answer);
    }
    let expected = Err::<(), _>("TOOL_SYMLINK_REFUSED: symlink refused: <path>".to_owned());
    for (path, answer) in &answers {
        assert_eq!(
            answer,
            &[
                expected.clone(),
                expected.clone(),
                expected.clone(),
                expected.clone()
            ],
            "{path}"
        );
    }
    assert_eq!(
        fs_err::read(other.path().join("file.txt")).unwrap(),
        b"OUTSIDE_SECRET\n"
    );
}

/// Issue 10, defect c: a granted outside read checked the path's metadata, then opened it by
/// path and blocking, so a FIFO swapped in between hung the call for as long as no writer came.
/// The file is now opened non-blocking and its type checked on the opened descriptor: a FIFO is
/// refused (`TOOL_INVALID_INPUT`), never waited on.
#[test]
fn a_granted_outside_read_never_blocks_on_a_fifo_swapped_in_during_a_swap_race() {
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    use std::time::{Duration, Instant};
    let ws = tempfile::tempdir().unwrap();
    let other = tempfile::tempdir().unwrap();
    let (doc, fifo) = (other.path().join("doc.txt"), other.path().join("fifo"));
    fs_err::write(&doc, b"outside doc\n").unwrap();
    rustix::fs::mknodat(
        rustix::fs::CWD,
        &fifo,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
        0,
    )
    .unwrap();
    let ctx = ToolContext::new(Workspace::new(ws.path()).unwrap())
        .with_outside_access(OutsideAccess::AllowReads);
    let request = ReadRequest {
        path: doc.to_str().unwrap().into(),
        offset: None,
        limit: None,
    };
    let start = Instant::now();
    let millis = || u64::try_from(start.elapsed().as_millis()).unwrap();
    // When the current probe began (ms since start), or u64::MAX between probes.
    let probing_since = AtomicU64::new(u64::MAX);
    let (blocked, done) = (AtomicBool::new(false), AtomicBool::new(false));
    let (mut read_doc, mut refused) = (0u64, 0u64);
    let race = std::thread::scope(|scope| {
        // A read stuck in open(2) on the FIFO is freed by opening it for writing.
        scope.spawn(|| {
            while !done.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(50));
                let since = probing_since.load(Ordering::Relaxed);
                if since != u64::MAX && millis().saturating_sub(since) > 1000 {
                    blocked.store(true, Ordering::Relaxed);
                    for name in [&doc, &fifo] {
                        let flags = rustix::fs::OFlags::WRONLY | rustix::fs::OFlags::NONBLOCK;
                        let _ = rustix::fs::open(name, flags, rustix::fs::Mode::empty());
                    }
                }
            }
        });
        let race =
            planhost_test_support::swap::swap_race(&doc, &fifo, crate::SWAP_RACE_FOR, || {
                probing_since.store(millis(), Ordering::Relaxed);
                let answer = read(&ctx, &request);
                probing_since.store(u64::MAX, Ordering::Relaxed);
                match answer {
                    Ok(r) if r.content == "     1\toutside doc\n" => read_doc += 1,
                    Ok(r) => return Some(format!("read something else: {r:?}")),
                    Err(e) if e.code().as_str() == "TOOL_INVALID_INPUT" => refused += 1,
                    Err(e) => return Some(format!("unexpected refusal: {e}")),
                }
                blocked
                    .load(Ordering::Relaxed)
                    .then(|| "a read blocked on the FIFO".to_owned())
            });
        done.store(true, Ordering::Relaxed);
        race
    });
    println!(
        "swap race doc.txt <-> fifo: {} probes, {} swaps, {read_doc} read, {refused} refused",
        race.probes, race.swaps
    );
    assert_eq!(race.leak, None, "after {} probes", race.probes);
    assert!(
        read_doc > 0 && refused > 0,
        "{read_doc} reads, {refused} refusals"
    );
}

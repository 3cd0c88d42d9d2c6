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

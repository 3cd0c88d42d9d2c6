//! Bad input is refused with a stable code, and nothing is spawned.

use planhost_exec::{ExitStatus, Timeout, run};
use tokio_util::sync::CancellationToken;

use crate::support::{bash, spec, unique_tag};

async fn refused(spec: planhost_exec::CommandSpec) -> &'static str {
    let (tx, _rx) = tokio::sync::mpsc::channel(8);
    run(spec, tx, CancellationToken::new())
        .await
        .unwrap_err()
        .code()
        .as_str()
}

#[test]
fn timeout_bounds_are_validated_before_any_spec_exists() {
    assert_eq!(Timeout::from_request(None).unwrap().as_millis(), 60_000);
    assert_eq!(
        Timeout::from_request(Some(999))
            .unwrap_err()
            .code()
            .as_str(),
        "COMMAND_TIMEOUT_INVALID"
    );
    assert_eq!(
        Timeout::from_request(Some(300_001))
            .unwrap_err()
            .code()
            .as_str(),
        "COMMAND_TIMEOUT_INVALID"
    );
}

#[tokio::test]
async fn bad_cwd_and_env_spawn_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let witness = dir.path().join("spawned");
    let cmd = format!("touch {}", witness.display());
    let tag = unique_tag("bounds");

    let missing = spec(&cmd, &dir.path().join("nope"), &tag);
    assert_eq!(refused(missing).await, "COMMAND_CWD_INVALID");
    let relative = spec(&cmd, std::path::Path::new("relative/dir"), &tag);
    assert_eq!(refused(relative).await, "COMMAND_CWD_INVALID");
    fs_err::write(dir.path().join("file"), b"").unwrap();
    let file = spec(&cmd, &dir.path().join("file"), &tag);
    assert_eq!(refused(file).await, "COMMAND_CWD_INVALID");

    for bad in [("A=B", "x"), ("", "x"), ("A", "nul\0")] {
        let mut s = spec(&cmd, dir.path(), &tag);
        s.env.push((bad.0.into(), bad.1.into()));
        assert_eq!(refused(s).await, "COMMAND_ENV_INVALID", "{bad:?}");
    }
    assert!(!witness.exists(), "a refused command must not run");

    // Control: the same command with a valid spec does run.
    let (tx, _rx) = tokio::sync::mpsc::channel(8);
    let ok = run(spec(&cmd, dir.path(), &tag), tx, CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(ok.exit, ExitStatus::Code(0));
    assert!(witness.exists());
}

#[tokio::test]
async fn missing_executable_is_spawn_failed() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = spec("true", dir.path(), &unique_tag("spawn"));
    s.shell = planhost_exec::EffectiveShell {
        executable: "/nonexistent/bash".into(),
        ..bash()
    };
    assert_eq!(refused(s).await, "COMMAND_SPAWN_FAILED");
}

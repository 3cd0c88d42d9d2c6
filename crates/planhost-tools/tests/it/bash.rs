//! Bash: streaming, validation before spawn, shell pin checks, cancellation, clean environment.

use std::collections::BTreeSet;
use std::path::Path;
use std::time::{Duration, Instant};

use planhost_exec::{
    ExitStatus, OutputChunk, PinnedShell, Platform, ProbeResults, ShellId, Stream, effective_shell,
    probe,
};
use planhost_tools::{
    BashRequest, BashResult, ShellCatalog, ShellPinContext, ToolContext, ToolError, bash,
};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::workspace;

/// What this machine's turn would pin.
pub(crate) fn host_pin() -> ShellPinContext {
    let shell = effective_shell(Platform::current(), &probe(), None).unwrap();
    ShellPinContext::new(PinnedShell::pin(&shell), None)
}

fn req(command: &str) -> BashRequest {
    BashRequest {
        command: command.into(),
        timeout_ms: None,
        expected_shell_id: None,
        description: None,
    }
}

async fn run_collect(
    ctx: &ToolContext,
    request: &BashRequest,
    shell: &ShellPinContext,
) -> (Result<BashResult, ToolError>, Vec<OutputChunk>) {
    let (tx, mut rx) = mpsc::channel(64);
    let collector = tokio::spawn(async move {
        let mut chunks = Vec::new();
        while let Some(chunk) = rx.recv().await {
            chunks.push(chunk);
        }
        chunks
    });
    let result = bash(ctx, request, shell, tx, CancellationToken::new()).await;
    (result, collector.await.unwrap())
}

fn text_of(chunks: &[OutputChunk], stream: Stream) -> String {
    chunks
        .iter()
        .filter(|c| c.stream == stream)
        .map(|c| c.text.as_str())
        .collect()
}

/// Gives a process that was wrongly spawned the time to leave its mark before we look.
async fn settle() {
    tokio::time::sleep(Duration::from_millis(300)).await;
}

#[tokio::test]
async fn streams_stdout_and_stderr_separately_and_returns_the_exit_code() {
    let (_tmp, ctx) = workspace(&[]);
    let request = req("echo out1; echo err1 >&2; echo out2; pwd; exit 3");
    let (result, chunks) = run_collect(&ctx, &request, &host_pin()).await;
    let result = result.unwrap();

    let root = ctx.workspace().root().display();
    assert_eq!(
        text_of(&chunks, Stream::Stdout),
        format!("out1\nout2\n{root}\n")
    );
    assert_eq!(text_of(&chunks, Stream::Stderr), "err1\n");
    assert!(chunks.windows(2).all(|w| w[0].seq < w[1].seq));
    assert_eq!(result.run.exit, ExitStatus::Code(3));
    assert_eq!(result.run.stdout.kept, format!("out1\nout2\n{root}\n"));
    assert_eq!(result.run.stderr.kept, "err1\n");
    assert_eq!(result.shell_id, ShellId::Bash);
    assert_eq!(result.timeout_ms, 60_000);
    assert!(!result.run.timed_out && !result.run.cancelled);
}

#[tokio::test]
async fn out_of_range_timeouts_spawn_nothing() {
    let (tmp, ctx) = workspace(&[]);
    let witness = tmp.path().join("witness");
    for bad in [0, 1, 999, 300_001, u64::MAX] {
        let mut request = req("touch witness");
        request.timeout_ms = Some(bad);
        let (result, chunks) = run_collect(&ctx, &request, &host_pin()).await;
        assert_eq!(
            result.unwrap_err().code().as_str(),
            "COMMAND_TIMEOUT_INVALID",
            "{bad}"
        );
        assert!(chunks.is_empty());
    }
    settle().await;
    assert!(!witness.exists());

    // The same command with an in-range timeout does leave the witness.
    let mut request = req("touch witness");
    request.timeout_ms = Some(1_000);
    let (result, _) = run_collect(&ctx, &request, &host_pin()).await;
    assert_eq!(result.unwrap().timeout_ms, 1_000);
    assert!(witness.exists());
}

#[tokio::test]
async fn an_explicit_timeout_ends_the_command() {
    let (_tmp, ctx) = workspace(&[]);
    let mut request = req("sleep 30");
    request.timeout_ms = Some(1_000);
    let (result, _) = run_collect(&ctx, &request, &host_pin()).await;
    let result = result.unwrap();
    assert!(result.run.timed_out);
    assert_ne!(result.run.exit, ExitStatus::Code(0));
}

#[tokio::test]
async fn stale_or_unknown_shell_ids_spawn_nothing() {
    let (tmp, ctx) = workspace(&[]);
    let witness = tmp.path().join("witness");
    let host = host_pin();
    let git_bash_pin = ShellPinContext::new(
        PinnedShell {
            id: ShellId::GitBash,
            dialect: ShellId::GitBash.dialect(),
        },
        Some(ShellId::GitBash),
    );
    let nothing = host.clone().with_catalog(ShellCatalog::Fixed {
        platform: Platform::Linux,
        probes: ProbeResults::none(),
    });
    let cases: [(Option<&str>, &ShellPinContext, &str); 5] = [
        // The runtime believes in another catalog id than the turn's pin.
        (Some("git-bash"), &host, "COMMAND_SHELL_CHANGED"),
        (Some("cmd"), &host, "COMMAND_SHELL_CHANGED"),
        // The pin no longer matches what the catalog resolves to now.
        (None, &git_bash_pin, "COMMAND_SHELL_CHANGED"),
        (Some("zsh"), &host, "COMMAND_SHELL_INVALID"),
        (Some("bash"), &nothing, "SHELL_NOT_FOUND"),
    ];
    for (expected, shell, code) in cases {
        let mut request = req("touch witness");
        request.expected_shell_id = expected.map(str::to_owned);
        let (result, chunks) = run_collect(&ctx, &request, shell).await;
        assert_eq!(result.unwrap_err().code().as_str(), code, "{expected:?}");
        assert!(chunks.is_empty());
    }
    settle().await;
    assert!(!witness.exists());

    let mut request = req("touch witness");
    request.expected_shell_id = Some("bash".into());
    let (result, _) = run_collect(&ctx, &request, &host).await;
    assert_eq!(result.unwrap().run.exit, ExitStatus::Code(0));
    assert!(witness.exists());
}

#[tokio::test]
async fn a_cancelled_token_spawns_nothing() {
    let (tmp, ctx) = workspace(&[]);
    let (tx, _rx) = mpsc::channel(8);
    let cancel = CancellationToken::new();
    cancel.cancel();
    let result = bash(&ctx, &req("touch witness"), &host_pin(), tx, cancel)
        .await
        .unwrap();
    assert!(result.run.cancelled);
    settle().await;
    assert!(!tmp.path().join("witness").exists());
}

fn cmdline(pid: u32) -> Option<String> {
    let raw = fs_err::read(format!("/proc/{pid}/cmdline")).ok()?;
    Some(String::from_utf8_lossy(&raw).replace('\0', " "))
}

#[tokio::test]
async fn cancel_kills_a_setsid_escapee() {
    let (_tmp, ctx) = workspace(&[]);
    let (tx, mut rx) = mpsc::channel(64);
    let cancel = CancellationToken::new();
    let task = {
        let cancel = cancel.clone();
        tokio::spawn(async move {
            let request = req("setsid sleep 600 & echo $!; wait");
            bash(&ctx, &request, &host_pin(), tx, cancel).await
        })
    };
    let mut printed = String::new();
    while !printed.contains('\n') {
        printed.push_str(&rx.recv().await.unwrap().text);
    }
    let pid: u32 = printed.trim().parse().unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    while !cmdline(pid).is_some_and(|c| c.starts_with("sleep 600")) {
        assert!(
            Instant::now() < deadline,
            "escapee {pid} never became sleep"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    cancel.cancel();
    let result = task.await.unwrap().unwrap();
    assert!(result.run.cancelled);
    let deadline = Instant::now() + Duration::from_secs(5);
    while Path::new(&format!("/proc/{pid}")).exists() {
        assert!(Instant::now() < deadline, "escapee {pid} survived cancel");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn the_environment_is_the_allow_list_only() {
    let (_tmp, ctx) = workspace(&[]);
    let (result, chunks) = run_collect(&ctx, &req("env -0"), &host_pin()).await;
    assert_eq!(result.unwrap().run.exit, ExitStatus::Code(0));
    let out = text_of(&chunks, Stream::Stdout);
    let seen: BTreeSet<&str> = out
        .split('\0')
        .filter(|kv| !kv.is_empty())
        .map(|kv| kv.split_once('=').map_or(kv, |(k, _)| k))
        .collect();

    // The documented allow-list, spelled out so that widening it fails here.
    let mut expected: BTreeSet<&str> = ["PATH", "LANG", "LC_ALL", "TERM", "PLANHOST"].into();
    for from_host in ["HOME", "TMPDIR"] {
        if std::env::var(from_host).is_ok() {
            expected.insert(from_host);
        }
    }
    // Exec's run marker, and what bash itself exports to its children.
    expected.extend([planhost_exec::RUN_MARKER_VAR, "PWD", "SHLVL", "_"]);
    assert_eq!(seen, expected);

    let host: Vec<String> = std::env::vars().map(|(k, _)| k).collect();
    assert!(
        host.iter().any(|k| !expected.contains(k.as_str())),
        "nothing to leak"
    );
    for name in host.iter().filter(|k| !expected.contains(k.as_str())) {
        assert!(!seen.contains(name.as_str()), "{name} leaked");
    }
    for fixed in ["TERM=dumb", "PLANHOST=1"] {
        assert!(out.split('\0').any(|kv| kv == fixed), "{fixed}");
    }
}

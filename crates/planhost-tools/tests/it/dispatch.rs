//! `execute`: every tool through JSON, tool names, and input errors. The outputs are compared as
//! the JSON the wire carries.

use planhost_exec::OutputChunk;
use planhost_tools::{ExecuteOutput, HostTool, ToolContext, ToolError, execute, tool_by_name};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::bash::host_pin;
use crate::workspace;

async fn call(ctx: &ToolContext, tool: &str, input: Value) -> Result<Value, ToolError> {
    let tool = tool_by_name(tool)?;
    let (tx, _rx) = mpsc::channel::<OutputChunk>(64);
    let pin = host_pin();
    let output = execute(ctx, tool, input, Some(&pin), tx, CancellationToken::new()).await?;
    assert_eq!(output.tool(), tool);
    let json = serde_json::to_value(&output).unwrap();
    // A client reading the output of the tool it called gets the same value back.
    assert_eq!(ExecuteOutput::decode(tool, json.clone()).unwrap(), output);
    Ok(json)
}

#[tokio::test]
async fn every_tool_round_trips_through_json() {
    let (tmp, ctx) = workspace(&[]);

    let written = call(
        &ctx,
        "Write",
        json!({ "path": "a.txt", "content": "hello\n" }),
    )
    .await;
    assert_eq!(
        written.unwrap(),
        json!({ "path": "a.txt", "bytesWritten": 6, "outcome": "created" })
    );

    let read = call(&ctx, "read", json!({ "path": "a.txt" }))
        .await
        .unwrap();
    assert_eq!(read["content"], "     1\thello\n");
    assert_eq!(read["totalLines"], 1);

    let edited = call(
        &ctx,
        "Edit",
        json!({ "path": "a.txt", "oldString": "hello", "newString": "bye" }),
    )
    .await;
    assert_eq!(
        edited.unwrap(),
        json!({ "path": "a.txt", "replacements": 1, "lineEnding": "lf" })
    );
    assert_eq!(fs_err::read(tmp.path().join("a.txt")).unwrap(), b"bye\n");

    let globbed = call(&ctx, "glob", json!({ "pattern": "*.txt" })).await;
    assert_eq!(
        globbed.unwrap(),
        json!({ "files": ["a.txt"], "truncated": false, "skippedNonUtf8": 0 })
    );

    let grepped = call(&ctx, "Grep", json!({ "pattern": "^bye" }))
        .await
        .unwrap();
    assert_eq!(grepped["files"], json!(["a.txt"]));

    let ran = call(
        &ctx,
        "bash",
        json!({ "command": "cat a.txt; echo e >&2", "timeoutMs": 5000, "description": "show" }),
    )
    .await
    .unwrap();
    assert_eq!(ran["shellId"], "bash");
    assert_eq!(ran["dialect"], "posix");
    assert_eq!(ran["timeoutMs"], 5000);
    assert_eq!(ran["exit"], json!({ "code": 0 }));
    assert_eq!(ran["stdout"]["kept"], "bye\n");
    assert_eq!(ran["stderr"]["kept"], "e\n");
    assert_eq!(ran["timedOut"], false);
}

#[test]
fn tool_names_are_canonical_or_lowercase() {
    for tool in HostTool::RUN_BY_HOST {
        assert_eq!(tool_by_name(tool.as_str()).unwrap(), tool);
        assert_eq!(tool_by_name(&tool.as_str().to_lowercase()).unwrap(), tool);
    }
    for unknown in [
        "READ",
        "find",
        "ls",
        "Delete",
        "",
        " Read",
        "SubmitPlan",
        "submitplan",
        "read_plan",
    ] {
        let err = tool_by_name(unknown).unwrap_err();
        assert_eq!(err.code().as_str(), "TOOL_UNKNOWN", "{unknown:?}");
    }
}

#[tokio::test]
async fn malformed_input_names_the_offending_field() {
    let (tmp, ctx) = workspace(&[]);
    let cases = [
        (
            "Bash",
            json!({ "command": "touch w", "timeoutMs": "5" }),
            "`timeoutMs`",
        ),
        (
            "Bash",
            json!({ "command": "touch w", "timeout": 5 }),
            "`timeout`",
        ),
        ("Bash", json!({ "timeoutMs": 5000 }), "`command`"),
        ("Write", json!({ "path": 5, "content": "x" }), "`path`"),
        ("Grep", json!({ "pattern": "x", "mode": "lines" }), "`mode`"),
        (
            "Glob",
            json!({ "pattern": "*", "limit": [1, -2] }),
            "`limit`",
        ),
        ("Read", json!("a.txt"), "Read input"),
    ];
    for (tool, input, needle) in cases {
        let err = call(&ctx, tool, input).await.unwrap_err();
        assert_eq!(err.code().as_str(), "TOOL_INVALID_INPUT", "{tool}");
        assert!(err.to_string().contains(needle), "{tool}: {err}");
    }
    assert_eq!(crate::listing(tmp.path()), Vec::<String>::new());
}

#[tokio::test]
async fn bash_without_a_pin_and_unknown_tools_are_refused() {
    let (_tmp, ctx) = workspace(&[]);
    let (tx, _rx) = mpsc::channel::<OutputChunk>(8);
    let input = json!({ "command": "true" });
    let err = execute(
        &ctx,
        HostTool::Bash,
        input,
        None,
        tx,
        CancellationToken::new(),
    )
    .await
    .unwrap_err();
    assert_eq!(err.code().as_str(), "TOOL_INTERNAL_ERROR");

    let err = call(&ctx, "Delete", json!({ "path": "a" }))
        .await
        .unwrap_err();
    assert_eq!(err.code().as_str(), "TOOL_UNKNOWN");
    // A host tool the host does not run itself: a host method, or the client's.
    for tool in [HostTool::SubmitPlan, HostTool::CompactContext] {
        let (tx, _rx) = mpsc::channel::<OutputChunk>(8);
        let err = execute(&ctx, tool, json!({}), None, tx, CancellationToken::new())
            .await
            .unwrap_err();
        assert_eq!(err.code().as_str(), "TOOL_UNKNOWN", "{tool}");
    }
}

#[tokio::test]
async fn exec_codes_pass_through_unchanged() {
    let (tmp, ctx) = workspace(&[]);
    let cases = [
        (
            json!({ "command": "touch w", "timeoutMs": 999 }),
            "COMMAND_TIMEOUT_INVALID",
        ),
        (
            json!({ "command": "touch w", "expectedShellId": "cmd" }),
            "COMMAND_SHELL_CHANGED",
        ),
        (
            json!({ "command": "touch w", "expectedShellId": "fish" }),
            "COMMAND_SHELL_INVALID",
        ),
    ];
    for (input, code) in cases {
        assert_eq!(
            call(&ctx, "Bash", input).await.unwrap_err().code().as_str(),
            code
        );
    }
    assert!(!tmp.path().join("w").exists());
}

//! `tools.execute`: a tool name and a JSON input in, the tool's typed result out.

use planhost_core::{ExecuteOutput, HostTool};
use planhost_exec::OutputChunk;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::bash::{BashRequest, ShellPinContext, bash};
use crate::context::ToolContext;
use crate::edit::{EditRequest, edit};
use crate::error::{Result, ToolError};
use crate::glob::{GlobRequest, glob};
use crate::grep::{GrepRequest, grep};
use crate::read::{ReadRequest, read};
use crate::write::{WriteRequest, write};

/// The host tool `name` names, for [`execute`]: exactly a canonical name of one of the six
/// tools the host runs ([`HostTool::RUN_BY_HOST`]) or its all-lowercase form (pi's spelling);
/// anything else (`READ`, `find`, `ls`, `SubmitPlan`) is `TOOL_UNKNOWN`.
pub fn tool_by_name(name: &str) -> Result<HostTool> {
    HostTool::RUN_BY_HOST
        .into_iter()
        .find(|tool| {
            let canonical = tool.as_str();
            canonical == name
                || (name.bytes().all(|b| !b.is_ascii_uppercase())
                    && canonical.eq_ignore_ascii_case(name))
        })
        .ok_or_else(|| ToolError::UnknownTool {
            name: name.to_owned(),
        })
}

/// Runs `tool` on a JSON `input` and returns its result, the [`ExecuteOutput`] variant of `tool`.
///
/// A malformed input is `TOOL_INVALID_INPUT`, with a message naming the offending field. The
/// file tools run on tokio's blocking pool and ignore `events` and `cancel` (they are bounded);
/// Bash needs the turn's `bash` pin context, and without one it is `TOOL_INTERNAL_ERROR`. A host
/// tool the host does not run (the planning tools, the utilities) is `TOOL_UNKNOWN`.
pub async fn execute(
    ctx: &ToolContext,
    tool: HostTool,
    input: Value,
    bash_pin: Option<&ShellPinContext>,
    events: mpsc::Sender<OutputChunk>,
    cancel: CancellationToken,
) -> Result<ExecuteOutput> {
    match tool {
        HostTool::Read => {
            let request: ReadRequest = decode(tool, &input)?;
            blocking(ctx, move |ctx| read(ctx, &request).map(ExecuteOutput::Read)).await
        }
        HostTool::Glob => {
            let request: GlobRequest = decode(tool, &input)?;
            blocking(ctx, move |ctx| glob(ctx, &request).map(ExecuteOutput::Glob)).await
        }
        HostTool::Grep => {
            let request: GrepRequest = decode(tool, &input)?;
            blocking(ctx, move |ctx| grep(ctx, &request).map(ExecuteOutput::Grep)).await
        }
        HostTool::Write => {
            let request: WriteRequest = decode(tool, &input)?;
            blocking(ctx, move |ctx| {
                write(ctx, &request).map(ExecuteOutput::Write)
            })
            .await
        }
        HostTool::Edit => {
            let request: EditRequest = decode(tool, &input)?;
            blocking(ctx, move |ctx| edit(ctx, &request).map(ExecuteOutput::Edit)).await
        }
        HostTool::Bash => {
            let request: BashRequest = decode(tool, &input)?;
            let Some(shell) = bash_pin else {
                return Err(ToolError::Internal {
                    message: "Bash was dispatched without the turn's pinned shell".to_owned(),
                });
            };
            bash(ctx, &request, shell, events, cancel)
                .await
                .map(ExecuteOutput::Bash)
        }
        HostTool::EnterPlanMode
        | HostTool::SubmitPlan
        | HostTool::UpdatePlanDraft
        | HostTool::ReadPlan
        | HostTool::CreatePlan
        | HostTool::CompactContext
        | HostTool::BrowserPreview => Err(ToolError::UnknownTool {
            name: tool.as_str().to_owned(),
        }),
    }
}

/// Runs a file tool on the blocking pool.
async fn blocking(
    ctx: &ToolContext,
    call: impl FnOnce(&ToolContext) -> Result<ExecuteOutput> + Send + 'static,
) -> Result<ExecuteOutput> {
    let ctx = ctx.clone();
    tokio::task::spawn_blocking(move || call(&ctx))
        .await
        .map_err(|e| ToolError::Internal {
            message: format!("tool task failed: {e}"),
        })?
}

/// Deserialises a tool's request; the error names the tool and, where it can, the field
/// (`serde_path_to_error` follows the path into nested values).
fn decode<T: DeserializeOwned>(tool: HostTool, input: &Value) -> Result<T> {
    serde_path_to_error::deserialize::<_, T>(input).map_err(|error| {
        let path = error.path().to_string();
        let inner = error.into_inner().to_string();
        // A missing or unknown field is named in the message itself.
        let detail = if path == "." || inner.contains(&format!("`{path}`")) {
            inner
        } else {
            format!("field `{path}`: {inner}")
        };
        ToolError::invalid(format!("{tool} input: {detail}"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_the_field_of_a_type_error() {
        let input = serde_json::json!({ "path": "a", "offset": "two", "limit": 3 });
        let err = decode::<ReadRequest>(HostTool::Read, &input).unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid input: Read input: field `offset`: invalid type: string \"two\", expected u64"
        );
    }

    #[test]
    fn keeps_messages_that_already_name_the_field() {
        let missing = serde_json::json!({ "content": "x" });
        let err = decode::<WriteRequest>(HostTool::Write, &missing).unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid input: Write input: missing field `path`"
        );
        let unknown = serde_json::json!({ "path": "a", "ofset": 1 });
        let err = decode::<ReadRequest>(HostTool::Read, &unknown).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("invalid input: Read input: unknown field `ofset`")
        );
    }

    #[test]
    fn a_nested_field_is_named_by_its_path() {
        let bad = serde_json::json!({ "command": "true", "timeoutMs": "soon" });
        let err = decode::<crate::BashRequest>(HostTool::Bash, &bad).unwrap_err();
        assert!(
            err.to_string().contains("field `timeoutMs`: invalid type"),
            "{err}"
        );
    }
}

//! `tools.execute`: a tool name and a JSON input in, a JSON result out.

use std::fmt;
use std::str::FromStr;

use planhost_exec::OutputChunk;
use serde::Serialize;
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

/// A tool this crate runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ToolName {
    /// [`crate::read`].
    Read,
    /// [`crate::glob`].
    Glob,
    /// [`crate::grep`].
    Grep,
    /// [`crate::write`].
    Write,
    /// [`crate::edit`].
    Edit,
    /// [`crate::bash`].
    Bash,
}

impl ToolName {
    /// Every tool, in a fixed order.
    pub const ALL: [ToolName; 6] = [
        Self::Read,
        Self::Glob,
        Self::Grep,
        Self::Write,
        Self::Edit,
        Self::Bash,
    ];

    /// The canonical protocol name (`Read`, …, `Bash`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Read => "Read",
            Self::Glob => "Glob",
            Self::Grep => "Grep",
            Self::Write => "Write",
            Self::Edit => "Edit",
            Self::Bash => "Bash",
        }
    }

    /// The all-lowercase spelling pi uses (`read`, …, `bash`).
    pub fn lowercase(self) -> &'static str {
        match self {
            Self::Read => "read",
            Self::Glob => "glob",
            Self::Grep => "grep",
            Self::Write => "write",
            Self::Edit => "edit",
            Self::Bash => "bash",
        }
    }
}

impl fmt::Display for ToolName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ToolName {
    type Err = ToolError;

    /// Accepts exactly the canonical names and their all-lowercase forms; anything else
    /// (`READ`, `find`, `ls`) is `TOOL_UNKNOWN`.
    fn from_str(s: &str) -> Result<Self> {
        Self::ALL
            .into_iter()
            .find(|tool| tool.as_str() == s || tool.lowercase() == s)
            .ok_or_else(|| ToolError::UnknownTool { name: s.to_owned() })
    }
}

/// Runs `tool` on a JSON `input` and returns its result as camelCase JSON.
///
/// A malformed input is `TOOL_INVALID_INPUT`, with a message naming the offending field. The
/// file tools run on tokio's blocking pool and ignore `events` and `cancel` (they are bounded);
/// Bash needs the turn's `bash` pin context, and without one it is `TOOL_INTERNAL_ERROR`.
pub async fn execute(
    ctx: &ToolContext,
    tool: ToolName,
    input: Value,
    bash_pin: Option<&ShellPinContext>,
    events: mpsc::Sender<OutputChunk>,
    cancel: CancellationToken,
) -> Result<Value> {
    match tool {
        ToolName::Read => {
            let request: ReadRequest = decode(tool, &input)?;
            blocking(ctx, move |ctx| read(ctx, &request)).await
        }
        ToolName::Glob => {
            let request: GlobRequest = decode(tool, &input)?;
            blocking(ctx, move |ctx| glob(ctx, &request)).await
        }
        ToolName::Grep => {
            let request: GrepRequest = decode(tool, &input)?;
            blocking(ctx, move |ctx| grep(ctx, &request)).await
        }
        ToolName::Write => {
            let request: WriteRequest = decode(tool, &input)?;
            blocking(ctx, move |ctx| write(ctx, &request)).await
        }
        ToolName::Edit => {
            let request: EditRequest = decode(tool, &input)?;
            blocking(ctx, move |ctx| edit(ctx, &request)).await
        }
        ToolName::Bash => {
            let request: BashRequest = decode(tool, &input)?;
            let Some(shell) = bash_pin else {
                return Err(ToolError::Internal {
                    message: "Bash was dispatched without the turn's pinned shell".to_owned(),
                });
            };
            to_json(&bash(ctx, &request, shell, events, cancel).await?)
        }
    }
}

/// Runs a file tool, and the serialisation of its result, on the blocking pool.
async fn blocking<T: Serialize>(
    ctx: &ToolContext,
    call: impl FnOnce(&ToolContext) -> Result<T> + Send + 'static,
) -> Result<Value> {
    let ctx = ctx.clone();
    tokio::task::spawn_blocking(move || to_json(&call(&ctx)?))
        .await
        .map_err(|e| ToolError::Internal {
            message: format!("tool task failed: {e}"),
        })?
}

fn to_json<T: Serialize>(result: &T) -> Result<Value> {
    serde_json::to_value(result).map_err(|e| ToolError::Internal {
        message: format!("result did not serialise: {e}"),
    })
}

/// Deserialises a tool's request; the error names the tool and, where it can, the field
/// (`serde_path_to_error` follows the path into nested values).
fn decode<T: DeserializeOwned>(tool: ToolName, input: &Value) -> Result<T> {
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
        let err = decode::<ReadRequest>(ToolName::Read, &input).unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid input: Read input: field `offset`: invalid type: string \"two\", expected u64"
        );
    }

    #[test]
    fn keeps_messages_that_already_name_the_field() {
        let missing = serde_json::json!({ "content": "x" });
        let err = decode::<WriteRequest>(ToolName::Write, &missing).unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid input: Write input: missing field `path`"
        );
        let unknown = serde_json::json!({ "path": "a", "ofset": 1 });
        let err = decode::<ReadRequest>(ToolName::Read, &unknown).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("invalid input: Read input: unknown field `ofset`")
        );
    }

    #[test]
    fn a_nested_field_is_named_by_its_path() {
        let bad = serde_json::json!({ "command": "true", "timeoutMs": "soon" });
        let err = decode::<crate::BashRequest>(ToolName::Bash, &bad).unwrap_err();
        assert!(
            err.to_string().contains("field `timeoutMs`: invalid type"),
            "{err}"
        );
    }
}

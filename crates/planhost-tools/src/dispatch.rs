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

/// Deserialises a tool's request; the error names the tool and, where it can, the field.
fn decode<T: DeserializeOwned>(tool: ToolName, input: &Value) -> Result<T> {
    T::deserialize(input).map_err(|first| {
        let detail = locate::<T>(input).unwrap_or_else(|| first.to_string());
        ToolError::invalid(format!("{tool} input: {detail}"))
    })
}

/// Explains a deserialisation failure by field name.
///
/// `serde_json::Value` errors carry no position, so the input is parsed again from pretty JSON,
/// where every top-level field starts its own line indented by two spaces; the parser's line
/// number then leads back to the field. Errors that already name their field (unknown,
/// missing) are left as they are.
fn locate<T: DeserializeOwned>(input: &Value) -> Option<String> {
    let pretty = serde_json::to_string_pretty(input).ok()?;
    let error = serde_json::from_str::<T>(&pretty).err()?;
    let full = error.to_string();
    let position = format!(" at line {} column {}", error.line(), error.column());
    let message = full.strip_suffix(&position).unwrap_or(&full).to_owned();
    let last_line = pretty.lines().count();
    // A failure on the closing brace (a missing field) belongs to no single field.
    if error.line() >= last_line {
        return Some(message);
    }
    match field_at_line(&pretty, error.line()) {
        Some(field) if !message.contains(&format!("`{field}`")) => {
            Some(format!("field `{field}`: {message}"))
        }
        Some(_) | None => Some(message),
    }
}

/// The top-level key whose value spans 1-based `line` of a pretty-printed object.
fn field_at_line(pretty: &str, line: usize) -> Option<String> {
    let lines: Vec<&str> = pretty.lines().take(line).collect();
    lines.into_iter().rev().find_map(|text| {
        let rest = text.strip_prefix("  ")?;
        if !rest.starts_with('"') {
            return None;
        }
        serde_json::Deserializer::from_str(rest)
            .into_iter::<String>()
            .next()?
            .ok()
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
    fn a_key_with_escapes_is_recovered() {
        assert_eq!(
            field_at_line("{\n  \"a\\\"b\": 1\n}", 2).as_deref(),
            Some("a\"b")
        );
    }
}

//! What the six tools the host runs return: the result of each (`ReadResult`, …, `BashResult`)
//! and [`ExecuteOutput`], the one value `tools.execute` answers with. Pure data, defined once:
//! `planhost-tools` and `planhost-exec` build these values (their logic stays there), the
//! protocol carries them, and the JSON Schema and TypeScript are generated from them.
//!
//! Why [`ExecuteOutput`] is untagged: the wire carried each tool's result as it serialises
//! (`output.exit`, `output.stdout`, …) before the output was typed, and still does, byte for
//! byte. A tag would change that, and it would say nothing new: the caller named the tool in
//! `tools.execute`'s params, so that is how it reads the output exactly —
//! [`ExecuteOutput::decode`] in Rust, `ExecuteOutputOf[tool]` in the generated TypeScript (from
//! the JSON Schema's `executeOutputOf` map; `ExecuteOutput` there is the union of the six).
//! Rather than a generic `ExecuteResult<O>`, which would give every method's result table and
//! the schema a type parameter to carry, the result stays one type.
//!
//! Plain `Deserialize` (what a typed client's `call::<methods::ToolsExecute>` uses) goes by
//! shape, trying the variants in declaration order. That is exact for the six shapes as they
//! are: `Grep` is declared before `Glob` because a files-mode Grep result (`mode`, `files`,
//! `truncated`, `skippedNonUtf8`) also holds every field of a Glob result, and results accept
//! unknown fields; no other two results share their required fields. The tests below hold it.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::host_tool::HostTool;
use crate::shells::{Dialect, ShellId};

/// The numbered window of a file.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReadResult {
    /// The path as resolved: workspace-relative, or absolute for a granted outside path.
    pub path: String,
    /// `cat -n` style text: right-aligned 1-based line number, a tab, the line without its
    /// terminator, `\n`. Invalid UTF-8 is shown as U+FFFD.
    pub content: String,
    /// Line number of the first line in `content` (1-based).
    pub start_line: u64,
    /// How many lines `content` holds.
    pub lines_returned: u64,
    /// Lines in the whole file (a final line without `\n` counts).
    pub total_lines: u64,
    /// Whether anything was left out: lines past the window, or a line cut at Read's line
    /// limit (`planhost_tools::READ_MAX_LINE_CHARS`).
    pub truncated: bool,
    /// The `offset` that continues after this window, if any lines remain.
    pub next_offset: Option<u64>,
}

/// Matching files, sorted by path.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GlobResult {
    /// Workspace-relative paths (absolute for a granted outside directory), byte-order sorted.
    pub files: Vec<String>,
    /// Whether more files matched than `limit`.
    pub truncated: bool,
    /// Matching files left out because their path is not valid UTF-8.
    pub skipped_non_utf8: u64,
}

/// A Grep result.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GrepResult {
    /// The entries.
    #[serde(flatten)]
    pub output: GrepOutput,
    /// Whether entries were left out (`limit`, or Grep's collection bound,
    /// `planhost_tools::GREP_MAX_COLLECT`).
    pub truncated: bool,
    /// Matching files left out because their path is not valid UTF-8.
    pub skipped_non_utf8: u64,
}

/// The mode-specific part of a Grep result; `mode` is the tag on the wire.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "mode", rename_all = "camelCase")]
pub enum GrepOutput {
    /// Files with a match, sorted.
    Files {
        /// Workspace-relative paths.
        files: Vec<String>,
    },
    /// Matching and context lines, grouped by file in path order, in line order within a file.
    Content {
        /// The lines.
        lines: Vec<GrepLine>,
    },
    /// Per-file counts, sorted by path.
    Count {
        /// The counts.
        counts: Vec<FileCount>,
    },
}

/// One file's count in count mode.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FileCount {
    /// The file.
    pub path: String,
    /// Matching lines in it.
    pub count: u64,
}

/// One line of content-mode output.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GrepLine {
    /// The file, named as in the other modes.
    pub path: String,
    /// 1-based line number.
    pub line_number: u64,
    /// Match or context.
    pub kind: LineKind,
    /// The line without its terminator, lossily UTF-8, cut at Grep's line limit
    /// (`planhost_tools::GREP_MAX_LINE_CHARS`).
    pub text: String,
}

wire_enum! {
    #[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
    /// Whether a content line matched or was context around a match.
    LineKind {
        /// The line matched the pattern.
        Match = "match",
        /// A line of `contextBefore`/`contextAfter` around a match.
        Context = "context",
    }
}

/// What Write did.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WriteResult {
    /// Workspace-relative path written.
    pub path: String,
    /// Bytes now in the file.
    pub bytes_written: u64,
    /// Created or replaced.
    pub outcome: WriteOutcome,
}

wire_enum! {
    #[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
    /// Whether Write made a new file or replaced one.
    WriteOutcome {
        /// The file did not exist (missing parent directories were created too).
        Created = "created",
        /// An existing regular file was replaced; its permission bits were kept.
        Replaced = "replaced",
    }
}

/// What Edit did.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EditResult {
    /// Workspace-relative path edited.
    pub path: String,
    /// How many occurrences were replaced.
    pub replacements: u64,
    /// The file's line-ending convention, which the edit preserved.
    pub line_ending: LineEnding,
}

wire_enum! {
    #[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
    /// The line-ending convention Edit found in the file.
    LineEnding {
        /// Only `\n`.
        Lf = "lf",
        /// Only `\r\n`: the strings' line breaks are converted to `\r\n`.
        Crlf = "crlf",
        /// Both: the strings are matched as given, then with `\r\n` if that finds nothing.
        Mixed = "mixed",
        /// No line break at all.
        None = "none",
    }
}

/// What Bash did: the runner's bounded result plus the shell it ran in.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BashResult {
    /// The shell id the command ran in (always the pinned one).
    pub shell_id: ShellId,
    /// That shell's dialect.
    pub dialect: Dialect,
    /// The timeout that applied, in milliseconds.
    pub timeout_ms: u64,
    /// Exit status, timeout/cancel flags, duration and the bounded stdout/stderr.
    #[serde(flatten)]
    pub run: RunResult,
}

/// The bounded final result of a run.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunResult {
    /// How the shell ended.
    pub exit: ExitStatus,
    /// The timeout fired and the tree was terminated.
    pub timed_out: bool,
    /// The cancellation token fired and the tree was terminated.
    pub cancelled: bool,
    /// Wall time from spawn to the end of teardown.
    pub duration_ms: u64,
    /// Standard output.
    pub stdout: StreamSummary,
    /// Standard error.
    pub stderr: StreamSummary,
}

/// How the shell process ended: `{"code": n}`, `{"signal": n}` or `"none"`.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ExitStatus {
    /// It exited with this code.
    Code(i32),
    /// A signal terminated it.
    Signal(i32),
    /// The status is unknown.
    None,
}

/// Byte counts and the kept text of one stream.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StreamSummary {
    /// Every byte the stream delivered.
    pub total_bytes: u64,
    /// The head and the tail, with an elision marker between them when bytes were dropped.
    pub kept: String,
    /// How many bytes the marker stands for (0 when nothing was elided).
    pub elided_bytes: u64,
}

/// Declares [`ExecuteOutput`] from one list of `tool => result type`, so the enum, its tool,
/// its decoding by tool and its schema by tool can never disagree.
macro_rules! execute_output {
    ($($(#[$vmeta:meta])* $tool:ident($result:ty),)+) => {
        /// The output of `tools.execute`: the result of the tool the call named, as that
        /// tool's result serialises, with no tag (Bash: `exit`, `stdout`, `stderr`,
        /// `timedOut`, `cancelled`, …). Read it as the tool called: `ExecuteOutputOf[tool]` in
        /// TypeScript, `ExecuteOutput::decode(tool, value)` in Rust.
        #[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
        #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
        #[serde(untagged)]
        pub enum ExecuteOutput {
            $($(#[$vmeta])* $tool($result),)+
        }

        impl ExecuteOutput {
            /// The tool whose result this is.
            pub fn tool(&self) -> HostTool {
                match self {
                    $(Self::$tool(_) => HostTool::$tool,)+
                }
            }

            /// Reads `value` as the result of `tool`: what a client does with the output of
            /// the `tools.execute` call it made for `tool`. A tool the host does not run, or a
            /// value of another shape, is an error.
            pub fn decode(tool: HostTool, value: Value) -> serde_json::Result<Self> {
                match tool {
                    $(HostTool::$tool => serde_json::from_value(value).map(Self::$tool),)+
                    #[allow(clippy::wildcard_enum_match_arm)]
                    _ => Err(serde::de::Error::custom(format!(
                        "{tool} is not run by the host: it has no execute output"
                    ))),
                }
            }

            /// The JSON Schema of `tool`'s result; `None` for a tool the host does not run.
            #[cfg(feature = "schema")]
            pub fn schema_of(
                tool: HostTool,
                generator: &mut schemars::SchemaGenerator,
            ) -> Option<schemars::Schema> {
                match tool {
                    $(HostTool::$tool => Some(generator.subschema_for::<$result>()),)+
                    #[allow(clippy::wildcard_enum_match_arm)]
                    _ => None,
                }
            }
        }
    };
}

execute_output! {
    /// Read's result.
    Read(ReadResult),
    // Before Glob, for `Deserialize` by shape: see the module docs.
    /// Grep's result.
    Grep(GrepResult),
    /// Glob's result.
    Glob(GlobResult),
    /// Write's result.
    Write(WriteResult),
    /// Edit's result.
    Edit(EditResult),
    /// Bash's result.
    Bash(BashResult),
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn samples() -> Vec<ExecuteOutput> {
        let stream = |kept: &str| StreamSummary {
            total_bytes: kept.len() as u64,
            kept: kept.to_owned(),
            elided_bytes: 0,
        };
        vec![
            ExecuteOutput::Read(ReadResult {
                path: "a.txt".into(),
                content: "     1\thi\n".into(),
                start_line: 1,
                lines_returned: 1,
                total_lines: 1,
                truncated: false,
                next_offset: None,
            }),
            ExecuteOutput::Glob(GlobResult {
                files: vec!["a.txt".into()],
                truncated: false,
                skipped_non_utf8: 0,
            }),
            ExecuteOutput::Grep(GrepResult {
                output: GrepOutput::Files {
                    files: vec!["a.txt".into()],
                },
                truncated: false,
                skipped_non_utf8: 0,
            }),
            ExecuteOutput::Grep(GrepResult {
                output: GrepOutput::Content {
                    lines: vec![GrepLine {
                        path: "a.txt".into(),
                        line_number: 1,
                        kind: LineKind::Match,
                        text: "hi".into(),
                    }],
                },
                truncated: true,
                skipped_non_utf8: 1,
            }),
            ExecuteOutput::Grep(GrepResult {
                output: GrepOutput::Count {
                    counts: vec![FileCount {
                        path: "a.txt".into(),
                        count: 2,
                    }],
                },
                truncated: false,
                skipped_non_utf8: 0,
            }),
            ExecuteOutput::Write(WriteResult {
                path: "a.txt".into(),
                bytes_written: 3,
                outcome: WriteOutcome::Created,
            }),
            ExecuteOutput::Edit(EditResult {
                path: "a.txt".into(),
                replacements: 1,
                line_ending: LineEnding::Crlf,
            }),
            ExecuteOutput::Bash(BashResult {
                shell_id: ShellId::Bash,
                dialect: Dialect::Posix,
                timeout_ms: 60_000,
                run: RunResult {
                    exit: ExitStatus::Code(0),
                    timed_out: false,
                    cancelled: false,
                    duration_ms: 5,
                    stdout: stream("out\n"),
                    stderr: stream(""),
                },
            }),
        ]
    }

    #[test]
    fn decodes_by_tool_and_by_shape_to_the_same_value() {
        for output in samples() {
            let value = serde_json::to_value(&output).unwrap();
            let by_tool = ExecuteOutput::decode(output.tool(), value.clone()).unwrap();
            assert_eq!(by_tool, output);
            let by_shape: ExecuteOutput = serde_json::from_value(value).unwrap();
            assert_eq!(by_shape, output, "{:?}", output.tool());
        }
    }

    #[test]
    fn the_wire_shape_is_each_result_untagged() {
        let bash = samples().pop().unwrap();
        assert_eq!(
            serde_json::to_value(&bash).unwrap(),
            json!({
                "shellId": "bash", "dialect": "posix", "timeoutMs": 60000,
                "exit": { "code": 0 }, "timedOut": false, "cancelled": false, "durationMs": 5,
                "stdout": { "totalBytes": 4, "kept": "out\n", "elidedBytes": 0 },
                "stderr": { "totalBytes": 0, "kept": "", "elidedBytes": 0 },
            })
        );
        assert_eq!(
            serde_json::to_value(ExitStatus::None).unwrap(),
            json!("none")
        );
        assert_eq!(
            serde_json::to_value(ExitStatus::Signal(9)).unwrap(),
            json!({ "signal": 9 })
        );
    }

    #[test]
    fn every_tool_the_host_runs_has_an_output() {
        let tools: Vec<HostTool> = samples().iter().map(ExecuteOutput::tool).collect();
        for tool in HostTool::ALL {
            assert_eq!(tools.contains(tool), tool.runs_in_host(), "{tool}");
        }
    }

    #[test]
    fn decode_refuses_another_shape_and_tools_the_host_does_not_run() {
        let write = json!({ "path": "a", "bytesWritten": 1, "outcome": "created" });
        assert!(ExecuteOutput::decode(HostTool::Edit, write.clone()).is_err());
        assert!(ExecuteOutput::decode(HostTool::SubmitPlan, write).is_err());
    }
}

//! Grep: regex search over the workspace with ripgrep's library crates.

use std::fs::File;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

use grep_regex::RegexMatcherBuilder;
use grep_searcher::{BinaryDetection, SearcherBuilder};
use ignore::WalkState;
use ignore::overrides::OverrideBuilder;
use serde::{Deserialize, Serialize};

use crate::context::{ReadTarget, ToolContext};
use crate::error::{Result, ToolError};
use crate::glob::checked_limit;
use crate::grep_sink::{Binary, Capped, Collector, GrepLine};
use crate::walk::{builder, display_name};

/// Entries (files, counts or lines) returned when the request gives no `limit`.
pub const GREP_DEFAULT_LIMIT: usize = 1000;
/// Largest `limit` accepted.
pub const GREP_MAX_LIMIT: usize = 20_000;
/// Largest context, before or after; wider context belongs to Read.
pub const GREP_MAX_CONTEXT: usize = 50;
/// Entries collected before the walk stops, bounding memory on a pathological tree. Results are
/// sorted after collection, so below this bound they are deterministic.
pub const GREP_MAX_COLLECT: usize = 200_000;

/// What Grep reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum GrepMode {
    /// Paths of files with at least one match (like `rg -l`).
    #[default]
    Files,
    /// Matching lines, with optional context (like `rg -n`).
    Content,
    /// Matching-line counts per file (like `rg -c`).
    Count,
}

/// `Grep { pattern, path?, glob?, mode?, context?, contextBefore?, contextAfter?,
/// caseInsensitive?, limit? }`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GrepRequest {
    /// A Rust-regex pattern, matched per line.
    pub pattern: String,
    /// File or directory to search (default: the workspace root).
    #[serde(default)]
    pub path: Option<String>,
    /// Only search files matching this glob (ripgrep `-g` semantics; `!` excludes).
    #[serde(default)]
    pub glob: Option<String>,
    /// What to report (default `files`).
    #[serde(default)]
    pub mode: GrepMode,
    /// Lines of context before and after each match (content mode only; ignored otherwise).
    #[serde(default)]
    pub context: Option<usize>,
    /// Lines before each match; overrides `context`.
    #[serde(default)]
    pub context_before: Option<usize>,
    /// Lines after each match; overrides `context`.
    #[serde(default)]
    pub context_after: Option<usize>,
    /// Match case-insensitively.
    #[serde(default)]
    pub case_insensitive: bool,
    /// Most entries to return: files, counts or lines (default [`GREP_DEFAULT_LIMIT`]).
    #[serde(default)]
    pub limit: Option<usize>,
}

/// One file's count in count mode.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FileCount {
    /// The file.
    pub path: String,
    /// Matching lines in it.
    pub count: u64,
}

/// The mode-specific part of a Grep result; `mode` is the tag on the wire.
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

/// A Grep result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GrepResult {
    /// The entries.
    #[serde(flatten)]
    pub output: GrepOutput,
    /// Whether entries were left out (`limit`, or [`GREP_MAX_COLLECT`]).
    pub truncated: bool,
    /// Matching files left out because their path is not valid UTF-8.
    pub skipped_non_utf8: u64,
}

struct FileHits {
    path: String,
    matches: u64,
    lines: Vec<(u64, crate::grep_sink::LineKind, String)>,
}

/// Shared state of one parallel search.
struct Shared {
    hits: Mutex<Vec<FileHits>>,
    collected: AtomicUsize,
    skipped_non_utf8: AtomicU64,
    truncated: AtomicBool,
}

/// Runs Grep.
pub fn grep(ctx: &ToolContext, request: &GrepRequest) -> Result<GrepResult> {
    let limit = checked_limit(request.limit, GREP_DEFAULT_LIMIT, GREP_MAX_LIMIT)?;
    let (before, after) = context_lines(request)?;
    let matcher = RegexMatcherBuilder::new()
        .case_insensitive(request.case_insensitive)
        .line_terminator(Some(b'\n'))
        .build(&request.pattern)
        .map_err(|e| ToolError::InvalidRegex {
            message: e.to_string(),
        })?;
    let target = ctx.resolve_read(request.path.as_deref().unwrap_or("."))?;
    ctx.require_exists(&target)?;
    let root = target.absolute();

    let mut walk = builder(root);
    walk.threads(0);
    if let Some(glob) = &request.glob {
        let overrides = OverrideBuilder::new(root)
            .add(glob)
            .and_then(|b| b.build())
            .map_err(|e| ToolError::InvalidGlob {
                message: e.to_string(),
            })?;
        walk.overrides(overrides);
    }
    let mut searcher_builder = SearcherBuilder::new();
    searcher_builder
        .line_number(matches!(request.mode, GrepMode::Content))
        .binary_detection(BinaryDetection::quit(b'\x00'))
        .before_context(before)
        .after_context(after);

    let shared = Shared {
        hits: Mutex::new(Vec::new()),
        collected: AtomicUsize::new(0),
        skipped_non_utf8: AtomicU64::new(0),
        truncated: AtomicBool::new(false),
    };
    walk.build_parallel().run(|| {
        let matcher = matcher.clone();
        let mut searcher = searcher_builder.build();
        let shared = &shared;
        let target = &target;
        Box::new(move |entry| {
            let Ok(entry) = entry else {
                return WalkState::Continue;
            };
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                return WalkState::Continue;
            }
            // Unreadable files are skipped, as ripgrep skips them.
            let Ok(file) = open_no_follow(entry.path()) else {
                return WalkState::Continue;
            };
            let mut sink = Collector::new(request.mode, limit);
            if searcher.search_file(&matcher, &file, &mut sink).is_err()
                || sink.binary == Binary::Yes
                || sink.matches == 0
            {
                return WalkState::Continue;
            }
            if !opened_inside(&file, target) {
                return WalkState::Continue;
            }
            let Some(path) = display_name(ctx, target, entry.path()) else {
                shared.skipped_non_utf8.fetch_add(1, Ordering::Relaxed);
                return WalkState::Continue;
            };
            shared.record(request.mode, sink, path)
        })
    });
    Ok(assemble(request.mode, limit, shared))
}

impl Shared {
    fn record(&self, mode: GrepMode, sink: Collector, path: String) -> WalkState {
        if sink.capped == Capped::Yes {
            self.truncated.store(true, Ordering::Relaxed);
        }
        let added = match mode {
            GrepMode::Files | GrepMode::Count => 1,
            GrepMode::Content => sink.lines.len(),
        };
        let hits = FileHits {
            path,
            matches: sink.matches,
            lines: sink.lines,
        };
        match self.hits.lock() {
            Ok(mut guard) => guard.push(hits),
            Err(poisoned) => poisoned.into_inner().push(hits),
        }
        if self.collected.fetch_add(added, Ordering::Relaxed) + added >= GREP_MAX_COLLECT {
            self.truncated.store(true, Ordering::Relaxed);
            return WalkState::Quit;
        }
        WalkState::Continue
    }
}

fn assemble(mode: GrepMode, limit: usize, shared: Shared) -> GrepResult {
    let mut hits = match shared.hits.into_inner() {
        Ok(hits) => hits,
        Err(poisoned) => poisoned.into_inner(),
    };
    hits.sort_unstable_by(|a, b| a.path.cmp(&b.path));
    let mut truncated = shared.truncated.into_inner();
    let output = match mode {
        GrepMode::Files => {
            truncated |= hits.len() > limit;
            GrepOutput::Files {
                files: hits.into_iter().take(limit).map(|h| h.path).collect(),
            }
        }
        GrepMode::Count => {
            truncated |= hits.len() > limit;
            let counts = hits.into_iter().take(limit);
            GrepOutput::Count {
                counts: counts
                    .map(|h| FileCount {
                        path: h.path,
                        count: h.matches,
                    })
                    .collect(),
            }
        }
        GrepMode::Content => {
            let mut lines = Vec::new();
            'files: for hit in hits {
                for (line_number, kind, text) in hit.lines {
                    if lines.len() == limit {
                        truncated = true;
                        break 'files;
                    }
                    lines.push(GrepLine {
                        path: hit.path.clone(),
                        line_number,
                        kind,
                        text,
                    });
                }
            }
            GrepOutput::Content { lines }
        }
    };
    GrepResult {
        output,
        truncated,
        skipped_non_utf8: shared.skipped_non_utf8.into_inner(),
    }
}

fn context_lines(request: &GrepRequest) -> Result<(usize, usize)> {
    let (before, after) = match request.mode {
        GrepMode::Files | GrepMode::Count => (0, 0),
        GrepMode::Content => {
            let both = request.context.unwrap_or(0);
            (
                request.context_before.unwrap_or(both),
                request.context_after.unwrap_or(both),
            )
        }
    };
    if before > GREP_MAX_CONTEXT || after > GREP_MAX_CONTEXT {
        return Err(ToolError::invalid(format!(
            "context must be at most {GREP_MAX_CONTEXT} lines"
        )));
    }
    Ok((before, after))
}

/// Whether the file actually opened lies under the search root.
///
/// The walker lists directories by path, so a directory swapped for a symlink mid-walk could
/// lead it outside the workspace. The kernel's own name for the open fd settles it: checked only
/// for files with matches, so the cost is one `readlink` per reported file. Fails closed.
fn opened_inside(file: &File, target: &ReadTarget) -> bool {
    match target {
        ReadTarget::Outside(_) => true,
        ReadTarget::Inside(root) => {
            use std::os::fd::AsRawFd as _;
            let link = format!("/proc/self/fd/{}", file.as_raw_fd());
            std::fs::read_link(link).is_ok_and(|real| real.starts_with(root.absolute()))
        }
    }
}

/// Opens a walked file without following a symlink swapped in after the walk saw a regular
/// file; `O_NONBLOCK` keeps a swapped-in FIFO from hanging the search.
#[allow(
    clippy::disallowed_methods,
    reason = "a read-only open with O_NOFOLLOW, which fs-err's OpenOptions cannot set"
)]
fn open_no_follow(path: &Path) -> std::io::Result<File> {
    let flags = rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::NONBLOCK;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(i32::try_from(flags.bits()).unwrap_or(0))
        .open(path)
}
